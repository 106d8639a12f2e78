//! FTS5 queries from a person's (or a model's) words: each word quoted, so no word is read as
//! FTS5 syntax.

fn quoted(user: &str) -> Vec<String> {
    user.split_whitespace()
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect()
}

/// Every word required, the last one also as a prefix; `None` when there is no word.
pub fn all_words(user: &str) -> Option<String> {
    let words = quoted(user);
    (!words.is_empty()).then(|| format!("{}*", words.join(" ")))
}

/// Every word as written; `None` when there is no word.
pub fn every_word(user: &str) -> Option<String> {
    let words = quoted(user);
    (!words.is_empty()).then(|| words.join(" "))
}

/// Any of the words; `None` when there is no word.
pub fn any_word(user: &str) -> Option<String> {
    let words = quoted(user);
    (!words.is_empty()).then(|| words.join(" OR "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_and_joined() {
        assert_eq!(
            all_words(r#"net "revenue"#).as_deref(),
            Some(r#""net" """revenue"*"#)
        );
        assert_eq!(
            any_word(r#"net "revenue 2023"#).as_deref(),
            Some(r#""net" OR """revenue" OR "2023""#)
        );
        assert_eq!(
            every_word("net revenue").as_deref(),
            Some(r#""net" "revenue""#)
        );
        assert_eq!(all_words("  "), None);
        assert_eq!(any_word(""), None);
    }
}
