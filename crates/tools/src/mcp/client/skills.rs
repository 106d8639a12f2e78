//! The MCP skills extension (SEP-2640, `io.modelcontextprotocol/skills`), client side: a
//! server that declares it lists its skills with `skills/list` (each skill's `SKILL.md` URI,
//! its frontmatter, and its files with a sha256 digest and a size); the files are read with
//! `resources/read` only when a skill is used, never ahead of need. Every file read is checked
//! against its entry (size, then digest) and a `SKILL.md` also against the listed frontmatter,
//! field by field; content that fails is never used.

use rmcp::model::{ClientRequest, CustomRequest, ServerResult};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::Digest;

use super::{McpClient, McpError};

/// The extension's identifier, as servers declare it under `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The most skills one server may list (more are dropped with a warning).
pub const MAX_SERVER_SKILLS: usize = 500;
/// The most pages of `skills/list` read.
const MAX_PAGES: usize = 20;

/// One skill a server lists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillEntry {
    /// Its `SKILL.md`'s URI (`skill://pdf-processing/SKILL.md`).
    pub uri: String,
    /// Its frontmatter as listed (at least `name` and `description`).
    #[serde(default)]
    pub frontmatter: Map<String, Value>,
    /// Its files, `SKILL.md` included, each with its digest and size.
    #[serde(default)]
    pub resources: Vec<SkillResource>,
}

/// One file of a listed skill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillResource {
    /// Its URI.
    pub uri: String,
    /// `sha256:<hex>` of its bytes.
    #[serde(default)]
    pub digest: Option<String>,
    /// Its length in bytes.
    #[serde(default)]
    pub size: Option<u64>,
}

impl SkillEntry {
    /// The listed `name` (empty when missing).
    pub fn name(&self) -> &str {
        self.frontmatter
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// The listed `description` (empty when missing).
    pub fn description(&self) -> &str {
        self.frontmatter
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// The entry of the file `uri`, if the skill lists it.
    pub fn resource(&self, uri: &str) -> Option<&SkillResource> {
        self.resources.iter().find(|r| r.uri == uri)
    }

    /// The path of `uri` inside the skill (`references/FORMS.md`): the part after the skill's
    /// own prefix (its `SKILL.md` URI without the file name).
    pub fn relative_path<'a>(&self, uri: &'a str) -> &'a str {
        let prefix = self.uri.rsplit_once('/').map_or("", |(p, _)| p);
        uri.strip_prefix(prefix)
            .map(|rest| rest.trim_start_matches('/'))
            .unwrap_or(uri)
    }
}

/// Why a skill's file was not used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillFetchError {
    /// The skill does not list this file.
    #[error("{0} is not one of the skill's listed files")]
    NotListed(String),
    /// Reading it failed.
    #[error("reading {uri} failed: {message}")]
    Read {
        /// The file.
        uri: String,
        /// Why.
        message: String,
    },
    /// Its length differs from the listed size.
    #[error("{uri} is {got} bytes but the server listed {listed}: the content was not used")]
    Size {
        /// The file.
        uri: String,
        /// Bytes read.
        got: u64,
        /// Bytes listed.
        listed: u64,
    },
    /// Its digest differs from the listed one.
    #[error("{uri} does not match its listed digest: the content was not used")]
    Digest {
        /// The file.
        uri: String,
    },
    /// The listed digest is not a sha256 this client can check.
    #[error(
        "{uri} is listed with a digest this app cannot check ({digest}): the content was not used"
    )]
    UnknownDigest {
        /// The file.
        uri: String,
        /// The listed digest.
        digest: String,
    },
    /// A `SKILL.md` whose frontmatter differs from the listed one.
    #[error("the SKILL.md read from {uri} does not match the skill as listed ({field}): the skill was not loaded")]
    Frontmatter {
        /// The file.
        uri: String,
        /// The first field that differs.
        field: String,
    },
}

/// `bytes` checked against `entry`: the size first (a mismatch fails without hashing), then
/// the digest.
pub fn verify(entry: &SkillResource, bytes: &[u8]) -> Result<(), SkillFetchError> {
    if let Some(listed) = entry.size {
        if bytes.len() as u64 != listed {
            return Err(SkillFetchError::Size {
                uri: entry.uri.clone(),
                got: bytes.len() as u64,
                listed,
            });
        }
    }
    if let Some(digest) = &entry.digest {
        let Some(hex) = digest.strip_prefix("sha256:") else {
            return Err(SkillFetchError::UnknownDigest {
                uri: entry.uri.clone(),
                digest: digest.clone(),
            });
        };
        let actual: String = sha2::Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        if !actual.eq_ignore_ascii_case(hex) {
            return Err(SkillFetchError::Digest {
                uri: entry.uri.clone(),
            });
        }
    }
    Ok(())
}

/// A fetched `SKILL.md`'s frontmatter compared with the listed one, field by field (a field in
/// either and not equal in the other is a discrepancy).
pub fn compare_frontmatter(entry: &SkillEntry, text: &str) -> Result<(), SkillFetchError> {
    let mismatch = |field: &str| SkillFetchError::Frontmatter {
        uri: entry.uri.clone(),
        field: field.to_string(),
    };
    let doc = crate::frontmatter::split(text).map_err(|_| mismatch("no frontmatter"))?;
    let parsed: Map<String, Value> = if doc.yaml.trim().is_empty() {
        Map::new()
    } else {
        crate::yaml::from_str(doc.yaml).map_err(|_| mismatch("frontmatter is not YAML"))?
    };
    for key in entry.frontmatter.keys().chain(parsed.keys()) {
        if entry.frontmatter.get(key) != parsed.get(key) {
            return Err(mismatch(key));
        }
    }
    Ok(())
}

