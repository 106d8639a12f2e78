use std::path::Path;
use std::sync::Arc;

use engine::secrets::SecretResolver;
use engine::tools::http::{parse_definition, HttpTool};
use engine::tools::{pipeline, Tool, ToolContext};
use indexmap::IndexMap;
use serde_json::{json, Value};

use crate::servers;

pub fn tool(text: &str) -> HttpTool {
    HttpTool::new(parse_definition(Path::new("test.md"), text).unwrap())
}

pub fn params(pairs: &[(&str, &str)]) -> IndexMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub fn ctx() -> ToolContext {
    ToolContext {
        conversation_id: None,
        secrets: Some(Arc::new(SecretResolver::new(None, None).allow_env([
            "AF_PV_API_BASE",
            "AF_PV_API_KEY",
            "AF_PV_PLAIN_BASE",
        ]))),
        http_trace: None,
        origin: None,
        progress: None,
    }
}

const PARAMS: &str = "parameters:
  - name: q
    type: string
  - name: n
    type: integer
    required: false
    default: 3
  - name: exact
    type: boolean
    required: false
";

#[tokio::test]
async fn get_sends_params_as_a_query_string() {
    let server = servers::json_api().await;
    let t = tool(&format!(
        "---\nname: g\nendpoint: {}/echo\n{PARAMS}---\n",
        server.base
    ));
    let r = pipeline::run(&t, &params(&[("q", "a b&c"), ("exact", "yes")]), &ctx()).await;
    assert!(r.success, "{r:?}");
    let seen = &server.requests()[0];
    assert_eq!(seen.method, "GET");
    assert_eq!(
        seen.uri, "/echo?q=a%20b%26c&exact=true&n=3",
        "every param, defaults included"
    );
    assert_eq!(seen.body, "");
    assert_eq!(r.metadata["status"], 200);
}

#[tokio::test]
async fn post_put_patch_send_a_typed_json_body() {
    let server = servers::json_api().await;
    for method in ["POST", "PUT", "PATCH"] {
        let t = tool(&format!(
            "---\nname: p\nmethod: {method}\nendpoint: {}/echo\n{PARAMS}---\n",
            server.base
        ));
        let r = pipeline::run(
            &t,
            &params(&[("q", "x"), ("n", "7"), ("exact", "0")]),
            &ctx(),
        )
        .await;
        assert!(r.success, "{r:?}");
        let echoed: Value = serde_json::from_str(&r.data).unwrap();
        assert_eq!(echoed["method"], method);
        assert_eq!(echoed["uri"], "/echo");
        assert_eq!(echoed["body"], json!({"q": "x", "n": 7, "exact": false}));
    }
    let delete = tool(&format!(
        "---\nname: d\nmethod: delete\nendpoint: {}/echo?x=1\n{PARAMS}---\n",
        server.base
    ));
    let r = pipeline::run(&delete, &params(&[("q", "z")]), &ctx()).await;
    let echoed: Value = serde_json::from_str(&r.data).unwrap();
    assert_eq!(
        echoed["uri"], "/echo?x=1&q=z&n=3",
        "other methods use the query string"
    );
}

#[tokio::test]
async fn response_extract_one_many_none_and_not_json() {
    let server = servers::json_api().await;
    let run = |expr: &str, path: &str| {
        let t = tool(&format!(
            "---\nname: x\nendpoint: {}{path}\nresponse_extract: \"{expr}\"\n---\n",
            server.base
        ));
        async move { pipeline::run(&t, &params(&[]), &ctx()).await }
    };
    assert_eq!(run("$.data.price", "/price").await.data, "189.5");
    assert_eq!(
        run("$.data.symbol", "/price").await.data,
        "AAPL",
        "strings unquoted"
    );
    assert_eq!(run("$.data.items[1].name", "/price").await.data, "b");
    assert!(run("$", "/price").await.data.starts_with("{\"code\":200"));
    // RFC 9535 beyond the seed: wildcards, filters, descendants → several matches → a JSON array.
    assert_eq!(
        run("$.data.items[*].name", "/price").await.data,
        r#"["a","b","c"]"#
    );
    assert_eq!(
        run("$.data.items[?@.qty > 2].name", "/price").await.data,
        r#"["b","c"]"#
    );
    assert_eq!(run("$..qty", "/price").await.data, "[1,5,9]");
    let none = run("$.data.cost", "/price").await;
    assert!(!none.success);
    let e = none.error.unwrap();
    assert!(
        e.contains("matched nothing") && e.contains("`$.data` matches an object with keys `price`"),
        "{e}"
    );
    let not_json = run("$.a", "/text").await;
    assert!(not_json.error.unwrap().contains("not JSON"));
}

