//! `pilotsim check`: the table of [`pilotsim::sweep::check::check_files`], and its verdict.

use pilotsim::sweep::check::{CheckOptions, FileCheck, Verdict, check_files, scenario_files};

use super::Outcome;
use super::args::CheckArgs;
use super::out::outln;
use super::progress::files_bar;

/// Print one row per scenario and metric as each scenario is done; problems go to stderr.
/// Every check passes: success; one fails: [`Outcome::No`]; an input is invalid or there is
/// none: an error.
pub fn run(args: CheckArgs) -> anyhow::Result<Outcome> {
    let files = scenario_files(&args.paths);
    let opts = CheckOptions {
        replicas: args.replicas,
        baselines: args.baselines,
        update: args.update_baselines,
        sets: args.sets,
    };
    let bar = files_bar(files.len());
    outln!("{:<24} {:<40} {:<22} {:<22} verdict", "scenario", "metric", "expected", "got");
    let tally = check_files(
        &files,
        &opts,
        |f| {
            if let Some(b) = &bar {
                b.set_message(f.display().to_string());
            }
        },
        |_, result| {
            match result {
                FileCheck::Checked { scenario, rows } => {
                    if rows.is_empty() {
                        outln!("{scenario:<24} (no thresholds and no baseline: nothing to check)");
                    }
                    for r in rows {
                        // The baseline's own row (written, or none) is a note, not a check.
                        let verdict = match (r.pass, r.metric == "baseline") {
                            (false, _) => "FAIL",
                            (true, true) => "—",
                            (true, false) => "pass",
                        };
                        outln!("{:<24} {:<40} {:<22} {:<22} {verdict}", r.scenario, r.metric, r.expected, r.got);
                    }
                }
                FileCheck::Invalid(e) => eprintln!("{e:#}"),
            }
            if let Some(b) = &bar {
                b.inc(1);
            }
        },
    );
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    match tally.verdict() {
        Verdict::Pass => Ok(Outcome::Success),
        Verdict::Fail => Ok(Outcome::No),
        Verdict::Invalid => {
            anyhow::bail!("{} of {} scenario file(s) could not be checked", tally.invalid, tally.files)
        }
        Verdict::NoFiles => anyhow::bail!("no scenario files found in {:?}", args.paths),
    }
}
