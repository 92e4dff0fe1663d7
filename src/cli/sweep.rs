//! `pilotsim sweep` (locally, or as a Slurm job array) and `pilotsim merge`.

use std::path::PathBuf;

use pilotsim::scenario;
use pilotsim::sweep::slurm::{SlurmSweep, Submission, sweep_array};
use pilotsim::sweep::{self, SweepOptions, plan};

use super::Outcome;
use super::args::{MergeArgs, SweepArgs};
use super::out::{out, outln};
use super::progress::{runs_bar, show_runs};

/// Run the sweep's runs (or this shard's) with a progress bar, then say what was written;
/// with `--slurm`, write (and submit) the job array instead.
pub fn run(args: SweepArgs) -> anyhow::Result<Outcome> {
    let loaded = scenario::load_file(&args.scenario)?;
    let vary = args.vary.iter().map(|v| plan::parse_vary(v)).collect::<anyhow::Result<Vec<_>>>()?;
    let shard = args.shard.as_deref().map(plan::parse_shard).transpose()?;
    let out = args.out.unwrap_or_else(|| PathBuf::from("results").join(format!("{}-sweep", loaded.scenario.name)));
    let opts = SweepOptions { replicas: args.replicas, threads: args.threads, shard, sets: args.sets };
    if args.slurm.slurm {
        if opts.shard.is_some() {
            anyhow::bail!("--shard and --slurm do not combine: --slurm makes the shards itself (--shards N)");
        }
        let slurm =
            SlurmSweep { shards: args.slurm.shards, extra_sbatch: args.slurm.slurm_args, submit: !args.slurm.dry_run };
        match sweep_array(&args.scenario, &loaded, vary, &opts, &out, &slurm)? {
            Submission::Written { script } => outln!("wrote {} (not submitted)", script.display()),
            Submission::Submitted { job_id, next_step, .. } => {
                // The bare id on stdout (id=$(pilotsim sweep … --slurm)); the next step on stderr.
                outln!("{job_id}");
                eprintln!("{next_step}");
            }
        }
        return Ok(Outcome::Success);
    }
    let bar = runs_bar(args.quiet);
    let outcome = sweep::sweep(&loaded, vary, &opts, &out, |done, of| show_runs(&bar, done, of))?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if !args.quiet && outcome.merged {
        // The points table, from the points.json just written.
        let text = std::fs::read_to_string(out.join("points.json"))?;
        let points: pilotsim::metrics::points::Points = serde_json::from_str(&text)?;
        out!("{}", sweep::text::points_table(&points));
    }
    if !args.quiet {
        outln!(
            "{} of {} runs in {} ({} already done){}",
            outcome.mine,
            outcome.total,
            out.display(),
            outcome.skipped,
            if outcome.merged {
                "; wrote sweep.parquet, points.parquet, points.json and charts"
            } else {
                "; merge the shards with `pilotsim merge`"
            }
        );
    }
    Ok(Outcome::Success)
}

/// Merge shard directories and say how many runs were merged.
pub fn merge(args: MergeArgs) -> anyhow::Result<Outcome> {
    let n = sweep::merge(&args.dirs, &args.out)?;
    outln!("merged {n} runs from {} directories into {}", args.dirs.len(), args.out.display());
    Ok(Outcome::Success)
}
