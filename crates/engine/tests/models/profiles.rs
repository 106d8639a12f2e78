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

mod numbers {
    //! Every numeric field (stream limits included), with any value (NaN, infinities, negative,
    //! huge, below the minimum): the writer refuses
    //! exactly what the checks refuse, with a located error, and "Test connection" always ends.

    use engine::config_edit::{save_profiles, test_profile};
    use engine::limits::StreamLimits;
    use engine::models::{load_profiles, Api};
    use proptest::prelude::*;
    use test_support::{ScriptedModel, Turn};

    use crate::common::{profile, secrets, STEP};

    fn number() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(-1.0),
            Just(0.0),
            Just(f64::MAX),
            Just(1e300),
            Just(f64::MIN_POSITIVE),
            any::<f64>(),
            0.001f64..3.0,
            0.001f64..100_000.0,
        ]
    }

    /// Each stream limit: any u32, often below the 1 KiB minimum.
    fn limits() -> impl Strategy<Value = StreamLimits> {
        let bytes = || prop_oneof![Just(0u32), 0u32..2048, any::<u32>()];
        (bytes(), bytes(), bytes()).prop_map(|(line, event, answer)| StreamLimits {
            max_line_bytes: line,
            max_event_bytes: event,
            max_answer_bytes: answer,
        })
    }

    #[test]
    fn any_numbers_are_refused_with_a_location_or_tested_to_an_end() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let server = rt.block_on(ScriptedModel::start(Vec::new()));
        let (_dir, secrets) = secrets(&[]);
        let config = proptest::test_runner::Config {
            cases: 96,
            failure_persistence: None,
            ..Default::default()
        };
        let mut runner = proptest::test_runner::TestRunner::new(config);
        let strategy = (number(), any::<u32>(), number(), limits());
        runner
            .run(&strategy, |(temperature, max_tokens, timeout, limits)| {
                let mut p = profile(Api::Openai, &server.openai_base_url(), None);
                p.temperature = Some(temperature as f32);
                p.max_tokens = Some(max_tokens);
                p.timeout = Some(timeout);
                p.limits = Some(limits);
                let checked = p.check();
                // Each field alone, to know which ones are out of range.
                let bad: Vec<String> = [
                    ("temperature", (Some(p.temperature.unwrap()), None, None)),
                    ("max_tokens", (None, Some(max_tokens), None)),
                    ("timeout", (None, None, Some(timeout))),
                ]
                .into_iter()
                .filter(|(_, (t, m, o))| {
                    let mut alone = profile(Api::Openai, "http://127.0.0.1:1/v1", None);
                    (alone.temperature, alone.max_tokens, alone.timeout) = (*t, *m, *o);
                    alone.check().is_err()
                })
                .chain(limits.too_small().map(|_| ("limits", (None, None, None))))
                .map(|(f, _)| format!("profiles[0].{f}"))
                .collect();
                prop_assert_eq!(checked.is_err(), !bad.is_empty());

                // The writer validates with the loader: same verdict, located errors.
                let dir = tempfile::tempdir().unwrap();
                match save_profiles(dir.path(), std::slice::from_ref(&p)) {
                    Ok(()) => {
                        prop_assert!(checked.is_ok(), "{checked:?} but written");
                        let (loaded, errors) = load_profiles(dir.path());
                        prop_assert!(errors.is_empty(), "{errors:?}");
                        prop_assert_eq!(loaded[0].timeout, p.timeout);
                        prop_assert_eq!(loaded[0].limits, p.limits);
                    }
                    Err(errors) => {
                        prop_assert!(checked.is_err(), "refused a valid profile: {errors:?}");
                        let e = &errors.errors()[0];
                        prop_assert!(e.line.is_some(), "{e}");
                        let field = e.field.clone().unwrap_or_default();
                        prop_assert!(bad.contains(&field), "{field} is fine: {e}");
                    }
                }

                // "Test connection" ends with a verdict, never a panic.
                let result = rt.block_on(async {
                    server.push_turns([Turn::text("OK")]);
                    tokio::time::timeout(STEP, test_profile(&p, secrets.clone())).await
                });
                let result = result.expect("the test ends");
                if let Err((field, _)) = checked {
                    prop_assert!(!result.ok, "{result:?}");
                    prop_assert!(result.message.contains(field), "{result:?}");
                }
                Ok(())
            })
            .unwrap();
    }
}
