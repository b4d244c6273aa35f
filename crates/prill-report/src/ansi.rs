//! A minimal ANSI colour helper: the human reporter colours a few words, and only when
//! it is told to.

/// A colour for a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Colour {
    /// Passed.
    Green,
    /// Failed.
    Red,
    /// Errored.
    Yellow,
    /// Skipped and other quiet things.
    Dim,
}

impl Colour {
    fn code(self) -> &'static str {
        match self {
            Colour::Green => "1;32",
            Colour::Red => "1;31",
            Colour::Yellow => "1;33",
            Colour::Dim => "2",
        }
    }
}

/// `text` in `colour` when `enabled`, else `text` as it is.
pub(crate) fn paint(text: &str, colour: Colour, enabled: bool) -> String {
    if enabled {
        format!("\x1b[{}m{text}\x1b[0m", colour.code())
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paints_only_when_enabled() {
        assert_eq!(paint("FAIL", Colour::Red, true), "\x1b[1;31mFAIL\x1b[0m");
        assert_eq!(paint("FAIL", Colour::Red, false), "FAIL");
    }
}
