//! Parser throughput (MB/s): well-formed responses, the same responses damaged by each repair
//! kind of the seed's table, pathological inputs, and streaming.
//!
//! Run with `scripts/parser_bench.sh` for a table, or `cargo bench -p artifactflow-engine
//! --bench parser`.

use std::time::Duration;

use artifactflow_parser::{parse, StreamParser};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// How a generated call is written.
#[derive(Clone, Copy)]
enum Style {
    WellFormed,
    /// `<tool>` as the tag (no `<name>`).
    NameAsTag,
    /// `<name=tool</name>`.
    NameEquals,
    /// `<p><![CDATA[…]]>` with no `</p>`.
    MissingCloseAfterCdata,
    /// Parameters outside `<params>` and split over two containers.
    ScatteredParams,
    /// No `</params>`.
    MissingParamsClose,
    /// No `</tool_call>`.
    UnclosedToolCall,
}

const STYLES: [(&str, Style); 7] = [
    ("well_formed", Style::WellFormed),
    ("name_as_tag", Style::NameAsTag),
    ("name_equals", Style::NameEquals),
    ("missing_close_after_cdata", Style::MissingCloseAfterCdata),
    ("scattered_params", Style::ScatteredParams),
    ("missing_params_close", Style::MissingParamsClose),
    ("unclosed_tool_call", Style::UnclosedToolCall),
];

fn code_value(i: usize, bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 200);
    let mut j = 0;
    while s.len() < bytes {
        s.push_str(&format!(
            "    if row[{j}] < limit and ctx.get('k{j}') != \"v\":  # <tag> & 'q' 数据\n        out.append({{'id': {i}, 'ok': a[b[{j}]] > 0}})\n"
        ));
        j += 1;
    }
    s
}

/// One call with the given parameters (values already CDATA-wrapped or plain).
fn call(name: &str, params: &[(&str, String)], style: Style) -> String {
    let mut s = String::new();
    let body = |s: &mut String, style: Style| {
        for (k, v) in params {
            s.push_str(&format!("    <{k}>{v}"));
            if !matches!(style, Style::MissingCloseAfterCdata) || !v.starts_with("<![CDATA[") {
                s.push_str(&format!("</{k}>"));
            }
            s.push('\n');
        }
    };
    match style {
        Style::NameAsTag => {
            s.push_str(&format!("<{name}>\n  <params>\n"));
            body(&mut s, style);
            s.push_str(&format!("  </params>\n</{name}>\n"));
            return s;
        }
        Style::NameEquals => {
            s.push_str(&format!("<tool_call>\n  <name={name}</name>\n  <params>\n"))
        }
        Style::ScatteredParams => {
            s.push_str(&format!("<tool_call>\n  <name>{name}</name>\n"));
            let (first, rest) = params.split_at(params.len() / 2);
            for (k, v) in first {
                s.push_str(&format!("  <{k}>{v}</{k}>\n"));
            }
            for (k, v) in rest {
                s.push_str(&format!("  <params><{k}>{v}</{k}></params>\n"));
            }
            s.push_str("</tool_call>\n");
            return s;
        }
        _ => s.push_str(&format!("<tool_call>\n  <name>{name}</name>\n  <params>\n")),
    }
    body(&mut s, style);
    if !matches!(style, Style::MissingParamsClose) {
        s.push_str("  </params>\n");
    }
    if !matches!(style, Style::UnclosedToolCall) {
        s.push_str("</tool_call>\n");
    }
    s
}

fn cdata(v: &str) -> String {
    format!("<![CDATA[{}]]>", v.replace("]]>", "]]]]><![CDATA[>"))
}

/// A response of about `size` bytes: prose and calls whose values are ~10 KB CDATA blocks.
fn cdata_heavy(size: usize, style: Style) -> String {
    let mut out = String::with_capacity(size + 20_000);
    let mut i = 0;
    while out.len() < size {
        out.push_str(&format!(
            "Step {i}: running the transformation. 接下来处理第 {i} 个文件。\n\n"
        ));
        let params = [
            ("path", cdata(&format!("out/part_{i}.py"))),
            ("code", cdata(&code_value(i, 10_000))),
            ("timeout", cdata("60")),
        ];
        out.push_str(&call("python_exec", &params, style));
        out.push('\n');
        i += 1;
    }
    out
}

/// `n` small calls, CDATA and plain values alternating.
fn small_calls(n: usize, style: Style) -> String {
    let mut out = String::new();
    for i in 0..n {
        let params = if i % 2 == 0 {
            [
                ("id", cdata(&i.to_string())),
                ("fields", cdata("name,price")),
            ]
        } else {
            [("id", i.to_string()), ("fields", "name,price".to_string())]
        };
        out.push_str(&call("get_item", &params, style));
    }
    out
}

fn repeat_to(piece: &str, size: usize) -> String {
    piece.repeat(size / piece.len() + 1)
}

fn configure(c: &mut Criterion) -> criterion::BenchmarkGroup<'_, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group("parser");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    g
}

fn bench_inputs(c: &mut Criterion) {
    let mut g = configure(c);
    for (label, style) in STYLES {
        let inputs = [
            ("cdata_1MB", cdata_heavy(1_000_000, style)),
            ("cdata_10MB", cdata_heavy(10_000_000, style)),
            ("small_calls_5000", small_calls(5_000, style)),
        ];
        for (input, text) in inputs {
            let expected = parse(&text).len();
            assert!(expected > 0 && parse(&text).iter().all(|c| c.error.is_none()));
            g.throughput(Throughput::Bytes(text.len() as u64));
            g.bench_with_input(BenchmarkId::new(input, label), &text, |b, t| {
                b.iter(|| parse(t))
            });
        }
    }
    let pathological = [
        (
            "unclosed_tags_1MB",
            repeat_to("<a><b x='1'>text ", 1_000_000),
        ),
        ("tool_call_openers_1MB", repeat_to("<tool_call>", 1_000_000)),
        (
            "name_equals_fragments_1MB",
            format!("<tool_call>{}", repeat_to("<name=", 1_000_000)),
        ),
        (
            "unterminated_cdata_1MB",
            repeat_to("<p><![CDATA[x", 1_000_000),
        ),
        (
            "unclosed_params_1MB",
            repeat_to("<tool_call><name>t</name><q>v", 1_000_000),
        ),
        ("think_openers_1MB", repeat_to("<think>", 1_000_000)),
    ];
    for (input, text) in pathological {
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::new(input, "pathological"), &text, |b, t| {
            b.iter(|| parse(t))
        });
    }
    g.finish();
}

fn bench_stream(c: &mut Criterion) {
    let mut g = configure(c);
    for (input, text) in [
        ("cdata_1MB", cdata_heavy(1_000_000, Style::WellFormed)),
        ("cdata_4MB", cdata_heavy(4_000_000, Style::WellFormed)),
        ("small_calls_5000", small_calls(5_000, Style::WellFormed)),
        ("small_calls_20000", small_calls(20_000, Style::WellFormed)),
    ] {
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(
            BenchmarkId::new(input, "stream_4B_chunks"),
            &text,
            |b, t| {
                b.iter(|| {
                    let mut p = StreamParser::new();
                    let mut events = 0;
                    let mut at = 0;
                    while at < t.len() {
                        let mut end = (at + 4).min(t.len());
                        while !t.is_char_boundary(end) {
                            end += 1;
                        }
                        events += p.feed(&t[at..end]).len();
                        at = end;
                    }
                    (events, p.finish().len())
                })
            },
        );
    }
    g.finish();
}

criterion_group!(benches, bench_inputs, bench_stream);
criterion_main!(benches);
