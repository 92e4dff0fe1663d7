//! `pilotsim compare`: paired replicas, the table, the files, and bad input as clear errors.

use std::path::{Path, PathBuf};
use std::process::Command;

use pilotsim::compare::{self, Pairing, outputs};
use pilotsim::run;
use pilotsim::scenario;

fn pilotsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pilotsim"))
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pilotsim-it-compare-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const EPF: &str = "dirac.director.extra_pilot_fraction";

/// The quickstart, 8 simulated hours, with `sets`.
fn quickstart(sets: &[&str]) -> run::Prepared {
    let mut all = vec!["duration_s=28800".to_string()];
    all.extend(sets.iter().map(|s| s.to_string()));
    run::prepare(&scenario::quickstart(), &all).unwrap()
}

fn row<'c>(c: &'c compare::Comparison, metric: &str) -> &'c compare::Row {
    c.rows.iter().find(|r| r.metric == metric).unwrap_or_else(|| panic!("{metric} is a row"))
}

#[test]
fn the_same_configuration_on_both_sides_differs_by_exactly_nothing() {
    // Common random numbers: replica i of A and of B run with the same seed, so two equal
    // sides give equal runs and every paired difference is 0 with a zero interval.
    let p = quickstart(&[]);
    let c = compare::run_scenarios((&p, "A"), (&p, "B"), 3, Some(2), |_, _| {}).unwrap();
    assert_eq!(c.pairing, Pairing::Paired);
    let seeds: Vec<u64> = c.a.replicas.iter().map(|r| r.seed).collect();
    assert_eq!(seeds, c.b.replicas.iter().map(|r| r.seed).collect::<Vec<_>>());
    assert_eq!(seeds, (0..3).map(|i| pilotsim::sweep::replica_seed(p.scenario.seed, i)).collect::<Vec<_>>());
    assert!(c.rows.len() > 20);
    for r in &c.rows {
        assert_eq!((r.diff, r.ci95, r.significant), (0.0, Some(0.0), false), "{}", r.metric);
    }
}

