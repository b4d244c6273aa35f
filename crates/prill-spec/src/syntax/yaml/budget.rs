//! What copying a YAML file may cause, bounded: aliases expand, and anchored lists and
//! objects keep a copy for their aliases. Each is held to [`YAML_MAX_ALIAS_VALUES`]
//! values and [`YAML_MAX_ALIAS_BYTES`] bytes of text, charged before the copy is made.

use super::{Builder, error};
use crate::limits::{YAML_MAX_ALIAS_BYTES, YAML_MAX_ALIAS_VALUES, human_bytes};
use crate::node::Span;

/// How tall and how big a finished tree is, to bound alias expansion.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Meta {
    /// Levels of lists and objects: 0 for a scalar.
    pub(super) height: usize,
    /// Values in all, itself included.
    pub(super) size: usize,
    /// Bytes of text in all: its scalars and keys.
    pub(super) bytes: u64,
}

impl Meta {
    /// A scalar of `bytes` bytes of text.
    pub(super) const fn scalar(bytes: usize) -> Meta {
        Meta {
            height: 0,
            size: 1,
            bytes: bytes as u64,
        }
    }
}

/// How much copying a file may cause: what its aliases expand to, and what its
/// anchored lists and objects keep as copies for their aliases, each in values and in
/// bytes of text.
#[derive(Debug, Clone, Copy)]
pub(super) struct Budget {
    pub(super) values: usize,
    pub(super) bytes: u64,
}

impl Budget {
    /// [`YAML_MAX_ALIAS_VALUES`] and [`YAML_MAX_ALIAS_BYTES`].
    pub(super) const LIMITS: Budget = Budget {
        values: YAML_MAX_ALIAS_VALUES,
        bytes: YAML_MAX_ALIAS_BYTES,
    };
    pub(super) const EMPTY: Budget = Budget {
        values: 0,
        bytes: 0,
    };

    /// This much and `meta` more, saturating.
    fn add(self, meta: Meta) -> Budget {
        Budget {
            values: self.values.saturating_add(meta.size),
            bytes: self.bytes.saturating_add(meta.bytes),
        }
    }
}

/// What makes a copy: an alias (its expansion) or an anchored list or object (the
/// copy kept for its aliases). An anchored scalar is copied too, but once, and it is
/// text written in the file: only collections, which anchors nested in each other copy
/// again at every level, are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Copying {
    Alias,
    Anchor,
}

impl Builder<'_> {
    /// Counts a copy of `meta` that an alias or an anchored list or object at `span` is
    /// about to make; past a limit, reports it, stops the file and returns `false`.
    pub(super) fn charge(&mut self, copying: Copying, meta: Meta, span: Span) -> bool {
        let spent = match copying {
            Copying::Alias => &mut self.expanded,
            Copying::Anchor => &mut self.anchored,
        };
        *spent = spent.add(meta);
        let (spent, limits) = (*spent, self.limits);
        let (limit, more) = if spent.values > limits.values {
            (
                format!("{} values", limits.values),
                format!("{} values", meta.size),
            )
        } else if spent.bytes > limits.bytes {
            let limit = format!("{} of text", human_bytes(limits.bytes));
            (limit, approximate_bytes(meta.bytes))
        } else {
            return true;
        };
        let diagnostic = match copying {
            Copying::Alias => {
                let written = &self.source.text[span.start..span.end];
                let message = format!("aliases expand to more than {limit}");
                error("alias-expansion", message, span)
                    .expected(format!("aliases that copy at most {limit} in all"))
                    .found(format!("`{written}`, which copies {more} more"))
                    .help(
                        "each `*alias` copies what its anchor holds, and copies of copies multiply",
                    )
            }
            Copying::Anchor => {
                let message = format!("anchors keep copies of more than {limit}");
                let expected =
                    format!("anchored lists and objects that hold at most {limit} in all");
                let help = "each anchored list or object is kept as a copy for its aliases, \
                            and an anchor inside another is copied again with it";
                error("alias-expansion", message, span)
                    .expected(expected)
                    .found(format!("an anchored list or object that holds {more}"))
                    .help(help)
            }
        };
        self.errors.push(diagnostic);
        self.stopped = true;
        false
    }
    /// The anchor (`&name`) written at `start`, where a collection starts; empty at
    /// `start` when something else (a tag) comes first.
    pub(super) fn anchor_span(&self, start: usize) -> Span {
        let rest = &self.source.text[start..];
        if !rest.starts_with('&') {
            return Span::new(start, start);
        }
        let len = rest
            .find(|c: char| c.is_whitespace() || matches!(c, ',' | '[' | ']' | '{' | '}'))
            .unwrap_or(rest.len());
        Span::new(start, start + len)
    }
}

/// `bytes` to one decimal in the largest unit under it: `48.8 MiB`, `512 bytes`.
fn approximate_bytes(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b >= KIB * KIB * KIB {
        format!("{:.1} GiB", b / (KIB * KIB * KIB))
    } else if b >= KIB * KIB {
        format!("{:.1} MiB", b / (KIB * KIB))
    } else if b >= KIB {
        format!("{:.1} KiB", b / KIB)
    } else {
        format!("{bytes} bytes")
    }
}
