//! `pilotsim new` through the binary: the ATLAS dumps of `data/panda_cgsim` become a scenario
//! that names the nuclei PanDA would skip, runs, and creates and finishes jobs; bad options
//! leave no file behind.

use std::path::PathBuf;
use std::process::Command;

fn pilotsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pilotsim"))
}

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/panda_cgsim").join(name)
}

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pilotsim-own-grid-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn new(file: &std::path::Path, extra: &[&str]) -> std::process::Output {
    pilotsim()
        .arg("new")
        .arg("--cric")
        .arg(data("site_info.json"))
        .arg(data("site_conn_info.json"))
        .args(extra)
        .arg("-o")
        .arg(file)
        .output()
        .unwrap()
}

#[test]
fn the_atlas_dumps_become_a_scenario_that_creates_and_finishes_jobs() {
    let d = dir("run");
    let file = d.join("my_grid.ron");
    let o = new(&file, &["--jobs", "1e4", "--days", "2"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("skip nucleus=CERN-PROD due to long transfer backlog criteria=-transfer_backlog"),
        "the snapshot's backlog keeps CERN-PROD out: {err}"
    );
    assert!(err.contains("wrote ") && err.contains("150 PanDA queues, 9 nuclei"), "{err}");
    let v = pilotsim().arg("validate").arg(&file).output().unwrap();
    assert!(v.status.success() && String::from_utf8_lossy(&v.stderr).contains("criteria=-transfer_backlog"));
    let out = d.join("out");
    let r = pilotsim().args(["run", "-q", "--out"]).arg(&out).arg(&file).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let s: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let (created, done) = (s["jobs"]["submitted"].as_u64().unwrap(), s["jobs"]["done"].as_u64().unwrap());
    assert!(created > 1000 && done > 500, "created {created}, done {done}");
    // Written once: a second time needs --force.
    let again = new(&file, &[]);
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("--force"));
}

#[test]
fn a_bad_option_is_an_error_and_writes_nothing() {
    let d = dir("bad");
    for (args, expect) in [
        (&["--nuclei", "Atlantis"][..], "--nuclei: no site \"Atlantis\" in the grid"),
        (&["--jobs", "100"][..], "needs 10000 to 1000000000 jobs"),
        (&["--days", "0"][..], "--days 0"),
        (&["--slots", "0"][..], "--slots 0"),
    ] {
        let file = d.join("x.ron");
        let o = new(&file, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expect), "{args:?}: {err}");
        assert!(!file.exists(), "{args:?} left a file");
    }
}
