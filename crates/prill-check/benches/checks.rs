//! 10,000 mixed checks against one response: stock tests on text, sly_data and
//! structure (nested), presence, gist through an instant judge, and every Sentinel
//! assertion. Run with `cargo bench -p prill-check --bench checks`; criterion reports
//! checks per second (elements) and the time per batch.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use prill_check::{BoxFuture, Judge, JudgeError, JudgeVerdict, Response, run_checks};
use prill_spec::model::data_driven::StockTest;
use prill_spec::model::sentinel::{Assertion, OutputType, Pattern, TextMatch};
use prill_spec::plan::{Check, CheckKind, Part};
use serde_json::json;

/// A judge that answers at once, so the benchmark measures the engine, not a model.
struct Instant;

impl Judge for Instant {
    fn judge<'a>(
        &'a self,
        criteria: &'a str,
        sample: &'a str,
    ) -> BoxFuture<'a, Result<JudgeVerdict, JudgeError>> {
        Box::pin(async move {
            Ok(JudgeVerdict::new(
                sample.len() > criteria.len() / 4,
                "instant",
            ))
        })
    }
}

fn stock(
    part: Part,
    field: &[&str],
    test: StockTest,
    negated: bool,
    expected: serde_json::Value,
) -> CheckKind {
    CheckKind::Stock {
        part,
        field: field.iter().map(|s| (*s).to_owned()).collect(),
        test,
        negated,
        expected: Box::new(expected),
    }
}

fn mixed(n: usize) -> Vec<Check> {
    let kinds = [
        stock(
            Part::Text,
            &[],
            StockTest::Keywords,
            false,
            json!("Beatles"),
        ),
        stock(
            Part::Text,
            &[],
            StockTest::Keywords,
            true,
            json!("Rolling Stones"),
        ),
        stock(
            Part::Structure,
            &["running_cost"],
            StockTest::Value,
            false,
            json!(3.0),
        ),
        stock(
            Part::Structure,
            &["running_cost"],
            StockTest::Less,
            false,
            json!(10),
        ),
        stock(
            Part::Structure,
            &["running_cost"],
            StockTest::Greater,
            true,
            json!(2),
        ),
        stock(
            Part::SlyData,
            &["equals"],
            StockTest::Value,
            false,
            json!(19481),
        ),
        stock(
            Part::SlyData,
            &["trace", "steps"],
            StockTest::Keywords,
            false,
            json!("multiply"),
        ),
        stock(
            Part::SlyData,
            &["missing"],
            StockTest::Value,
            true,
            json!(""),
        ),
        stock(
            Part::Text,
            &[],
            StockTest::Gist,
            false,
            json!("names the band"),
        ),
        CheckKind::Present {
            part: Part::Structure,
            field: vec!["answer".into()],
        },
        CheckKind::Assertion(Assertion::MustContain(TextMatch::new("Liverpool"))),
        CheckKind::Assertion(Assertion::MustNotContain(TextMatch::new("sorry"))),
        CheckKind::Assertion(Assertion::RegexMatch(
            Pattern::new(r"\b[A-Z][a-z]+pool\b").expect("valid"),
        )),
        CheckKind::Assertion(Assertion::MustCallTool(vec!["lookup".into()])),
        CheckKind::Assertion(Assertion::OutputType(OutputType::Markdown)),
        CheckKind::Assertion(Assertion::MaxLatencyMs(500)),
        CheckKind::Assertion(Assertion::MaxTokens(200)),
    ];
    (0..n)
        .map(|i| Check {
            location: None,
            path: format!("checks[{i}]").into(),
            kind: kinds[i % kinds.len()].clone(),
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let checks = mixed(10_000);
    let response = Response::text("The **Beatles** were from Liverpool, a city in England.")
        .with_structure(json!({"answer": "The Beatles", "running_cost": 3.0}))
        .with_sly_data(json!({"equals": 19481.0, "trace": {"steps": ["parse", "multiply"]}}))
        .with_tool_call("lookup", json!({"q": "Yellow Submarine"}))
        .with_latency(Duration::from_millis(120))
        .with_usage(Some(40), Some(15));
    let judge = Instant;
    // Prove the batch is what it claims before timing it.
    let results = futures::executor::block_on(run_checks(&checks, &response, Some(&judge)));
    assert_eq!(results.len(), 10_000);
    let mut group = c.benchmark_group("checks");
    group.throughput(Throughput::Elements(checks.len() as u64));
    group.bench_function("10k mixed", |b| {
        b.iter(|| {
            futures::executor::block_on(run_checks(
                black_box(&checks),
                black_box(&response),
                Some(&judge),
            ))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
