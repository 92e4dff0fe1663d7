//! Slurm job arrays for sweeps: `pilotsim sweep ... --slurm` writes an sbatch script whose
//! array task `I` runs shard `I/N` of the sweep into `<out>/shard-I` and submits it;
//! `pilotsim merge` then combines the shards into the outputs of the unsharded sweep, byte
//! for byte ([`sweep_array`] does what `--slurm` asks for). [`wait`] and [`cancel`] serve
//! the tests that run arrays on a real cluster.
//!
//! Everything here was checked against a real single-node Slurm 22.05 cluster (Debian's
//! slurm-wlm, no accounting database) set up as `shared/reference/slurm-local.md` describes
//! (`.ci/slurm-up.sh` / `.ci/slurm-down.sh`). Facts this module relies on, from that
//! reference and from the checks:
//! - `sbatch --parsable` prints `JOBID` or `JOBID;CLUSTER`;
//! - without accounting, `sacct` does not work (and `sacct -c` misparses job names with
//!   spaces), but `squeue -t all` still lists finished array tasks, with their state and
//!   exit status, for `MinJobAge` (300 s by default) after they end;
//! - `#SBATCH` lines are not parsed by the shell but by sbatch, with its own quoting rules
//!   (see [`sbatch_quote`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};

use super::plan::Vary;
use super::{SweepOptions, prepare_sweep};
use crate::scenario::Loaded;

/// A sweep to run as a Slurm job array, one array task per shard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayJob {
    /// Slurm job name, e.g. `pilotsim-<scenario>`.
    pub job_name: String,
    /// Number of shards; the array is `0..shards-1` and task `I` runs shard `I/shards`.
    pub shards: u32,
    /// Absolute path of the pilotsim binary the tasks run (`std::env::current_exe()`).
    pub pilotsim: PathBuf,
    /// Absolute path of the scenario file.
    pub scenario: PathBuf,
    /// The sweep's own arguments (`--vary`, `--replicas`, `--set`, ...), one per element,
    /// repeated verbatim for every task.
    pub sweep_args: Vec<String>,
    /// Absolute output directory: task `I` writes to `out_dir/shard-I`, Slurm writes the
    /// tasks' logs to `out_dir/slurm-<job>_<task>.out`.
    pub out_dir: PathBuf,
    /// CPUs per task, passed on as the task's `--threads` (default 1).
    pub cpus_per_task: u32,
    /// Extra sbatch arguments (the user's `--slurm-arg` values), one `#SBATCH` line each,
    /// after ours so that they can override them (sbatch keeps the last value; an extra
    /// `--cpus-per-task=8` also gives the tasks `--threads 8`). Each value is one argument,
    /// as on sbatch's command line: `--partition=debug`, `--time=02:00:00`.
    pub extra_sbatch: Vec<String>,
}

impl ArrayJob {
    /// Check what [`sbatch_script`] cannot express: at least one shard and one CPU, absolute
    /// UTF-8 paths, and no line breaks or NUL in any value (an `#SBATCH` line cannot hold a
    /// line break, and a NUL cannot be passed as an argument).
    pub fn validate(&self) -> Result<()> {
        if self.shards == 0 {
            bail!("a Slurm job array needs at least one shard");
        }
        if self.cpus_per_task == 0 {
            bail!("a Slurm array task needs at least one CPU");
        }
        for (what, path) in
            [("pilotsim binary", &self.pilotsim), ("scenario", &self.scenario), ("output", &self.out_dir)]
        {
            let Some(text) = path.to_str() else { bail!("the {what} path {} is not UTF-8", path.display()) };
            if !path.is_absolute() {
                bail!("the {what} path {text} must be absolute (the Slurm tasks may start in another directory)");
            }
            reject_breaks(what, text)?;
        }
        reject_breaks("job name", &self.job_name)?;
        for a in &self.sweep_args {
            reject_breaks("sweep argument", a)?;
        }
        for a in &self.extra_sbatch {
            reject_breaks("sbatch argument", a)?;
        }
        Ok(())
    }
}

fn reject_breaks(what: &str, text: &str) -> Result<()> {
    if text.contains(['\n', '\r', '\0']) {
        bail!("the {what} {text:?} contains a line break or NUL, which a Slurm batch script cannot carry");
    }
    Ok(())
}

