//! [`SseDecoder`]: a `text/event-stream` body split into [`SseEvent`]s as it arrives,
//! by the rules of the HTML Living Standard ("Interpreting an event stream", 9.2.6).
//!
//! The stream is UTF-8, a byte order mark opening it is dropped (once, at its start
//! only), and bytes that are not UTF-8 read as U+FFFD. Lines end with `\r\n`, `\n` or
//! `\r`, wherever the chunks split them (a `\r` ending one chunk and a `\n` opening the
//! next end one line). A line opening with `:` is a comment; any other is split at its
//! first `:` into a field and a value, which loses one space opening it (a line with no
//! `:` is a field with an empty value). `event` sets the event type, `data` adds its
//! value and a `\n` to the data, `id` sets the last event ID (unless the value holds a
//! U+0000), which holds for every later event until another `id` changes it, `retry`
//! sets the reconnection time when its value is ASCII digits, and any other field is
//! ignored. A blank line dispatches the event: none when the data is empty, else one
//! with the data less its last `\n`, the event type, and the last event ID; the data
//! and the event type start again empty either way.
//!
//! The end of the stream dispatches nothing: the spec discards an event (or a line) the
//! stream did not end. [`SseDecoder::finish`] hands that rest back for the caller to
//! report, since for Prill a stream that ends mid-event is an answer cut short.
//!
//! The decoder takes at most its limit of bytes in all, so the line and the event it
//! holds never pass it: hostile input is refused in bounded memory.

use std::borrow::Cow;
use std::time::Duration;

/// The UTF-8 byte order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The event type its `event` field named; `None` when it named none, or an empty
    /// one: the spec's `message` ([`SseEvent::kind`]).
    pub event: Option<String>,
    /// The values of its `data` fields, joined with `\n`.
    pub data: String,
    /// The last event ID when it was dispatched (the spec's `lastEventId`): the value of
    /// the latest `id` field so far, this event's or an earlier one's; empty when there
    /// was none, or the latest had no value.
    pub id: String,
}

impl SseEvent {
    /// The event's type: the `event` field's value, else `message`.
    pub fn kind(&self) -> &str {
        self.event.as_deref().unwrap_or("message")
    }
}

/// Splits a server-sent event stream into events as it arrives (the module's doc says
/// by which rules), within a cap on the bytes it takes.
#[derive(Debug, Clone)]
pub struct SseDecoder {
    /// The line not yet ended, as bytes (a UTF-8 character may be split by a chunk).
    line: Vec<u8>,
    /// The spec's event type buffer.
    event_type: String,
    /// The spec's data buffer: every `data` value with a `\n` after it.
    data: String,
    /// The spec's last event ID buffer: it is not reset when an event is dispatched.
    last_event_id: String,
    /// The last valid `retry` field's value.
    reconnection_time: Option<Duration>,
    received: u64,
    limit: u64,
    /// The last chunk ended in `\r`: a `\n` opening the next one belongs to it.
    after_cr: bool,
    /// No line has ended yet: a byte order mark opening the first one is dropped.
    at_start: bool,
}

impl SseDecoder {
    /// A decoder that accepts at most `limit` bytes in all.
    pub fn new(limit: u64) -> SseDecoder {
        SseDecoder {
            line: Vec::new(),
            event_type: String::new(),
            data: String::new(),
            last_event_id: String::new(),
            reconnection_time: None,
            received: 0,
            limit,
            after_cr: false,
            at_start: true,
        }
    }

    /// The bytes fed so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// The last event ID so far: the value of the latest `id` field (empty when there
    /// was none, or it had no value).
    pub fn last_event_id(&self) -> &str {
        &self.last_event_id
    }

    /// The reconnection time the latest valid `retry` field asked for, if any: a value
    /// of ASCII digits only, in milliseconds; an empty one, any other, or one too large
    /// for a `u64` is ignored.
    pub fn reconnection_time(&self) -> Option<Duration> {
        self.reconnection_time
    }

