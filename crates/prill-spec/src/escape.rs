//! Text from outside made safe to print: file names, keys, values, and the messages
//! that quote them.
//!
//! Names come from pull requests (git keeps a file name with a newline in it) and values
//! from agents, and both end up on stdout and stderr, which a CI runner reads too. GitHub
//! Actions takes any line that starts with `::` (after leading whitespace) for a
//! workflow command: `::error::` adds an annotation, `::add-mask::` hides text and
//! `::stop-commands::` silences every later annotation. And a terminal obeys the
//! escape sequences in what it prints. So:
//!
//! - [`one_line`] shows a name or value on one line: every control character (newline,
//!   carriage return, ESC, ...) as Rust's `escape_debug` writes it (`\n`, `\r`,
//!   `\u{1b}`), and a `\` before text that would start a workflow command. Every
//!   diagnostic's file name, field path, message, expected and found values go through
//!   it ([`crate::diag::Report::new`], [`crate::Source::shown_name`]), and so do the
//!   renderers above this crate.
//! - [`lines`] does the same for text of several lines, keeping its line breaks and tabs.
//! - [`commands`] is the last guard before a stream: it leaves colours alone and only
//!   escapes a line a runner would obey, splitting lines where the runner does (at `\n`
//!   and at `\r`). No line Prill writes can start a command unless Prill means it to.
//!
//! ```
//! use prill_spec::escape;
//!
//! assert_eq!(escape::one_line("a\n::error::pwned.yaml"), "a\\n::error::pwned.yaml");
//! assert_eq!(escape::one_line("::add-mask::x"), "\\::add-mask::x");
//! assert_eq!(escape::one_line("\u{1b}[31mred"), "\\u{1b}[31mred");
//! assert_eq!(escape::commands("ok\n  ::stop-commands::t\r::error::x"), "ok\n  \\::stop-commands::t\r\\::error::x");
//! ```

use std::borrow::Cow;

/// Whether a CI runner would take `line` for a command of its own: GitHub Actions reads
/// `::name ...::` after leading whitespace, and the older `##[name]`.
pub fn is_command(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("::") || line.starts_with("##[")
}

/// Whether `c` is shown escaped: a control character (C0, DEL and C1: newline, carriage
/// return, tab, ESC, NEL, ...) or a Unicode line or paragraph separator.
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// `text` on one line, as a name or value from outside is shown: every [`is_unsafe`]
/// character escaped as Rust's `escape_debug` writes it, and a `\` before text that a CI
/// runner would take for a command ([`is_command`]). Borrowed when nothing changes.
pub fn one_line(text: &str) -> Cow<'_, str> {
    let command = is_command(text);
    if !command && !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    push_line(&mut out, text, command, false);
    Cow::Owned(out)
}

/// `text` with every [`is_unsafe`] character escaped, and nothing else: for a part
/// of a line that never starts it (a window of a source line in a snippet, after its
/// line number).
pub fn controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    push_escaped(&mut out, text, false);
    Cow::Owned(out)
}

/// `text` of several lines: each line as [`one_line`] shows it, tabs kept. A lone
/// carriage return is escaped, as it would end a line for a CI runner.
pub fn lines(text: &str) -> Cow<'_, str> {
    let clean = |line: &str| !is_command(line) && !line.chars().any(|c| c != '\t' && is_unsafe(c));
    if text.split('\n').all(clean) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        push_line(&mut out, line, is_command(line), true);
    }
    Cow::Owned(out)
}

/// `text` about to be written to stdout or stderr, with a `\` before every line a CI
/// runner would take for a command; nothing else changes (colours stay). Lines end at
/// `\n` and at `\r`, as the runner reads them.
pub fn commands(text: &str) -> Cow<'_, str> {
    if !text.split(['\n', '\r']).any(is_command) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    loop {
        let end = rest.find(['\n', '\r']).unwrap_or(rest.len());
        let line = &rest[..end];
        if is_command(line) {
            let indent = line.len() - line.trim_start().len();
            out.push_str(&line[..indent]);
            out.push('\\');
            out.push_str(&line[indent..]);
        } else {
            out.push_str(line);
        }
        let Some(brk) = rest[end..].chars().next() else {
            break;
        };
        out.push(brk);
        rest = &rest[end + brk.len_utf8()..];
    }
    Cow::Owned(out)
}

/// Adds `line` to `out` escaped, with a `\` after its indent when `command`; tabs are
/// kept when `keep_tabs`.
fn push_line(out: &mut String, line: &str, command: bool, keep_tabs: bool) {
    let mut rest = line;
    if command {
        let indent = line.len() - line.trim_start().len();
        push_escaped(out, &line[..indent], keep_tabs);
        out.push('\\');
        rest = &line[indent..];
    }
    push_escaped(out, rest, keep_tabs);
}

fn push_escaped(out: &mut String, text: &str, keep_tabs: bool) {
    for c in text.chars() {
        if is_unsafe(c) && !(keep_tabs && c == '\t') {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stay_on_one_line() {
        assert_eq!(
            one_line("a\n::error::pwned.yaml"),
            "a\\n::error::pwned.yaml"
        );
        assert_eq!(
            one_line("a\r\nb\tc\u{0}d\u{85}e\u{2028}"),
            "a\\r\\nb\\tc\\0d\\u{85}e\\u{2028}"
        );
        assert_eq!(one_line("\u{1b}[2J"), "\\u{1b}[2J");
        // A name that would start a command gets a `\`, after its indent.
        assert_eq!(one_line("::stop-commands::t"), "\\::stop-commands::t");
        assert_eq!(one_line(" \t::error::x"), " \\t\\::error::x");
        assert_eq!(one_line("##[error]x"), "\\##[error]x");
        // Everything else is left as it is: quotes, backslashes (Windows paths), `::`
        // inside a line, and every printable character.
        for text in ["dir\\a.yaml", "a::b", "\"q\" 'é' ✓ 😀", ""] {
            assert!(
                matches!(one_line(text), Cow::Borrowed(t) if t == text),
                "{text}"
            );
        }
    }

    #[test]
    fn lines_keep_their_breaks_and_tabs() {
        assert_eq!(lines("a\n\tb"), "a\n\tb");
        assert_eq!(lines("a\n  ::error::x\nb\rc"), "a\n  \\::error::x\nb\\rc");
        assert_eq!(lines("\u{1b}[31mx"), "\\u{1b}[31mx");
        assert!(matches!(lines("plain\ntext"), Cow::Borrowed(_)));
    }

    #[test]
    fn output_is_guarded_line_by_line() {
        assert_eq!(commands("x\n::error::a\r\n"), "x\n\\::error::a\r\n");
        assert_eq!(commands("x\r::add-mask::a"), "x\r\\::add-mask::a");
        assert_eq!(commands("\u{1b}[31m::x\u{1b}[0m"), "\u{1b}[31m::x\u{1b}[0m");
        assert_eq!(commands("a\n\n  ##[group]b"), "a\n\n  \\##[group]b");
        assert!(matches!(commands("a :: b\n"), Cow::Borrowed(_)));
    }
}
