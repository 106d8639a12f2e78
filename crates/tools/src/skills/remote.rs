//! Skills served by MCP servers (the skills extension, SEP-2640): listed with the local ones
//! as `SERVER.NAME`, their files read from the server only when the model uses the skill, each
//! verified against the listing (see [`crate::mcp::client::skills`]). A skill whose listing
//! cannot verify it (a file without a sha256 digest or a size, no list of files) stays listed
//! for the user with why ([`McpSkill::unverifiable`]), is left out of every prompt, and none
//! of its files is read.

use std::sync::Arc;

use crate::mcp::client::skills::SkillEntry;
use crate::mcp::McpClient;

/// One skill an MCP server lists.
#[derive(Clone)]
pub struct McpSkill {
    /// `SERVER.NAME`: what agents and the model call it.
    pub name: String,
    /// The server's name.
    pub server: String,
    /// The entry as listed (frontmatter, files with digests and sizes).
    pub entry: SkillEntry,
    /// The session it came from.
    pub client: Arc<McpClient>,
    /// Why it cannot be used, naming the server and the file, when its listing cannot verify
    /// it: it is then offered to no agent and none of its files is read.
    pub unverifiable: Option<String>,
}

impl std::fmt::Debug for McpSkill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSkill")
            .field("name", &self.name)
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl McpSkill {
    /// The skills `client` (the server `server`) lists, each checked like a local skill's
    /// frontmatter (a valid name, a description); an entry that is not is left out with a
    /// warning naming the server. One the listing cannot verify is kept, marked
    /// [`McpSkill::unverifiable`], with a warning naming the server and the file.
    pub fn from_listing(
        server: &str,
        client: &Arc<McpClient>,
        entries: Vec<SkillEntry>,
    ) -> Vec<McpSkill> {
        entries
            .into_iter()
            .filter_map(|entry| {
                let problem = super::load::check_name(entry.name()).err().or_else(|| {
                    entry
                        .description()
                        .trim()
                        .is_empty()
                        .then(|| "it has no description".to_string())
                });
                if let Some(why) = problem {
                    tracing::warn!(server, uri = %entry.uri, "skill not listed: {why}");
                    return None;
                }
                let name = format!("{server}.{}", entry.name());
                let unverifiable = entry.unverifiable().map(|e| {
                    let why = format!("on the MCP server `{server}`, {e}");
                    tracing::warn!(server, skill = %name, "skill not offered: {why}");
                    why
                });
                Some(McpSkill {
                    name,
                    server: server.to_string(),
                    entry,
                    client: client.clone(),
                    unverifiable,
                })
            })
            .collect()
    }

    /// Its description as listed.
    pub fn description(&self) -> &str {
        self.entry.description()
    }

    /// Its files other than `SKILL.md`, as paths inside the skill.
    pub fn files(&self) -> Vec<String> {
        let mut files: Vec<String> = self
            .entry
            .resources
            .iter()
            .filter(|r| r.uri != self.entry.uri)
            .map(|r| self.entry.relative_path(&r.uri).to_string())
            .collect();
        files.sort();
        files
    }

    /// The URI of the file `path` inside the skill, if it lists one.
    pub fn uri_of(&self, path: &str) -> Option<String> {
        let wanted = path.trim().trim_start_matches("./").replace('\\', "/");
        self.entry
            .resources
            .iter()
            .find(|r| self.entry.relative_path(&r.uri) == wanted)
            .map(|r| r.uri.clone())
    }
}
