//! `pilotsim tune`'s outputs.

use std::path::Path;
use std::process::Command;

const EPF: &str = "dirac.director.extra_pilot_fraction";

fn pilotsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pilotsim"))
}

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pilotsim-it-tune-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `tune` draws every constraint: one chart per constrained metric, each with its own line.
#[test]
fn tune_draws_a_chart_for_every_constrained_metric() {
    let dir = temp("tune");
    let q = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/tuning_extra_pilots.ron");
    let out = pilotsim()
        .arg("tune")
        .arg(&q)
        .args(["--param", &format!("{EPF}=0:2"), "--minimize", EPF])
        .args(["--target", "wait_time_s.lhcb_user.p95<=600", "--target", "pilot_efficiency>=0.8"])
        .args(["--steps", "3", "--rounds", "1", "--replicas", "2", "--set", "duration_s=21600", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&out.stderr));
    let first = std::fs::read_to_string(dir.join("tune.svg")).unwrap();
    assert!(first.contains("constraint &lt;= 600") || first.contains("constraint <= 600"), "the p95 chart");
    let second = std::fs::read_to_string(dir.join("tune_pilot_efficiency.svg")).unwrap();
    assert!(second.contains("constraint &gt;= 0.8") || second.contains("constraint >= 0.8"), "the efficiency chart");
    assert!(dir.join("tune_pilot_efficiency.png").is_file());

    // `report` renders the directory: the search, the values tried and both charts.
    let report = pilotsim().arg("report").arg(&dir).output().unwrap();
    assert_eq!(report.status.code(), Some(0), "{}", String::from_utf8_lossy(&report.stderr));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    for text in
        ["<caption>Values tried</caption>", "<code>pilot_efficiency &gt;= 0.8</code>", "tune_pilot_efficiency.svg"]
    {
        assert!(html.contains(text), "{text}");
    }
    assert_eq!(html.matches("<figure>").count(), 2);
    std::fs::remove_dir_all(dir).unwrap();
}
