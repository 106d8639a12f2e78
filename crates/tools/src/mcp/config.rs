//! `mcp.json` in the config folder: the `{"mcpServers": {NAME: {...}}}` block Claude Desktop,
//! Cursor, Jan and LM Studio use, so a user can paste what they already have, plus our own
//! optional keys (`disabled`, `permission`, `permissions`, `timeout`).
//!
//! Reading never fails as a whole: a server entry that does not parse becomes a located
//! [`ConfigError`] and the other servers load; a file that is not JSON at all is one error
//! (with its line) and no servers — the hub then keeps the last good servers running.
//!
//! The editors ([`upsert_servers`], [`remove_server`], [`set_disabled`]) rewrite the file
//! keeping every other entry as it was (key order preserved), and refuse to touch a file that
//! does not parse, so a hand edit in progress is never lost.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::config_error::ConfigError;
use crate::tool_spec::Permission;

/// The file's name in the config folder.
pub const FILE: &str = "mcp.json";

/// Default time a tool call may take, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// Every server that loaded, in file order, and the problems found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct McpConfig {
    /// Servers by name, in file order.
    pub servers: IndexMap<String, McpServerConfig>,
    /// Located problems; a server with a problem is not in `servers`.
    pub errors: Vec<ConfigError>,
    /// The file was unreadable or not JSON: nothing in it could be read (keep the last good
    /// servers).
    pub file_broken: bool,
}

/// How to reach one server, and our own settings for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpServerConfig {
    /// Its name (the key in `mcpServers`; the part before the dot in `SERVER.TOOL`).
    pub name: String,
    /// A child process or a remote URL.
    pub transport: McpTransport,
    /// Configured but not started.
    pub disabled: bool,
    /// Default permission of its tools (`confirm` unless set).
    pub permission: Permission,
    /// Per-tool permission, by the server's own tool name.
    pub permissions: BTreeMap<String, Permission>,
    /// How long one tool call may take, in seconds.
    pub timeout_secs: u64,
    /// OAuth settings of a remote server (`"oauth": {...}`); without them, sign-in registers
    /// the app with the server's authorization server (dynamic client registration).
    pub oauth: Option<OAuthConfig>,
}

/// A remote server's `"oauth"` entry: a client registered with its authorization server ahead
/// of time, and the scopes to ask for. Every key is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthConfig {
    /// A pre-registered client id (`client_id` or `clientId`).
    #[serde(default, alias = "clientId", skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Its secret, for a confidential client: write it as a `{{VAR}}` template so the value
    /// stays in the keyring (`client_secret` or `clientSecret`).
    #[serde(
        default,
        alias = "clientSecret",
        skip_serializing_if = "Option::is_none"
    )]
    pub client_secret: Option<String>,
    /// Scopes to ask for; by default those the server names in its challenge or metadata.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// The HTTPS URL of a client ID metadata document, used as the client id by authorization
    /// servers that support them (`client_metadata_url` or `clientMetadataUrl`).
    #[serde(
        default,
        alias = "clientMetadataUrl",
        skip_serializing_if = "Option::is_none"
    )]
    pub client_metadata_url: Option<String>,
}

impl McpServerConfig {
    /// The permission of the server's tool `tool` (its real name).
    pub fn permission_of(&self, tool: &str) -> Permission {
        self.permissions
            .get(tool)
            .copied()
            .unwrap_or(self.permission)
    }
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum McpTransport {
    /// A child process speaking MCP on its stdin/stdout.
    Stdio {
        /// The program (`npx`, `uvx`, a path).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment (values may hold `{{VAR}}` secrets, resolved at start).
        env: IndexMap<String, String>,
        /// Working directory.
        cwd: Option<PathBuf>,
    },
    /// A remote server over Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// Extra headers (values may hold `{{VAR}}` secrets, resolved at connect).
        headers: IndexMap<String, String>,
    },
}

