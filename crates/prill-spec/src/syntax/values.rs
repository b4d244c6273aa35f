//! How many values a file may hold, counted before it is parsed: a file of tiny values
//! (`[1,1,1,...]`) costs memory by the value, not by the byte, so the byte limit alone
//! would let 32 MiB become gigabytes. Each syntax is counted as cheaply as it can be:
//!
//! - **JSON**: every `,`, `:`, `[` and `{` outside strings, plus one, bounds the values
//!   and keys from above; one pass over the bytes.
//! - **YAML**: a file of `n` bytes cannot hold more than about `n / 2` values and keys
//!   (each needs a byte and a separator; nesting is bounded by depth), so only a file
//!   of more than twice [`MAX_VALUES`] bytes is counted, by running the parser's
//!   events through without building anything.
//! - **HOCON**: every `,`, `:`, `=`, `.`, `[`, `{` and line break outside strings and
//!   comments, plus one, bounds its values and keys from above; it is counted against
//!   the lower [`HOCON_MAX_VALUES`], as the `hocon` crate takes about a kilobyte a
//!   value.
//!
//! A bound may count a value twice (a `.` in a number, a line break in a list), never
//! count one as free.

use saphyr_parser::{Event, Parser};

use crate::diag::Diagnostic;
use crate::files::thousands;
use crate::limits::{HOCON_MAX_VALUES, MAX_VALUES};
use crate::node::Span;

