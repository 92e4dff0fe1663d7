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
        "Registry\n{\n  Groups\n  {\n    lhcb_prod\n    {\n      JobShare = 3000\n      Properties = JobSharing\n    }\n    \
         lhcb_user\n    {\n      Properties = JOB_SHARING\n    }\n  }\n}\n",
    );
    let out = pilotsim().args(["import", "dirac-cfg"]).arg(&cfg).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let ron = String::from_utf8_lossy(&out.stdout);
    assert!(ron.contains("lhcb_prod") && ron.contains("3000") && ron.contains("[\"JobSharing\"]"), "{ron}");
    assert!(!ron.contains("JOB_SHARING"), "not DIRAC's property: dropped\n{ron}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:12:7: group `lhcb_user`: `JOB_SHARING` is not a DIRAC property", cfg.display())),
        "{err}"
    );
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

/// One run of the PanDA quickstart for every `explain` test (written by the binary).
fn panda_run_dir() -> &'static PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("pilotsim-cli-explain-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let scenario = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/panda_quickstart.ron");
        let out = pilotsim().arg("run").arg(&scenario).arg("--quiet").arg("--out").arg(&dir).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        dir
    })
}

/// `pilotsim explain PANDA_RUN ARGS...`: exit code and stdout.
fn explain(args: &[&str]) -> (Option<i32>, String) {
    let out = pilotsim().arg("explain").arg(panda_run_dir()).args(args).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn explain_a_job_shows_its_life_its_job_brokerage_and_its_task_brokerage() {
    let (code, text) = explain(&["--job", "1"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.starts_with("job 1 — task 1, attempt 1, gshare MC Simulation Full (panda_quickstart, seed 4)\n"),
        "{text}"
    );
    assert!(text.contains("PQ BNL, finished"), "{text}");
    assert!(text.contains("  running       00:12  (747.907 s)"), "{text}");
    assert!(
        text.contains("Placed by job brokerage #1 of task 1 at 00:00 (0 s): 50 jobs of the task to 2 PQs"),
        "{text}"
    );
    assert!(text.contains("  chosen     BNL        weight 20    25 jobs  <- this job"), "{text}");
    assert!(
        text.contains("  skipped    MWT2       CoreCount: due to core mismatch site:1 <> task:8 criteria=-cpucore")
    );
    assert!(text.contains("Task brokerage of task 1 (to a nucleus):\n  #0 at 00:00 (0 s): nucleus BNL (weight 5.5)"));

    // An analysis job: its PQ skipped by the first loop and taken by a later one; no nucleus.
    let (code, text) = explain(&["--job", "1390"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("Placed by analysis brokerage #69 of task 42"), "{text}");
    assert!(text.contains("[weighed in a later loop]"), "{text}");
    assert!(text.contains("there is no task brokerage"), "{text}");
}

#[test]
fn explain_a_task_summarises_every_decision() {
    let (code, text) = explain(&["--task", "1"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("Job brokerage: 8 decisions: 3 placed 104 jobs, 5 pending"), "{text}");
    assert!(text.contains("Pending (job brokerage): 5 cycles from 00:01 (60 s) to 04:50 (17400 s): no candidate PQ"));
    assert!(text.contains("  CoreCount skipped BNL_SCORE (5), MWT2 (5)"), "{text}");
    assert!(text.contains("  AGLT2          51       2          1        5              0  Final 5\n"), "{text}");
    assert!(text.contains("  Final skipped AGLT2 (5), BNL (5)"), "{text}");
}

#[test]
fn explain_one_queue_says_why_not_this_queue() {
    let (code, text) = explain(&["--job", "1", "--queue", "MWT2"]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(
        text.lines().nth(1),
        Some(
            "MWT2 was skipped at 00:00 (0 s) by CoreCount: due to core mismatch site:1 <> task:8 criteria=-cpucore \
             (job brokerage #1 of task 1)."
        ),
        "{text}"
    );
    let (code, text) = explain(&["--task", "25", "--queue", "MWT2"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("chosen 4 times (125 jobs), a candidate without jobs 5 times, skipped 3 times (Final 3)"));
    assert!(text.contains("MWT2 was a candidate at 04:04 (14640 s) with weight 0.2221 but got no jobs"), "{text}");
    let (code, text) = explain(&["--queue", "BNL"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("BNL in the 1139 PQ brokerages of the run"), "{text}");
    assert!(text.contains("not looked at 37 times"), "the analysis brokerages never look at BNL: {text}");
}

#[test]
fn explain_json_carries_the_same_answer() {
    let (code, text) = explain(&["--job", "1", "--json"]);
    assert_eq!(code, Some(0), "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["explains"], "job");
    assert_eq!(v["job"]["computingsite"], "BNL");
    assert_eq!(v["placement"]["brokerage_id"], 1);
    assert_eq!(v["placement"]["chosen"][0]["name"], "BNL");
    assert_eq!(v["placement"]["chosen"][0]["jobs"], 25);
    assert_eq!(v["placement"]["skipped"][0]["stage"], "CoreCount");
    assert_eq!(v["task_brokerage"][0]["chosen"][0]["name"], "BNL");
    let (code, text) = explain(&["--job", "1", "--queue", "MWT2", "--json"]);
    assert_eq!(code, Some(0), "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!((v["explains"].as_str(), v["verdicts"][0]["verdict"].as_str()), (Some("queue"), Some("skipped")));
}

#[test]
fn explain_exit_codes_missing_job_and_not_a_panda_run() {
    let (code, text) = explain(&["--job", "999999"]);
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(text, "job 999999 is not in this run (job ids go from 1 to 5160)\n");
    let (code, text) = explain(&["--task", "999", "--json"]);
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap()["found"], false);
    let (code, text) = explain(&["--job", "1", "--queue", "CERN"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("CERN is not a PanDA queue of this run (its PQs: AGLT2, BNL, BNL_SCORE, MWT2)"), "{text}");

    // A DIRAC run has no brokerage: bad input, said plainly.
    let dirac = std::env::temp_dir().join(format!("pilotsim-cli-explain-dirac-{}", std::process::id()));
    let run = pilotsim().args(["run", "--quiet", "--out"]).arg(&dirac).output().unwrap();
    assert_eq!(run.status.code(), Some(0));
    let out = pilotsim().arg("explain").arg(&dirac).args(["--job", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a PanDA run") && err.contains("no brokerage.parquet"), "{err}");
    let out = pilotsim().args(["explain", "/nonexistent/run", "--job", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/run: no such directory"));
    let out = pilotsim().arg("explain").arg(panda_run_dir()).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "a job, a task or a queue is required");
    let _ = std::fs::remove_dir_all(&dirac);
}
