//! A cassette in memory: the exchanges of its files, and the request that finds one.
//! Its files are read through `files.rs`: only regular files, within
//! [`MAX_CASSETTE_BYTES`].

use std::collections::HashMap;
use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::files::{MAX_CASSETTE_BYTES, human_bytes, kind_name, read_regular, regular_size};
use crate::format::{CASSETTE_VERSION, Chunk, Exchange, RecordedRequest, RecordedResponse};

/// The exchanges of a cassette, in the order they were recorded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cassette {
    exchanges: Vec<Exchange>,
    /// For each request that was asked for, how many of its exchanges were served:
    /// the same request asked again gets the next one recorded (the last repeats).
    served: HashMap<RecordedRequest, usize>,
}

/// Why a cassette file could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CassetteError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A cassette path names something other than a regular file (a named pipe, a
    /// device, a folder): refused before it is opened.
    #[error("{path}: it is {kind}, not a regular file; only regular files are read as cassettes")]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it is instead.
        kind: &'static str,
    },
    /// A cassette file is over [`MAX_CASSETTE_BYTES`] (or the limit it was read with).
    #[error("{path}: {}, over the limit of {} for a cassette file", held(*.size), human_bytes(*.limit))]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size, when it was known before reading.
        size: Option<u64>,
        /// The limit, in bytes.
        limit: u64,
    },
    /// The cassette files of a folder are over [`MAX_CASSETTE_BYTES`] together.
    #[error(
        "{dir}: its cassette files hold {} together, over the limit of {} for a cassette folder",
        human_bytes(*.size),
        human_bytes(*.limit)
    )]
    FolderTooLarge {
        /// The folder.
        dir: PathBuf,
        /// What its cassette files hold together, in bytes (at least).
        size: u64,
        /// The limit, in bytes.
        limit: u64,
    },
    /// A line is not an exchange of this format.
    #[error("{path}:{line}: not a cassette exchange: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What the parser said.
        message: String,
    },
    /// `--record` was pointed at a folder that already holds cassettes.
    #[error(
        "{dir} already holds cassettes: replace them with --re-record, or add what is missing with --replay-or-record"
    )]
    NotEmpty {
        /// The folder.
        dir: PathBuf,
    },
    /// The file was written by a newer Prill.
    #[error(
        "{path}:{line}: cassette_version {found} is newer than this Prill reads ({CASSETTE_VERSION}); update Prill"
    )]
    Newer {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// The version found.
        found: u32,
    },
}

/// How much a file over a limit holds, as its message says it.
fn held(size: Option<u64>) -> String {
    match size {
        Some(size) => format!("it holds {}", human_bytes(size)),
        None => "it holds more".to_owned(),
    }
}

/// No recorded exchange answers a request: what was asked, and the closest recorded
/// request with how it differs.
#[derive(Debug, Clone, PartialEq)]
pub struct NoMatch {
    /// The request asked for.
    pub request: RecordedRequest,
    /// The closest recorded request, when the cassette has any of the same connector.
    pub closest: Option<RecordedRequest>,
    /// How the closest differs, one line per difference: `path: recorded X, sent Y`.
    pub differences: Vec<String>,
}

impl fmt::Display for NoMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.request;
        write!(
            f,
            "no recorded exchange answers {} {}",
            r.connector, r.endpoint
        )?;
        if let Some(sample) = r.sample {
            write!(f, " (sample {sample})")?;
        }
        match &self.closest {
            None => write!(
                f,
                "; the cassettes hold nothing of {}: record them with --record or --replay-or-record",
                r.connector
            ),
            Some(_) => {
                write!(f, "; the closest recorded request differs:")?;
                for line in &self.differences {
                    write!(f, "\n  {line}")?;
                }
                write!(
                    f,
                    "\nrecord it again with --re-record, or add the missing one with --replay-or-record"
                )
            }
        }
    }
}

impl std::error::Error for NoMatch {}

impl Cassette {
    /// Reads every `*.jsonl` file of `dir` (none when `dir` does not exist), in the
    /// order of their names. Each is looked at before any is opened: one that is not a
    /// regular file (after following symbolic links: a named pipe, a device), or files
    /// over [`MAX_CASSETTE_BYTES`] together, refuse the folder at once, reading nothing.
    pub fn read_dir(dir: &Path) -> Result<Cassette, CassetteError> {
        let mut all = Cassette::default();
        for (_, cassette) in Cassette::read_files(dir)? {
            all.exchanges.extend(cassette.exchanges);
        }
        Ok(all)
    }