impl McpClient {
    /// Does the server declare the skills extension?
    pub fn offers_skills(&self) -> bool {
        self.peer.peer_info().is_some_and(|info| {
            info.capabilities
                .extensions
                .as_ref()
                .is_some_and(|e| e.contains_key(SKILLS_EXTENSION))
        })
    }

    /// The server's skills (`skills/list`, page after page). Reads no file.
    pub async fn list_skills(&self) -> Result<Vec<SkillEntry>, McpError> {
        let listing = async {
            let mut skills = Vec::new();
            let mut cursor: Option<String> = None;
            for _ in 0..MAX_PAGES {
                let mut params = Map::new();
                if let Some(c) = cursor.take() {
                    params.insert("cursor".into(), Value::String(c));
                }
                let request = ClientRequest::CustomRequest(CustomRequest::new(
                    "skills/list",
                    Some(Value::Object(params)),
                ));
                let result = match self
                    .peer
                    .send_request(request)
                    .await
                    .map_err(McpError::from)?
                {
                    ServerResult::CustomResult(r) => r.0,
                    other => serde_json::to_value(other).unwrap_or(Value::Null),
                };
                let page: Vec<SkillEntry> = result
                    .get("skills")
                    .cloned()
                    .map(serde_json::from_value)
                    .transpose()
                    .map_err(|e| McpError::Server(format!("skills/list: {e}")))?
                    .unwrap_or_default();
                skills.extend(page);
                if skills.len() >= MAX_SERVER_SKILLS {
                    tracing::warn!(server = %self.name, "it lists more than {MAX_SERVER_SKILLS} skills; the first are used");
                    skills.truncate(MAX_SERVER_SKILLS);
                    break;
                }
                match result.get("nextCursor").and_then(Value::as_str) {
                    Some(next) if !next.is_empty() => cursor = Some(next.to_string()),
                    _ => break,
                }
            }
            Ok::<_, McpError>(skills)
        };
        tokio::time::timeout(self.timeout, listing)
            .await
            .map_err(|_| McpError::Timeout(self.timeout))?
    }

    /// The bytes of `uri`, a file `entry` lists, read now and verified against the listing.
    pub async fn read_skill_file(
        &self,
        entry: &SkillEntry,
        uri: &str,
    ) -> Result<Vec<u8>, SkillFetchError> {
        let listed = entry
            .resource(uri)
            .ok_or_else(|| SkillFetchError::NotListed(uri.to_string()))?;
        let read = self
            .read_resource(uri)
            .await
            .map_err(|e| SkillFetchError::Read {
                uri: uri.to_string(),
                message: e.to_string(),
            })?;
        let bytes = read
            .contents
            .iter()
            .find_map(|c| match c {
                rmcp::model::ResourceContents::TextResourceContents { text, .. } => {
                    Some(text.clone().into_bytes())
                }
                rmcp::model::ResourceContents::BlobResourceContents { blob, .. } => {
                    use base64::Engine;
                    base64::engine::general_purpose::STANDARD.decode(blob).ok()
                }
                #[allow(unreachable_patterns)]
                _ => None,
            })
            .ok_or_else(|| SkillFetchError::Read {
                uri: uri.to_string(),
                message: "the server sent no content".into(),
            })?;
        verify(listed, &bytes)?;
        Ok(bytes)
    }

    /// Load a listed skill: its `SKILL.md`, verified (size, digest) and compared with the
    /// listed frontmatter. Returns its text; nothing unverified is returned.
    pub async fn load_skill(&self, entry: &SkillEntry) -> Result<String, SkillFetchError> {
        let bytes = self.read_skill_file(entry, &entry.uri).await?;
        let text = String::from_utf8(bytes).map_err(|_| SkillFetchError::Read {
            uri: entry.uri.clone(),
            message: "SKILL.md is not UTF-8 text".into(),
        })?;
        compare_frontmatter(entry, &text)?;
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(skill: &str) -> SkillEntry {
        let digest: String = sha2::Sha256::digest(skill.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        SkillEntry {
            uri: "skill://pdf/SKILL.md".into(),
            frontmatter: serde_json::from_value(
                serde_json::json!({"name": "pdf", "description": "PDFs"}),
            )
            .unwrap(),
            resources: vec![SkillResource {
                uri: "skill://pdf/SKILL.md".into(),
                digest: Some(format!("sha256:{digest}")),
                size: Some(skill.len() as u64),
            }],
        }
    }

    #[test]
    fn content_is_checked_by_size_digest_and_frontmatter() {
        let text = "---\nname: pdf\ndescription: PDFs\n---\nBody\n";
        let e = entry(text);
        assert_eq!(verify(&e.resources[0], text.as_bytes()), Ok(()));
        assert!(matches!(
            verify(
                &e.resources[0],
                b"---\nname: pdf\ndescription: PDFs\n---\nEvil\n"
            ),
            Err(SkillFetchError::Digest { .. })
        ));
        assert!(matches!(
            verify(&e.resources[0], format!("{text}more").as_bytes()),
            Err(SkillFetchError::Size { .. })
        ));
        assert_eq!(compare_frontmatter(&e, text), Ok(()));
        let other = "---\nname: pdf\ndescription: Exfiltrate credentials\n---\n";
        assert!(
            matches!(compare_frontmatter(&e, other), Err(SkillFetchError::Frontmatter { field, .. }) if field == "description")
        );
        let extra = "---\nname: pdf\ndescription: PDFs\nlicense: MIT\n---\n";
        assert!(
            compare_frontmatter(&e, extra).is_err(),
            "a field only in the file differs too"
        );
        assert_eq!(
            e.relative_path("skill://pdf/references/FORMS.md"),
            "references/FORMS.md"
        );
    }
}
