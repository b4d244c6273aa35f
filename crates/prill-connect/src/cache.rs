//! The model response cache (`[cache] models` of `prill.toml`, on by default for model
//! providers in `prill run`, `--no-cache` turns it off): the answer to a request made
//! with `temperature: 0` is kept under `.prill/cache/models`, and an identical request
//! later is answered from it, at no token cost and with no rate slot.
//!
//! Unlike cassettes, the cache is an everyday convenience, never a promise: a missing,
//! expired or unreadable entry is only a miss (an unreadable one is removed), and a
//! request the cache cannot serve goes to the provider. One file per request, named by
//! the sha256 of the request as [`Normalizer`] keys a cassette (connector, method and
//! path, body without volatile fields; no case, not the host), holding one cassette
//! [`Exchange`]: one format serves both. Files are written whole to a temporary name
//! and renamed, so a run never reads half an entry written by another.
//!
//! The cache lives in the project's folder, and CI caches carry it from one pipeline to
//! the next, so an entry is blanked as a cassette is: every secret of the run
//! ([`CacheOptions::secrets`]: its keys, whole and in part, and its `${VAR}` values) and
//! every key the request's headers carried is written `<redacted>`, in the request and
//! in the answer alike. The name of the file is the hash of the request *before* it is
//! blanked, which shows no secret and keeps requests that differ only in a secret apart;
//! the blanked request the entry holds must equal the blanked request asked. An entry
//! that is not a regular file (a named pipe, a link to a device), or is larger than
//! [`MAX_CASSETTE_BYTES`], is a miss, never read, and removed.
//!
//! Only a request that asks for `temperature: 0` is cached (`temperature` for
//! OpenAI-compatible APIs, Hugging Face and Anthropic, `options.temperature` for
//! Ollama, `inferenceConfig.temperature` for Bedrock Converse): any other may answer
//! differently each time. Only a successful (2xx) answer that did not break off, and
//! that its provider read whole and found a good answer ([`Pending::keep`]), is kept. Entries older than the age limit are misses; past the size cap, the least
//! recently used entries (by their access time, set on every hit) are removed first.
//!
//! ```
//! use prill_connect::cache::{CacheOptions, ModelCache};
//! use serde_json::json;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let cache = ModelCache::open(CacheOptions::new(dir.path().join("models")));
//! let url = "https://api.openai.com/v1/chat/completions";
//! let hot = json!({"model": "gpt-4o-mini", "temperature": 0.7, "messages": []});
//! assert!(cache.key("openai", url, &hot, None).is_none());
//! let cold = json!({"model": "gpt-4o-mini", "temperature": 0, "messages": []});
//! let key = cache.key("openai", url, &cold, None).unwrap();
//! assert!(cache.lookup(&key).is_none());
//! ```

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use prill_spec::redact::Redactor;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::cassette::redact;
use crate::cassette::{
    CASSETTE_VERSION, CassetteError, Exchange, MAX_CASSETTE_BYTES, Normalizer, RecordedRequest,
    RecordedResponse,
};

/// The size cap of the cache by default: 500 MB.
pub const DEFAULT_MAX_BYTES: u64 = 500 * 1_000_000;

/// How long an entry is kept by default: 14 days.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(14 * 24 * 60 * 60);

/// Where the cache is and how large and old it may grow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheOptions {
    /// The folder of the entries (`.prill/cache/models`); made on the first store.
    pub dir: PathBuf,
    /// The total size of the entries, in bytes, past which the least recently used go.
    pub max_bytes: u64,
    /// How old an entry may be; older ones are misses, and removed.
    pub max_age: Duration,
    /// The run's secrets (its keys, blanked whole and in part, and its `${VAR}`
    /// values), never written to an entry: each is written as `<redacted>`.
    pub secrets: Redactor,
}

impl CacheOptions {
    /// The cache in `dir`, with the default cap and age limit.
    pub fn new(dir: impl Into<PathBuf>) -> CacheOptions {
        CacheOptions {
            dir: dir.into(),
            max_bytes: DEFAULT_MAX_BYTES,
            max_age: DEFAULT_MAX_AGE,
            secrets: Redactor::default(),
        }
    }
}

/// A request the cache can serve: its file name and the request as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheKey {
    /// The sha256 of the normalized request (before its secrets are blanked), in hex.
    pub hash: String,
    /// The normalized request with its secrets blanked, as the entry keeps it.
    pub request: RecordedRequest,
}

