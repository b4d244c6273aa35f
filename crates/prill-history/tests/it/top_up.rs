//! `prill compare --top-up`'s procedure ([`TopUp`]) on hand-built runs: the looks it
//! spreads each test over, which cases it draws and from which sample index, why each
//! stops, what a later comparison of the topped-up head reads; and a seeded simulation
//! that its false regressions stay within `alpha` while it finds more real ones.

use prill_history::compare::{
    Draw, Ended, Side, Thresholds, TopUp, TopUpPlan, TopUpPlanError, compare, render,
};
use prill_report::format::{RunInfo, RunSettings, TopUpOf};
use prill_report::stored::StoredRun;
use serde_json::json;

/// A finished unit of case `name`: `passed` of `n` samples passed, the samples kept
/// (indices `from..from + n`) when `keep` is set.
fn unit(name: &str, passed: u32, n: u32, from: u32, keep: bool) -> String {
    let samples: Vec<_> = (0..if keep { n } else { 0 })
        .map(|i| {
            let status = if i < passed { "passed" } else { "failed" };
            json!({"index": from + i, "status": status, "duration": 0.1, "interactions": [], "error": null})
        })
        .collect();
    let verdict = if passed * 10 >= n * 8 {
        "passed"
    } else {
        "failed"
    };
    json!({
        "schema_version": 1, "event": "unit_finished",
        "unit": {"case_id": format!("id-{name}"), "name": name, "file": "cases.yaml",
                 "dialect": "data-driven", "connection": "direct", "target": "agent"},
        "verdict": verdict, "success_ratio": format!("{}/{n}", (n * 8).div_ceil(10)),
        "tally": {"passed": passed, "failed": n - passed, "errored": 0},
        "samples": samples, "duration": 0.5,
    })
    .to_string()
}

/// A run of `units` (name, passed, samples).
fn side(label: &str, units: &[(&str, u32, u32)]) -> Side {
    let text: String = units
        .iter()
        .map(|(name, passed, n)| unit(name, *passed, *n, 0, false) + "\n")
        .collect();
    Side::new(label, StoredRun::parse(&text).unwrap())
}

/// A wave of the draws `drawn`, `passed` of each draw's samples passing, kept as the
/// `top-up` run `id` of `head`.
fn wave(id: &str, drawn: &[Draw], mut passed: impl FnMut(&Draw) -> u32) -> Side {
    let mut info = RunInfo::starting(
        "top-up",
        None,
        RunSettings {
            top_up: Some(TopUpOf {
                head: "head".into(),
                looks: 3,
            }),
            ..RunSettings::default()
        },
    );
    info.id = id.to_owned();
    let mut line = serde_json::to_value(&info).unwrap();
    line["schema_version"] = json!(1);
    line["event"] = json!("run");
    let mut text = line.to_string();
    text.push('\n');
    for d in drawn {
        text += &unit(&d.case.name, passed(d), d.samples, d.first_sample, true);
        text.push('\n');
    }
    Side::new(id, StoredRun::parse(&text).unwrap())
}

#[test]
fn a_plan_that_cannot_run_is_refused() {
    let plan = |max, wave, drop| TopUpPlan { max, wave, drop }.check();
    assert!(plan(40, 20, 0.2).is_ok());
    assert_eq!(
        plan(0, 20, 0.2),
        Err(TopUpPlanError::Empty { max: 0, wave: 20 })
    );
    assert!(matches!(plan(40, 20, 1.0), Err(TopUpPlanError::Drop(_))));
    assert!(matches!(
        plan(40, 20, f64::NAN),
        Err(TopUpPlanError::Drop(_))
    ));
    assert_eq!(
        TopUpPlan {
            max: 45,
            wave: 20,
            drop: 0.2
        }
        .looks(),
        4
    );
}

/// Every p-value is multiplied by the looks: a drop that is a regression at one look
/// is within chance when it is one of ten.
#[test]
fn the_looks_multiply_every_p_value() {
    let base = side("base", &[("steady", 30, 30)]);
    let mut head = side("head", &[("steady", 25, 30)]);
    let once = compare(&base, &head, &Thresholds::default());
    assert_eq!(once.looks, 1);
    assert_eq!(once.regressions.len(), 1);
    let p = once.regressions[0].p_value.unwrap();
    assert!(p < 0.05 && p * 10.0 > 0.05, "{p}");
    head.looks = 10;
    let spread = compare(&base, &head, &Thresholds::default());
    assert_eq!(spread.looks, 10);
    let change = spread
        .within_chance
        .first()
        .or(spread.probably_changed.first())
        .expect("no longer a regression");
    assert!((change.p_value.unwrap() - (p * 10.0).min(1.0)).abs() < 1e-12);
    assert!(render::human(&spread).contains("multiplied by 10 (Bonferroni)"));
}

