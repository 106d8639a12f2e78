//! The one error type the web view sees: `{ code, message }` with stable codes.

use serde::Serialize;

/// Stable error codes; the UI reacts to these, never to message text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The engine could not open its folders or database; the message says why.
    EngineUnavailable,
}

/// An error returned by a Tauri command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type, thiserror::Error)]
#[error("{message}")]
pub struct AppError {
    /// What kind of failure.
    pub code: ErrorCode,
    /// A sentence for the user that says what to do.
    pub message: String,
}

impl AppError {
    /// The engine could not be opened.
    pub fn engine_unavailable(e: impl std::fmt::Display) -> Self {
        AppError {
            code: ErrorCode::EngineUnavailable,
            message: format!("ArtifactFlow could not open its data: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_as_code_and_message() {
        let e = AppError::engine_unavailable("disk full");
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({
                "code": "engine_unavailable",
                "message": "ArtifactFlow could not open its data: disk full"
            })
        );
    }
}
