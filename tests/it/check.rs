//! `pilotsim check` on the shipped scenarios, and that it catches a fairness regression.

use std::path::{Path, PathBuf};

use pilotsim::run;
use pilotsim::scenario;
use pilotsim::sweep::check::check;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn prepared(name: &str, sets: &[String]) -> run::Prepared {
    let loaded = scenario::load_file(&root().join("scenarios").join(name)).unwrap();
    run::prepare(&loaded, sets).unwrap()
}

#[test]
fn shipped_fair_share_scenarios_pass_their_thresholds_and_baselines() {
    let baselines = root().join("results/baselines");
    for name in ["fairshare_corrected.ron", "fairshare_uncorrected.ron"] {
        let p = prepared(name, &[]);
        assert!(baselines.join(format!("{}.json", p.scenario.name)).exists(), "baseline of {name} is committed");
        let rows = check(&p, p.scenario.expect.replicas, &baselines, false).unwrap();
        assert!(rows.len() > 5, "{name}: thresholds and baseline metrics are checked");
        let failed: Vec<_> = rows.iter().filter(|r| !r.pass).collect();
        assert!(failed.is_empty(), "{name}: {failed:#?}");
    }
}

#[test]
fn switching_the_corrector_off_is_caught_by_thresholds_and_baseline() {
    let baselines = root().join("results/baselines");
    let p = prepared("fairshare_corrected.ron", &["dirac.share_corrections.enabled=false".into()]);
    let rows = check(&p, 3, &baselines, false).unwrap();
    let failed: Vec<&str> = rows.iter().filter(|r| !r.pass).map(|r| r.metric.as_str()).collect();
    assert!(failed.contains(&"entities.long_jobs.deviation"), "{failed:?}");
    assert!(failed.contains(&"entities.long_jobs.achieved_share"), "baseline comparison: {failed:?}");
}

#[test]
fn update_baselines_writes_a_file_that_then_passes() {
    let dir = std::env::temp_dir().join(format!("pilotsim-baselines-{}", std::process::id()));
    let p = prepared("quickstart.ron", &[]);
    let written = check(&p, 2, &dir, true).unwrap();
    assert!(written.iter().any(|r| r.metric == "baseline"));
    assert!(Path::new(&dir.join("quickstart.json")).exists());
    let rows = check(&p, 2, &dir, false).unwrap();
    assert!(rows.iter().all(|r| r.pass), "{rows:#?}");
    std::fs::remove_dir_all(dir).unwrap();
}
