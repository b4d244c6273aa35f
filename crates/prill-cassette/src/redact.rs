//! Blanking the run's secrets out of every byte a cassette keeps: [`Redact`], the
//! redaction a [`crate::Normalizer`] is given, and how it reaches a response's chunks.
//!
//! This crate does not decide what is secret: Prill gives its normalizers the run's one
//! redaction (`prill_spec`'s `Redactor`, through `prill-connect`), the same that blanks
//! every report: keys whole and in part (`sk-proj-****...Zx9Q`, as a provider quotes a
//! key it refused), and the values `${VAR}` put into test files.
//!
//! A response is kept as the chunks it streamed in, and a secret may arrive split
//! between two of them (a JSON body read in several pieces). Each split is looked at
//! with [`Redact::reach`] bytes on either side: where blanking the two sides apart is
//! not blanking them together, the chunks around the split are joined into one (at the
//! time of the later), so that the secret is blanked whole. A binary chunk (Bedrock's
//! event stream) in which a secret shows is kept as its text with the secret blanked:
//! its replay then errors, never leaks.

use crate::format::Chunk;

/// How the run's secrets are blanked in what a cassette keeps.
pub trait Redact: Send + Sync {
    /// Blanks every secret in `text`.
    fn redact(&self, text: &mut String);

    /// The most bytes one blanked secret spans (0 when there is nothing to blank): how
    /// far from a split between two chunks a secret the split cuts can reach.
    fn reach(&self) -> usize;
}

/// `text` blanked by `redact`.
pub(crate) fn redacted(redact: &dyn Redact, text: &str) -> String {
    let mut out = text.to_owned();
    redact.redact(&mut out);
    out
}

/// Context kept on either side of a split beyond [`Redact::reach`]: a partly quoted key
/// is blanked only at the start or end of a word, so the characters next to it count.
const MARGIN: usize = 8;

/// `chunks` with every secret blanked, a secret split between chunks included.
pub(crate) fn chunks(redact: &dyn Redact, chunks: Vec<Chunk>) -> Vec<Chunk> {
    let reach = redact.reach();
    if reach == 0 || chunks.is_empty() {
        return chunks;
    }
    let window = reach.saturating_add(MARGIN);
    let mut out: Vec<Chunk> = Vec::with_capacity(chunks.len());
    // The chunks not yet blanked, as bytes: each a piece of the stream at its time.
    let mut groups: Vec<(u64, Vec<u8>)> = Vec::new();
    for chunk in chunks {
        let Some(bytes) = chunk.bytes() else {
            // Base64 that does not decode (an edited cassette): kept as it is, and never
            // joined to its neighbours.
            flush(redact, &mut groups, &mut out);
            out.push(chunk);
            continue;
        };
        let at_ms = chunk.at_ms;
        if !groups.is_empty() && straddles(redact, &groups, &bytes, window) {
            // Join this chunk with as many of those before it as the window reaches
            // into, at this chunk's time: all its bytes had arrived by then.
            let mut joined: Vec<u8> = Vec::new();
            let mut taken = 0;
            while taken < window {
                let Some((_, earlier)) = groups.pop() else {
                    break;
                };
                taken += earlier.len();
                joined.splice(0..0, earlier);
            }
            joined.extend_from_slice(&bytes);
            groups.push((at_ms, joined));
        } else {
            groups.push((at_ms, bytes));
        }
        // What is further back than a window can no longer be joined.
        let mut behind: usize = groups.iter().skip(1).map(|(_, b)| b.len()).sum();
        while groups.len() > 1 && behind >= window {
            let (at, bytes) = groups.remove(0);
            out.push(blank(redact, at, bytes));
            behind -= groups[0].1.len();
        }
    }
    flush(redact, &mut groups, &mut out);
    out
}

fn flush(redact: &dyn Redact, groups: &mut Vec<(u64, Vec<u8>)>, out: &mut Vec<Chunk>) {
    out.extend(groups.drain(..).map(|(at, bytes)| blank(redact, at, bytes)));
}