/// The run's handle on the cache; cheap to clone, clones share it.
#[derive(Debug, Clone)]
pub struct ModelCache(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    options: CacheOptions,
    /// Keys the requests: volatile fields out, no secret blanked.
    normalizer: Normalizer,
    /// Blanks the run's secrets from what an entry keeps.
    blanking: Normalizer,
    /// Tells apart the temporary files of one process's concurrent stores.
    writes: AtomicU64,
}

impl ModelCache {
    /// The cache of `options`; nothing is read or made until it is used.
    pub fn open(options: CacheOptions) -> ModelCache {
        let blanking = redact::blanking(&options.secrets);
        ModelCache(Arc::new(Inner {
            options,
            normalizer: Normalizer::default(),
            blanking,
            writes: AtomicU64::new(0),
        }))
    }

    /// The folder of the entries.
    pub fn dir(&self) -> &Path {
        &self.0.options.dir
    }

    /// The key of a `POST` of `body` to `url` by `connector` (`openai`, `ollama`, ...)
    /// for the `sample` of its case (when known: the samples of a case are kept apart,
    /// so `samples: 5` still asks five times before the cache answers them), or `None`
    /// when the request is not cached: it does not ask for temperature 0.
    pub fn key(
        &self,
        connector: &str,
        url: &str,
        body: &Value,
        sample: Option<u32>,
    ) -> Option<CacheKey> {
        if !temperature_zero(body) {
            return None;
        }
        let mut request = self
            .0
            .normalizer
            .request(connector, "POST", url, body, sample);
        let material = serde_json::to_vec(&(
            &request.connector,
            &request.endpoint,
            &request.body,
            request.sample,
        ))
        .ok()?;
        let hash = Sha256::digest(&material)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        self.0.blanking.redact_request(&mut request);
        Some(CacheKey { hash, request })
    }

