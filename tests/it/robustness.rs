//! Robustness through the binary: bad input is refused clearly (never a hang or an abort), a
//! reader that goes away early is no error, and a rerun never mixes old and new outputs.

use std::fs;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn pilotsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pilotsim"))
}

fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pilotsim-rob-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    dir
}

/// A short quickstart, so that each run takes a moment.
const SHORT: [&str; 4] = ["--set", "duration_s=14400", "--set", "output.warmup_s=3600"];

#[test]
fn a_reader_that_closes_early_is_a_quiet_success() {
    // `pilotsim run | head -1`, with a reader that closes before anything is written.
    let dir = out_dir("pipe");
    let mut child = pilotsim()
        .arg("run")
        .args(SHORT)
        .arg("--out")
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(dir.join("summary.json").exists(), "the outputs are written before the report is printed");
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn a_rerun_removes_stale_temporaries_and_the_old_summary_first() {
    let dir = out_dir("rerun");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join(".jobs.parquet.tmp-99999"), b"left by a killed run").unwrap();
    fs::write(dir.join("summary.json"), b"{\"old\": true}").unwrap();
    let ok = pilotsim().arg("run").arg("--quiet").args(SHORT).arg("--out").arg(&dir).output().unwrap();
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
    assert!(!dir.join(".jobs.parquet.tmp-99999").exists());
    let summary = fs::read_to_string(dir.join("summary.json")).unwrap();
    assert!(summary.contains("\"digest\"") && !summary.contains("\"old\""), "{summary}");

    // A run whose outputs cannot be written (a directory where jobs.parquet goes) fails,
    // and leaves no summary.json that would vouch for the tables beside it.
    fs::remove_file(dir.join("jobs.parquet")).unwrap();
    fs::create_dir_all(dir.join("jobs.parquet/blocked")).unwrap();
    let failed = pilotsim().arg("run").arg("--quiet").args(SHORT).arg("--out").arg(&dir).output().unwrap();
    assert_eq!(failed.status.code(), Some(2), "{}", String::from_utf8_lossy(&failed.stderr));
    assert!(String::from_utf8_lossy(&failed.stderr).contains("jobs.parquet"));
    assert!(!dir.join("summary.json").exists(), "the old summary was removed before the run");
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn periods_that_round_to_zero_and_oversized_runs_are_refused_with_the_field() {
    for (set, want) in [
        (
            "dirac.director.polling_time_s=0.0004",
            "dirac.director.polling_time_s: the value does not fit: a period must be a number of seconds of at least 1 s, got 0.0004: a shorter period would fire its timer again and again",
        ),
        (
            "dirac.priority.recalculation_period_s=0.0001",
            "dirac.priority.recalculation_period_s: the value does not fit: a period must be a number of seconds of at least 1 s",
        ),
        (
            "dirac.share_corrections.update_history_period_s=0.0004",
            "dirac.share_corrections.update_history_period_s: the value does not fit: a period must be a number of seconds of at least 1 s",
        ),
        ("output.sample_interval_s=0.00001", "output.sample_interval_s: must be at least 1 s"),
        ("duration_s=1e308", "duration_s: must be at most 315360000 s (ten years)"),
        ("workload.0.count=100000000", "a run would need about 65.3 GiB of memory"),
    ] {
        let dir = out_dir("refused");
        let out = pilotsim().args(["run", "--quiet", "--set", set, "--out"]).arg(&dir).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{set}: {err}");
        assert!(err.contains(want), "{set}: {err}");
        assert!(!err.contains("panicked") && !dir.exists(), "{set}: {err}");
    }
}
