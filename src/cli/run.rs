//! `pilotsim run`: one scenario, its outputs, and the summary on the terminal.

use std::path::PathBuf;

use pilotsim::metrics::summary_text::terminal_report;
use pilotsim::report::outputs;
use pilotsim::run;
use pilotsim::scenario;

use super::Outcome;
use super::args::RunArgs;
use super::out::out;
use super::progress::progress_bar;

/// Run the scenario (the embedded quickstart without one), write its outputs to `--out`
/// (default `results/<name>/`) and print [`terminal_report`] unless `--quiet`. The old
/// `summary.json` and stale temporaries of `--out` are removed before the run starts.
pub fn run(args: RunArgs) -> anyhow::Result<Outcome> {
    let loaded = match &args.scenario {
        Some(p) => scenario::load_file(p)?,
        None => scenario::quickstart(),
    };
    let prepared = run::prepare(&loaded, &args.sets)?;
    for w in scenario::warnings(&prepared.scenario) {
        eprintln!("{}: warning: {}: {}", prepared.origin, w.path, w.message);
    }
    let seed = args.seed.unwrap_or(prepared.scenario.seed);
    let dir = args.out.unwrap_or_else(|| PathBuf::from("results").join(&prepared.scenario.name));
    // An old summary goes before the run, so a run that fails leaves none behind.
    outputs::begin_run(&dir)?;
    let bar = progress_bar(args.quiet, (prepared.scenario.duration_s / 3600.0).ceil() as u64);
    let mut finished = run::simulate(&prepared, seed, |now, _| {
        if let Some(b) = &bar {
            b.set_position(now.as_hours_f64() as u64);
        }
    })?;
    if let Some(b) = &bar {
        b.set_message("writing outputs");
    }
    let summary = finished.write(&dir)?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if !args.quiet {
        out!("{}", terminal_report(&summary, &prepared.origin, &dir));
    }
    Ok(Outcome::Success)
}
