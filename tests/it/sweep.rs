//! Sweeps: identical results with 1 or 2 threads, shards merged = unsharded, a SIGKILLed
//! sweep resumes to the same files, and a changed scenario is refused.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pilotsim::scenario;
use pilotsim::sweep::{self, SweepOptions, plan::parse_vary};

/// The quickstart cut to 6 simulated hours and a tenth of the jobs.
pub const SMALL: [&str; 5] =
    ["duration_s=21600", "workload.0.count=400", "workload.1.count=600", "workload.2.count=300", "workload.3.count=50"];

fn small_sets() -> Vec<String> {
    SMALL.iter().map(|s| s.to_string()).collect()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pilotsim-sweep-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

const OUTPUTS: [&str; 3] = ["sweep.parquet", "points.parquet", "points.json"];

fn assert_same_outputs(a: &Path, b: &Path) {
    for f in OUTPUTS {
        let (x, y) = (std::fs::read(a.join(f)).unwrap(), std::fs::read(b.join(f)).unwrap());
        assert!(x == y, "{f} differs between {} and {}", a.display(), b.display());
    }
}

fn run_sweep(out: &Path, threads: usize, shard: Option<(u32, u32)>) -> sweep::SweepOutcome {
    let vary = vec![parse_vary("dirac.director.extra_pilot_fraction=0,0.5").unwrap()];
    let opts = SweepOptions { replicas: 2, threads: Some(threads), shard, sets: small_sets() };
    sweep::sweep(&scenario::quickstart(), vary, &opts, out, |_, _| {}).unwrap()
}

#[test]
fn threads_do_not_change_results_and_shards_merge_to_the_same_files() {
    let (one, two) = (tmp("t1"), tmp("t2"));
    let o = run_sweep(&one, 1, None);
    assert_eq!((o.total, o.mine, o.skipped, o.merged), (4, 4, 0, true));
    run_sweep(&two, 2, None);
    assert_same_outputs(&one, &two);
    for f in ["points.json", "sweep_pilot_efficiency.png", "sweep_max_share_deviation.svg"] {
        assert!(one.join(f).exists(), "{f}");
    }
    // Rerunning skips everything.
    let again = run_sweep(&one, 2, None);
    assert_eq!(again.skipped, 4);
    assert_same_outputs(&one, &two);

    let (s0, s1, merged) = (tmp("s0"), tmp("s1"), tmp("merged"));
    assert!(!run_sweep(&s0, 1, Some((0, 2))).merged);
    run_sweep(&s1, 1, Some((1, 2)));
    assert!(sweep::merge(std::slice::from_ref(&s0), &tmp("partial")).is_err(), "an incomplete merge is refused");
    assert_eq!(sweep::merge(&[s0.clone(), s1.clone()], &merged).unwrap(), 4);
    assert_same_outputs(&one, &merged);
    for d in [one, two, s0, s1, merged] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn a_changed_scenario_is_refused() {
    let out = tmp("changed");
    run_sweep(&out, 2, Some((0, 4)));
    let vary = vec![parse_vary("dirac.director.extra_pilot_fraction=0,0.5").unwrap()];
    let mut sets = small_sets();
    sets.push("dirac.director.extra_pilots=8".into());
    let opts = SweepOptions { replicas: 2, threads: Some(1), shard: None, sets };
    let err = sweep::sweep(&scenario::quickstart(), vary, &opts, &out, |_, _| {}).unwrap_err();
    assert!(err.to_string().contains("scenario changed") && err.to_string().contains("Refusing"), "{err}");
    let _ = std::fs::remove_dir_all(out);
}

fn sweep_command(out: &Path) -> Command {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut c = Command::new(env!("CARGO_BIN_EXE_pilotsim"));
    c.arg("sweep").arg(root.join("scenarios/quickstart.ron"));
    c.args([
        "--vary",
        "dirac.director.extra_pilot_fraction=0,0.25,0.5",
        "--replicas",
        "3",
        "--threads",
        "1",
        "--quiet",
    ]);
    for s in SMALL {
        c.args(["--set", s]);
    }
    c.arg("--out").arg(out);
    c
}

#[test]
fn a_sigkilled_sweep_resumes_to_the_same_files() {
    let (full, killed) = (tmp("full"), tmp("killed"));
    assert!(sweep_command(&full).status().unwrap().success());
    let mut child = sweep_command(&killed).stdout(Stdio::null()).spawn().unwrap();
    let start = Instant::now();
    let runs = killed.join("runs");
    let finished = || {
        std::fs::read_dir(&runs)
            .map(|d| d.filter(|e| e.as_ref().is_ok_and(|e| !e.file_name().to_string_lossy().starts_with('.'))).count())
            .unwrap_or(0)
    };
    // Kill it as soon as one of its 9 runs is on disk.
    while finished() == 0 && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let done = finished();
    assert!((1..9).contains(&done), "the kill must interrupt the sweep: {done} of 9 runs were done");
    assert!(!killed.join("points.json").exists(), "no merged output from an interrupted sweep");
    // The runs already on disk are skipped, not recomputed: their files are not rewritten.
    let stamps = || -> Vec<(std::ffi::OsString, std::time::SystemTime)> {
        let mut v: Vec<_> = std::fs::read_dir(&runs)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| (e.file_name(), e.metadata().unwrap().modified().unwrap()))
            .collect();
        v.sort();
        v
    };
    let before = stamps();
    assert!(sweep_command(&killed).status().unwrap().success());
    let after = stamps();
    assert!(before.iter().all(|b| after.contains(b)), "finished runs were recomputed on resume");
    assert_eq!(after.len(), 9);
    assert_same_outputs(&full, &killed);
    let _ = std::fs::remove_dir_all(full);
    let _ = std::fs::remove_dir_all(killed);
}

/// Run files are not synced to disk: one a power loss left empty is run again on resume,
/// the others are kept.
#[test]
fn a_resumed_sweep_runs_again_a_run_whose_file_is_empty() {
    let (out, full) = (tmp("emptied"), tmp("emptied-full"));
    run_sweep(&full, 1, None);
    run_sweep(&out, 1, None);
    std::fs::write(out.join("runs").join("p0001-r00.json"), b"").unwrap();
    let again = run_sweep(&out, 1, None);
    assert_eq!((again.total, again.skipped), (4, 3));
    assert_same_outputs(&full, &out);
    let _ = std::fs::remove_dir_all(out);
    let _ = std::fs::remove_dir_all(full);
}

/// A resumed sweep removes the hidden temporaries that killed writes left in its directory and
/// in `runs/` (each named `.<file>.tmp-<pid>` by the atomic writer).
#[test]
fn a_resumed_sweep_removes_stale_temporaries() {
    let out = tmp("stale");
    run_sweep(&out, 1, Some((0, 2)));
    let stale = [out.join(".sweep.parquet.tmp-99999"), out.join("runs").join(".p0000-r01.json.tmp-99999")];
    for f in &stale {
        std::fs::write(f, b"left by a killed sweep").unwrap();
    }
    run_sweep(&out, 1, Some((0, 2)));
    for f in &stale {
        assert!(!f.exists(), "{} was left behind", f.display());
    }
    let _ = std::fs::remove_dir_all(out);
}
