//! YAML text to a located [`Node`] tree.
//!
//! The tree is built from `saphyr-parser`'s event stream. Plain scalars are typed by
//! the YAML 1.2 core schema only: `null`, `~` and the empty scalar are null; `true`
//! and `false` (in three spellings each) are booleans; decimal, `0o` octal and `0x`
//! hex integers and decimal floats are numbers; everything else, including `yes`,
//! `no`, `on` and `off`, is a string. Quoted and block scalars are always strings.
//! The standard tags `!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, `!!map` and
//! `!!seq` are honoured and any other tag is an error. Aliases are expanded, merge
//! keys (`<<`) are applied, and the file must hold exactly one document.
//!
//! Alias expansion is bounded in values and in bytes of text
//! ([`YAML_MAX_ALIAS_VALUES`](crate::limits::YAML_MAX_ALIAS_VALUES), [`YAML_MAX_ALIAS_BYTES`](crate::limits::YAML_MAX_ALIAS_BYTES), HOCON's cap), counted before
//! each copy is made, so that a small file of aliases to a long string is refused at
//! the alias that passes the limit, not after it has filled the memory. The copies that
//! anchored lists and objects keep for their aliases have the same bounds.

use std::collections::{HashMap, HashSet};

use saphyr_parser::{Event, Marker, Parser, ScalarStyle, ScanError, Tag};

use super::json::{duplicate_key, tidy_message};
use crate::diag::Diagnostic;
use crate::node::{Key, Node, Span, Value};
use crate::source::Source;

mod budget;
mod core;

use self::budget::{Budget, Copying, Meta};
pub(crate) use self::core::{Plain, resolve_plain};
use self::core::{TagKind, core_int, tag_kind, tag_text, unsupported_tag};

/// How deeply lists and objects may nest before the file is refused.
const MAX_DEPTH: usize = 512;

/// The handle `saphyr-parser` resolves `!!` to.
pub(crate) const CORE_HANDLE: &str = "tag:yaml.org,2002:";

/// Parses `source` as a single YAML document.
///
/// Returns the located tree, or every problem found. A scanner error stops parsing;
/// other problems (duplicate keys, unsupported tags, bad merges) are all collected.
pub fn parse(source: &Source) -> Result<Node, Vec<Diagnostic>> {
    parse_items(source, "", None)
}

/// Receives the items of one list of a file as the parser finishes each
/// ([`parse_items`]), so that a large suite's tests need never be held all at once.
pub(crate) trait Items {
    /// The list starts. `before` is the root object as written so far: every entry
    /// before the list's key. Returning `false` declines the items: the list is then
    /// built into the tree as usual.
    fn begin(&mut self, before: Node) -> bool;
    /// Item `index` of the list, finished. The tree keeps nothing of it: the list is
    /// empty in the tree, at the span of all its items.
    fn item(&mut self, index: usize, node: Node);
}

/// [`parse`], handing the items of the list at the root's key `key` to `items` one at
/// a time instead of keeping them in the tree. Only a list that is the value of a
/// root key written before any merge key (`<<`), and that has no anchor, is handed
/// over: any other is kept whole, and `items` is never called.
pub(crate) fn parse_items<'s>(
    source: &'s Source,
    key: &'s str,
    items: Option<&'s mut dyn Items>,
) -> Result<Node, Vec<Diagnostic>> {
    parse_within(source, key, items, Budget::LIMITS)
}

/// [`parse_items`], with `limits` on what aliases and anchors copy.
fn parse_within<'s>(
    source: &'s Source,
    key: &'s str,
    items: Option<&'s mut dyn Items>,
    limits: Budget,
) -> Result<Node, Vec<Diagnostic>> {
    super::values::yaml(&source.text).map_err(|d| vec![*d])?;
    let mut builder = Builder::new(source);
    builder.items = items.map(|sink| (key, sink));
    builder.limits = limits;
    let mut parser = Parser::new_from_str(&source.text);
    while !builder.stopped {
        match parser.next_event() {
            None => break,
            Some(Ok((event, span))) => builder.event(event, span.start, span.end),
            Some(Err(error)) => {
                builder.scan_error(&error);
                break;
            }
        }
    }
    builder.finish()
}

/// Char indices (what `saphyr-parser` counts) to byte offsets, in constant time:
/// the byte offset of every 64th character is kept, and a look-up walks at most 63
/// characters from the nearest one.
struct CharOffsets<'a> {
    text: &'a str,
    /// `None` when the text is ASCII and every index is its own offset.
    checkpoints: Option<Vec<usize>>,
}

const CHECKPOINT_EVERY: usize = 64;

impl<'a> CharOffsets<'a> {
    fn new(text: &'a str) -> Self {
        let checkpoints = (!text.is_ascii()).then(|| {
            let starts = text.char_indices().map(|(b, _)| b);
            starts.step_by(CHECKPOINT_EVERY).collect()
        });
        CharOffsets { text, checkpoints }
    }

    fn byte(&self, char_index: usize) -> usize {
        let Some(checkpoints) = &self.checkpoints else {
            return char_index.min(self.text.len());
        };
        let Some(&start) = checkpoints.get(char_index / CHECKPOINT_EVERY) else {
            return self.text.len();
        };
        self.text[start..]
            .char_indices()
            .nth(char_index % CHECKPOINT_EVERY)
            .map_or(self.text.len(), |(b, _)| start + b)
    }
}

/// A collection being read.
struct Frame {
    anchor: usize,
    start: usize,
    /// One past the last byte of the last child so far.
    end: usize,
    /// The tallest child and the sum of the children's sizes so far.
    children: Meta,
    /// Whether this collection stands where a mapping key should be.
    is_key: bool,
    /// Whether this list's items go to [`Builder::items`] rather than into it.
    handed_over: bool,
    kind: FrameKind,
}

enum FrameKind {
    Seq(Vec<Node>),
    Map(MapFrame),
}

#[derive(Default)]
struct MapFrame {
    items: Vec<MapItem>,
    /// Every explicit key so far, with where it was first written.
    keys: Keys,
    pending: Option<Pending>,
}

