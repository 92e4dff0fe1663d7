//! Through the binary: ordinary runs never end in an internal error, inputs never change
//! silently (a file set on the command line, an imported value the scenario refuses, a name
//! that is a path), and no wrong answer is given in silence (a path varied twice, a misspelt
//! metric, a missing baseline, zero replicas, a stale report, job counts that do not add up).

use std::path::PathBuf;
use std::process::{Command, Output};

fn pilotsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pilotsim"))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn scenario(name: &str) -> PathBuf {
    root().join("scenarios").join(name)
}

/// A fresh directory under the system temp dir.
fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pilotsim-inputs-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn a_panda_job_still_holding_at_the_end_is_no_internal_error() {
    // At 40000 s a job has reported its end and waits for the Adder's next cycle.
    let out = dir("holding");
    let o = pilotsim()
        .args(["run", "-q", "--set", "duration_s=40000", "--out"])
        .arg(&out)
        .arg(scenario("panda_quickstart.ron"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(out.join("summary.json").exists());
}

#[test]
fn a_non_finite_number_is_refused_with_its_path() {
    let q = std::fs::read_to_string(scenario("panda_quickstart.ron")).unwrap();
    let d = dir("inf");
    let file = d.join("inf.ron");
    std::fs::write(
        &file,
        q.replace("arrival: Spread(start_s: 0, end_s: 43200)", "arrival: Spread(start_s: 0, end_s: inf)"),
    )
    .unwrap();
    let o = pilotsim().arg("validate").arg(&file).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("panda.tasks[0].arrival.end_s: must be a finite number"), "{}", text(&o));
}

#[test]
fn a_replay_file_set_on_the_command_line_is_read_and_checked() {
    let o = pilotsim()
        .args(["run", "-q", "--set", "panda.replay.0.file=/nonexistent.csv", "--out"])
        .arg(dir("replay"))
        .arg(scenario("panda_replay_bnl.ron"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("/nonexistent.csv: panda.replay[0].file:"), "{}", text(&o));
}

#[test]
fn a_scenario_name_is_never_a_path() {
    for name in ["..", "a/b", ".", "x\ty"] {
        let o = pilotsim()
            .args(["run", "-q", "--set", &format!("name={name}"), "--set", "duration_s=3600"])
            .current_dir(dir("name"))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{name:?}: {}", text(&o));
        assert!(text(&o).contains(": name: "), "{name:?}: {}", text(&o));
    }
}

#[test]
fn importers_refuse_what_the_scenario_would_refuse_with_the_row() {
    let d = dir("import");
    let cfg = d.join("cs.cfg");
    std::fs::write(&cfg, "Registry\n{\n  Groups\n  {\n    lhcb_prod\n    {\n      JobShare = -5\n    }\n  }\n}\n")
        .unwrap();
    let o = pilotsim().args(["import", "dirac-cfg"]).arg(&cfg).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("cs.cfg:7:7: option `JobShare = -5`: expected a number ≥ 0"), "{}", text(&o));

    let dump = d.join("gdp.json");
    let rows = r#"[{"component": "job_timeout", "key": "TIMEOUT_defined", "value": "-7", "vo": null}]"#;
    std::fs::write(&dump, rows).unwrap();
    let o = pilotsim().args(["import", "gdpconfig", "--vo", "atlas"]).arg(&dump).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("row 1 (job_timeout/TIMEOUT_defined = \"-7\"): TIMEOUT_defined = -7"), "{}", text(&o));

    for (entry, want) in [
        (
            r#"{"BNL": {"atlas_site": "BNL", "maxdiskio": "inf"}}"#,
            "BNL.maxdiskio: expected a finite number, got \"inf\"",
        ),
        (r#"{"BNL": {"atlas_site": "BNL", "pledgedcpu": -5}}"#, "BNL: pledgedcpu: must be ≥ 0, or -1"),
        (r#"{"": {"atlas_site": "BNL"}}"#, "an entry with an empty name"),
    ] {
        let file = d.join("queues.json");
        std::fs::write(&file, entry).unwrap();
        let o = pilotsim().args(["import", "cric"]).arg(&file).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{entry}: {}", text(&o));
        assert!(text(&o).contains(want), "{entry}: {}", text(&o));
    }
}

#[test]
fn a_path_varied_twice_is_an_error() {
    let o = pilotsim()
        .args(["sweep", "--vary", "dirac.director.extra_pilot_fraction=0,0.5"])
        .args(["--vary", "dirac.director.extra_pilot_fraction=1", "--out"])
        .arg(dir("vary"))
        .arg(scenario("quickstart.ron"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--vary dirac.director.extra_pilot_fraction: this path is varied twice"), "{}", text(&o));
}

#[test]
fn a_misspelt_metric_is_bad_input_with_the_nearest_names() {
    let q = std::fs::read_to_string(scenario("quickstart.ron")).unwrap();
    let d = dir("metric");
    let file = d.join("typo.ron");
    std::fs::write(&file, q.replace("\"pilot_efficiency >= 0.5\"", "\"pilot_efficency >= 0.5\"")).unwrap();
    let o = pilotsim().arg("validate").arg(&file).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let want = "expect.thresholds[0]: no metric \"pilot_efficency\" in the summary (nearest: pilot_efficiency";
    assert!(text(&o).contains(want), "{}", text(&o));

    let o = pilotsim().args(["check", "--replicas", "1", "--baselines"]).arg(&d).arg(&file).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains(want), "{}", text(&o));

    let o = pilotsim()
        .args(["tune", "--param", "dirac.director.extra_pilot_fraction=0:1", "--minimize", "max_share_deviaton"])
        .args(["--steps", "2", "--rounds", "1", "--replicas", "1", "--out"])
        .arg(d.join("tune"))
        .arg(scenario("quickstart.ron"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--minimize: no metric \"max_share_deviaton\" in the summary (nearest: max_share_deviation")
    );
}

#[test]
fn check_says_when_there_is_no_baseline_and_refuses_zero_replicas() {
    let d = dir("nobaseline");
    let q = scenario("quickstart.ron");
    let o = pilotsim().args(["check", "--replicas", "1", "--baselines"]).arg(&d).arg(&q).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("baseline") && text(&o).contains("none: no "), "{}", text(&o));

    let o = pilotsim().args(["check", "--replicas", "0"]).arg(&q).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--replicas"), "{}", text(&o));
}

#[test]
fn a_rerun_removes_the_old_report_and_the_job_counts_add_up() {
    let out = dir("report");
    std::fs::write(out.join("report.html"), "<html>the previous run</html>").unwrap();
    let o = pilotsim().args(["run", "--out"]).arg(&out).arg(scenario("panda_quickstart.ron")).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!out.join("report.html").exists(), "a stale report was left beside the new outputs");
    // "jobs:   N submitted, D done, F failed, C cancelled or closed, R running and W waiting at the end"
    let stdout = String::from_utf8_lossy(&o.stdout);
    let line = stdout.lines().find(|l| l.starts_with("jobs:")).unwrap();
    let n: Vec<u64> = line.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse().ok()).collect();
    assert!(line.contains("cancelled or closed") && n.len() == 6, "{line}");
    assert_eq!(n[0], n[1..].iter().sum::<u64>(), "{line}");
}
