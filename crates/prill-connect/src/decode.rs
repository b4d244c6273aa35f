//! [`LineDecoder`]: JSON lines, decoded as the bytes arrive.
//!
//! neuro-san streams one `ChatResponse` per line but does not promise only one per line
//! (`chat.proto`: "We cannot yet guarantee that there will be only one streamed response
//! per HTTP response line"). The decoder therefore splits strictly on `\n`, reads every
//! JSON value on a line, skips blank lines, and at the end parses a last line that has
//! no `\n`. It holds only the current unfinished line, never the whole body, and counts
//! every byte against a cap.

use serde_json::Value;

use crate::error::cut;

/// The default cap on a response body: 32 MiB.
pub const DEFAULT_MAX_BODY_BYTES: u64 = 32 * 1024 * 1024;

/// Why the bytes could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// A line is not JSON.
    Malformed {
        /// The line, counting from 1.
        line: usize,
        /// Whether it is the last line, cut short by the end of the stream.
        unterminated: bool,
        /// What the JSON parser said.
        reason: String,
        /// The start of the line.
        excerpt: String,
    },
    /// More bytes arrived than the cap allows.
    TooLarge {
        /// The cap, in bytes.
        limit: u64,
    },
}

impl DecodeError {
    /// What went wrong, lowercase, as a protocol error's message.
    pub fn message(&self) -> String {
        match self {
            DecodeError::Malformed {
                line,
                unterminated: false,
                reason,
                excerpt,
            } => format!("line {line} is not JSON ({reason}): {excerpt}"),
            DecodeError::Malformed {
                line,
                unterminated: true,
                reason,
                excerpt,
            } => format!(
                "the stream ended in the middle of line {line}, which is not JSON ({reason}): {excerpt}"
            ),
            DecodeError::TooLarge { limit } => {
                format!("more than {} arrived", crate::error::bytes(*limit))
            }
        }
    }
}

/// Splits a byte stream into lines and each line into JSON values.
///
/// ```
/// use prill_connect::decode::LineDecoder;
///
/// use serde_json::json;
///
/// let mut decoder = LineDecoder::new(1024);
/// // Nothing comes out until a line ends.
/// assert!(decoder.feed(b"{\"a\": 1}{\"b\"").unwrap().is_empty());
/// // Two values on one line, then a blank line.
/// assert_eq!(
///     decoder.feed(b": 2}\n\n{\"c\": 3}").unwrap(),
///     vec![json!({"a": 1}), json!({"b": 2})]
/// );
/// // The last line needs no `\n`.
/// assert_eq!(decoder.finish().unwrap(), vec![json!({"c": 3})]);
/// ```
#[derive(Debug, Clone)]
pub struct LineDecoder {
    /// The bytes of the line not yet ended.
    pending: Vec<u8>,
    /// Bytes received so far.
    received: u64,
    /// The cap on `received`.
    limit: u64,
    /// Lines ended so far.
    lines: usize,
}

impl LineDecoder {
    /// A decoder that accepts at most `limit` bytes in all.
    pub fn new(limit: u64) -> LineDecoder {
        LineDecoder {
            pending: Vec::new(),
            received: 0,
            limit,
            lines: 0,
        }
    }

    /// How many bytes were fed so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Feeds the next chunk; returns the values of every line it completed, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<Value>, DecodeError> {
        self.received = self.received.saturating_add(chunk.len() as u64);
        if self.received > self.limit {
            return Err(DecodeError::TooLarge { limit: self.limit });
        }
        let mut values = Vec::new();
        let mut rest = chunk;
        while let Some(at) = rest.iter().position(|&b| b == b'\n') {
            let (head, tail) = rest.split_at(at);
            self.lines += 1;
            if self.pending.is_empty() {
                parse_line(head, self.lines, false, &mut values)?;
            } else {
                self.pending.extend_from_slice(head);
                let line = std::mem::take(&mut self.pending);
                parse_line(&line, self.lines, false, &mut values)?;
            }
            rest = &tail[1..];
        }
        self.pending.extend_from_slice(rest);
        Ok(values)
    }

    /// Ends the stream: parses a last line that had no `\n`.
    pub fn finish(self) -> Result<Vec<Value>, DecodeError> {
        let mut values = Vec::new();
        parse_line(&self.pending, self.lines + 1, true, &mut values)?;
        Ok(values)
    }
}

/// Every JSON value on one line (none on a blank line).
pub fn values_of_line(line: &[u8]) -> Result<Vec<Value>, serde_json::Error> {
    serde_json::Deserializer::from_slice(line)
        .into_iter::<Value>()
        .collect()
}

