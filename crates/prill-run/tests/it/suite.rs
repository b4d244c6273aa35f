//! The Autoblocks-shaped Rust API: hashes, failures of `fn` and of evaluators, sync and
//! async functions, both concurrency levels, grid search, durations that leave out the
//! wait for a permit, and the plain shapes a report serializes to.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use prill_check::{BoxFuture, CheckEvaluator, Evaluation, Evaluator, EvaluatorError, Threshold};
use prill_run::{
    BoxError, EvaluationResult, GridSearchParams, Status, SuiteError, SuiteOptions, TestCase,
    async_fn, grid_search_ctx, run_test_suite, sync_fn,
};
use prill_stats::Reliability;
use serde_json::json;

#[derive(Debug, Clone)]
struct Sum {
    x: i64,
    y: i64,
    expected: i64,
}

impl TestCase for Sum {
    fn hash(&self) -> String {
        format!("{}-{}", self.x, self.y)
    }
}

/// Scores 1 when the output is the expected sum.
struct IsExpected;

impl Evaluator<Sum, i64> for IsExpected {
    fn id(&self) -> &str {
        "is-expected"
    }

    fn evaluate<'a>(
        &'a self,
        case: &'a Sum,
        output: &'a i64,
    ) -> BoxFuture<'a, Result<Option<Evaluation>, EvaluatorError>> {
        Box::pin(async move { Ok(Some(Evaluation::pass_fail(*output == case.expected))) })
    }
}

/// Fails on negative outputs; has no opinion on zero.
struct Picky;

impl Evaluator<Sum, i64> for Picky {
    fn id(&self) -> &str {
        "picky"
    }

    fn evaluate<'a>(
        &'a self,
        _: &'a Sum,
        output: &'a i64,
    ) -> BoxFuture<'a, Result<Option<Evaluation>, EvaluatorError>> {
        Box::pin(async move {
            match *output {
                n if n < 0 => Err(EvaluatorError::new(
                    "negative outputs are not my department",
                )),
                0 => Ok(None),
                _ => Ok(Some(Evaluation::score(0.5).with_threshold(Threshold {
                    lt: Some(0.6),
                    ..Threshold::default()
                }))),
            }
        })
    }
}

fn cases() -> Vec<Sum> {
    vec![
        Sum {
            x: 1,
            y: 2,
            expected: 3,
        },
        Sum {
            x: 2,
            y: 2,
            expected: 5,
        },
        Sum {
            x: -3,
            y: 1,
            expected: -2,
        },
        Sum {
            x: 0,
            y: 0,
            expected: 0,
        },
    ]
}

fn evaluators() -> Vec<Arc<dyn Evaluator<Sum, i64>>> {
    vec![Arc::new(IsExpected), Arc::new(Picky)]
}

#[tokio::test]
async fn statuses_follow_fn_and_evaluators() {
    let f = sync_fn(|c: &Sum| -> Result<i64, BoxError> {
        if c.x == 0 {
            return Err("zero is not allowed".into());
        }
        Ok(c.x + c.y)
    });
    let report = run_test_suite("sums", cases(), evaluators(), f, SuiteOptions::default())
        .await
        .unwrap();
    let cases = &report.runs[0].cases;
    assert_eq!(cases[0].status, Status::Passed);
    assert_eq!(cases[1].status, Status::Failed, "2 + 2 is not 5");
    // -2 is right, but `picky` errors on it: only that evaluation errors.
    assert_eq!(cases[2].status, Status::Errored);
    assert_eq!(
        cases[2].evaluations[0].result.evaluation().unwrap().score,
        1.0
    );
    assert_eq!(
        cases[2].evaluations[1].result,
        EvaluationResult::Error("negative outputs are not my department".to_owned())
    );
    assert_eq!(cases[2].evaluations[1].result.status(), Status::Errored);
    // `fn` failed: the case errors and no evaluator runs.
    assert_eq!(cases[3].status, Status::Errored);
    assert_eq!(cases[3].error.as_deref(), Some("zero is not allowed"));
    assert!(cases[3].evaluations.is_empty());
    assert_eq!(report.count(Status::Passed), 1);
    assert!(!report.all_passed());
}

#[tokio::test]
async fn async_functions_and_built_in_evaluators() {
    let f = async_fn(|c: &Sum| {
        let (x, y) = (c.x, c.y);
        async move {
            tokio::task::yield_now().await;
            Ok::<String, BoxError>(format!("the sum is {}", x + y))
        }
    });
    let evaluators: Vec<Arc<dyn Evaluator<Sum, String>>> = vec![
        Arc::new(CheckEvaluator::must_contain("the sum")),
        Arc::new(CheckEvaluator::regex_match(r"-?\d+$").unwrap()),
    ];
    let report = run_test_suite("text", cases(), evaluators, f, SuiteOptions::default())
        .await
        .unwrap();
    assert!(report.all_passed(), "{report:#?}");
}

