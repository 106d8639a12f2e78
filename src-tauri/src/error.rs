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
    /// The values given for an MCP server's form do not fit it; nothing was sent.
    InvalidAnswer,
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
    /// The system did not open a link or folder (no browser or file manager answered).
    OpenFailed,
    /// Downloading a model failed (the Hub refused, the file was not the one listed, the
    /// connection kept failing); the message says what to do.
    Download,
    /// A model download was paused; its part is kept and pulling it again resumes it.
    Paused,
    /// Signing in to an MCP server failed (refused, timed out, or the OAuth exchange failed).
    SignIn,
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

    /// A database operation failed.
    pub fn database(e: impl std::fmt::Display) -> Self {
        Self::new(ErrorCode::Database, format!("the database failed: {e}"))
    }

    /// No file manager opened the folder `dir`: open it by hand (the app shows its path), or
    /// set a default application for folders.
    pub fn folder_not_opened(dir: &std::path::Path) -> Self {
        let how = if cfg!(target_os = "linux") {
            " (for example `xdg-mime default org.gnome.Nautilus.desktop inode/directory`)"
        } else {
            ""
        };
        Self::new(
            ErrorCode::OpenFailed,
            format!(
                "no file manager opened the folder {}: open it yourself, or set a default \
                 application for folders{how}",
                dir.display()
            ),
        )
    }

    /// The system could not open `what` (a link or a folder) in its default application.
    pub fn open_failed(what: impl std::fmt::Display, e: impl std::fmt::Display) -> Self {
        Self::new(
            ErrorCode::OpenFailed,
            format!("cannot open {what}: {e}; check that a default browser or file manager is set"),
        )
    }
}

// How each engine error reaches the web view, chosen once here so commands use `?` and no two
// commands report the same failure with different codes.

impl From<engine::config_files::FileError> for AppError {
    fn from(e: engine::config_files::FileError) -> Self {
        use engine::config_files::FileError;
        let code = match &e {
            FileError::Outside(..) | FileError::NotFound(_) => ErrorCode::NotFound,
            FileError::Conflict { .. } => ErrorCode::Conflict,
            FileError::Exists(_) => ErrorCode::AlreadyExists,
            FileError::Invalid(_) => ErrorCode::InvalidConfig,
            FileError::Io(_) | _ => ErrorCode::Io,
        };
        Self::new(code, e.to_string())
    }
}

impl AppError {
    /// A save refused for a Settings form: the form shows each problem beside its field, so the
    /// lines name the field, not the file (which the user never sees there).
    pub fn form(e: engine::config_edit::SaveError) -> AppError {
        let lines: Vec<String> = e
            .errors()
            .iter()
            .map(|e| match &e.field {
                Some(f) => format!("{f}: {}", e.message),
                None => e.message.clone(),
            })
            .collect();
        AppError {
            message: lines.join("\n"),
            ..AppError::from(e)
        }
    }
}

impl From<engine::config_edit::SaveError> for AppError {
    fn from(e: engine::config_edit::SaveError) -> Self {
        use engine::config_edit::SaveError;
        let code = match &e {
            SaveError::Invalid(_) => ErrorCode::InvalidConfig,
            SaveError::Io(_) => ErrorCode::Io,
        };
        Self::new(code, e.to_string())
    }
}

/// A draft (tool or agent file) that does not load.
impl From<engine::config::ConfigError> for AppError {
    fn from(e: engine::config::ConfigError) -> Self {
        Self::new(ErrorCode::InvalidConfig, e.to_string())
    }
}

impl From<engine::artifacts::StoreError> for AppError {
    fn from(e: engine::artifacts::StoreError) -> Self {
        use engine::artifacts::StoreError;
        match &e {
            StoreError::NotFound { .. } | StoreError::VersionNotFound { .. } => {
                Self::new(ErrorCode::NotFound, e.to_string())
            }
            StoreError::Exists { .. } => Self::new(ErrorCode::AlreadyExists, e.to_string()),
            StoreError::Io(_) => Self::new(ErrorCode::Io, e.to_string()),
            StoreError::Open(_) | StoreError::Db(_) | _ => Self::database(e),
        }
    }
}

impl From<engine::api::artifacts::ExportError> for AppError {
    fn from(e: engine::api::artifacts::ExportError) -> Self {
        use engine::api::artifacts::ExportError;
        match e {
            ExportError::Store(e) => e.into(),
            e @ ExportError::SingleVersion { .. } => Self::new(ErrorCode::NotFound, e.to_string()),
        }
    }
}

impl From<engine::api::openapi::ImportError> for AppError {
    fn from(e: engine::api::openapi::ImportError) -> Self {
        use engine::api::openapi::ImportError;
        let code = match &e {
            ImportError::NotAUrl(_) | ImportError::Invalid(_) => ErrorCode::InvalidConfig,
            ImportError::Fetch(_) | ImportError::Cancelled | ImportError::Stopped(_) => {
                ErrorCode::Io
            }
        };
        Self::new(code, e.to_string())
    }
}

impl From<engine::api::conversations::StoreFailure> for AppError {
    fn from(e: engine::api::conversations::StoreFailure) -> Self {
        Self::database(e)
    }
}

impl From<engine::conversations::ConflictError> for AppError {
    fn from(e: engine::conversations::ConflictError) -> Self {
        use engine::conversations::ConflictError;
        match e {
            ConflictError::Busy(message) => Self::new(ErrorCode::AlreadyRunning, message),
            ConflictError::Db(e) => Self::database(e),
            e => Self::database(e),
        }
    }
}

impl From<engine::run::AlreadyRunning> for AppError {
    fn from(e: engine::run::AlreadyRunning) -> Self {
        Self::new(ErrorCode::AlreadyRunning, e.to_string())
    }
}

