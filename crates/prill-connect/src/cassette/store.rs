//! [`Cassettes`]: the cassettes of one run, shared by every connector of it. It says
//! whether a request is answered from a recording, and writes what a live request got.
//!
//! A case's exchanges go to a file of its own, `DIR/<case name>-<id>.jsonl`, named
//! after the [`SampleScope`] the engine runs the sample in; a request made outside any
//! sample (listing agents, `prill serve`) goes to `DIR/run.jsonl`. Every exchange is
//! appended as one whole line as soon as its response is complete.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use prill_cassette::{
    CASSETTE_VERSION, Cassette, CassetteError, Exchange, Latency, Normalizer, RecordedRequest,
    RecordedResponse,
};
use prill_spec::plan::under::Change;
use prill_spec::redact::Redactor;
use prill_target::scope::{self, SampleScope};
use serde_json::Value;

use super::redact;

use crate::error::ConnectError;

/// What a run does with its cassettes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// `--record DIR`: every exchange goes live and is written; a folder that already
    /// holds cassettes is refused (`--re-record` replaces them).
    Record,
    /// `--replay DIR`: every exchange is answered from the cassettes, with no network;
    /// a request none recorded is an error ([`ConnectError::NoCassette`]).
    Replay,
    /// `--replay-or-record DIR`: answered from the cassettes where they have it, live
    /// and recorded where not; existing cassettes are left alone.
    ReplayOrRecord,
    /// `--re-record DIR`: like [`Mode::Record`], replacing the cassette of every case
    /// the run records.
    ReRecord,
}

/// How [`Cassettes`] are set up (`--record`/`--replay`/... and `[cassettes]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CassetteOptions {
    /// The folder of the cassette files.
    pub dir: PathBuf,
    /// What the run does with them.
    pub mode: Mode,
    /// How replayed responses are paced.
    pub latency: Latency,
    /// Body fields to ignore beyond the defaults (`[cassettes] ignore`).
    pub ignore: Vec<String>,
    /// Default volatile fields to match on after all (`[cassettes] keep`).
    pub keep: Vec<String>,
    /// The run's secrets (its keys, blanked whole and in part, and its `${VAR}`
    /// values), never written to a cassette: each is written as `<redacted>`, wherever
    /// it is in what an exchange keeps.
    pub secrets: Redactor,
}

impl CassetteOptions {
    /// `mode` on the cassettes of `dir`, with the default normalization.
    pub fn new(dir: impl Into<PathBuf>, mode: Mode) -> CassetteOptions {
        CassetteOptions {
            dir: dir.into(),
            mode,
            latency: Latency::Recorded,
            ignore: Vec::new(),
            keep: Vec::new(),
            secrets: Redactor::default(),
        }
    }
}

/// The cassettes of a run: cheap to clone, shared by all its connectors.
#[derive(Debug, Clone)]
pub struct Cassettes {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    dir: PathBuf,
    mode: Mode,
    latency: Latency,
    normalizer: Normalizer,
    /// The secrets the normalizer blanks, for a request that adds its own.
    secrets: Redactor,
    /// The recordings read at the start (replaying modes), with what was served.
    recorded: Mutex<Cassette>,
    /// The files this run wrote to: `--re-record` empties each before its first line.
    written: Mutex<HashSet<PathBuf>>,
    /// The first recording that could not be written, as a sentence.
    failure: Mutex<Option<String>>,
    /// The cases whose replayed exchanges were recorded under other parts than the case
    /// is made of now, by name, with what changed.
    stale: Mutex<BTreeMap<String, Vec<Change>>>,
}