/// Refuses JSON `text` that may hold more than [`MAX_VALUES`] values and keys.
pub(super) fn json(text: &str) -> Result<(), Box<Diagnostic>> {
    let mut count: u64 = 1;
    let (mut in_string, mut escaped) = (false, false);
    for (at, byte) in text.bytes().enumerate() {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b',' | b':' | b'[' | b'{' => {
                count += 1;
                if count > MAX_VALUES {
                    return Err(Box::new(too_many(MAX_VALUES, at)));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Refuses YAML `text` that holds more than [`MAX_VALUES`] values and keys (scalars,
/// lists, objects and aliases), counted only when it is large enough to.
pub(super) fn yaml(text: &str) -> Result<(), Box<Diagnostic>> {
    if (text.len() as u64) <= 2 * MAX_VALUES {
        return Ok(());
    }
    let mut count: u64 = 0;
    let mut parser = Parser::new_from_str(text);
    while let Some(Ok((event, span))) = parser.next_event() {
        if matches!(
            event,
            Event::Scalar(..)
                | Event::SequenceStart(..)
                | Event::MappingStart(..)
                | Event::Alias(_)
        ) {
            count += 1;
            if count > MAX_VALUES {
                // The parser counts characters; the byte is found from them.
                let at = text
                    .char_indices()
                    .nth(span.start.index())
                    .map_or(text.len(), |(b, _)| b);
                return Err(Box::new(too_many(MAX_VALUES, at)));
            }
        }
    }
    // A syntax error is the parse's to report, at its place.
    Ok(())
}

/// Refuses HOCON `text` that may hold more than [`HOCON_MAX_VALUES`] values.
pub(super) fn hocon(text: &str) -> Result<u64, Box<Diagnostic>> {
    hocon_within(text, HOCON_MAX_VALUES).map_err(|at| Box::new(too_many(HOCON_MAX_VALUES, at)))
}

/// An upper bound of the values of HOCON `text`, or the byte at which it passes
/// `budget`.
pub(super) fn hocon_within(text: &str, budget: u64) -> Result<u64, usize> {
    let bytes = text.as_bytes();
    let mut count: u64 = 1;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' if bytes[at..].starts_with(b"\"\"\"") => {
                at = bytes[at + 3..]
                    .windows(3)
                    .position(|w| w == b"\"\"\"")
                    .map_or(bytes.len(), |end| at + 3 + end + 3);
                continue;
            }
            b'"' => {
                at += 1;
                while at < bytes.len() && bytes[at] != b'"' && bytes[at] != b'\n' {
                    at += if bytes[at] == b'\\' { 2 } else { 1 };
                }
            }
            // A comment runs to its line break, which is counted next.
            b'#' => {
                at = line_end(bytes, at);
                continue;
            }
            b'/' if bytes.get(at + 1) == Some(&b'/') => {
                at = line_end(bytes, at);
                continue;
            }
            b',' | b':' | b'=' | b'.' | b'[' | b'{' | b'\n' => {
                count += 1;
                if count > budget {
                    return Err(at);
                }
            }
            _ => {}
        }
        at += 1;
    }
    Ok(count)
}

/// The diagnostic of a HOCON file whose includes bring its values past
/// [`HOCON_MAX_VALUES`].
pub(super) fn hocon_too_many(at: Span) -> Diagnostic {
    too_many(HOCON_MAX_VALUES, at.start).at(at)
}

/// The index of the line break that ends the line `at` is on (or the end).
fn line_end(bytes: &[u8], at: usize) -> usize {
    bytes[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |end| at + end)
}

/// The file holds more than `max` values, the first past it at byte `at`.
fn too_many(max: u64, at: usize) -> Diagnostic {
    Diagnostic::new(
        "too-many-values",
        "",
        format!(
            "the file holds more than {} values and keys; Prill reads at most that many from one file",
            thousands(max)
        ),
    )
    .at(Span::new(at, at + 1))
    .help("split it into several files; a suite of 100,000 generated tests holds about 2 million")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(n: u64, sep: &str) -> String {
        let mut text = String::from("[");
        for i in 0..n {
            if i > 0 {
                text.push_str(sep);
            }
            text.push('1');
        }
        text.push(']');
        text
    }

    #[test]
    fn json_is_refused_past_the_count_and_strings_do_not_count() {
        assert!(json(&list(MAX_VALUES - 2, ",")).is_ok());
        let refused = json(&list(MAX_VALUES + 1, ",")).unwrap_err();
        assert_eq!(refused.code, "too-many-values");
        assert!(refused.message.contains("4,000,000"), "{}", refused.message);
        let commas = format!("[\"{}\"]", ",".repeat(2 * MAX_VALUES as usize));
        assert!(json(&commas).is_ok(), "commas in a string are text");
        let escaped = format!("[\"\\\"{}\"]", ",".repeat(2 * MAX_VALUES as usize));
        assert!(
            json(&escaped).is_ok(),
            "an escaped quote does not end the string"
        );
    }

    #[test]
    fn yaml_is_counted_only_when_large_enough_and_refused_past_the_count() {
        let small = "tests: [1, 2]\n";
        assert!(yaml(small).is_ok());
        let flow = format!("tests: {}\n", list(MAX_VALUES + 1, ","));
        assert_eq!(yaml(&flow).unwrap_err().code, "too-many-values");
        // Long text is not many values.
        let long = format!("prompt: \"{}\"\n", "a, b".repeat(MAX_VALUES as usize));
        assert!(yaml(&long).is_ok());
    }

    #[test]
    fn hocon_is_refused_past_its_own_count_and_strings_and_comments_do_not_count() {
        let lines: String = (0..HOCON_MAX_VALUES)
            .map(|i| format!("a{i} = 1\n"))
            .collect();
        assert_eq!(hocon(&lines).unwrap_err().code, "too-many-values");
        assert_eq!(hocon_within("a = 1\nb = 2\n", 10), Ok(5));
        assert_eq!(hocon_within("a = 1\nb = 2\n", 3), Err(8));
        let few = format!(
            "a = \"{}\"\nb = \"\"\"{}\"\"\"\n# {}\n// {}\nc = 1\n",
            ",".repeat(1_000_000),
            "\n".repeat(1_000_000),
            ",".repeat(1_000_000),
            "=".repeat(1_000_000)
        );
        assert!(hocon(&few).is_ok());
    }

    #[test]
    fn numbers_get_their_thousands() {
        assert_eq!(thousands(4_000_000), "4,000,000");
        assert_eq!(thousands(250_000), "250,000");
        assert_eq!(thousands(12), "12");
    }
}
