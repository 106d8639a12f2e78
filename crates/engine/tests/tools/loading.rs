use std::path::{Path, PathBuf};
use std::time::Duration;

use engine::config::Permission;
use engine::tools::http::{load_dir, parse_definition};
use engine::tools::registry::Registry;
use engine::tools::ParamType;
use serde_json::json;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn every_field_and_default_of_seed_001() {
    let minimal = parse_definition(
        Path::new("t.md"),
        "---\nname: minimal\nendpoint: https://api.example.com/x\n---\n",
    )
    .unwrap();
    assert_eq!(minimal.spec.description, "");
    assert_eq!(
        minimal.permission,
        Permission::Confirm,
        "custom tools confirm by default"
    );
    assert_eq!(minimal.method, "GET");
    assert!(minimal.headers.is_empty());
    assert_eq!(minimal.timeout, Duration::from_secs(30));
    assert_eq!(minimal.response_extract, None);
    assert!(minimal.spec.params.is_empty());

    let example = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/tools/_example.md"),
    )
    .unwrap();
    let full = parse_definition(Path::new("_example.md"), &example).unwrap();
    assert_eq!(full.spec.name, "query_stock_price");
    assert_eq!(full.method, "POST");
    assert!(full.sends_body());
    assert_eq!(full.headers["Authorization"], "Bearer {{STOCK_API_KEY}}");
    assert_eq!(full.response_extract.as_deref(), Some("$.data.price"));
    assert!(
        full.spec
            .description
            .starts_with("Query real-time stock price from exchange API\nQuery real-time"),
        "the Markdown body is appended to the description: {}",
        full.spec.description
    );
    let market = &full.spec.params[1];
    assert_eq!(market.kind, ParamType::String);
    assert!(
        market.required,
        "`required` defaults to true even with a default (seed 001)"
    );
    assert_eq!(market.default, Some(json!("US")));
    let filled = engine::tools::pipeline::prepare(
        &full.spec.params,
        &[("symbol".to_string(), "AAPL".to_string())]
            .into_iter()
            .collect(),
    )
    .unwrap();
    assert_eq!(
        filled["market"], "US",
        "the default fills the missing value"
    );
    assert_eq!(
        market.enum_values.as_deref(),
        Some(&["US".into(), "HK".into(), "SH".into()][..])
    );
    assert!(full.spec.params[0].required, "required defaults to true");
}

#[test]
fn broken_files_name_file_line_and_field_and_others_still_load() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(
        dir,
        "good.md",
        "---\nname: good\nendpoint: http://127.0.0.1:1/\n---\n",
    );
    write(dir, "_ignored.md", "this is not even frontmatter");
    let cases = [
        ("syntax.md", "---\nname: s\nendpoint: [unclosed\n---\n", Some(3), None),
        ("unknown.md", "---\nname: u\nendpoint: http://x\nmethd: POST\n---\n", Some(4), None),
        ("method.md", "---\nname: m\nendpoint: http://x\nmethod: FETCH\n---\n", Some(4), Some("method")),
        ("endpoint.md", "---\nname: e\nendpoint: api.example.com/x\n---\n", Some(3), Some("endpoint")),
        ("type.md", "---\nname: t\ntype: grpc\nendpoint: http://x\n---\n", Some(3), Some("type")),
        ("path.md", "---\nname: p\nendpoint: http://x\nresponse_extract: \"$.a[\"\n---\n", Some(4), Some("response_extract")),
        ("timeout.md", "---\nname: to\nendpoint: http://x\ntimeout: soon\n---\n", Some(4), Some("timeout")),
        ("name.md", "---\nname: \"has space\"\nendpoint: http://x\n---\n", Some(2), Some("name")),
        ("noname.md", "---\nendpoint: http://x\n---\n", None, Some("name")),
        (
            "default.md",
            "---\nname: d\nendpoint: http://x\nparameters:\n  - name: n\n    type: integer\n    default: lots\n",
            Some(1),
            None,
        ),
        (
            "default2.md",
            "---\nname: d2\nendpoint: http://x\nparameters:\n  - name: q\n    type: string\n  - name: n\n    type: integer\n    default: lots\n---\n",
            Some(9),
            Some("parameters[1].default"),
        ),
        (
            "enum.md",
            "---\nname: en\nendpoint: http://x\nparameters:\n  - name: m\n    type: string\n    enum: [A, B]\n    default: C\n---\n",
            Some(8),
            Some("parameters[0].default"),
        ),
        (
            "dup.md",
            "---\nname: dup\nendpoint: http://x\nparameters:\n  - name: q\n    type: string\n  - name: q\n    type: string\n---\n",
            Some(7),
            Some("parameters[1].name"),
        ),
        (
            "ptype.md",
            "---\nname: pt\nendpoint: http://x\nparameters:\n  - name: q\n    type: text\n---\n",
            Some(6),
            Some("parameters[0].type"),
        ),
    ];
    let mut paths = Vec::new();
    for (file, text, _, _) in &cases {
        paths.push(write(dir, file, text));
    }
    let (defs, errors) = load_dir(dir);
    assert_eq!(
        defs.iter()
            .map(|d| d.spec.name.as_str())
            .collect::<Vec<_>>(),
        ["good"]
    );
    assert_eq!(errors.len(), cases.len(), "{errors:#?}");
    for ((file, _, line, field), path) in cases.iter().zip(&paths) {
        let e = errors
            .iter()
            .find(|e| &e.file == path)
            .unwrap_or_else(|| panic!("no error for {file}"));
        if let Some(line) = line {
            assert_eq!(e.line, Some(*line), "{file}: {e}");
        }
        if let Some(field) = field {
            assert_eq!(e.field.as_deref(), Some(*field), "{file}: {e}");
        }
        assert!(!e.message.is_empty());
        let shown = e.to_string();
        assert!(shown.starts_with(&path.display().to_string()), "{shown}");
    }
}