    /// The stored answer to `key`, when there is one still young enough. Anything that
    /// cannot be read as an entry for this very request is a miss (and removed, unless
    /// it is only another request's); what is not a regular file, or is larger than
    /// [`MAX_CASSETTE_BYTES`], is never read.
    pub fn lookup(&self, key: &CacheKey) -> Option<RecordedResponse> {
        let path = self.path(&key.hash);
        let meta = match crate::cassette::regular_size(&path, MAX_CASSETTE_BYTES) {
            Ok(_) => fs::metadata(&path).ok()?,
            Err(CassetteError::Io { .. }) => return None,
            Err(e) => {
                tracing::debug!(entry = %path.display(), error = %e, "model cache: not an entry, removed");
                let _ = fs::remove_file(&path);
                return None;
            }
        };
        let modified = meta.modified().ok()?;
        if SystemTime::now()
            .duration_since(modified)
            .is_ok_and(|age| age > self.0.options.max_age)
        {
            tracing::debug!(entry = %path.display(), "model cache: too old, removed");
            let _ = fs::remove_file(&path);
            return None;
        }
        let exchange = crate::cassette::read_regular(&path, MAX_CASSETTE_BYTES)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Exchange>(&bytes).ok());
        let Some(mut exchange) = exchange.filter(usable) else {
            tracing::debug!(entry = %path.display(), "model cache: unreadable, removed");
            let _ = fs::remove_file(&path);
            return None;
        };
        // Kept by a run with other secrets (another key), it is blanked as this run
        // blanks the request.
        self.0.blanking.redact_request(&mut exchange.request);
        if exchange.request.connector != key.request.connector
            || exchange.request.endpoint != key.request.endpoint
            || exchange.request.body != key.request.body
            || exchange.request.sample != key.request.sample
        {
            tracing::debug!(entry = %path.display(), "model cache: another request's, a miss");
            return None;
        }
        // Used now: the last to go when the cache is over its cap.
        if let Ok(file) = fs::File::options().append(true).open(&path) {
            let _ = file.set_times(fs::FileTimes::new().set_accessed(SystemTime::now()));
        }
        tracing::debug!(entry = %path.display(), "model cache: answered from it");
        Some(exchange.response)
    }

    /// Keeps `response` as the answer to `key`, when it is a successful one that did
    /// not break off, blanked of the run's secrets; then removes the least recently used
    /// entries while the cache is over its cap. A failure to write is not an error: the
    /// entry is only not kept.
    pub fn store(&self, key: &CacheKey, response: RecordedResponse) {
        self.store_hiding(key, response, &Redactor::default());
    }

    /// [`ModelCache::store`], blanking the keys the request's headers carried too
    /// (`request_secrets`), even those the run does not know as its own.
    pub(crate) fn store_hiding(
        &self,
        key: &CacheKey,
        mut response: RecordedResponse,
        request_secrets: &Redactor,
    ) {
        if !(200..300).contains(&response.status) || response.broke_off.is_some() {
            tracing::debug!(
                status = response.status,
                "model cache: not kept (an error or a cut answer)"
            );
            return;
        }
        let mut request = key.request.clone();
        match redact::with_request(&self.0.options.secrets, request_secrets) {
            None => self.0.blanking.redact_response(&mut response),
            Some(all) => {
                let blanking = redact::blanking(&all);
                blanking.redact_request(&mut request);
                blanking.redact_response(&mut response);
            }
        }
        let exchange = Exchange {
            cassette_version: CASSETTE_VERSION,
            request,
            response,
            under: None,
        };
        if self.write(&key.hash, &exchange).is_err() {
            tracing::debug!(dir = %self.dir().display(), "model cache: the answer could not be written");
            return;
        }
        tracing::debug!(hash = %key.hash, "model cache: answer kept");
        self.trim();
    }

    fn path(&self, hash: &str) -> PathBuf {
        self.0.options.dir.join(format!("{hash}.json"))
    }

    /// Writes the entry to a temporary file beside it, then renames it into place. A
    /// folder made for it gets a `.gitignore` of everything: cached answers are never
    /// meant to be committed.
    fn write(&self, hash: &str, exchange: &Exchange) -> std::io::Result<()> {
        let dir = &self.0.options.dir;
        if !dir.is_dir() {
            fs::create_dir_all(dir)?;
            fs::write(dir.join(".gitignore"), "*\n")?;
        }
        let n = self.0.writes.fetch_add(1, Ordering::Relaxed);
        let temporary = dir.join(format!(".{hash}.{}.{n}.tmp", std::process::id()));
        let written = (|| {
            let mut file = fs::File::create(&temporary)?;
            file.write_all(&serde_json::to_vec(exchange)?)?;
            file.sync_all()?;
            fs::rename(&temporary, self.path(hash))
        })();
        if written.is_err() {
            let _ = fs::remove_file(&temporary);
        }
        written
    }

    /// Removes the least recently used entries while the total is over the cap.
    fn trim(&self) {
        let Ok(read) = fs::read_dir(&self.0.options.dir) else {
            return;
        };
        let mut entries: Vec<(SystemTime, u64, PathBuf)> = read
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                let used = meta.accessed().ok().max(meta.modified().ok())?;
                Some((used, meta.len(), e.path()))
            })
            .collect();
        let mut total: u64 = entries.iter().map(|(_, len, _)| len).sum();
        entries.sort();
        for (_, len, path) in entries {
            if total <= self.0.options.max_bytes {
                break;
            }
            if fs::remove_file(&path).is_ok() {
                total = total.saturating_sub(len);
            }
        }
    }
}

/// A live answer on its way into the cache: its chunks are gathered as it streams
/// ([`Pending::collect`]), and it is stored only when the caller, having read it whole
/// and found it a good answer, says [`Pending::keep`]. Dropped without that (a stream
/// that ended before its end, a body that was not an answer), nothing is stored.
#[derive(Debug, Default)]
pub struct Pending(Option<PendingEntry>);

#[derive(Debug)]
struct PendingEntry {
    cache: ModelCache,
    key: CacheKey,
    /// The keys the request's headers carried.
    secrets: Redactor,
    read: Arc<std::sync::Mutex<Option<RecordedResponse>>>,
}

impl Pending {
    /// An answer to `key` for `cache`, not yet read.
    pub fn new(cache: ModelCache, key: CacheKey) -> Pending {
        Pending(Some(PendingEntry {
            cache,
            key,
            secrets: Redactor::default(),
            read: Arc::default(),
        }))
    }

