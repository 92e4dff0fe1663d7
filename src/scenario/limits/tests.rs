//! The inputs of issue 9 that ran for ever or aborted, each refused with its field and why.

use super::*;
use crate::scenario::{QUICKSTART, overrides, parse};

fn quick() -> Scenario {
    parse(QUICKSTART, "q").unwrap()
}

/// The problems of the quickstart after `--set` assignments, with a 16 GiB memory limit.
fn problems_after(sets: &[&str]) -> Vec<Problem> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    problems_with(&overrides::apply(&quick(), &sets).unwrap(), DEFAULT_MAX_MEMORY_GB)
}

fn message_of(problems: &[Problem], path: &str) -> String {
    match problems.iter().find(|p| p.path == path) {
        Some(p) => p.message.clone(),
        None => panic!("no problem at {path}: {problems:?}"),
    }
}

#[test]
fn the_quickstart_and_the_million_jobs_are_within_every_limit() {
    assert_eq!(problems_with(&quick(), DEFAULT_MAX_MEMORY_GB), vec![]);
    let text = include_str!("../../../benches/scenarios/dirac_million_jobs.ron");
    let m = parse(text, "m").unwrap();
    assert_eq!(problems_with(&m, DEFAULT_MAX_MEMORY_GB), vec![]);
    let e = MemoryEstimate::of(&m);
    assert_eq!((e.jobs, e.samples, e.entities), (1_000_000, 193.0, 5));
    // Measured peak: 435 MB; the estimate allows a pilot per job.
    assert!((0.4..1.0).contains(&e.gib()), "{e:?}");
}

#[test]
fn a_sample_interval_that_rounds_to_zero_is_refused() {
    let m = message_of(&problems_after(&["output.sample_interval_s=0.0001"]), "output.sample_interval_s");
    assert!(m.starts_with("must be at least 1 s, got 0.000"), "{m}");
}

#[test]
fn too_many_samples_are_refused_with_the_interval_that_fits() {
    let m = message_of(&problems_after(&["output.sample_interval_s=0.5"]), "output.sample_interval_s");
    assert!(m.starts_with("must be at least 1 s"), "{m}");
    let p = problems_after(&["duration_s=31536000", "output.sample_interval_s=60"]);
    assert_eq!(
        message_of(&p, "output.sample_interval_s"),
        "gives 525600 samples over duration_s 31536000, more than 100000: use at least 316 s"
    );
    assert_eq!(problems_after(&["duration_s=31536000", "output.sample_interval_s=316"]), vec![]);
}

#[test]
fn durations_beyond_ten_years_are_refused() {
    for (d, shown) in [("4e9", "4000000000"), ("1e308", "1e308")] {
        let p = problems_after(&[&format!("duration_s={d}"), "output.sample_interval_s=1e6"]);
        assert_eq!(message_of(&p, "duration_s"), format!("must be at most 315360000 s (ten years), got {shown}"));
        assert_eq!(p.len(), 1, "the samples are not counted over a refused duration: {p:?}");
    }
    let p = problems_after(&["workload.0.arrival.Spread.end_s=1e300"]);
    assert!(message_of(&p, "workload[0].arrival.end_s").contains("ten years"), "{p:?}");
}

#[test]
fn a_run_too_big_for_memory_is_refused_with_the_estimate_and_the_way_to_raise_the_limit() {
    let p = problems_after(&["workload.0.count=100000000"]);
    let m = message_of(&p, "workload");
    assert!(m.starts_with("a run would need about 65.3 GiB of memory (100013000 jobs × 700 B"), "{m}");
    assert!(m.contains("more than the limit of 16 GiB") && m.contains("PILOTSIM_MAX_MEMORY_GB=67"), "{m}");
    // Raising the limit accepts it.
    let mut s = quick();
    s.workload[0].count = 100_000_000;
    assert_eq!(problems_with(&s, 67.0), vec![]);
    // Job ids are 32-bit.
    for w in &mut s.workload {
        w.count = u32::MAX;
    }
    assert!(message_of(&problems_with(&s, f64::INFINITY), "workload").contains("job ids are 32-bit"));
}

#[test]
fn director_settings_that_ask_for_unbounded_pilots_are_refused() {
    let p = problems_after(&["dirac.director.pilots_per_iteration=1e15", "dirac.director.extra_pilot_fraction=1e300"]);
    assert!(message_of(&p, "dirac.director.pilots_per_iteration").starts_with("must be at most 100000"));
    assert!(message_of(&p, "dirac.director.extra_pilot_fraction").starts_with("must be at most 100, got 1e300"));
}

#[test]
fn counts_that_repeat_work_at_one_instant_or_for_ever_are_bounded() {
    let p = problems_after(&["dirac.job_agent.stop_after_failed_matches=4000000000", "expect.replicas=4000000000"]);
    assert!(
        message_of(&p, "dirac.job_agent.stop_after_failed_matches").starts_with("must be at most 1000, got 4000000000")
    );
    assert_eq!(message_of(&p, "expect.replicas"), "must be at most 10000, got 4000000000");
}
