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
        YamlError {
            message,
            line: loc.as_ref().map(|l| l.line()),
            column: loc.as_ref().map(|l| l.column()),
        }
    })
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
    fn round_trips() {
        let v: serde_json::Value = from_str("name: x\nlist: [1, 2]\n").unwrap();
        let text = to_string(&v).unwrap();
        assert_eq!(from_str::<serde_json::Value>(&text).unwrap(), v);
    }
}