/// One entry as written in the file (both shapes in one, checked by [`server_from_raw`]).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawServer {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: IndexMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: IndexMap<String, String>,
    /// Claude Code/Cursor style: `stdio`, `http`, `streamable-http`, `sse`.
    #[serde(rename = "type", alias = "transport")]
    kind: Option<String>,
    #[serde(default)]
    disabled: bool,
    permission: Option<Permission>,
    #[serde(default)]
    permissions: BTreeMap<String, Permission>,
    timeout: Option<u64>,
    oauth: Option<OAuthConfig>,
}

/// Is `name` a valid server name: ASCII letters, digits, `_` and `-` (no dot: it separates
/// the server from the tool in `SERVER.TOOL`)?
pub fn is_valid_server_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
}

/// Read `config_dir/mcp.json`; a missing file is an empty config.
pub fn load(config_dir: &Path) -> McpConfig {
    let path = config_dir.join(FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => parse(&path, &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => McpConfig::default(),
        Err(e) => McpConfig {
            errors: vec![located(
                &path,
                None,
                None,
                format!("cannot read the file: {e}"),
            )],
            file_broken: true,
            ..Default::default()
        },
    }
}

/// Parse the text of an `mcp.json` (`path` is for error locations only).
pub fn parse(path: &Path, text: &str) -> McpConfig {
    let mut config = McpConfig::default();
    let root: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            config.errors.push(json_error(path, &e, None));
            config.file_broken = true;
            return config;
        }
    };
    let servers = match root.get("mcpServers") {
        Some(Value::Object(servers)) => servers.clone(),
        Some(_) => {
            config.errors.push(located(
                path,
                line_of_key(text, "mcpServers"),
                Some("mcpServers".into()),
                "`mcpServers` must be an object of servers by name".into(),
            ));
            config.file_broken = true;
            return config;
        }
        None if root.is_object() => Map::new(),
        None => {
            config.errors.push(located(
                path,
                Some(1),
                None,
                "the file must be an object like {\"mcpServers\": {\"NAME\": {...}}}".into(),
            ));
            config.file_broken = true;
            return config;
        }
    };
    for (name, value) in servers {
        match server_from_value(&name, value) {
            Ok(server) => {
                config.servers.insert(name, server);
            }
            Err(message) => config.errors.push(located(
                path,
                line_of_key(text, &name),
                Some(format!("mcpServers.{name}")),
                message,
            )),
        }
    }
    config
}

/// One server from its JSON entry, or what is wrong with it.
pub fn server_from_value(name: &str, value: Value) -> Result<McpServerConfig, String> {
    if !is_valid_server_name(name) {
        return Err(format!(
            "server name `{name}` may only use letters, digits, `_` and `-`; rename it"
        ));
    }
    let raw: RawServer =
        serde_json::from_value(value).map_err(|e| format!("server `{name}`: {e}"))?;
    server_from_raw(name, raw)
}

fn server_from_raw(name: &str, raw: RawServer) -> Result<McpServerConfig, String> {
    if let Some(kind) = raw.kind.as_deref() {
        let kind = kind.to_ascii_lowercase();
        if kind == "sse" {
            return Err(format!(
                "server `{name}` uses the legacy SSE transport (\"type\": \"sse\"), which is not supported; use the server's Streamable HTTP endpoint (often `/mcp`) instead"
            ));
        }
        if !matches!(
            kind.as_str(),
            "stdio" | "http" | "streamable-http" | "streamable_http" | "streamablehttp"
        ) {
            return Err(format!(
                "server `{name}`: unknown type `{kind}`; use `stdio` or `http` (Streamable HTTP)"
            ));
        }
    }
    let transport = match (raw.command, raw.url) {
        (Some(_), Some(_)) => {
            return Err(format!(
                "server `{name}` has both `command` and `url`; keep `command` for a local server or `url` for a remote one"
            ))
        }
        (None, None) => {
            return Err(format!(
                "server `{name}` needs `command` (a local server) or `url` (a remote one)"
            ))
        }
        (Some(command), None) => {
            if command.trim().is_empty() {
                return Err(format!("server `{name}`: `command` is empty"));
            }
            McpTransport::Stdio {
                command,
                args: raw.args,
                env: raw.env,
                cwd: raw.cwd,
            }
        }
        (None, Some(url)) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!(
                    "server `{name}`: `url` must start with http:// or https://"
                ));
            }
            McpTransport::Http {
                url,
                headers: raw.headers,
            }
        }
    };
    if raw.oauth.is_some() && matches!(transport, McpTransport::Stdio { .. }) {
        return Err(format!(
            "server `{name}`: `oauth` applies to remote servers (`url`) only; remove it"
        ));
    }
    if raw.timeout == Some(0) {
        return Err(format!(
            "server `{name}`: `timeout` must be at least 1 second"
        ));
    }
    Ok(McpServerConfig {
        name: name.to_string(),
        transport,
        disabled: raw.disabled,
        permission: raw.permission.unwrap_or(Permission::Confirm),
        permissions: raw.permissions,
        timeout_secs: raw.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS),
        oauth: raw.oauth,
    })
}

