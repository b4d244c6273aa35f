//! Byte spans of the `hocon` crate's tokens.
//!
//! The lexer gives each token a 1-based line and a 1-based column counted in
//! characters, after a leading byte order mark it skips without counting. Token
//! ends are found by rescanning the text from each token's start.

use hocon::{Token, TokenKind};

use crate::node::Span;
use crate::source::Source;

/// Walks the text forwards, turning the lexer's line:column into byte offsets in
/// one pass when the positions asked for only grow.
struct Locator<'a> {
    text: &'a str,
    line: usize,
    col: usize,
    byte: usize,
}

impl<'a> Locator<'a> {
    fn new(text: &'a str) -> Self {
        // The lexer skips a leading byte order mark without counting a column.
        let byte = if text.starts_with('\u{feff}') {
            '\u{feff}'.len_utf8()
        } else {
            0
        };
        Locator {
            text,
            line: 1,
            col: 1,
            byte,
        }
    }

    fn offset(&mut self, source: &Source, line: usize, col: usize) -> usize {
        if (line, col) < (self.line, self.col) {
            return offset_of(source, line, col);
        }
        let text = self.text;
        for ch in text[self.byte..].chars() {
            if (self.line, self.col) >= (line, col) {
                break;
            }
            if ch == '\n' {
                self.line += 1;
                self.col = 1;
            } else {
                self.col += 1;
            }
            self.byte += ch.len_utf8();
        }
        self.byte
    }
}

/// The byte offset of the lexer's 1-based `line` and character `col`.
pub(super) fn offset_of(source: &Source, line: usize, col: usize) -> usize {
    let bom = usize::from(line == 1 && source.text.starts_with('\u{feff}'));
    source.offset(line, col + bom)
}

/// The span of every token, from its start to the end of its text.
pub(super) fn token_spans(source: &Source, tokens: &[Token]) -> Vec<Span> {
    let text: &str = &source.text;
    let mut locator = Locator::new(text);
    tokens
        .iter()
        .map(|t| {
            let start = locator.offset(source, t.line, t.col);
            Span::new(start, token_end(text, start, t))
        })
        .collect()
}

/// One past the last byte of the token that starts at `start`.
fn token_end(text: &str, start: usize, token: &Token) -> usize {
    let Some(rest) = text.get(start..) else {
        return text.len();
    };
    let len = match token.kind {
        TokenKind::Eof => 0,
        TokenKind::PlusEquals => 2,
        TokenKind::Unquoted => token.value.len(),
        TokenKind::QuotedString => quoted_len(rest),
        TokenKind::TripleQuotedString => triple_quoted_len(rest),
        TokenKind::Substitution => substitution_len(rest),
        _ => rest.chars().next().map_or(0, char::len_utf8),
    };
    (start + len).min(text.len())
}

/// The length of the `"..."` string at the start of `rest`, quotes included.
fn quoted_len(rest: &str) -> usize {
    let mut chars = rest.char_indices().skip(1);
    while let Some((i, ch)) = chars.next() {
        match ch {
            '\\' => {
                chars.next();
            }
            '"' => return i + 1,
            '\n' => return i,
            _ => {}
        }
    }
    rest.len()
}

/// The length of the `"""..."""` string at the start of `rest`. As in the lexer,
/// a run of three or more quotes closes it and quotes beyond three belong to the
/// string.
fn triple_quoted_len(rest: &str) -> usize {
    let bytes = rest.as_bytes();
    let mut i = 3;
    while i < bytes.len() {
        if bytes[i] == b'"' {
            let run = bytes[i..].iter().take_while(|&&b| b == b'"').count();
            if run >= 3 {
                return i + run;
            }
            i += run;
        } else {
            i += 1;
        }
    }
    rest.len()
}

/// The length of the `${...}` substitution at the start of `rest`.
fn substitution_len(rest: &str) -> usize {
    let mut i = 2;
    while let Some(ch) = rest[i..].chars().next() {
        match ch {
            '}' => return i + 1,
            '"' => i += quoted_len(&rest[i..]).max(1),
            '\n' => return i,
            _ => i += ch.len_utf8(),
        }
    }
    rest.len()
}
