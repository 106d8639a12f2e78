//! Markdown files with YAML frontmatter (`config/tools/*.md`, `config/agents/*.md`).
//!
//! A file starts with a line `---`, then YAML, then a line `---`, then the Markdown body.
//! [`split`] returns both parts plus the 1-based line where the YAML starts, so YAML errors can
//! be reported at their line in the file.

/// A file split into its frontmatter and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document<'a> {
    /// The YAML text between the `---` fences.
    pub yaml: &'a str,
    /// 1-based line number, in the file, of the first YAML line.
    pub yaml_first_line: usize,
    /// The Markdown after the closing fence, trimmed.
    pub body: &'a str,
}

/// Why a file could not be split.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrontmatterError {
    /// The first line is not `---`.
    #[error("the file must start with a line `---` followed by YAML frontmatter")]
    Missing,
    /// No closing `---` line.
    #[error("the frontmatter opened on line 1 is never closed: add a line `---` after the YAML")]
    Unclosed,
}

fn is_fence(line: &str) -> bool {
    line.trim_end_matches(['\r', '\n']).trim_end() == "---"
}

/// Split `text` into frontmatter and body.
pub fn split(text: &str) -> Result<Document<'_>, FrontmatterError> {
    let text_no_bom = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text_no_bom.split_inclusive('\n');
    let first = lines.next().ok_or(FrontmatterError::Missing)?;
    if !is_fence(first) {
        return Err(FrontmatterError::Missing);
    }
    let yaml_start = first.len();
    let mut pos = yaml_start;
    for line in lines {
        if is_fence(line) {
            let yaml = &text_no_bom[yaml_start..pos];
            let body = text_no_bom[pos + line.len()..].trim();
            return Ok(Document {
                yaml,
                yaml_first_line: 2,
                body,
            });
        }
        pos += line.len();
    }
    Err(FrontmatterError::Unclosed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_yaml_and_body() {
        let doc = split("---\nname: x\n---\n\nBody text.\n").unwrap();
        assert_eq!(doc.yaml, "name: x\n");
        assert_eq!(doc.yaml_first_line, 2);
        assert_eq!(doc.body, "Body text.");
    }

    #[test]
    fn accepts_crlf_and_bom() {
        let doc = split("\u{feff}---\r\nname: x\r\n---\r\nBody\r\n").unwrap();
        assert_eq!(doc.yaml, "name: x\r\n");
        assert_eq!(doc.body, "Body");
    }

    #[test]
    fn reports_missing_and_unclosed() {
        assert_eq!(split("name: x\n"), Err(FrontmatterError::Missing));
        assert_eq!(split(""), Err(FrontmatterError::Missing));
        assert_eq!(split("---\nname: x\n"), Err(FrontmatterError::Unclosed));
    }
}
