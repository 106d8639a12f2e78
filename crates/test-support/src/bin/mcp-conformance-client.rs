//! The client the official MCP conformance suite (`@modelcontextprotocol/conformance`) tests:
//! `mcp-conformance-client URL`, with the scenario in `MCP_CONFORMANCE_SCENARIO` and, for some,
//! data in `MCP_CONFORMANCE_CONTEXT` (JSON). Run by `scripts/mcp-conformance.sh`.
//!
//! It is built on the engine's MCP module as the app uses it: the server is an `mcp.json`
//! entry (`mcp::config::server_from_value`), the session is `mcp::connect`, elicitation is
//! answered with the schema's defaults (`AcceptDefaults`, the CLI's `--accept-defaults`), and a
//! server that wants authorization gets `mcp::auth::sign_in` — the app's sign-in with its
//! tokens in the keyring (the script runs it in a private keyring session), the browser
//! replaced by a headless redirect follower. Every scenario does what a user's session does:
//! connect (signing in when the server says so), list the tools, build what a model is given of
//! each, call each one (a call the server answers with an error is that tool's error, and the
//! session goes on); a call refused for insufficient scope signs in again for more (step-up),
//! at most [`MAX_SIGN_INS`] times.
//!
//! A server that lists [`ECHO_TOOL`] (the suite's `json-schema-2020-12-preservation`) gets, as
//! its `schema` argument, the input schema the engine keeps for the other tool listed and sends
//! to a model in native tool calling (`McpTool`'s spec): what survives our own parsing.

use std::sync::Arc;

use engine::mcp::auth::{self, SignInError};
use engine::mcp::client::AcceptDefaults;
use engine::mcp::config::server_from_value;
use engine::mcp::{connect, ConnectOptions, McpClient, McpError, McpServerConfig, McpTool};
use engine::secrets::{SecretResolver, SecretStore};
use engine::tools::Tool;
use serde_json::{json, Map, Value};

/// Sign-ins one session may do before it gives up (a server that keeps asking for more scope
/// must not loop forever).
const MAX_SIGN_INS: u32 = 3;

/// The client ID metadata document URL offered to authorization servers that support them
/// (the suite's authorization server checks that it is used as the client id).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The suite's tool that echoes back the schema a client kept for another tool.
const ECHO_TOOL: &str = "json_schema_echo";