/// The keys of one mapping so far, with where each was first written: a list while
/// the mapping is small (most are: a test has a handful of keys, and a list is
/// searched faster than a hash is taken), a hash map once it is not, so that a
/// mapping of 100,000 keys is still checked in linear time.
#[derive(Default)]
struct Keys {
    few: Vec<(String, Span)>,
    many: HashMap<String, Span>,
}

impl Keys {
    /// How many keys a mapping holds before they move to the hash map.
    const FEW: usize = 16;

    fn get(&self, name: &str) -> Option<Span> {
        if self.many.is_empty() {
            self.few.iter().find(|(k, _)| k == name).map(|(_, s)| *s)
        } else {
            self.many.get(name).copied()
        }
    }

    fn insert(&mut self, name: String, span: Span) {
        if self.many.is_empty() && self.few.len() < Keys::FEW {
            self.few.push((name, span));
            return;
        }
        if self.many.is_empty() {
            self.many.extend(self.few.drain(..));
        }
        self.many.insert(name, span);
    }
}

/// An entry as written, before merges are applied.
enum MapItem {
    Entry(Key, Node),
    /// The objects of a `<<` merge key, earlier ones first.
    Merge(Vec<Node>),
}

impl MapItem {
    fn explicit_key(&self) -> Option<String> {
        match self {
            MapItem::Entry(k, _) => Some(k.name.clone()),
            MapItem::Merge(_) => None,
        }
    }
}

/// A key read, waiting for its value.
enum Pending {
    Key(Key),
    Merge(Span),
    /// A key already reported as wrong; its value is read and dropped.
    Skip,
}

/// Builds the tree from events.
struct Builder<'s> {
    source: &'s Source,
    /// The root key whose list's items go elsewhere, and where; taken when that list
    /// starts, so it is offered once.
    items: Option<(&'s str, &'s mut dyn Items)>,
    /// Where the handed-over items go, once their list has started.
    taker: Option<&'s mut dyn Items>,
    /// How many items were handed over.
    handed: usize,
    offsets: CharOffsets<'s>,
    stack: Vec<Frame>,
    anchors: HashMap<usize, (Node, Meta)>,
    /// Each document's root, `None` for a document with nothing in it.
    roots: Vec<Option<Node>>,
    document_starts: Vec<usize>,
    errors: Vec<Diagnostic>,
    /// One past the last byte of the previous event, for finding block scalar headers.
    last_end: usize,
    /// What aliases have expanded to so far.
    expanded: Budget,
    /// What anchored lists and objects keep as copies so far.
    anchored: Budget,
    /// The most each of them may reach.
    limits: Budget,
    stopped: bool,
}

impl<'s> Builder<'s> {
    fn new(source: &'s Source) -> Self {
        Builder {
            source,
            items: None,
            taker: None,
            handed: 0,
            offsets: CharOffsets::new(&source.text),
            stack: Vec::new(),
            anchors: HashMap::new(),
            roots: Vec::new(),
            document_starts: Vec::new(),
            errors: Vec::new(),
            last_end: 0,
            expanded: Budget::EMPTY,
            anchored: Budget::EMPTY,
            limits: Budget::LIMITS,
            stopped: false,
        }
    }

    fn span(&self, start: Marker, end: Marker) -> Span {
        let byte = |m: Marker| self.offsets.byte(m.index());
        Span::new(byte(start), byte(end))
    }

    fn scan_error(&mut self, scan: &ScanError) {
        let at = self.offsets.byte(scan.marker().index());
        let width = self.source.text[at..]
            .chars()
            .next()
            .map_or(0, char::len_utf8);
        let message = match scan.info() {
            "recursion limit exceeded" => "lists and objects nest too deeply".to_owned(),
            info => tidy_message(info),
        };
        self.errors
            .push(error("syntax", message, Span::new(at, at + width)));
        self.stopped = true;
    }