impl From<engine::mcp::elicitation::ElicitationAnswerError> for AppError {
    fn from(e: engine::mcp::elicitation::ElicitationAnswerError) -> Self {
        use engine::mcp::elicitation::ElicitationAnswerError as E;
        let code = match &e {
            E::Unknown(_) => ErrorCode::UnknownRequest,
            E::Invalid(_) => ErrorCode::InvalidAnswer,
        };
        Self::new(code, e.to_string())
    }
}

impl From<engine::interrupts::UnknownRequest> for AppError {
    fn from(e: engine::interrupts::UnknownRequest) -> Self {
        Self::new(ErrorCode::UnknownRequest, e.to_string())
    }
}

impl From<engine::secrets::SecretError> for AppError {
    fn from(e: engine::secrets::SecretError) -> Self {
        use engine::secrets::SecretError;
        let code = match &e {
            SecretError::InvalidName(_) => ErrorCode::InvalidConfig,
            SecretError::Keyring(_) => ErrorCode::Keyring,
            SecretError::Index { .. } | _ => ErrorCode::Io,
        };
        Self::new(code, e.to_string())
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

    /// Every engine error kind a command can return, and the code the web view gets for it.
    /// The rows marked "drifted" had another code when each command chose its own.
    #[test]
    fn each_engine_error_kind_has_one_code() {
        use engine::artifacts::StoreError;
        use engine::config::ConfigError;
        use engine::config_edit::SaveError;
        use engine::config_files::FileError;
        use engine::conversations::ConflictError;
        use engine::secrets::SecretError;

        let invalid = || ConfigError {
            file: "settings.yaml".into(),
            line: Some(2),
            field: None,
            message: "not a number".into(),
        };
        let sqlite = || engine::api::conversations::StoreFailure::new("Query is not read-only");
        let tmp = tempfile::tempdir().unwrap();
        // A real failed write: the config folder is gone.
        let failed_write = engine::config_edit::save_settings(
            &tmp.path().join("gone"),
            &engine::config::Settings::default(),
        )
        .unwrap_err();

        let table: Vec<(AppError, ErrorCode)> = vec![
            (
                FileError::Outside("x".into(), "tools").into(),
                ErrorCode::NotFound,
            ),
            (FileError::NotFound("x".into()).into(), ErrorCode::NotFound),
            (
                FileError::Conflict {
                    path: "x".into(),
                    disk: String::new(),
                }
                .into(),
                ErrorCode::Conflict,
            ),
            (
                FileError::Exists("x".into()).into(),
                ErrorCode::AlreadyExists,
            ),
            (
                FileError::Invalid(vec![invalid()]).into(),
                ErrorCode::InvalidConfig,
            ),
            (FileError::Io("disk full".into()).into(), ErrorCode::Io),
            (
                SaveError::Invalid(vec![invalid()]).into(),
                ErrorCode::InvalidConfig,
            ),
            // drifted: a failed settings write said InvalidConfig.
            (failed_write.into(), ErrorCode::Io),
            (invalid().into(), ErrorCode::InvalidConfig),
            (
                StoreError::NotFound {
                    conversation_id: "c".into(),
                    id: "a".into(),
                }
                .into(),
                ErrorCode::NotFound,
            ),
            (
                StoreError::VersionNotFound {
                    id: "a".into(),
                    version: 3,
                    latest: 2,
                }
                .into(),
                ErrorCode::NotFound,
            ),
            (
                StoreError::Exists {
                    conversation_id: "c".into(),
                    id: "a".into(),
                }
                .into(),
                ErrorCode::AlreadyExists,
            ),
            // drifted: reading an artifact's versions reported a database failure as NotFound.
            (StoreError::Db(sqlite()).into(), ErrorCode::Database),
            (
                StoreError::Io(std::io::Error::other("eio")).into(),
                ErrorCode::Io,
            ),
            (sqlite().into(), ErrorCode::Database),
            (
                ConflictError::Busy("running".into()).into(),
                ErrorCode::AlreadyRunning,
            ),
            (ConflictError::Db(sqlite()).into(), ErrorCode::Database),
            (
                engine::run::AlreadyRunning("running".into()).into(),
                ErrorCode::AlreadyRunning,
            ),
            (
                engine::interrupts::UnknownRequest("r1".into()).into(),
                ErrorCode::UnknownRequest,
            ),
            (
                engine::mcp::elicitation::ElicitationAnswerError::Unknown("e1".into()).into(),
                ErrorCode::UnknownRequest,
            ),
            (
                engine::mcp::elicitation::ElicitationAnswerError::Invalid(vec![
                    engine::mcp::elicitation::FieldError {
                        field: "email".into(),
                        message: "must be an email address".into(),
                    },
                ])
                .into(),
                ErrorCode::InvalidAnswer,
            ),
            // drifted: a bad secret name said Keyring, and so did a failed index write.
            (
                SecretError::InvalidName("1x".into()).into(),
                ErrorCode::InvalidConfig,
            ),
            (
                SecretError::Keyring("locked".into()).into(),
                ErrorCode::Keyring,
            ),
            (
                SecretError::Index {
                    path: "secrets.yaml".into(),
                    source: std::io::Error::other("eio"),
                }
                .into(),
                ErrorCode::Io,
            ),
            // drifted: a link or folder that failed to open said NotFound (or Io).
            (
                AppError::open_failed("https://example.org", "no browser"),
                ErrorCode::OpenFailed,
            ),
        ];
        for (error, code) in table {
            assert_eq!(error.code, code, "{}", error.message);
            assert!(!error.message.is_empty(), "{code:?} has no message");
        }
    }
}
