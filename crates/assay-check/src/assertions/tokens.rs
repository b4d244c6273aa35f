//! Counting output tokens: the provider's own count when it reported one, otherwise
//! the offline o200k tokenizer (the one GPT-4o uses; its vocabulary is compiled into
//! the binary, so counting never touches the network).

use std::sync::LazyLock;

use crate::response::Response;

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
}
