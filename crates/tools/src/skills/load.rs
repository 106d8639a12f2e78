//! Reading skills from a folder (one folder per skill, each with a `SKILL.md`), validated as
//! the Agent Skills format specifies:
//! - `name`: 1–64 lowercase letters, digits and hyphens, no hyphen first, last or twice in a
//!   row, and the same as the skill's folder;
//! - `description`: 1–1,024 characters. A longer one (skills written for other clients have
//!   them: Anthropic's `claude-api` has 1,068, and those clients load it) loads with a located
//!   warning in [`Skill::warnings`]: the prompt's list of skills shows the start of any long
//!   description anyway. Nothing else is relaxed;
//! - optional `license`, `compatibility` (at most 500 characters), `allowed-tools` (a
//!   space-separated string, or a list) and `metadata` (keys to text).
//!
//! Fields other clients add (`model`, `argument-hint`, …) are kept as notes and never stop a
//! skill. Folders starting with `.` or `_` are skipped (a leading `_` turns a skill off, as it
//! does a tool or an agent). What a skill's listing leaves out (a link out of its folder, a
//! named pipe, a cap of the walk hit: see [`super::walk`]) is reported, located, and the skill
//! loads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::{Skill, SkillOrigin};
use crate::config_error::{yaml_error, ConfigError};
use crate::{frontmatter, yaml};

/// The longest `SKILL.md` read (the format asks for under 500 lines; detail belongs in
/// `references/`).
pub const MAX_SKILL_MD_BYTES: u64 = 256 * 1024;
/// The longest name.
pub const MAX_NAME_CHARS: usize = 64;
/// The longest description the format allows (a longer one loads with a warning).
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The longest `compatibility`.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;

#[derive(Deserialize)]
struct Frontmatter {
    name: Option<Value>,
    description: Option<Value>,
    license: Option<Value>,
    compatibility: Option<Value>,
    #[serde(rename = "allowed-tools")]
    allowed_tools: Option<Value>,
    metadata: Option<Value>,
    #[serde(flatten)]
    other: BTreeMap<String, Value>,
}

/// Every skill in `dir` (a missing folder has none) and every problem, located.
pub fn load_dir(dir: &Path, origin: &SkillOrigin) -> (Vec<Skill>, Vec<ConfigError>) {
    let mut skills = Vec::new();
    let mut errors = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (skills, errors),
        Err(e) => {
            errors.push(ConfigError::unreadable_folder(dir, e));
            return (skills, errors);
        }
    };
    let mut folders: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            !name.starts_with('.') && !name.starts_with('_') && p.is_dir()
        })
        .collect();
    folders.sort();
    for folder in folders {
        match load_skill_folder(&folder, origin) {
            Ok(skill) => {
                errors.extend(skill.warnings.iter().cloned());
                // What its listing leaves out (a link out, a named pipe, a cap hit) is a
                // problem to fix, located; the skill still loads.
                errors.extend(super::files::listing(&folder).left_out.iter().map(|note| {
                    ConfigError {
                        file: note.path.clone(),
                        line: None,
                        field: None,
                        message: super::files::listing_note(note),
                    }
                }));
                skills.push(skill);
            }
            Err(e) => errors.push(e),
        }
    }
    (skills, errors)
}

/// The `SKILL.md` of a skill folder (`skill.md` is accepted too, as other readers do).
pub fn skill_file(folder: &Path) -> Option<PathBuf> {
    ["SKILL.md", "skill.md"]
        .iter()
        .map(|n| folder.join(n))
        .find(|p| p.is_file())
}

