//! GitHub's REST API description (`@octokit/openapi`, installed in `tests/openapi` by
//! `scripts/setup.sh --test`): every operation either becomes a tool file that the real loader
//! accepts or is skipped with a reason. Prints the counts, the reasons and the import time.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::time::Instant;

use engine::openapi::{import, Selection};
use engine::tools::http::{parse_definition, ParamIn};
use engine::tools::ParamType;

#[test]
fn every_github_operation_imports_and_loads_or_is_skipped_with_a_reason() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/openapi/node_modules/@octokit/openapi/generated/api.github.com.json");
    assert!(
        path.is_file(),
        "GitHub's description is not installed at {}: run `scripts/setup.sh --test` (or `npm ci --prefix tests/openapi`)",
        path.display()
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let started = Instant::now();
    let imported = import("api.github.com.json", &text, &Selection::default()).unwrap();
    let elapsed = started.elapsed();

    let mut names = HashSet::new();
    let mut files = HashSet::new();
    let mut defs = BTreeMap::new();
    for tool in &imported.tools {
        assert!(names.insert(tool.name.clone()), "{} twice", tool.name);
        assert!(
            files.insert(tool.file_name.to_ascii_lowercase()),
            "{} twice (ignoring case)",
            tool.file_name
        );
        let def = parse_definition(Path::new(&tool.file_name), &tool.text)
            .unwrap_or_else(|e| panic!("{} does not load: {e:?}", tool.name));
        defs.insert(tool.name.clone(), def);
    }
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for s in &imported.skipped {
        assert!(
            !s.reason.trim().is_empty(),
            "{} skipped without a reason",
            s.operation
        );
        // Group by the reason with its quoted names taken out.
        let general: String = s
            .reason
            .split('`')
            .enumerate()
            .map(|(i, part)| if i % 2 == 1 { "…" } else { part })
            .collect();
        *reasons.entry(general).or_default() += 1;
    }
    println!(
        "GitHub REST: {} operations, {} imported, {} skipped, in {} ms",
        imported.total,
        imported.tools.len(),
        imported.skipped.len(),
        elapsed.as_millis()
    );
    for (reason, n) in &reasons {
        println!("  {n:4} skipped: {reason}");
    }
    assert_eq!(
        imported.tools.len() + imported.skipped.len(),
        imported.total,
        "every operation is accounted for"
    );
    assert!(
        imported.tools.len() * 100 >= imported.total * 95,
        "most operations import"
    );

    let content = &defs["repos_get-content"];
    assert_eq!(content.method, "GET");
    assert_eq!(
        content.endpoint,
        "https://api.github.com/repos/{owner}/{repo}/contents/{path}"
    );
    assert_eq!(content.route("owner").unwrap().location, ParamIn::Path);
    assert_eq!(content.route("ref").unwrap().location, ParamIn::Query);
    let workflow = &defs["actions_get-workflow"];
    let id = workflow
        .spec
        .params
        .iter()
        .find(|p| p.name == "workflow_id")
        .unwrap();
    assert_eq!(id.kind, ParamType::String, "oneOf integer/string");
    let issue = &defs["issues_create"];
    assert_eq!(issue.method, "POST");
    assert!(issue
        .route("title")
        .is_some_and(|r| r.location == ParamIn::Body));
    assert!(
        issue.route("labels").is_some_and(|r| r.json),
        "an array body property is JSON text"
    );
    // The import time is printed above; the goal (under 2 s) is measured by
    // `cargo bench -p artifactflow-engine --bench openapi`, not asserted.
}
