//! Redirects of HTTP tools: a request built from secret templates never leaves its origin; a
//! request with no secret may follow a 302 elsewhere, without a `Referer`.

use std::path::Path;
use std::sync::Arc;

use engine::secrets::SecretResolver;
use engine::tools::http::{parse_definition, HttpTool};
use engine::tools::{pipeline, ToolContext};

use crate::http_tool::params;
use crate::servers;

const KEY: &str = "sk-tool-redirect-0123456789";

/// A context whose secrets come from a fresh `.env` holding `AF_TOOLS_REDIRECT_KEY`.
fn ctx() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let dotenv = dir.path().join(".env");
    std::fs::write(&dotenv, format!("AF_TOOLS_REDIRECT_KEY={KEY}\n")).unwrap();
    let ctx = ToolContext {
        conversation_id: None,
        secrets: Some(Arc::new(SecretResolver::new(None, Some(dotenv)))),
        http_trace: None,
        origin: None,
        progress: None,
    };
    (dir, ctx)
}

fn tool(endpoint: &str, method: &str, headers: &str) -> HttpTool {
    let text = format!(
        "---\nname: r\nmethod: {method}\nendpoint: \"{endpoint}\"\n{headers}parameters:\n  - name: q\n    type: string\n---\n"
    );
    HttpTool::new(parse_definition(Path::new("r.md"), &text).unwrap())
}

#[tokio::test]
async fn a_tool_using_a_secret_never_follows_a_redirect_to_another_origin() {
    let b = servers::json_api().await;
    let a = servers::redirector(b.base.clone()).await;
    let (_dir, ctx) = ctx();
    let header = "headers:\n  X-Api-Key: \"{{AF_TOOLS_REDIRECT_KEY}}\"\n";
    let cases = [
        // The key in a custom header (reqwest would forward it), on a 302 and on a 307.
        tool(&format!("{}/302/echo", a.base), "GET", header),
        tool(&format!("{}/307/echo", a.base), "POST", header),
        // The key in the query string (the redirect would carry it on).
        tool(
            &format!("{}/302/echo?key={{{{AF_TOOLS_REDIRECT_KEY}}}}", a.base),
            "GET",
            "",
        ),
    ];
    for (i, t) in cases.iter().enumerate() {
        let r = pipeline::run(t, &params(&[("q", "hi")]), &ctx).await;
        assert!(!r.success, "case {i}: {r:?}");
        let error = r.error.clone().unwrap();
        assert!(error.contains(&a.base), "case {i} names A: {error}");
        assert!(error.contains(&b.base), "case {i} names B: {error}");
        assert!(error.contains("another origin"), "case {i}: {error}");
        assert!(!error.contains(KEY), "case {i}: {error}");
        assert_eq!(a.requests().len(), i + 1, "case {i}: A was asked once");
    }
    assert!(
        b.requests().is_empty(),
        "B received a request built from a secret: {:?}",
        b.requests()
    );
}

#[tokio::test]
async fn a_same_origin_redirect_keeps_working_with_its_secret() {
    let a = servers::redirector("http://127.0.0.1:9".into()).await;
    let (_dir, ctx) = ctx();
    let t = tool(
        &format!("{}/same/landing?key={{{{AF_TOOLS_REDIRECT_KEY}}}}", a.base),
        "GET",
        "headers:\n  X-Api-Key: \"{{AF_TOOLS_REDIRECT_KEY}}\"\n",
    );
    let r = pipeline::run(&t, &params(&[("q", "hi")]), &ctx).await;
    assert!(r.success, "{r:?}");
    let seen = a.requests();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen[1].uri.starts_with("/landing?key="), "{:?}", seen[1]);
    assert_eq!(seen[1].header("x-api-key"), Some(KEY));
    assert_eq!(seen[1].header("referer"), None);
}

#[tokio::test]
async fn a_tool_without_secrets_follows_a_302_elsewhere_without_a_referer() {
    let b = servers::json_api().await;
    let a = servers::redirector(b.base.clone()).await;
    let (_dir, ctx) = ctx();
    let t = tool(&format!("{}/302/echo?page=2", a.base), "GET", "");
    let r = pipeline::run(&t, &params(&[("q", "hi")]), &ctx).await;
    assert!(r.success, "{r:?}");
    let seen = b.requests();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].uri, "/echo?page=2&q=hi");
    assert_eq!(seen[0].header("referer"), None, "no Referer: {:?}", seen[0]);

    // A 307 (which would replay the body) still never crosses origins.
    let t = tool(&format!("{}/307/echo", a.base), "POST", "");
    let r = pipeline::run(&t, &params(&[("q", "hi")]), &ctx).await;
    let error = r.error.unwrap();
    assert!(error.contains("307") && error.contains(&b.base), "{error}");
    assert_eq!(b.requests().len(), 1);
}