/// Whether a secret may lie across the split between `groups` and `next`: blanking up to
/// `window` bytes on either side together differs from blanking them apart.
fn straddles(redact: &dyn Redact, groups: &[(u64, Vec<u8>)], next: &[u8], window: usize) -> bool {
    let mut left: Vec<u8> = Vec::new();
    for (_, bytes) in groups.iter().rev() {
        let need = window - left.len();
        let start = bytes.len().saturating_sub(need);
        left.splice(0..0, bytes[start..].iter().copied());
        if left.len() >= window {
            break;
        }
    }
    let right = &next[..next.len().min(window)];
    let left_text = String::from_utf8_lossy(&left).into_owned();
    let right_text = String::from_utf8_lossy(right).into_owned();
    let mut both = left.clone();
    both.extend_from_slice(right);
    let both_text = String::from_utf8_lossy(&both).into_owned();
    let (left_blank, right_blank, both_blank) = (
        redacted(redact, &left_text),
        redacted(redact, &right_text),
        redacted(redact, &both_text),
    );
    let nothing = left_blank == left_text && right_blank == right_text && both_blank == both_text;
    if nothing {
        return false;
    }
    // A character cut by the split reads differently apart: join to be safe.
    let clean = format!("{left_text}{right_text}") == both_text;
    !clean || both_blank != format!("{left_blank}{right_blank}")
}

/// The chunk of `bytes` at `at_ms`, its secrets blanked.
fn blank(redact: &dyn Redact, at_ms: u64, bytes: Vec<u8>) -> Chunk {
    match String::from_utf8(bytes) {
        Ok(mut text) => {
            redact.redact(&mut text);
            Chunk::new(at_ms, text.into_bytes())
        }
        Err(e) => {
            let bytes = e.into_bytes();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let blanked = redacted(redact, &text);
            if blanked == text {
                Chunk::new(at_ms, bytes)
            } else {
                Chunk::new(at_ms, blanked.into_bytes())
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Blanks the values it holds wherever they are, as `<redacted>`.
    pub(crate) struct Values(pub(crate) Vec<&'static str>);

    impl Redact for Values {
        fn redact(&self, text: &mut String) {
            for value in &self.0 {
                if text.contains(value) {
                    *text = text.replace(value, crate::REDACTED);
                }
            }
        }

        fn reach(&self) -> usize {
            self.0.iter().map(|v| v.len()).max().unwrap_or(0)
        }
    }

    fn texts(chunks: &[Chunk]) -> String {
        chunks
            .iter()
            .map(|c| String::from_utf8(c.bytes().unwrap()).unwrap())
            .collect()
    }

    #[test]
    fn a_secret_split_between_chunks_is_blanked_whole_and_the_rest_keeps_its_times() {
        let secret = Values(vec!["sk-split-secret-4242"]);
        let pieces = [
            "{\"a\": \"nothing here, and a long enough run of text to leave behind\", ",
            "\"more\": \"words before the secret\", \"echo\": \"sk-spl",
            "it-se",
            "cret-4242\", ",
            "\"tail\": \"plain text that follows the secret for a good while longer\"}",
        ];
        let chunks: Vec<Chunk> = pieces
            .iter()
            .enumerate()
            .map(|(i, p)| Chunk::new(i as u64 * 10, p.as_bytes().to_vec()))
            .collect();
        let out = super::chunks(&secret, chunks);
        let all = texts(&out);
        assert!(!all.contains("sk-spl"), "{all}");
        assert!(!all.contains("cret-4242"), "{all}");
        assert_eq!(
            all,
            pieces
                .concat()
                .replace("sk-split-secret-4242", "<redacted>")
        );
        // The chunks away from the secret keep their own times.
        assert_eq!(out.first().unwrap().at_ms, 0);
        assert_eq!(out.last().unwrap().at_ms, 40);
        assert!(out.len() >= 3, "{out:?}");
    }

    #[test]
    fn chunks_without_a_secret_are_left_as_they_are() {
        let secret = Values(vec!["sk-split-secret-4242"]);
        let chunks = vec![
            Chunk::new(0, b"data: {}\n\n".to_vec()),
            Chunk::new(5, vec![0, 0xff, 0xfe]),
            Chunk::new(9, b"data: [DONE]\n\n".to_vec()),
        ];
        assert_eq!(super::chunks(&secret, chunks.clone()), chunks);
    }

    #[test]
    fn a_secret_inside_a_binary_chunk_is_blanked_there_too() {
        let secret = Values(vec!["sk-split-secret-4242"]);
        let mut frame = vec![0, 0, 0, 0xff];
        frame.extend_from_slice(b"{\"k\":\"sk-split-secret-4242\"}");
        let out = super::chunks(&secret, vec![Chunk::new(1, frame)]);
        let bytes = out[0].bytes().unwrap();
        let shown = String::from_utf8_lossy(&bytes);
        assert!(!shown.contains("sk-split"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }
}
