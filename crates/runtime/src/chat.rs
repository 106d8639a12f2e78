//! The chat a request carries, as the worker and the templates read it.

/// One chat message of a request.
#[derive(Debug, Clone, Default)]
pub struct Message {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// Its text.
    pub content: String,
    /// An assistant message's native calls.
    pub tool_calls: Vec<ToolCallIn>,
    /// A `tool` message's call.
    pub tool_call_id: Option<String>,
}

/// A native call in the conversation so far.
#[derive(Debug, Clone, Default)]
pub struct ToolCallIn {
    /// Its id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// Its arguments, JSON text.
    pub arguments: String,
}