impl PartialEq for Cassettes {
    fn eq(&self, other: &Cassettes) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for Cassettes {}

impl Cassettes {
    /// Opens the cassettes `options` name: reads them to replay, or checks that
    /// `--record` would not mix new recordings into old ones.
    pub fn open(options: CassetteOptions) -> Result<Cassettes, CassetteError> {
        let recorded = match options.mode {
            Mode::Replay | Mode::ReplayOrRecord => Cassette::read_dir(&options.dir)?,
            Mode::ReRecord => Cassette::default(),
            Mode::Record => {
                if !Cassette::read_dir(&options.dir)?.exchanges().is_empty() {
                    return Err(CassetteError::NotEmpty { dir: options.dir });
                }
                Cassette::default()
            }
        };
        let mut normalizer = Normalizer::new(&options.ignore, &options.keep);
        if let Some(redaction) = redact::redaction(&options.secrets) {
            normalizer = normalizer.with_redaction(redaction);
        }
        // Recorded with other secrets (other keys), a request is keyed as this run
        // keys it.
        let mut recorded = recorded;
        recorded.redact_requests(&normalizer);
        Ok(Cassettes {
            inner: Arc::new(Inner {
                dir: options.dir,
                mode: options.mode,
                latency: options.latency,
                normalizer,
                secrets: options.secrets,
                recorded: Mutex::new(recorded),
                written: Mutex::new(HashSet::new()),
                failure: Mutex::new(None),
                stale: Mutex::new(BTreeMap::new()),
            }),
        })
    }

    /// The folder of the cassette files.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// What the run does with them.
    pub fn mode(&self) -> Mode {
        self.inner.mode
    }

    /// How replayed responses are paced.
    pub fn latency(&self) -> Latency {
        self.inner.latency
    }

    /// The normalization in use.
    pub fn normalizer(&self) -> &Normalizer {
        &self.inner.normalizer
    }

    /// The request as the cassettes key it, sent by `connector` to `method url` with
    /// `body` (`Value::Null` for none) from the current sample ([`scope::current`]).
    pub fn request(
        &self,
        connector: &str,
        method: &str,
        url: &str,
        body: &Value,
    ) -> RecordedRequest {
        let scope = scope::current();
        self.inner
            .normalizer
            .request(
                connector,
                method,
                url,
                body,
                scope.as_ref().map(|s| s.sample),
            )
            .in_case(scope.map(|s| s.case.to_string()))
    }

    /// The recorded answer to `request`: `Ok(Some)` to replay it, `Ok(None)` to go live
    /// (and [`Cassettes::record`] what comes back), or the error of a replay that has
    /// no recording of it.
    pub fn replay(&self, request: &RecordedRequest) -> Result<Option<Exchange>, ConnectError> {
        if matches!(self.inner.mode, Mode::Record | Mode::ReRecord) {
            return Ok(None);
        }
        let mut recorded = self
            .inner
            .recorded
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        match recorded.next(request) {
            Ok(exchange) => {
                if let Some(scope) = scope::current() {
                    scope.note_replayed();
                    self.note_stale(&scope, exchange);
                }
                Ok(Some(exchange.clone()))
            }
            Err(_) if self.inner.mode == Mode::ReplayOrRecord => Ok(None),
            Err(miss) => Err(ConnectError::NoCassette {
                message: miss.to_string(),
            }),
        }
    }

    /// Remembers `scope`'s case as stale when `exchange` was recorded under parts that
    /// have changed since (its checks aside).
    fn note_stale(&self, scope: &SampleScope, exchange: &Exchange) {
        let (Some(then), Some(now)) = (&exchange.under, &scope.under) else {
            return;
        };
        let changes: Vec<Change> = then
            .changes(now)
            .into_iter()
            .filter(Change::stales)
            .collect();
        if changes.is_empty() {
            return;
        }
        let mut stale = self.inner.stale.lock().unwrap_or_else(|e| e.into_inner());
        stale.entry(scope.name.to_string()).or_insert(changes);
    }

    /// The cases that replayed exchanges recorded under other inputs, tools, simulated
    /// user or tool program than they have now, by name, with what changed: their
    /// answers may no longer be what the agent would say. A run warns of them at its end.
    pub fn stale(&self) -> Vec<(String, Vec<Change>)> {
        self.inner
            .stale
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(name, changes)| (name.clone(), changes.clone()))
            .collect()
    }

    /// Whether some recorded exchange is `connector`'s (`http`, `demo`, ...): what a
    /// replay can answer. Always `false` while recording.
    pub fn holds(&self, connector: &str) -> bool {
        self.inner
            .recorded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .exchanges()
            .iter()
            .any(|e| e.request.connector == connector)
    }

    /// Whether live answers are written.
    pub fn records(&self) -> bool {
        self.inner.mode != Mode::Replay
    }

    /// Writes what `request` got live (the secrets of its chunks, headers and break
    /// blanked, a secret split between two chunks included) to the file of the current
    /// sample's case.
    pub fn record(
        &self,
        request: RecordedRequest,
        response: RecordedResponse,
    ) -> Result<(), CassetteError> {
        self.record_in(scope::current().as_ref(), request, response)
    }

