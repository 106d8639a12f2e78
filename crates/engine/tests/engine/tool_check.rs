//! The tool-use check end to end against the scripted model server: a reduced item set whose
//! scripted answers are right, the wrong tool, a wrong argument, no call where one was needed,
//! a call where none was needed, an invalid call, two calls over two rounds and a fenced JSON
//! call; the exact score, the requests as the run loop makes them, and the result kept in the
//! SQLite file and read back.

use std::path::PathBuf;

use engine::check::{self, CheckOptions, CheckProgress, ItemKind, Verdict};
use engine::models::ToolCallMode;
use engine::run::RunOptions;
use test_support::Turn;

use crate::harness::Harness;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tool_check")
        .join(name)
}

fn small_items() -> Vec<check::CheckItem> {
    let text = std::fs::read_to_string(fixture("small.jsonl")).unwrap();
    check::parse_items(&text, "small.jsonl").unwrap()
}

fn scripted_answers() -> Vec<Turn> {
    serde_json::from_str(&std::fs::read_to_string(fixture("small_answers.json")).unwrap()).unwrap()
}

/// The system message of an OpenAI-style request.
fn system_prompt(request: &test_support::RecordedRequest) -> String {
    let (role, text) = request.messages().into_iter().next().unwrap();
    assert_eq!(role, "system");
    text
}

#[tokio::test]
async fn a_check_in_text_mode_scores_each_answer_by_its_rules_and_keeps_the_result() {
    let h = Harness::new(scripted_answers(), "openai", RunOptions::default()).await;
    let items = small_items();
    let target = check::target(&h.ctx, "default").unwrap();
    assert_eq!(
        target.identity.key,
        check::server_key(&h.model.openai_base_url(), "scripted")
    );
    assert!(!target.identity.key.contains("127.0.0.1"));
    let options = CheckOptions {
        mode: ToolCallMode::Text,
        guided: false,
    };
    let mut seen: Vec<(u32, u32, String)> = Vec::new();
    let mut progress = |p: &CheckProgress| seen.push((p.done, p.total, p.item.id.clone()));
    let cancel = tokio_util::sync::CancellationToken::new();
    let report = check::run_check(
        &h.ctx,
        &target,
        &items,
        "small.jsonl",
        options,
        &mut progress,
        &cancel,
    )
    .await
    .unwrap();

    let verdicts: Vec<(&str, Verdict)> = report
        .items
        .iter()
        .map(|i| (i.id.as_str(), i.verdict))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("weather-paris", Verdict::AsAsked),
            ("read-todo", Verdict::WrongTool),
            ("convert-5km", Verdict::WrongArguments),
            ("email-ana", Verdict::NoCall),
            ("capital", Verdict::UnwantedCall),
            ("weather-where", Verdict::AsAsked),
            ("weather-two", Verdict::AsAsked),
            ("weather-kelvin", Verdict::InvalidCall),
            ("email-fenced", Verdict::AsAsked),
        ],
        "{:?}",
        report.items
    );
    let t = report.totals;
    assert_eq!(
        (
            t.items,
            t.as_asked,
            t.right_tool,
            t.valid_calls,
            t.calls_expected,
            t.failed
        ),
        (9, 4, 5, 5, 7, 0)
    );
    let kinds: Vec<(ItemKind, u32, u32)> = report
        .by_kind
        .iter()
        .map(|k| (k.kind, k.tally.items, k.tally.as_asked))
        .collect();
    assert_eq!(
        kinds,
        [
            (ItemKind::OneCall, 4, 2),
            (ItemKind::ChooseTool, 1, 0),
            (ItemKind::TwoCalls, 1, 1),
            (ItemKind::FromContext, 1, 0),
            (ItemKind::NoTool, 1, 0),
            (ItemKind::MissingValue, 1, 1),
        ]
    );
    // Why each is off, in words; the fenced call came through the forms reader.
    let why = |id: &str| {
        report
            .items
            .iter()
            .find(|i| i.id == id)
            .unwrap()
            .why
            .clone()
            .unwrap_or_default()
    };
    assert!(
        why("convert-5km").contains("`value` is 50"),
        "{}",
        why("convert-5km")
    );
    assert!(
        why("weather-kelvin").contains("must be one of"),
        "{}",
        why("weather-kelvin")
    );
    let fenced = &report
        .items
        .iter()
        .find(|i| i.id == "email-fenced")
        .unwrap()
        .calls[0];
    assert_eq!(fenced.source, check::score::CallSource::Written);
    assert_eq!(fenced.arguments.as_ref().unwrap()["to"], "bo@example.org");
    // Progress after every item.
    assert_eq!(seen.len(), 9);
    assert_eq!(seen[8], (9, 9, "email-fenced".to_string()));

    // The requests, as the run loop makes them in text mode: the tool instructions in the
    // system prompt, no native tools, no grammar, greedy; the two-call item's second round
    // carries the first call's result.
    let requests = h.model.requests();
    assert_eq!(
        requests.len(),
        10,
        "one request per item, two for the two-call item"
    );
    let first = &requests[0];
    let system = system_prompt(first);
    assert!(system.starts_with(check::runner::ROLE_PROMPT), "{system}");
    assert!(system.contains("<tool_instructions>") && system.contains("get_weather"));
    assert!(first.tools().is_empty());
    assert!(first.body.get("grammar").is_none());
    assert_eq!(first.body["temperature"], 0.0);
    let from_context = requests[3].messages();
    assert_eq!(from_context.len(), 4, "system + the item's three messages");
    assert_eq!(
        from_context[2],
        ("assistant".to_string(), "Noted.".to_string())
    );
    let second_round = requests[7].messages();
    let (role, result) = second_round.last().unwrap();
    assert_eq!(role, "user");
    assert!(
        result.contains("<tool_result name=\"get_weather\""),
        "{result}"
    );
    assert_eq!(report.items[6].requests, 2);

    // Kept in the database file, and read back by a new connection.
    let id = check::store_report(&h.ctx, &report).unwrap().unwrap();
    let db = engine::db::open(&h.ctx.paths().database).unwrap();
    let rows = check::rows::latest(&db, &target.identity.key).unwrap();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(
        (
            row.id,
            row.mode.as_str(),
            row.guided,
            row.items,
            row.as_asked,
            row.valid_calls
        ),
        (id, "text", false, 9, 4, 5)
    );
    assert_eq!(row.item_set, "small.jsonl");
    let latest = check::latest_checks(&h.ctx, "default").unwrap();
    assert_eq!(latest.len(), 1);
    assert_eq!(latest[0].totals, report.totals);
    assert_eq!(
        check::best_checked_mode(&h.ctx, "default"),
        Some((ToolCallMode::Text, false))
    );
}

