//! `pilotsim check`: regression checks of scenarios against their `expect` thresholds and
//! their committed baselines, over replicas so that a stochastic comparison does not flap.
//!
//! - A threshold (`"pilot_efficiency >= 0.8"`) holds if the replica **mean** satisfies it.
//! - A baseline (`results/baselines/<scenario>.json`) holds the mean, standard deviation and
//!   count of the [`BASELINE_METRICS`] over the same replicas. A metric passes if
//!   `|mean − baseline| ≤ max(4·√(s_b²/n_b + s²/n), 0.01·|baseline|, floor)` ([`tolerance`]).
//!
//! Why this rule. Replica seeds are derived from the scenario's seed, so an unchanged model
//! reproduces the baseline exactly and any tolerance passes it. What the tolerance is for is a
//! model change: a change that is neutral for the metrics but consumes random numbers
//! differently (one more draw, a reordered loop) turns every replica into an independent new
//! sample, so the two means then differ by a normal variable of standard deviation
//! `√(s_b²/n_b + s²/n)` (the standard error of the difference; same seeds only make it
//! smaller). Four of those keep the false-alarm rate of such a reshuffle below 1e-4 per
//! metric (under 0.5 % over the 58 metrics of the shipped scenarios, less as they correlate).
//! A change of the behaviour larger than the tolerance fails. The shipped scenarios run enough
//! replicas (`expect.replicas`) that this tolerance is below 10 % of every baseline metric
//! (`tests/it/check.rs` measures it): a 10 % change of a key metric fails the check.
//! Two floors keep metrics that barely vary from failing on rounding: 1 % of the baseline
//! (`pilot_efficiency` is 1 ± 0 when no pilot is lost), and for shares and deviations, which
//! are fractions of the grid, 0.002 (0.2 percentage points, [`SHARE_FLOOR`]): a share that is
//! 0 by design (ben in `cpu_first_starvation`, whose threshold states it) or a deviation near
//! 0 has no meaningful 10 % change, and a move of a few thousandths of the grid is not a
//! regression. Its threshold, not the baseline, is what documents a share that is 0 on purpose.
//!
//! [`check_files`] checks many scenario files (see [`scenario_files`]) and gives the
//! [`Verdict`] the command's exit code follows: all pass, a check failed, or an input was
//! invalid.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::{Stat, replica_seed, replicas, stats};
use crate::metrics::write;
use crate::run::{self, Prepared};
use crate::scenario;
use crate::scenario::expect::parse_threshold;

/// Metrics a baseline records. A `*` matches one path segment (an entity or group name).
///
/// - `pilot_efficiency` (used / started pilots), `submission_efficiency` (used / submitted:
///   how many of the pilots sent out ran a job, what `extraPilotFraction` tunes);
/// - `jain_index`, `max_share_deviation`, `entities.*.achieved_share`, `entities.*.deviation`:
///   fairness (shares are time averages over every sample after the warm-up);
/// - `jobs.done`: throughput;
/// - `wait_time_s.*.mean`, `wait_time_s.*.p95`: waiting times per group. The mean, not the
///   median: a group's waits are often bimodal (quickstart's analysis group: alice waits
///   minutes, bob's burst and carol hours), so its median jumps between the modes from one
///   replica to the next (coefficient of variation 0.5 over replicas, against 0.12 for the mean);
/// - PanDA runs: `wms.panda.gshares.*.job_turnaround_s.mean` (job creation → output at the
///   nucleus, per gshare leaf: brokerage, dispatch and the data path together) and, in any run
///   that moves data, `network.transfer_time_s.mean`. DIRAC runs have neither, so their
///   baselines do not change.
pub const BASELINE_METRICS: [&str; 11] = [
    "pilot_efficiency",
    "submission_efficiency",
    "max_share_deviation",
    "jain_index",
    "jobs.done",
    "entities.*.achieved_share",
    "entities.*.deviation",
    "wait_time_s.*.mean",
    "wait_time_s.*.p95",
    "wms.panda.gshares.*.job_turnaround_s.mean",
    "network.transfer_time_s.mean",
];

