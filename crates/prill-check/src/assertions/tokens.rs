//! `min_tokens` and `max_tokens`, over the answer's token count: the provider's own
//! count when it reported one, otherwise the offline o200k tokenizer (the one GPT-4o
//! uses; its vocabulary is compiled into the binary, so counting never touches the
//! network). Messages and metadata say which count was used.
//!
//! The count is of the visible answer: where the provider reports hidden reasoning
//! tokens inside its output count (OpenAI's `reasoning_tokens`), they are subtracted,
//! and the metadata keeps both (`tokens`, the answer's; `output_tokens` and
//! `reasoning_tokens`, the provider's).

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
    let reasoning = response.usage.and_then(|u| u.reasoning).filter(|n| *n > 0);
    let (passed, words) = match bound {
        Bound::AtLeast => (count >= limit, "at least"),
        Bound::AtMost => (count <= limit, "at most"),
    };
    let counted = match reasoning {
        Some(r) => format!("{}, {r} reasoning tokens not counted", source.name()),
        None => source.name().to_owned(),
    };
    let message = if passed {
        format!("{count} output tokens, {words} {limit} ({counted})")
    } else {
        format!("expected {words} {limit} output tokens, found {count} ({counted})")
    };
    let mut evaluation = Evaluation::pass_fail(passed)
        .with("tokens", count)
        .with("token_count_source", source.name());
    if let (Some(r), Some(out)) = (reasoning, response.usage.and_then(|u| u.output)) {
        evaluation = evaluation
            .with("output_tokens", out)
            .with("reasoning_tokens", r);
    }
    (evaluation, message)
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

/// The tokens of the response's visible answer (the provider's output count less its
/// reasoning tokens) and where the count came from.
pub fn output_tokens(response: &Response) -> (u64, TokenSource) {
    if let Some(n) = response.usage.and_then(|u| u.answer()) {
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

    /// 9 visible tokens and 500 of hidden reasoning: the answer is 9 tokens.
    #[test]
    fn reasoning_tokens_are_not_counted_as_the_answer() {
        let mut r = Response::text("Paris is the capital of France.");
        r.usage = Some(crate::TokenUsage {
            input: Some(20),
            output: Some(509),
            reasoning: Some(500),
        });
        assert_eq!(output_tokens(&r), (9, TokenSource::Provider));
        let (e, m) = evaluate(Bound::AtMost, 50, &r);
        assert_eq!(e.status(), crate::Status::Passed);
        assert_eq!(
            m,
            "9 output tokens, at most 50 (provider, 500 reasoning tokens not counted)"
        );
        assert_eq!(e.metadata["tokens"], 9);
        assert_eq!(e.metadata["output_tokens"], 509);
        assert_eq!(e.metadata["reasoning_tokens"], 500);
    }
}
