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
    /// Regression-check scenarios against their `expect` thresholds and committed baselines.
    ///
    /// Each scenario runs R replicas (seeds derived from its seed). A threshold holds if the
    /// replica mean satisfies it; a baseline metric holds if the mean is within four standard
    /// errors of the baseline (at least 1 %). Prints one row per scenario and metric; exits 0
    /// if all pass, 1 if any fails, 2 if an input is invalid.
    Check {
        /// Scenario files, or directories whose *.ron files are all checked.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Replicas per scenario (default: the scenario's `expect.replicas`, 5).
        #[arg(long)]
        replicas: Option<u32>,
        /// Where baselines live.
        #[arg(long, default_value = "results/baselines")]
        baselines: PathBuf,
        /// Rewrite the baselines from this run instead of comparing.
        #[arg(long)]
        update_baselines: bool,
    },
    /// Convert real configuration into scenario fragments.
    #[command(subcommand)]
    Import(Import),
}

#[derive(Subcommand)]
enum Import {
    /// Print the RON fragment (groups, share_corrections) equivalent to a DIRAC CS .cfg file
    /// (Registry/Groups and Operations/.../JobScheduling/ShareCorrections).
    DiracCfg {
        /// The .cfg file.
        file: PathBuf,
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
        Command::Check { paths, replicas, baselines, update_baselines } => {
            cmd_check(&paths, replicas, &baselines, update_baselines)
        }
        Command::Import(Import::DiracCfg { file }) => cmd_import_cfg(&file),
    }
}

fn cmd_import_cfg(file: &PathBuf) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{}: {e}", file.display());
            return ExitCode::from(1);
        }
    };
    match scenario::dirac_cfg::import(&text) {
        Ok(import) => {
            print!("{}", scenario::dirac_cfg::to_ron_fragment(&import));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{}:{}:{}: {}", file.display(), e.line, e.col, e.kind);
            ExitCode::from(1)
        }
    }
}

/// Scenario files named on the command line, directories expanded to their *.ron files.
fn scenario_files(paths: &[PathBuf]) -> Vec<PathBuf> {
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

fn cmd_check(paths: &[PathBuf], replicas: Option<u32>, baselines: &std::path::Path, update: bool) -> ExitCode {
    let files = scenario_files(paths);
    let mut invalid = false;
    let mut failed = false;
    let bar = (std::io::stderr().is_terminal()).then(|| ProgressBar::new(files.len() as u64));
    println!("{:<24} {:<40} {:<22} {:<22} verdict", "scenario", "metric", "expected", "got");
    for f in &files {
        if let Some(b) = &bar {
            b.set_message(f.display().to_string());
        }
        let prepared = match scenario::load_file(f).map_err(anyhow::Error::from).and_then(|l| run::prepare(&l, &[])) {
            Ok(p) => p,
            Err(e) => {
                invalid = true;
                eprintln!("{e:#}");
                continue;
            }
        };
        let n = replicas.unwrap_or(prepared.scenario.expect.replicas).max(1);
        match pilotsim::sweep::check::check(&prepared, n, baselines, update) {
            Ok(rows) => {
                if rows.is_empty() {
                    println!("{:<24} (no thresholds and no baseline: nothing to check)", prepared.scenario.name);
                }
                for r in rows {
                    failed |= !r.pass;
                    let verdict = if r.pass { "pass" } else { "FAIL" };
                    println!("{:<24} {:<40} {:<22} {:<22} {verdict}", r.scenario, r.metric, r.expected, r.got);
                }
            }
            Err(e) => {
                invalid = true;
                eprintln!("{}: {e:#}", f.display());
            }
        }
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if files.is_empty() {
        eprintln!("no scenario files found in {paths:?}");
        return ExitCode::from(2);
    }
    ExitCode::from(if invalid {
        2
    } else if failed {
        1
    } else {
        0
    })
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

fn cmd_run(
    path: Option<PathBuf>,
    seed: Option<u64>,
    out: Option<PathBuf>,
    sets: Vec<String>,
    quiet: bool,
) -> anyhow::Result<()> {
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
        p.submitted,
        p.used,
        p.empty,
        p.aborted,
        p.failed,
        p.cancelled,
        pct(s.pilot_efficiency)
    );
    println!(
        "\n{:<28} {:>7} {:>9} {:>9}   (shares of running-job time after {:.1} h warm-up)",
        "entity", "target", "achieved", "deviation", s.warmup_hours
    );
    for (name, e) in &s.entities {
        let indent = if e.level == "user" { "  " } else { "" };
        println!(
            "{:<28} {:>7} {:>9} {:>9}",
            format!("{indent}{name}"),
            pct(Some(e.target_share)),
            pct(e.achieved_share),
            pct(e.deviation)
        );
    }
    println!("max group share deviation: {}", pct(s.max_share_deviation));
    println!("\n{:<28} {:>8} {:>10} {:>10}", "waiting time", "jobs", "p50", "p95");
    for (g, w) in &s.wait_time_s {
        println!("{g:<28} {:>8} {:>10} {:>10}", w.n, hours(w.p50), hours(w.p95));
    }
    println!("\noutputs in {}/", dir.display());
}