#[test]
fn more_extra_pilots_send_more_pilots_beyond_the_noise_and_the_outputs_are_deterministic() {
    let a = quickstart(&[&format!("{EPF}=0.0")]);
    let b = quickstart(&[&format!("{EPF}=1.0")]);
    let c1 = compare::run_scenarios((&a, "A"), (&b, "B"), 4, Some(1), |_, _| {}).unwrap();
    let c2 = compare::run_scenarios((&a, "A"), (&b, "B"), 4, Some(2), |_, _| {}).unwrap();
    // Debug text, not ==: the traces hold NaN (a share while nothing runs).
    assert!(format!("{c1:?}") == format!("{c2:?}"), "the thread count changes nothing");
    let pilots = row(&c1, "pilots.submitted");
    assert!(pilots.diff > 0.0 && pilots.significant, "{pilots:?}");
    assert_eq!(row(&c1, "jobs.submitted").diff, 0.0, "the same jobs arrive on both sides");

    let (d1, d2) = (temp("det1"), temp("det2"));
    outputs::write_all(&d1, &c1).unwrap();
    outputs::write_all(&d2, &c2).unwrap();
    for f in ["compare.json", "compare.parquet", "compare.html", "share_convergence.svg", "wait_times.png"] {
        assert_eq!(std::fs::read(d1.join(f)).unwrap(), std::fs::read(d2.join(f)).unwrap(), "{f}");
    }
    for f in ["pilots_over_time.svg", "user_wait_times.svg", "share_convergence.png"] {
        assert!(d1.join(f).is_file(), "{f}");
    }
    // The table reads back with every metric and its interval.
    let t =
        pilotsim::metrics::parquet::read_file(&d1.join("compare.parquet"), &["metric", "diff", "ci95", "significant"])
            .unwrap();
    assert_eq!(t.rows, c1.rows.len());
    let html = std::fs::read_to_string(d1.join("compare.html")).unwrap();
    assert!(html.contains("<code>pilots.submitted</code>") && html.contains("common random numbers"), "{html}");
    let text = outputs::text_table(&c1);
    assert!(text.lines().next().unwrap().starts_with("metric") && text.contains("pilots.submitted"), "{text}");
    for d in [d1, d2] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

fn shipped(file: &str, sets: &[&str]) -> run::Prepared {
    let loaded = scenario::load_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(file)).unwrap();
    run::prepare(&loaded, &sets.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
}

#[test]
fn a_panda_comparison_overlays_queue_waits_and_link_backlogs_and_factories_their_throughput() {
    let sat = "panda.gdpconfig.job_broker.nqueued_sat_cap";
    let short = "duration_s=43200";
    let a = shipped("tuning_nqueued_sat_cap.ron", &[short, &format!("{sat}=10")]);
    let b = shipped("tuning_nqueued_sat_cap.ron", &[short, &format!("{sat}=1000")]);
    let c = compare::run_scenarios((&a, "A"), (&b, "B"), 2, Some(1), |_, _| {}).unwrap();
    let d = temp("panda");
    outputs::write_all(&d, &c).unwrap();
    let waits = std::fs::read_to_string(d.join("queue_waits.svg")).unwrap();
    assert!(waits.contains("SWT2_CPB (A)") && waits.contains("SWT2_CPB (B)"), "one ECDF per queue and side");
    let links = std::fs::read_to_string(d.join("link_backlog.svg")).unwrap();
    assert!(links.contains("SWT2_CPB→BNL (A)") && links.contains("SWT2_CPB→BNL (B)"));
    let html = std::fs::read_to_string(d.join("compare.html")).unwrap();
    assert!(html.contains("per PanDA queue") && html.contains("per link"));
    assert!(!d.join("factory_throughput.svg").exists(), "no factory, no factory chart");

    let a = shipped("factory_efficiency.ron", &["duration_s=86400"]);
    let b = shipped("factory_efficiency.ron", &["duration_s=86400", "factory.0.Generic.cycle_s=600"]);
    let c = compare::run_scenarios((&a, "A"), (&b, "B"), 2, Some(1), |_, _| {}).unwrap();
    outputs::write_all(&d, &c).unwrap();
    let f = std::fs::read_to_string(d.join("factory_throughput.svg")).unwrap();
    assert!(
        f.contains("Generic@GPF.BNL.us (A)") && f.contains("Startd@SPF.BNL.us (B)"),
        "one line per factory and side"
    );
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn two_run_directories_compare_without_an_interval() {
    let dir = temp("dirs");
    for (name, epf) in [("x", "0.0"), ("y", "1.0")] {
        let p = quickstart(&[&format!("{EPF}={epf}")]);
        run::simulate(&p, 7, |_, _| {}).unwrap().write(&dir.join(name)).unwrap();
    }
    let out = pilotsim()
        .arg("compare")
        .arg(dir.join("x"))
        .arg(dir.join("y"))
        .arg("--out")
        .arg(dir.join("c"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("pilots.submitted") && stdout.contains("n/a"), "{stdout}");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("c/compare.json")).unwrap()).unwrap();
    assert_eq!(json["pairing"], "paired", "the same seed on both sides");
    assert!(dir.join("c/compare.html").is_file());
    std::fs::remove_dir_all(dir).unwrap();
}

fn fails(args: &[&str], expected: &str) {
    let out = pilotsim().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stdout));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(expected), "{args:?}: {err}");
}

#[test]
fn bad_input_is_a_clear_error() {
    let dir = temp("bad");
    let run_dir = dir.join("run");
    run::simulate(&quickstart(&[]), 1, |_, _| {}).unwrap().write(&run_dir).unwrap();
    let q = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/quickstart.ron");
    let (q, r, o) = (q.to_str().unwrap(), run_dir.to_str().unwrap(), dir.join("o"));
    let o = o.to_str().unwrap();
    fails(
        &["compare", "--a", "dirac.director.no_such_field=1", "--b", &format!("{EPF}=0.5"), "--out", o],
        "no_such_field",
    );
    fails(&["compare", q, "--out", o], "give --a PATH=VALUE");
    fails(&["compare", q, r, "--out", o], "not one of each");
    fails(&["compare", r, "--out", o], "give two");
    fails(&["compare", q, q, "--a", "seed=1", "--out", o], "--a and --b override one scenario");
    fails(&["compare", r, r, "--set", "seed=1", "--out", o], "two directories are compared as they are");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    fails(&["compare", r, empty.to_str().unwrap(), "--out", o], "neither a run directory");
    fails(&["compare", "--a", "seed=1", "-r", "0"], "replicas");
    std::fs::remove_dir_all(dir).unwrap();
}
