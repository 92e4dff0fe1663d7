//! Tests of the sbatch script, quoting, and submission on a real cluster.
use super::*;

fn job() -> ArrayJob {
    ArrayJob {
        job_name: "pilotsim-quickstart".into(),
        shards: 3,
        pilotsim: "/opt/pilotsim/bin/pilotsim".into(),
        scenario: "/home/me/scenarios/quickstart.ron".into(),
        sweep_args: ["--vary", "dirac.director.extra_pilot_fraction=0,0.5", "--replicas", "2"]
            .map(String::from)
            .to_vec(),
        out_dir: "/scratch/sweep".into(),
        cpus_per_task: 2,
        extra_sbatch: vec!["--partition=debug".into(), "--time=01:00:00".into()],
    }
}

#[test]
fn script_of_a_known_job_line_by_line() {
    let expected = [
        "#!/usr/bin/env bash",
        "#SBATCH --job-name=pilotsim-quickstart",
        "#SBATCH --array=0-2",
        "#SBATCH --cpus-per-task=2",
        "#SBATCH --output=/scratch/sweep/slurm-%A_%a.out",
        "#SBATCH --partition=debug",
        "#SBATCH --time=01:00:00",
        "# Written by `pilotsim sweep --slurm`: array task I runs shard I of the sweep into",
        "# OUT/shard-I (OUT is the --out directory below); when every task has finished,",
        "# `pilotsim merge --out MERGED OUT/shard-*` gives the outputs of the unsharded sweep.",
        "set -euo pipefail",
        "/opt/pilotsim/bin/pilotsim sweep /home/me/scenarios/quickstart.ron \
         --vary dirac.director.extra_pilot_fraction=0,0.5 --replicas 2 \\",
        "    --threads \"${SLURM_CPUS_PER_TASK:-2}\" --shard \"${SLURM_ARRAY_TASK_ID}/3\" \\",
        "    --out /scratch/sweep/shard-\"${SLURM_ARRAY_TASK_ID}\" --quiet",
    ];
    let script = sbatch_script(&job());
    assert_eq!(script.lines().collect::<Vec<_>>(), expected);
    assert!(script.ends_with('\n'));
    assert_eq!(script, sbatch_script(&job()), "deterministic");
    job().validate().unwrap();
}

