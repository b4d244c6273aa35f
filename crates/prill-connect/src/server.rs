//! Which server to talk to: [`resolve_server`] and the urls built on it.

use reqwest::Url;

use crate::error::ConnectError;

/// The environment variable that names the default neuro-san server.
pub const SERVER_ENV: &str = "PRILL_SERVER";

/// The server used when nothing names one: neuro-san's own default.
pub const DEFAULT_SERVER: &str = "http://localhost:8080";

/// The neuro-san server to use, from (first given wins) the `--server` flag, the
/// [`SERVER_ENV`] (`PRILL_SERVER`) environment variable, `prill.toml`'s `server`, and
/// finally [`DEFAULT_SERVER`]. Empty values count as not given. A value without a
/// scheme (`localhost:8080`) means http.
///
/// A pure function: the caller reads the flag, the variable and the file.
///
/// ```
/// use prill_connect::resolve_server;
///
/// let url = resolve_server(None, Some("127.0.0.1:9000"), Some("http://other:8080")).unwrap();
/// assert_eq!(url.as_str(), "http://127.0.0.1:9000/");
/// assert_eq!(resolve_server(None, None, None).unwrap().as_str(), "http://localhost:8080/");
/// ```
pub fn resolve_server(
    flag: Option<&str>,
    env: Option<&str>,
    config: Option<&str>,
) -> Result<Url, ConnectError> {
    fn given(v: Option<&str>) -> Option<&str> {
        v.map(str::trim).filter(|v| !v.is_empty())
    }
    let (value, from) = if let Some(v) = given(flag) {
        (v, "--server")
    } else if let Some(v) = given(env) {
        (v, SERVER_ENV)
    } else if let Some(v) = given(config) {
        (v, "prill.toml's `server`")
    } else {
        (DEFAULT_SERVER, "the default")
    };
    parse_server(value).map_err(|reason| {
        ConnectError::config(format!("the server from {from} is not usable: {reason}"))
    })
}

/// Parses a server url; a value without a scheme means http. A value that is not a
/// usable server is a [`ConnectError::Config`] that says why, without credentials.
pub fn parse_server(value: &str) -> Result<Url, ConnectError> {
    let text = if value.contains("://") {
        value.to_owned()
    } else {
        format!("http://{value}")
    };
    let url = Url::parse(&text)
        .map_err(|e| ConnectError::config(format!("`{}` is not a url ({e})", shown(&text))))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ConnectError::config(format!(
            "`{}` must start with http:// or https://",
            shown(&text)
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(ConnectError::config(format!(
            "`{}` names no host",
            shown(&text)
        )));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(ConnectError::config(format!(
            "`{}` must not have a query or a fragment",
            label(&url)
        )));
    }
    Ok(url)
}

/// A url text with any password replaced, for messages.
fn shown(text: &str) -> String {
    match Url::parse(text) {
        Ok(url) => label(&url),
        Err(_) => match text.split_once('@') {
            Some((_, host)) => format!("…@{host}"),
            None => text.to_owned(),
        },
    }
}

/// The same server with the scheme switched (`http` to `https` or back).
pub fn with_scheme(base: &Url, scheme: &str) -> Url {
    let mut url = base.clone();
    // Both schemes are "special", so switching between them always succeeds; a base
    // with any other scheme is returned unchanged.
    let _ = url.set_scheme(scheme);
    url
}

/// How a server is named in messages: scheme, host, port and path, never credentials.
pub fn label(url: &Url) -> String {
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    format!("{origin}{path}")
}

/// `base` + the path `segments`; each `/`-separated part of a segment is one path
/// segment, percent-encoded (agent names such as `deep/math_guy` keep their slashes).
pub(crate) fn endpoint(base: &Url, segments: &[&str]) -> Url {
    let mut url = base.clone();
    if let Ok(mut path) = url.path_segments_mut() {
        path.pop_if_empty();
        for segment in segments {
            path.extend(segment.split('/'));
        }
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_flag_env_config_default() {
        let r = |f, e, c| resolve_server(f, e, c).unwrap().to_string();
        assert_eq!(
            r(Some("http://f:1"), Some("http://e:2"), Some("http://c:3")),
            "http://f:1/"
        );
        assert_eq!(
            r(None, Some("http://e:2"), Some("http://c:3")),
            "http://e:2/"
        );
        assert_eq!(r(Some("  "), Some(""), Some("http://c:3")), "http://c:3/");
        assert_eq!(r(None, None, None), "http://localhost:8080/");
        assert_eq!(r(Some("https://f"), None, None), "https://f/");
    }

    #[test]
    fn bad_servers_say_where_they_came_from() {
        let e = resolve_server(None, Some("ftp://x"), None).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Config);
        assert_eq!(
            e.to_string(),
            "the server from PRILL_SERVER is not usable: `ftp://x` must start with http:// or https://"
        );
        let e = resolve_server(Some("http://[bad"), None, None).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the server from --server is not usable")
        );
        let e = resolve_server(None, None, Some("http://h/?q=1")).unwrap_err();
        assert!(e.to_string().contains("prill.toml"));
    }

    #[test]
    fn labels_hide_credentials() {
        let url = parse_server("http://user:secret@h:8080/base/").unwrap();
        assert_eq!(label(&url), "http://h:8080/base");
        let e = parse_server("ftp://user:secret@h").unwrap_err();
        assert_eq!(e.kind(), crate::error::ErrorKind::Config);
        assert_eq!(
            e.to_string(),
            "`ftp://h` must start with http:// or https://"
        );
    }

    #[test]
    fn endpoints_and_schemes() {
        let base = parse_server("http://127.0.0.1:8080").unwrap();
        assert_eq!(
            endpoint(&base, &["api/v1", "deep/math guy", "streaming_chat"]).as_str(),
            "http://127.0.0.1:8080/api/v1/deep/math%20guy/streaming_chat"
        );
        let prefixed = parse_server("http://h/prefix/").unwrap();
        assert_eq!(
            endpoint(&prefixed, &["mcp"]).as_str(),
            "http://h/prefix/mcp"
        );
        assert_eq!(
            with_scheme(&base, "https").as_str(),
            "https://127.0.0.1:8080/"
        );
        let odd = parse_server("http://h:443").unwrap();
        // The url crate drops a port that is the new scheme's default.
        assert_eq!(with_scheme(&odd, "https").as_str(), "https://h/");
    }
}