#[test]
fn clashes_with_builtins_reserved_names_and_each_other_are_located() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let a = write(dir, "a.md", "---\nname: shared\nendpoint: http://x\n---\n");
    let b = write(dir, "b.md", "---\nname: shared\nendpoint: http://y\n---\n");
    let c = write(
        dir,
        "c.md",
        "---\n# comment\nname: read_artifact\nendpoint: http://x\n---\n",
    );
    let d = write(
        dir,
        "d.md",
        "---\nname: web_search\nendpoint: http://x\n---\n",
    );
    let (defs, errors) = load_dir(dir);
    assert!(errors.is_empty());
    let routes = std::sync::Arc::default();
    let builtins = engine::tools::builtin::builtin_tools(&Default::default(), routes);
    let registry = Registry::build(builtins, &defs);
    let names: Vec<_> = registry.iter().map(|t| t.spec().name.clone()).collect();
    assert_eq!(
        names,
        ["web_search", "web_fetch", "call_subagent", "shared"]
    );
    assert!(
        registry.get("shared").unwrap().source()
            == engine::tools::ToolSource::Http { file: a.clone() }
    );
    let find = |p: &PathBuf| {
        registry
            .errors
            .iter()
            .find(|e| &e.file == p)
            .unwrap()
            .clone()
    };
    assert!(find(&b)
        .message
        .contains(&format!("already defined by {}", a.display())));
    let reserved = find(&c);
    assert!(reserved.message.contains("reserved for the artifact tools"));
    assert_eq!(reserved.line, Some(3));
    assert_eq!(reserved.field.as_deref(), Some("name"));
    assert!(find(&d).message.contains("is a built-in tool"));
}

#[test]
fn parameter_locations_are_checked_against_the_endpoint() {
    let parse = |endpoint: &str, params: &str| {
        parse_definition(
            Path::new("p.md"),
            &format!(
                "---\nname: p\nmethod: POST\nendpoint: {endpoint}\nparameters:\n{params}---\n"
            ),
        )
    };
    let ok = parse(
        "https://api.example.com/{{HOST}}/repos/{owner}",
        "  - name: owner\n    type: string\n    in: path\n  - name: x\n    type: string\n",
    )
    .unwrap();
    assert_eq!(ok.routes[0].location, engine::tools::http::ParamIn::Path);
    assert_eq!(
        ok.routes[1].location,
        engine::tools::http::ParamIn::Body,
        "no `in`: the body of a POST, as before"
    );
    let e = parse(
        "https://api.example.com/repos/{owner}",
        "  - name: x\n    type: string\n",
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("endpoint"));
    assert_eq!(e.line, Some(4));
    assert!(e.message.contains("`{owner}`"), "{}", e.message);
    let e = parse(
        "https://api.example.com/repos",
        "  - name: x\n    type: string\n  - name: owner\n    type: string\n    in: path\n",
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("parameters[1].in"));
    assert_eq!(e.line, Some(10));
    assert!(
        e.message.contains("no `{owner}` placeholder"),
        "{}",
        e.message
    );
    let e = parse(
        "https://api.example.com/repos",
        "  - name: x\n    type: integer\n    in: body\n    json: true\n",
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("parameters[0].json"));
    let e = parse(
        "https://api.example.com/repos",
        "  - name: x\n    type: string\n    in: cookie\n",
    )
    .unwrap_err();
    assert!(
        e.message.contains("unknown variant `cookie`"),
        "{}",
        e.message
    );
    let e = parse_definition(
        Path::new("g.md"),
        "---\nname: g\nendpoint: https://a.example/x\nparameters:\n  - {name: b, type: string, in: body}\n---\n",
    )
    .unwrap_err();
    assert!(e.message.contains("no body"), "{}", e.message);
}