/// The sbatch script of `job`: bash with `set -euo pipefail`, the `#SBATCH` directives
/// (`--job-name`, `--array=0-(N-1)`, `--cpus-per-task`, `--output=<out_dir>/slurm-%A_%a.out`,
/// then the extra ones), and one command per task:
///
/// ```text
/// <pilotsim> sweep <scenario> <sweep_args...> --threads "${SLURM_CPUS_PER_TASK:-C}" \
///     --shard "${SLURM_ARRAY_TASK_ID}/N" --out <out_dir>/shard-"${SLURM_ARRAY_TASK_ID}" --quiet
/// ```
///
/// The text depends on `job` only (deterministic, no date or host). Every value is quoted:
/// for bash in the command ([`shell_quote`]), for sbatch in the directives ([`sbatch_quote`],
/// with `%` doubled in the `--output` directory since Slurm expands `%` patterns there).
/// Call [`ArrayJob::validate`] first: an invalid job gives a script sbatch rejects (no
/// shards) or with line breaks turned into spaces in its directives. A backslash in
/// `out_dir` turns off Slurm's `%A`/`%a` expansion in the log names (a Slurm rule), so the
/// tasks then share one log file.
pub fn sbatch_script(job: &ArrayJob) -> String {
    let out_dir = job.out_dir.to_string_lossy();
    let out_dir = out_dir.trim_end_matches('/');
    let mut s = String::from("#!/usr/bin/env bash\n");
    let mut directive = |arg: &str| {
        let _ = writeln!(s, "#SBATCH {}", sbatch_quote(arg));
    };
    directive(&format!("--job-name={}", job.job_name));
    directive(&format!("--array=0-{}", i64::from(job.shards) - 1));
    directive(&format!("--cpus-per-task={}", job.cpus_per_task));
    directive(&format!("--output={}/slurm-%A_%a.out", out_dir.replace('%', "%%")));
    for a in &job.extra_sbatch {
        directive(a);
    }
    s.push_str(
        "# Written by `pilotsim sweep --slurm`: array task I runs shard I of the sweep into\n\
         # OUT/shard-I (OUT is the --out directory below); when every task has finished,\n\
         # `pilotsim merge --out MERGED OUT/shard-*` gives the outputs of the unsharded sweep.\n\
         set -euo pipefail\n",
    );
    let mut cmd = vec![shell_quote(&job.pilotsim.to_string_lossy()), "sweep".into()];
    cmd.push(shell_quote(&job.scenario.to_string_lossy()));
    cmd.extend(job.sweep_args.iter().map(|a| shell_quote(a)));
    let _ = writeln!(s, "{} \\", cmd.join(" "));
    let _ = writeln!(
        s,
        "    --threads \"${{SLURM_CPUS_PER_TASK:-{}}}\" --shard \"${{SLURM_ARRAY_TASK_ID}}/{}\" \\",
        job.cpus_per_task, job.shards
    );
    let _ = writeln!(s, "    --out {}/shard-\"${{SLURM_ARRAY_TASK_ID}}\" --quiet", shell_quote(out_dir));
    s
}

/// What `pilotsim sweep --slurm` asks for, besides the sweep itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmSweep {
    /// Array tasks, one shard each (`--shards`).
    pub shards: u32,
    /// Extra sbatch arguments (`--slurm-arg`), see [`ArrayJob::extra_sbatch`].
    pub extra_sbatch: Vec<String>,
    /// Submit the script; false only writes it (`--dry-run`).
    pub submit: bool,
}

/// What [`sweep_array`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Submission {
    /// The script was written, not submitted.
    Written { script: PathBuf },
    /// The script was submitted as job array `job_id`; `next_step` tells the user how to
    /// merge the shards when the array is done.
    Submitted { script: PathBuf, job_id: String, next_step: String },
}

/// The job array of a sweep of `scenario_path` into `out`: the tasks run this executable
/// with the sweep's `--vary`, `--replicas` and `--set` arguments, `--threads` from
/// `opts.threads` (as the CPUs per task, default 1). Checked with [`ArrayJob::validate`].
pub fn array_job(
    scenario_path: &Path,
    loaded: &Loaded,
    vary: &[Vary],
    opts: &SweepOptions,
    out: &Path,
    slurm: &SlurmSweep,
) -> Result<ArrayJob> {
    let mut sweep_args = Vec::new();
    for v in vary {
        sweep_args.push(format!("--vary={}={}", v.path, v.spec));
    }
    sweep_args.push(format!("--replicas={}", opts.replicas));
    for s in &opts.sets {
        sweep_args.push(format!("--set={s}"));
    }
    let job = ArrayJob {
        job_name: format!("pilotsim-{}", loaded.scenario.name),
        shards: slurm.shards,
        pilotsim: std::env::current_exe()?,
        scenario: std::path::absolute(scenario_path)?,
        sweep_args,
        out_dir: std::path::absolute(out)?,
        cpus_per_task: u32::try_from(opts.threads.unwrap_or(1)).unwrap_or(u32::MAX),
        extra_sbatch: slurm.extra_sbatch.clone(),
    };
    job.validate()?;
    Ok(job)
}