/// Only the undecided cases are drawn, each from the index after every sample its
/// head's gate could have started; a case stops once decided, and the comparison says
/// why each stopped.
#[test]
fn only_undecided_cases_are_drawn_and_each_says_why_it_stopped() {
    let base = side(
        "base",
        &[
            ("broken", 40, 40),
            ("unsure", 38, 40),
            ("tiny", 2, 2),
            ("same", 1, 1),
        ],
    );
    let head = side(
        "head",
        &[
            ("broken", 0, 40),
            ("unsure", 33, 40),
            ("tiny", 1, 2),
            ("same", 1, 1),
        ],
    );
    let plan = TopUpPlan {
        max: 40,
        wave: 20,
        drop: 0.2,
    };
    let mut top_up = TopUp::new(base, head, Thresholds::default(), plan);
    assert_eq!(top_up.head().looks, 3);
    let first = top_up.next_wave();
    // `broken` is a regression already, `same` is not sampled, and two samples of
    // `tiny`'s base could never show a drop: only `unsure` is drawn.
    let drawn: Vec<_> = first
        .iter()
        .map(|d| (d.case.name.as_str(), d.samples, d.first_sample))
        .collect();
    assert_eq!(drawn, [("unsure", 20, 40)]);
    // The head at 50% now: a regression, whatever the other looks would say.
    top_up.add(&first, wave("w1", &first, |d| d.samples / 2));
    let second = top_up.next_wave();
    assert!(second.is_empty(), "{second:?}");
    let (c, head) = top_up.finish();
    let report = c.top_up.as_ref().unwrap();
    let ended: Vec<_> = report
        .cases
        .iter()
        .map(|t| (t.case.name.as_str(), t.samples, t.passed, t.ended))
        .collect();
    assert_eq!(
        ended,
        [
            ("tiny", 0, 0, Ended::Futile),
            ("unsure", 20, 10, Ended::Decided)
        ]
    );
    assert_eq!(
        (report.waves, report.runs.as_slice()),
        (1, ["w1".to_owned()].as_slice())
    );
    let names: Vec<_> = c.regressions.iter().map(|r| r.case.name.as_str()).collect();
    assert_eq!(names, ["broken", "unsure"]);
    let unsure = head.units.iter().find(|u| u.unit.name == "unsure").unwrap();
    assert_eq!((unsure.tally.passed, unsure.tally.failed), (43, 17));
    let human = render::human(&c);
    assert!(
        human.contains("  unsure [direct]  +20 samples (10 passed) in 1 wave: decided\n"),
        "{human}"
    );
    assert!(
        render::markdown(&c)
            .contains("| unsure | direct | +20 samples (10 passed) in 1 wave: decided |")
    );
}

/// A case whose samples would show the plan's drop stops; one still undecided after
/// `max` stops at the cap; the second wave numbers its samples after the first's.
#[test]
fn a_case_stops_when_a_drop_would_be_seen_or_at_the_cap() {
    let base = side("base", &[("holds", 95, 100), ("wobbles", 90, 100)]);
    let head = side("head", &[("holds", 28, 30), ("wobbles", 25, 30)]);
    let plan = TopUpPlan {
        max: 40,
        wave: 20,
        drop: 0.2,
    };
    let mut top_up = TopUp::new(base, head, Thresholds::default(), plan);
    let first = top_up.next_wave();
    assert_eq!(first.len(), 2, "{first:?}");
    assert!(
        first
            .iter()
            .all(|d| d.first_sample == 30 && d.samples == 20)
    );
    // `holds` keeps passing; `wobbles` stays a little lower.
    let passed = |d: &Draw| if d.case.name == "holds" { 19 } else { 17 };
    top_up.add(&first, wave("w1", &first, passed));
    let second = top_up.next_wave();
    let holds_done = second.iter().all(|d| d.case.name != "holds");
    for d in &second {
        assert_eq!((d.first_sample, d.samples), (50, 20));
    }
    top_up.add(&second, wave("w2", &second, passed));
    assert!(top_up.next_wave().is_empty());
    let (c, _) = top_up.finish();
    let report = c.top_up.unwrap();
    for t in &report.cases {
        assert!(t.samples <= 40);
        match t.case.name.as_str() {
            "holds" if holds_done => assert_eq!(t.ended, Ended::Detectable),
            "holds" => assert!(matches!(t.ended, Ended::Detectable | Ended::Cap)),
            _ => assert!(matches!(
                t.ended,
                Ended::Detectable | Ended::Cap | Ended::Decided
            )),
        }
    }
}

