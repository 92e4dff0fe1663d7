//! The pilot factory of seed 003 in the world: the seed's two arguments
//! reproduced on the shipped scenarios.

use pilotsim::factory::generic::gpf_throughput;
use pilotsim::factory::startd::spf_throughput;
use pilotsim::run;
use pilotsim::scenario::factory::FactoryConfig;
use pilotsim::scenario::{self, Scenario};

fn load(file: &str) -> Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(file);
    scenario::load_file(&path).unwrap().scenario
}

fn simulate(s: &Scenario) -> serde_json::Value {
    let loaded = scenario::Loaded { scenario: s.clone(), origin: "test".into(), sha256: String::new() };
    let prepared = run::prepare(&loaded, &[]).unwrap();
    let mut f = run::simulate(&prepared, s.seed, |_, _| {}).unwrap();
    serde_json::to_value(f.summary()).unwrap()
}

fn num(v: &serde_json::Value, path: &[&str]) -> f64 {
    let mut x = v;
    for p in path {
        x = if let Ok(i) = p.parse::<usize>() { &x[i] } else { &x[*p] };
    }
    x.as_f64().unwrap_or_else(|| panic!("{path:?} is {x}"))
}

/// Seed 003 "Pilot Submission Efficiency": 100 nodes, Tsw 30 min (mean), tp = tpw = 1 min,
/// Tj 2 h (mean). GPF: x/(Tsw + tp + tpw + Tj + the Generator's lag, 5 s on average at a 10 s
/// cycle) = 39.45 jobs/h; SPF after its first round: x/(tp' + tpw' + Tj + half a pilot interval)
/// = 48.98 jobs/h. Simulated over the second half of four days: within 2 %.
#[test]
fn factory_efficiency_agrees_with_the_closed_forms() {
    let s = load("factory_efficiency.ron");
    let v = simulate(&s);
    let gpf = gpf_throughput(100.0, 1800.0 + 5.0, 7200.0, 60.0, 60.0).exact * 3600.0;
    let spf = spf_throughput(100.0, 1, 1.0, 60.0 + 30.0, 60.0, 7200.0).exact * 3600.0;
    assert!((gpf - 39.45).abs() < 0.01 && (spf - 48.98).abs() < 0.01, "{gpf} {spf}");
    let (g, sp) = (
        num(&v, &["factory", "0", "jobs_per_hour_second_half"]),
        num(&v, &["factory", "1", "jobs_per_hour_second_half"]),
    );
    assert!((g / gpf - 1.0).abs() < 0.02, "GPF {g} jobs/h against {gpf}");
    assert!((sp / spf - 1.0).abs() < 0.02, "SPF {sp} jobs/h against {spf}");
    // `summary.json` states the same closed forms with the Tsw and Tj it measured (39.46 and
    // 49.01 jobs/h at seed 3).
    for (i, expected) in [("0", gpf), ("1", spf)] {
        let cf = num(&v, &["factory", i, "closed_form_jobs_per_hour"]);
        assert!((cf / expected - 1.0).abs() < 0.01, "factory {i}: {cf} against {expected}");
        // Work never lacked: the closed form's premise held, and the summary says so.
        let f = &v["factory"][i.parse::<usize>().unwrap()];
        assert_eq!(f["closed_form_applies"], serde_json::json!(true), "factory {i}");
    }
    // The head node's load: a generic pilot per job, a startd pilot per ~40 jobs.
    let (gl, sl) = (
        num(&v, &["factory", "0", "submissions_per_finished_job"]),
        num(&v, &["factory", "1", "submissions_per_finished_job"]),
    );
    assert!(gl > 1.0 && gl < 1.1, "{gl}");
    assert!(sl < 0.05, "{sl}");
}

/// The analysis load of `factory_analysis.ron` at three copies of one site: generic pilots
/// (one per node), startd pilots taking any job, and startd pilots keeping a VM for analysis.
#[test]
fn factory_analysis_waits_by_policy() {
    let v = simulate(&load("factory_analysis.ron"));
    let (generic, any, keep) = ("0", "1", "2");
    let at = |f: &str, path: &[&str]| num(&v, &[&["factory", f], path].concat());
    let wait = |f: &str, kind: &str, q: &str| at(f, &["wait_time_s", kind, q]);
    for (name, f) in [("generic", generic), ("startd any", any), ("startd keep one", keep)] {
        eprintln!(
            "{name}: analysis wait p50 {:.0} s p95 {:.0} s; production slowdown {:.2}; jobs done {}; \
             suspended {:.0} h; submissions/job {:.3}",
            wait(f, "analysis", "p50"),
            wait(f, "analysis", "p95"),
            at(f, &["slowdown", "production"]),
            at(f, &["jobs_done"]),
            at(f, &["suspended_s"]) / 3600.0,
            at(f, &["submissions_per_finished_job"]),
        );
    }
    // The seed's claim: analysis waits far less beside production on startd VMs, and least
    // when a VM is kept for it (seed 31: p50 19 001 s generic, 16 726 s any, 2 s keep one).
    assert!(wait(generic, "analysis", "p50") > 100.0 * wait(keep, "analysis", "p50"));
    assert!(wait(any, "analysis", "p95") > 10.0 * wait(keep, "analysis", "p95"));
    // Its price: production jobs suspended beside analysis (slowdown 1.22 at seed 31); two
    // production jobs sharing one CPU run at half speed (2.11 with `Any`).
    assert!(at(keep, &["suspensions"]) > 0.0);
    assert_eq!(at(generic, &["suspensions"]), 0.0);
    assert!((at(generic, &["slowdown", "production"]) - 1.0).abs() < 1e-6); // milliseconds rounded
    assert!(at(keep, &["slowdown", "production"]) > 1.1);
    assert!(at(any, &["slowdown", "production"]) > at(keep, &["slowdown", "production"]));
    // The head node's load: a generic pilot per job, startd pilots a fraction of that.
    assert!(at(generic, &["submissions_per_finished_job"]) > 1.0);
    assert!(at(keep, &["submissions_per_finished_job"]) < 0.5);
}