/// Load the skill in `folder`.
pub fn load_skill_folder(folder: &Path, origin: &SkillOrigin) -> Result<Skill, ConfigError> {
    let Some(path) = skill_file(folder) else {
        return Err(ConfigError {
            file: folder.to_path_buf(),
            line: None,
            field: None,
            message: "this skill folder has no SKILL.md: add one (YAML frontmatter with `name` \
                      and `description`, then the instructions), or start the folder's name \
                      with `_` to turn it off"
                .into(),
        });
    };
    // A SKILL.md that is a link out of its folder is not read.
    super::files::confine(folder, &path).map_err(|message| ConfigError {
        file: path.clone(),
        line: None,
        field: None,
        message,
    })?;
    // Only a regular file is read (never a named pipe), its size checked first.
    let text = super::files::read_regular(&path, MAX_SKILL_MD_BYTES).map_err(|refusal| {
        let message = match refusal {
            super::files::ReadRefusal::TooLarge(size) => format!(
                "SKILL.md is {} KiB; the most read is {} KiB. Keep the instructions short and \
                 move detail into files under references/, which the model reads when needed",
                size.div_ceil(1024),
                MAX_SKILL_MD_BYTES / 1024
            ),
            other => other.describe("SKILL.md", MAX_SKILL_MD_BYTES),
        };
        ConfigError {
            file: path.clone(),
            line: None,
            field: None,
            message,
        }
    })?;
    let text = String::from_utf8(text).map_err(|e| ConfigError {
        file: path.clone(),
        line: None,
        field: None,
        message: format!(
            "SKILL.md is not UTF-8 text (bad byte at offset {}); save it as UTF-8",
            e.utf8_error().valid_up_to()
        ),
    })?;
    let mut skill = parse_skill(&path, &text)?;
    let folder_name = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if skill.name != folder_name {
        return Err(ConfigError {
            file: path.clone(),
            line: field_line(&text, "name"),
            field: Some("name".into()),
            message: format!(
                "the skill is named `{}` but its folder is `{folder_name}`; the name must be the \
                 folder's name (rename one of them)",
                skill.name
            ),
        });
    }
    skill.dir = folder.to_path_buf();
    skill.origin = origin.clone();
    Ok(skill)
}

/// Parse and validate one `SKILL.md`'s text. `path` locates the errors; the folder and origin
/// are left for the caller.
pub fn parse_skill(path: &Path, text: &str) -> Result<Skill, ConfigError> {
    let located = |line: Option<u32>, field: Option<&str>, message: String| ConfigError {
        file: path.to_path_buf(),
        line,
        field: field.map(str::to_string),
        message,
    };
    let doc = frontmatter::split(text).map_err(|e| {
        located(
            Some(1),
            None,
            format!(
                "{e} (a SKILL.md starts with `---`, then `name:` and `description:`, then `---`)"
            ),
        )
    })?;
    let fm: Frontmatter = if doc.yaml.trim().is_empty() {
        Frontmatter {
            name: None,
            description: None,
            license: None,
            compatibility: None,
            allowed_tools: None,
            metadata: None,
            other: BTreeMap::new(),
        }
    } else {
        yaml::from_str(doc.yaml).map_err(|e| yaml_error(path, doc.yaml_first_line, e))?
    };
    let line = |field: &str| field_line(text, field);
    let text_field = |field: &str, value: Option<Value>| -> Result<Option<String>, ConfigError> {
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(Value::Bool(b)) => Ok(Some(b.to_string())),
            Some(_) => Err(located(
                line(field),
                Some(field),
                format!("`{field}` must be text"),
            )),
        }
    };
    let name = text_field("name", fm.name)?.unwrap_or_default();
    if let Err(why) = check_name(&name) {
        return Err(located(line("name"), Some("name"), why));
    }
    let description = text_field("description", fm.description)?
        .map(|d| d.trim().to_string())
        .unwrap_or_default();
    if description.is_empty() {
        return Err(located(
            line("description").or(Some(doc.yaml_first_line as u32)),
            Some("description"),
            "a skill needs a `description`: what it does and when to use it (the model \
             decides to load the skill from it alone)"
                .into(),
        ));
    }
    let mut warnings = Vec::new();
    let chars = description.chars().count();
    if chars > MAX_DESCRIPTION_CHARS {
        warnings.push(located(
            line("description"),
            Some("description"),
            format!(
                "the description is {chars} characters, more than the {MAX_DESCRIPTION_CHARS} \
                 the Agent Skills format allows; the skill loads (as other clients load it), \
                 and the prompt's list of skills shows the start of it. To keep within the \
                 format, say what the skill does and when to use it in at most \
                 {MAX_DESCRIPTION_CHARS} characters and move the rest into the instructions"
            ),
        ));
    }
    let compatibility = text_field("compatibility", fm.compatibility)?;
    if let Some(c) = &compatibility {
        let chars = c.chars().count();
        if chars > MAX_COMPATIBILITY_CHARS {
            return Err(located(
                line("compatibility"),
                Some("compatibility"),
                format!(
                    "`compatibility` is {chars} characters; the most is {MAX_COMPATIBILITY_CHARS}"
                ),
            ));
        }
    }
    let allowed_tools = match fm.allowed_tools {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => s
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect(),
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|v| match v {
                Value::String(s) => Ok(s),
                _ => Err(located(
                    line("allowed-tools"),
                    Some("allowed-tools"),
                    "`allowed-tools` lists tool names (text)".into(),
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(located(
                line("allowed-tools"),
                Some("allowed-tools"),
                "`allowed-tools` is a space-separated list of tool names".into(),
            ))
        }
    };
    let metadata = match fm.metadata {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(Value::Object(map)) => map
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k, s)),
                Value::Number(n) => Ok((k, n.to_string())),
                Value::Bool(b) => Ok((k, b.to_string())),
                _ => Err(located(
                    line("metadata"),
                    Some(&format!("metadata.{k}")),
                    format!("`metadata.{k}` must be text (metadata maps keys to text)"),
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(located(
                line("metadata"),
                Some("metadata"),
                "`metadata` maps keys to text, e.g. `metadata:` then `  author: me`".into(),
            ))
        }
    };
    Ok(Skill {
        name,
        description,
        license: text_field("license", fm.license)?,
        compatibility,
        allowed_tools,
        metadata,
        instructions: doc.body.to_string(),
        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        source: path.to_path_buf(),
        origin: SkillOrigin::Config,
        ignored_fields: fm.other.into_keys().collect(),
        warnings,
    })
}

