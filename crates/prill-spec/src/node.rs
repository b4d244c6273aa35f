//! The located document tree that every syntax parses into.
//!
//! HOCON, YAML and JSON all become a [`Node`]: a JSON-shaped value in which every
//! value and every object key carries the byte [`Span`] it came from. The validators
//! walk this tree, so an error in any syntax can name its line and column.

use std::fmt;

/// A byte range in a source text, `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// The first byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// A span from `start` to `end` (clamped so that `end >= start`).
    pub fn new(start: usize, end: usize) -> Self {
        Span {
            start,
            end: end.max(start),
        }
    }

    /// The span's length in bytes.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether the span covers no byte.
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

impl From<Span> for miette::SourceSpan {
    fn from(span: Span) -> Self {
        miette::SourceSpan::new(span.start.into(), span.len())
    }
}

/// An object key with the span of its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    /// The key, unquoted.
    pub name: String,
    /// Where the key is written.
    pub span: Span,
}

/// A value and the span it was written at.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The value.
    pub value: Value,
    /// Where the value is written.
    pub span: Span,
}

/// A JSON-shaped value whose children are located [`Node`]s.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer or a float, as JSON holds it.
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// A list.
    Array(Vec<Node>),
    /// An object, keys in the order they were written. Keys are unique.
    Object(Vec<(Key, Node)>),
}

impl Node {
    /// A node at `span`.
    pub fn new(value: Value, span: Span) -> Self {
        Node { value, span }
    }

    /// The value's type, as error messages name it.
    pub fn type_name(&self) -> &'static str {
        self.value.type_name()
    }

    /// The value as `serde_json::Value`, dropping every span.
    pub fn to_json(&self) -> serde_json::Value {
        match &self.value {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Number(n) => serde_json::Value::Number(n.clone()),
            Value::String(s) => serde_json::Value::String(s.clone()),
            Value::Array(items) => {
                serde_json::Value::Array(items.iter().map(Node::to_json).collect())
            }
            Value::Object(entries) => serde_json::Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.name.clone(), v.to_json()))
                    .collect(),
            ),
        }
    }

    /// A tree built from `serde_json::Value`, every node at `span`.
    pub fn from_json(json: &serde_json::Value, span: Span) -> Node {
        let value = match json {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Number(n.clone()),
            serde_json::Value::String(s) => Value::String(s.clone()),
            serde_json::Value::Array(items) => {
                Value::Array(items.iter().map(|v| Node::from_json(v, span)).collect())
            }
            serde_json::Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        (
                            Key {
                                name: k.clone(),
                                span,
                            },
                            Node::from_json(v, span),
                        )
                    })
                    .collect(),
            ),
        };
        Node { value, span }
    }

    /// The entry named `name`, when this is an object that has it.
    pub fn get(&self, name: &str) -> Option<&Node> {
        self.entry(name).map(|(_, v)| v)
    }

    /// The key and value named `name`, when this is an object that has it.
    pub fn entry(&self, name: &str) -> Option<(&Key, &Node)> {
        match &self.value {
            Value::Object(entries) => entries
                .iter()
                .find(|(k, _)| k.name == name)
                .map(|(k, v)| (k, v)),
            _ => None,
        }
    }

    /// The key and value whose name is `name` in any case (`Gist` for `gist`), when
    /// this is an object that has one.
    fn entry_ignoring_case(&self, name: &str) -> Option<(&Key, &Node)> {
        self.as_object()?
            .iter()
            .find(|(k, _)| k.name.eq_ignore_ascii_case(name))
            .map(|(k, v)| (k, v))
    }

    /// The string, when this is one.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The object's entries, when this is one.
    pub fn as_object(&self) -> Option<&[(Key, Node)]> {
        match &self.value {
            Value::Object(entries) => Some(entries),
            _ => None,
        }
    }

    /// The list's items, when this is one.
    pub fn as_array(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    /// Where the value at `path` is written: `path` is a check's path as plans write it
    /// (`interactions[1].response.text.keywords[0]`, `tests[2].assertions[0].must_contain`),
    /// segments separated by `.` with list indices in brackets. The deepest node the
    /// path reaches is given, so a path that goes past what the file wrote (a scalar
    /// where the plan counts list items) still points at its nearest part. A key is
    /// located at the key itself, a list item at the item. `None` when not even the
    /// first segment is in the tree.
    pub fn locate(&self, path: &str) -> Option<Span> {
        self.walk(path).0
    }

    /// [`Node::locate`], with how many of the path's segments are written (`tests`,
    /// `[2]` and `assertions` of `tests[2].assertions[0].must_contain` make 3).
    pub fn locate_counted(&self, path: &str) -> (Option<Span>, usize) {
        let (found, matched, _) = self.walk(path);
        (found, matched)
    }

    /// Whether the whole of `path` is written in this tree (see [`Node::locate`]).
    pub fn has(&self, path: &str) -> bool {
        self.walk(path).2
    }

    /// The deepest place `path` reaches, how many segments reached it, and whether it
    /// reached the path's end.
    fn walk(&self, path: &str) -> (Option<Span>, usize, bool) {
        let mut node = self;
        let mut found = None;
        for (matched, segment) in path_segments(path).into_iter().enumerate() {
            let next = match segment {
                Segment::Key(name) => node
                    .entry(name)
                    .or_else(|| node.entry_ignoring_case(name))
                    .map(|(k, v)| (k.span, v)),
                Segment::Index(i) => node.as_array().and_then(|a| a.get(i)).map(|v| (v.span, v)),
            };
            match next {
                Some((span, child)) => {
                    found = Some(span);
                    node = child;
                }
                None => return (found, matched, false),
            }
        }
        (found, usize::MAX, true)
    }

    /// The value written compactly for an error message, cut to about `max` characters
    /// with a visible `…` marker.
    pub fn preview(&self, max: usize) -> String {
        preview_json(&self.to_json(), max)
    }
}

impl Value {
    /// The type's name as error messages give it: `null`, `boolean`, `integer`,
    /// `number`, `string`, `list` or `object`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "list",
            Value::Object(_) => "object",
        }
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_json())
    }
}

/// One step of a check's path.
enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

/// The steps of `path`: `a.b[2].c` is `a`, `b`, `[2]`, `c`. A bracket that does not
/// hold a number ends the path.
fn path_segments(path: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            out.push(Segment::Key(name));
        }
        while let Some(inner) = rest.strip_prefix('[') {
            let Some(end) = inner.find(']') else {
                return out;
            };
            match inner[..end].parse() {
                Ok(i) => out.push(Segment::Index(i)),
                Err(_) => return out,
            }
            rest = &inner[end + 1..];
        }
    }
    out
}

/// Compact JSON text of `value`, cut to about `max` characters with a `…` marker.
pub fn preview_json(value: &serde_json::Value, max: usize) -> String {
    let text = value.to_string();
    cut(&text, max)
}

/// `text` cut to `max` characters, ending in `…` when it was cut.
pub fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip_keeps_order_and_numbers() {
        let json: serde_json::Value =
            serde_json::from_str(r#"{"b": 1, "a": [19481.0, "x", null, true]}"#).unwrap();
        let node = Node::from_json(&json, Span::new(0, 1));
        assert_eq!(node.to_json(), json);
        assert_eq!(
            node.to_json().to_string(),
            r#"{"b":1,"a":[19481.0,"x",null,true]}"#
        );
        assert_eq!(node.get("b").unwrap().type_name(), "integer");
        assert_eq!(node.get("a").unwrap().type_name(), "list");
    }

    #[test]
    fn preview_cuts_with_marker() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 4), "abc");
    }
}