/// `sweep --slurm`: check the sweep now (a bad `--vary` or `--set` fails here, not in every
/// array task), write its [`array_job`] script to `out/sweep.sbatch` and submit it, unless
/// `slurm.submit` is false.
pub fn sweep_array(
    scenario_path: &Path,
    loaded: &Loaded,
    vary: Vec<Vary>,
    opts: &SweepOptions,
    out: &Path,
    slurm: &SlurmSweep,
) -> Result<Submission> {
    prepare_sweep(loaded, vary.clone(), opts)?;
    std::fs::create_dir_all(out)?;
    let job = array_job(scenario_path, loaded, &vary, opts, out, slurm)?;
    let script = out.join("sweep.sbatch");
    crate::metrics::write::atomic(&script, sbatch_script(&job).as_bytes())?;
    if !slurm.submit {
        return Ok(Submission::Written { script });
    }
    let job_id = submit(&script)?;
    let q = |p: &Path| shell_quote(&p.display().to_string());
    let next_step = format!(
        "submitted job array {job_id} ({} tasks); when it is done: pilotsim merge --out {} {}/shard-*",
        job.shards,
        q(&out.join("merged")),
        q(out)
    );
    Ok(Submission::Submitted { script, job_id, next_step })
}

/// Characters that need no quoting, for bash and for sbatch alike.
fn is_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c)
}

