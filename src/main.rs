//! The `pilotsim` command line.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use pilotsim::metrics::summary::Summary;
use pilotsim::run::{self, Prepared};
use pilotsim::scenario::{self, LoadError, Loaded};

/// Deterministic discrete-event simulator of pilot-based grid workload management.
///
/// pilotsim models sites, CEs, batch queues and pilots, and drives faithful
/// implementations of DIRAC's task queues, matcher, priorities and TaskqueueDirector, so
/// you can tune settings offline, regression-check fairness, and draw review plots.
#[derive(Parser)]
#[command(name = "pilotsim", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one scenario and write its outputs (summary.json, Parquet tables, charts).
    ///
    /// Without SCENARIO, runs the embedded quickstart (scenarios/quickstart.ron).
    /// Outputs go to results/<scenario name>/ unless --out is given.
    Run {
        /// Scenario file (RON). Default: the embedded quickstart.
        scenario: Option<PathBuf>,
        /// Master seed of every random stream (default: the scenario's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Output directory (default: results/<scenario name>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Override a scenario field, e.g. `--set dirac.director.extra_pilot_fraction=0.5`
        /// or `--set 'sites[LCG.CERN.cern].ces.0.slots=800'`. Values are JSON or plain strings.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<String>,
        /// No progress bar and no summary table.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Check scenario files: prints one line per problem and exits 1 if any file is invalid.
    ///
    /// Syntax errors are printed as FILE:LINE:COL: message, semantic ones as
    /// FILE: field.path: message.
    Validate {
        /// Scenario files (RON).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run { scenario, seed, out, sets, quiet } => match cmd_run(scenario, seed, out, sets, quiet) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e:#}");
                ExitCode::from(1)
            }
        },
        Command::Validate { files } => cmd_validate(&files),
    }
}

fn load(path: Option<&PathBuf>) -> Result<Loaded, LoadError> {
    match path {
        Some(p) => scenario::load_file(p),
        None => Ok(scenario::quickstart()),
    }
}

fn cmd_validate(files: &[PathBuf]) -> ExitCode {
    let mut bad = 0;
    for f in files {
        match scenario::load_file(f) {
            Ok(_) => println!("{}: ok", f.display()),
            Err(e) => {
                bad += 1;
                println!("{e}");
            }
        }
    }
    if bad > 0 {
        eprintln!("{bad} of {} file(s) invalid", files.len());
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn progress_bar(quiet: bool, end_hours: u64) -> Option<ProgressBar> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(end_hours.max(1));
    bar.set_style(
        ProgressStyle::with_template("{spinner} simulated {pos}/{len} h [{bar:40}] {elapsed} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    Some(bar)
}

fn cmd_run(path: Option<PathBuf>, seed: Option<u64>, out: Option<PathBuf>, sets: Vec<String>, quiet: bool) -> anyhow::Result<()> {
    let loaded = load(path.as_ref())?;
    let prepared: Prepared = run::prepare(&loaded, &sets)?;
    let seed = seed.unwrap_or(prepared.scenario.seed);
    let dir = out.unwrap_or_else(|| PathBuf::from("results").join(&prepared.scenario.name));
    let bar = progress_bar(quiet, (prepared.scenario.duration_s / 3600.0).ceil() as u64);
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
    if !quiet {
        print_summary(&summary, &prepared.origin, &dir);
    }
    Ok(())
}

fn pct(v: Option<f64>) -> String {
    v.map_or("—".into(), |x| format!("{:.1}%", 100.0 * x))
}

fn hours(v: Option<f64>) -> String {
    v.map_or("—".into(), |x| format!("{:.2} h", x / 3600.0))
}

fn print_summary(s: &Summary, origin: &str, dir: &std::path::Path) {
    println!("pilotsim {} — {} ({origin}), seed {}", s.pilotsim_version, s.scenario, s.seed);
    println!(
        "simulated {:.1} h: {} events in {:.2} s ({:.0} events/s), digest {}",
        s.simulated_hours, s.events, s.wall_seconds, s.events_per_second, s.digest
    );
    let j = &s.jobs;
    println!(
        "jobs:   {} submitted, {} done, {} failed, {} running and {} waiting at the end",
        j.submitted, j.done, j.failed, j.running_at_end, j.waiting_at_end
    );
    let p = &s.pilots;
    println!(
        "pilots: {} submitted, {} used, {} empty, {} aborted, {} failed, {} cancelled; efficiency {}",
        p.submitted, p.used, p.empty, p.aborted, p.failed, p.cancelled, pct(s.pilot_efficiency)
    );
    println!("\n{:<28} {:>7} {:>9} {:>9}   (shares of running-job time after {:.1} h warm-up)", "entity", "target", "achieved", "deviation", s.warmup_hours);
    for (name, e) in &s.entities {
        let indent = if e.level == "user" { "  " } else { "" };
        println!("{:<28} {:>7} {:>9} {:>9}", format!("{indent}{name}"), pct(Some(e.target_share)), pct(e.achieved_share), pct(e.deviation));
    }
    println!("max group share deviation: {}", pct(s.max_share_deviation));
    println!("\n{:<28} {:>8} {:>10} {:>10}", "waiting time", "jobs", "p50", "p95");
    for (g, w) in &s.wait_time_s {
        println!("{g:<28} {:>8} {:>10} {:>10}", w.n, hours(w.p50), hours(w.p95));
    }
    println!("\noutputs in {}/", dir.display());
}