/// A startd factory serving a PanDA queue (seed 003 is ATLAS's): on the PanDA quickstart it
/// takes BNL_SCORE's CE from Harvester, its pilots get jobs through `getJob` by kind, background
/// jobs are suspended and, at removal, requeued as `activated` — and every invariant of the
/// world and of PanDA's tables holds (`run::simulate` fails otherwise).
#[test]
fn a_startd_factory_serves_a_panda_queue() {
    let mut s = load("panda_quickstart.ron");
    let text = r#"Startd(site: "BNL", ces: ["gridgk06.sdcc.bnl.gov"], queue: Some("BNL_SCORE"), vms: 2,
        job_types: KeepOneForAnalysis, lifetime: Exponential(mean: 14400), standby: Fixed(20))"#;
    s.factory = vec![ron::from_str(text).unwrap()];
    let v = simulate(&s);
    let f = &v["factory"][0];
    assert_eq!(f["queue"], "BNL_SCORE");
    assert!(num(&v, &["factory", "0", "jobs_done"]) > 100.0, "{f}");
    assert!(num(&v, &["factory", "0", "removals"]) > 0.0, "{f}");
    assert!(num(&v, &["factory", "0", "jobs_requeued"]) > 0.0, "{f}");
    // 4 h lifetimes and 20 standby pilots: 0.62 submissions per job at seed 4, below a
    // generic pilot's one.
    assert!(num(&v, &["factory", "0", "submissions_per_finished_job"]) < 1.0, "{f}");
    // Harvester submits no worker to the factory's queue.
    let harvester = &v["wms"]["panda"]["harvester"];
    assert!(harvester.is_object(), "{harvester}");
}

/// Seed 003's open question on `factory_standby.ron` (README "How many standby pilots"):
/// `pilotsim tune` over fixed counts 10–60 (4 replicas, p95 wait ≤ 1 h, best pilot efficiency)
/// chooses 36 (39 before the factories' random streams were keyed by identity); the adaptive
/// controller keeps the same p95 with far fewer slots held idle, because it stops replacing
/// idle startd pilots when the load falls. Too few (20) starve the peak.
#[test]
fn the_adaptive_standby_count_beats_the_best_fixed_one() {
    let adaptive = simulate(&load("factory_standby.ron"));
    let fixed = |n: u32| {
        let mut s = load("factory_standby.ron");
        if let FactoryConfig::Startd { standby, .. } = &mut s.factory[0] {
            *standby = pilotsim::factory::standby::StandbyPolicy::Fixed(n);
        }
        simulate(&s)
    };
    let (best, few) = (fixed(36), fixed(20));
    let p95 = |v: &serde_json::Value| num(v, &["factory", "0", "wait_time_s", "production", "p95"]);
    let eff = |v: &serde_json::Value| num(v, &["factory", "0", "pilot_efficiency"]);
    for (name, v) in [("adaptive", &adaptive), ("fixed 36", &best), ("fixed 20", &few)] {
        eprintln!(
            "{name}: p95 wait {:.0} s, pilot efficiency {:.3}, held {:.0} slot-h, mean standby {:.1}",
            p95(v),
            eff(v),
            num(v, &["factory", "0", "held_slot_hours"]),
            num(v, &["factory", "0", "mean_standby"]),
        );
    }
    assert!(p95(&best) <= 3600.0 && p95(&adaptive) <= 3600.0);
    assert!(p95(&few) > 3.0 * p95(&adaptive));
    assert!(eff(&adaptive) > 1.4 * eff(&best), "{} vs {}", eff(&adaptive), eff(&best));
    // The same work is done either way: both runs end with some 70 of the 7786 jobs still
    // running, how many depending on the draws (7717 and 7716 done at seed 37).
    let (a, b) = (num(&adaptive, &["factory", "0", "jobs_done"]), num(&best, &["factory", "0", "jobs_done"]));
    assert!((a / b - 1.0).abs() < 0.001, "{a} vs {b}");
}