/// Four standard errors of the difference (see the module doc).
pub const SIGMAS: f64 = 4.0;
/// Relative floor of the tolerance.
pub const RELATIVE_FLOOR: f64 = 0.01;
/// Absolute floor of the tolerance of shares and deviations (fractions of the grid).
pub const SHARE_FLOOR: f64 = 0.002;

/// Whether a metric is a share of the grid (or a deviation from one), whose tolerance has
/// the absolute floor [`SHARE_FLOOR`].
fn is_share(metric: &str) -> bool {
    metric == "max_share_deviation" || metric.ends_with(".achieved_share") || metric.ends_with(".deviation")
}

fn matches(pattern: &str, path: &str) -> bool {
    let (p, q): (Vec<&str>, Vec<&str>) = (pattern.split('.').collect(), path.split('.').collect());
    p.len() == q.len() && p.iter().zip(&q).all(|(a, b)| *a == "*" || a == b)
}

/// A committed baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub scenario: String,
    pub scenario_sha256: String,
    pub pilotsim_version: String,
    pub seeds: Vec<u64>,
    pub metrics: BTreeMap<String, Stat>,
}

/// One row of the check table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub scenario: String,
    pub metric: String,
    pub expected: String,
    pub got: String,
    pub pass: bool,
}

/// The tolerance of a baseline comparison of `metric` (see the module doc).
pub fn tolerance(metric: &str, base: &Stat, new: &Stat) -> f64 {
    let se = (base.std.powi(2) / f64::from(base.n.max(1)) + new.std.powi(2) / f64::from(new.n.max(1))).sqrt();
    let floor = if is_share(metric) { SHARE_FLOOR } else { 0.0 };
    (SIGMAS * se).max(RELATIVE_FLOOR * base.mean.abs()).max(floor) + 1e-9
}

fn show(s: Option<&Stat>) -> String {
    match s {
        None => "missing".into(),
        Some(s) if s.n > 1 => format!("{:.4} ± {:.4}", s.mean, s.std),
        Some(s) => format!("{:.4}", s.mean),
    }
}

/// The baseline path of a scenario.
pub fn baseline_path(dir: &Path, scenario: &str) -> PathBuf {
    dir.join(format!("{scenario}.json"))
}

/// Check one prepared scenario: run its replicas, compare thresholds and the baseline in
/// `baselines` (or rewrite it with `update`). Returns the table rows.
pub fn check(p: &Prepared, replica_count: u32, baselines: &Path, update: bool) -> Result<Vec<Row>> {
    let summaries = replicas(p, replica_count)?;
    let got = stats(&summaries);
    let name = &p.scenario.name;
    // A metric no run has (a typo) is bad input, not a threshold that fails.
    let known: std::collections::BTreeSet<String> = summaries.iter().flat_map(super::names::names).collect();
    let mut rows = Vec::new();
    for (i, t) in p.scenario.expect.thresholds.iter().enumerate() {
        let t = parse_threshold(t).map_err(anyhow::Error::msg)?;
        super::names::known(&t.metric, &known, &format!("{name}: expect.thresholds[{i}]"))
            .map_err(anyhow::Error::msg)?;
        let s = got.get(&t.metric);
        rows.push(Row {
            scenario: name.clone(),
            metric: t.metric.clone(),
            expected: format!("{} {}", t.op.as_str(), t.value),
            got: show(s),
            pass: s.is_some_and(|s| t.op.holds(s.mean, t.value)),
        });
    }
    let path = baseline_path(baselines, name);
    let recorded: BTreeMap<String, Stat> = got
        .iter()
        .filter(|(k, _)| BASELINE_METRICS.iter().any(|p| matches(p, k)))
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    if update {
        let b = Baseline {
            scenario: name.clone(),
            scenario_sha256: p.sha256.clone(),
            pilotsim_version: crate::VERSION.to_string(),
            seeds: (0..replica_count).map(|i| replica_seed(p.scenario.seed, i)).collect(),
            metrics: recorded,
        };
        std::fs::create_dir_all(baselines)?;
        write::atomic(&path, (serde_json::to_string_pretty(&b)? + "\n").as_bytes())?;
        rows.push(Row {
            scenario: name.clone(),
            metric: "baseline".into(),
            expected: "—".into(),
            got: format!("written to {}", path.display()),
            pass: true,
        });
    } else if path.exists() {
        let text = crate::scenario::input::read_text(&path).with_context(|| format!("reading {}", path.display()))?;
        let base: Baseline =
            serde_json::from_str(&text).with_context(|| format!("{}: not a pilotsim baseline", path.display()))?;
        for (metric, b) in &base.metrics {
            let s = got.get(metric);
            let pass = s.is_some_and(|s| (s.mean - b.mean).abs() <= tolerance(metric, b, s));
            let expected = format!("{:.4} ± {:.4}", b.mean, s.map_or(f64::NAN, |s| tolerance(metric, b, s)));
            rows.push(Row { scenario: name.clone(), metric: metric.clone(), expected, got: show(s), pass });
        }
    } else {
        // Said in the table, so that a run against a mistyped --baselines directory (or a
        // scenario never baselined) is not read as a regression check that passed.
        rows.push(Row {
            scenario: name.clone(),
            metric: "baseline".into(),
            expected: "—".into(),
            got: format!("none: no {} (compared with nothing)", path.display()),
            pass: true,
        });
    }
    Ok(rows)
}