fn located(path: &Path, line: Option<u32>, field: Option<String>, message: String) -> ConfigError {
    ConfigError {
        file: path.to_path_buf(),
        line,
        field,
        message,
    }
}

fn json_error(path: &Path, e: &serde_json::Error, field: Option<String>) -> ConfigError {
    let line = (e.line() > 0).then_some(e.line() as u32);
    located(
        path,
        line,
        field,
        format!("not valid JSON ({e}); fix it and save again"),
    )
}

/// The 1-based line of the first `"key":` in `text`.
fn line_of_key(text: &str, key: &str) -> Option<u32> {
    let quoted = serde_json::to_string(key).ok()?;
    text.lines()
        .position(|l| {
            l.find(&quoted)
                .is_some_and(|i| l[i + quoted.len()..].trim_start().starts_with(':'))
        })
        .map(|i| i as u32 + 1)
}

/// Why an edit of `mcp.json` was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// The pasted text is not what we accept.
    #[error("{0}")]
    Pasted(String),
    /// The file on disk does not parse; fix it first (it was not changed).
    #[error("{0}; fix it first (mcp.json was not changed)")]
    Broken(ConfigError),
    /// No server of that name.
    #[error("there is no server `{0}` in mcp.json")]
    Unknown(String),
    /// Reading or writing failed.
    #[error("cannot {} {path}: {source}", if *.reading { "read" } else { "write" })]
    Io {
        /// The file.
        path: PathBuf,
        /// It was being read (else written).
        reading: bool,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// Add or replace servers from pasted JSON: either a whole `{"mcpServers": {...}}` block or
/// servers by name (`{"name": {"command": ...}}`). Every pasted server is checked first; the
/// other entries of the file are kept as they were. Returns the names written.
pub fn upsert_servers(path: &Path, pasted: &str) -> Result<Vec<String>, EditError> {
    let value: Value = serde_json::from_str(pasted).map_err(|e| {
        EditError::Pasted(format!(
            "the pasted text is not JSON (line {}, column {}: {e})",
            e.line(),
            e.column()
        ))
    })?;
    let servers = match value {
        Value::Object(mut obj) => match obj.remove("mcpServers") {
            Some(Value::Object(servers)) => servers,
            Some(_) => {
                return Err(EditError::Pasted(
                    "`mcpServers` must be an object of servers by name".into(),
                ))
            }
            None => obj,
        },
        _ => {
            return Err(EditError::Pasted(
                "paste an object: {\"NAME\": {\"command\": ...}} or {\"mcpServers\": {...}}".into(),
            ))
        }
    };
    if servers.is_empty() {
        return Err(EditError::Pasted("the pasted text names no server".into()));
    }
    for (name, entry) in &servers {
        server_from_value(name, entry.clone()).map_err(EditError::Pasted)?;
    }
    edit(path, |map| {
        let names = servers.keys().cloned().collect();
        for (name, entry) in servers {
            map.insert(name, entry);
        }
        Ok(names)
    })
}

/// Remove the server `name`, keeping the others.
pub fn remove_server(path: &Path, name: &str) -> Result<(), EditError> {
    edit(path, |map| {
        map.shift_remove(name)
            .map(|_| ())
            .ok_or_else(|| EditError::Unknown(name.to_string()))
    })
}

/// Set (or clear) `disabled` on the server `name`, keeping everything else.
pub fn set_disabled(path: &Path, name: &str, disabled: bool) -> Result<(), EditError> {
    edit(path, |map| {
        let entry = map
            .get_mut(name)
            .and_then(Value::as_object_mut)
            .ok_or_else(|| EditError::Unknown(name.to_string()))?;
        if disabled {
            entry.insert("disabled".into(), Value::Bool(true));
        } else {
            entry.shift_remove("disabled");
        }
        Ok(())
    })
}

/// Read the file (an absent one is empty), apply `f` to its `mcpServers` map and write it back
/// atomically.
fn edit<T>(
    path: &Path,
    f: impl FnOnce(&mut Map<String, Value>) -> Result<T, EditError>,
) -> Result<T, EditError> {
    let io = |reading, source| EditError::Io {
        path: path.to_path_buf(),
        reading,
        source,
    };
    let mut root = match std::fs::read_to_string(path) {
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(root)) => root,
            Ok(_) => {
                return Err(EditError::Broken(located(
                    path,
                    Some(1),
                    None,
                    "the file is not a JSON object".into(),
                )))
            }
            Err(e) => return Err(EditError::Broken(json_error(path, &e, None))),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(e) => return Err(io(true, e)),
    };
    let servers = root
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(map) = servers else {
        return Err(EditError::Broken(located(
            path,
            None,
            Some("mcpServers".into()),
            "`mcpServers` is not an object".into(),
        )));
    };
    let out = f(map)?;
    let mut text = serde_json::to_string_pretty(&Value::Object(root)).expect("JSON serialises");
    text.push('\n');
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io(false, e))?;
    }
    crate::util::fs::write_atomically(path, text.as_bytes()).map_err(|e| io(false, e))?;
    Ok(out)
}

