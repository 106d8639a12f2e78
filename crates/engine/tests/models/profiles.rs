//! `models.yaml`: the bundled file, and located errors for a broken one.

use std::path::Path;

use engine::models::{load_profiles, Api};

#[test]
fn the_bundled_models_yaml_loads_without_errors() {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config");
    let (profiles, errors) = load_profiles(&config);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(profiles.iter().any(|p| p.api == Api::Openai));
    assert!(profiles.iter().any(|p| p.api == Api::Anthropic));
    assert!(profiles
        .iter()
        .all(|p| p.api_key.is_none() || p.api_key_name().is_some()));
}

#[test]
fn a_broken_file_keeps_the_good_profiles_and_locates_each_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("models.yaml"),
        "# comment\nprofiles:\n  - name: good\n    api: anthropic\n    base_url: https://api.anthropic.com\n    model: claude\n    api_key: \"{{ANTHROPIC_API_KEY}}\"\n  - name: good\n    api: openai\n    base_url: http://127.0.0.1:1/v1\n    model: m\n  - name: clear\n    api: openai\n    base_url: not a url\n    model: m\n  - name: keyed\n    api: openai\n    base_url: http://h/v1\n    model: m\n    api_key: sk-abc123def456\n",
    )
    .unwrap();
    let (profiles, errors) = load_profiles(dir.path());
    assert_eq!(profiles.len(), 1);
    assert_eq!(profiles[0].name, "good");
    let located: Vec<_> = errors
        .iter()
        .map(|e| (e.file.ends_with("models.yaml"), e.line, e.field.clone()))
        .collect();
    assert_eq!(
        located,
        [
            (true, Some(8), Some("profiles[1].name".into())),
            (true, Some(14), Some("profiles[2].base_url".into())),
            (true, Some(20), Some("profiles[3].api_key".into())),
        ]
    );
    assert!(!format!("{errors:?}").contains("sk-abc123"));
}
