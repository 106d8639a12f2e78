//! The MCP skills extension (SEP-2640, `io.modelcontextprotocol/skills`), client side: a
//! server that declares it lists its skills with `skills/list` (each skill's `SKILL.md` URI,
//! its frontmatter, and its files with a sha256 digest and a size); the files are read with
//! `resources/read` only when a skill is used, never ahead of need. Every file read is checked
//! against its entry (size, then digest) and a `SKILL.md` also against the listed frontmatter,
//! field by field; content that fails is never used.
//!
//! A skill the listing cannot verify is never read at all ([`SkillEntry::unverifiable`]): one
//! of its files listed without a sha256 digest or a size (the extension requires both), its
//! `SKILL.md` not listed, or its files not listed (`"resources": "dynamic"`). Such an entry
//! still parses, so one skill never costs the server its other skills.

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
#[serde(from = "ListedSkill")]
pub struct SkillEntry {
    /// Its `SKILL.md`'s URI (`skill://pdf-processing/SKILL.md`).
    pub uri: String,
    /// Its frontmatter as listed (at least `name` and `description`).
    pub frontmatter: Map<String, Value>,
    /// Its files, `SKILL.md` included, each with its digest and size (none when the listing
    /// gives no list of them).
    pub resources: Vec<SkillResource>,
    /// The listing gives no list of its files (`"resources": "dynamic"`, or anything else
    /// that is not a list of files): none of them can be verified.
    #[serde(skip)]
    pub files_unlisted: bool,
}

/// A skill entry as `skills/list` sends it: `resources` a list of files, or not.
#[derive(Deserialize)]
struct ListedSkill {
    uri: String,
    #[serde(default)]
    frontmatter: Map<String, Value>,
    #[serde(default)]
    resources: ListedFiles,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ListedFiles {
    Files(Vec<SkillResource>),
    NotAList(serde::de::IgnoredAny),
}

impl Default for ListedFiles {
    fn default() -> Self {
        ListedFiles::NotAList(serde::de::IgnoredAny)
    }
}

impl From<ListedSkill> for SkillEntry {
    fn from(listed: ListedSkill) -> Self {
        let (resources, files_unlisted) = match listed.resources {
            ListedFiles::Files(files) => (files, false),
            ListedFiles::NotAList(_) => (Vec::new(), true),
        };
        SkillEntry {
            uri: listed.uri,
            frontmatter: listed.frontmatter,
            resources,
            files_unlisted,
        }
    }
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

impl SkillResource {
    /// What the listing gives to verify this file: its size and the hex of its sha256 digest;
    /// or why it cannot be verified (no digest, one this client cannot check, or no size).
    pub fn checks(&self) -> Result<(u64, &str), SkillFetchError> {
        let missing = |what: &str| SkillFetchError::Unverifiable {
            uri: self.uri.clone(),
            missing: what.to_string(),
        };
        let digest = self
            .digest
            .as_deref()
            .ok_or_else(|| missing("a sha256 digest"))?;
        let hex = digest
            .strip_prefix("sha256:")
            .filter(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| SkillFetchError::UnknownDigest {
                uri: self.uri.clone(),
                digest: digest.to_string(),
            })?;
        let size = self.size.ok_or_else(|| missing("a size"))?;
        Ok((size, hex))
    }

    /// Why this file cannot be verified, if it cannot (see [`SkillResource::checks`]).
    pub fn unverifiable(&self) -> Option<SkillFetchError> {
        self.checks().err()
    }
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

    /// Why the listing cannot verify this skill, if it cannot: its files are not listed, its
    /// `SKILL.md` is not, or a file is listed without a sha256 digest or a size (the first such
    /// file). Nothing of such a skill is read.
    pub fn unverifiable(&self) -> Option<SkillFetchError> {
        let missing = |uri: &str, missing: &str| SkillFetchError::Unverifiable {
            uri: uri.to_string(),
            missing: missing.to_string(),
        };
        if self.files_unlisted {
            return Some(missing(
                &self.uri,
                "a list of the skill's files (its `resources` are not a list of files with \
                 digests and sizes)",
            ));
        }
        if self.resource(&self.uri).is_none() {
            return Some(missing(&self.uri, "an entry of its own in `resources`"));
        }
        self.resources.iter().find_map(SkillResource::unverifiable)
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
    /// The listing gives no way to verify the file: no digest, no size, or no list of the
    /// skill's files at all.
    #[error(
        "{uri} is listed without {missing}, so it cannot be verified (the skills extension \
         requires a sha256 digest and a size for every file): none of the skill's files is used"
    )]
    Unverifiable {
        /// The file (the skill's `SKILL.md` when its files are not listed).
        uri: String,
        /// What the listing leaves out.
        missing: String,
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

/// `bytes` checked against `entry`: an entry without a digest or a size verifies nothing and
/// fails; then the size (a mismatch fails without hashing), then the digest.
pub fn verify(entry: &SkillResource, bytes: &[u8]) -> Result<(), SkillFetchError> {
    let (listed, hex) = entry.checks()?;
    if bytes.len() as u64 != listed {
        return Err(SkillFetchError::Size {
            uri: entry.uri.clone(),
            got: bytes.len() as u64,
            listed,
        });
    }
    let actual: String = sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if !actual.eq_ignore_ascii_case(hex) {
        return Err(SkillFetchError::Digest {
            uri: entry.uri.clone(),
        });
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
    /// Nothing is read of a skill the listing cannot verify.
    pub async fn read_skill_file(
        &self,
        entry: &SkillEntry,
        uri: &str,
    ) -> Result<Vec<u8>, SkillFetchError> {
        if let Some(unverifiable) = entry.unverifiable() {
            return Err(unverifiable);
        }
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
            files_unlisted: false,
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

    #[test]
    fn a_file_listed_without_a_digest_or_a_size_verifies_nothing() {
        let text = "---\nname: pdf\ndescription: PDFs\n---\nBody\n";
        let mut no_digest = entry(text);
        no_digest.resources[0].digest = None;
        let mut no_size = entry(text);
        no_size.resources[0].size = None;
        for (e, missing) in [(no_digest, "a sha256 digest"), (no_size, "a size")] {
            let refused = verify(&e.resources[0], text.as_bytes()).unwrap_err();
            assert_eq!(
                refused,
                SkillFetchError::Unverifiable {
                    uri: "skill://pdf/SKILL.md".into(),
                    missing: missing.into()
                }
            );
            assert_eq!(e.unverifiable(), Some(refused));
        }
        let mut short = entry(text);
        short.resources[0].digest = Some("sha256:abc".into());
        assert!(matches!(
            short.unverifiable(),
            Some(SkillFetchError::UnknownDigest { .. })
        ));
        assert_eq!(entry(text).unverifiable(), None);

        // Files not listed, or a SKILL.md not listed: the entry parses, and is unverifiable.
        let listed: Vec<SkillEntry> = serde_json::from_value(serde_json::json!([
            {"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "description": "A"},
             "resources": "dynamic"},
            {"uri": "skill://b/SKILL.md", "frontmatter": {"name": "b", "description": "B"},
             "resources": []},
        ]))
        .unwrap();
        assert!(listed[0].files_unlisted);
        assert!(matches!(
            listed[0].unverifiable(),
            Some(SkillFetchError::Unverifiable { missing, .. }) if missing.contains("list of the skill's files")
        ));
        assert!(matches!(
            listed[1].unverifiable(),
            Some(SkillFetchError::Unverifiable { uri, .. }) if uri == "skill://b/SKILL.md"
        ));
    }
}
