//! Time to import GitHub's whole REST API description (about 1,200 operations, 13 MB of JSON)
//! as HTTP tool file texts, each checked by the loader: parse + generate + load. Goal: under
//! 2 s. Also the Petstore fixture, for scale.
//!
//! Run: `cargo bench -p artifactflow-engine --bench openapi` (GitHub's description needs
//! `scripts/setup.sh --test`; without it only the Petstore is measured).

use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use engine::openapi::{import, Selection};

fn bench_import(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut g = c.benchmark_group("openapi_import");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    let petstore =
        std::fs::read_to_string(root.join("tests/fixtures/openapi/petstore-3.0.yaml")).unwrap();
    g.bench_function("petstore-3.0.yaml", |b| {
        b.iter(|| import("petstore-3.0.yaml", &petstore, &Selection::default()).unwrap())
    });
    let github = root
        .join("../../tests/openapi/node_modules/@octokit/openapi/generated/api.github.com.json");
    match std::fs::read_to_string(&github) {
        Ok(text) => {
            let once = import("api.github.com.json", &text, &Selection::default()).unwrap();
            eprintln!(
                "api.github.com.json: {} operations, {} tools, {} skipped",
                once.total,
                once.tools.len(),
                once.skipped.len()
            );
            g.bench_function("api.github.com.json", |b| {
                b.iter(|| import("api.github.com.json", &text, &Selection::default()).unwrap())
            });
        }
        Err(_) => eprintln!(
            "GitHub's description is not installed ({}): run scripts/setup.sh --test",
            github.display()
        ),
    }
    g.finish();
}

criterion_group!(benches, bench_import);
criterion_main!(benches);