#[tokio::main]
async fn main() {
    // The suite appends the server URL to the command: the last argument.
    let Some(url) = std::env::args().skip(1).next_back() else {
        eprintln!(
            "usage: mcp-conformance-client SERVER_URL (scenario in MCP_CONFORMANCE_SCENARIO)"
        );
        std::process::exit(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    match run(&url, &scenario, &context).await {
        Ok(()) => eprintln!("{scenario}: done"),
        Err(e) => {
            eprintln!("{scenario}: {e}");
            std::process::exit(1);
        }
    }
}

/// The `mcp.json` entry for the scenario's server.
fn server_config(url: &str, context: &Value) -> Result<McpServerConfig, String> {
    let mut oauth = Map::new();
    oauth.insert("client_metadata_url".into(), json!(CLIENT_METADATA_URL));
    // Pre-registration: the suite hands over the client it registered out of band.
    if let Some(id) = context.get("client_id").and_then(Value::as_str) {
        oauth.insert("client_id".into(), json!(id));
        if let Some(secret) = context.get("client_secret").and_then(Value::as_str) {
            oauth.insert("client_secret".into(), json!(secret));
        }
    }
    // One name per process: the suite runs scenarios in parallel, and a server's tokens are
    // keyed by its name.
    server_from_value(
        &format!("conformance-{}", std::process::id()),
        json!({"url": url, "oauth": oauth, "timeout": 20}),
    )
}

async fn run(url: &str, scenario: &str, context: &Value) -> Result<(), String> {
    let cfg = server_config(url, context)?;
    // The keyring entries of this run: a private service name (the script also gives it a
    // private keyring session), cleared before and after.
    let data = std::env::temp_dir().join(format!("mcp-conformance-{}", std::process::id()));
    let store = SecretStore::new(
        std::env::var("ARTIFACTFLOW_KEYRING_SERVICE")
            .unwrap_or_else(|_| "artifactflow-mcp-conformance".into()),
        data.join("secret-names.json"),
    );
    let _ = auth::sign_out(&store, &cfg.name);
    let secrets = Arc::new(SecretResolver::new(Some(store.clone()), None));
    let opts = ConnectOptions {
        secrets: Some(secrets.clone()),
        elicitation: Arc::new(AcceptDefaults),
        ..Default::default()
    };
    let mut session = Session {
        cfg,
        opts,
        secrets,
        sign_ins: 0,
    };
    let outcome = session.exercise(scenario, context).await;
    let _ = auth::sign_out(&store, &session.cfg.name);
    let _ = std::fs::remove_dir_all(&data);
    outcome
}

struct Session {
    cfg: McpServerConfig,
    opts: ConnectOptions,
    secrets: Arc<SecretResolver>,
    sign_ins: u32,
}

impl Session {
    /// Connect, list, call every tool — signing in whenever the server asks.
    async fn exercise(&mut self, scenario: &str, context: &Value) -> Result<(), String> {
        let mut client = Arc::new(self.connect().await?);
        let tools = match client.list_tools().await {
            Ok(t) => t,
            Err(McpError::NeedsSignIn { challenge }) => {
                self.sign_in(challenge.as_deref()).await?;
                client = Arc::new(self.connect().await?);
                client.list_tools().await.map_err(|e| e.to_string())?
            }
            Err(e) => return Err(format!("tools/list: {e}")),
        };
        eprintln!(
            "{scenario}: {} tools: {:?}",
            tools.len(),
            tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>()
        );
        // The schema the engine keeps of the tool beside the echo tool, as a model would get it.
        let kept_schema = tools
            .iter()
            .find(|t| t.name != ECHO_TOOL)
            .filter(|_| tools.iter().any(|t| t.name == ECHO_TOOL))
            .map(|focal| {
                McpTool::new(focal.name.to_string(), focal, &self.cfg, client.clone())
                    .spec()
                    .json_schema()
            });
        for tool in &tools {
            // What a model is given of the tool (the schema as the engine reads it: a local
            // `$ref` followed, a network one never fetched; `json-schema-ref-no-deref`).
            let _spec = McpTool::new(tool.name.to_string(), tool, &self.cfg, client.clone()).spec();
            let mut args = arguments(tool, context);
            if let (true, Some(schema)) = (tool.name == ECHO_TOOL, &kept_schema) {
                args.insert("schema".into(), schema.clone());
            }
            loop {
                let cancel = tokio_util::sync::CancellationToken::new();
                match client
                    .call_tool(&tool.name, args.clone(), &cancel, None)
                    .await
                {
                    Ok(result) => {
                        eprintln!(
                            "{}: {}",
                            tool.name,
                            serde_json::to_string(&result.content).unwrap_or_default()
                        );
                        break;
                    }
                    // 403 insufficient_scope (step-up) or 401: sign in again, reconnect, retry.
                    Err(McpError::NeedsSignIn { challenge }) => {
                        client.shutdown().await;
                        self.sign_in(challenge.as_deref()).await?;
                        client = Arc::new(self.connect().await?);
                    }
                    // The server refused the call: the model would get this error as the
                    // tool's result, and the session goes on.
                    Err(McpError::Server(message)) => {
                        eprintln!(
                            "{}: the server answered with an error: {message}",
                            tool.name
                        );
                        break;
                    }
                    Err(e) => return Err(format!("tools/call {}: {e}", tool.name)),
                }
            }
        }
        if client.offers_skills() {
            self.use_skills(scenario, &client).await?;
        }
        client.shutdown().await;
        Ok(())
    }

    /// The skills extension as the app uses it: on connection the skills are listed, and
    /// nothing is read (`sep-2640-client-no-prefetch` ends there). When the model loads a
    /// skill (the other sep-2640 scenarios stand for that moment), its `SKILL.md` is read and
    /// verified, then its other files are read, each verified, as the model asks for them; a
    /// file that fails verification is not used, and a skill whose `SKILL.md` fails is not
    /// loaded, so none of its files is read.
    async fn use_skills(&self, scenario: &str, client: &McpClient) -> Result<(), String> {
        let skills = client
            .list_skills()
            .await
            .map_err(|e| format!("skills/list: {e}"))?;
        eprintln!(
            "{scenario}: {} skills: {:?}",
            skills.len(),
            skills.iter().map(|s| s.name()).collect::<Vec<_>>()
        );
        if scenario == "sep-2640-client-no-prefetch" {
            return Ok(());
        }
        for skill in &skills {
            match client.load_skill(skill).await {
                Ok(_) => {
                    for file in skill.resources.iter().filter(|r| r.uri != skill.uri) {
                        match client.read_skill_file(skill, &file.uri).await {
                            Ok(bytes) => eprintln!("{}: {} bytes", file.uri, bytes.len()),
                            Err(e) => eprintln!("not used: {e}"),
                        }
                    }
                }
                Err(e) => eprintln!("skill `{}` not loaded: {e}", skill.name()),
            }
        }
        Ok(())
    }

    /// `mcp::connect`, signing in when the server says it needs it.
    async fn connect(&mut self) -> Result<McpClient, String> {
        loop {
            match connect(&self.cfg, &self.opts).await {
                Ok(client) => return Ok(client),
                Err(McpError::NeedsSignIn { challenge }) => {
                    self.sign_in(challenge.as_deref()).await?
                }
                Err(e) => return Err(format!("connect: {e}")),
            }
        }
    }

    async fn sign_in(&mut self, challenge: Option<&str>) -> Result<(), String> {
        if self.sign_ins >= MAX_SIGN_INS {
            return Err(format!(
                "the server still refuses after {MAX_SIGN_INS} sign-ins; giving up"
            ));
        }
        self.sign_ins += 1;
        auth::sign_in(
            &self.cfg,
            &self.secrets,
            challenge,
            auth::follow_redirects_headlessly(),
        )
        .await
        .map(|signed| eprintln!("signed in, scopes {:?}", signed.scopes))
        .map_err(|e: SignInError| e.to_string())
    }
}

/// Arguments for a tool: the scenario's own (`toolCalls` in the context), else a value of the
/// right type for each required parameter.
fn arguments(tool: &rmcp::model::Tool, context: &Value) -> Map<String, Value> {
    let given = context
        .get("toolCalls")
        .or_else(|| context.get("tool_calls"))
        .and_then(Value::as_array)
        .and_then(|calls| {
            calls
                .iter()
                .find(|c| c.get("name").and_then(Value::as_str) == Some(tool.name.as_ref()))
        })
        .and_then(|c| c.get("arguments"))
        .and_then(Value::as_object)
        .cloned();
    if let Some(args) = given {
        return args;
    }
    let schema = &tool.input_schema;
    let props = schema.get("properties").and_then(Value::as_object);
    let mut args = Map::new();
    for (name, prop) in props.into_iter().flatten() {
        let value = match prop.get("type").and_then(Value::as_str) {
            Some("number") | Some("integer") => json!(1),
            Some("boolean") => json!(true),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => json!("test"),
        };
        args.insert(name.clone(), prop.get("default").cloned().unwrap_or(value));
    }
    args
}