    /// [`Cassette::read_dir`], each file's exchanges apart, with the file's path.
    pub fn read_files(dir: &Path) -> Result<Vec<(PathBuf, Cassette)>, CassetteError> {
        let io = |source| CassetteError::Io {
            path: dir.to_owned(),
            source,
        };
        let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(entries) => entries
                .map(|e| e.map(|e| e.path()))
                .collect::<Result<_, _>>()
                .map_err(io)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io(e)),
        };
        files.retain(|p| p.extension().is_some_and(|e| e == "jsonl"));
        files.sort();
        let mut total: u64 = 0;
        for file in &files {
            total = total.saturating_add(regular_size(file, MAX_CASSETTE_BYTES)?);
        }
        let too_large = |size| CassetteError::FolderTooLarge {
            dir: dir.to_owned(),
            size,
            limit: MAX_CASSETTE_BYTES,
        };
        if total > MAX_CASSETTE_BYTES {
            return Err(too_large(total));
        }
        let mut read: u64 = 0;
        let mut cassettes = Vec::with_capacity(files.len());
        for file in files {
            let mut cassette = Cassette::default();
            read = read.saturating_add(cassette.read_sized(&file)?);
            // A file may have grown since it was looked at.
            if read > MAX_CASSETTE_BYTES {
                return Err(too_large(read));
            }
            cassettes.push((file, cassette));
        }
        Ok(cassettes)
    }

    /// Adds the exchanges of the file at `path`. Only a regular file (after following
    /// symbolic links) is read, and no further than [`MAX_CASSETTE_BYTES`]: anything
    /// else is refused before it is opened.
    pub fn read_file(&mut self, path: &Path) -> Result<(), CassetteError> {
        self.read_sized(path).map(|_| ())
    }

    /// [`Cassette::read_file`], saying how many bytes the file held.
    fn read_sized(&mut self, path: &Path) -> Result<u64, CassetteError> {
        let bytes = read_regular(path, MAX_CASSETTE_BYTES)?;
        let size = bytes.len() as u64;
        let text = String::from_utf8(bytes).map_err(|e| CassetteError::Io {
            path: path.to_owned(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()),
        })?;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let parse = |message: String| CassetteError::Parse {
                path: path.to_owned(),
                line: i + 1,
                message,
            };
            let value: Value = serde_json::from_str(line).map_err(|e| parse(e.to_string()))?;
            let version = value.get("cassette_version").and_then(Value::as_u64);
            if let Some(found) = version.filter(|v| *v > u64::from(CASSETTE_VERSION)) {
                return Err(CassetteError::Newer {
                    path: path.to_owned(),
                    line: i + 1,
                    found: u32::try_from(found).unwrap_or(u32::MAX),
                });
            }
            let exchange = serde_json::from_value(value).map_err(|e| parse(e.to_string()))?;
            self.exchanges.push(exchange);
        }
        Ok(size)
    }

    /// Appends `exchange` to the cassette file at `path` (created with its folder), one
    /// line written whole. A path that names something other than a regular file (a
    /// named pipe, whose opening would block) is refused before it is opened.
    pub fn append(path: &Path, exchange: &Exchange) -> Result<(), CassetteError> {
        let io = |source| CassetteError::Io {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        if let Ok(meta) = std::fs::metadata(path)
            && !meta.is_file()
        {
            return Err(CassetteError::NotRegular {
                path: path.to_owned(),
                kind: kind_name(meta.file_type()),
            });
        }
        let mut line = serde_json::to_string(exchange).map_err(|e| io(e.into()))?;
        line.push('\n');
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        file.write_all(line.as_bytes()).map_err(io)
    }

    /// Blanks the secrets `normalizer` knows in every recorded request, as it blanks
    /// a request sent now: a recording made with other secrets (other keys, whose
    /// parts may look like the ends of common words) still matches the same request.
    pub fn redact_requests(&mut self, normalizer: &crate::Normalizer) {
        for exchange in &mut self.exchanges {
            normalizer.redact_request(&mut exchange.request);
        }
    }

    /// Adds `exchange` after those recorded.
    pub fn push(&mut self, exchange: Exchange) {
        self.exchanges.push(exchange);
    }

    /// Adds an exchange: `request` answered with `status`, `headers` and `chunks`
    /// (milliseconds from the request, bytes).
    pub fn push_exchange(
        &mut self,
        request: RecordedRequest,
        status: u16,
        headers: Vec<(String, String)>,
        chunks: Vec<(u64, Vec<u8>)>,
    ) {
        self.exchanges.push(Exchange {
            cassette_version: CASSETTE_VERSION,
            request,
            response: RecordedResponse {
                status,
                headers,
                chunks: chunks
                    .into_iter()
                    .map(|(at, bytes)| Chunk::new(at, bytes))
                    .collect(),
                broke_off: None,
            },
            under: None,
        });
    }

    /// The exchanges, in the order they were recorded.
    pub fn exchanges(&self) -> &[Exchange] {
        &self.exchanges
    }

    /// The first exchange recorded for `request`, or why there is none.
    pub fn find(&self, request: &RecordedRequest) -> Result<&Exchange, Box<NoMatch>> {
        self.exchanges
            .iter()
            .find(|e| &e.request == request)
            .ok_or_else(|| Box::new(self.no_match(request)))
    }

    /// The next exchange recorded for `request`: a request asked again gets the next
    /// recording of it, in order, and the last one once they are all served.
    pub fn next(&mut self, request: &RecordedRequest) -> Result<&Exchange, Box<NoMatch>> {
        let matching: Vec<usize> = self
            .exchanges
            .iter()
            .enumerate()
            .filter(|(_, e)| &e.request == request)
            .map(|(i, _)| i)
            .collect();
        let Some(&last) = matching.last() else {
            return Err(Box::new(self.no_match(request)));
        };
        let served = self.served.entry(request.clone()).or_insert(0);
        let index = matching.get(*served).copied().unwrap_or(last);
        *served += 1;
        Ok(&self.exchanges[index])
    }

    fn no_match(&self, request: &RecordedRequest) -> NoMatch {
        let closest = self
            .exchanges
            .iter()
            .filter(|e| e.request.connector == request.connector)
            .map(|e| (distance(&e.request, request), &e.request))
            .min_by_key(|(d, _)| *d)
            .map(|(_, r)| r.clone());
        let differences = closest
            .as_ref()
            .map(|c| differences(c, request))
            .unwrap_or_default();
        NoMatch {
            request: request.clone(),
            closest,
            differences,
        }
    }
}

