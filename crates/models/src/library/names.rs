//! Model file names that work on every system: a models folder made on Linux may be copied or
//! synced to Windows or macOS, so a name is held to the strictest rules of the three, on every
//! platform (the tests run them everywhere).
//!
//! [`check_portable_name`] is the one judge, used wherever a model file is named: a pull's
//! target (the last part of the Hub path), an import (the file's own name), the catalogue's
//! entries. A name is refused when it is:
//!
//! - empty, `.`, `..`, or starts with a dot (the library's own folders are `.library` and
//!   `.downloads`, and listing skips hidden files);
//! - holding a character Windows forbids in a file name (`< > : " / \ | ? *`), a control
//!   character, or an invisible or direction-changing one (zero-width, bidi overrides: the name
//!   would show as another);
//! - ending in a dot or a space (Windows drops them, so two names would be one file);
//! - a Windows device name, in any case, alone or before an extension: `CON`, `PRN`, `AUX`,
//!   `NUL`, `CONIN$`, `CONOUT$`, `COM0`–`COM9`, `LPT0`–`LPT9`, and `COM¹ COM² COM³ LPT¹ LPT²
//!   LPT³`, which Windows reads as digits too (`nul.tar.gguf` is the device `NUL`);
//! - longer than [`MAX_FILE_NAME_BYTES`].
//!
//! Each refusal says what is wrong, and [`portable_name`] makes a name that passes (the error
//! offers it).

/// The longest model file name, in UTF-8 bytes (with `.gguf`). File systems take 255 (ext4,
/// APFS; NTFS 255 UTF-16 units); the library adds `.part`, `.json` or `.import` to a name for
/// its own files, and 200 leaves room for those and for encrypted home folders (eCryptfs keeps
/// about 143 bytes of a plain name, so no limit fits it and every real model name).
pub const MAX_FILE_NAME_BYTES: usize = 200;

/// What Windows calls devices, without the numbered ones.
const DEVICES: [&str; 6] = ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"];

/// Devices followed by one digit: `0`–`9`, or the superscripts `¹ ² ³`.
const NUMBERED_DEVICES: [&str; 2] = ["COM", "LPT"];

/// Characters Windows forbids in a file name (besides control characters).
const FORBIDDEN: [char; 9] = ['<', '>', ':', '"', '/', '\\', '|', '?', '*'];

/// Why a name is not a portable file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameProblem {
    /// What is wrong, as the end of a sentence ("it contains ':', …").
    pub reason: String,
    /// A name like it that passes.
    pub suggestion: String,
}

/// Whether `name` is a file name every system can hold (see the module's rules).
pub fn check_portable_name(name: &str) -> Result<(), NameProblem> {
    let reason = problem(name);
    match reason {
        None => Ok(()),
        Some(reason) => Err(NameProblem {
            reason,
            suggestion: portable_name(name),
        }),
    }
}

fn problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty".into());
    }
    if name == "." || name == ".." {
        return Some("it names a folder, not a file".into());
    }
    if name.starts_with('.') {
        return Some("it starts with a dot, which hides a file (and the library keeps its own files under such names)".into());
    }
    if let Some(c) = name.chars().find(|c| FORBIDDEN.contains(c)) {
        return Some(format!(
            "it contains '{c}', which Windows does not allow in a file name"
        ));
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Some(format!(
            "it contains the control character {}",
            c.escape_unicode()
        ));
    }
    if let Some(c) = name.chars().find(|c| is_invisible(*c)) {
        return Some(format!(
            "it contains the invisible character {}, which would make it show as another name",
            c.escape_unicode()
        ));
    }
    if name.ends_with('.') || name.ends_with(' ') {
        return Some(
            "it ends with a dot or a space, which Windows drops (two names would be one file)"
                .into(),
        );
    }
    if let Some(device) = device(name) {
        return Some(format!(
            "Windows reads it as the device {device}, whatever its case or extension"
        ));
    }
    if name.len() > MAX_FILE_NAME_BYTES {
        return Some(format!(
            "it is {} bytes long, more than the {MAX_FILE_NAME_BYTES} bytes a model's file name may have",
            name.len()
        ));
    }
    None
}

/// Zero-width and direction-changing characters: a name holding them shows as another.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}' // zero-width space, joiners, direction marks
        | '\u{202A}'..='\u{202E}' // bidi embeddings and overrides
        | '\u{2060}'..='\u{2064}' // word joiner, invisible operators
        | '\u{2066}'..='\u{2069}' // bidi isolates
        | '\u{FEFF}' // byte order mark
    )
}

/// The device `name` is to Windows (in capitals), if it is one: the part before the first dot,
/// without trailing spaces, compared without regard to case.
fn device(name: &str) -> Option<String> {
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ');
    let upper = stem.to_uppercase();
    if DEVICES.contains(&upper.as_str()) {
        return Some(upper);
    }
    let mut chars = upper.chars();
    let last = chars.next_back()?;
    let head = chars.as_str();
    let digit = last.is_ascii_digit() || matches!(last, '\u{B9}' | '\u{B2}' | '\u{B3}');
    (digit && NUMBERED_DEVICES.contains(&head)).then_some(upper)
}