    /// Blanks `secrets` (the keys the request's headers carried) from the entry too.
    pub fn hiding(mut self, secrets: &Redactor) -> Pending {
        if let Some(entry) = &mut self.0 {
            entry.secrets.extend(secrets);
        }
        self
    }

    /// The callback that takes the answer as read (for [`crate::cassette::live::tee`]).
    pub fn collect(&self) -> Option<crate::cassette::live::OnDone> {
        let read = Arc::clone(&self.0.as_ref()?.read);
        Some(Box::new(move |response| {
            *read.lock().unwrap_or_else(|e| e.into_inner()) = Some(response);
        }))
    }

    /// Stores the answer as read, now that it proved a good one.
    pub fn keep(self) {
        let Some(entry) = self.0 else {
            return;
        };
        let read = entry.read.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(response) = read {
            entry
                .cache
                .store_hiding(&entry.key, response, &entry.secrets);
        }
    }
}

/// Whether an entry read back can answer: this format, a success, whole.
fn usable(exchange: &Exchange) -> bool {
    exchange.cassette_version == CASSETTE_VERSION
        && (200..300).contains(&exchange.response.status)
        && exchange.response.broke_off.is_none()
        && exchange.response.chunks.iter().all(|c| c.bytes().is_some())
}

/// Whether `body` asks for temperature 0 where its provider takes it: `temperature`,
/// `options.temperature` (Ollama) or `inferenceConfig.temperature` (Bedrock Converse).
pub fn temperature_zero(body: &Value) -> bool {
    [
        body.get("temperature"),
        body.get("options").and_then(|o| o.get("temperature")),
        body.get("inferenceConfig")
            .and_then(|o| o.get("temperature")),
    ]
    .into_iter()
    .flatten()
    .any(|t| t.as_f64() == Some(0.0))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::cassette::Chunk;

    const URL: &str = "http://127.0.0.1:1/v1/chat/completions";

    fn answer(text: &str) -> RecordedResponse {
        RecordedResponse {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks: vec![Chunk::new(3, text.as_bytes().to_vec())],
            broke_off: None,
        }
    }

    fn body(content: &str) -> Value {
        json!({"model": "m", "temperature": 0, "messages": [{"role": "user", "content": content}]})
    }

    fn cache(dir: &Path, max_bytes: u64) -> ModelCache {
        ModelCache::open(CacheOptions {
            max_bytes,
            ..CacheOptions::new(dir.join("models"))
        })
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir.join("models"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name != ".gitignore")
            .collect();
        names.sort();
        names
    }

    #[test]
    fn only_requests_at_temperature_zero_are_cached_wherever_the_provider_puts_it() {
        assert!(temperature_zero(&json!({"temperature": 0})));
        assert!(temperature_zero(&json!({"temperature": 0.0})));
        assert!(temperature_zero(&json!({"options": {"temperature": 0}})));
        assert!(temperature_zero(
            &json!({"inferenceConfig": {"temperature": 0.0}})
        ));
        assert!(!temperature_zero(&json!({"temperature": 0.7})));
        assert!(!temperature_zero(&json!({"options": {"temperature": 1}})));
        assert!(!temperature_zero(&json!({"model": "m"})));
        assert!(!temperature_zero(&json!({"temperature": "0"})));
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path(), DEFAULT_MAX_BYTES);
        assert!(
            cache
                .key("openai", URL, &json!({"model": "m"}), None)
                .is_none()
        );
    }

    #[test]
    fn an_answer_stored_is_found_by_the_same_request_on_any_host_and_not_by_another() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path(), DEFAULT_MAX_BYTES);
        let key = cache.key("openai", URL, &body("hi"), None).unwrap();
        assert_eq!(cache.lookup(&key), None);
        cache.store(&key, answer("{\"a\":1}"));
        let elsewhere = "https://other.example/v1/chat/completions";
        let again = cache.key("openai", elsewhere, &body("hi"), None).unwrap();
        assert_eq!(again.hash, key.hash);
        assert_eq!(cache.lookup(&again), Some(answer("{\"a\":1}")));
        let other = cache.key("openai", URL, &body("bye"), None).unwrap();
        assert_ne!(other.hash, key.hash);
        assert_eq!(cache.lookup(&other), None);
        let anthropic = cache.key("anthropic", URL, &body("hi"), None).unwrap();
        assert_eq!(cache.lookup(&anthropic), None);
        let second_sample = cache.key("openai", URL, &body("hi"), Some(1)).unwrap();
        assert_ne!(second_sample.hash, key.hash);
        assert_eq!(cache.lookup(&second_sample), None);
        // Written whole then renamed: no temporary file is left behind.
        assert_eq!(entries(dir.path()), vec![format!("{}.json", key.hash)]);
    }

    #[test]
    fn errors_and_broken_streams_are_never_stored() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path(), DEFAULT_MAX_BYTES);
        let key = cache.key("openai", URL, &body("hi"), None).unwrap();
        cache.store(
            &key,
            RecordedResponse {
                status: 429,
                ..answer("slow down")
            },
        );
        cache.store(
            &key,
            RecordedResponse {
                broke_off: Some("connection reset".into()),
                ..answer("data: {")
            },
        );
        assert_eq!(cache.lookup(&key), None);
        assert!(!dir.path().join("models").exists());
    }

    #[test]
    fn a_corrupt_entry_is_a_miss_and_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path(), DEFAULT_MAX_BYTES);
        let key = cache.key("openai", URL, &body("hi"), None).unwrap();
        cache.store(&key, answer("{}"));
        let path = cache.path(&key.hash);
        let whole = fs::read(&path).unwrap();
        fs::write(&path, &whole[..whole.len() / 2]).unwrap();
        assert_eq!(cache.lookup(&key), None);
        assert!(!path.exists());
        cache.store(&key, answer("{}"));
        assert!(cache.lookup(&key).is_some());
    }

    #[test]
    fn an_entry_past_the_age_limit_is_a_miss_and_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ModelCache::open(CacheOptions {
            max_age: Duration::from_secs(3600),
            ..CacheOptions::new(dir.path().join("models"))
        });
        let key = cache.key("openai", URL, &body("hi"), None).unwrap();
        cache.store(&key, answer("{}"));
        assert!(cache.lookup(&key).is_some());
        let path = cache.path(&key.hash);
        let file = fs::File::options().append(true).open(&path).unwrap();
        let old = SystemTime::now() - Duration::from_secs(7200);
        file.set_modified(old).unwrap();
        assert_eq!(cache.lookup(&key), None);
        assert!(!path.exists());
    }

    #[test]
    fn over_the_cap_the_least_recently_used_entries_go_first() {
        let dir = tempfile::tempdir().unwrap();
        let probe = cache(dir.path(), DEFAULT_MAX_BYTES);
        let key = |text: &str| probe.key("openai", URL, &body(text), None).unwrap();
        probe.store(&key("size"), answer("x"));
        let one = fs::metadata(probe.path(&key("size").hash)).unwrap().len();
        fs::remove_file(probe.path(&key("size").hash)).unwrap();
        // Room for two entries, not three.
        let cache = cache(dir.path(), one * 2 + one / 2);
        let set_used = |k: &CacheKey, ago: u64| {
            let file = fs::File::options()
                .append(true)
                .open(cache.path(&k.hash))
                .unwrap();
            let at = SystemTime::now() - Duration::from_secs(ago);
            file.set_times(fs::FileTimes::new().set_accessed(at).set_modified(at))
                .unwrap();
        };
        cache.store(&key("a"), answer("x"));
        set_used(&key("a"), 300);
        cache.store(&key("b"), answer("x"));
        set_used(&key("b"), 200);
        // `a` is used again: `b` is now the least recently used.
        assert!(cache.lookup(&key("a")).is_some());
        cache.store(&key("c"), answer("x"));
        assert!(cache.lookup(&key("a")).is_some());
        assert_eq!(cache.lookup(&key("b")), None);
        assert!(cache.lookup(&key("c")).is_some());
    }

    #[test]
    fn a_live_answer_is_kept_only_when_the_caller_found_it_good() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path(), DEFAULT_MAX_BYTES);
        let key = cache.key("openai", URL, &body("hi"), None).unwrap();
        let dropped = Pending::new(cache.clone(), key.clone());
        (dropped.collect().unwrap())(answer("data: {\"choices\": [\n\n"));
        drop(dropped);
        assert_eq!(cache.lookup(&key), None);
        let good = Pending::new(cache.clone(), key.clone());
        (good.collect().unwrap())(answer("{}"));
        good.keep();
        assert_eq!(cache.lookup(&key), Some(answer("{}")));
        assert!(Pending::default().collect().is_none());
    }

    /// `cache.lookup(key)`, which must come within a second: run on a thread of its
    /// own, so that a read that blocks fails the test rather than hangs it.
    fn looked_up_at_once(cache: &ModelCache, key: &CacheKey) -> Option<RecordedResponse> {
        let (cache, key) = (cache.clone(), key.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(cache.lookup(&key));
        });
        rx.recv_timeout(Duration::from_secs(1))
            .expect("the entry was neither read nor skipped within a second")
    }

    #[cfg(unix)]
    #[test]
    fn an_entry_that_is_not_a_regular_file_or_too_large_is_a_miss_never_read() {
        let dir = tempfile::tempdir().unwrap();
        // Never too old: only what the entry is decides.
        let cache = ModelCache::open(CacheOptions {
            max_age: Duration::from_secs(100 * 365 * 24 * 60 * 60),
            ..CacheOptions::new(dir.path().join("models"))
        });
        let key = cache.key("openai", URL, &body("hi"), None).unwrap();
        let path = cache.path(&key.hash);
        fs::create_dir_all(cache.dir()).unwrap();
        // A link to a device: read, it would never end.
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        assert_eq!(looked_up_at_once(&cache, &key), None);
        assert!(fs::symlink_metadata(&path).is_err(), "left in place");
        // A named pipe: opened, it would block.
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        assert_eq!(looked_up_at_once(&cache, &key), None);
        assert!(fs::symlink_metadata(&path).is_err(), "left in place");
        // Larger than any entry may be: skipped by its size.
        let huge = fs::File::create(&path).unwrap();
        huge.set_len(MAX_CASSETTE_BYTES + 1).unwrap();
        assert_eq!(looked_up_at_once(&cache, &key), None);
        // The cache keeps answers there again.
        cache.store(&key, answer("{}"));
        assert_eq!(looked_up_at_once(&cache, &key), Some(answer("{}")));
    }

    #[test]
    fn an_entry_holds_no_secret_and_requests_that_differ_in_one_stay_apart() {
        let dir = tempfile::tempdir().unwrap();
        let mut secrets = Redactor::default();
        secrets.secret("${OPENAI_API_KEY}", "sk-proj-Hq7Tw2Lm9Vc4Rb8Nf3Zx9Q");
        secrets.secret("${MY_TOKEN}", "tok-distinctive-6a1f0e");
        secrets.secret("${OTHER_TOKEN}", "tok-distinctive-93bd2c");
        let cache = ModelCache::open(CacheOptions {
            secrets,
            ..CacheOptions::new(dir.path().join("models"))
        });
        let key = cache
            .key("openai", URL, &body("say tok-distinctive-6a1f0e"), None)
            .unwrap();
        cache.store(
            &key,
            answer("tok-distinctive-6a1f0e, and sk-proj-****...Zx9Q was refused"),
        );
        let kept = fs::read_to_string(cache.path(&key.hash)).unwrap();
        for fragment in ["tok-distinctive-6a1f0e", "sk-proj-", "Zx9Q"] {
            assert!(!kept.contains(fragment), "{fragment} in {kept}");
        }
        assert!(!format!("{key:?}").contains("tok-distinctive"));
        assert_eq!(
            cache.lookup(&key),
            Some(answer(
                "<redacted>, and <redacted>****...<redacted> was refused"
            ))
        );
        let other = cache
            .key("openai", URL, &body("say tok-distinctive-93bd2c"), None)
            .unwrap();
        // Blanked alike, they are still two requests.
        assert_eq!(other.request, key.request);
        assert_ne!(other.hash, key.hash);
        assert_eq!(cache.lookup(&other), None);
    }

    #[test]
    fn concurrent_stores_of_one_request_never_leave_half_an_entry() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path(), DEFAULT_MAX_BYTES);
        let key = cache.key("openai", URL, &body("hi"), None).unwrap();
        let big = "y".repeat(200_000);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..5 {
                        cache.store(&key, answer(&big));
                        if let Some(found) = cache.lookup(&key) {
                            assert_eq!(found, answer(&big));
                        }
                    }
                });
            }
        });
        assert_eq!(cache.lookup(&key), Some(answer(&big)));
        assert_eq!(entries(dir.path()).len(), 1);
    }
}
