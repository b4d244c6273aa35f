//! Parsing and validating a ~1 MB Sentinel suite in each syntax.
//!
//! Run with `cargo bench -p prill-spec --bench parse`; criterion reports the throughput
//! in bytes per second for each syntax.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use prill_spec::Syntax;
use prill_spec::load::{self, Unrecognized};
use prill_spec::node::{Node, Span};
use prill_spec::syntax::{Env, emit::emit};
use serde_json::{Value, json};

/// A suite of `n` tests that uses most of the DSL.
fn suite(n: usize) -> Value {
    let tests: Vec<Value> = (0..n)
        .map(|i| {
            json!({
                "name": format!("test number {i}"),
                "description": "Checks that the agent finds a product and compares prices in the catalogue",
                "seed": i,
                "tags": ["generated", format!("group-{}", i % 7)],
                "inputs": {
                    "system_prompt": "You are a helpful shopping assistant. Answer briefly.",
                    "messages": [
                        {"role": "user", "content": format!("Find laptops under ${}", 500 + i)},
                        {"role": "assistant", "content": "Which brand do you prefer?"},
                        {"role": "user", "content": "Any brand with at least 16 GB of memory."}
                    ],
                    "context": {"currency": "USD", "max_results": 5, "regions": ["us", "ca"]}
                },
                "assertions": [
                    {"must_contain": "price"},
                    {"must_not_contain": "I cannot"},
                    {"regex_match": "\\$\\d+(\\.\\d{2})?"},
                    {"must_call_tool": ["browser", "calculator"]},
                    {"output_type": "markdown"},
                    {"max_latency_ms": 15000},
                    {"min_tokens": 20},
                    {"max_tokens": 800}
                ],
                "model_config": {"temperature": 0.2, "top_p": 0.9, "max_tokens": 1000, "stop_sequences": ["END"]}
            })
        })
        .collect();
    json!({
        "name": "generated suite",
        "version": "1.0.0",
        "defaults": {
            "model": "gpt-4o-mini",
            "provider": "openai",
            "timeout_ms": 30000,
            "tools": ["browser", {"name": "calculator", "description": "Evaluate arithmetic",
                       "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}}}]
        },
        "tests": tests
    })
}

/// The suite as text of about `target` bytes in `syntax`.
fn text_of_size(syntax: Syntax, target: usize) -> String {
    let one = emit(&Node::from_json(&suite(1), Span::default()), syntax).len();
    let tree = Node::from_json(&suite((target / one).max(1)), Span::default());
    emit(&tree, syntax)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse+validate 1 MB suite");
    group.sample_size(10);
    let env = Env::default();
    for syntax in [Syntax::Json, Syntax::Yaml, Syntax::Hocon] {
        let text = text_of_size(syntax, 1 << 20);
        let path = format!("suite.{}", syntax.extension());
        // Prove the input is valid before measuring it.
        let loaded = load::load_str(Path::new(&path), &text, &env, Unrecognized::Error)
            .expect("a test file");
        assert!(loaded.is_valid(), "the generated suite is invalid");
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(syntax.name(), |b| {
            b.iter(|| {
                let loaded = load::load_str(
                    Path::new(&path),
                    black_box(&text),
                    &env,
                    Unrecognized::Error,
                );
                black_box(loaded.map(|l| l.cases().len()))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
