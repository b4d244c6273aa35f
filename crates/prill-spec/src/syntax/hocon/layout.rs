//! The layout pass: every key path written in a file, with the spans of its key
//! and of its value.

use std::collections::HashMap;

use hocon::{Token, TokenKind};

use crate::node::Span;

/// One step of a key path: an object key or a list index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Step {
    /// An object key.
    Key(String),
    /// A list index.
    Index(usize),
}

/// What kind of value a path was given, which decides how a later write of the
/// same path combines with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// An object: a later object merges into it.
    Object,
    /// A list: a later value replaces it and its items.
    Array,
    /// A string, number, boolean or null, or a concatenation giving one.
    Scalar,
    /// A value built with a substitution; what it holds is not known here.
    Reference,
    /// A `+=` append, which keeps whatever was there.
    Append,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: Option<Span>,
    value: Span,
    shape: Shape,
    /// When the entry was written, to tell older descendants from newer ones.
    seq: u64,
}

/// An include directive.
#[derive(Debug, Clone)]
pub(super) struct Include {
    /// The path as written.
    pub(super) target: String,
    /// The whole directive.
    pub(super) span: Span,
    /// Whether it is `file(...)`, which HOCON resolves from the working directory.
    pub(super) is_file: bool,
    /// The object it is written in.
    pub(super) path: Vec<Step>,
}

/// One value written at a path, as the expansion estimate sees it: what it holds
/// itself, and the substitutions it copies in. Values nested inside it are their own.
#[derive(Debug, Clone)]
pub(super) struct Def {
    /// Where it is written.
    pub(super) path: Vec<Step>,
    /// How many values it writes itself.
    pub(super) values: u64,
    /// How many bytes of text it writes itself.
    pub(super) bytes: u64,
    /// The substitutions in it: their paths and spans.
    pub(super) refs: Vec<(Vec<String>, Span)>,
}

/// Where each key path written in this file is.
#[derive(Debug, Default)]
pub(super) struct Layout {
    entries: HashMap<Vec<Step>, Entry>,
    /// The last include directive inside each object path.
    includes: HashMap<Vec<Step>, Span>,
    /// Every include directive, in file order.
    pub(super) include_list: Vec<Include>,
    /// Every value written, in the order each one ends.
    pub(super) defs: Vec<Def>,
    pub(super) root: Span,
}

impl Layout {
    /// Builds the layout of a token stream the `hocon` parser has accepted.
    pub(super) fn build(tokens: &[Token], spans: &[Span]) -> Layout {
        let mut walker = Walker {
            tokens,
            spans,
            pos: 0,
            record: true,
            seq: 0,
            layout: Layout::default(),
        };
        walker.root();
        walker.layout
    }

    /// The span of the value at `path`, or of the place it most likely came from.
    pub(super) fn value_span(&self, path: &[Step]) -> Span {
        match self.entries.get(path) {
            Some(entry) => entry.value,
            None => self.fallback(path),
        }
    }

    /// The span of the key that ends `path`, or of the place it most likely came from.
    pub(super) fn key_span(&self, path: &[Step]) -> Span {
        match self.entries.get(path) {
            Some(entry) => entry.key.unwrap_or(entry.value),
            None => self.fallback(path),
        }
    }

    /// For a path not written here: the include directive in the nearest enclosing
    /// object that has one, or the nearest written ancestor's value.
    fn fallback(&self, path: &[Step]) -> Span {
        for n in (0..path.len()).rev() {
            let prefix = &path[..n];
            if let Some(span) = self.includes.get(prefix) {
                return *span;
            }
            if let Some(entry) = self.entries.get(prefix) {
                return entry.value;
            }
        }
        self.root
    }

    /// The field path of the innermost written value that contains `span`.
    pub(super) fn path_at(&self, span: Span) -> String {
        self.entries
            .iter()
            .filter(|(p, e)| {
                !p.is_empty() && e.value.start <= span.start && span.end <= e.value.end
            })
            .max_by_key(|(p, _)| p.len())
            .map(|(p, _)| format_path(p))
            .unwrap_or_default()
    }
}

