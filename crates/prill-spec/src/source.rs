//! Source files: their text, their syntax, and line:column look-ups.

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The syntax a file is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Syntax {
    /// HOCON (`.hocon`, `.conf`).
    Hocon,
    /// YAML (`.yaml`, `.yml`).
    Yaml,
    /// JSON (`.json`).
    Json,
}

impl Syntax {
    /// The syntax a file name's extension implies, if any.
    pub fn from_path(path: &Path) -> Option<Syntax> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "hocon" | "conf" => Some(Syntax::Hocon),
            "yaml" | "yml" => Some(Syntax::Yaml),
            "json" => Some(Syntax::Json),
            _ => None,
        }
    }

    /// The syntax's lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Syntax::Hocon => "hocon",
            Syntax::Yaml => "yaml",
            Syntax::Json => "json",
        }
    }

    /// The usual file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Syntax::Hocon => "hocon",
            Syntax::Yaml => "yaml",
            Syntax::Json => "json",
        }
    }
}

/// A file's name and text, shared cheaply between diagnostics.
#[derive(Debug, Clone)]
pub struct Source {
    /// The path as the user gave it (or a made-up name for in-memory text).
    pub path: PathBuf,
    /// The whole text.
    pub text: Arc<str>,
    line_starts: LineStarts,
}

/// Where each line starts: in 32 bits for a text under 4 GiB (every file a run
/// reads; half the room of a suite of 100,000 tests' 800,000 lines), else in 64.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LineStarts {
    Short(Arc<[u32]>),
    Long(Arc<[usize]>),
}

impl LineStarts {
    fn of(text: &str) -> LineStarts {
        // Sized once: a large file has tens of thousands of lines, and a vector grown
        // by doubling copies them again at each step.
        let lines = text.bytes().filter(|&b| b == b'\n').count();
        let starts =
            std::iter::once(0).chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        if u32::try_from(text.len()).is_ok() {
            let mut short = Vec::with_capacity(lines + 1);
            short.extend(starts.map(|i| u32::try_from(i).unwrap_or(u32::MAX)));
            LineStarts::Short(short.into())
        } else {
            let mut long = Vec::with_capacity(lines + 1);
            long.extend(starts);
            LineStarts::Long(long.into())
        }
    }

    /// The start of line `i` (0-based), if the text has it.
    fn get(&self, i: usize) -> Option<usize> {
        match self {
            LineStarts::Short(s) => s.get(i).map(|&o| o as usize),
            LineStarts::Long(l) => l.get(i).copied(),
        }
    }

    /// The 0-based line that `offset` is on.
    fn line_of(&self, offset: usize) -> usize {
        let found = match self {
            LineStarts::Short(s) => s.binary_search(&u32::try_from(offset).unwrap_or(u32::MAX)),
            LineStarts::Long(l) => l.binary_search(&offset),
        };
        match found {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }
}

impl Source {
    /// A source from a path and its text.
    pub fn new(path: impl Into<PathBuf>, text: impl Into<Arc<str>>) -> Self {
        let text: Arc<str> = text.into();
        let line_starts = LineStarts::of(&text);
        Source {
            path: path.into(),
            text,
            line_starts,
        }
    }

    /// The path as text, as it is: for structured output (JSON) and file system work.
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }

    /// The path as text for people and logs: on one line, control characters escaped
    /// and never the start of a CI runner's command ([`crate::escape::one_line`]).
    pub fn shown_name(&self) -> String {
        crate::escape::one_line(&self.name()).into_owned()
    }

    /// The 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.line_of(offset);
        let start = self.line_starts.get(line).unwrap_or(0);
        let col = self.text[start..floor_char_boundary(&self.text, offset)]
            .chars()
            .count();
        (line + 1, col + 1)
    }

    /// The byte offset of a 1-based line and a 1-based column counted in characters.
    /// Positions past the end are clamped to the end.
    pub fn offset(&self, line: usize, col: usize) -> usize {
        let Some(start) = self.line_starts.get(line.saturating_sub(1)) else {
            return self.text.len();
        };
        let rest = &self.text[start..];
        let mut offset = start;
        for (i, (byte, ch)) in rest.char_indices().enumerate() {
            if i + 1 >= col || ch == '\n' {
                return start + byte;
            }
            offset = start + byte + ch.len_utf8();
        }
        offset
    }

    /// The byte offset of the `index`-th character (0-based), clamped to the end.
    pub fn char_offset(&self, index: usize) -> usize {
        self.text
            .char_indices()
            .nth(index)
            .map(|(b, _)| b)
            .unwrap_or(self.text.len())
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_and_back() {
        let src = Source::new("x", "ab\nc©d\n\nef");
        assert_eq!(src.line_col(0), (1, 1));
        assert_eq!(src.line_col(3), (2, 1));
        let d = src.text.find('d').unwrap();
        assert_eq!(src.line_col(d), (2, 3));
        assert_eq!(src.offset(2, 3), d);
        assert_eq!(src.offset(4, 2), src.text.find('f').unwrap());
        assert_eq!(src.offset(9, 1), src.text.len());
        assert_eq!(src.char_offset(5), d);
    }

    #[test]
    fn syntax_from_extension() {
        assert_eq!(
            Syntax::from_path(Path::new("a/b.CONF")),
            Some(Syntax::Hocon)
        );
        assert_eq!(Syntax::from_path(Path::new("a.yml")), Some(Syntax::Yaml));
        assert_eq!(Syntax::from_path(Path::new("a.txt")), None);
    }
}
