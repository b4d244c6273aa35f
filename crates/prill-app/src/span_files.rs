//! Spans that agents write to files (`[otel] span_files`), as OTLP JSON lines: one
//! `ExportTraceServiceRequest` a line, OpenTelemetry's OTLP file format. Each file is
//! read from where it ended when the run started, every 50 ms, and each complete line
//! is filed in the run's inbox as if it had been posted to the receiver.
//!
//! A line longer than [`MAX_LINE_BYTES`] is skipped whole, as is a line that is not
//! OTLP JSON (with a warning in the log); a file that shrinks (truncated, or replaced)
//! is read again from its start. A file that does not exist yet is read once it does.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prill_target::otel::SpanInbox;
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tokio::task::JoinHandle;

/// The longest line read: as large as a request body the receiver takes.
pub(crate) const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How often the files are read.
const POLL: Duration = Duration::from_millis(50);

/// The most read from a file at one time.
const CHUNK: u64 = 4 * 1024 * 1024;

/// One file, and how far it has been read.
struct Followed {
    path: PathBuf,
    offset: u64,
    partial: Vec<u8>,
    /// In the middle of a line that was too long: drop up to its end.
    skipping: bool,
}

/// Reads `paths` into `inbox` until the task is aborted.
pub(crate) fn follow(paths: Vec<PathBuf>, inbox: Arc<SpanInbox>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut files = Vec::new();
        for path in paths {
            let offset = tokio::fs::metadata(&path).await.map_or(0, |m| m.len());
            files.push(Followed {
                path,
                offset,
                partial: Vec::new(),
                skipping: false,
            });
        }
        loop {
            for file in &mut files {
                file.read_new(&inbox).await;
            }
            tokio::time::sleep(POLL).await;
        }
    })
}

impl Followed {
    async fn read_new(&mut self, inbox: &SpanInbox) {
        let Ok(meta) = tokio::fs::metadata(&self.path).await else {
            return;
        };
        if meta.len() < self.offset {
            self.offset = 0;
            self.partial.clear();
            self.skipping = false;
        }
        while meta.len() > self.offset {
            let Ok(mut file) = tokio::fs::File::open(&self.path).await else {
                return;
            };
            if file
                .seek(std::io::SeekFrom::Start(self.offset))
                .await
                .is_err()
            {
                return;
            }
            let want = (meta.len() - self.offset).min(CHUNK);
            let mut bytes = Vec::new();
            match file.take(want).read_to_end(&mut bytes).await {
                Ok(0) | Err(_) => return,
                Ok(n) => self.offset += n as u64,
            }
            self.take_lines(&bytes, inbox);
        }
    }

    /// Files every complete line of `bytes` (after what came before them).
    fn take_lines(&mut self, bytes: &[u8], inbox: &SpanInbox) {
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let (line, after) = rest.split_at(end);
            rest = &after[1..];
            if std::mem::take(&mut self.skipping) {
                continue;
            }
            self.partial.extend_from_slice(line);
            let whole = std::mem::take(&mut self.partial);
            self.file_line(&whole, inbox);
        }
        if self.skipping {
            return;
        }
        self.partial.extend_from_slice(rest);
        if self.partial.len() > MAX_LINE_BYTES {
            tracing::warn!(file = %self.path.display(), "a span line longer than 16 MiB is skipped");
            self.partial = Vec::new();
            self.skipping = true;
        }
    }

    fn file_line(&self, line: &[u8], inbox: &SpanInbox) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        match serde_json::from_slice::<ExportTraceServiceRequest>(line) {
            Ok(batch) => {
                for (trace, spans) in prill_demo::otlp::spans_of(batch) {
                    inbox.file(trace, spans);
                }
            }
            Err(error) => {
                tracing::warn!(file = %self.path.display(), %error, "a line that is not OTLP JSON is skipped");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(parent: &str) -> String {
        format!(
            "{{\"resourceSpans\":[{{\"scopeSpans\":[{{\"spans\":[{{\"traceId\":\"{}\",\"spanId\":\"00000000000000aa\",\"parentSpanId\":\"{parent}\",\"name\":\"x\"}}]}}]}}]}}\n",
            "01".repeat(16)
        )
    }

    fn followed() -> Followed {
        Followed {
            path: PathBuf::from("spans.jsonl"),
            offset: 0,
            partial: Vec::new(),
            skipping: false,
        }
    }

    fn held(inbox: &SpanInbox, parent: [u8; 8]) -> usize {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let parent = prill_target::otel::TraceParent {
            trace: [1; 16],
            span: parent,
        };
        rt.block_on(inbox.take(parent, Duration::from_millis(1)))
            .map_or(0, |s| s.len())
    }

    #[test]
    fn a_line_split_across_reads_is_filed_once_whole() {
        let inbox = SpanInbox::new([1; 16]);
        let mut file = followed();
        let text = line("0000000000000001");
        let (a, b) = text.as_bytes().split_at(30);
        file.take_lines(a, &inbox);
        assert_eq!(held(&inbox, [0, 0, 0, 0, 0, 0, 0, 1]), 0);
        file.take_lines(b, &inbox);
        assert_eq!(held(&inbox, [0, 0, 0, 0, 0, 0, 0, 1]), 1);
    }

    #[test]
    fn a_line_too_long_and_a_line_that_is_not_otlp_are_skipped() {
        let inbox = SpanInbox::new([1; 16]);
        let mut file = followed();
        file.take_lines(&vec![b'x'; MAX_LINE_BYTES + 1], &inbox);
        assert!(file.skipping && file.partial.is_empty());
        file.take_lines(b"still the long line\nnot json\n", &inbox);
        file.take_lines(line("0000000000000002").as_bytes(), &inbox);
        assert_eq!(held(&inbox, [0, 0, 0, 0, 0, 0, 0, 2]), 1);
    }
}