/// A run with factories writes its factory charts: throughput against the
/// closed forms and waits by factory and job kind; standby exactly when the run has startd
/// Generator cycles (`factory_cycles.parquet`).
#[test]
fn factory_runs_write_the_factory_charts() {
    const PNG: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    let dir = std::env::temp_dir().join(format!("pilotsim-it-factory-charts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let s = load("factory_efficiency.ron");
    let loaded = scenario::Loaded { scenario: s.clone(), origin: "test".into(), sha256: String::new() };
    let prepared = run::prepare(&loaded, &[]).unwrap();
    run::simulate(&prepared, s.seed, |_, _| {}).unwrap().write(&dir).unwrap();
    for stem in ["factory_throughput", "factory_waits"] {
        let png = std::fs::read(dir.join(format!("{stem}.png"))).unwrap();
        assert!(png.starts_with(&PNG) && png.len() > 10_000, "{stem}.png");
        let svg = std::fs::read_to_string(dir.join(format!("{stem}.svg"))).unwrap();
        for text in ["factory_efficiency, seed 3", "Generic@GPF.BNL.us", "Startd@SPF.BNL.us"] {
            assert!(svg.contains(text), "{stem}.svg names {text}");
        }
    }
    let waits = std::fs::read_to_string(dir.join("factory_waits.svg")).unwrap();
    assert!(waits.contains("Startd@SPF.BNL.us production") && !waits.contains("analysis"), "no analysis streams");
    let cycles = dir.join("factory_cycles.parquet").exists();
    assert_eq!(dir.join("factory_standby.png").exists(), cycles, "standby chart iff the cycles table");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The README's three factory charts (`docs/img/`) are those the shipped scenarios draw today.
/// To refresh one: `pilotsim run scenarios/<scenario>.ron --out /tmp/x && cp /tmp/x/<chart>.svg
/// docs/img/`.
#[test]
fn the_readme_factory_charts_are_current() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stale = Vec::new();
    for (file, chart) in [
        ("factory_efficiency.ron", "factory_throughput"),
        ("factory_analysis.ron", "factory_waits"),
        ("factory_standby.ron", "factory_standby"),
    ] {
        let dir = std::env::temp_dir().join(format!("pilotsim-it-readme-{chart}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let loaded = scenario::load_file(&root.join("scenarios").join(file)).unwrap();
        let prepared = run::prepare(&loaded, &[]).unwrap();
        run::simulate(&prepared, loaded.scenario.seed, |_, _| {}).unwrap().write(&dir).unwrap();
        let drawn = std::fs::read_to_string(dir.join(format!("{chart}.svg"))).unwrap();
        let shipped = std::fs::read_to_string(root.join("docs/img").join(format!("{chart}.svg"))).unwrap();
        if drawn != shipped {
            stale.push(format!("docs/img/{chart}.svg (from scenarios/{file})"));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(stale.is_empty(), "stale README charts: {stale:?}");
}

/// A generic pilot's job is cut at the CE's walltime when its fetch (tpw) and its payload do
/// not fit: one job of 4900 s (49000 s of work at CPU power 10) on a CE of 5500 s walltime,
/// the pilot script 60 s and the fetch 1000 s. The job is matched at the pilot's start + 60 s
/// and would end 5900 s later, but the batch system ends the slot 5440 s after the match: the
/// job failed, though 5440 s ≥ its 4900 s of CPU work.
#[test]
fn a_generic_pilots_job_cut_at_the_walltime_fails() {
    let text = r#"Scenario(
        name: "cut", duration_s: 14400, output: (warmup_s: 0, sample_interval_s: 600),
        sites: [Site(name: "GPF", ces: [Ce(name: "gpf-ce", slots: 1, cpu_power: 10.0,
            max_walltime_s: 5500, pilot_wait: Fixed(10))])],
        dirac: (groups: [(name: "prod", job_share: 1000, users: ["p"])]),
        factory: [Generic(site: "GPF", rate_per_min: 1.0, max_total: Some(1), cycle_s: 10,
            pilot_script_s: 60, job_fetch_s: 1000)],
        workload: [JobStream(name: "one", owner: "p", group: "prod", count: 1, job_type: "MCSimulation",
            arrival: Burst(at_s: 0), cpu_work: Fixed(49000), cpu_time: 49000)],
    )"#;
    let s = scenario::load_str(text, "cut").unwrap().scenario;
    let v = simulate(&s);
    assert_eq!(num(&v, &["factory", "0", "jobs_started"]), 1.0, "{v}");
    assert_eq!(
        (num(&v, &["factory", "0", "jobs_done"]), num(&v, &["factory", "0", "jobs_failed"])),
        (0.0, 1.0),
        "the job ran 5440 s of its 5900 s in the slot: {}",
        v["factory"][0]
    );
}
