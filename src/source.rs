//! Source files and locations.
//!
//! Every later stage points back at manifest lines, so spans carry the file they belong to.
//! The `SourceMap` owns the text of every file read in a run, for diagnostics with excerpts.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

/// Index of a file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub u32);

/// A 1-based line and column (columns count Unicode code points).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Location {
    pub line: u32,
    pub column: u32,
}

impl Location {
    pub const START: Location = Location { line: 1, column: 1 };
}

impl Default for Location {
    fn default() -> Self {
        Location::START
    }
}

/// A range in one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    pub file: FileId,
    pub start: Location,
    pub end: Location,
}

impl Span {
    pub fn point(file: FileId, at: Location) -> Span {
        Span {
            file,
            start: at,
            end: at,
        }
    }
}

/// One file as read (or rendered) in this run.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// Path as shown to the user: relative to the working directory where possible.
    pub path: PathBuf,
    pub text: Arc<str>,
}

/// All files of a run. Files are only ever added, so a `FileId` stays valid.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    /// The id of the first file: PR mode numbers the base revision's files apart from the
    /// working tree's, so that spans of both can meet in one model and still say which file
    /// they are in.
    first: u32,
    files: Vec<SourceFile>,
}

impl SourceMap {
    /// A map whose files are numbered from `first`.
    pub fn numbered_from(first: u32) -> SourceMap {
        SourceMap {
            first,
            files: Vec::new(),
        }
    }

    pub fn add(&mut self, path: impl Into<PathBuf>, text: impl Into<Arc<str>>) -> FileId {
        let index = u32::try_from(self.files.len()).expect("fewer than 2^32 files");
        let id = FileId(self.first.checked_add(index).expect("fewer than 2^32 files"));
        self.files.push(SourceFile {
            path: path.into(),
            text: text.into(),
        });
        id
    }

    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[(id.0 - self.first) as usize]
    }

    pub fn path(&self, id: FileId) -> &Path {
        &self.file(id).path
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The text of a 1-based line, without its line break.
    pub fn line_text(&self, id: FileId, line: u32) -> Option<&str> {
        // A file registered only as a place (a directory, a missing path) has no lines.
        let text = &self.file(id).text;
        if text.is_empty() {
            return None;
        }
        text.split('\n')
            .nth(line.checked_sub(1)? as usize)
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
    }

    /// Find a file already in the map by path.
    pub fn find(&self, path: &Path) -> Option<FileId> {
        self.files
            .iter()
            .position(|f| f.path == path)
            .map(|i| FileId(self.first + i as u32))
    }
}

/// A value together with the span it was read from.
#[derive(Clone, Debug, PartialEq)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Spanned<T> {
    pub fn new(value: T, span: Span) -> Self {
        Spanned { value, span }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Spanned<U> {
        Spanned {
            value: f(self.value),
            span: self.span,
        }
    }
}

impl<T> std::ops::Deref for Spanned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

/// Line and column of a byte offset, for errors found outside the YAML parser (e.g. invalid UTF-8).
pub fn location_of_offset(bytes: &[u8], offset: usize) -> Location {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    let column = String::from_utf8_lossy(&before[line_start..]).chars().count() as u32 + 1;
    Location { line, column }
}

/// Spans are for diagnostics; serialised forms carry only the value.
impl<T: Serialize> Serialize for Spanned<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(serializer)
    }
}

/// Write `contents` to `path` as a new regular file that replaces whatever entry is there:
/// written beside it, then renamed over it. A symbolic link at `path` (which a pull request
/// can commit where a report goes) is replaced, never followed, so no file elsewhere is
/// overwritten.
pub fn write_replacing(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(std::io::Error::other("it is a directory"));
    }
    // A report is for others to read (a CI upload, the user outside a container): 0644, not
    // a temporary file's 0600.
    let mut file = tempfile::Builder::new()
        .prefix(".kivi-lint-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .tempfile_in(parent)?;
    file.write_all(contents)?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Largest file read; larger ones are input errors. Documented in docs/security.md.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A file that could not be read, and where.
#[derive(Debug)]
pub struct ReadError {
    pub message: String,
    pub location: Location,
}

/// Read a text file with the size limit, reporting invalid UTF-8 at its position.
pub fn read_source(path: &Path) -> Result<String, ReadError> {
    let at_start = |message: String| ReadError {
        message,
        location: Location::START,
    };
    let file = std::fs::File::open(path).map_err(|e| at_start(format!("cannot read {}: {e}", path.display())))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| at_start(format!("cannot read {}: {e}", path.display())))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(at_start(format!(
            "file is larger than {} MiB; not read",
            MAX_FILE_BYTES / (1024 * 1024)
        )));
    }
    // UTF-16 with a byte order mark (Windows editors, PowerShell's `>`): kubectl reads it, so
    // decode it; UTF-8 is what everything else is.
    if let Some(text) = utf16_with_bom(&bytes) {
        return text.ok_or_else(|| at_start("file is UTF-16 (it has a byte order mark) but not valid UTF-16".into()));
    }
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        ReadError {
            location: location_of_offset(e.as_bytes(), offset),
            message: "file is not valid UTF-8".into(),
        }
    })
}

/// `Some` for UTF-16 text with a byte order mark: the decoded text, or `None` if invalid.
fn utf16_with_bom(bytes: &[u8]) -> Option<Option<String>> {
    let little = match bytes {
        [0xFF, 0xFE, ..] => true,
        [0xFE, 0xFF, ..] => false,
        _ => return None,
    };
    let body = &bytes[2..];
    if !body.len().is_multiple_of(2) {
        return Some(None);
    }
    let units = body.chunks_exact(2).map(|p| {
        if little {
            u16::from_le_bytes([p[0], p[1]])
        } else {
            u16::from_be_bytes([p[0], p[1]])
        }
    });
    Some(char::decode_utf16(units).collect::<Result<String, _>>().ok())
}

/// `read_source` for callers that only need the message.
pub fn read_text(path: &Path) -> Result<String, String> {
    read_source(path).map_err(|e| e.message)
}

/// A path as shown to the user: relative to the working directory when below it.
pub fn display_path(path: &Path) -> PathBuf {
    let cwd = std::env::current_dir().ok();
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        match &cwd {
            Some(c) => c.join(path),
            None => path.to_path_buf(),
        }
    };
    let absolute = normalize(&absolute);
    match cwd.as_ref().and_then(|c| absolute.strip_prefix(c).ok()) {
        Some(rel) if rel.as_os_str().is_empty() => PathBuf::from("."),
        Some(rel) => rel.to_path_buf(),
        None => absolute,
    }
}

/// Resolve `.` and `..` lexically, without the file system (paths that climb out of a
/// temporary directory, paths of files that do not exist yet).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
