//! Line counting and the split of a version's content into stored chunks.
//!
//! A line is text up to and including `\n`; a final line without `\n` still counts, and an
//! empty text has no lines. Each version is stored as chunks of about [`CHUNK_TARGET_BYTES`],
//! cut only at line boundaries and keyed by the number of their first line, so a page of lines
//! is read from the one or two chunks that hold it, whatever the artifact's size.

/// The size a chunk is cut at: the last line boundary at or before it, or (when one line is
/// longer) the end of that line.
pub const CHUNK_TARGET_BYTES: usize = 64 * 1024;

/// One stored piece of a version: whole lines, starting at line `first_line` (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk<'a> {
    /// The number of the chunk's first line.
    pub first_line: usize,
    /// The text: whole lines (the last chunk's last line may lack its `\n`).
    pub text: &'a str,
}

/// The number of lines in `text` and its chunks of about `target` bytes (`target` > 0), in
/// order. An empty text has no chunks; concatenated, the chunks are `text`.
pub fn split_chunks(text: &str, target: usize) -> (usize, Vec<Chunk<'_>>) {
    let bytes = text.as_bytes();
    let target = target.max(1);
    let mut chunks = Vec::with_capacity(bytes.len() / target + 1);
    let mut start = 0usize;
    let mut line = 1usize;
    while start < bytes.len() {
        let end = if bytes.len() - start <= target {
            bytes.len()
        } else {
            match memchr::memrchr(b'\n', &bytes[start..start + target]) {
                Some(p) => start + p + 1,
                None => memchr::memchr(b'\n', &bytes[start + target..])
                    .map_or(bytes.len(), |p| start + target + p + 1),
            }
        };
        // Both ends follow a `\n` (or are the text's ends), so they are char boundaries.
        let piece = &text[start..end];
        chunks.push(Chunk {
            first_line: line,
            text: piece,
        });
        line += count_lines(piece);
        start = end;
    }
    (line - 1, chunks)
}

/// The number of lines in `text`.
pub fn count_lines(text: &str) -> usize {
    let n = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    if text.is_empty() || text.ends_with('\n') {
        n
    } else {
        n + 1
    }
}

/// The 1-based line number of byte `pos` in `text`.
pub fn line_of(text: &str, pos: usize) -> usize {
    1 + memchr::memchr_iter(b'\n', &text.as_bytes()[..pos.min(text.len())]).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_lines_like_an_editor() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\nb"), 2);
        assert_eq!(count_lines("\n\n"), 2);
        for t in ["", "a", "a\n", "a\nb", "\n\n"] {
            for target in [1, 2, 64] {
                assert_eq!(split_chunks(t, target).0, count_lines(t));
            }
        }
    }

    fn check_chunks(text: &str, target: usize) {
        let (n, chunks) = split_chunks(text, target);
        assert_eq!(n, count_lines(text), "{text:?} / {target}");
        let joined: String = chunks.iter().map(|c| c.text).collect();
        assert_eq!(joined, text);
        let mut next_line = 1;
        for (i, c) in chunks.iter().enumerate() {
            assert!(!c.text.is_empty());
            assert_eq!(c.first_line, next_line, "{text:?} / {target}");
            next_line += count_lines(c.text);
            if i + 1 < chunks.len() {
                assert!(c.text.ends_with('\n'), "cut inside a line: {c:?}");
                // Cut at the last line boundary that fits, unless one line is longer.
                let first_len = c.text.find('\n').unwrap() + 1;
                assert!(c.text.len() <= target || first_len == c.text.len());
                let next_line_len = chunks[i + 1].text.find('\n').map_or(usize::MAX, |p| p + 1);
                assert!(c.text.len().saturating_add(next_line_len) > target);
            }
        }
    }

    #[test]
    fn chunks_are_whole_lines_numbered_from_their_first_line() {
        let text: String = (1..=20_000).map(|i| format!("line {i}\n")).collect();
        let (n, chunks) = split_chunks(&text, CHUNK_TARGET_BYTES);
        assert_eq!(n, 20_000);
        assert!(chunks.len() > 1);
        for c in &chunks {
            assert!(c.text.starts_with(&format!("line {}\n", c.first_line)));
        }
        for t in [
            "",
            "a",
            "a\n",
            "\n\n\n",
            "abc\ndefgh\nij",
            "a very long line\nx\n",
            "x\na very long line without end",
            "ä€😀\n😀😀😀😀\nü",
        ] {
            for target in 1..12 {
                check_chunks(t, target);
            }
        }
        check_chunks(&text, 100);
        check_chunks(&text, CHUNK_TARGET_BYTES);
    }

    #[test]
    fn line_of_counts_newlines_before() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 2), 2);
        assert_eq!(line_of("a\nb\nc", 4), 3);
    }
}