#[derive(Clone)]
struct Named(String);

impl TestCase for Named {
    fn hash(&self) -> String {
        self.0.clone()
    }
}

#[tokio::test]
async fn hashes_must_be_unique_non_empty_and_short() {
    let f = sync_fn(|_: &Named| Ok::<i64, BoxError>(1));
    let none: Vec<Arc<dyn Evaluator<Named, i64>>> = Vec::new();
    let dup = vec![Named("a".into()), Named("b".into()), Named("a".into())];
    let err = run_test_suite(
        "s",
        dup,
        none.clone(),
        Arc::clone(&f),
        SuiteOptions::default(),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err,
        SuiteError::DuplicateHash {
            hash: "a".into(),
            first: 0,
            second: 2
        }
    );
    let long = vec![Named("x".repeat(101))];
    let err = run_test_suite(
        "s",
        long,
        none.clone(),
        Arc::clone(&f),
        SuiteOptions::default(),
    )
    .await
    .unwrap_err();
    assert_eq!(err, SuiteError::HashTooLong { index: 0, len: 101 });
    let exactly = vec![Named("x".repeat(100))];
    assert!(
        run_test_suite(
            "s",
            exactly,
            none.clone(),
            Arc::clone(&f),
            SuiteOptions::default()
        )
        .await
        .is_ok()
    );
    let empty = vec![Named(String::new())];
    let err = run_test_suite("s", empty, none, f, SuiteOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err, SuiteError::EmptyHash { index: 0 });
}

/// Counts calls in flight and remembers the most at once.
#[derive(Default)]
struct Gauge {
    now: AtomicUsize,
    most: AtomicUsize,
}

impl Gauge {
    async fn hold(&self, barrier: &tokio::sync::Barrier) {
        let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(n, Ordering::SeqCst);
        // Everyone who can run at once must meet here; if fewer could run, this would
        // never be reached, and the test's timeout fails it.
        barrier.wait().await;
        tokio::time::sleep(Duration::from_millis(5)).await;
        self.now.fetch_sub(1, Ordering::SeqCst);
    }
}

struct Slow {
    gauge: Arc<Gauge>,
    barrier: Arc<tokio::sync::Barrier>,
    limit: usize,
}

impl Evaluator<Named, i64> for Slow {
    fn id(&self) -> &str {
        "slow"
    }

    fn max_concurrency(&self) -> usize {
        self.limit
    }

    fn evaluate<'a>(
        &'a self,
        _: &'a Named,
        _: &'a i64,
    ) -> BoxFuture<'a, Result<Option<Evaluation>, EvaluatorError>> {
        Box::pin(async move {
            self.gauge.hold(&self.barrier).await;
            Ok(Some(Evaluation::pass_fail(true)))
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_concurrency_levels_are_honoured_and_used() {
    let cases: Vec<Named> = (0..12).map(|i| Named(format!("case-{i}"))).collect();
    let fn_gauge = Arc::new(Gauge::default());
    let fn_barrier = Arc::new(tokio::sync::Barrier::new(4));
    let f = {
        let gauge = Arc::clone(&fn_gauge);
        let barrier = Arc::clone(&fn_barrier);
        async_fn(move |_: &Named| {
            let gauge = Arc::clone(&gauge);
            let barrier = Arc::clone(&barrier);
            async move {
                gauge.hold(&barrier).await;
                Ok::<i64, BoxError>(1)
            }
        })
    };
    let eval_gauge = Arc::new(Gauge::default());
    let evaluator = Slow {
        gauge: Arc::clone(&eval_gauge),
        barrier: Arc::new(tokio::sync::Barrier::new(2)),
        limit: 2,
    };
    let options = SuiteOptions {
        max_test_case_concurrency: Some(4),
        ..SuiteOptions::default()
    };
    let run = run_test_suite("limits", cases, vec![Arc::new(evaluator)], f, options);
    let report = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the limits allow the barriers to fill")
        .unwrap();
    assert!(report.all_passed());
    assert_eq!(
        fn_gauge.most.load(Ordering::SeqCst),
        4,
        "fn calls in flight"
    );
    assert_eq!(
        eval_gauge.most.load(Ordering::SeqCst),
        2,
        "evaluator calls in flight"
    );
}

#[tokio::test]
async fn grid_search_runs_the_suite_once_per_combination() {
    let params: GridSearchParams = [
        ("model".to_owned(), vec![json!("small"), json!("large")]),
        (
            "temperature".to_owned(),
            vec![json!(0.0), json!(0.5), json!(1.0)],
        ),
    ]
    .into_iter()
    .collect();
    let f = async_fn(|c: &Named| {
        let hash = c.0.clone();
        async move {
            let grid = grid_search_ctx().ok_or("no grid context")?;
            Ok::<String, BoxError>(format!("{hash}:{}:{}", grid["model"], grid["temperature"]))
        }
    });
    let none: Vec<Arc<dyn Evaluator<Named, String>>> = Vec::new();
    let cases = vec![Named("a".into()), Named("b".into())];
    let options = SuiteOptions {
        grid_search_params: Some(params),
        ..SuiteOptions::default()
    };
    let report = run_test_suite("grid", cases, none, f, options)
        .await
        .unwrap();
    // Parameter names in order, each one's values in the order given, the last name
    // varying fastest.
    assert_eq!(report.runs.len(), 6);
    assert!(report.all_passed(), "{report:#?}");
    let combos: Vec<String> = report
        .runs
        .iter()
        .map(|r| {
            let g = r.grid.as_ref().unwrap();
            format!("{}/{}", g["model"], g["temperature"])
        })
        .collect();
    assert_eq!(
        combos,
        [
            "\"small\"/0.0",
            "\"small\"/0.5",
            "\"small\"/1.0",
            "\"large\"/0.0",
            "\"large\"/0.5",
            "\"large\"/1.0"
        ]
    );
    assert!(grid_search_ctx().is_none(), "no context outside a run");
}

#[tokio::test]
async fn duration_is_the_functions_own_time_not_the_wait_for_a_permit() {
    let f = async_fn(|_: &Named| async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        Ok::<i64, BoxError>(1)
    });
    let none: Vec<Arc<dyn Evaluator<Named, i64>>> = Vec::new();
    let cases = vec![Named("a".into()), Named("b".into()), Named("c".into())];
    let options = SuiteOptions {
        max_test_case_concurrency: Some(1),
        ..SuiteOptions::default()
    };
    let started = std::time::Instant::now();
    let report = run_test_suite("one-at-a-time", cases, none, f, options)
        .await
        .unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(150),
        "the cases ran one at a time"
    );
    for case in &report.runs[0].cases {
        assert!(
            case.duration >= Duration::from_millis(50) && case.duration < Duration::from_millis(90),
            "{}: {:?}, not the time spent waiting for the other cases",
            case.hash,
            case.duration
        );
    }
}

