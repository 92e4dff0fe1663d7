//! The `pilotsim` binary: exit codes (0 success, 1 the answer is no, 2 an error) and messages.

use std::path::PathBuf;
use std::process::Command;

fn pilotsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pilotsim"))
}

fn tmp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pilotsim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn validate_reports_syntax_and_semantic_problems() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let good = root.join("scenarios/quickstart.ron");
    let ok = pilotsim().arg("validate").arg(&good).output().unwrap();
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stdout));

    let syntax = tmp("syntax.ron", "Scenario(\n  name: \"x\",\n  duration_s: 10\n  sites: [],\n)");
    let q = std::fs::read_to_string(&good).unwrap();
    let semantic = tmp(
        "semantic.ron",
        &q.replace("slots: 400", "slots: 0").replace("abort_probability: 0.05", "abort_probability: 5"),
    );
    let out = pilotsim().arg("validate").arg(&good).arg(&syntax).arg(&semantic).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("{}:4:", syntax.display())), "{text}");
    assert!(text.contains(&format!("{}: sites[0].ces[0].slots: must be at least 1", semantic.display())), "{text}");
    assert!(text.contains("sites[1].ces[0].abort_probability: must be a probability"), "{text}");

    let garbage = tmp("garbage.ron", "\u{0}\u{1}((((]]]");
    let out = pilotsim().arg("validate").arg(&garbage).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "never a panic");
    let missing = pilotsim().arg("validate").arg("/nonexistent/x.ron").output().unwrap();
    assert_eq!(missing.status.code(), Some(1));
}

#[test]
fn run_rejects_unknown_set_paths_and_writes_nothing() {
    let out_dir = std::env::temp_dir().join(format!("pilotsim-cli-run-{}", std::process::id()));
    let out = pilotsim()
        .args(["run", "--quiet", "--set", "dirac.director.extra_pilot_fractio=0.5", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "bad input is an error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("extra_pilot_fractio") && err.contains("extra_pilot_fraction"), "{err}");
    assert!(!out_dir.exists(), "nothing is written when the input is bad");
}

#[test]
fn check_exit_codes_and_cfg_import() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bad = tmp("bad_check.ron", "Scenario(name: \"x\")");
    let out = pilotsim().arg("check").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "invalid input");

    let q = std::fs::read_to_string(root.join("scenarios/quickstart.ron")).unwrap();
    let failing = tmp(
        "failing.ron",
        &q.replace("pilot_efficiency >= 0.5", "pilot_efficiency >= 1.5").replace("\"quickstart\"", "\"failing\""),
    );
    let out =
        pilotsim().args(["check", "--replicas", "1", "--baselines", "/nonexistent"]).arg(&failing).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stdout).contains("FAIL"));

    let cfg = tmp(
        "dirac.cfg",
        "Registry\n{\n  Groups\n  {\n    lhcb_prod\n    {\n      JobShare = 3000\n      Properties = JOB_SHARING\n    }\n  }\n}\n",
    );
    let out = pilotsim().args(["import", "dirac-cfg"]).arg(&cfg).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let ron = String::from_utf8_lossy(&out.stdout);
    assert!(ron.contains("lhcb_prod") && ron.contains("3000") && ron.contains("JOB_SHARING"), "{ron}");
    let broken = tmp("broken.cfg", "Registry\n{\n  Groups\n  {\n");
    let out = pilotsim().args(["import", "dirac-cfg"]).arg(&broken).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "bad input is an error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{}:", broken.display())), "{err}");
}

#[test]
fn gdpconfig_import_prints_a_fragment_warns_and_names_bad_rows() {
    let dump = tmp(
        "gdpconfig.json",
        r#"[{"app": "jedi", "component": "jobbroker", "key": "NQUEUED_SAT_CAP", "value": "300", "vo": "atlas"},
            {"app": "jedi", "component": "jobbroker", "key": "NOT_MODELLED", "value": "1", "vo": "atlas"}]"#,
    );
    let out = pilotsim().args(["import", "gdpconfig"]).arg(&dump).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let ron = String::from_utf8_lossy(&out.stdout);
    assert!(ron.contains("gdpconfig: (") && ron.contains("nqueued_sat_cap: 300"), "{ron}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warning") && err.contains("NOT_MODELLED"), "{err}");

    let bad = tmp(
        "gdpconfig_bad.json",
        r#"[{"app": "jedi", "component": "jobbroker", "key": "NW_THRESHOLD", "value": "high"}]"#,
    );
    let out = pilotsim().args(["import", "gdpconfig"]).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("row 1 (jobbroker/NW_THRESHOLD = \"high\")"), "{err}");
    assert!(out.stdout.is_empty(), "nothing half-written on stdout");
}

#[test]
fn sweep_slurm_dry_run_writes_an_array_script_without_submitting() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = std::env::temp_dir().join(format!("pilotsim-dry-{}", std::process::id()));
    let status = pilotsim()
        .arg("sweep")
        .arg(root.join("scenarios/quickstart.ron"))
        .args(["--vary", "dirac.director.extra_pilot_fraction=0,0.5", "--slurm", "--shards", "3", "--dry-run"])
        .args(["--slurm-arg=--time=00:10:00", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(0), "{}", String::from_utf8_lossy(&status.stderr));
    let script = std::fs::read_to_string(out.join("sweep.sbatch")).unwrap();
    for needle in ["#SBATCH --array=0-2", "--time=00:10:00", "--shard", "extra_pilot_fraction=0,0.5"] {
        assert!(script.contains(needle), "{needle} missing from:\n{script}");
    }
    assert!(!out.join("runs").exists() || std::fs::read_dir(out.join("runs")).unwrap().next().is_none(), "nothing ran");
    let zero = pilotsim()
        .arg("sweep")
        .arg(root.join("scenarios/quickstart.ron"))
        .args(["--vary", "seed=1", "--slurm", "--shards", "0", "--dry-run", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(zero.status.code(), Some(2), "0 shards is an error");
    assert!(String::from_utf8_lossy(&zero.stderr).contains("shard"), "{}", String::from_utf8_lossy(&zero.stderr));
    let _ = std::fs::remove_dir_all(out);
}