/// Scenario files named on the command line, directories expanded to their `*.ron` files
/// (sorted; an unreadable directory gives none).
pub fn scenario_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(p)
                .map(|d| {
                    d.filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|f| f.extension().is_some_and(|x| x == "ron"))
                        .collect()
                })
                .unwrap_or_default();
            files.sort();
            out.extend(files);
        } else {
            out.push(p.clone());
        }
    }
    out
}

/// How [`check_files`] checks each file.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckOptions {
    /// Replicas per scenario (default: the scenario's `expect.replicas`); at least 1.
    pub replicas: Option<u32>,
    /// Where baselines live.
    pub baselines: PathBuf,
    /// Rewrite the baselines instead of comparing.
    pub update: bool,
    /// `--set` assignments applied to every scenario before it runs: a change checked against
    /// the baselines of the scenario as committed.
    pub sets: Vec<String>,
}

/// The result of checking one scenario file.
#[derive(Debug)]
pub enum FileCheck {
    /// The scenario ran; its rows (none if it has no thresholds and no baseline).
    Checked { scenario: String, rows: Vec<Row> },
    /// The file could not be loaded, prepared or checked; the error names the file.
    Invalid(anyhow::Error),
}

/// The overall result of [`check_files`], worst first wins: an invalid input outweighs a
/// failed check, which outweighs a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Every check of every file passed.
    Pass,
    /// At least one row failed.
    Fail,
    /// At least one file could not be checked.
    Invalid,
    /// There was no file to check.
    NoFiles,
}

/// The counts behind a [`Verdict`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub files: usize,
    /// Files that could not be checked.
    pub invalid: usize,
    /// Files with at least one failed row.
    pub failed: usize,
}

impl Tally {
    /// The verdict the exit code follows.
    pub fn verdict(&self) -> Verdict {
        if self.files == 0 {
            Verdict::NoFiles
        } else if self.invalid > 0 {
            Verdict::Invalid
        } else if self.failed > 0 {
            Verdict::Fail
        } else {
            Verdict::Pass
        }
    }
}

/// Check one scenario file with [`check`].
pub fn check_file(file: &Path, opts: &CheckOptions) -> FileCheck {
    let prepared =
        match scenario::load_file(file).map_err(anyhow::Error::from).and_then(|l| run::prepare(&l, &opts.sets)) {
            Ok(p) => p,
            Err(e) => return FileCheck::Invalid(e),
        };
    // Zero replicas would check nothing and pass; the scenario's own count is validated.
    let n = opts.replicas.unwrap_or(prepared.scenario.expect.replicas);
    if n == 0 {
        return FileCheck::Invalid(anyhow::anyhow!("{}: --replicas must be at least 1", file.display()));
    }
    match check(&prepared, n, &opts.baselines, opts.update) {
        Ok(rows) => FileCheck::Checked { scenario: prepared.scenario.name.clone(), rows },
        Err(e) => FileCheck::Invalid(e.context(file.display().to_string())),
    }
}