/// Parses every JSON value on one line (none on a blank line).
fn parse_line(
    line: &[u8],
    number: usize,
    unterminated: bool,
    out: &mut Vec<Value>,
) -> Result<(), DecodeError> {
    for value in serde_json::Deserializer::from_slice(line).into_iter::<Value>() {
        match value {
            Ok(value) => out.push(value),
            Err(e) => {
                return Err(DecodeError::Malformed {
                    line: number,
                    unterminated,
                    reason: e.to_string(),
                    excerpt: cut(String::from_utf8_lossy(line).trim(), 120),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const STREAM: &[u8] = b"{\"response\": {\"type\": \"AI\", \"text\": \"h\\u00e9\"}}\n\
\n\
{\"response\": {\"type\": \"AGENT_PROGRESS\", \"text\": \"\"}}{\"a\": [1, 2]}\r\n\
   \n\
{\"response\": {\"type\": \"AGENT_FRAMEWORK\", \"text\": \"done\", \"chat_context\": {}}}";

    fn expected() -> Vec<Value> {
        vec![
            json!({"response": {"type": "AI", "text": "hé"}}),
            json!({"response": {"type": "AGENT_PROGRESS", "text": ""}}),
            json!({"a": [1, 2]}),
            json!({"response": {"type": "AGENT_FRAMEWORK", "text": "done", "chat_context": {}}}),
        ]
    }

    fn decode_in(chunks: &[&[u8]]) -> Result<Vec<Value>, DecodeError> {
        let mut decoder = LineDecoder::new(DEFAULT_MAX_BODY_BYTES);
        let mut out = Vec::new();
        for chunk in chunks {
            out.extend(decoder.feed(chunk)?);
        }
        out.extend(decoder.finish()?);
        Ok(out)
    }

    #[test]
    fn whole_stream_at_once() {
        assert_eq!(decode_in(&[STREAM]).unwrap(), expected());
    }

    #[test]
    fn split_at_every_byte_boundary() {
        for at in 0..=STREAM.len() {
            let (a, b) = STREAM.split_at(at);
            assert_eq!(decode_in(&[a, b]).unwrap(), expected(), "split at {at}");
        }
    }

    #[test]
    fn one_byte_at_a_time() {
        let chunks: Vec<&[u8]> = STREAM.chunks(1).collect();
        assert_eq!(decode_in(&chunks).unwrap(), expected());
    }

    #[test]
    fn split_inside_a_multibyte_character() {
        let text = "{\"t\": \"日本\"}\n".as_bytes();
        for at in 0..=text.len() {
            let (a, b) = text.split_at(at);
            assert_eq!(decode_in(&[a, b]).unwrap(), vec![json!({"t": "日本"})]);
        }
    }

    #[test]
    fn values_come_out_as_soon_as_their_line_ends() {
        let mut decoder = LineDecoder::new(1024);
        assert!(decoder.feed(b"{\"a\": 1}").unwrap().is_empty());
        assert_eq!(decoder.feed(b"\n{").unwrap(), vec![json!({"a": 1})]);
        assert!(decoder.feed(b"\"b\": 2}").unwrap().is_empty());
        assert_eq!(decoder.finish().unwrap(), vec![json!({"b": 2})]);
    }

    #[test]
    fn empty_and_blank_streams_hold_nothing() {
        assert!(decode_in(&[]).unwrap().is_empty());
        assert!(decode_in(&[b"\n\n  \r\n"]).unwrap().is_empty());
        assert_eq!(decode_in(&[b"{}\n"]).unwrap(), vec![json!({})]);
    }

    #[test]
    fn malformed_line_names_its_number() {
        let err = decode_in(&[b"{\"a\": 1}\n\nnot json\n{\"b\": 2}\n"]).unwrap_err();
        let DecodeError::Malformed {
            line,
            unterminated,
            excerpt,
            ..
        } = &err
        else {
            panic!("{err:?}");
        };
        assert_eq!((*line, *unterminated), (3, false));
        assert_eq!(excerpt, "not json");
        assert!(
            err.message().starts_with("line 3 is not JSON"),
            "{}",
            err.message()
        );
    }

    #[test]
    fn trailing_garbage_after_a_value_is_malformed() {
        assert!(decode_in(&[b"{\"a\": 1} x\n"]).is_err());
    }

    #[test]
    fn stream_cut_mid_line() {
        let err = decode_in(&[b"{\"a\": 1}\n{\"b\": "]).unwrap_err();
        assert!(
            matches!(
                err,
                DecodeError::Malformed {
                    line: 2,
                    unterminated: true,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.message().contains("ended in the middle of line 2"));
    }

    #[test]
    fn size_cap_counts_every_byte() {
        let mut decoder = LineDecoder::new(10);
        assert!(decoder.feed(b"{}\n{}\n").is_ok());
        assert_eq!(decoder.received(), 6);
        assert!(decoder.feed(b"1234").is_ok());
        assert_eq!(decoder.feed(b"5"), Err(DecodeError::TooLarge { limit: 10 }));
        // One long line with no newline is caught too.
        let mut decoder = LineDecoder::new(10);
        assert!(decoder.feed(&[b' '; 11]).is_err());
    }
}
