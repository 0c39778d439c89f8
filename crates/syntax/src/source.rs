//! Source files, byte spans and line/column lookup.
//!
//! Every AST node carries a [`Span`]: a file id plus a byte range. A [`SourceMap`] owns the file
//! texts so that any later stage can turn a span back into `file:line:col` and a source excerpt.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, RwLock};

/// Index of a file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FileId(pub u32);

/// A byte range `[start, end)` in one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: u32, end: u32) -> Span {
        Span { file, start, end }
    }

    /// The smallest span covering both (they must be in the same file; otherwise `self`).
    pub fn to(self, other: Span) -> Span {
        if self.file != other.file {
            return self;
        }
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// A span that points nowhere (used for synthesized nodes); renders without an excerpt.
    pub const DUMMY: Span = Span {
        file: FileId(u32::MAX),
        start: 0,
        end: 0,
    };

    pub fn is_dummy(&self) -> bool {
        self.file.0 == u32::MAX
    }
}

/// One loaded source file.
#[derive(Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: Arc<str>,
    /// Byte offsets where each line starts; computed on first use (most files parsed in a
    /// batch never need a line number).
    line_starts: OnceLock<Vec<u32>>,
}

impl SourceFile {
    pub fn new(path: PathBuf, text: Arc<str>) -> SourceFile {
        SourceFile {
            path,
            text,
            line_starts: OnceLock::new(),
        }
    }

    fn line_starts(&self) -> &[u32] {
        self.line_starts.get_or_init(|| {
            let mut starts = vec![0u32];
            starts.extend(
                self.text
                    .bytes()
                    .enumerate()
                    .filter(|&(_, b)| b == b'\n')
                    .map(|(i, _)| i as u32 + 1),
            );
            starts
        })
    }

    /// 1-based line and column (column counted in characters) of a byte offset.
    pub fn line_col(&self, offset: u32) -> (u32, u32) {
        let offset = offset.min(self.text.len() as u32);
        let line_starts = self.line_starts();
        let line = match line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l.saturating_sub(1),
        };
        let start = line_starts.get(line).copied().unwrap_or(0) as usize;
        let mut end = offset as usize;
        while end > start && !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let col = self.text[start..end].chars().count() as u32 + 1;
        (line as u32 + 1, col)
    }

    /// Text of a 1-based line, without its line terminator.
    pub fn line_text(&self, line: u32) -> &str {
        let idx = (line as usize).saturating_sub(1);
        let line_starts = self.line_starts();
        let Some(&start) = line_starts.get(idx) else {
            return "";
        };
        let end = line_starts
            .get(idx + 1)
            .map(|&e| e as usize)
            .unwrap_or(self.text.len());
        self.text[start as usize..end].trim_end_matches(['\n', '\r'])
    }
}

/// All source files seen in one run. Cheap to share (`Arc<SourceMap>`); files are only added.
#[derive(Debug, Default)]
pub struct SourceMap {
    files: RwLock<Vec<Arc<SourceFile>>>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    pub fn add(&self, path: impl Into<PathBuf>, text: impl Into<Arc<str>>) -> FileId {
        let file = Arc::new(SourceFile::new(path.into(), text.into()));
        let mut files = self.files.write().unwrap_or_else(|e| e.into_inner());
        files.push(file);
        FileId(files.len() as u32 - 1)
    }

    pub fn get(&self, id: FileId) -> Option<Arc<SourceFile>> {
        let files = self.files.read().unwrap_or_else(|e| e.into_inner());
        files.get(id.0 as usize).cloned()
    }

    pub fn path(&self, id: FileId) -> Option<PathBuf> {
        self.get(id).map(|f| f.path.clone())
    }

    /// `path:line:col` of the start of a span, or `<unknown>` for dummy spans.
    pub fn location(&self, span: Span) -> String {
        match self.get(span.file) {
            Some(f) => {
                let (l, c) = f.line_col(span.start);
                format!("{}:{}:{}", display_path(&f.path), l, c)
            }
            None => "<unknown location>".to_string(),
        }
    }
}

fn display_path(p: &Path) -> String {
    p.display().to_string()
}