/// Check every file in order. `before(file)` is called as a file starts, `after(file,
/// result)` when it is done (to show progress and print its rows as they come).
pub fn check_files(
    files: &[PathBuf],
    opts: &CheckOptions,
    mut before: impl FnMut(&Path),
    mut after: impl FnMut(&Path, &FileCheck),
) -> Tally {
    let mut tally = Tally { files: files.len(), ..Tally::default() };
    for f in files {
        before(f);
        let result = check_file(f, opts);
        match &result {
            FileCheck::Checked { rows, .. } => tally.failed += usize::from(rows.iter().any(|r| !r.pass)),
            FileCheck::Invalid(_) => tally.invalid += 1,
        }
        after(f, &result);
    }
    tally
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_one_segment() {
        assert!(matches("entities.*.achieved_share", "entities.lhcb_user.achieved_share"));
        assert!(!matches("entities.*.achieved_share", "entities.lhcb_user/alice.x.achieved_share"));
        assert!(!matches("jobs.done", "jobs.failed"));
    }

    #[test]
    fn tolerance_uses_the_spread_with_a_floor() {
        let b = Stat { mean: 0.5, std: 0.02, n: 5 };
        let n = Stat { mean: 0.5, std: 0.02, n: 5 };
        // 4·√(0.02²/5 + 0.02²/5) = 4·√0.00016 = 0.0506
        assert!((tolerance("jain_index", &b, &n) - 0.050596).abs() < 1e-6);
        let still = Stat { mean: 10.0, std: 0.0, n: 5 };
        assert!((tolerance("jobs.done", &still, &still) - (0.1 + 1e-9)).abs() < 1e-12);
        // A share that is 0 by design gets the absolute floor, a count does not.
        let zero = Stat { mean: 0.0, std: 0.0, n: 64 };
        assert!((tolerance("entities.lhcb_user/ben.achieved_share", &zero, &zero) - SHARE_FLOOR).abs() < 1e-8);
        assert!((tolerance("max_share_deviation", &zero, &zero) - SHARE_FLOOR).abs() < 1e-8);
        assert!(tolerance("jobs.done", &zero, &zero) < 1e-8);
    }

    #[test]
    fn verdicts_and_directories() {
        let tally = |files, invalid, failed| Tally { files, invalid, failed }.verdict();
        assert_eq!(tally(0, 0, 0), Verdict::NoFiles);
        assert_eq!(tally(2, 0, 0), Verdict::Pass);
        assert_eq!(tally(2, 0, 1), Verdict::Fail);
        assert_eq!(tally(2, 1, 1), Verdict::Invalid);
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let files = scenario_files(&[root.join("scenarios"), root.join("x.toml")]);
        assert!(files.contains(&root.join("scenarios/quickstart.ron")), "{files:?}");
        assert!(files[..files.len() - 1].iter().all(|f| f.extension().is_some_and(|x| x == "ron")));
        assert!(files[..files.len() - 1].is_sorted());
        assert_eq!(files.last(), Some(&root.join("x.toml")), "files are kept as given");
    }

    #[test]
    fn an_unloadable_file_is_invalid_and_names_itself() {
        let opts = CheckOptions {
            replicas: Some(1),
            baselines: PathBuf::from("/nonexistent"),
            update: false,
            sets: Vec::new(),
        };
        let files = [PathBuf::from("/nonexistent/x.ron")];
        let mut seen = Vec::new();
        let tally = check_files(
            &files,
            &opts,
            |f| seen.push(f.to_path_buf()),
            |_, r| {
                assert!(matches!(r, FileCheck::Invalid(e) if format!("{e:#}").contains("/nonexistent/x.ron")), "{r:?}");
            },
        );
        assert_eq!(seen, files);
        assert_eq!(tally.verdict(), Verdict::Invalid);
    }
}