    /// [`Cassettes::record`] for the case of `scope` (the sample that sent the request,
    /// when the response ends elsewhere), remembering a failure to write
    /// ([`Cassettes::failure`]).
    pub fn record_in(
        &self,
        scope: Option<&SampleScope>,
        request: RecordedRequest,
        response: RecordedResponse,
    ) -> Result<(), CassetteError> {
        self.record_hiding(scope, request, response, &Redactor::default())
    }

    /// [`Cassettes::record_in`], blanking the keys `request`'s headers carried too
    /// (`request_secrets`), even those the run does not know as its own.
    pub(crate) fn record_hiding(
        &self,
        scope: Option<&SampleScope>,
        request: RecordedRequest,
        response: RecordedResponse,
        request_secrets: &Redactor,
    ) -> Result<(), CassetteError> {
        let written = self.write(scope, request, response, request_secrets);
        if let (Ok(()), Some(scope)) = (&written, scope) {
            scope.note_recorded();
        }
        if let Err(error) = &written {
            let mut failure = self.inner.failure.lock().unwrap_or_else(|e| e.into_inner());
            failure.get_or_insert_with(|| {
                format!("a cassette could not be written ({error}); the recording is incomplete")
            });
        }
        written
    }

    /// The first recording this run could not write, as a sentence, if any: a run that
    /// records checks it at its end and fails when there is one, since its cassettes miss
    /// an exchange. Recordings end when a response's body does, where no error can be
    /// returned to the request, so they are kept here.
    pub fn failure(&self) -> Option<String> {
        self.inner
            .failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn write(
        &self,
        scope: Option<&SampleScope>,
        mut request: RecordedRequest,
        mut response: RecordedResponse,
        request_secrets: &Redactor,
    ) -> Result<(), CassetteError> {
        // The request was keyed with the run's secrets blanked; the keys of its own
        // headers are blanked from all it keeps too.
        match redact::with_request(&self.inner.secrets, request_secrets) {
            None => self.inner.normalizer.redact_response(&mut response),
            Some(all) => {
                let blanking = redact::blanking(&all);
                blanking.redact_request(&mut request);
                blanking.redact_response(&mut response);
            }
        }
        let path = self.file(scope);
        let exchange = Exchange {
            cassette_version: CASSETTE_VERSION,
            request,
            response,
            under: scope.and_then(|s| s.under.as_deref().cloned()),
        };
        let mut written = self.inner.written.lock().unwrap_or_else(|e| e.into_inner());
        if written.insert(path.clone()) && self.inner.mode == Mode::ReRecord && path.exists() {
            std::fs::remove_file(&path).map_err(|source| CassetteError::Io {
                path: path.clone(),
                source,
            })?;
        }
        Cassette::append(&path, &exchange)
    }

    /// The file that keeps the exchanges of `scope`'s case.
    pub fn file(&self, scope: Option<&SampleScope>) -> PathBuf {
        let Some(scope) = scope else {
            return self.inner.dir.join("run.jsonl");
        };
        self.inner
            .dir
            .join(prill_cassette::case_file_name(&scope.name, &scope.case))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::Chunk;

    #[test]
    fn a_recording_that_cannot_be_written_is_remembered() {
        let dir = tempfile::tempdir().unwrap();
        // A file where the folder should be: nothing can be written under it.
        let blocked = dir.path().join("blocked");
        std::fs::write(&blocked, "").unwrap();
        let cassettes = Cassettes::open(CassetteOptions::new(&blocked, Mode::ReRecord)).unwrap();
        assert_eq!(cassettes.failure(), None);
        let request = cassettes.request("openai", "POST", "http://h/v1", &Value::Null);
        let response = RecordedResponse {
            status: 200,
            headers: Vec::new(),
            chunks: vec![Chunk::new(0, b"{}".to_vec())],
            broke_off: None,
        };
        assert!(cassettes.record(request.clone(), response.clone()).is_err());
        let first = cassettes.failure().unwrap();
        assert!(first.contains("could not be written"), "{first}");
        assert!(first.contains("blocked"), "{first}");
        assert!(cassettes.record(request, response).is_err());
        assert_eq!(cassettes.failure(), Some(first));
    }
}