#[tokio::test]
async fn a_report_serializes_in_plain_shapes() {
    let f = sync_fn(|c: &Sum| -> Result<i64, BoxError> { Ok(c.x + c.y) });
    let report = run_test_suite("sums", cases(), evaluators(), f, SuiteOptions::default())
        .await
        .unwrap();
    let json = serde_json::to_value(&report).unwrap();
    let cases = &json["runs"][0]["cases"];
    assert!(
        cases[0]["duration"].is_f64(),
        "seconds: {}",
        cases[0]["duration"]
    );
    assert_eq!(
        cases[0]["evaluations"][0],
        json!({"evaluator": "is-expected", "result": {"evaluation": {"score": 1.0, "threshold": {"gte": 1.0}}}})
    );
    assert_eq!(
        cases[2]["evaluations"][1],
        json!({"evaluator": "picky", "result": {"error": "negative outputs are not my department"}})
    );
    // `picky` has nothing to say about 0.
    assert_eq!(
        cases[3]["evaluations"][1],
        json!({"evaluator": "picky", "result": "skipped"})
    );
    assert_eq!(cases[3]["status"], "passed");
    assert_eq!(cases[3]["error"], json!(null));
    let text = json.to_string();
    for rust_shape in ["\"Ok\"", "\"Err\"", "\"secs\"", "\"nanos\""] {
        assert!(!text.contains(rust_shape), "{rust_shape} in {text}");
    }
}

/// `fn` runs as sample 0 of its case (the case's hash is its id and name), so the
/// agents and models it calls are recorded and replayed as that case's
/// (`docs/cassettes.md`).
#[tokio::test]
async fn fn_runs_in_its_case_s_scope() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let f = {
        let seen = Arc::clone(&seen);
        async_fn(move |_: &Named| {
            let scope = prill_target::scope::current();
            seen.lock().unwrap().push(scope.clone());
            async move {
                let scope = scope.ok_or("no sample scope")?;
                Ok::<String, BoxError>(format!("{}/{}", scope.case, scope.sample))
            }
        })
    };
    let none: Vec<Arc<dyn Evaluator<Named, String>>> = Vec::new();
    let cases = vec![Named("a".into()), Named("b".into())];
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let options = SuiteOptions {
        events: Some(tx),
        ..SuiteOptions::default()
    };
    let report = run_test_suite("scoped", cases, none, f, options)
        .await
        .unwrap();
    assert!(report.all_passed(), "{report:#?}");
    let mut units = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let prill_run::Event::UnitFinished(unit) = event {
            units.push((unit.unit.case_id.clone(), unit.unit.name.clone()));
        }
    }
    units.sort();
    let mut scopes: Vec<(String, String, u32)> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|s| {
            let s = s.as_ref().expect("fn runs in a sample scope");
            (s.case.to_string(), s.name.to_string(), s.sample)
        })
        .collect();
    scopes.sort();
    let expected: Vec<(String, String, u32)> =
        units.into_iter().map(|(id, name)| (id, name, 0)).collect();
    assert_eq!(scopes, expected);
    assert_eq!(scopes.len(), 2);
}