/// A head read with its `top-up` runs: their samples add up, the looks are theirs, and
/// the comparison counts them.
#[test]
fn a_head_read_with_its_top_ups_pays_for_their_looks() {
    let base = side("base", &[("unsure", 38, 40)]);
    let mut head = side("head", &[("unsure", 33, 40)]);
    let first = vec![Draw {
        case: prill_history::compare::CaseRef {
            case_id: "id-unsure".into(),
            name: "unsure".into(),
            file: "cases.yaml".into(),
            connection: "direct".into(),
            target: "agent".into(),
        },
        samples: 20,
        first_sample: 40,
    }];
    head.add(wave("w1", &first, |_| 10));
    assert_eq!(head.looks, 3);
    assert_eq!(head.topped_up_by, ["w1"]);
    let c = compare(&base, &head, &Thresholds::default());
    assert_eq!(c.looks, 3);
    assert_eq!(c.regressions[0].head.samples, 60);
}

/// Bernoulli(`p`) draws: how many of `n` pass.
fn draws(rng: &mut fastrand::Rng, p: f64, n: u32) -> u32 {
    (0..n).filter(|_| rng.f64() < p).count() as u32
}

/// One comparison of a case whose base passes at `p_base` (`n_base` samples) and head
/// at `p_head` (`n_head`), topped up under `plan` when given: whether it came out a
/// regression, and the samples the top-up added.
fn trial(
    rng: &mut fastrand::Rng,
    (p_base, n_base): (f64, u32),
    (p_head, n_head): (f64, u32),
    plan: Option<TopUpPlan>,
) -> (bool, u32) {
    let base = side("base", &[("c", draws(rng, p_base, n_base), n_base)]);
    let head = side("head", &[("c", draws(rng, p_head, n_head), n_head)]);
    let Some(plan) = plan else {
        let c = compare(&base, &head, &Thresholds::default());
        return (!c.regressions.is_empty(), 0);
    };
    let mut top_up = TopUp::new(base, head, Thresholds::default(), plan);
    let mut added = 0;
    loop {
        let drawn = top_up.next_wave();
        if drawn.is_empty() {
            break;
        }
        added += drawn.iter().map(|d| d.samples).sum::<u32>();
        let wave = wave("w", &drawn, |d| draws(rng, p_head, d.samples));
        top_up.add(&drawn, wave);
    }
    let (c, _) = top_up.finish();
    (!c.regressions.is_empty(), added)
}

/// Seeded simulation: with no change, the top-up's false regressions stay within
/// `alpha` (every look counted); with a real drop it finds the regression more often
/// than the head's own samples could, for fewer samples than the cap.
#[test]
fn topping_up_keeps_alpha_and_finds_more_regressions() {
    let mut rng = fastrand::Rng::with_seed(44);
    let plan = Some(TopUpPlan::default());
    let trials = 400;
    let false_alarms = (0..trials)
        .filter(|_| trial(&mut rng, (0.9, 60), (0.9, 10), plan).0)
        .count();
    // alpha = 0.05: at most 20 of 400, with three standard errors of room (4.4 each).
    assert!(false_alarms <= 20 + 13, "{false_alarms} of {trials}");
    let (mut found_alone, mut found_topped, mut added) = (0, 0, 0);
    for _ in 0..trials {
        found_alone += usize::from(trial(&mut rng, (0.95, 60), (0.7, 10), None).0);
        let (found, more) = trial(&mut rng, (0.95, 60), (0.7, 10), plan);
        found_topped += usize::from(found);
        added += more;
    }
    assert!(
        found_topped >= found_alone + trials / 5,
        "alone {found_alone}, topped up {found_topped} of {trials}"
    );
    let mean_added = f64::from(added) / f64::from(trials as u32);
    assert!(mean_added < 40.0, "{mean_added}");
}