/// Why `name` is not a valid skill name, if it is not.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err(
            "a skill needs a `name`: lowercase letters, digits and hyphens, the same \
                    as its folder's name"
                .into(),
        );
    }
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        return Err(format!(
            "the name is {chars} characters; the most is {MAX_NAME_CHARS}"
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(*c == '-' || (c.is_alphanumeric() && !c.is_uppercase())))
    {
        return Err(format!(
            "`{name}` has `{bad}`: a skill name has only lowercase letters, digits and hyphens"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Err(format!(
            "`{name}` starts or ends with a hyphen; a skill name may not"
        ));
    }
    if name.contains("--") {
        return Err(format!(
            "`{name}` has two hyphens in a row; a skill name may not"
        ));
    }
    Ok(())
}

/// The 1-based line of the frontmatter's top-level `field:` in `text`.
fn field_line(text: &str, field: &str) -> Option<u32> {
    text.lines()
        .skip(1)
        .take_while(|l| l.trim_end() != "---")
        .position(|l| {
            l.strip_prefix(field)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map(|i| i as u32 + 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(dir: &Path, folder: &str, text: &str) -> PathBuf {
        let d = dir.join(folder);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("SKILL.md"), text).unwrap();
        d.join("SKILL.md")
    }

    #[test]
    fn names_follow_the_format() {
        for good in ["pdf", "pdf-forms", "data2csv", "café-notes"] {
            assert_eq!(check_name(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "PDF",
            "pdf_forms",
            "-pdf",
            "pdf-",
            "pdf--forms",
            "a b",
            &"x".repeat(65),
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn every_field_of_the_format_is_read() {
        let tmp = tempfile::tempdir().unwrap();
        skill(
            tmp.path(),
            "pdf-forms",
            "---\nname: pdf-forms\ndescription: >\n  Fill PDF forms.\n  Use for PDFs.\nlicense: Apache-2.0\n\
             compatibility: Needs python3\nallowed-tools: Bash(python:*) Read\nmetadata:\n  author: me\n  version: 1.0\n\
             model: claude-x\n---\n# Forms\n\nStep one.\n",
        );
        let (skills, errors) = load_dir(tmp.path(), &SkillOrigin::Config);
        assert!(errors.is_empty(), "{errors:?}");
        let s = &skills[0];
        assert_eq!(s.name, "pdf-forms");
        assert_eq!(s.description, "Fill PDF forms. Use for PDFs.");
        assert_eq!(s.license.as_deref(), Some("Apache-2.0"));
        assert_eq!(s.compatibility.as_deref(), Some("Needs python3"));
        assert_eq!(s.allowed_tools, ["Bash(python:*)", "Read"]);
        assert_eq!(s.metadata["author"], "me");
        assert_eq!(s.metadata["version"], "1.0");
        assert_eq!(s.ignored_fields, ["model"]);
        assert_eq!(s.instructions, "# Forms\n\nStep one.");
        assert_eq!(s.dir, tmp.path().join("pdf-forms"));
    }

    #[test]
    fn each_broken_skill_is_located_and_the_others_load() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        skill(
            d,
            "good",
            "---\nname: good\ndescription: Works.\n---\nBody\n",
        );
        let no_fm = skill(d, "no-frontmatter", "# Just markdown\n");
        let bad_name = skill(d, "bad-name", "---\ndescription: x\nname: Bad_Name\n---\n");
        let other = skill(
            d,
            "other-folder",
            "---\nname: not-the-folder\ndescription: x\n---\n",
        );
        let no_desc = skill(d, "no-desc", "---\nname: no-desc\n---\n");
        let bad_yaml = skill(
            d,
            "bad-yaml",
            "---\nname: bad-yaml\ndescription: [unclosed\n---\n",
        );
        let huge = skill(
            d,
            "huge",
            &format!(
                "---\nname: huge\ndescription: x\n---\n{}",
                "y".repeat(300 * 1024)
            ),
        );
        std::fs::create_dir_all(d.join("empty")).unwrap();
        std::fs::create_dir_all(d.join("_off")).unwrap();
        let (skills, errors) = load_dir(d, &SkillOrigin::Config);
        assert_eq!(
            skills.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["good"]
        );
        let of = |p: &Path| {
            errors
                .iter()
                .find(|e| e.file == p)
                .unwrap_or_else(|| panic!("no error for {}: {errors:?}", p.display()))
        };
        assert_eq!(of(&no_fm).line, Some(1));
        assert!(of(&no_fm).message.contains("starts with `---`"));
        assert_eq!(of(&bad_name).line, Some(3));
        assert_eq!(of(&bad_name).field.as_deref(), Some("name"));
        assert!(of(&other).message.contains("folder is `other-folder`"));
        assert_eq!(of(&no_desc).field.as_deref(), Some("description"));
        // The YAML reader notices the unclosed list where the frontmatter ends.
        assert_eq!(of(&bad_yaml).line, Some(4), "{:?}", of(&bad_yaml));
        assert!(of(&huge).message.contains("KiB"));
        assert!(of(&d.join("empty")).message.contains("no SKILL.md"));
        assert_eq!(errors.len(), 7, "{errors:?}");
    }

    /// Skills written for other clients may have a longer description than the format allows
    /// (Anthropic's `claude-api` has 1,068 characters) and those clients load them: so does
    /// this one, whole, with a warning located at the description. Nothing else is relaxed.
    #[test]
    fn a_description_longer_than_the_format_allows_loads_with_a_located_warning() {
        let fixtures =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/skills-with-warnings");
        let (skills, errors) = load_dir(&fixtures, &SkillOrigin::Config);
        assert_eq!(
            skills.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["api-reference"]
        );
        let s = &skills[0];
        assert_eq!(s.description.chars().count(), 1068);
        assert!(s
            .description
            .ends_with("never from a file that is committed, ever."));
        assert_eq!(s.license.as_deref(), Some("Apache-2.0"));
        assert_eq!(errors.len(), 1, "{errors:?}");
        let warning = &errors[0];
        assert_eq!(warning.file, fixtures.join("api-reference/SKILL.md"));
        assert_eq!(warning.line, Some(3));
        assert_eq!(warning.field.as_deref(), Some("description"));
        assert!(
            warning.message.starts_with(
                "the description is 1068 characters, more than the 1024 the Agent Skills \
                 format allows; the skill loads (as other clients load it), and the prompt's \
                 list of skills shows the start of it."
            ),
            "{warning}"
        );
        assert_eq!(s.warnings, errors);

        // Strict otherwise: the same description with a name that breaks the format is refused
        // for the name, and a skill with neither problem has no warning.
        let tmp = tempfile::tempdir().unwrap();
        let text = std::fs::read_to_string(fixtures.join("api-reference/SKILL.md")).unwrap();
        skill(
            tmp.path(),
            "API_Reference",
            &text.replace("name: api-reference", "name: API_Reference"),
        );
        skill(
            tmp.path(),
            "short",
            "---\nname: short\ndescription: Short.\n---\n",
        );
        let (skills, errors) = load_dir(tmp.path(), &SkillOrigin::Config);
        assert_eq!(
            skills.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["short"]
        );
        assert!(skills[0].warnings.is_empty());
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].field.as_deref(), Some("name"));
        assert!(
            errors[0].message.contains("`API_Reference` has `A`"),
            "{errors:?}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_skill_md_linked_out_of_its_folder_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("secret.md");
        std::fs::write(&outside, "---\nname: linked\ndescription: x\n---\n").unwrap();
        let skills = tmp.path().join("skills");
        std::fs::create_dir_all(skills.join("linked")).unwrap();
        std::os::unix::fs::symlink(&outside, skills.join("linked/SKILL.md")).unwrap();
        let (loaded, errors) = load_dir(&skills, &SkillOrigin::Config);
        assert!(loaded.is_empty());
        assert!(errors[0].message.contains("outside"), "{errors:?}");
    }
}
