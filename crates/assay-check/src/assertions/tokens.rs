//! `min_tokens` and `max_tokens`, over the output's token count: the provider's own
//! count when it reported one, otherwise the offline o200k tokenizer (the one GPT-4o
//! uses; its vocabulary is compiled into the binary, so counting never touches the
//! network). Messages and metadata say which count was used.

use std::sync::LazyLock;

use crate::evaluation::Evaluation;
use crate::response::Response;

/// What the assertions look at.
pub(super) const TARGET: &str = "output_tokens";

/// Which side of the count a limit bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bound {
    /// `min_tokens`.
    AtLeast,
    /// `max_tokens`.
    AtMost,
}

/// Whether the response's output tokens are within `limit`, on the side `bound` says.
pub(super) fn evaluate(bound: Bound, limit: u64, response: &Response) -> (Evaluation, String) {
    let (count, source) = output_tokens(response);
    let (passed, words) = match bound {
        Bound::AtLeast => (count >= limit, "at least"),
        Bound::AtMost => (count <= limit, "at most"),
    };
    let message = if passed {
        format!("{count} output tokens, {words} {limit} ({})", source.name())
    } else {
        format!(
            "expected {words} {limit} output tokens, found {count} ({})",
            source.name()
        )
    };
    (
        Evaluation::pass_fail(passed)
            .with("tokens", count)
            .with("token_count_source", source.name()),
        message,
    )
}

/// Where a token count came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenSource {
    /// The agent or provider reported it.
    Provider,
    /// Counted here with the o200k tokenizer.
    O200k,
}

impl TokenSource {
    /// The name reports give it.
    pub fn name(self) -> &'static str {
        match self {
            TokenSource::Provider => "provider",
            TokenSource::O200k => "tiktoken-o200k",
        }
    }
}

static O200K: LazyLock<&'static tiktoken_rs::CoreBPE> =
    LazyLock::new(tiktoken_rs::o200k_base_singleton);

/// The number of tokens in `text` by the o200k tokenizer.
pub fn count_o200k(text: &str) -> u64 {
    O200K.encode_ordinary(text).len() as u64
}

/// The response's output tokens and where the count came from.
pub fn output_tokens(response: &Response) -> (u64, TokenSource) {
    if let Some(n) = response.usage.and_then(|u| u.output) {
        return (n, TokenSource::Provider);
    }
    (
        count_o200k(response.text.as_deref().unwrap_or("")),
        TokenSource::O200k,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_counts_win_and_text_is_counted_offline_otherwise() {
        let r = Response::text("hello world").with_usage(Some(3), Some(42));
        assert_eq!(output_tokens(&r), (42, TokenSource::Provider));
        let (n, source) = output_tokens(&Response::text("hello world"));
        assert_eq!(source, TokenSource::O200k);
        assert_eq!(n, 2);
        assert_eq!(output_tokens(&Response::default()).0, 0);
    }

    #[test]
    fn token_bounds_say_which_count_was_used() {
        let r = Response::text("one two three four").with_usage(None, Some(10));
        let (e, m) = evaluate(Bound::AtLeast, 10, &r);
        assert_eq!(e.status(), crate::Status::Passed);
        assert_eq!(e.metadata["token_count_source"], "provider");
        assert_eq!(m, "10 output tokens, at least 10 (provider)");
        let (e, m) = evaluate(Bound::AtMost, 3, &Response::text("one two three four"));
        assert_eq!(e.status(), crate::Status::Failed);
        assert_eq!(e.metadata["token_count_source"], "tiktoken-o200k");
        assert_eq!(e.metadata["tokens"], 4);
        assert_eq!(
            m,
            "expected at most 3 output tokens, found 4 (tiktoken-o200k)"
        );
    }
}
