//! The one error type the web view sees: `{ code, message }` with stable codes.

use serde::Serialize;

/// Stable error codes; the UI reacts to these, never to message text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The engine could not open its folders or database; the message says why.
    EngineUnavailable,
    /// The conversation already has a run in progress.
    AlreadyRunning,
    /// A permission answer for a request that is no longer pending.
    UnknownRequest,
    /// A configuration change did not validate; nothing was written.
    InvalidConfig,
    /// The OS keyring refused.
    Keyring,
    /// Reading or writing the database failed.
    Database,
    /// Something the user named does not exist.
    NotFound,
    /// The file changed on disk since the editor read it; nothing was written.
    Conflict,
    /// The name is taken; nothing was written.
    AlreadyExists,
    /// Reading or writing a file failed.
    Io,
    /// Checking for, downloading or installing an update failed.
    Update,
    /// A link the app does not open (only http, https and mailto open, outside the app).
    LinkRefused,
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
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        AppError {
            code,
            message: message.into(),
        }
    }

    /// The engine could not be opened.
    pub fn engine_unavailable(e: impl std::fmt::Display) -> Self {
        Self::new(
            ErrorCode::EngineUnavailable,
            format!("ArtifactFlow could not open its data: {e}"),
        )
    }

    /// A config file operation failed.
    pub fn file(e: engine::config_files::FileError) -> Self {
        use engine::config_files::FileError;
        let code = match &e {
            FileError::Outside(..) | FileError::NotFound(_) => ErrorCode::NotFound,
            FileError::Conflict { .. } => ErrorCode::Conflict,
            FileError::Exists(_) => ErrorCode::AlreadyExists,
            FileError::Invalid(_) => ErrorCode::InvalidConfig,
            _ => ErrorCode::Io,
        };
        Self::new(code, e.to_string())
    }

    /// A database operation failed.
    pub fn database(e: impl std::fmt::Display) -> Self {
        Self::new(ErrorCode::Database, format!("the database failed: {e}"))
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
        assert_eq!(
            serde_json::to_value(ErrorCode::AlreadyRunning).unwrap(),
            "already_running"
        );
        assert_eq!(
            serde_json::to_value(ErrorCode::UnknownRequest).unwrap(),
            "unknown_request"
        );
    }
}