#[tokio::test]
async fn failures_are_results_with_a_reason() {
    let server = servers::json_api().await;
    let call = |path: &str, extra: &str| {
        let t = tool(&format!(
            "---\nname: f\nendpoint: {}{path}\n{extra}---\n",
            server.base
        ));
        async move { pipeline::run(&t, &params(&[]), &ctx()).await }
    };
    let r = call("/fail", "").await;
    assert!(!r.success);
    let e = r.error.unwrap();
    assert!(e.starts_with("HTTP 401 Unauthorized from GET "), "{e}");
    assert!(
        e.contains("more characters]"),
        "long bodies are trimmed: {e}"
    );
    assert!(e.len() < 1000);
    assert_eq!(r.metadata["status"], 401);

    let e = call("/redirect", "").await.error.unwrap();
    assert!(e.contains("too many redirects"), "{e}");
    let e = call("/big", "").await.error.unwrap();
    assert!(e.contains("byte limit"), "{e}");
    let e = call("/slow", "timeout: 1\n").await.error.unwrap();
    assert!(e.contains("timed out"), "{e}");

    let closed = tool("---\nname: c\nendpoint: http://127.0.0.1:9/nothing\n---\n");
    let e = pipeline::run(&closed, &params(&[]), &ctx())
        .await
        .error
        .unwrap();
    assert!(
        e.contains("could not reach GET http://127.0.0.1:9/nothing: connection failed"),
        "{e}"
    );
}

#[tokio::test]
async fn validation_runs_before_any_request() {
    let server = servers::json_api().await;
    let t = tool(&format!(
        "---\nname: v\nendpoint: {}/echo\n{PARAMS}---\n",
        server.base
    ));
    let r = pipeline::run(&t, &params(&[("n", "many")]), &ctx()).await;
    let e = r.error.unwrap();
    assert!(
        e.contains("missing required parameter `q`") && e.contains("`n` must be an integer"),
        "{e}"
    );
    assert!(
        server.requests().is_empty(),
        "no request for an invalid call"
    );
}

#[tokio::test]
async fn preview_shows_the_request_with_templates_not_values() {
    let t = tool(
        "---\nname: pv\nmethod: POST\nendpoint: https://{{AF_PV_UNSET_HOST}}/v1\nheaders:\n  Authorization: Bearer {{AF_PV_UNSET_KEY}}\n---\n",
    );
    let mut p = engine::tools::Params::new();
    p.insert("q".into(), json!("x"));
    let preview = t.request_preview(&p, &ctx()).await.unwrap();
    assert_eq!(
        preview,
        json!({"method": "POST", "url": "https://{{AF_PV_UNSET_HOST}}/v1",
               "headers": {"Authorization": "Bearer {{AF_PV_UNSET_KEY}}"}, "body": {"q": "x"},
               "destination": null,
               "destination_error": "destination unknown: secret AF_PV_UNSET_HOST is not set (add it in Settings → Secrets)",
               "secrets": ["AF_PV_UNSET_HOST", "AF_PV_UNSET_KEY"]})
    );
}

/// A templated endpoint hides where the request goes: the preview also shows the filled
/// endpoint's scheme, host and port, never its path, query or user info, nor a secret value.
#[tokio::test]
async fn preview_shows_the_real_destination_and_the_secret_names() {
    std::env::set_var(
        "AF_PV_API_BASE",
        "https://robot:hunter22@api.example.test:8443/tenant-7f3a?sig=s3cr3t",
    );
    std::env::set_var("AF_PV_API_KEY", "key-value-9d2c");
    let t = tool(
        "---\nname: pd\nendpoint: \"{{AF_PV_API_BASE}}/x\"\nheaders:\n  X-Key: \"{{AF_PV_API_KEY}}\"\n---\n",
    );
    let preview = t
        .request_preview(&engine::tools::Params::new(), &ctx())
        .await
        .unwrap();
    assert_eq!(preview["url"], "{{AF_PV_API_BASE}}/x");
    assert_eq!(preview["destination"], "https://api.example.test:8443");
    assert_eq!(preview["destination_error"], Value::Null);
    assert_eq!(
        preview["secrets"],
        json!(["AF_PV_API_BASE", "AF_PV_API_KEY"])
    );
    let text = preview.to_string();
    for hidden in [
        "robot",
        "hunter22",
        "tenant-7f3a",
        "s3cr3t",
        "key-value-9d2c",
    ] {
        assert!(!text.contains(hidden), "{hidden} leaked into {text}");
    }

    // A default port is spelled out, so the destination is never ambiguous.
    std::env::set_var("AF_PV_PLAIN_BASE", "http://127.0.0.1");
    let plain = tool("---\nname: pp\nendpoint: \"{{AF_PV_PLAIN_BASE}}/y\"\n---\n");
    let preview = plain
        .request_preview(&engine::tools::Params::new(), &ctx())
        .await
        .unwrap();
    assert_eq!(preview["destination"], "http://127.0.0.1:80");
}

