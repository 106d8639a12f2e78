//! The one place that touches a YAML library, so it can be swapped (`serde_yaml` is
//! unmaintained upstream). Everything else calls [`from_str`] and [`to_string`].

use serde::de::DeserializeOwned;
use serde::Serialize;

/// A YAML error with its 1-based location when the library knows it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct YamlError {
    /// Human-readable message (no location prefix).
    pub message: String,
    /// 1-based line within the parsed text, if known.
    pub line: Option<usize>,
    /// 1-based column within the parsed text, if known.
    pub column: Option<usize>,
}

/// Deserialize YAML text.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    serde_yaml::from_str(text).map_err(|e| {
        let loc = e.location();
        let message = e.to_string();
        // serde_yaml appends " at line N column M"; the location is reported separately.
        let message = match message.find(" at line ") {
            Some(i) => message[..i].to_string(),
            None => message,
        };
        let message = match hint(&message) {
            Some(hint) => format!("{message}. {hint}"),
            None => message,
        };
        YamlError {
            message,
            line: loc.as_ref().map(|l| l.line()),
            column: loc.as_ref().map(|l| l.column()),
        }
    })
}

/// What to do about a YAML syntax error, for the parser messages people meet most (the parser
/// says what it saw, not what the writer meant). `None` for the messages that already say it,
/// like serde's "missing field `name`" or "unknown field `x`, expected one of …".
fn hint(message: &str) -> Option<&'static str> {
    const HINTS: &[(&str, &str)] = &[
        (
            "mapping values are not allowed",
            "Hint: a value that contains \": \" must be quoted, e.g. description: \"Price: today\"; \
             or a line is indented deeper than the field above it",
        ),
        (
            "tab character",
            "Hint: indent with spaces, not tabs",
        ),
        (
            "cannot start any token",
            "Hint: indent with spaces, not tabs, and quote a value that starts with @, ` or %",
        ),
        (
            "did not find expected key",
            "Hint: check the indentation of this line against the fields above it (a list item \
             starts with \"- \" at the same depth as its siblings), and that quotes are closed",
        ),
        (
            "did not find expected ',' or ']'",
            "Hint: a [list] is not closed with ] or its items are not separated by commas",
        ),
        (
            "did not find expected ',' or '}'",
            "Hint: a {map} is not closed with } or its entries are not separated by commas",
        ),
        (
            "found unexpected end of stream",
            "Hint: a quoted value is not closed (a \" or ' is missing)",
        ),
        (
            "did not find expected '-' indicator",
            "Hint: every item of a list starts with \"- \" at the same indentation",
        ),
        (
            "found duplicate key",
            "Hint: a field appears twice; keep one",
        ),
        (
            "duplicate entry with key",
            "Hint: a field appears twice; keep one",
        ),
    ];
    HINTS
        .iter()
        .find(|(needle, _)| message.contains(needle))
        .map(|(_, hint)| *hint)
}

/// Serialize a value as YAML text.
pub fn to_string<T: Serialize>(value: &T) -> Result<String, YamlError> {
    serde_yaml::to_string(value).map_err(|e| YamlError {
        message: e.to_string(),
        line: None,
        column: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_line_of_a_syntax_error() {
        let err = from_str::<serde_json::Value>("a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
        assert!(err.line.is_some(), "{err:?}");
        assert!(!err.message.contains(" at line "));
    }

    #[test]
    fn explains_common_syntax_errors_with_a_hint_and_the_line() {
        let cases = [
            ("name: x\ndescription: Price: now\n", 2, "must be quoted"),
            ("name: x\nlist: [1, 2\nc: 3\n", 2, "not closed with ]"),
            ("name: x\n\tmethod: GET\n", 2, "spaces, not tabs"),
            ("name: x\ndescription: \"open\n", 2, "not closed"),
        ];
        for (text, line, hint) in cases {
            let err = from_str::<serde_json::Value>(text).unwrap_err();
            assert!(err.message.contains(hint), "{text:?}: {err:?}");
            assert!(err.line.is_some_and(|l| l >= line), "{text:?}: {err:?}");
        }
        // Messages that already say what to do are left as they are.
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Named {
            name: String,
        }
        let err = from_str::<Named>("other: 1\n").unwrap_err();
        assert!(!err.message.contains("Hint"), "{err:?}");
    }

    #[test]
    fn round_trips() {
        let v: serde_json::Value = from_str("name: x\nlist: [1, 2]\n").unwrap();
        let text = to_string(&v).unwrap();
        assert_eq!(from_str::<serde_json::Value>(&text).unwrap(), v);
    }
}
