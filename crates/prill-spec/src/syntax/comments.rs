//! The comments of a YAML or HOCON file, found with the help of the tree's spans, so
//! that `prill convert` can write them again ([`super::emit::emit_with_comments`]).
//!
//! A comment is a `#` (YAML: at the start of a line or after a space or tab; HOCON:
//! anywhere) or a HOCON `//` that is not inside a key or a scalar value (their spans say
//! where they are written) nor inside a quoted string the tree has no node for (an
//! `include "..."`). It runs to the end of its line. Each comment remembers where it is
//! (its byte offset and line) and whether code comes before it on its line (a
//! *trailing* comment, which the emitters put at the end of the line of the entry that
//! starts on that line, else on a line of its own before the next entry).

use crate::node::{Node, Span, Value};
use crate::source::{Source, Syntax};

/// One comment of the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// The offset of its marker.
    pub at: usize,
    /// Its line, 0-based.
    pub line: usize,
    /// The text after the marker, without the line break or trailing spaces.
    pub text: String,
    /// Whether something other than white space comes before it on its line.
    pub trailing: bool,
}

/// The comments of `source`, parsed as `tree`, in source order. JSON has none.
pub fn comments(source: &Source, tree: &Node) -> Vec<Comment> {
    let syntax = Syntax::from_path(&source.path);
    let hocon = match syntax {
        Some(Syntax::Hocon) => true,
        Some(Syntax::Yaml) => false,
        _ => return Vec::new(),
    };
    let text: &str = &source.text;
    let mut spans = Vec::new();
    written_spans(tree, &mut spans);
    // A scalar that took the span of a list or an object (a substitution's or an
    // include's value) would hide the comments inside it.
    spans.retain(|s| {
        text.get(s.start..s.end)
            .is_some_and(|t| !t.trim_start().starts_with(['{', '[']))
    });
    if !hocon {
        // A block string's header line (`|`, `>-`, ...) may end in a comment.
        for span in &mut spans {
            if text[span.start..].starts_with(['|', '>'])
                && let Some(header) = text[span.start..span.end].find('\n')
            {
                span.start += header + 1;
            }
        }
    }
    spans.sort_by_key(|s| (s.start, s.end));
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut next_span = 0;
    let mut at = 0;
    while at < bytes.len() {
        // Skip what keys and values cover.
        while next_span < spans.len() && spans[next_span].end <= at {
            next_span += 1;
        }
        if let Some(span) = spans[next_span..]
            .iter()
            .take_while(|s| s.start <= at)
            .find(|s| s.start <= at && at < s.end)
        {
            at = span.end;
            continue;
        }
        let b = bytes[at];
        if hocon && b == b'"' {
            at = after_quoted(bytes, at);
            continue;
        }
        let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
        let before = &text[line_start..at];
        let marker = if b == b'#' && (hocon || before.is_empty() || before.ends_with([' ', '\t'])) {
            Some(1)
        } else if hocon && bytes[at..].starts_with(b"//") {
            Some(2)
        } else {
            None
        };
        let Some(marker) = marker else {
            at += 1;
            continue;
        };
        let end = text[at..].find('\n').map_or(text.len(), |n| at + n);
        found.push(Comment {
            at,
            line: source.line_col(at).0.saturating_sub(1),
            text: text[at + marker..end].trim_end().to_owned(),
            trailing: !before.trim().is_empty(),
        });
        at = end;
    }
    found
}

/// The spans of every key and every scalar of the tree.
fn written_spans(node: &Node, out: &mut Vec<Span>) {
    match &node.value {
        Value::Array(items) => items.iter().for_each(|item| written_spans(item, out)),
        Value::Object(entries) => {
            for (key, value) in entries {
                out.push(key.span);
                written_spans(value, out);
            }
        }
        _ => out.push(node.span),
    }
}

/// The offset after the quoted string that starts at `at` (`"..."` with escapes, or
/// `"""..."""`), or the end of the text when it is not closed.
fn after_quoted(bytes: &[u8], at: usize) -> usize {
    if bytes[at..].starts_with(b"\"\"\"") {
        let mut i = at + 3;
        while i < bytes.len() {
            if bytes[i..].starts_with(b"\"\"\"") {
                // A closing run may be longer than three quotes; all of it is the string's.
                let mut j = i + 3;
                while j < bytes.len() && bytes[j] == b'"' {
                    j += 1;
                }
                return j;
            }
            i += 1;
        }
        return bytes.len();
    }
    let mut i = at + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            b'\n' => return i,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The comments not yet written, in source order, as an emitter walks the tree.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    comments: Vec<Comment>,
    next: usize,
    /// The line each offset of the source is on: the offsets where lines start.
    line_starts: Vec<usize>,
}

impl Pending {
    pub(crate) fn new(comments: Vec<Comment>, source: Option<&Source>) -> Pending {
        let line_starts = source.map_or_else(Vec::new, |s| {
            std::iter::once(0)
                .chain(s.text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        });
        Pending {
            comments,
            next: 0,
            line_starts,
        }
    }

    /// The 0-based line of `offset`.
    pub(crate) fn line_of(&self, offset: usize) -> usize {
        self.line_starts
            .partition_point(|&start| start <= offset)
            .saturating_sub(1)
    }

    /// Takes every comment before `offset`.
    pub(crate) fn before(&mut self, offset: usize) -> &[Comment] {
        let start = self.next;
        while self.next < self.comments.len() && self.comments[self.next].at < offset {
            self.next += 1;
        }
        &self.comments[start..self.next]
    }

    /// Takes the next comment when it trails code on `line` and is the next one.
    pub(crate) fn trailing_on(&mut self, line: usize) -> Option<&Comment> {
        let comment = self.comments.get(self.next)?;
        if comment.trailing && comment.line == line {
            self.next += 1;
            self.comments.get(self.next - 1)
        } else {
            None
        }
    }

    /// Whether a comment not yet written lies inside `span`.
    pub(crate) fn any_within(&self, span: Span) -> bool {
        self.comments[self.next..]
            .iter()
            .any(|c| span.start <= c.at && c.at < span.end)
    }

    /// Takes every comment left.
    pub(crate) fn rest(&mut self) -> &[Comment] {
        let start = self.next;
        self.next = self.comments.len();
        &self.comments[start..]
    }
}