/// A case whose `fn` passes or fails by a pattern over its calls: `pattern[i % len]` for
/// the `i`th call (`P` passes, `F` gives a wrong answer, `E` fails `fn` itself).
#[derive(Debug)]
struct Patterned {
    name: &'static str,
    pattern: &'static str,
    calls: AtomicUsize,
}

impl TestCase for Patterned {
    fn hash(&self) -> String {
        self.name.to_owned()
    }
}

struct Says;

impl Evaluator<Patterned, bool> for Says {
    fn id(&self) -> &str {
        "says"
    }

    fn evaluate<'a>(
        &'a self,
        _: &'a Patterned,
        output: &'a bool,
    ) -> BoxFuture<'a, Result<Option<Evaluation>, EvaluatorError>> {
        Box::pin(async move { Ok(Some(Evaluation::pass_fail(*output))) })
    }
}

#[tokio::test]
async fn a_reliability_gate_samples_each_case_until_it_can_tell() {
    let case = |name, pattern| Patterned {
        name,
        pattern,
        calls: AtomicUsize::new(0),
    };
    let cases = vec![
        case("good", "P"),
        case("bad", "F"),
        case("broken", "E"),
        case("between", "PPPPPPPPF"),
    ];
    let f = sync_fn(|c: &Patterned| {
        let i = c.calls.fetch_add(1, Ordering::SeqCst);
        match c.pattern.as_bytes()[i % c.pattern.len()] {
            b'P' => Ok(true),
            b'F' => Ok(false),
            _ => Err("the agent fell over".into()),
        }
    });
    let evaluators: Vec<Arc<dyn Evaluator<Patterned, bool>>> = vec![Arc::new(Says)];
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let options = SuiteOptions {
        // The fewest samples that keep the default rates' promise.
        reliability: Some(Reliability {
            max_samples: 81,
            ..Reliability::default()
        }),
        events: Some(tx),
        ..SuiteOptions::default()
    };
    let report = run_test_suite("gated", cases, evaluators, f, options)
        .await
        .unwrap();
    let by = |hash: &str| {
        report.runs[0]
            .cases
            .iter()
            .find(|c| c.hash == hash)
            .unwrap()
            .clone()
    };
    let verdicts =
        ["good", "bad", "broken", "between"].map(|h| (by(h).status, by(h).samples.len()));
    assert_eq!(
        verdicts,
        [
            // 18 passes in a row pass the default rates; three failures fail them;
            // errors are not counted, until there are max(3, ceil(81 / 10)) = 9.
            (Status::Passed, 18),
            (Status::Failed, 3),
            (Status::Errored, 9),
            // Eight in nine keeps the test near where it started: undecided after 81.
            (Status::Inconclusive, 81),
        ]
    );
    // The case shows its first sample that did not pass.
    assert_eq!(by("broken").error.as_deref(), Some("the agent fell over"));
    assert_eq!(by("between").evaluations[0].result.status(), Status::Failed);
    // Every sample is an event, and the unit carries the gate.
    let mut samples = 0;
    let mut inconclusive = 0;
    while let Ok(event) = rx.try_recv() {
        match event {
            prill_run::Event::SampleFinished { .. } => samples += 1,
            prill_run::Event::UnitFinished(unit) => {
                assert!(unit.gate.reliability().is_some(), "{unit:?}");
                assert_eq!(unit.tally.total() as usize, unit.samples.len());
            }
            prill_run::Event::RunFinished(summary) => inconclusive = summary.inconclusive,
            _ => {}
        }
    }
    assert_eq!(samples, 18 + 3 + 9 + 81);
    assert_eq!(inconclusive, 1);
}

#[tokio::test]
async fn a_reliability_plan_that_cannot_keep_its_promise_is_refused_before_anything_runs() {
    let options = SuiteOptions {
        reliability: Some(Reliability {
            max_samples: 10,
            ..Reliability::default()
        }),
        ..SuiteOptions::default()
    };
    let f = sync_fn(|_: &Sum| -> Result<i64, BoxError> { panic!("nothing runs") });
    let refused = run_test_suite("gated", cases(), evaluators(), f, options).await;
    assert!(
        matches!(&refused, Err(SuiteError::Reliability(_))),
        "{refused:?}"
    );
    let why = refused.unwrap_err().to_string();
    assert!(why.contains("would meet it"), "{why}");
}
