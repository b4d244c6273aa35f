//! The last few answers each thread of the OpenAI fake rendered, served again as
//! clones of the same bytes: a fake that gives one reply to many requests (the
//! `fake-openai` binary's default, in a benchmark) writes it once per thread, not once
//! per request.
//!
//! An answer's bytes depend on the reply's outcome, piece size, usage and finish
//! reason, the request's model, its words (the input tokens, when the reply sets no
//! usage), and whether it is streamed and with usage; an entry is reused only when all
//! of them are equal. Pauses, cuts and labels are applied to the bytes afterwards, so
//! they are not part of it. Answers over [`LARGEST`] are never kept, so that a long
//! scripted stream is not held after its request.

use std::cell::RefCell;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use crate::providers::Reply;
use crate::providers::reply::Outcome;

/// The most entries a thread keeps.
const ENTRIES: usize = 4;

/// The largest answer kept, in bytes.
const LARGEST: usize = 64 * 1024;

/// A rendered answer: its bytes and the range of each event in them (one range for a
/// whole answer). Cloning it copies no bytes.
#[derive(Debug, Clone)]
pub(super) struct Rendered {
    pub(super) bytes: Bytes,
    pub(super) ranges: Arc<[Range<usize>]>,
}

impl Rendered {
    /// A whole answer: `bytes` as one piece.
    pub(super) fn whole(bytes: Bytes) -> Rendered {
        Rendered {
            ranges: std::iter::once(0..bytes.len()).collect(),
            bytes,
        }
    }
}

/// What an answer's bytes are made from.
#[derive(Debug, PartialEq)]
struct Key {
    outcome: Outcome,
    piece_size: Option<usize>,
    usage: Option<(u64, u64)>,
    finish_reason: Option<String>,
    model: String,
    /// The request's words, when the reply sets no usage (else 0).
    input: u64,
    /// `None` for a whole answer, else whether the stream ends with the usage.
    stream: Option<bool>,
}

impl Key {
    fn matches(&self, reply: &Reply, model: &str, input: u64, stream: Option<bool>) -> bool {
        self.input == input
            && self.stream == stream
            && self.usage == reply.usage
            && self.piece_size == reply.piece_size
            && self.model == model
            && self.finish_reason == reply.finish_reason
            && self.outcome == reply.outcome
    }
}

thread_local! {
    static LAST: RefCell<Vec<(Key, Rendered)>> = const { RefCell::new(Vec::new()) };
}

/// The answer to `reply` for a request naming `model` with `input` words (0 when the
/// reply sets the usage), whole (`stream` `None`) or streamed (`Some(include_usage)`):
/// the one this thread rendered last for the same, else `render`'s.
pub(super) fn rendered(
    reply: &Reply,
    model: &str,
    input: u64,
    stream: Option<bool>,
    render: impl FnOnce() -> Rendered,
) -> Rendered {
    let hit = LAST.with_borrow(|last| {
        last.iter()
            .find(|(key, _)| key.matches(reply, model, input, stream))
            .map(|(_, rendered)| rendered.clone())
    });
    if let Some(rendered) = hit {
        return rendered;
    }
    let rendered = render();
    if rendered.bytes.len() <= LARGEST {
        let key = Key {
            outcome: reply.outcome.clone(),
            piece_size: reply.piece_size,
            usage: reply.usage,
            finish_reason: reply.finish_reason.clone(),
            model: model.to_owned(),
            input,
            stream,
        };
        LAST.with_borrow_mut(|last| {
            last.insert(0, (key, rendered.clone()));
            last.truncate(ENTRIES);
        });
    }
    rendered
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    /// `rendered` for `reply`, and whether it rendered anew.
    fn get(reply: &Reply, model: &str, input: u64, stream: Option<bool>) -> (Bytes, bool) {
        let fresh = Cell::new(false);
        let r = rendered(reply, model, input, stream, || {
            fresh.set(true);
            Rendered::whole(Bytes::from(format!("{reply:?} {model} {input} {stream:?}")))
        });
        (r.bytes, fresh.get())
    }

    #[test]
    fn an_answer_is_reused_only_for_the_same_inputs() {
        let reply = Reply::text("memo test one");
        let (first, fresh) = get(&reply, "m", 3, Some(true));
        assert!(fresh);
        let (again, fresh) = get(
            &reply.clone().delay(std::time::Duration::from_millis(1)),
            "m",
            3,
            Some(true),
        );
        assert!(!fresh, "a pause is applied afterwards");
        assert_eq!(first, again);
        for (other, model, input, stream) in [
            (Reply::text("memo test two"), "m", 3, Some(true)),
            (reply.clone().pieces(2), "m", 3, Some(true)),
            (reply.clone().usage(1, 2), "m", 3, Some(true)),
            (reply.clone().finish_reason("length"), "m", 3, Some(true)),
            (reply.clone(), "n", 3, Some(true)),
            (reply.clone(), "m", 4, Some(true)),
            (reply.clone(), "m", 3, Some(false)),
            (reply.clone(), "m", 3, None),
        ] {
            assert!(
                get(&other, model, input, stream).1,
                "{other:?} {model} {input} {stream:?}"
            );
        }
    }

    #[test]
    fn a_large_answer_is_not_kept() {
        let reply = Reply::text("memo test large");
        let large = || Rendered::whole(Bytes::from(vec![b'x'; LARGEST + 1]));
        let _ = rendered(&reply, "m", 0, None, large);
        let fresh = Cell::new(false);
        let _ = rendered(&reply, "m", 0, None, || {
            fresh.set(true);
            large()
        });
        assert!(fresh.get());
    }
}
