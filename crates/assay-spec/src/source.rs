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
    line_starts: Arc<[usize]>,
}

impl Source {
    /// A source from a path and its text.
    pub fn new(path: impl Into<PathBuf>, text: impl Into<Arc<str>>) -> Self {
        let text: Arc<str> = text.into();
        // Sized once: a large file has tens of thousands of lines, and a vector grown
        // by doubling copies them again at each step.
        let lines = text.bytes().filter(|&b| b == b'\n').count();
        let mut starts = Vec::with_capacity(lines + 1);
        starts.push(0);
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Source {
            path: path.into(),
            text,
            line_starts: starts.into(),
        }
    }

    /// The path as text, for messages.
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }

    /// The 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line];
        let col = self.text[start..floor_char_boundary(&self.text, offset)]
            .chars()
            .count();
        (line + 1, col + 1)
    }

    /// The byte offset of a 1-based line and a 1-based column counted in characters.
    /// Positions past the end are clamped to the end.
    pub fn offset(&self, line: usize, col: usize) -> usize {
        let Some(&start) = self.line_starts.get(line.saturating_sub(1)) else {
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