    /// Feeds the next chunk; returns every event it completed, in order. `None` means the
    /// stream is over the size cap.
    pub fn feed(&mut self, chunk: &[u8]) -> Option<Vec<SseEvent>> {
        self.received = self.received.saturating_add(chunk.len() as u64);
        if self.received > self.limit {
            return None;
        }
        let mut events = Vec::new();
        let mut rest = chunk;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            // A `\n` right after a `\r` ends no second line.
            rest = rest.strip_prefix(b"\n").unwrap_or(rest);
        }
        while let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&rest[..end]);
            let cr = rest[end] == b'\r';
            rest = &rest[end + 1..];
            if cr {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            // The line's buffer is kept for the next line.
            let mut line = std::mem::take(&mut self.line);
            if let Some(event) = self.end_line(&line) {
                events.push(event);
            }
            line.clear();
            self.line = line;
        }
        self.line.extend_from_slice(rest);
        Some(events)
    }

    /// Ends the stream, which dispatches nothing. What the stream left after its last
    /// blank line, a line it did not end or an event it did not end with a blank line,
    /// is discarded; it is returned, as far as it got (the unended line read as a line),
    /// only so that the caller can tell that the stream ended mid-event. `None`: it
    /// ended between events.
    ///
    /// A rest is never an event of the stream: it must not be read as one.
    pub fn finish(mut self) -> Option<SseEvent> {
        let line = std::mem::take(&mut self.line);
        let line = self.without_bom(&line);
        let cut_line = !line.is_empty();
        if cut_line {
            self.field(line);
        }
        if !cut_line && self.data.is_empty() && self.event_type.is_empty() {
            return None;
        }
        let mut data = self.data;
        if data.ends_with('\n') {
            data.pop();
        }
        Some(SseEvent {
            event: (!self.event_type.is_empty()).then_some(self.event_type),
            data,
            id: self.last_event_id,
        })
    }

    /// `line` less the byte order mark that opens it when it is the stream's first.
    fn without_bom<'a>(&mut self, line: &'a [u8]) -> &'a [u8] {
        if !std::mem::replace(&mut self.at_start, false) {
            return line;
        }
        line.strip_prefix(BOM).unwrap_or(line)
    }

    /// Takes in one ended line; returns the event a blank line dispatched.
    fn end_line(&mut self, line: &[u8]) -> Option<SseEvent> {
        let line = self.without_bom(line);
        if line.is_empty() {
            return self.dispatch();
        }
        self.field(line);
        None
    }

    /// Takes in a line that is not blank: a comment or a field.
    fn field(&mut self, line: &[u8]) {
        // Valid UTF-8 (every line a provider sends) is checked by the fast validator;
        // only a broken line takes the slower lossy path.
        let line = match std::str::from_utf8(line) {
            Ok(line) => Cow::Borrowed(line),
            Err(_) => String::from_utf8_lossy(line),
        };
        if line.starts_with(':') {
            return;
        }
        let (name, value) = match line.split_once(':') {
            Some((name, value)) => (name, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match name {
            "event" => value.clone_into(&mut self.event_type),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
            }
            "id" if !value.contains('\0') => value.clone_into(&mut self.last_event_id),
            "retry" => {
                if let Some(ms) = milliseconds(value) {
                    self.reconnection_time = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
    }

    /// The blank line's step: the event the buffers hold, unless its data is empty; the
    /// data and the event type start again either way, the last event ID stays.
    fn dispatch(&mut self) -> Option<SseEvent> {
        let event_type = std::mem::take(&mut self.event_type);
        if self.data.is_empty() {
            return None;
        }
        let mut data = std::mem::take(&mut self.data);
        // Not empty: every `data` field added a `\n`.
        data.pop();
        Some(SseEvent {
            event: (!event_type.is_empty()).then_some(event_type),
            data,
            id: self.last_event_id.clone(),
        })
    }
}

/// A `retry` field's value as milliseconds: ASCII digits only, and within a `u64`.
fn milliseconds(value: &str) -> Option<u64> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok()
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
