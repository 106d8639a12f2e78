//! Test seams: stand-ins for what WebDriver cannot reach (the native save dialog, the system
//! browser, a slow first start) or cannot wait for (a tool-use check of 200 items). They exist
//! only in builds with the `e2e-seams` cargo feature (the end-to-end tests' app, built by
//! `scripts/test.sh`); in every other build, release installers included, these functions
//! return `None`, the environment variables are never read, and their names are not even in the
//! binary (`scripts/test.sh` and the release workflow check).

use std::path::PathBuf;

/// Set to a path, an artifact export writes there instead of asking in the save dialog.
#[cfg(feature = "e2e-seams")]
const SAVE_PATH_ENV: &str = "ARTIFACTFLOW_TEST_SAVE_PATH";

/// Set to a path, an external link is appended to that file (one URL a line) instead of being
/// opened in the system browser.
#[cfg(feature = "e2e-seams")]
const OPENER_LOG_ENV: &str = "ARTIFACTFLOW_TEST_OPENER_LOG";

/// Set to a path, the settings (`get_settings`) are answered only once that file exists: the
/// test of the starting splash holds the app in its start, as a slow keyring does on a fresh
/// machine.
#[cfg(feature = "e2e-seams")]
const SETTINGS_GATE_ENV: &str = "ARTIFACTFLOW_TEST_SETTINGS_GATE";

/// Set to a JSONL file of check items (`engine::check::parse_items`' format), the Models
/// screen's tool-use check asks those instead of the built-in set: a check a test can wait for.
#[cfg(feature = "e2e-seams")]
const CHECK_ITEMS_ENV: &str = "ARTIFACTFLOW_TEST_CHECK_ITEMS";

/// Set to paths (one a line, in a file named by the variable), "Add files…" and "Add folder…"
/// in the library take them instead of asking in the open dialog.
#[cfg(feature = "e2e-seams")]
const PICK_PATHS_ENV: &str = "ARTIFACTFLOW_TEST_PICK_PATHS";

/// What the library's open dialog picks, in an end-to-end test.
pub fn picked_paths() -> Option<Vec<PathBuf>> {
    #[cfg(feature = "e2e-seams")]
    return from_env(PICK_PATHS_ENV).map(|file| {
        std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(PathBuf::from)
            .collect()
    });
    #[cfg(not(feature = "e2e-seams"))]
    None
}

/// Where an export writes instead of asking, in an end-to-end test.
pub fn save_path() -> Option<PathBuf> {
    #[cfg(feature = "e2e-seams")]
    return from_env(SAVE_PATH_ENV);
    #[cfg(not(feature = "e2e-seams"))]
    None
}

/// Where external links are logged instead of opened, in an end-to-end test.
pub fn opener_log() -> Option<PathBuf> {
    #[cfg(feature = "e2e-seams")]
    return from_env(OPENER_LOG_ENV);
    #[cfg(not(feature = "e2e-seams"))]
    None
}

/// The file the settings wait for, in an end-to-end test.
pub fn settings_gate() -> Option<PathBuf> {
    #[cfg(feature = "e2e-seams")]
    return from_env(SETTINGS_GATE_ENV);
    #[cfg(not(feature = "e2e-seams"))]
    None
}

/// The items the Models screen's tool-use check asks instead of the built-in set, in an
/// end-to-end test.
pub fn check_items() -> Option<PathBuf> {
    #[cfg(feature = "e2e-seams")]
    return from_env(CHECK_ITEMS_ENV);
    #[cfg(not(feature = "e2e-seams"))]
    None
}

#[cfg(feature = "e2e-seams")]
fn from_env(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A build without the feature (what the release workflow ships) ignores the seams even
    /// when their variables are set.
    #[cfg(not(feature = "e2e-seams"))]
    #[test]
    fn seams_are_ignored_without_the_e2e_feature() {
        std::env::set_var("ARTIFACTFLOW_TEST_SAVE_PATH", "/tmp/seam-export.md");
        std::env::set_var("ARTIFACTFLOW_TEST_OPENER_LOG", "/tmp/seam-opener.log");
        std::env::set_var("ARTIFACTFLOW_TEST_SETTINGS_GATE", "/tmp/seam-gate");
        std::env::set_var("ARTIFACTFLOW_TEST_CHECK_ITEMS", "/tmp/seam-items.jsonl");
        assert_eq!(save_path(), None, "the save dialog must not be skipped");
        assert_eq!(opener_log(), None, "links must open in the browser");
        assert_eq!(settings_gate(), None, "the settings must not wait");
        assert_eq!(check_items(), None, "the check must ask the built-in items");
    }

    /// The end-to-end build honours them.
    #[cfg(feature = "e2e-seams")]
    #[test]
    fn seams_are_honoured_with_the_e2e_feature() {
        std::env::set_var(SAVE_PATH_ENV, "/tmp/seam-export.md");
        std::env::set_var(OPENER_LOG_ENV, "/tmp/seam-opener.log");
        std::env::set_var(SETTINGS_GATE_ENV, "/tmp/seam-gate");
        std::env::set_var(CHECK_ITEMS_ENV, "/tmp/seam-items.jsonl");
        assert_eq!(save_path(), Some(PathBuf::from("/tmp/seam-export.md")));
        assert_eq!(opener_log(), Some(PathBuf::from("/tmp/seam-opener.log")));
        assert_eq!(settings_gate(), Some(PathBuf::from("/tmp/seam-gate")));
        assert_eq!(check_items(), Some(PathBuf::from("/tmp/seam-items.jsonl")));
    }
}
