//! The name rules that files, forms and parsed calls are checked against.

/// Is `name` a valid tool name: one or more ASCII letters, digits, `_`, `-`, `.`, `:`?
pub fn is_valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
}

/// Is `name` a valid secret name (`A-Z`, `a-z`, `0-9`, `_`, not starting with a digit)?
pub fn is_valid_secret_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
