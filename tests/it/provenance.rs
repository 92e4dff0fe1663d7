//! Every run keeps its effective scenario: `scenario.ron` beside the outputs is the scenario
//! after `--set`, at the seed it ran with, and running it again gives the same digest.

use std::path::{Path, PathBuf};
use std::process::Command;

use pilotsim::run;
use pilotsim::scenario::{self, effective};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The effective scenario of a run of `file` with `sets` at `seed`, loaded back from its text as
/// `pilotsim run DIR/scenario.ron` would, and both digests.
fn round_trip(file: &str, sets: &[&str], seed: u64) -> (String, String) {
    let loaded = scenario::load_file(&root().join("scenarios").join(file)).unwrap();
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let prepared = run::prepare(&loaded, &sets).unwrap();
    let first = run::simulate(&prepared, seed, |_, _| {}).unwrap();
    let p = effective::Provenance {
        origin: &prepared.origin,
        sha256: &prepared.sha256,
        overrides: &prepared.sets,
        seed,
        digest: &first.meta.digest,
        version: pilotsim::VERSION,
    };
    let text = effective::to_ron(&prepared.scenario, &p).unwrap();
    let again = scenario::load_str_in(&text, "scenario.ron", Path::new("/nonexistent")).unwrap();
    let rerun = run::prepare(&again, &[]).unwrap();
    let second = run::simulate(&rerun, again.scenario.seed, |_, _| {}).unwrap();
    (first.meta.digest, second.meta.digest)
}

#[test]
fn the_effective_scenario_of_every_shipped_scenario_reruns_to_its_digest() {
    let mut files: Vec<String> = std::fs::read_dir(root().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".ron"))
        .collect();
    files.sort();
    let mut wrong = Vec::new();
    for f in &files {
        // A short run with an override and a seed that is not the scenario's own.
        let (a, b) = round_trip(f, &["duration_s=21600", "output.warmup_s=3600"], 977);
        if a != b {
            wrong.push(format!("{f}: {a} then {b}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The warnings of a run of `file` after `sets`.
fn warnings(file: &str, sets: &[&str]) -> Vec<String> {
    let loaded = scenario::load_file(&root().join("scenarios").join(file)).unwrap();
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let prepared = run::prepare(&loaded, &sets).unwrap();
    let seed = prepared.scenario.seed;
    run::simulate(&prepared, seed, |_, _| {}).unwrap().summary().warnings
}

#[test]
fn meaningless_runs_say_so() {
    // Every stream arrives after the end: nothing is created.
    let late = r#"{"Burst":{"at_s":7200}}"#;
    let sets = [
        "duration_s=3600".to_string(),
        "output.warmup_s=600".into(),
        format!("workload.0.arrival={late}"),
        format!("workload.1.arrival={late}"),
    ];
    let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
    let w = warnings("quickstart.ron", &sets);
    assert_eq!(w[0], "no job was created");
    assert!(w.iter().any(|x| x.starts_with("stream ") && x.ends_with("created no job")), "{w:?}");
    // A PanDA stream whose tasks all arrive after the end says so.
    let late = r#"panda.analysis.0.arrival={"Burst":{"at_s":90000}}"#;
    let w = warnings("panda_quickstart.ron", &[late]);
    assert!(
        w.contains(&"stream \"alice_higgs\" created no job: its 12 tasks had not arrived by the end".to_string()),
        "{w:?}"
    );
    // The starvation the scenario was written to show: one stream never runs.
    let w = warnings("cpu_first_starvation.ron", &[]);
    assert_eq!(w, vec!["stream \"ben_short_declared\": none of its 2400 jobs ran".to_string()]);
    // A meaningful run has none.
    assert_eq!(warnings("quickstart.ron", &[]), Vec::<String>::new());
}

#[test]
fn a_run_writes_its_scenario_and_overrides_and_names_them_in_its_charts() {
    let dir = std::env::temp_dir().join(format!("pilotsim-provenance-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_pilotsim")).args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    let d = dir.join("a").display().to_string();
    let sets = ["--set", "dirac.director.extra_pilot_fraction=0.5", "--set", "duration_s=21600"];
    run(&[&["run", "--quiet", "--seed", "5", "--out", &d][..], &sets].concat());
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("a/summary.json")).unwrap()).unwrap();
    assert_eq!(
        summary["overrides"],
        serde_json::json!(["dirac.director.extra_pilot_fraction=0.5", "duration_s=21600"])
    );
    assert!(summary["warnings"].is_array());
    let svg = std::fs::read_to_string(dir.join("a/share_convergence.svg")).unwrap();
    assert!(svg.contains("seed 5, director.extra_pilot_fraction=0.5, duration_s=21600"), "the chart title names them");
    let ron = std::fs::read_to_string(dir.join("a/scenario.ron")).unwrap();
    assert!(ron.contains("--set dirac.director.extra_pilot_fraction=0.5") && ron.contains("extra_pilot_fraction: 0.5"));
    // Rerun from the written scenario alone: same digest.
    let d2 = dir.join("b").display().to_string();
    run(&["run", "--quiet", &dir.join("a/scenario.ron").display().to_string(), "--out", &d2]);
    let again: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("b/summary.json")).unwrap()).unwrap();
    assert_eq!(again["digest"], summary["digest"]);
    assert_eq!((again["seed"].as_u64(), again["overrides"].as_array().map(Vec::len)), (Some(5), Some(0)));
    let _ = std::fs::remove_dir_all(&dir);
}
