//! `pilotsim tune`: the search of [`pilotsim::sweep::tune`], its table and its choice.

use std::path::PathBuf;

use pilotsim::scenario::{self, expect::parse_threshold};
use pilotsim::sweep::SweepOptions;
use pilotsim::sweep::tune::{self, Goal, TuneSpec};

use super::Outcome;
use super::args::TuneArgs;
use super::out::out;
use super::progress::{runs_bar, show_runs};

/// Tune, write the outputs and print the table of values tried and the choice;
/// [`Outcome::No`] (with the reason on stderr) if no value satisfies every constraint.
pub fn run(args: TuneArgs) -> anyhow::Result<Outcome> {
    let loaded = scenario::load_file(&args.scenario)?;
    let (param, low, high) = tune::parse_param(&args.param)?;
    let (goal, objective) = match (args.minimize, args.maximize) {
        (Some(m), _) => (Goal::Minimize, m),
        (None, Some(m)) => (Goal::Maximize, m),
        (None, None) => anyhow::bail!("give --minimize METRIC or --maximize METRIC"),
    };
    let constraints = args
        .targets
        .iter()
        .map(|t| parse_threshold(t).map_err(anyhow::Error::msg))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // An integer field (e.g. `nqueued_sat_cap`) is tuned over whole numbers; a field the
    // scenario leaves at its default still has a value in the tree, and one a `--set` brings
    // (`--set 'factory.0.Startd.standby={"Fixed":1}'`) is looked up after the sets.
    let with_sets = scenario::overrides::apply(&loaded.scenario, &args.sets).map_err(anyhow::Error::msg)?;
    let integer = scenario::overrides::value_at(&with_sets, &param)
        .map_err(|e| anyhow::anyhow!("--param {param}: {e}"))?
        .is_i64();
    let spec = TuneSpec {
        scenario: loaded.scenario.name.clone(),
        param,
        low,
        high,
        goal,
        objective,
        constraints,
        steps: args.steps,
        rounds: args.rounds,
        integer,
    };
    let out = args.out.unwrap_or_else(|| PathBuf::from("results").join(format!("{}-tune", loaded.scenario.name)));
    let opts = SweepOptions { replicas: args.replicas, threads: args.threads, shard: None, sets: args.sets };
    let bar = runs_bar(false);
    let tuned = tune::tune(&loaded, &spec, &opts, &out, |done, of| show_runs(&bar, done, of))?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    tune::write_outputs(&out, &spec, &tuned)?;
    out!("{}", tune::table(&spec, &tuned));
    match tune::conclusion(&spec, &tuned, &out) {
        Some(text) => {
            out!("{text}");
            Ok(Outcome::Success)
        }
        None => {
            eprintln!("no value in [{low}, {high}] satisfies every constraint (see the table above)");
            Ok(Outcome::No)
        }
    }
}