/// `a.b[0].c`, as diagnostics name fields.
fn format_path(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// A recursive walk over the token stream, mirroring the `hocon` parser's grammar
/// loosely: it runs only on input that parser accepted, and always makes progress.
struct Walker<'t> {
    tokens: &'t [Token],
    spans: &'t [Span],
    pos: usize,
    /// Whether paths are known here; off inside `+=` values and list
    /// concatenations whose item indices cannot be known.
    record: bool,
    seq: u64,
    layout: Layout,
}

impl Walker<'_> {
    fn kind(&self) -> &TokenKind {
        self.tokens
            .get(self.pos)
            .map_or(&TokenKind::Eof, |t| &t.kind)
    }

    fn span(&self, i: usize) -> Span {
        self.spans.get(i).copied().unwrap_or_default()
    }

    /// The end of the last token consumed.
    fn last_end(&self) -> usize {
        self.pos.checked_sub(1).map_or(0, |i| self.span(i).end)
    }

    fn skip_newlines(&mut self) {
        while *self.kind() == TokenKind::Newline {
            self.pos += 1;
        }
    }

    fn skip_separators(&mut self) {
        while matches!(self.kind(), TokenKind::Newline | TokenKind::Comma) {
            self.pos += 1;
        }
    }

    /// Records the value written at `path`, combining it with an earlier write of
    /// the same path as HOCON would.
    fn record(&mut self, path: &[Step], key: Option<Span>, value: Span, shape: Shape, since: u64) {
        if !self.record {
            return;
        }
        self.seq += 1;
        let fresh = Entry {
            key,
            value,
            shape,
            seq: self.seq,
        };
        let Some(old) = self.layout.entries.get_mut(path) else {
            self.layout.entries.insert(path.to_vec(), fresh);
            return;
        };
        let keep = match shape {
            Shape::Append => true,
            Shape::Object => old.shape == Shape::Object,
            _ => false,
        };
        if keep {
            return;
        }
        let drop_children = match old.shape {
            Shape::Array => true,
            Shape::Object => shape != Shape::Reference,
            _ => false,
        };
        *old = Entry {
            key: key.or(old.key),
            ..fresh
        };
        if drop_children {
            self.layout
                .entries
                .retain(|p, e| !(p.len() > path.len() && p.starts_with(path) && e.seq <= since));
        }
    }

    fn root(&mut self) {
        let mut path = Vec::new();
        self.skip_newlines();
        let first = self.pos;
        if *self.kind() == TokenKind::LBrace {
            loop {
                self.skip_newlines();
                match self.kind() {
                    TokenKind::Eof => break,
                    TokenKind::LBrace => {
                        self.pos += 1;
                        self.object_body(&mut path, true);
                    }
                    _ => {
                        self.object_body(&mut path, false);
                        break;
                    }
                }
            }
        } else {
            self.object_body(&mut path, false);
        }
        let last = self
            .tokens
            .iter()
            .rposition(|t| !matches!(t.kind, TokenKind::Eof | TokenKind::Newline));
        self.layout.root = match last {
            Some(last) if last >= first => Span::new(self.span(first).start, self.span(last).end),
            _ => Span::new(0, 0),
        };
        self.layout.entries.insert(
            Vec::new(),
            Entry {
                key: None,
                value: self.layout.root,
                shape: Shape::Object,
                seq: 0,
            },
        );
    }

    /// The fields of an object, after its `{` when `braced`.
    fn object_body(&mut self, path: &mut Vec<Step>, braced: bool) {
        loop {
            self.skip_separators();
            let Some(token) = self.tokens.get(self.pos) else {
                break;
            };
            match token.kind {
                TokenKind::Eof => break,
                TokenKind::RBrace => {
                    if braced {
                        self.pos += 1;
                    }
                    break;
                }
                TokenKind::Unquoted if token.value == "include" => self.include(path),
                TokenKind::Unquoted | TokenKind::QuotedString => self.field(path),
                _ => self.pos += 1,
            }
        }
    }

    /// `include "x"`, `include required("x")`, `include file("x")` and the like.
    fn include(&mut self, path: &[Step]) {
        let start = self.span(self.pos).start;
        self.pos += 1;
        self.skip_newlines();
        let mut is_file = false;
        while let Some(token) = self.tokens.get(self.pos)
            && token.kind == TokenKind::Unquoted
        {
            is_file |= token.value == "file" || token.value.contains("file(");
            self.pos += 1;
        }
        let mut target = String::new();
        if let Some(token) = self.tokens.get(self.pos)
            && token.kind == TokenKind::QuotedString
        {
            target = token.value.clone();
            self.pos += 1;
        }
        while let Some(token) = self.tokens.get(self.pos)
            && token.kind == TokenKind::Unquoted
            && !token.value.is_empty()
            && token.value.chars().all(|c| c == ')')
        {
            self.pos += 1;
        }
        let span = Span::new(start, self.last_end());
        if self.record {
            self.layout.includes.insert(path.to_vec(), span);
        }
        self.layout.include_list.push(Include {
            target,
            span,
            is_file,
            path: path.to_vec(),
        });
    }

    /// `key = value`, `key: value`, `key += value`, `key { ... }`.
    fn field(&mut self, path: &mut Vec<Step>) {
        let first = self.pos;
        while matches!(self.kind(), TokenKind::Unquoted | TokenKind::QuotedString) {
            self.pos += 1;
        }
        let segments = self.key_segments(first, self.pos);
        self.skip_newlines();
        let append = match self.kind() {
            TokenKind::Equals | TokenKind::Colon => {
                self.pos += 1;
                false
            }
            TokenKind::PlusEquals => {
                self.pos += 1;
                true
            }
            _ => false,
        };
        self.skip_newlines();

        let depth = path.len();
        let since = self.seq;
        path.extend(segments.iter().map(|(name, _)| Step::Key(name.clone())));
        let record = self.record;
        if append {
            self.record = false;
        }
        let value = self.value(path);
        self.record = record;
        if let (Some((value, shape)), Some((_, key))) = (value, segments.last()) {
            let shape = if append { Shape::Append } else { shape };
            self.record(path, Some(*key), value, shape, since);
            for i in (0..segments.len() - 1).rev() {
                path.truncate(depth + i + 1);
                let implied = Span::new(segments[i + 1].1.start, value.end);
                self.record(path, Some(segments[i].1), implied, Shape::Object, since);
            }
        }
        path.truncate(depth);
    }

    /// The path elements a key's tokens `first..end` spell, each with its span.
    ///
    /// Unquoted text splits at dots, quoted text never does, and tokens that
    /// follow one another with whitespace between them join into one element with
    /// that whitespace kept, as the `hocon` parser does.
    fn key_segments(&self, first: usize, end: usize) -> Vec<(String, Span)> {
        let mut segments: Vec<(String, Span)> = Vec::new();
        let mut after_dot = true;
        for i in first..end {
            let Some(token) = self.tokens.get(i) else {
                break;
            };
            let span = self.span(i);
            let ws = if i == first {
                ""
            } else {
                token.preceding_whitespace.as_str()
            };
            if token.kind == TokenKind::QuotedString {
                add_piece(&mut segments, &mut after_dot, ws, &token.value, span);
                continue;
            }
            let mut at = span.start;
            for (j, piece) in token.value.split('.').enumerate() {
                let piece_span = Span::new(at, at + piece.len());
                at += piece.len() + 1;
                let ws_here = if j == 0 { ws } else { "" };
                if j > 0 {
                    after_dot = true;
                }
                if piece.is_empty() {
                    if j == 0 && !ws_here.is_empty() {
                        match segments.last_mut() {
                            Some(last) if !after_dot => last.0.push_str(ws_here),
                            _ => segments.push((ws_here.to_owned(), piece_span)),
                        }
                    }
                    continue;
                }
                add_piece(&mut segments, &mut after_dot, ws_here, piece, piece_span);
            }
        }
        segments
    }

    /// A value and any concatenation: up to the end of the line, a `,`, or the
    /// enclosing `}` or `]`. Records what it holds below `path`.
    fn value(&mut self, path: &mut Vec<Step>) -> Option<(Span, Shape)> {
        let mut span: Option<Span> = None;
        let mut shapes = Vec::new();
        // The index the next literal list item gets, while it is known.
        let mut base = Some(0);
        let mut def = Def {
            path: path.clone(),
            values: 0,
            bytes: 0,
            refs: Vec::new(),
        };
        loop {
            let start = self.span(self.pos).start;
            def.values += 1;
            let shape = match self.kind() {
                TokenKind::Eof
                | TokenKind::Newline
                | TokenKind::RBrace
                | TokenKind::RBracket
                | TokenKind::Comma
                | TokenKind::PlusEquals => break,
                TokenKind::LBrace => {
                    self.pos += 1;
                    self.object_body(path, true);
                    Shape::Object
                }
                TokenKind::LBracket => {
                    let count = self.array(path, base);
                    base = base.map(|b| b + count);
                    Shape::Array
                }
                TokenKind::Substitution => {
                    if let Some(subst) = &self.tokens[self.pos].subst {
                        let target = subst.segments.iter().map(|s| s.text.clone()).collect();
                        def.refs.push((target, self.span(self.pos)));
                    }
                    def.values -= 1;
                    self.pos += 1;
                    base = None;
                    Shape::Reference
                }
                _ => {
                    def.bytes += self.tokens[self.pos].value.len() as u64;
                    self.pos += 1;
                    Shape::Scalar
                }
            };
            let end = self.last_end();
            span = Some(span.map_or(Span::new(start, end), |s| Span::new(s.start, end)));
            shapes.push(shape);
        }
        // The loop counted one value too many: the token that ended it.
        def.values -= 1;
        if def.values > 0 || !def.refs.is_empty() {
            self.layout.defs.push(def);
        }
        let shape = match shapes.as_slice() {
            [] => return None,
            [one] => *one,
            many if many.contains(&Shape::Scalar) => Shape::Scalar,
            many if many.contains(&Shape::Reference) => Shape::Reference,
            many if many.contains(&Shape::Array) => Shape::Array,
            _ => Shape::Object,
        };
        span.map(|s| (s, shape))
    }

    /// A `[...]` list whose first item has index `base` (unknown when `None`).
    /// Returns how many items it holds.
    fn array(&mut self, path: &mut Vec<Step>, base: Option<usize>) -> usize {
        self.pos += 1;
        let record = self.record;
        if base.is_none() {
            self.record = false;
        }
        let mut count = 0;
        loop {
            self.skip_separators();
            match self.kind() {
                TokenKind::RBracket => {
                    self.pos += 1;
                    break;
                }
                TokenKind::Eof | TokenKind::RBrace => break,
                _ => {}
            }
            let before = self.pos;
            let since = self.seq;
            path.push(Step::Index(base.unwrap_or(0) + count));
            if let Some((span, shape)) = self.value(path) {
                self.record(path, None, span, shape, since);
            }
            path.pop();
            count += 1;
            if self.pos == before {
                self.pos += 1;
            }
        }
        self.record = record;
        count
    }
}

/// Adds one piece of key text: a new path element after a dot (or at the start),
/// otherwise more of the current one.
fn add_piece(
    segments: &mut Vec<(String, Span)>,
    after_dot: &mut bool,
    ws: &str,
    text: &str,
    span: Span,
) {
    match segments.last_mut() {
        Some(last) if !*after_dot => {
            last.0.push_str(ws);
            last.0.push_str(text);
            last.1 = Span::new(last.1.start, span.end);
        }
        _ => segments.push((format!("{ws}{text}"), span)),
    }
    *after_dot = false;
}