#[tokio::test]
async fn parameters_travel_in_path_query_header_and_body_as_declared() {
    let server = servers::json_api().await;
    let t = tool(&format!(
        "---
name: routed
method: POST
endpoint: {}/echo/repos/{{owner}}/{{repo}}/issues
headers: {{Authorization: \"Bearer fixed\"}}
parameters:
  - {{name: owner, type: string, in: path}}
  - {{name: repo, type: string, in: path}}
  - {{name: page, type: integer, in: query, required: false, default: 2}}
  - {{name: X-Trace, type: string, in: header}}
  - {{name: title, type: string, in: body}}
  - {{name: labels, type: string, in: body, json: true, required: false}}
  - {{name: draft, type: boolean}}
---
",
        server.base
    ));
    let r = pipeline::run(
        &t,
        &params(&[
            ("owner", "a b/c"),
            ("repo", "x"),
            ("X-Trace", "t-1"),
            ("title", "Hi"),
            ("labels", r#"["bug", {"n": 1}]"#),
            ("draft", "no"),
        ]),
        &ctx(),
    )
    .await;
    assert!(r.success, "{r:?}");
    let seen = &server.requests()[0];
    assert_eq!(seen.method, "POST");
    assert_eq!(
        seen.uri, "/echo/repos/a%20b%2Fc/x/issues?page=2",
        "path segments encoded, query params in the query string even for POST"
    );
    assert_eq!(seen.header("x-trace"), Some("t-1"));
    assert_eq!(seen.header("authorization"), Some("Bearer fixed"));
    let body: Value = serde_json::from_str(&seen.body).unwrap();
    assert_eq!(
        body,
        json!({"title": "Hi", "labels": ["bug", {"n": 1}], "draft": false}),
        "JSON text sent as JSON; a parameter without `in` goes in the body of a POST"
    );
    let preview = t.preview(
        &pipeline::prepare(
            &t.spec().params,
            &params(&[
                ("owner", "o"),
                ("repo", "r"),
                ("X-Trace", "p"),
                ("title", "t"),
                ("draft", "1"),
            ]),
        )
        .unwrap(),
    );
    assert_eq!(preview.headers["X-Trace"], "p");
    assert!(
        preview.url.ends_with("/echo/repos/o/r/issues?page=2"),
        "{}",
        preview.url
    );

    let bad = pipeline::run(
        &t,
        &params(&[
            ("owner", "o"),
            ("repo", "r"),
            ("X-Trace", "t"),
            ("title", "t"),
            ("labels", "[not json"),
            ("draft", "1"),
        ]),
        &ctx(),
    )
    .await;
    assert!(!bad.success);
    assert!(bad.error.unwrap().contains("`labels` must be JSON text"));
    assert_eq!(server.requests().len(), 1, "nothing sent for a bad call");
}

#[tokio::test]
async fn get_with_path_parameter_and_a_secret_in_double_braces() {
    let server = servers::json_api().await;
    let t = tool(&format!(
        "---\nname: pet\nendpoint: {}/echo/pets/{{petId}}?k={{{{NO_SUCH_SECRET_X}}}}\nparameters:\n  - {{name: petId, type: integer, in: path}}\n  - {{name: q, type: string, required: false}}\n---\n",
        server.base
    ));
    let preview = t.preview(
        &pipeline::prepare(&t.spec().params, &params(&[("petId", "42"), ("q", "z")])).unwrap(),
    );
    assert!(
        preview
            .url
            .ends_with("/echo/pets/42?k={{NO_SUCH_SECRET_X}}&q=z"),
        "{}",
        preview.url
    );
}

#[tokio::test]
async fn a_path_parameter_stays_one_segment_and_dot_segments_are_refused() {
    let server = servers::json_api().await;
    let t = tool(&format!(
        "---\nname: remove_member\nmethod: DELETE\nendpoint: {}/echo/v1/projects/{{project}}/members/{{member}}\nparameters:\n  - {{name: project, type: string, in: path}}\n  - {{name: member, type: string, in: path}}\n---\n",
        server.base
    ));
    let c = ctx();
    for bad in ["..", "."] {
        let typed = pipeline::prepare(
            &t.spec().params,
            &params(&[("project", "acme"), ("member", bad)]),
        )
        .unwrap();
        assert_eq!(
            t.call_destination(&typed, &c).await,
            None,
            "`{bad}`: no destination for a call that cannot be sent"
        );
        let r = pipeline::run(&t, &params(&[("project", "acme"), ("member", bad)]), &c).await;
        assert!(!r.success, "`{bad}` was sent: {r:?}");
        let e = r.error.unwrap();
        assert!(e.contains("path parameter `member` cannot be"), "{e}");
    }
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    // `/` and an encoded dot stay inside the segment.
    for (value, sent) in [
        ("a/../..", "a%2F..%2F.."),
        ("%2e%2e", "%252e%252e"),
        ("..a", "..a"),
    ] {
        let r = pipeline::run(&t, &params(&[("project", "acme"), ("member", value)]), &c).await;
        assert!(r.success, "{r:?}");
        let seen = server.requests().pop().unwrap();
        assert_eq!(seen.uri, format!("/echo/v1/projects/acme/members/{sent}"));
    }
}

#[tokio::test]
async fn dollar_url_and_host_are_those_of_the_url_that_is_sent() {
    let server = servers::json_api().await;
    // Dot segments written in the endpoint: parsing resolves them before sending.
    let t = tool(&format!(
        "---\nname: m\nmethod: DELETE\nendpoint: {}/echo/v1/x/../projects/./{{project}}\nparameters:\n  - {{name: project, type: string, in: path}}\n---\n",
        server.base
    ));
    let c = ctx();
    let typed = pipeline::prepare(&t.spec().params, &params(&[("project", "acme")])).unwrap();
    let dest = t.call_destination(&typed, &c).await.unwrap();
    let r = pipeline::run(&t, &params(&[("project", "acme")]), &c).await;
    assert!(r.success, "{r:?}");
    let seen = server.requests().pop().unwrap();
    assert_eq!(seen.uri, "/echo/v1/projects/acme");
    assert_eq!(dest.url, format!("{}{}", server.base, seen.uri));
    assert_eq!(dest.host, "127.0.0.1");
}

#[tokio::test]
async fn a_multi_segment_path_parameter_keeps_slashes_but_not_dot_segments() {
    let server = servers::json_api().await;
    let t = tool(&format!(
        "---\nname: content\nendpoint: {}/echo/repos/{{repo}}/contents/{{path}}\nparameters:\n  - {{name: repo, type: string, in: path}}\n  - {{name: path, type: string, in: path, multi_segment: true}}\n---\n",
        server.base
    ));
    let c = ctx();
    let r = pipeline::run(
        &t,
        &params(&[("repo", "a/b"), ("path", "docs/read me.md")]),
        &c,
    )
    .await;
    assert!(r.success, "{r:?}");
    assert_eq!(
        server.requests().pop().unwrap().uri,
        "/echo/repos/a%2Fb/contents/docs/read%20me.md"
    );
    let before = server.requests().len();
    for bad in ["../../../admin", "docs/..", "./x", "a/./b", ".."] {
        let r = pipeline::run(&t, &params(&[("repo", "r"), ("path", bad)]), &c).await;
        assert!(!r.success, "`{bad}` was sent: {r:?}");
        assert!(r.error.unwrap().contains("`.` or `..` segment"));
    }
    assert_eq!(server.requests().len(), before, "nothing sent");
    let e = parse_definition(
        Path::new("q.md"),
        "---\nname: q\nendpoint: http://h/x\nparameters:\n  - name: q\n    type: string\n    in: query\n    multi_segment: true\n---\n",
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("parameters[0].multi_segment"));
    assert_eq!(e.line, Some(8));
}