/// How far apart two requests are: another endpoint weighs most, then another sample,
/// then each differing value of the bodies.
fn distance(recorded: &RecordedRequest, sent: &RecordedRequest) -> usize {
    let mut lines = Vec::new();
    diff("body", &recorded.body, &sent.body, &mut lines);
    usize::from(recorded.endpoint != sent.endpoint) * 10_000
        + usize::from(recorded.case != sent.case) * 5_000
        + usize::from(recorded.sample != sent.sample) * 1_000
        + lines.len()
}

/// The differences between a recorded request and the one sent, as lines.
fn differences(recorded: &RecordedRequest, sent: &RecordedRequest) -> Vec<String> {
    let mut lines = Vec::new();
    if recorded.endpoint != sent.endpoint {
        lines.push(format!(
            "endpoint: recorded {}, sent {}",
            recorded.endpoint, sent.endpoint
        ));
    }
    if recorded.case != sent.case {
        let show = |c: &Option<String>| c.clone().unwrap_or_else(|| "none".to_owned());
        lines.push(format!(
            "case: recorded {}, sent {}",
            show(&recorded.case),
            show(&sent.case)
        ));
    }
    if recorded.sample != sent.sample {
        let show = |s: Option<u32>| s.map_or("none".to_owned(), |s| s.to_string());
        lines.push(format!(
            "sample: recorded {}, sent {}",
            show(recorded.sample),
            show(sent.sample)
        ));
    }
    diff("body", &recorded.body, &sent.body, &mut lines);
    lines
}

/// One line per leaf where `recorded` and `sent` differ, under `path`.
fn diff(path: &str, recorded: &Value, sent: &Value, out: &mut Vec<String>) {
    match (recorded, sent) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, va) in a {
                let at = format!("{path}.{key}");
                match b.get(key) {
                    Some(vb) => diff(&at, va, vb, out),
                    None => out.push(format!("{at}: recorded {}, not sent", short(va))),
                }
            }
            for (key, vb) in b {
                if !a.contains_key(key) {
                    out.push(format!("{path}.{key}: not recorded, sent {}", short(vb)));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                diff(&format!("{path}[{i}]"), va, vb, out);
            }
        }
        _ if recorded != sent => out.push(format!(
            "{path}: recorded {}, sent {}",
            short(recorded),
            short(sent)
        )),
        _ => {}
    }
}