/// A name like `name` that passes [`check_portable_name`]: forbidden, control and invisible
/// characters become `_`, leading dots and trailing dots and spaces go, a device name gets a
/// `_` after its stem (`CON.gguf` → `CON_.gguf`), and a long name is cut at a character
/// boundary, its extension kept.
pub fn portable_name(name: &str) -> String {
    let mut fixed: String = name
        .chars()
        .map(|c| {
            if FORBIDDEN.contains(&c) || c.is_control() || is_invisible(c) {
                '_'
            } else {
                c
            }
        })
        .collect();
    fixed = fixed.trim_start_matches('.').to_string();
    fixed = fixed.trim_end_matches(['.', ' ']).to_string();
    if fixed.is_empty() {
        fixed = "model".into();
    }
    if device(&fixed).is_some() {
        let stem_end = fixed.find('.').unwrap_or(fixed.len());
        let stem = fixed[..stem_end].trim_end_matches(' ');
        fixed = format!("{stem}_{}", &fixed[stem_end..]);
    }
    if fixed.len() > MAX_FILE_NAME_BYTES {
        // Keep a short extension (`.gguf`); cut the rest.
        let ext = fixed
            .rfind('.')
            .map(|i| fixed[i..].to_string())
            .filter(|e| e.len() <= 16)
            .unwrap_or_default();
        let mut end = MAX_FILE_NAME_BYTES - ext.len();
        while !fixed.is_char_boundary(end) {
            end -= 1;
        }
        let head = fixed[..end].trim_end_matches(['.', ' ']);
        fixed = format!("{head}{ext}");
    }
    fixed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_work_everywhere_pass() {
        for name in [
            "Qwen3-1.7B-Q4_K_M.gguf",
            "SmolLM2-135M-Instruct.Q8_0.gguf",
            "my model (v2).gguf",
            "modèle-français.gguf",
            "模型.gguf",
            "a..b.gguf",
            "CONSOLE.gguf",
            "COM10.gguf",
            "LPT.gguf",
            "NULL.gguf",
            "x.CON",
            "COM\u{2074}.gguf", // superscript four is no device digit
            &format!("{}.gguf", "a".repeat(MAX_FILE_NAME_BYTES - 5)),
        ] {
            assert_eq!(check_portable_name(name), Ok(()), "{name}");
        }
    }

    /// The Windows rules, run on every platform.
    #[test]
    fn windows_rules_are_kept_on_every_platform() {
        let cases: &[(&str, &str)] = &[
            ("", "empty"),
            (".", "folder"),
            ("..", "folder"),
            (".hidden.gguf", "starts with a dot"),
            ("a:b.gguf", "':'"),
            ("C:model.gguf", "':'"),
            ("model.gguf:stream", "':'"),
            ("a<b.gguf", "'<'"),
            ("a>b.gguf", "'>'"),
            ("say \"hi\".gguf", "'\"'"),
            ("dir/a.gguf", "'/'"),
            ("dir\\a.gguf", "'\\'"),
            ("a|b.gguf", "'|'"),
            ("what?.gguf", "'?'"),
            ("all*.gguf", "'*'"),
            ("tab\there.gguf", "\\u{9}"),
            ("nul\0byte.gguf", "\\u{0}"),
            ("esc\u{1b}[31m.gguf", "\\u{1b}"),
            ("del\u{7f}.gguf", "\\u{7f}"),
            ("c1\u{85}.gguf", "\\u{85}"),
            ("evil\u{202E}fuggf.exe", "\\u{202e}"),
            ("zero\u{200B}width.gguf", "\\u{200b}"),
            ("model.", "ends with a dot"),
            ("model ", "ends with a dot or a space"),
            ("model.gguf.", "ends with a dot"),
            ("CON", "device CON"),
            ("con.gguf", "device CON"),
            ("Con.tar.gguf", "device CON"),
            ("CON .gguf", "device CON"),
            ("PRN.gguf", "device PRN"),
            ("aux.gguf", "device AUX"),
            ("NuL.gguf", "device NUL"),
            ("conin$.gguf", "device CONIN$"),
            ("CONOUT$", "device CONOUT$"),
            ("COM0.gguf", "device COM0"),
            ("com1.gguf", "device COM1"),
            ("COM9", "device COM9"),
            ("lpt0.gguf", "device LPT0"),
            ("LPT9.q8.gguf", "device LPT9"),
            ("COM\u{B9}.gguf", "device COM\u{B9}"),
            ("com\u{B2}.gguf", "device COM\u{B2}"),
            ("LPT\u{B3}", "device LPT\u{B3}"),
            ("lpt\u{B9}.gguf", "device LPT\u{B9}"),
            (
                &format!("{}.gguf", "a".repeat(MAX_FILE_NAME_BYTES - 4)),
                "201 bytes long",
            ),
            (&format!("{}.gguf", "é".repeat(100)), "205 bytes long"),
        ];
        for (name, says) in cases {
            let problem = check_portable_name(name).expect_err(name);
            assert!(
                problem.reason.contains(says),
                "{name:?}: {} (expected {says:?})",
                problem.reason
            );
            assert_eq!(
                check_portable_name(&problem.suggestion),
                Ok(()),
                "{name:?} → {:?}",
                problem.suggestion
            );
            if name.ends_with(".gguf") {
                assert!(
                    problem.suggestion.ends_with(".gguf"),
                    "{name:?} → {:?}",
                    problem.suggestion
                );
            }
        }
    }

    #[test]
    fn suggestions_stay_close_to_the_name() {
        assert_eq!(portable_name("a:b-Q4_K_M.gguf"), "a_b-Q4_K_M.gguf");
        assert_eq!(portable_name("CON.gguf"), "CON_.gguf");
        assert_eq!(portable_name("nul.tar.gguf"), "nul_.tar.gguf");
        assert_eq!(portable_name("COM\u{B9}.gguf"), "COM\u{B9}_.gguf");
        assert_eq!(portable_name("model. "), "model");
        assert_eq!(portable_name(".hidden.gguf"), "hidden.gguf");
        assert_eq!(portable_name(""), "model");
        assert_eq!(portable_name(".."), "model");
        let long = portable_name(&format!("{}.gguf", "é".repeat(150)));
        assert!(
            long.len() <= MAX_FILE_NAME_BYTES && long.ends_with("é.gguf"),
            "{long}"
        );
    }
}