    /// Whether the next node read is a mapping key.
    fn at_key(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Frame { kind: FrameKind::Map(map), .. }) if map.pending.is_none()
        )
    }

    fn event(&mut self, event: Event<'_>, start: Marker, end: Marker) {
        let span = self.span(start, end);
        match event {
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
            Event::DocumentStart(_) => self.document_starts.push(span.start),
            Event::Scalar(text, style, anchor, tag) => {
                self.scalar(&text, style, anchor, tag.as_deref(), span);
            }
            Event::Alias(id) => self.alias(id, span),
            Event::SequenceStart(anchor, tag) => {
                self.open(anchor, tag.as_deref(), span, FrameKind::Seq(Vec::new()));
            }
            Event::MappingStart(anchor, tag) => {
                let map = FrameKind::Map(MapFrame::default());
                self.open(anchor, tag.as_deref(), span, map);
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(span),
        }
        self.last_end = span.end;
    }

    fn scalar(
        &mut self,
        text: &str,
        style: ScalarStyle,
        anchor: usize,
        tag: Option<&Tag>,
        mut span: Span,
    ) {
        if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded) {
            span = self.block_scalar_span(span);
        }
        if self.at_key() {
            if let Some(tag) = tag
                && tag_kind(tag) == TagKind::Unsupported
            {
                let tag_span = self.tag_span(span);
                self.errors.push(unsupported_tag(tag, tag_span));
            }
            let is_merge = text == "<<" && style == ScalarStyle::Plain && tag.is_none();
            if anchor > 0 {
                let node = Node::new(Value::String(text.to_owned()), span);
                self.anchors
                    .insert(anchor, (node, Meta::scalar(text.len())));
            }
            self.key(text.to_owned(), span, is_merge);
            return;
        }
        let empty_root = self.stack.is_empty()
            && text.is_empty()
            && style == ScalarStyle::Plain
            && tag.is_none()
            && anchor == 0;
        if empty_root {
            self.roots.push(None);
            return;
        }
        let value = match self.scalar_value(text, style, tag, span) {
            Ok(value) => value,
            Err(diagnostic) => {
                self.errors.push(*diagnostic);
                Value::Null
            }
        };
        let node = Node::new(value, span);
        let meta = Meta::scalar(text.len());
        if anchor > 0 {
            self.anchors.insert(anchor, (node.clone(), meta));
        }
        self.value(node, meta);
    }

    /// A block scalar's span starts at its content; move it back to the `|` or `>`.
    fn block_scalar_span(&self, span: Span) -> Span {
        let text = &self.source.text;
        if matches!(
            text.as_bytes().get(span.start),
            Some(b'|' | b'>' | b'!' | b'&')
        ) {
            return span;
        }
        let from = self.last_end.min(span.start);
        let mut in_comment = false;
        let mut previous = b' ';
        for (i, &b) in text.as_bytes()[from..span.start].iter().enumerate() {
            match b {
                b'\n' => in_comment = false,
                b'#' if previous.is_ascii_whitespace() => in_comment = true,
                b'|' | b'>' if !in_comment => return Span::new(from + i, span.end),
                _ => {}
            }
            previous = b;
        }
        span
    }

    /// The span of the tag written at the start of `span` (after any anchor).
    fn tag_span(&self, span: Span) -> Span {
        let text = &self.source.text[span.start..span.end];
        let Some(bang) = text.find('!') else {
            return span;
        };
        let len = text[bang..]
            .find(|c: char| c.is_whitespace() || matches!(c, ',' | '[' | ']' | '{' | '}'))
            .unwrap_or(text.len() - bang);
        Span::new(span.start + bang, span.start + bang + len)
    }

    /// The value of a scalar that is not a key, by its style and tag.
    fn scalar_value(
        &self,
        text: &str,
        style: ScalarStyle,
        tag: Option<&Tag>,
        span: Span,
    ) -> Result<Value, Box<Diagnostic>> {
        let Some(tag) = tag else {
            return match style {
                ScalarStyle::Plain => plain_value(text, span),
                _ => Ok(Value::String(text.to_owned())),
            };
        };
        let wrong = |what: &str| {
            Box::new(error("yaml-tag", format!("`{text}` is not {what}"), span).found(text))
        };
        match tag_kind(tag) {
            TagKind::Str | TagKind::NonSpecific => Ok(Value::String(text.to_owned())),
            TagKind::Int => match core_int(text) {
                Some(n) => Ok(Value::Number(n)),
                None => Err(wrong("an integer")),
            },
            TagKind::Float => match resolve_plain(text) {
                Plain::NonFinite => Err(non_finite(span)),
                Plain::Number(n) => {
                    let float = n.as_f64().and_then(serde_json::Number::from_f64);
                    float.map(Value::Number).ok_or_else(|| wrong("a number"))
                }
                _ => Err(wrong("a number")),
            },
            TagKind::Bool => match resolve_plain(text) {
                Plain::Bool(b) => Ok(Value::Bool(b)),
                _ => Err(wrong("a boolean")),
            },
            TagKind::Null => match resolve_plain(text) {
                Plain::Null => Ok(Value::Null),
                _ => Err(wrong("null")),
            },
            TagKind::Unsupported => Err(Box::new(unsupported_tag(tag, self.tag_span(span)))),
            TagKind::Map | TagKind::Seq => {
                let message = format!("the tag `{}` does not fit a scalar", tag_text(tag));
                Err(Box::new(error("yaml-tag", message, self.tag_span(span))))
            }
        }
    }

    fn alias(&mut self, id: usize, span: Span) {
        let written = self.source.text[span.start..span.end].to_owned();
        let Some(&(_, meta)) = self.anchors.get(&id) else {
            let message = format!("the alias `{written}` refers to a node that contains it");
            self.errors.push(error("syntax", message, span));
            self.skip_node(span);
            return;
        };
        if self.stack.len() + meta.height > MAX_DEPTH {
            self.too_deep(span);
            return;
        }
        // Counted before the copy is made: a copy past the limits is never made.
        if !self.charge(Copying::Alias, meta, span) {
            return;
        }
        let Some((anchored, _)) = self.anchors.get(&id) else {
            return;
        };
        let mut node = anchored.clone();
        node.span = span;
        if self.at_key() {
            match key_text(&node) {
                Some(name) => self.key(name, span, false),
                None => self.collection_key(span),
            }
        } else {
            self.value(node, meta);
        }
    }

    fn too_deep(&mut self, span: Span) {
        let message = format!("lists and objects nest more than {MAX_DEPTH} deep");
        self.errors.push(error("syntax", message, span));
        self.stopped = true;
    }

    fn open(&mut self, anchor: usize, tag: Option<&Tag>, span: Span, kind: FrameKind) {
        if self.stack.len() >= MAX_DEPTH {
            self.too_deep(span);
            return;
        }
        if let Some(tag) = tag {
            let fits = match (tag_kind(tag), &kind) {
                (TagKind::NonSpecific, _)
                | (TagKind::Map, FrameKind::Map(_))
                | (TagKind::Seq, FrameKind::Seq(_)) => true,
                (TagKind::Unsupported, _) => {
                    let tag_span = self.tag_span(span);
                    self.errors.push(unsupported_tag(tag, tag_span));
                    true
                }
                _ => false,
            };
            if !fits {
                let what = match kind {
                    FrameKind::Map(_) => "an object",
                    FrameKind::Seq(_) => "a list",
                };
                let message = format!("the tag `{}` does not fit {what}", tag_text(tag));
                self.errors
                    .push(error("yaml-tag", message, self.tag_span(span)));
            }
        }
        let is_key = self.at_key();
        let handed_over = matches!(kind, FrameKind::Seq(_)) && anchor == 0 && self.hand_over(span);
        self.stack.push(Frame {
            anchor,
            start: span.start,
            end: span.end,
            children: Meta::default(),
            is_key,
            handed_over,
            kind,
        });
    }

    /// Whether the list starting at `span` is the one whose items go to
    /// [`Builder::items`], asking it when it is.
    fn hand_over(&mut self, span: Span) -> bool {
        let [root] = self.stack.as_slice() else {
            return false;
        };
        let FrameKind::Map(map) = &root.kind else {
            return false;
        };
        let Some(Pending::Key(key)) = &map.pending else {
            return false;
        };
        if self
            .items
            .as_ref()
            .is_none_or(|(name, _)| key.name != *name)
        {
            return false;
        }
        let Some((_, sink)) = self.items.take() else {
            return false;
        };
        let mut before = Vec::with_capacity(map.items.len());
        for item in &map.items {
            match item {
                MapItem::Entry(key, node) => before.push((key.clone(), node.clone())),
                MapItem::Merge(_) => return false,
            }
        }
        let before = Node::new(Value::Object(before), Span::new(root.start, span.start));
        if !sink.begin(before) {
            return false;
        }
        self.taker = Some(sink);
        true
    }

    fn close(&mut self, span: Span) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        // A flow collection ends at its bracket; a block one at its last child.
        let closer = self.source.text.as_bytes().get(span.start).copied();
        let end = if span.len() == 1 && matches!(closer, Some(b']' | b'}')) {
            span.end
        } else {
            frame.end
        };
        let node_span = Span::new(frame.start, end);
        let value = match frame.kind {
            // Grown by doubling: a list of 3 would keep room for 4, a suite of 10,000
            // tests room for 16,384, for as long as the tree lives.
            FrameKind::Seq(mut items) => {
                items.shrink_to_fit();
                Value::Array(items)
            }
            FrameKind::Map(map) => Value::Object(merge(map)),
        };
        let node = Node::new(value, node_span);
        let meta = Meta {
            height: frame.children.height + 1,
            size: frame.children.size + 1,
            bytes: frame.children.bytes,
        };
        if frame.anchor > 0 {
            if !self.charge(Copying::Anchor, meta, self.anchor_span(frame.start)) {
                return;
            }
            self.anchors.insert(frame.anchor, (node.clone(), meta));
        }
        if frame.is_key {
            self.collection_key(node_span);
        } else {
            self.value(node, meta);
        }
    }

    /// A key has been read in the innermost mapping.
    fn key(&mut self, name: String, span: Span, is_merge: bool) {
        let source = self.source;
        let Some(Frame {
            kind: FrameKind::Map(map),
            end,
            children,
            ..
        }) = self.stack.last_mut()
        else {
            return;
        };
        *end = (*end).max(span.end);
        children.bytes = children.bytes.saturating_add(name.len() as u64);
        if let Some(first) = map.keys.get(&name) {
            self.errors.push(duplicate_key(source, &name, first, span));
            map.pending = Some(Pending::Skip);
            return;
        }
        map.keys.insert(name.clone(), span);
        let pending = if is_merge {
            Pending::Merge(span)
        } else {
            Pending::Key(Key { name, span })
        };
        map.pending = Some(pending);
    }

    /// A list or object stood where a key should be.
    fn collection_key(&mut self, span: Span) {
        let message = "a list or object cannot be a key";
        self.errors
            .push(error("yaml-key", message, span).help("keys must be strings"));
        self.skip_node(span);
    }

    /// Stands in for a node that could not be read, keeping the parent consistent.
    fn skip_node(&mut self, span: Span) {
        match self.stack.last_mut() {
            Some(Frame {
                kind: FrameKind::Map(map),
                ..
            }) if map.pending.is_none() => {
                map.pending = Some(Pending::Skip);
            }
            _ => self.value(Node::new(Value::Null, span), Meta::scalar(0)),
        }
    }

    /// A complete value has been read: hand it to its parent.
    fn value(&mut self, node: Node, meta: Meta) {
        let Some(frame) = self.stack.last_mut() else {
            self.roots.push(Some(node));
            return;
        };
        frame.end = frame.end.max(node.span.end);
        frame.children.height = frame.children.height.max(meta.height);
        frame.children.size += meta.size;
        frame.children.bytes = frame.children.bytes.saturating_add(meta.bytes);
        match &mut frame.kind {
            FrameKind::Seq(_) if frame.handed_over => {
                if let Some(taker) = &mut self.taker {
                    taker.item(self.handed, node);
                }
                self.handed += 1;
            }
            FrameKind::Seq(items) => items.push(node),
            FrameKind::Map(map) => match map.pending.take() {
                Some(Pending::Key(key)) => map.items.push(MapItem::Entry(key, node)),
                Some(Pending::Merge(key_span)) => match merge_sources(node) {
                    Ok(sources) => map.items.push(MapItem::Merge(sources)),
                    Err(span) => {
                        let line = self.source.line_col(key_span.start).0;
                        let message = "the merge key `<<` needs an object or a list of objects";
                        let help = format!(
                            "the `<<` on line {line} merges in other objects, as in `<<: *anchor`"
                        );
                        self.errors
                            .push(error("yaml-merge", message, span).help(help));
                    }
                },
                Some(Pending::Skip) => {}
                // A key event always comes first; a bare value here would be a parser bug.
                None => {}
            },
        }
    }

    fn finish(mut self) -> Result<Node, Vec<Diagnostic>> {
        if self.roots.len() > 1 {
            let at = self.document_starts.get(1).copied().unwrap_or(0);
            let width = if self.source.text[at..].starts_with("---") {
                3
            } else {
                0
            };
            let message = format!("expected one document, found {}", self.roots.len());
            let help = "a spec file holds one document; remove the extra `---` separators";
            self.errors
                .push(error("syntax", message, Span::new(at, at + width)).help(help));
        }
        if !self.errors.is_empty() {
            return Err(self.errors);
        }
        match self.roots.into_iter().next().flatten() {
            Some(root) => Ok(root),
            None => Err(vec![error("syntax", "the file is empty", Span::new(0, 0))]),
        }
    }
}