#[test]
fn script_quotes_awkward_paths_and_arguments() {
    let mut j = job();
    j.shards = 1;
    j.job_name = "pilotsim-my scenario".into();
    j.out_dir = "/tmp/it's 100% \"$HOME\"/".into();
    j.pilotsim = "/opt/pilot sim/pilotsim".into();
    j.sweep_args = vec!["--set".into(), "name=a b$c".into()];
    j.extra_sbatch = vec!["--comment=x #y".into()];
    let script = sbatch_script(&j);
    let lines: Vec<&str> = script.lines().collect();
    assert_eq!(lines[1], "#SBATCH \"--job-name=pilotsim-my scenario\"");
    assert_eq!(lines[2], "#SBATCH --array=0-0");
    assert_eq!(lines[4], r#"#SBATCH "--output=/tmp/it's 100%% \"$HOME\"/slurm-%A_%a.out""#);
    assert_eq!(lines[5], "#SBATCH \"--comment=x #y\"");
    assert_eq!(lines[10], r#"'/opt/pilot sim/pilotsim' sweep /home/me/scenarios/quickstart.ron --set 'name=a b$c' \"#);
    assert_eq!(lines[12], r#"    --out '/tmp/it'\''s 100% "$HOME"'/shard-"${SLURM_ARRAY_TASK_ID}" --quiet"#);
    bash_syntax_ok(&script);
}

/// `bash -n` accepts the script (skipped where there is no bash).
fn bash_syntax_ok(script: &str) {
    match Command::new("bash").args(["-n", "-c", script]).output() {
        Ok(out) => assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => eprintln!("bash not available ({e}); syntax not checked"),
    }
}

#[test]
fn shell_quote_cases() {
    assert_eq!(shell_quote("plain-1.0,x=y/z:w@%+_"), "plain-1.0,x=y/z:w@%+_");
    assert_eq!(shell_quote(""), "''");
    assert_eq!(shell_quote("a b"), "'a b'");
    assert_eq!(shell_quote("it's"), r"'it'\''s'");
    assert_eq!(shell_quote("$HOME"), "'$HOME'");
    assert_eq!(shell_quote("\"q\""), "'\"q\"'");
    assert_eq!(shell_quote("~"), "'~'");
}

#[test]
fn shell_quote_round_trips_through_bash() {
    let words = [
        "",
        "plain",
        "with space",
        "it's",
        "''",
        "\"double\"",
        "$HOME ${X:-y} $(echo no) `echo no`",
        "back\\slash\\",
        "!bang *glob? [x] {a,b} ~user",
        "tab\tnew\nline",
        "semi;colon&amp|pipe>out<in",
        "#not a comment",
        "ünïcödé ✓",
    ];
    let quoted: Vec<String> = words.iter().map(|w| shell_quote(w)).collect();
    let script = format!("printf '%s\\0' {}", quoted.join(" "));
    let out = match Command::new("bash").args(["-c", &script]).output() {
        Ok(out) => out,
        Err(e) => return eprintln!("bash not available ({e}); skipped"),
    };
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: Vec<String> = out.stdout.split(|&b| b == 0).map(|w| String::from_utf8(w.to_vec()).unwrap()).collect();
    assert_eq!(got[..words.len()], words.map(String::from));
    assert_eq!(got.len(), words.len() + 1, "one NUL per word");
}

#[test]
fn sbatch_quote_cases() {
    assert_eq!(sbatch_quote("--time=01:00:00"), "--time=01:00:00");
    assert_eq!(sbatch_quote(":x"), "\":x\"");
    assert_eq!(sbatch_quote(""), "\"\"");
    assert_eq!(sbatch_quote("a b"), "\"a b\"");
    assert_eq!(sbatch_quote("it's $x #y"), "\"it's $x #y\"");
    assert_eq!(sbatch_quote(r#"a\b"c"#), r#""a\\b\"c""#);
    assert_eq!(sbatch_quote("a\nb"), "\"a b\"");
}

#[test]
fn validate_rejects_what_a_script_cannot_carry() {
    let mut j = job();
    j.shards = 0;
    assert!(j.validate().unwrap_err().to_string().contains("at least one shard"));
    let mut j = job();
    j.out_dir = "relative/out".into();
    assert!(j.validate().unwrap_err().to_string().contains("must be absolute"));
    let mut j = job();
    j.extra_sbatch.push("--comment=a\nrm -rf /".into());
    assert!(j.validate().unwrap_err().to_string().contains("line break"));
    assert!(!sbatch_script(&j).contains("\nrm -rf"), "never a line of its own");
    let mut j = job();
    j.cpus_per_task = 0;
    assert!(j.validate().is_err());
}

#[test]
fn squeue_lines_and_log_names() {
    let text = "11_3|11|11|3|COMPLETED|0|/tmp/q t/a%%b/slurm-%A_%a.out|\n\
                11_2|14|11|2|FAILED|768|/tmp/x|y/%j.out|\n\
                15_[0-3]|15|15|0-3|PENDING|0|/o/slurm-%A_%a.out|\n";
    let r = parse_squeue(text);
    assert_eq!(r.len(), 3);
    assert_eq!(r[0].key, "11_3");
    assert_eq!(log_path(&r[0]), "/tmp/q t/a%b/slurm-11_3.out");
    assert_eq!(r[1].stdout, "/tmp/x|y/%j.out");
    assert_eq!(log_path(&r[1]), "/tmp/x|y/14.out");
    assert_eq!(describe_status(r[1].status), "exit code 3");
    assert_eq!(describe_status(9), "signal 9");
    assert_eq!(r[2].task, "0-3");
    assert!(!is_final(&r[2].state) && is_final(&r[1].state));
}

// ---- On a real cluster (see shared/reference/slurm-local.md, .ci/slurm-up.sh). ----

/// A stand-in for the pilotsim binary, at a path with a space, a quote and a `$`, that
/// records its arguments (NUL-separated) in the shard directory it is given and fails
/// for the shard listed in `FAIL_SHARD` (a file next to it).
fn fake_pilotsim(root: &Path) -> PathBuf {
    let dir = root.join("bin dir's $X");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pilotsim");
    let script = r#"#!/usr/bin/env bash
set -euo pipefail
out=
prev=
for a in "$@"; do
if [ "$prev" = --out ]; then out=$a; fi
prev=$a
done
mkdir -p "$out"
printf '%s\0' "$@" > "$out/args"
echo "fake pilotsim task ${SLURM_ARRAY_TASK_ID} of ${SLURM_ARRAY_TASK_COUNT}"
fail=$(cat "$(dirname "$0")/FAIL_SHARD" 2>/dev/null || true)
if [ "$fail" = "$SLURM_ARRAY_TASK_ID" ]; then echo "boom in task $fail" >&2; exit 3; fi
"#;
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn cluster_job(root: &Path, name: &str, fail: Option<u32>) -> ArrayJob {
    let pilotsim = fake_pilotsim(root);
    let fail_file = pilotsim.parent().unwrap().join("FAIL_SHARD");
    match fail {
        Some(i) => std::fs::write(fail_file, i.to_string()).unwrap(),
        None => {
            let _ = std::fs::remove_file(fail_file);
        }
    }
    let out_dir = root.join(format!("{name} 100% \"out\" $HOME"));
    std::fs::create_dir_all(&out_dir).unwrap();
    ArrayJob {
        job_name: format!("pilotsim-unit {name}"),
        shards: 3,
        pilotsim,
        scenario: root.join("it's a scenario.ron"),
        sweep_args: vec!["--vary".into(), "x=0,0.5".into(), "--set".into(), "name=a b$c'd".into()],
        out_dir,
        cpus_per_task: 1,
        extra_sbatch: vec!["--comment=unit test #1".into()],
    }
}

fn run_on_cluster(job: &ArrayJob) -> (String, Result<()>) {
    job.validate().unwrap();
    let script = job.out_dir.join("sweep.sbatch");
    std::fs::write(&script, sbatch_script(job)).unwrap();
    let id = submit(&script).unwrap();
    let result = wait(&id, Duration::from_secs(120));
    if result.as_ref().is_err_and(|e| e.to_string().contains("has not finished")) {
        let _ = cancel(&id);
    }
    (id, result)
}

fn root(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("pilotsim-slurm-unit-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    root
}

#[test]
fn array_runs_every_shard_with_exact_arguments() {
    if !cluster_for_test("array_runs_every_shard_with_exact_arguments") {
        return;
    }
    let root = root("ok");
    let job = cluster_job(&root, "ok", None);
    let (id, result) = run_on_cluster(&job);
    result.unwrap();
    for i in 0..job.shards {
        let shard = job.out_dir.join(format!("shard-{i}"));
        let args = std::fs::read(shard.join("args")).unwrap();
        let args: Vec<String> =
            args.split(|&b| b == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8(a.to_vec()).unwrap()).collect();
        let mut expected = vec!["sweep".to_string(), job.scenario.to_str().unwrap().to_string()];
        expected.extend(job.sweep_args.iter().cloned());
        expected.extend(["--threads", "1", "--shard", &format!("{i}/3"), "--out"].map(String::from));
        expected.extend([shard.to_str().unwrap().to_string(), "--quiet".to_string()]);
        assert_eq!(args, expected);
        let log = std::fs::read_to_string(job.out_dir.join(format!("slurm-{id}_{i}.out"))).unwrap();
        assert_eq!(log, format!("fake pilotsim task {i} of 3\n"));
    }
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn wait_reports_a_failed_task_with_its_log() {
    if !cluster_for_test("wait_reports_a_failed_task_with_its_log") {
        return;
    }
    let root = root("fail");
    let job = cluster_job(&root, "fail", Some(1));
    let (id, result) = run_on_cluster(&job);
    let err = result.unwrap_err().to_string();
    assert!(err.contains(&format!("Slurm job {id}: 1 of 3 array task(s) failed")), "{err}");
    assert!(err.contains("task 1 FAILED (exit code 3)"), "{err}");
    assert!(err.contains(&format!("slurm-{id}_1.out")) && err.contains("| boom in task 1"), "{err}");
    assert!(wait("999999", Duration::from_secs(5)).unwrap_err().to_string().contains("does not know job"));
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn submit_reports_sbatch_refusals() {
    if !cluster_for_test("submit_reports_sbatch_refusals") {
        return;
    }
    let root = root("refused");
    let script = root.join("bad.sbatch");
    std::fs::write(&script, "#!/usr/bin/env bash\n#SBATCH --array=0--1\ntrue\n").unwrap();
    let err = submit(&script).unwrap_err().to_string();
    assert!(err.contains("sbatch --parsable") && err.contains("array"), "{err}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn array_job_of_a_sweep_carries_its_arguments() {
    let loaded = crate::scenario::quickstart();
    let vary = vec![super::super::plan::parse_vary("dirac.director.extra_pilot_fraction=0,0.5").unwrap()];
    let opts = SweepOptions { replicas: 2, threads: Some(3), shard: None, sets: vec!["seed=7".into()] };
    let slurm = SlurmSweep { shards: 4, extra_sbatch: vec!["--time=00:10:00".into()], submit: false };
    let job =
        array_job(Path::new("scenarios/quickstart.ron"), &loaded, &vary, &opts, Path::new("out"), &slurm).unwrap();
    assert_eq!(job.job_name, "pilotsim-quickstart");
    assert_eq!(job.sweep_args, ["--vary=dirac.director.extra_pilot_fraction=0,0.5", "--replicas=2", "--set=seed=7"]);
    assert_eq!((job.shards, job.cpus_per_task), (4, 3));
    assert!(job.scenario.is_absolute() && job.out_dir.is_absolute() && job.out_dir.ends_with("out"));
    assert_eq!(job.extra_sbatch, ["--time=00:10:00"]);
    let none = SlurmSweep { shards: 0, ..slurm };
    assert!(array_job(Path::new("s.ron"), &loaded, &vary, &opts, Path::new("out"), &none).is_err());
}