/// A value as a difference line shows it: JSON, cut at 120 characters.
fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 120 {
        return text;
    }
    let cut: String = text.chars().take(117).collect();
    format!("{cut}...")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Normalizer;
    use serde_json::json;

    fn request(content: &str, sample: u32) -> RecordedRequest {
        Normalizer::default().request(
            "openai",
            "POST",
            "http://127.0.0.1:9/v1/chat/completions",
            &json!({"model": "m", "messages": [{"role": "user", "content": content}]}),
            Some(sample),
        )
    }

    #[test]
    fn a_miss_names_the_closest_request_and_its_differences() {
        let mut c = Cassette::default();
        c.push_exchange(request("Hello", 0), 200, vec![], vec![(1, b"a".to_vec())]);
        c.push_exchange(request("Other text entirely", 1), 200, vec![], vec![]);
        let miss = c.find(&request("Hullo", 0)).unwrap_err();
        assert_eq!(miss.closest, Some(request("Hello", 0)));
        assert_eq!(
            miss.differences,
            [r#"body.messages[0].content: recorded "Hello", sent "Hullo""#]
        );
        let text = miss.to_string();
        assert!(
            text.contains("(sample 0)") && text.contains("--re-record"),
            "{text}"
        );
        let miss = c.find(&request("Hello", 5)).unwrap_err();
        assert_eq!(miss.differences, ["sample: recorded 0, sent 5"]);
        let other =
            Normalizer::default().request("anthropic", "POST", "http://x", &json!({}), None);
        let miss = c.find(&other).unwrap_err();
        assert!(miss.closest.is_none());
        assert!(miss.to_string().contains("nothing of anthropic"));
    }

    #[test]
    fn a_request_asked_again_gets_the_next_recording_then_the_last() {
        let mut c = Cassette::default();
        c.push_exchange(request("Hi", 0), 200, vec![], vec![(0, b"first".to_vec())]);
        c.push_exchange(request("Hi", 0), 200, vec![], vec![(0, b"second".to_vec())]);
        let body = |c: &mut Cassette| {
            c.next(&request("Hi", 0)).unwrap().response.chunks[0]
                .text
                .clone()
        };
        assert_eq!(body(&mut c).as_deref(), Some("first"));
        assert_eq!(body(&mut c).as_deref(), Some("second"));
        assert_eq!(body(&mut c).as_deref(), Some("second"));
    }

    /// Blanks every string it holds that ends like a key that ends in `only`, as a
    /// partly quoted key is blanked.
    struct EndsLikeAKey;

    impl crate::Redact for EndsLikeAKey {
        fn redact(&self, text: &mut String) {
            *text = text
                .split(' ')
                .map(|w| if w.ends_with("only") { "<redacted>" } else { w })
                .collect::<Vec<_>>()
                .join(" ");
        }

        fn reach(&self) -> usize {
            4
        }
    }

    /// A recording made with other secrets than the replay's still matches: the
    /// recorded requests are blanked as the sent ones are.
    #[test]
    fn a_recording_matches_a_request_blanked_with_other_secrets() {
        let replaying = Normalizer::default().with_redaction(std::sync::Arc::new(EndsLikeAKey));
        let sent = |n: &Normalizer| {
            n.request(
                "openai",
                "POST",
                "http://127.0.0.1:9/v1/chat/completions",
                &json!({"messages": [{"role": "user", "content": "reply with only a number"}]}),
                Some(0),
            )
        };
        let mut c = Cassette::default();
        c.push_exchange(sent(&Normalizer::default()), 200, vec![], vec![]);
        assert!(c.find(&sent(&replaying)).is_err());
        c.redact_requests(&replaying);
        assert!(c.find(&sent(&replaying)).is_ok());
    }

    /// `Cassette::read_dir(dir)`'s error, which must come within a second: run on a
    /// thread of its own, so that a read that blocks fails the test rather than hangs it.
    fn refused_at_once(dir: &Path) -> CassetteError {
        let dir = dir.to_owned();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(Cassette::read_dir(&dir).map(|_| ()));
        });
        rx.recv_timeout(std::time::Duration::from_secs(1))
            .expect("the folder was neither read nor refused within a second")
            .expect_err("the folder was read")
    }

    /// A good cassette, so that the folder is refused for its other entry alone.
    fn good(dir: &Path) {
        let mut c = Cassette::default();
        c.push_exchange(request("Hi", 0), 200, vec![], vec![(3, b"ok".to_vec())]);
        Cassette::append(&dir.join("a-good.jsonl"), &c.exchanges()[0]).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_named_pipe_in_a_cassette_folder_is_refused_at_once_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        good(dir.path());
        let pipe = dir.path().join("pipe.jsonl");
        let made = std::process::Command::new("mkfifo")
            .arg(&pipe)
            .status()
            .unwrap();
        assert!(made.success());
        let e = refused_at_once(dir.path());
        assert!(matches!(e, CassetteError::NotRegular { .. }), "{e:?}");
        let text = e.to_string();
        assert!(text.contains("pipe.jsonl"), "{text}");
        assert!(text.contains("named pipe"), "{text}");
        // Appending to it is refused too, rather than blocking on its opening.
        let mut c = Cassette::default();
        c.push_exchange(request("Hi", 0), 200, vec![], vec![]);
        let e = Cassette::append(&pipe, &c.exchanges()[0]).unwrap_err();
        assert!(matches!(e, CassetteError::NotRegular { .. }), "{e:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_device_is_refused_at_once_and_a_link_to_a_cassette_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        good(elsewhere.path());
        std::os::unix::fs::symlink(
            elsewhere.path().join("a-good.jsonl"),
            dir.path().join("linked.jsonl"),
        )
        .unwrap();
        assert_eq!(Cassette::read_dir(dir.path()).unwrap().exchanges().len(), 1);
        std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.jsonl")).unwrap();
        let e = refused_at_once(dir.path());
        assert!(matches!(e, CassetteError::NotRegular { .. }), "{e:?}");
        let text = e.to_string();
        assert!(text.contains("zero.jsonl"), "{text}");
        assert!(text.contains("character device"), "{text}");
    }

    /// Files over the limit are refused by their size, before a byte of them is read: a
    /// terabyte costs nothing.
    #[test]
    fn files_over_the_limit_are_refused_before_they_are_read_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        good(dir.path());
        let huge = std::fs::File::create(dir.path().join("huge.jsonl")).unwrap();
        huge.set_len(1 << 40).unwrap();
        let e = refused_at_once(dir.path());
        assert!(matches!(e, CassetteError::TooLarge { .. }), "{e:?}");
        let text = e.to_string();
        assert!(text.contains("huge.jsonl"), "{text}");
        assert!(text.contains("limit of 256 MiB"), "{text}");
        std::fs::remove_file(dir.path().join("huge.jsonl")).unwrap();
        // Each under the limit, over it together.
        for name in ["b.jsonl", "c.jsonl"] {
            let file = std::fs::File::create(dir.path().join(name)).unwrap();
            file.set_len(MAX_CASSETTE_BYTES / 2 + 1).unwrap();
        }
        let e = refused_at_once(dir.path());
        assert!(matches!(e, CassetteError::FolderTooLarge { .. }), "{e:?}");
        assert!(e.to_string().contains("limit of 256 MiB"), "{e}");
    }

    #[test]
    fn files_round_trip_and_a_newer_format_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cassettes/openai.jsonl");
        let mut c = Cassette::default();
        c.push_exchange(
            request("Hi", 0),
            200,
            vec![("content-type".into(), "text/event-stream".into())],
            vec![(3, vec![0xff, 1])],
        );
        Cassette::append(&path, &c.exchanges()[0]).unwrap();
        let read = Cassette::read_dir(path.parent().unwrap()).unwrap();
        assert_eq!(read.exchanges(), c.exchanges());
        let newer = std::fs::read_to_string(&path)
            .unwrap()
            .replace("\"cassette_version\":1", "\"cassette_version\":9");
        std::fs::write(&path, newer).unwrap();
        let e = Cassette::read_dir(path.parent().unwrap()).unwrap_err();
        assert!(e.to_string().contains("update Prill"), "{e}");
        assert!(
            Cassette::read_dir(&dir.path().join("none"))
                .unwrap()
                .exchanges()
                .is_empty()
        );
    }
}