/// `text` as one bash word: unchanged when it is only letters, digits and `_@%+=:,./-`,
/// otherwise in single quotes, where bash expands nothing (`$`, `` ` ``, `\`, `!`, spaces and
/// double quotes are literal), with each `'` written `'\''`. The empty string is `''`.
pub fn shell_quote(text: &str) -> String {
    if !text.is_empty() && text.chars().all(is_plain) {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// `text` as one argument of an `#SBATCH` line. sbatch splits these lines itself: quotes
/// (`"` or `'`) group characters including spaces, a backslash escapes the next character
/// but cannot escape a space outside quotes (sbatch 22.05 then stops the argument and
/// rejects the rest as "Invalid directive"), an unquoted `#` starts a comment and a leading
/// `:` is an error. So a value with anything but letters, digits and `_@%+=:,./-` (or
/// starting with `:`) is written in double quotes with `\` and `"` escaped by a backslash;
/// `$` and `'` are literal. A line break cannot be written at all; it becomes a space
/// (see [`ArrayJob::validate`]). Checked with sbatch 22.05 (shared/reference/slurm-local.md).
pub fn sbatch_quote(text: &str) -> String {
    if !text.is_empty() && !text.starts_with(':') && text.chars().all(is_plain) {
        return text.to_string();
    }
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '\\' | '"' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' | '\0' => out.push(' '),
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Submit a batch script with `sbatch --parsable SCRIPT` and return the job id (what sbatch
/// prints before any `;CLUSTER`). sbatch runs in the script's directory, so that is where
/// the tasks start. Errors say when sbatch is missing (with how to get a local test cluster)
/// and include sbatch's own message when it refuses the script.
pub fn submit(script: &Path) -> Result<String> {
    let script = std::path::absolute(script).with_context(|| format!("locating {}", script.display()))?;
    let dir = script.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("/"));
    let out = Command::new("sbatch")
        .arg("--parsable")
        .arg(&script)
        .current_dir(dir)
        .output()
        .map_err(|e| missing_tool("sbatch", e))?;
    if !out.status.success() {
        bail!(
            "sbatch --parsable {} failed ({}): {}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let id = stdout.lines().next().unwrap_or("").split(';').next().unwrap_or("").trim();
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        bail!("sbatch --parsable {} printed no job id: {:?}", script.display(), stdout.trim());
    }
    Ok(id.to_string())
}

/// Cancel a job (all tasks of an array) with `scancel JOB_ID`.
pub fn cancel(job_id: &str) -> Result<()> {
    let out = Command::new("scancel").arg(job_id).output().map_err(|e| missing_tool("scancel", e))?;
    if !out.status.success() {
        bail!("scancel {job_id} failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}

fn missing_tool(tool: &str, e: std::io::Error) -> anyhow::Error {
    if e.kind() == std::io::ErrorKind::NotFound {
        anyhow!(
            "{tool} not found on PATH: Slurm's client commands are needed (for a local test cluster \
             on Debian run .ci/slurm-up.sh as root)"
        )
    } else {
        anyhow!("could not run {tool}: {e}")
    }
}

/// How often [`wait`] asks Slurm; tasks start in waves of about 1 s anyway.
const POLL: Duration = Duration::from_millis(200);
/// Consecutive failed `squeue` calls [`wait`] tolerates (a busy controller can time out).
const SQUEUE_RETRIES: u32 = 25;
/// Lines of a failed task's log quoted in [`wait`]'s error.
const LOG_TAIL: usize = 20;

/// One line of `squeue -t all -O` about a job or array task.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    /// `JOBID_TASK` (or `JOBID_[0-3]` for tasks not started yet, `JOBID` for a plain job).
    key: String,
    /// The task's own job id (for `%j`).
    job_id: String,
    array_job_id: String,
    /// Task index, or a range for tasks not started yet.
    task: String,
    state: String,
    /// Raw wait status (exit code × 256, or the signal).
    status: i64,
    /// Log file pattern (`%A`, `%a`, ... unexpanded).
    stdout: String,
}

/// The `squeue -O` fields [`Record`] is read from, `|`-terminated, no padding; `STDOUT`
/// last since a path may contain `|`.
const SQUEUE_FORMAT: &str = "JobArrayID:|,JobID:|,ArrayJobID:|,ArrayTaskID:|,State:|,exit_code:|,STDOUT:|";

fn parse_squeue(text: &str) -> Vec<Record> {
    text.lines()
        .filter_map(|line| {
            let line = line.strip_suffix('|').unwrap_or(line);
            let f: Vec<&str> = line.splitn(7, '|').collect();
            let [key, job_id, array_job_id, task, state, status, stdout] = f[..] else { return None };
            Some(Record {
                key: key.trim().to_string(),
                job_id: job_id.trim().to_string(),
                array_job_id: array_job_id.trim().to_string(),
                task: task.trim().to_string(),
                state: state.trim().to_string(),
                status: status.trim().parse().unwrap_or(0),
                stdout: stdout.to_string(),
            })
        })
        .collect()
}

/// Final job states (Slurm's `JOB_*` base states once a job has ended).
const FINAL: [&str; 11] = [
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PREEMPTED",
    "BOOT_FAIL",
    "DEADLINE",
    "REVOKED",
    "SPECIAL_EXIT",
];

fn is_final(state: &str) -> bool {
    FINAL.contains(&state)
}

/// Wait until every task of job `job_id` has ended, then fail unless all completed with
/// exit code 0. Polls `squeue -h -j ID -t all` every 0.2 s (`sbatch --wait` polls every
/// 10 s); `-t all` also lists the tasks that have ended, with their state and exit status,
/// which is how failures are seen without an accounting database (`sacct` is not available
/// on the reference cluster, shared/reference/slurm-local.md). Tasks are remembered once
/// they have ended, so a task Slurm forgets (after `MinJobAge`) while others still run is
/// still checked. The error names each failed task with its state, exit code, log file and
/// the last lines of that log. On timeout the job is left running (see [`cancel`]).
pub fn wait(job_id: &str, timeout: Duration) -> Result<()> {
    let start = Instant::now();
    let mut ended: BTreeMap<String, Record> = BTreeMap::new();
    let mut failures = 0;
    loop {
        let out = Command::new("squeue")
            .args(["-h", "-j", job_id, "-t", "all", "-O", SQUEUE_FORMAT])
            .output()
            .map_err(|e| missing_tool("squeue", e))?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        let running: Vec<Record> = if out.status.success() {
            failures = 0;
            let records = parse_squeue(&String::from_utf8_lossy(&out.stdout));
            let (done, running): (Vec<Record>, Vec<Record>) = records.into_iter().partition(|r| is_final(&r.state));
            for r in done {
                ended.insert(r.key.clone(), r);
            }
            running
        } else if stderr.contains("Invalid job id") {
            // Slurm has forgotten the job: it ended more than MinJobAge ago, or never existed.
            if ended.is_empty() {
                bail!("Slurm does not know job {job_id}: {}", stderr.trim());
            }
            Vec::new()
        } else {
            failures += 1;
            if failures > SQUEUE_RETRIES {
                bail!("squeue -j {job_id} failed {failures} times in a row ({}): {}", out.status, stderr.trim());
            }
            vec![]
        };
        if failures == 0 && running.is_empty() {
            if ended.is_empty() {
                bail!("Slurm lists no task of job {job_id}");
            }
            return check_ended(job_id, &ended);
        }
        if start.elapsed() >= timeout {
            let mut states: BTreeMap<&str, usize> = BTreeMap::new();
            for r in &running {
                *states.entry(r.state.as_str()).or_default() += 1;
            }
            let states: Vec<String> = states.iter().map(|(s, n)| format!("{n} {s}")).collect();
            bail!(
                "Slurm job {job_id} has not finished after {:.0} s ({} still {}, {} ended); \
                 it is still queued or running: `scancel {job_id}` stops it",
                timeout.as_secs_f64(),
                running.len(),
                if states.is_empty() { "unknown (squeue failing)".to_string() } else { states.join(", ") },
                ended.len()
            );
        }
        std::thread::sleep(POLL);
    }
}

/// Ok if every ended task completed with exit code 0, else an error describing the others.
fn check_ended(job_id: &str, ended: &BTreeMap<String, Record>) -> Result<()> {
    let mut bad: Vec<&Record> = ended.values().filter(|r| r.state != "COMPLETED" || r.status != 0).collect();
    if bad.is_empty() {
        return Ok(());
    }
    bad.sort_by_key(|r| (r.task.parse::<u64>().unwrap_or(u64::MAX), r.task.clone()));
    let mut msg = format!("Slurm job {job_id}: {} of {} array task(s) failed", bad.len(), ended.len());
    for r in bad {
        let log = log_path(r);
        let _ = write!(msg, "\n- task {} {} ({}), log {}", r.task, r.state, describe_status(r.status), log);
        match std::fs::read_to_string(&log) {
            Ok(text) => {
                let lines: Vec<&str> = text.lines().collect();
                for l in &lines[lines.len().saturating_sub(LOG_TAIL)..] {
                    let _ = write!(msg, "\n    | {l}");
                }
            }
            Err(e) => {
                let _ = write!(msg, " (not readable: {e})");
            }
        }
    }
    Err(anyhow!(msg))
}

/// A raw wait status as "exit code N" or "signal N".
fn describe_status(status: i64) -> String {
    match status & 0x7f {
        0 => format!("exit code {}", (status >> 8) & 0xff),
        sig => format!("signal {sig}"),
    }
}

/// The task's log file: Slurm's `%%`, `%A`, `%a`, `%j` expanded in its `--output` pattern
/// (no expansion when the pattern holds a backslash, as in Slurm).
fn log_path(r: &Record) -> String {
    if r.stdout.contains('\\') {
        return r.stdout.clone();
    }
    let mut out = String::new();
    let mut chars = r.stdout.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some('A') => out.push_str(&r.array_job_id),
            Some('a') => out.push_str(&r.task),
            Some('j') => out.push_str(&r.job_id),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// Why no Slurm cluster is usable here, if it is not: `sbatch` missing from PATH, or no
/// controller answering `sinfo`.
pub fn cluster_problem() -> Option<String> {
    if let Err(e) = Command::new("sbatch").arg("--version").output() {
        return Some(format!("sbatch is not on PATH ({e})"));
    }
    match Command::new("sinfo").arg("-h").output() {
        Err(e) => Some(format!("sinfo is not on PATH ({e})")),
        Ok(out) if !out.status.success() => {
            Some(format!("no Slurm controller answers: {}", String::from_utf8_lossy(&out.stderr).trim()))
        }
        Ok(_) => None,
    }
}

/// For the test suites: true if a cluster is usable; otherwise prints why `test` is skipped
/// and returns false, or panics when `PILOTSIM_REQUIRE_SLURM=1` (as `.ci/run` sets), so that
/// CI cannot pass without running the cluster tests.
pub fn cluster_for_test(test: &str) -> bool {
    let Some(problem) = cluster_problem() else { return true };
    let required = std::env::var("PILOTSIM_REQUIRE_SLURM").is_ok_and(|v| v == "1");
    assert!(!required, "PILOTSIM_REQUIRE_SLURM=1 but {problem}; start a cluster with .ci/slurm-up.sh");
    eprintln!("{test}: skipped, {problem} (PILOTSIM_REQUIRE_SLURM=1 makes this a failure)");
    false
}

#[cfg(test)]
mod tests;
