//! Fuzz entry points for the stream decoders: neuro-san's JSON lines (through the
//! collector that picks the answer) and server-sent events, fed in chunks whose sizes
//! the input's first byte chooses, so that splits at every place get tried.

use prill_connect::decode::LineDecoder;
use prill_connect::provider::transport::SseDecoder;
use prill_connect::wire::Collector;

/// The cap the decoders get: small, so that the cap's own path is reached too.
const LIMIT: u64 = 64 * 1024;

/// `data` minus its first byte, in chunks of that byte's size (at least 1).
fn chunks(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let (size, rest) = match data.split_first() {
        Some((&first, rest)) => (usize::from(first % 64) + 1, rest),
        None => (1, data),
    };
    rest.chunks(size)
}

/// A neuro-san streaming-chat body.
pub fn jsonl(data: &[u8]) {
    let mut decoder = LineDecoder::new(LIMIT);
    let mut collector = Collector::default();
    for chunk in chunks(data) {
        match decoder.feed(chunk) {
            Ok(values) => {
                for value in values {
                    let _ = collector.accept_line(value);
                }
            }
            Err(e) => {
                assert!(!e.message().is_empty());
                return;
            }
        }
    }
    if let Ok(values) = decoder.finish() {
        for value in values {
            let _ = collector.accept_line(value);
        }
    }
    let _ = collector.finish(Default::default());
}

/// A server-sent event stream (OpenAI-compatible and Anthropic providers), each
/// event's data read as JSON as the providers do.
pub fn sse(data: &[u8]) {
    let mut decoder = SseDecoder::new(LIMIT);
    let mut events = Vec::new();
    for chunk in chunks(data) {
        match decoder.feed(chunk) {
            Some(mut more) => events.append(&mut more),
            None => return,
        }
    }
    events.extend(decoder.finish());
    for event in events {
        let _ = serde_json::from_str::<serde_json::Value>(&event.data);
    }
}
