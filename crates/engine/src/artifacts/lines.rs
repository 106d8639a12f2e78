//! Line counting and the sparse line index stored with every version.
//!
//! A line is text up to and including `\n`; a final line without `\n` still counts, and an
//! empty text has no lines. The index holds the byte offset (u64, little-endian) of the start
//! of lines 1, 1 + [`LINE_INDEX_STRIDE`], 1 + 2·stride, …, so reaching any line means one
//! lookup plus skipping fewer than `stride` lines.

/// Lines between two index entries.
pub const LINE_INDEX_STRIDE: usize = 1024;

/// The number of lines in `text` and its sparse line index.
pub fn line_index(text: &str) -> (usize, Vec<u8>) {
    let bytes = text.as_bytes();
    if bytes.is_empty() {
        return (0, Vec::new());
    }
    let mut index = Vec::with_capacity(8 * (1 + bytes.len() / (LINE_INDEX_STRIDE * 16)));
    index.extend_from_slice(&0u64.to_le_bytes());
    let mut lines = 1usize;
    for pos in memchr::memchr_iter(b'\n', bytes) {
        if pos + 1 == bytes.len() {
            break;
        }
        if lines % LINE_INDEX_STRIDE == 0 {
            index.extend_from_slice(&((pos + 1) as u64).to_le_bytes());
        }
        lines += 1;
    }
    (lines, index)
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

/// Decode one index entry (an empty or short slice means offset 0).
pub fn decode_offset(entry: &[u8]) -> u64 {
    entry
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .unwrap_or(0)
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
            assert_eq!(line_index(t).0, count_lines(t));
        }
    }

    #[test]
    fn index_points_at_every_strided_line_start() {
        let text: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
        let (n, index) = line_index(&text);
        assert_eq!(n, 5000);
        assert_eq!(index.len(), 8 * 5);
        for (j, entry) in index.chunks(8).enumerate() {
            let off = decode_offset(entry) as usize;
            let expected = format!("line {}\n", j * LINE_INDEX_STRIDE + 1);
            assert!(text[off..].starts_with(&expected), "entry {j}");
        }
    }

    #[test]
    fn line_of_counts_newlines_before() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 2), 2);
        assert_eq!(line_of("a\nb\nc", 4), 3);
    }
}
