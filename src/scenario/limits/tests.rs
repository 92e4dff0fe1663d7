//! Inputs that once ran for ever or aborted, each refused with its field and why.

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
    assert_eq!((e.jobs, e.pilots, e.samples), (1e6, 1e6, 193.0));
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
    assert!(
        m.starts_with("a run would need about 65.3 GiB of memory (1.0e8 DIRAC jobs × 400 B, 1.0e8 pilots × 300 B"),
        "{m}"
    );
    assert!(m.contains("more than the limit of 16 GiB") && m.contains("PILOTSIM_MAX_MEMORY_GB=67"), "{m}");
    // Raising the limit accepts it.
    let mut s = quick();
    s.workload[0].count = 100_000_000;
    assert_eq!(problems_with(&s, 67.0), vec![]);
    // Job ids are 32-bit.
    for w in &mut s.workload {
        w.count = u32::MAX;
    }
    assert!(message_of(&problems_with(&s, f64::INFINITY), "workload[0].count").contains("job ids are 32-bit"));
}

/// A shipped scenario after `--set` assignments, and its limit problems with a 16 GiB limit.
fn shipped_after(file: &str, sets: &[&str]) -> Vec<Problem> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(file);
    let s = crate::scenario::load_file(&path).unwrap().scenario;
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    problems_with(&overrides::apply(&s, &sets).unwrap(), DEFAULT_MAX_MEMORY_GB)
}

#[test]
fn every_source_of_jobs_and_pilots_counts_in_the_estimate() {
    // PanDA production: 300 M tasks of 100 jobs (3 attempts each) overflow the job ids.
    let p = shipped_after("panda_quickstart.ron", &["panda.tasks.0.count=300000000"]);
    assert!(message_of(&p, "panda.tasks[0].count").contains("job ids are 32-bit"), "{p:?}");
    // Analysis: 1 M tasks of 50 jobs fit the ids but not the memory.
    let p = shipped_after("panda_quickstart.ron", &["panda.analysis.0.count=1000000"]);
    let m = message_of(&p, "panda");
    assert!(m.contains("GiB of memory") && m.contains("PanDA jobs × 1200 B"), "{m}");
    // A dataset's files: one job per file, and a transfer per file.
    let p = shipped_after("panda_quickstart.ron", &["panda.tasks.1.inputs.0.files=100000000"]);
    assert!(message_of(&p, "panda").contains("transfers × 150 B"), "{p:?}");
    let p = shipped_after("panda_quickstart.ron", &["panda.tasks.1.inputs.0.files=10000000000"]);
    assert!(message_of(&p, "panda.tasks[1]").contains("jobs per task"), "{p:?}");
    // A startd factory's standby pilots.
    let p = shipped_after("factory_standby.ron", &[r#"factory.0.Startd.standby={"Fixed":4294967295}"#]);
    assert!(message_of(&p, "workload").contains("4.3e9 pilots × 300 B"), "{p:?}");
    // A generic factory's rate over the run.
    let p = shipped_after("factory_efficiency.ron", &["factory.0.Generic.rate_per_min=1e9"]);
    assert!(message_of(&p, "workload").contains("pilots × 300 B"), "{p:?}");
    // The shipped scenarios themselves fit.
    for file in ["panda_quickstart.ron", "factory_standby.ron", "factory_efficiency.ron", "two_vo.ron"] {
        assert_eq!(shipped_after(file, &[]), vec![], "{file}");
    }
}

#[test]
fn the_generated_atlas_week_is_refused_at_1e8_jobs_and_runs_at_2e6() {
    let big = parse(&crate::scenario::generate_atlas::atlas_scenario(100_000_000).unwrap(), "a").unwrap();
    let m = message_of(&problems_with(&big, DEFAULT_MAX_MEMORY_GB), "panda");
    assert!(m.contains("1.0e8 PanDA jobs"), "{m}");
    let week = parse(&crate::scenario::generate_atlas::atlas_scenario(2_000_000).unwrap(), "a").unwrap();
    assert_eq!(problems_with(&week, DEFAULT_MAX_MEMORY_GB), vec![]);
    // Measured: 1.46 GiB at its peak.
    assert!((1.46..8.0).contains(&MemoryEstimate::of(&week).gib()), "{:?}", MemoryEstimate::of(&week));
}

#[test]
fn indices_the_model_narrows_to_16_bits_are_checked() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/panda_quickstart.ron");
    let mut s = crate::scenario::load_file(&path).unwrap().scenario;
    let p = s.panda.as_mut().unwrap();
    let q = p.queues[0].clone();
    p.queues = vec![q; MAX_U16_INDEX + 1];
    let m = message_of(&problems_with(&s, f64::INFINITY), "panda.queues");
    assert_eq!(m, "65535 PanDA queues, more than 65534 (they are numbered with 16 bits)");
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