/// The value of a plain scalar without a tag.
fn plain_value(text: &str, span: Span) -> Result<Value, Box<Diagnostic>> {
    match resolve_plain(text) {
        Plain::Null => Ok(Value::Null),
        Plain::Bool(b) => Ok(Value::Bool(b)),
        Plain::Number(n) => Ok(Value::Number(n)),
        Plain::String => Ok(Value::String(text.to_owned())),
        Plain::NonFinite => Err(non_finite(span)),
        Plain::OutOfRange => {
            let message = format!("the number `{text}` is too large");
            Err(Box::new(
                error("syntax", message, span).help("a number must fit a 64-bit float"),
            ))
        }
    }
}

fn non_finite(span: Span) -> Box<Diagnostic> {
    let help = "json, and so every spec, holds only finite numbers; quote it to make it a string";
    Box::new(
        error(
            "non-finite-number",
            "non-finite numbers are not allowed",
            span,
        )
        .help(help),
    )
}

/// The text of a scalar used as a key through an alias; `None` for a collection.
fn key_text(node: &Node) -> Option<String> {
    match &node.value {
        Value::String(s) => Some(s.clone()),
        Value::Null => Some("null".to_owned()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Array(_) | Value::Object(_) => None,
    }
}

/// The objects a `<<` value merges in, or the span of the value that is not one.
fn merge_sources(node: Node) -> Result<Vec<Node>, Span> {
    match node.value {
        Value::Object(_) => Ok(vec![node]),
        Value::Array(items) => {
            if let Some(bad) = items.iter().find(|n| !matches!(n.value, Value::Object(_))) {
                return Err(bad.span);
            }
            Ok(items)
        }
        _ => Err(node.span),
    }
}

/// The entries of a mapping with its merges applied: explicit keys win over merged
/// ones wherever they are written, and earlier merge sources win over later ones.
/// Merged entries take the place of their `<<`.
fn merge(map: MapFrame) -> Vec<(Key, Node)> {
    let has_merge = map.items.iter().any(|i| matches!(i, MapItem::Merge(_)));
    let mut seen: Option<HashSet<String>> =
        has_merge.then(|| map.items.iter().filter_map(MapItem::explicit_key).collect());
    let mut out = Vec::with_capacity(map.items.len());
    for item in map.items {
        match (item, &mut seen) {
            (MapItem::Entry(k, v), _) => out.push((k, v)),
            (MapItem::Merge(sources), Some(seen)) => {
                let entries = sources.into_iter().flat_map(|source| match source.value {
                    Value::Object(entries) => entries,
                    _ => Vec::new(),
                });
                out.extend(entries.filter(|(k, _)| seen.insert(k.name.clone())));
            }
            (MapItem::Merge(_), None) => {}
        }
    }
    out
}

/// A diagnostic for the whole file (no field path) at `span`.
pub(crate) fn error(code: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
    Diagnostic::new(code, "", message).at(span)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::YAML_MAX_ALIAS_VALUES;

    fn src(text: &str) -> Source {
        Source::new("t.yaml", text)
    }

    fn ok(text: &str) -> Node {
        match parse(&src(text)) {
            Ok(node) => node,
            Err(errors) => panic!("{text:?} failed: {errors:#?}"),
        }
    }

    fn errs(text: &str) -> Vec<Diagnostic> {
        match parse(&src(text)) {
            Ok(node) => panic!("{text:?} parsed as {node}"),
            Err(errors) => errors,
        }
    }

    fn one_err(text: &str, code: &str) -> Diagnostic {
        let e = errs(text);
        assert_eq!(e.len(), 1, "{text:?}: {e:#?}");
        assert_eq!(e[0].code, code, "{text:?}: {e:#?}");
        e.into_iter().next().unwrap()
    }

    fn json(text: &str) -> serde_json::Value {
        ok(text).to_json()
    }

    fn pos(text: &str, span: Span) -> (usize, usize) {
        src(text).line_col(span.start)
    }

    fn slice(text: &str, span: Span) -> &str {
        &text[span.start..span.end]
    }

    #[test]
    fn spans_in_block_style() {
        let text = "# héllo wörld\nname: Ünïcode\nnested:\n  inner: 1\n  list:\n    - a\n    - b: c\n      d: é\nflat:\n- x\n";
        let node = ok(text);
        assert_eq!(pos(text, node.span), (2, 1));
        let (k, v) = node.entry("name").unwrap();
        assert_eq!(pos(text, k.span), (2, 1));
        assert_eq!(pos(text, v.span), (2, 7));
        assert_eq!(slice(text, v.span), "Ünïcode");
        let nested = node.get("nested").unwrap();
        assert_eq!(pos(text, nested.span), (4, 3));
        let (k, v) = nested.entry("inner").unwrap();
        assert_eq!((pos(text, k.span), pos(text, v.span)), ((4, 3), (4, 10)));
        let list = nested.get("list").unwrap();
        assert_eq!(pos(text, list.span), (6, 5));
        let items = list.as_array().unwrap();
        assert_eq!(pos(text, items[0].span), (6, 7));
        assert_eq!(pos(text, items[1].span), (7, 7));
        let (k, v) = items[1].entry("d").unwrap();
        assert_eq!((pos(text, k.span), pos(text, v.span)), ((8, 7), (8, 10)));
        assert_eq!(slice(text, v.span), "é");
        assert!(slice(text, items[1].span).ends_with("d: é"));
        let flat = node.get("flat").unwrap().as_array().unwrap();
        assert_eq!(pos(text, flat[0].span), (10, 3));
    }

    #[test]
    fn spans_in_flow_style() {
        let text = "a: {b: [1, \"twö\", {c: d}], 'e': []}\nf: [ {}, x ]\n";
        let node = ok(text);
        let a = node.get("a").unwrap();
        assert_eq!(slice(text, a.span), "{b: [1, \"twö\", {c: d}], 'e': []}");
        let (k, b) = a.entry("b").unwrap();
        assert_eq!(pos(text, k.span), (1, 5));
        assert_eq!(slice(text, b.span), "[1, \"twö\", {c: d}]");
        let items = b.as_array().unwrap();
        assert_eq!(slice(text, items[1].span), "\"twö\"");
        assert_eq!(slice(text, items[2].span), "{c: d}");
        let (k, v) = a.entry("e").unwrap();
        assert_eq!(slice(text, k.span), "'e'");
        assert_eq!(slice(text, v.span), "[]");
        let f = node.get("f").unwrap().as_array().unwrap();
        assert_eq!(slice(text, f[0].span), "{}");
        assert_eq!(pos(text, f[1].span), (2, 10));
    }

    #[test]
    fn block_scalar_spans_start_at_the_indicator() {
        let text = "a: |\n  one\n  two\nb: >- # c\n\n  folded\n  text\nc: x\n";
        let node = ok(text);
        let a = node.get("a").unwrap();
        assert_eq!(a.as_str(), Some("one\ntwo\n"));
        assert_eq!(pos(text, a.span), (1, 4));
        let b = node.get("b").unwrap();
        assert_eq!(b.as_str(), Some("\nfolded text"));
        assert_eq!(pos(text, b.span), (4, 4));
        assert_eq!(pos(text, node.entry("c").unwrap().0.span), (8, 1));
    }

    #[test]
    fn plain_scalars_follow_the_core_schema() {
        let text = "[null, Null, NULL, ~, true, True, TRUE, false, False, FALSE, 1, -2, +3, 0o17, 0x1F, 0x, 019, \
                    1.5, 19481.0, 1e3, .5, 1., -2.5E-3, 18446744073709551615, 123456789012345678901234, 1_000, 0b11, \
                    tRUE, nULL, 12:30, 2024-01-02, hello world]";
        let v = json(text);
        let expected = serde_json::json!([
            null,
            null,
            null,
            null,
            true,
            true,
            true,
            false,
            false,
            false,
            1,
            -2,
            3,
            15,
            31,
            "0x",
            19,
            1.5,
            19481.0,
            1000.0,
            0.5,
            1.0,
            -0.0025,
            18446744073709551615u64,
            1.2345678901234568e23,
            "1_000",
            "0b11",
            "tRUE",
            "nULL",
            "12:30",
            "2024-01-02",
            "hello world"
        ]);
        assert_eq!(v, expected);
        let items = v.as_array().unwrap();
        assert!(items[18].is_f64(), "19481.0 stays a float");
        assert!(items[10].is_i64());
    }

    #[test]
    fn norway_stays_norway() {
        let v = json("countries: [NO, no, No, yes, Yes, on, Off, y, n]\nnorway: NO\n");
        assert_eq!(
            v,
            serde_json::json!({
                "countries": ["NO", "no", "No", "yes", "Yes", "on", "Off", "y", "n"],
                "norway": "NO"
            })
        );
    }

    #[test]
    fn quoted_and_block_scalars_are_strings() {
        let v = json("- 'true'\n- \"1\"\n- \"null\"\n- |\n  3\n- >-\n  4.5\n- ''\n");
        assert_eq!(
            v,
            serde_json::json!(["true", "1", "null", "3\n", "4.5", ""])
        );
    }

    #[test]
    fn standard_tags_are_honoured() {
        let v = json(
            "- !!str 1\n- !!str true\n- !!int \"7\"\n- !!float 3\n- !!float '2.5'\n- !!bool 'true'\n- !!null ''\n- !!map {a: 1}\n- !!seq [1]\n- ! 12\n- !<tag:yaml.org,2002:int> '9'\n",
        );
        assert_eq!(
            v,
            serde_json::json!(["1", "true", 7, 3.0, 2.5, true, null, {"a": 1}, [1], "12", 9])
        );
        assert!(v[3].is_f64());
    }

    #[test]
    fn tag_errors() {
        let text = "- !must_contain foo\n";
        let d = one_err(text, "yaml-tag");
        assert_eq!(d.message, "unsupported tag `!must_contain`");
        assert_eq!(
            d.help.as_deref(),
            Some("write it as a key: `- must_contain: ...`")
        );
        assert_eq!(slice(text, d.span.unwrap()), "!must_contain");
        let d = one_err("a: !!binary aGk=\n", "yaml-tag");
        assert_eq!(d.message, "unsupported tag `!!binary`");
        let d = one_err("a: !!int abc\n", "yaml-tag");
        assert_eq!(d.message, "`abc` is not an integer");
        one_err("a: !!bool yes\n", "yaml-tag");
        one_err("a: !!str {b: 1}\n", "yaml-tag");
        one_err("a: !thing {b: 1}\n", "yaml-tag");
        one_err("!!map a\n", "yaml-tag");
        // Every bad tag is reported, not only the first.
        assert_eq!(errs("- !a x\n- !b y\n- !!int z\n").len(), 3);
    }

    #[test]
    fn non_finite_numbers_are_refused() {
        for text in ["a: .inf\n", "a: -.Inf\n", "a: .NaN\n", "a: !!float .nan\n"] {
            let d = one_err(text, "non-finite-number");
            assert_eq!(d.message, "non-finite numbers are not allowed");
            assert_eq!(pos(text, d.span.unwrap()), (1, 4));
        }
        let d = one_err("a: 1e400\n", "syntax");
        assert!(d.message.contains("too large"), "{d:?}");
        // As keys they are text.
        assert_eq!(json(".inf: 1\n"), serde_json::json!({".inf": 1}));
    }

    #[test]
    fn scalar_keys_are_their_text() {
        let v = json("1: a\ntrue: b\nnull: c\n~: d\n1.50: e\n\"q\": f\n? g\n: h\n");
        assert_eq!(
            v,
            serde_json::json!({"1": "a", "true": "b", "null": "c", "~": "d", "1.50": "e", "q": "f", "g": "h"})
        );
    }

    #[test]
    fn collection_keys_are_errors() {
        let text = "? [a, b]\n: 1\nok: 2\n? {c: d}\n: 3\n";
        let e = errs(text);
        assert_eq!(e.len(), 2, "{e:#?}");
        assert!(e.iter().all(|d| d.code == "yaml-key"));
        assert_eq!(pos(text, e[0].span.unwrap()), (1, 3));
        assert_eq!(pos(text, e[1].span.unwrap()), (4, 3));
        one_err("{[a]: 1}\n", "yaml-key");
    }

    #[test]
    fn duplicate_keys_are_found_in_small_and_large_mappings() {
        // The first keys of a mapping are kept in a list, the rest in a hash map: a
        // duplicate is found on either side of the change, and only duplicates are.
        for keys in [3, 15, 16, 17, 40] {
            let mut text: String = (0..keys).map(|i| format!("k{i}: {i}\n")).collect();
            assert!(parse(&src(&text)).is_ok(), "{keys} keys");
            text.push_str(&format!("k{}: again\n", keys - 1));
            text.push_str("k0: again\n");
            let e = errs(&text);
            assert_eq!(e.len(), 2, "{keys} keys: {e:#?}");
            assert_eq!(e[0].message, format!("duplicate key `k{}`", keys - 1));
            assert_eq!(e[1].message, "duplicate key `k0`");
            assert!(e[1].help.as_deref().unwrap().contains("line 1"), "{e:#?}");
        }
    }

    #[test]
    fn duplicate_keys_are_all_reported() {
        let text = "a: 1\nb:\n  x: 1\n  x: 2\na: 3\nc: {k: 1, k: 2}\n";
        let e = errs(text);
        assert_eq!(e.len(), 3, "{e:#?}");
        assert!(e.iter().all(|d| d.code == "duplicate-key"));
        assert_eq!(e[0].message, "duplicate key `x`");
        assert_eq!(pos(text, e[0].span.unwrap()), (4, 3));
        assert!(e[0].help.as_deref().unwrap().contains("line 3"));
        assert_eq!(e[1].message, "duplicate key `a`");
        assert_eq!(pos(text, e[1].span.unwrap()), (5, 1));
        assert!(e[1].help.as_deref().unwrap().contains("line 1"));
        assert_eq!(pos(text, e[2].span.unwrap()), (6, 11));
        // Keys that only look alike are different keys.
        // A scalar key is its text, so `1` and `'1'` are the same key.
        one_err("1: a\n'1': b\n", "duplicate-key");
    }

    #[test]
    fn anchors_and_aliases_expand() {
        let text = "base: &b {x: 1, y: [2, 3]}\ncopy: *b\nname: &n hi\nagain: *n\n";
        let node = ok(text);
        assert_eq!(
            node.get("copy").unwrap().to_json(),
            serde_json::json!({"x": 1, "y": [2, 3]})
        );
        assert_eq!(node.get("again").unwrap().as_str(), Some("hi"));
        let copy = node.get("copy").unwrap();
        assert_eq!(slice(text, copy.span), "*b");
        // The children keep the spans of what they copy.
        assert_eq!(pos(text, copy.get("x").unwrap().span), (1, 14));
        let d = one_err("a: *nope\n", "syntax");
        assert!(d.message.contains("unknown anchor"), "{d:?}");
        let d = one_err("a: &x [1, *x]\n", "syntax");
        assert!(d.message.contains("`*x`"), "{d:?}");
    }

    #[test]
    fn merge_keys() {
        let text = "defaults: &d\n  model: m1\n  temperature: 0.5\nother: &o\n  seed: 1\n  model: m0\n\
                    test:\n  <<: [*d, *o]\n  temperature: 0.9\n  name: t\ninline:\n  name: i\n  <<: {name: no, extra: 1}\n";
        let v = json(text);
        assert_eq!(
            v["test"],
            serde_json::json!({"model": "m1", "temperature": 0.9, "seed": 1, "name": "t"})
        );
        let keys: Vec<_> = v["test"].as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["model", "seed", "temperature", "name"]);
        assert_eq!(v["inline"], serde_json::json!({"name": "i", "extra": 1}));
        // A quoted `<<` is an ordinary key.
        assert_eq!(json("'<<': {a: 1}\n"), serde_json::json!({"<<": {"a": 1}}));
        let d = one_err("a:\n  <<: 3\n", "yaml-merge");
        assert_eq!(pos("a:\n  <<: 3\n", d.span.unwrap()), (2, 7));
        one_err("a:\n  <<: [{b: 1}, 2]\n", "yaml-merge");
        one_err("a:\n  <<: {b: 1}\n  <<: {c: 1}\n", "duplicate-key");
    }

    #[test]
    fn alias_bombs_are_stopped() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let p = i - 1;
            text.push_str(&format!("a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"));
        }
        let e = errs(&text);
        assert!(e[0].message.contains("aliases expand"), "{e:#?}");
    }

    /// The errors of `text` parsed with at most `bytes` bytes of text copied by aliases,
    /// and as many by anchors.
    fn errs_within(text: &str, bytes: u64) -> Result<Node, Vec<Diagnostic>> {
        let limits = Budget {
            values: YAML_MAX_ALIAS_VALUES,
            bytes,
        };
        parse_within(&src(text), "", None, limits)
    }

    #[test]
    fn alias_expansion_is_bounded_in_bytes() {
        // A 50 KB string, a list of 1,000 aliases to it and a list of 500 aliases to
        // that list: 51 KB of text, 25 GB once expanded, and 501,500 values, under the
        // values' limit. It is refused at the first alias that passes 64 MiB, the first
        // `*a` of `b`, before that alias is copied: only `a` (50 MB) was built.
        let mut text = format!("s: &s \"{}\"\n", "x".repeat(50_000));
        text.push_str(&format!("a: &a [{}*s]\n", "*s, ".repeat(999)));
        text.push_str(&format!("b: [{}*a]\n", "*a, ".repeat(499)));
        assert!(text.len() < 60_000);
        let d = one_err(&text, "alias-expansion");
        assert_eq!(d.message, "aliases expand to more than 64 MiB of text");
        assert_eq!(pos(&text, d.span.unwrap()), (3, 5), "{d:#?}");
        assert_eq!(slice(&text, d.span.unwrap()), "*a");
        assert_eq!(d.found.as_deref(), Some("`*a`, which copies 47.7 MiB more"));
        assert!(
            d.expected
                .as_deref()
                .unwrap()
                .contains("at most 64 MiB of text")
        );
    }

    #[test]
    fn alias_bytes_count_scalars_and_keys_up_to_the_limit() {
        // `a` holds 10 bytes: the key `k`, 4 bytes, and `v` 6.
        let text = "a: &a {kkkk: vvvvvv}\nb: [*a, *a, *a]\n";
        assert!(errs_within(text, 30).is_ok());
        let e = errs_within(text, 29).unwrap_err();
        assert_eq!(e[0].code, "alias-expansion", "{e:#?}");
        assert_eq!(pos(text, e[0].span.unwrap()), (2, 13));
        // Text written in the file does not count, however long: only copies do.
        let long = format!("a: {}\nb: [{}]\n", "x".repeat(5000), "y, ".repeat(2000));
        assert!(errs_within(&long, 100).is_ok());
        // Nor do a few aliases of ordinary size under the real limits.
        let text = "d: &d {model: m, temperature: 0.5}\nt1: {<<: *d, name: a}\nt2: {<<: *d}\nn: &n hi\nm: *n\n";
        assert_eq!(
            json(text)["t2"],
            serde_json::json!({"model": "m", "temperature": 0.5})
        );
    }

    #[test]
    fn nested_anchors_are_bounded_in_the_copies_they_keep() {
        // Each anchored list keeps a copy of what it holds, so anchors nested in each
        // other copy the same text once per level, with no alias at all: 512 levels
        // around a 1 MB string kept 512 MB.
        let text = format!(
            "{}\"{}\"{}\n",
            "&a [".repeat(3),
            "x".repeat(400),
            "]".repeat(3)
        );
        // Two levels hold 800 bytes of copies; the third passes 1,000.
        let e = errs_within(&text, 1000).unwrap_err();
        assert_eq!(e[0].code, "alias-expansion", "{e:#?}");
        assert_eq!(
            e[0].message,
            "anchors keep copies of more than 1000 bytes of text"
        );
        // At the anchor of the outermost list, the last to be closed.
        assert_eq!(pos(&text, e[0].span.unwrap()), (1, 1));
        assert_eq!(slice(&text, e[0].span.unwrap()), "&a");
        assert!(errs_within(&text, 1200).is_ok());
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = format!("{}{}", "[".repeat(2000), "]".repeat(2000));
        let e = errs(&text);
        assert!(e[0].message.contains("nest"), "{e:#?}");
        // Aliases cannot stack shallow trees into a deep one.
        let mut text = format!("a0: &a0 {}{}\n", "[".repeat(200), "]".repeat(200));
        for i in 1..5 {
            text.push_str(&format!(
                "a{i}: &a{i} {}*a{}{}\n",
                "[".repeat(200),
                i - 1,
                "]".repeat(200)
            ));
        }
        let e = errs(&text);
        assert!(e[0].message.contains("nest"), "{e:#?}");
    }

    #[test]
    fn empty_files_are_errors() {
        for text in ["", "\n\n", "# only a comment\n", "---\n", "--- # c\n...\n"] {
            let d = one_err(text, "syntax");
            assert_eq!(d.message, "the file is empty", "{text:?}");
        }
        // An explicit null is a document.
        assert_eq!(json("~\n"), serde_json::Value::Null);
        assert_eq!(json("--- null\n"), serde_json::Value::Null);
    }

    #[test]
    fn one_document_only() {
        let text = "a: 1\n---\nb: 2\n--- c\n";
        let d = one_err(text, "syntax");
        assert_eq!(d.message, "expected one document, found 3");
        assert_eq!(pos(text, d.span.unwrap()), (2, 1));
        // A leading `---` and a trailing `...` are fine.
        assert_eq!(json("---\na: 1\n...\n"), serde_json::json!({"a": 1}));
    }

    #[test]
    fn scanner_errors_point_at_the_marker() {
        let cases = [
            ("a: [1, 2\n", "syntax"),
            ("a: b: c\n", "syntax"),
            ("a: 'x\n", "syntax"),
            ("key: value\n  bad: indent\n", "syntax"),
            ("- a\nb: c\n", "syntax"),
            ("a: \"\\q\"\n", "syntax"),
        ];
        for (text, code) in cases {
            let d = one_err(text, code);
            assert!(d.span.is_some(), "{text:?}");
            let first = d.message.chars().next().unwrap();
            assert!(
                !first.is_uppercase() && !d.message.ends_with('.'),
                "{text:?}: {}",
                d.message
            );
        }
        let text = "ünï: ok\nb: c: d\n";
        let d = one_err(text, "syntax");
        assert_eq!(pos(text, d.span.unwrap()).0, 2, "{d:?}");
    }

    #[test]
    fn byte_order_mark_and_crlf() {
        let text = "\u{feff}a: 1\r\nbé: \"x\"\r\nc:\r\n  - y\r\n";
        let node = ok(text);
        assert_eq!(
            node.to_json(),
            serde_json::json!({"a": 1, "bé": "x", "c": ["y"]})
        );
        let (k, v) = node.entry("bé").unwrap();
        assert_eq!(slice(text, k.span), "bé");
        assert_eq!(slice(text, v.span), "\"x\"");
        assert_eq!(
            pos(text, node.get("c").unwrap().as_array().unwrap()[0].span),
            (4, 5)
        );
    }

    #[test]
    fn char_offsets_match_source() {
        let text = "aé😀b\nc".repeat(100);
        let source = src(&text);
        let offsets = CharOffsets::new(&text);
        for i in 0..=text.chars().count() + 2 {
            assert_eq!(offsets.byte(i), source.char_offset(i), "{i}");
        }
    }

    #[test]
    fn a_large_document_parses() {
        let mut text = String::new();
        for i in 0..25_000 {
            text.push_str(&format!(
                "- name: välue {i} ✓\n  n: {i}.5\n  tags: [a, b]\n"
            ));
        }
        assert!(text.len() > 1_000_000);
        let node = ok(&text);
        let items = node.as_array().unwrap();
        assert_eq!(items.len(), 25_000);
        let last = items[24_999].get("name").unwrap();
        assert_eq!(slice(&text, last.span), "välue 24999 ✓");
    }
}
