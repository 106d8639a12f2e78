//! Pipeline overhead per call of a no-op tool (goal: under 20 µs), and an HTTP tool call against
//! a local server compared with the same raw request (goal: under 1 ms of overhead).
//! Run: `cargo bench -p artifactflow-engine --bench tools`.

use std::path::Path;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use engine::secrets::SecretResolver;
use engine::tools::http::{parse_definition, HttpTool};
use engine::tools::{
    pipeline, ParamSpec, ParamType, Params, Permission, Tool, ToolContext, ToolResult, ToolSpec,
};
use indexmap::IndexMap;
use serde_json::json;

struct Noop(ToolSpec);

#[async_trait::async_trait]
impl Tool for Noop {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn permission(&self) -> Permission {
        Permission::Auto
    }
    async fn execute(&self, _: Params, _: &ToolContext) -> ToolResult {
        ToolResult::ok("")
    }
}

fn raw(pairs: &[(&str, &str)]) -> IndexMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn bench_pipeline(c: &mut Criterion) {
    let tool = Noop(ToolSpec {
        name: "noop".into(),
        description: String::new(),
        input_schema: None,
        params: vec![
            ParamSpec::new("query", ParamType::String, ""),
            ParamSpec::new("count", ParamType::Integer, "").with_default(json!(10)),
            ParamSpec::new("exact", ParamType::Boolean, "").optional(),
            ParamSpec::new("mode", ParamType::String, "")
                .with_values(["a", "b", "c"])
                .with_default(json!("a")),
        ],
    });
    let params = raw(&[("query", "rust async"), ("count", "25"), ("exact", "yes")]);
    let ctx = ToolContext::default();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    c.bench_function("pipeline/noop_tool_4_params", |b| {
        b.iter(|| rt.block_on(pipeline::run(&tool, &params, &ctx)))
    });
}

fn bench_http(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let base = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = axum::Router::new().route(
            "/price",
            axum::routing::get(|| async { axum::Json(json!({"data": {"price": 189.5}})) }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{addr}")
    });
    let tool = HttpTool::new(
        parse_definition(
            Path::new("bench.md"),
            &format!("---\nname: price\nendpoint: {base}/price\nheaders:\n  X-Key: \"{{{{AF_BENCH_KEY}}}}\"\nresponse_extract: $.data.price\nparameters:\n  - name: symbol\n    type: string\n---\n"),
        )
        .unwrap(),
    );
    std::env::set_var("AF_BENCH_KEY", "bench-key-value");
    let ctx = ToolContext {
        conversation_id: None,
        secrets: Some(Arc::new(SecretResolver::new(None, None))),
        http_trace: None,
        origin: None,
        progress: None,
    };
    let params = raw(&[("symbol", "AAPL")]);
    let client = reqwest::Client::new();
    let url = format!("{base}/price?symbol=AAPL");
    let mut group = c.benchmark_group("http");
    group.bench_function("raw_reqwest_get_and_parse", |b| {
        b.iter(|| {
            rt.block_on(async {
                let v: serde_json::Value = client
                    .get(&url)
                    .header("X-Key", "bench-key-value")
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                v
            })
        })
    });
    group.bench_function("http_tool_through_pipeline", |b| {
        b.iter(|| {
            let r = rt.block_on(pipeline::run(&tool, &params, &ctx));
            assert!(r.success);
            r
        })
    });
    group.finish();
}

criterion_group!(benches, bench_pipeline, bench_http);
criterion_main!(benches);