#[tokio::test]
async fn a_check_in_native_guided_mode_sends_the_tools_and_the_grammar_and_reads_native_calls() {
    let turns = vec![
        Turn::text("").with_call("get_weather", r#"{"city": "Paris", "units": "celsius"}"#),
        Turn::text("").with_call("read_file", r#"{"path": "todo.md"}"#),
        Turn::text("").with_call(
            "convert_units",
            r#"{"value": 5, "from_unit": "km", "to_unit": "mi"#,
        ),
    ];
    let h = Harness::new(turns, "openai", RunOptions::default()).await;
    let items: Vec<_> = small_items().into_iter().take(3).collect();
    let target = check::target(&h.ctx, "default").unwrap();
    let options = CheckOptions {
        mode: ToolCallMode::Native,
        guided: true,
    };
    let cancel = tokio_util::sync::CancellationToken::new();
    let report = check::run_check(
        &h.ctx,
        &target,
        &items,
        "first 3",
        options,
        &mut |_| {},
        &cancel,
    )
    .await
    .unwrap();
    let verdicts: Vec<Verdict> = report.items.iter().map(|i| i.verdict).collect();
    assert_eq!(
        verdicts,
        [Verdict::AsAsked, Verdict::AsAsked, Verdict::InvalidCall],
        "{:?}",
        report.items
    );
    assert!(report.items[2]
        .why
        .as_deref()
        .unwrap()
        .contains("could not be read"));
    let requests = h.model.requests();
    let first = &requests[0];
    assert_eq!(first.tools(), ["get_weather"]);
    assert!(!system_prompt(first).contains("<tool_instructions>"));
    let grammar = first.body["grammar"].as_str().expect("guided: a grammar");
    assert!(grammar.contains("get_weather"), "{grammar}");
    assert!(first.body["grammar_triggers"]
        .as_array()
        .is_some_and(|t| !t.is_empty()));
    // Kept under its own mode and guidance.
    check::store_report(&h.ctx, &report).unwrap();
    let latest = check::latest_checks(&h.ctx, "default").unwrap();
    assert_eq!(latest.len(), 1);
    assert_eq!(latest[0].mode, ToolCallMode::Native);
    assert!(latest[0].guided);
}

#[tokio::test]
async fn a_cancelled_check_stops_before_the_next_item_and_is_not_kept() {
    let h = Harness::new(scripted_answers(), "openai", RunOptions::default()).await;
    let items = small_items();
    let target = check::target(&h.ctx, "default").unwrap();
    let cancel = tokio_util::sync::CancellationToken::new();
    let stop = cancel.clone();
    let mut progress = move |p: &CheckProgress| {
        if p.done == 2 {
            stop.cancel();
        }
    };
    let options = CheckOptions {
        mode: ToolCallMode::Text,
        guided: false,
    };
    let report = check::run_check(
        &h.ctx,
        &target,
        &items,
        "small",
        options,
        &mut progress,
        &cancel,
    )
    .await
    .unwrap();
    assert!(report.cancelled);
    assert_eq!(report.items.len(), 2);
    assert_eq!(h.model.requests().len(), 2);
    assert_eq!(check::store_report(&h.ctx, &report).unwrap(), None);
    assert!(check::latest_checks(&h.ctx, "default").unwrap().is_empty());
}

#[test]
fn an_unknown_model_is_named_with_what_there_is() {
    let home = tempfile::tempdir().unwrap();
    let ctx = engine::context::AppContext::open(Some(home.path())).unwrap();
    let err = check::target(&ctx, "nope").unwrap_err();
    assert!(err.contains("`nope` is neither a model profile"), "{err}");
    assert!(err.contains("models pull"), "{err}");
}

/// A report of `as_asked` items of 10 answered as asked, the rest with no call.
fn report_of(
    target: &check::CheckTarget,
    mode: ToolCallMode,
    guided: bool,
    item_set: &str,
    as_asked: usize,
) -> check::CheckReport {
    let items = (0..10)
        .map(|i| check::ItemScore {
            id: format!("i{i}"),
            kind: ItemKind::OneCall,
            verdict: if i < as_asked {
                Verdict::AsAsked
            } else {
                Verdict::NoCall
            },
            valid_call: i < as_asked,
            right_tool: i < as_asked,
            as_asked: i < as_asked,
            why: None,
            calls: Vec::new(),
            requests: 1,
            seconds: 1.0,
        })
        .collect();
    check::CheckReport::new(
        target,
        CheckOptions { mode, guided },
        item_set,
        items,
        10.0,
        false,
    )
}

#[test]
fn tool_calls_auto_goes_by_the_best_check_of_the_model_file_kept_by_its_sha256() {
    use sha2::Digest;
    let home = tempfile::tempdir().unwrap();
    let ctx = engine::context::AppContext::open(Some(home.path())).unwrap();
    let models = ctx.paths().models_dir();
    std::fs::create_dir_all(&models).unwrap();
    let bytes = test_support::gguf::tiny("llama", 2048, 15);
    std::fs::write(models.join("tiny.gguf"), &bytes).unwrap();
    let target = check::target(&ctx, "tiny").unwrap();
    let sha256: String = sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(target.identity.key, format!("sha256:{sha256}"));
    assert_eq!(target.identity.name, "tiny");

    // Never checked, and its file has no template that takes tools: text, guided (local).
    let auto = check::resolve_options(&ctx, &target, Some("auto"), None);
    assert_eq!((auto.mode, auto.guided), (ToolCallMode::Text, true));
    assert_eq!(check::best_checked_mode(&ctx, "tiny"), None);

    for (mode, guided, set, score) in [
        (ToolCallMode::Text, true, check::BUILTIN_SET, 5),
        (ToolCallMode::Native, false, check::BUILTIN_SET, 8),
        // A reduced set scores higher, but says less: the built-in set's result decides.
        (ToolCallMode::Native, true, "small.jsonl (abc)", 10),
    ] {
        let report = report_of(&target, mode, guided, set, score);
        check::store_report(&ctx, &report).unwrap().unwrap();
    }
    assert_eq!(check::latest_checks(&ctx, "tiny").unwrap().len(), 3);
    assert_eq!(
        check::best_checked_mode(&ctx, "tiny"),
        Some((ToolCallMode::Native, false))
    );
    let auto = check::resolve_options(&ctx, &target, Some("auto"), None);
    assert_eq!((auto.mode, auto.guided), (ToolCallMode::Native, false));

    // The run loop's `auto` asks the same store, by the file's path.
    let mut profile = target.profile.clone();
    profile.tool_calls = Some(ToolCallMode::Auto);
    let choice =
        engine::run::tool_mode::resolve(&profile, None, &engine::check::StoredChecks::new(&ctx));
    assert_eq!(
        (choice.mode, choice.guided, choice.reason),
        (
            ToolCallMode::Native,
            false,
            engine::run::tool_mode::AutoReason::Checked
        )
    );

    // Removed and imported again under another name: the same file, the same results.
    let copy = home.path().join("renamed.gguf");
    std::fs::write(&copy, &bytes).unwrap();
    std::fs::remove_file(models.join("tiny.gguf")).unwrap();
    engine::api::models::import(&ctx, &copy).unwrap();
    assert_eq!(
        check::best_checked_mode(&ctx, "renamed"),
        Some((ToolCallMode::Native, false))
    );
}

#[test]
fn the_catalogue_recommends_the_model_that_fits_with_the_best_check() {
    use engine::api::models;
    use engine::models::library::{catalog, Machine};
    let home = tempfile::tempdir().unwrap();
    let ctx = engine::context::AppContext::open(Some(home.path())).unwrap();
    let dir = ctx.paths().models_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let big = Machine {
        total_memory: 64 << 30,
        available_memory: 32 << 30,
        free_disk: 500 << 30,
        cores: 8,
    };
    // Before any check here: the catalogue's published check decides, and says where it was
    // measured.
    let view = models::catalog_for(&ctx, big);
    let published = view
        .items
        .iter()
        .find(|i| i.recommended)
        .expect("a recommendation");
    let check = published.check.as_ref().expect("the published check");
    assert!(!check.here);
    let reason = view.recommendation.clone().unwrap();
    assert!(reason.contains(&check.score.measured), "{reason}");
    assert!(reason.contains(&check.score.percent()), "{reason}");

    // An installed entry without a published check, checked on this computer in two modes:
    // its best mode is its score, and when that beats the published one it is recommended.
    let entry = catalog()
        .iter()
        .find(|e| e.published_check.is_none() && e.id != published.entry.id)
        .unwrap();
    let bytes = test_support::gguf::tiny("llama", 2048, 15);
    std::fs::write(dir.join(&entry.file), &bytes).unwrap();
    let name = entry.file.trim_end_matches(".gguf");
    let target = check::target(&ctx, name).unwrap();
    for (mode, guided, as_asked) in [
        (ToolCallMode::Text, true, 6),
        (ToolCallMode::Native, true, 10),
    ] {
        let report = report_of(&target, mode, guided, check::BUILTIN_SET, as_asked);
        check::store_report(&ctx, &report).unwrap().unwrap();
    }
    let view = models::catalog_for(&ctx, big);
    let item = view.items.iter().find(|i| i.entry.id == entry.id).unwrap();
    let here = item.check.as_ref().expect("this computer's check");
    assert!(here.here);
    assert_eq!(
        (
            here.score.as_asked,
            here.score.items,
            here.score.mode.as_str(),
            here.score.guided
        ),
        (10, 10, "native", true)
    );
    assert!(item.recommended, "{:?}", view.recommendation);
    let reason = view.recommendation.unwrap();
    assert!(reason.contains("100 % of 10 items as asked"), "{reason}");
    assert!(reason.contains("on this computer"), "{reason}");

    // Checked again, worse than the published one: the published one is recommended again.
    let report = report_of(&target, ToolCallMode::Native, true, check::BUILTIN_SET, 0);
    check::store_report(&ctx, &report).unwrap().unwrap();
    let report = report_of(&target, ToolCallMode::Text, true, check::BUILTIN_SET, 0);
    check::store_report(&ctx, &report).unwrap().unwrap();
    let view = models::catalog_for(&ctx, big);
    let recommended = view.items.iter().find(|i| i.recommended).unwrap();
    assert_eq!(recommended.entry.id, published.entry.id);
    let item = view.items.iter().find(|i| i.entry.id == entry.id).unwrap();
    assert_eq!(item.check.as_ref().unwrap().score.as_asked, 0);

    // A check on a reduced item set says less: it is not shown as the model's check.
    let other = catalog()
        .iter()
        .find(|e| e.published_check.is_none() && e.id != published.entry.id && e.id != entry.id)
        .unwrap();
    std::fs::write(
        dir.join(&other.file),
        test_support::gguf::tiny("llama", 2048, 16),
    )
    .unwrap();
    let target = check::target(&ctx, other.file.trim_end_matches(".gguf")).unwrap();
    let report = report_of(&target, ToolCallMode::Native, true, "small.jsonl (abc)", 10);
    check::store_report(&ctx, &report).unwrap().unwrap();
    let view = models::catalog_for(&ctx, big);
    let item = view.items.iter().find(|i| i.entry.id == other.id).unwrap();
    assert!(item.check.is_none());
    assert!(!item.recommended);
}