/// The server `name` of the `mcp.json` at `path` as it is written there, as a
/// `{"mcpServers": {name: entry}}` block to edit (secrets stay `{{VAR}}` references: the file
/// never holds their values).
pub fn server_block(path: &Path, name: &str) -> Result<String, EditError> {
    let text = std::fs::read_to_string(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => EditError::Unknown(name.to_string()),
        _ => EditError::Io {
            path: path.to_path_buf(),
            reading: true,
            source,
        },
    })?;
    let file: Value =
        serde_json::from_str(&text).map_err(|e| EditError::Broken(json_error(path, &e, None)))?;
    let entry = file
        .get("mcpServers")
        .and_then(|servers| servers.get(name))
        .ok_or_else(|| EditError::Unknown(name.to_string()))?;
    let block = serde_json::json!({ "mcpServers": { name: entry } });
    Ok(serde_json::to_string_pretty(&block).expect("JSON serialises"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_is_edited_as_its_own_block() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(
            &path,
            r#"{"mcpServers": {"a": {"command": "x"}, "b": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer {{TOKEN}}"}}}}"#,
        )
        .unwrap();
        let block: Value = serde_json::from_str(&server_block(&path, "b").unwrap()).unwrap();
        assert_eq!(
            block,
            serde_json::json!({"mcpServers": {"b": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer {{TOKEN}}"}}}})
        );
        assert!(matches!(server_block(&path, "c"), Err(EditError::Unknown(n)) if n == "c"));
        std::fs::write(&path, "not json").unwrap();
        assert!(matches!(
            server_block(&path, "a"),
            Err(EditError::Broken(_))
        ));
        assert!(matches!(
            server_block(&dir.path().join("none.json"), "a"),
            Err(EditError::Unknown(_))
        ));
    }

    const FILE_TEXT: &str = r#"{
  "mcpServers": {
    "everything": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-everything"],
      "env": {"TOKEN": "{{MY_TOKEN}}"},
      "permission": "auto",
      "permissions": {"echo": "confirm"},
      "timeout": 5
    },
    "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer <<KEY>>"}},
    "both": {"command": "x", "url": "http://y"},
    "old": {"type": "sse", "url": "http://y/sse"},
    "bad.name": {"command": "x"},
    "off": {"command": "x", "disabled": true}
  }
}"#;

    #[test]
    fn parses_both_shapes_and_locates_each_bad_entry() {
        let c = parse(Path::new("/c/mcp.json"), FILE_TEXT);
        assert!(!c.file_broken);
        assert_eq!(
            c.servers.keys().collect::<Vec<_>>(),
            ["everything", "remote", "off"]
        );
        let e = &c.servers["everything"];
        assert_eq!(e.permission, Permission::Auto);
        assert_eq!(e.permission_of("echo"), Permission::Confirm);
        assert_eq!(e.permission_of("add"), Permission::Auto);
        assert_eq!(e.timeout_secs, 5);
        assert!(
            matches!(&e.transport, McpTransport::Stdio { env, .. } if env["TOKEN"] == "{{MY_TOKEN}}")
        );
        let r = &c.servers["remote"];
        assert_eq!(r.permission, Permission::Confirm, "confirm by default");
        assert_eq!(r.timeout_secs, DEFAULT_TIMEOUT_SECS);
        assert!(c.servers["off"].disabled);

        let by_field = |f: &str| {
            c.errors
                .iter()
                .find(|e| e.field.as_deref() == Some(f))
                .unwrap_or_else(|| panic!("{f}: {:?}", c.errors))
        };
        assert_eq!(by_field("mcpServers.both").line, Some(12));
        assert!(by_field("mcpServers.both").message.contains("both"));
        let sse = by_field("mcpServers.old");
        assert_eq!(sse.line, Some(13));
        assert!(sse.message.contains("legacy SSE"), "{}", sse.message);
        assert!(by_field("mcpServers.bad.name")
            .message
            .contains("letters, digits"));
    }

    #[test]
    fn a_file_that_is_not_json_is_one_located_error() {
        let c = parse(
            Path::new("/c/mcp.json"),
            "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}",
        );
        assert!(c.file_broken);
        assert!(c.servers.is_empty());
        assert_eq!(c.errors.len(), 1);
        assert_eq!(c.errors[0].line, Some(3), "{:?}", c.errors);
    }

    #[test]
    fn edits_keep_the_other_entries() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(FILE);
        std::fs::write(
            &path,
            "{\"mcpServers\": {\"b\": {\"command\": \"b\", \"custom\": 1}}, \"other\": true}",
        )
        .unwrap();
        // One server by name, then a whole block.
        let names = upsert_servers(&path, r#"{"a": {"url": "https://x/mcp"}}"#).unwrap();
        assert_eq!(names, ["a"]);
        let names = upsert_servers(
            &path,
            r#"{"mcpServers": {"c": {"command": "c"}, "a": {"command": "a2"}}}"#,
        )
        .unwrap();
        assert_eq!(names, ["c", "a"]);
        set_disabled(&path, "b", true).unwrap();
        remove_server(&path, "c").unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["other"], true);
        assert_eq!(v["mcpServers"]["b"]["custom"], 1);
        assert_eq!(v["mcpServers"]["b"]["disabled"], true);
        assert_eq!(v["mcpServers"]["a"]["command"], "a2");
        assert!(v["mcpServers"].get("c").is_none());
        set_disabled(&path, "b", false).unwrap();
        let c = load(tmp.path());
        assert!(!c.servers["b"].disabled);

        // Refusals change nothing.
        let before = std::fs::read(&path).unwrap();
        assert!(matches!(
            upsert_servers(&path, r#"{"x": {"url": "ftp://x"}}"#),
            Err(EditError::Pasted(_))
        ));
        assert!(matches!(
            remove_server(&path, "nope"),
            Err(EditError::Unknown(_))
        ));
        std::fs::write(&path, "{ broken").unwrap();
        let err = upsert_servers(&path, r#"{"x": {"command": "x"}}"#).unwrap_err();
        assert!(err.to_string().contains("not changed"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"{ broken");
        let _ = before;
    }
}
