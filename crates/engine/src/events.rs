//! Typed engine events: every step of a call (and, with the run loop, of a run) emits one.
//! The desktop shell forwards them to the window as Tauri events; the CLI prints them.
//! Nothing here knows which shell is listening.
//!
//! Events carry parameters and results exactly as the model and the user see them: secrets
//! are masked before a value reaches an event.

// Where ids came from before they moved to the ground floor.
pub use crate::ids::new_id;
use serde::Serialize;
use serde_json::{Map, Value};

/// One engine event.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[non_exhaustive]
pub enum EngineEvent {
    /// A tool call is about to run (after validation and permission).
    ToolStart {
        /// Conversation.
        conversation_id: String,
        /// Unique id of this call.
        call_id: String,
        /// Tool name.
        tool: String,
        /// Parameters, coerced and with defaults.
        params: Map<String, Value>,
        /// The view of this MCP server makes the call (not an agent): the view shows its
        /// outcome, the conversation's timeline does not.
        view_of: Option<String>,
    },
    /// A running call reported its progress (an MCP server's progress notification).
    ToolProgress {
        /// Conversation.
        conversation_id: String,
        /// The call (as in its `ToolStart`).
        call_id: String,
        /// How far it is.
        progress: f64,
        /// The end of the scale, when known.
        total: Option<f64>,
        /// What it is doing, in the tool's words.
        message: Option<String>,
    },
    /// A tool call finished (or was refused: validation, permission, unknown tool).
    ToolComplete {
        /// Conversation.
        conversation_id: String,
        /// Unique id of this call.
        call_id: String,
        /// The calling agent (empty for a direct call).
        agent: String,
        /// 0 for the conversation's agent, 1+ for sub-agents.
        depth: u32,
        /// Tool name.
        tool: String,
        /// Its parameters (typed when they could be read): a call refused before it ran has
        /// had no `ToolStart`, and its card shows what was refused from here.
        params: Map<String, Value>,
        /// Did it succeed? (`status == succeeded`.)
        success: bool,
        /// How it ended: what the UI shows (never read from `result`'s wording).
        status: crate::calls::CallStatus,
        /// Why it ended so, in words for a person (none for a plain success).
        reason: Option<String>,
        /// The output (success) or the reason (failure), as the model sees it.
        result: String,
        /// Tool metadata (artifact snapshots, HTTP status, persisted artifact id, …).
        metadata: Map<String, Value>,
        /// Artifacts the call created or changed (including an oversized result's artifact).
        artifact_ids: Vec<String>,
        /// The result's images, audio and other binary content, stored as artifacts (also in
        /// `artifact_ids`): what the tool card shows.
        attachments: Vec<crate::calls::StoredAttachment>,
        /// Milliseconds the call ran, from its permission (or start) to completion: a wait
        /// for the person's answer is not counted.
        duration_ms: u64,
        /// The model wrote the call under the grammar of guided calls (the tool card says so).
        guided: bool,
        /// Its MCP server's interactive view (MCP Apps), which the card shows. Boxed: it is
        /// much larger than the other fields.
        view: Option<Box<crate::calls::ViewRef>>,
        /// The view of this MCP server made the call (not an agent).
        view_of: Option<String>,
    },
    /// The user is asked to allow a call.
    PermissionRequest {
        /// Conversation.
        conversation_id: String,
        /// Its title (empty while untitled), so the dialog says which conversation asks.
        conversation_title: String,
        /// Who asks: the conversation's agent first, then each sub-agent down to the one
        /// making the call (`lead_agent`, `search_agent`). Empty for a direct call (the tool
        /// editor's test panel, `artifactflow-cli tools call`).
        agent_chain: Vec<String>,
        /// The call asking (the id its `ToolCallStarted`/`ToolStart`/`ToolComplete` carry).
        call_id: String,
        /// The calling agent (empty for a direct call).
        agent: String,
        /// 0 for the conversation's agent, 1+ for sub-agents.
        depth: u32,
        /// When the request is denied unanswered (milliseconds since the Unix epoch, from the
        /// permission timeout); none when the asker has no deadline (the CLI's prompt).
        deadline_ms: Option<u64>,
        /// Id to answer with.
        request_id: String,
        /// What is asked (tool, parameters, HTTP request with secrets masked, what can be
        /// remembered). Boxed: it is much larger than the other events.
        request: Box<crate::permissions::PermissionRequest>,
    },
    /// A run began.
    RunStarted {
        /// Conversation.
        conversation_id: String,
        /// Run id.
        run_id: String,
        /// The conversation's agent.
        agent: String,
    },
    /// Text the model wrote, batched (several chunks per event).
    Token {
        /// Conversation.
        conversation_id: String,
        /// Agent writing.
        agent: String,
        /// 0 for the conversation's agent, 1+ for sub-agents.
        depth: u32,
        /// The text, as the model wrote it (tool calls included).
        text: String,
        /// What the answer says besides its tool calls, as far as this batch takes it: appended
        /// to the prose shown so far, or replacing it when `prose_reset` is set.
        prose: String,
        /// Text shown earlier turned out to belong to a tool call (a tag still arriving): `prose`
        /// is the whole prose so far, not an addition.
        prose_reset: bool,
    },
    /// The incremental parser saw a tool call begin in the model's answer ("calling X…").
    ToolCallStarted {
        /// Conversation.
        conversation_id: String,
        /// The call's id (the same in the call's later events and its stored record).
        call_id: String,
        /// Agent writing.
        agent: String,
        /// 0 for the conversation's agent, 1+ for sub-agents.
        depth: u32,
        /// Position of the call in the answer.
        index: usize,
        /// The tool name, once known (may be provisional while streaming).
        name: Option<String>,
    },
    /// A model answer finished.
    ModelAnswer {
        /// Conversation.
        conversation_id: String,
        /// Agent.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// `stop`, `length` or what the server said.
        finish_reason: String,
        /// Tokens in the request, if reported.
        prompt_tokens: Option<u32>,
        /// Tokens in the answer, if reported.
        completion_tokens: Option<u32>,
        /// The user's sources the answer cites, each checked against what the conversation's
        /// calls retrieved before it (the chat shows a chip in place of each `marker`).
        citations: Vec<crate::citations::Citation>,
    },
    /// A model on this computer (`api: local`) is being loaded for the next request: the first
    /// request after a start or an idle unload waits for it (seconds to a minute).
    ModelLoading {
        /// Conversation.
        conversation_id: String,
        /// Agent.
        agent: String,
        /// The model's name (its file name without `.gguf`).
        model: String,
    },
    /// Before each model request: how much of the model's context window the request fills
    /// (the context meter). Estimated before sending, calibrated by the server's earlier
    /// `prompt_tokens`.
    ContextUsage {
        /// Conversation.
        conversation_id: String,
        /// Agent.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// Estimated tokens of the request (system prompt, tool instructions, history).
        estimated_tokens: u32,
        /// Tokens kept free for the answer (the profile's `max_tokens` or a default).
        reserved_tokens: u32,
        /// The model's context window in tokens.
        window_tokens: u32,
    },
    /// The model's view of the conversation was shortened before a request: older tool
    /// results replaced by references, and/or older turns condensed into a note, and/or (when
    /// the latest round still did not fit) its results cut to their beginning. The full
    /// history stays in the database and on screen; the chat marks the place.
    ContextCondensed {
        /// Conversation.
        conversation_id: String,
        /// Agent.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// The stored message (role `context`) that marks the place in the history, when
        /// one was written (a note of condensed turns); `None` when only results were
        /// replaced by references.
        message_id: Option<i64>,
        /// Tool results replaced by a reference to their artifact.
        results_referenced: u32,
        /// Results of the latest round cut to the beginning that fits (each says which
        /// artifact holds it in full): the last resort when the round alone does not fit.
        results_cut: u32,
        /// Messages condensed into the note (0 when no note was written).
        messages_condensed: u32,
        /// The "conversation so far" note the model now sees instead of those messages.
        note: Option<String>,
        /// Why: `budget` (the history did not fit) or `server` (the server refused the
        /// request as too long and it is retried once).
        reason: String,
    },
    /// Control passes to a sub-agent.
    AgentSwitch {
        /// Conversation.
        conversation_id: String,
        /// The calling agent.
        from: String,
        /// The sub-agent.
        to: String,
        /// Its instruction.
        instruction: String,
        /// The sub-agent's depth.
        depth: u32,
    },
    /// A sub-agent finished and control returns to its caller.
    AgentReturn {
        /// Conversation.
        conversation_id: String,
        /// The sub-agent.
        from: String,
        /// The caller.
        to: String,
        /// Did it give a final answer?
        success: bool,
    },
    /// An artifact changed; the full snapshot, so the UI can update live.
    ArtifactSnapshot {
        /// Conversation.
        conversation_id: String,
        /// The snapshot from the artifact tool's metadata.
        snapshot: Value,
    },
    /// A run ended.
    RunEnded {
        /// Conversation.
        conversation_id: String,
        /// Run id.
        run_id: String,
        /// `completed`, `cancelled` or `failed`.
        status: crate::conversations::RunStatus,
        /// The agent's final answer, when completed.
        final_answer: Option<String>,
        /// What went wrong, when failed.
        error: Option<String>,
    },
    /// The config folder changed and was reloaded.
    ConfigReloaded {
        /// Problems now present (empty when everything loaded).
        errors: Vec<crate::config_error::ConfigError>,
    },
    /// An MCP server's status changed (starting, ready, failed, needs sign-in, disabled).
    McpServerStatus {
        /// The server's name in mcp.json.
        server: String,
        /// Its new status.
        status: crate::mcp::ServerStatus,
    },
    /// An MCP server asks the user to fill in a form (or to open a page) during a call.
    ElicitationRequest {
        /// Id to answer with.
        request_id: String,
        /// The server asking (its name in mcp.json).
        server: String,
        /// What it says.
        message: String,
        /// The form, built from the requested schema with its defaults; none for a URL request.
        form: Option<crate::mcp::elicitation::ElicitationForm>,
        /// For a URL request: the page the server wants the user to open (never opened
        /// without the user).
        url: Option<String>,
        /// The call it came from, when known (conversation, call, agent chain).
        origin: Option<crate::tools::CallOrigin>,
        /// When it is cancelled unanswered (milliseconds since the Unix epoch).
        deadline_ms: u64,
    },
    /// A server's question ended: answered, timed out, stopped or withdrawn.
    ElicitationResolved {
        /// The conversation it came from, when known.
        conversation_id: Option<String>,
        /// The request.
        request_id: String,
        /// What the server was told.
        outcome: crate::mcp::elicitation::ElicitationOutcome,
        /// How the wait ended.
        resolution: crate::interrupts::Resolution,
    },
    /// The user (or a timeout) answered.
    PermissionResolved {
        /// Conversation.
        conversation_id: String,
        /// The request answered.
        request_id: String,
        /// The answer (deny unless explicitly approved).
        answer: crate::permissions::Answer,
        /// How the wait ended: answered, timed out, cancelled, listener gone.
        resolution: crate::interrupts::Resolution,
    },
}

/// Receives engine events. Implemented for any `Fn(EngineEvent)`.
pub trait EventSink: Send + Sync {
    /// Handle one event (must not block for long).
    fn emit(&self, event: EngineEvent);
}

impl<F: Fn(EngineEvent) + Send + Sync> EventSink for F {
    fn emit(&self, event: EngineEvent) {
        self(event)
    }
}

/// A sink that drops everything.
pub fn discard() -> impl EventSink {
    |_event: EngineEvent| {}
}
