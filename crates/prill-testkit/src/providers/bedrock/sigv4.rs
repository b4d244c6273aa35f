//! SigV4 as the fake checks it: the `Authorization` header's shape, and the signature
//! itself, recomputed from the secret key by AWS's published steps (canonical request,
//! string to sign, derived key), independently of the `aws-sigv4` crate the client uses.

use sha2::{Digest, Sha256};

/// The parts of a SigV4 `Authorization` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigV4Header {
    /// The access key id.
    pub access_key_id: String,
    /// `yyyymmdd`.
    pub date: String,
    /// The region.
    pub region: String,
    /// The service.
    pub service: String,
    /// The signed headers, lowercase, in order.
    pub signed_headers: Vec<String>,
    /// 64 lowercase hex digits.
    pub signature: String,
}

/// Why an `Authorization` header is not a SigV4 one, in the service's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub String);

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Malformed {}

/// Parses `AWS4-HMAC-SHA256 Credential=<id>/<date>/<region>/<service>/aws4_request,
/// SignedHeaders=<a;b>, Signature=<hex>`, or says what is wrong in the service's words.
pub fn parse_sigv4(header: &str) -> Result<SigV4Header, Malformed> {
    let Some(rest) = header.strip_prefix("AWS4-HMAC-SHA256 ") else {
        return Err(Malformed(format!(
            "Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters, and the AWS4-HMAC-SHA256 algorithm. Authorization={}",
            header.split(' ').next().unwrap_or_default()
        )));
    };
    let mut credential = None;
    let mut signed = None;
    let mut signature = None;
    for part in rest.split(',') {
        let (key, value) = part.trim().split_once('=').unwrap_or((part.trim(), ""));
        match key {
            "Credential" => credential = Some(value),
            "SignedHeaders" => signed = Some(value),
            "Signature" => signature = Some(value),
            _ => {
                return Err(Malformed(format!(
                    "Authorization header has an unknown parameter '{key}'."
                )));
            }
        }
    }
    let (Some(credential), Some(signed), Some(signature)) = (credential, signed, signature) else {
        return Err(Malformed("Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters.".to_owned()));
    };
    let scope: Vec<&str> = credential.split('/').collect();
    let [id, date, region, service, terminator] = scope[..] else {
        return Err(Malformed(format!(
            "Credential should have 5 parts separated by '/', not {}.",
            scope.len()
        )));
    };
    if terminator != "aws4_request" {
        return Err(Malformed(
            "Credential should be scoped with a valid terminator: 'aws4_request'.".to_owned(),
        ));
    }
    if id.is_empty()
        || date.len() != 8
        || !date.bytes().all(|b| b.is_ascii_digit())
        || region.is_empty()
    {
        return Err(Malformed("Credential is malformed.".to_owned()));
    }
    let signed_headers: Vec<String> = signed.split(';').map(str::to_owned).collect();
    let sorted = signed_headers.windows(2).all(|w| w[0] < w[1]);
    let lowercase = signed_headers
        .iter()
        .all(|h| !h.is_empty() && h.bytes().all(|b| !b.is_ascii_uppercase()));
    if !sorted || !lowercase {
        return Err(Malformed(
            "SignedHeaders must be lowercase and sorted.".to_owned(),
        ));
    }
    if signature.len() != 64
        || !signature
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return Err(Malformed(
            "Signature must be 64 lowercase hexadecimal digits.".to_owned(),
        ));
    }
    Ok(SigV4Header {
        access_key_id: id.to_owned(),
        date: date.to_owned(),
        region: region.to_owned(),
        service: service.to_owned(),
        signed_headers,
        signature: signature.to_owned(),
    })
}

/// The canonical request of SigV4 for a service other than S3: the path as sent
/// (already percent-encoded) is encoded once more, header values are trimmed with
/// inner runs of spaces collapsed, and `headers` are `(lowercase name, value)` in
/// signed order.
pub fn canonical_request(
    method: &str,
    path: &str,
    query: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> String {
    let path = if path.is_empty() { "/" } else { path };
    let uri: String = path
        .split('/')
        .map(uri_encode)
        .collect::<Vec<_>>()
        .join("/");
    let mut text = format!("{method}\n{uri}\n{query}\n");
    for (name, value) in headers {
        let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
        text.push_str(&format!("{name}:{value}\n"));
    }
    let names: Vec<&str> = headers.iter().map(|(n, _)| n.as_str()).collect();
    text.push_str(&format!(
        "\n{}\n{}",
        names.join(";"),
        hex(&Sha256::digest(body))
    ));
    text
}

/// The SigV4 signature of `canonical` (64 hex digits), made with the secret key for
/// the date of `amz_date` (`yyyymmddThhmmssZ`), `region` and `service`.
pub fn sigv4_signature(
    secret_access_key: &str,
    amz_date: &str,
    region: &str,
    service: &str,
    canonical: &str,
) -> String {
    let date = amz_date.get(..8).unwrap_or(amz_date);
    let scope = format!("{date}/{region}/{service}/aws4_request");
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    let mut key = hmac(
        format!("AWS4{secret_access_key}").as_bytes(),
        date.as_bytes(),
    );
    for part in [region, service, "aws4_request"] {
        key = hmac(&key, part.as_bytes());
    }
    hex(&hmac(&key, to_sign.as_bytes()))
}

/// HMAC-SHA256 (RFC 2104).
fn hmac(key: &[u8], message: &[u8]) -> Vec<u8> {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    inner.update(message);
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().to_vec()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SigV4's URI encoding: everything but `A-Z a-z 0-9 - _ . ~` as `%XX`.
fn uri_encode(segment: &str) -> String {
    let mut out = String::new();
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

    fn vanilla(method: &str) -> String {
        let headers = [
            ("host".to_owned(), "example.amazonaws.com".to_owned()),
            ("x-amz-date".to_owned(), "20150830T123600Z".to_owned()),
        ];
        canonical_request(method, "/", "", &headers, b"")
    }

    /// The signatures of AWS's published SigV4 test suite (`get-vanilla`,
    /// `post-vanilla`): the fake's own signer agrees with AWS's.
    #[test]
    fn signatures_match_aws_test_suite() {
        let get = vanilla("GET");
        assert_eq!(
            get,
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sigv4_signature(SECRET, "20150830T123600Z", "us-east-1", "service", &get),
            "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
        );
        assert_eq!(
            sigv4_signature(
                SECRET,
                "20150830T123600Z",
                "us-east-1",
                "service",
                &vanilla("POST")
            ),
            "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
        );
    }

    /// AWS's `double-url-encode` case: a path sent with `%3A` is signed as `%253A`.
    #[test]
    fn encoded_paths_are_encoded_again() {
        let c = canonical_request("POST", "/model/a.b-v1%3A0/converse", "", &[], b"");
        assert!(c.starts_with("POST\n/model/a.b-v1%253A0/converse\n"), "{c}");
    }

    #[test]
    fn malformed_authorization_is_refused() {
        let good = "AWS4-HMAC-SHA256 Credential=AKID/20250101/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=".to_owned() + &"a".repeat(64);
        let parsed = parse_sigv4(&good).unwrap();
        assert_eq!(parsed.region, "us-east-1");
        assert_eq!(parsed.signed_headers, ["host", "x-amz-date"]);
        assert!(parse_sigv4("Basic abc").is_err());
        assert!(parse_sigv4(&good.replace("aws4_request", "aws4")).is_err());
        assert!(parse_sigv4(&good.replace(&"a".repeat(64), "abc")).is_err());
        assert!(parse_sigv4(&good.replace("host;x-amz-date", "x-amz-date;host")).is_err());
    }
}
