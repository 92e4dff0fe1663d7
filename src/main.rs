//! The `pilotsim` command line.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use pilotsim::metrics::summary::Summary;
use pilotsim::run::{self, Prepared};
use pilotsim::scenario::{self, LoadError, Loaded};
use pilotsim::sweep;

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
    /// Run a grid of parameter values × replicas in parallel and summarise it.
    ///
    /// Each --vary PATH=SPEC takes a list (0.1,0.2,0.5) or an inclusive range (0:1:0.1);
    /// several make a full grid. Each point runs R replicas with seeds derived from the
    /// scenario's seed and the point. Every finished run is written at once to DIR/runs/, so
    /// rerunning the same command resumes; then DIR gets sweep.parquet (one row per run),
    /// points.parquet and points.json (mean, std, 95 % CI per point) and charts. Results do
    /// not depend on --threads.
    Sweep {
        /// Scenario file (RON).
        scenario: PathBuf,
        /// A varied field and its values, e.g. dirac.director.extra_pilot_fraction=0:1:0.1.
        #[arg(long = "vary", value_name = "PATH=SPEC", required = true)]
        vary: Vec<String>,
        /// Replicas per point.
        #[arg(long, default_value_t = 3)]
        replicas: u32,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Output directory (default: results/<scenario name>-sweep/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Fixed overrides applied to every point.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<String>,
        /// Run only the I-th of N slices of the runs (I/N, 0-based); combine with `merge`.
        #[arg(long, value_name = "I/N")]
        shard: Option<String>,
        #[command(flatten)]
        slurm: SlurmArgs,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Find the parameter value that optimises an objective subject to constraints.
    ///
    /// Sweeps --steps values over [LOW, HIGH] with replicas, then zooms into the bracket
    /// around the best feasible point for --rounds rounds. Constraints hold only if they hold
    /// with the 95 % confidence interval. `--minimize PATH` with the parameter's own path
    /// finds its smallest feasible value. Example:
    /// pilotsim tune scenarios/quickstart.ron --param dirac.director.extra_pilot_fraction=0:1
    ///   --minimize dirac.director.extra_pilot_fraction --target 'wait_time_s.lhcb_user.p95<=7200'
    Tune {
        /// Scenario file (RON).
        scenario: PathBuf,
        /// The tuned field and its range, PATH=LOW:HIGH.
        #[arg(long, value_name = "PATH=LOW:HIGH")]
        param: String,
        /// Metric (or the parameter path) to minimise.
        #[arg(long, conflicts_with = "maximize", required_unless_present = "maximize")]
        minimize: Option<String>,
        /// Metric to maximise.
        #[arg(long)]
        maximize: Option<String>,
        /// A constraint `METRIC<=X` or `METRIC>=X`, repeatable.
        #[arg(long = "target", value_name = "METRIC<=X")]
        targets: Vec<String>,
        /// Values per round.
        #[arg(long, default_value_t = 6)]
        steps: usize,
        /// Rounds of zooming.
        #[arg(long, default_value_t = 2)]
        rounds: usize,
        /// Replicas per value.
        #[arg(long, default_value_t = 5)]
        replicas: u32,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Fixed overrides.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<String>,
        /// Output directory (default: results/<scenario name>-tune/).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Combine the directories of a sharded sweep into the files an unsharded sweep makes.
    Merge {
        /// Where to write the merged sweep.
        #[arg(long, required = true)]
        out: PathBuf,
        /// Shard directories.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
    },
    /// Write DIR/report.html: one self-contained HTML page (tables and charts, no network
    /// needed) for a run directory (summary.json) or a sweep directory (points.json).
    Report {
        /// A run or sweep output directory.
        dir: PathBuf,
    },
    /// Convert real configuration into scenario fragments.
    #[command(subcommand)]
    Import(Import),
}

/// Options of `sweep --slurm`.
#[derive(clap::Args)]
struct SlurmArgs {
    /// Write an sbatch script for a Slurm job array (one task per shard) into the output
    /// directory and submit it instead of running locally; then `merge` the shard-* dirs.
    #[arg(long)]
    slurm: bool,
    /// Shards (array tasks) for --slurm.
    #[arg(long, default_value_t = 4)]
    shards: u32,
    /// Extra sbatch option for --slurm, repeatable, e.g. --slurm-arg=--time=02:00:00.
    #[arg(long = "slurm-arg", value_name = "ARG", allow_hyphen_values = true)]
    slurm_args: Vec<String>,
    /// With --slurm: write the script but do not submit it.
    #[arg(long)]
    dry_run: bool,
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
        Command::Sweep { scenario, vary, replicas, threads, out, sets, shard, slurm, quiet } => {
            exit(cmd_sweep(&scenario, &vary, replicas, threads, out, sets, shard, &slurm, quiet))
        }
        Command::Merge { out, dirs } => exit(cmd_merge(&out, &dirs)),
        Command::Report { dir } => exit(pilotsim::report::html::write(&dir).map(|path| println!("{}", path.display()))),
        Command::Tune { scenario, param, minimize, maximize, targets, steps, rounds, replicas, threads, sets, out } => {
            exit(cmd_tune(&scenario, &param, minimize, maximize, &targets, steps, rounds, replicas, threads, sets, out))
        }
    }
}

fn exit(r: anyhow::Result<()>) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn cmd_sweep(
    scenario: &std::path::Path,
    vary: &[String],
    replicas: u32,
    threads: Option<usize>,
    out: Option<PathBuf>,
    sets: Vec<String>,
    shard: Option<String>,
    slurm: &SlurmArgs,
    quiet: bool,
) -> anyhow::Result<()> {
    let loaded = scenario::load_file(scenario)?;
    let vary = vary.iter().map(|v| sweep::plan::parse_vary(v)).collect::<anyhow::Result<Vec<_>>>()?;
    let shard = shard.as_deref().map(sweep::plan::parse_shard).transpose()?;
    let out = out.unwrap_or_else(|| PathBuf::from("results").join(format!("{}-sweep", loaded.scenario.name)));
    let opts = sweep::SweepOptions { replicas, threads, shard, sets };
    if slurm.slurm {
        if opts.shard.is_some() {
            anyhow::bail!("--shard and --slurm do not combine: --slurm makes the shards itself (--shards N)");
        }
        return submit_slurm(scenario, &loaded, vary, &opts, &out, slurm);
    }
    let bar = runs_bar(quiet);
    let outcome = sweep::sweep(&loaded, vary, &opts, &out, |done, of| show_runs(&bar, done, of))?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if !quiet {
        println!(
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
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn cmd_tune(
    scenario: &std::path::Path,
    param: &str,
    minimize: Option<String>,
    maximize: Option<String>,
    targets: &[String],
    steps: usize,
    rounds: usize,
    replicas: u32,
    threads: Option<usize>,
    sets: Vec<String>,
    out: Option<PathBuf>,
) -> anyhow::Result<()> {
    use sweep::tune::{Goal, TuneSpec};
    let loaded = scenario::load_file(scenario)?;
    let (path, range) =
        param.split_once('=').ok_or_else(|| anyhow::anyhow!("--param {param:?}: expected PATH=LOW:HIGH"))?;
    let (low, high) = range
        .split_once(':')
        .and_then(|(a, b)| Some((a.trim().parse::<f64>().ok()?, b.trim().parse::<f64>().ok()?)))
        .ok_or_else(|| anyhow::anyhow!("--param {param:?}: expected PATH=LOW:HIGH with numbers"))?;
    let (goal, objective) = match (minimize, maximize) {
        (Some(m), _) => (Goal::Minimize, m),
        (None, Some(m)) => (Goal::Maximize, m),
        (None, None) => anyhow::bail!("give --minimize METRIC or --maximize METRIC"),
    };
    let constraints = targets
        .iter()
        .map(|t| scenario::expect::parse_threshold(t).map_err(anyhow::Error::msg))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let spec = TuneSpec {
        scenario: loaded.scenario.name.clone(),
        param: path.trim().to_string(),
        low,
        high,
        goal,
        objective,
        constraints,
        steps,
        rounds,
    };
    let out = out.unwrap_or_else(|| PathBuf::from("results").join(format!("{}-tune", loaded.scenario.name)));
    let opts = sweep::SweepOptions { replicas, threads, shard: None, sets };
    let bar = runs_bar(false);
    let tuned = sweep::tune::tune(&loaded, &spec, &opts, &out, |done, of| show_runs(&bar, done, of))?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    sweep::tune::write_outputs(&out, &spec, &tuned)?;
    println!(
        "{:<6} {:>12} {:>9}  objective (mean ± 95 % CI) and constraints",
        "round",
        spec.param.rsplit('.').next().unwrap_or(""),
        "feasible"
    );
    for t in &tuned.tried {
        let cons: Vec<String> = spec
            .constraints
            .iter()
            .map(|c| {
                t.metrics.get(&c.metric).map_or(format!("{} missing", c.metric), |s| {
                    format!("{} {:.4} ± {:.4}", c.metric, s.mean, s.ci95.unwrap_or(0.0))
                })
            })
            .collect();
        println!(
            "{:<6} {:>12.4} {:>9}  {:.4} ± {:.4}; {}",
            t.round,
            t.value,
            if t.feasible { "yes" } else { "no" },
            t.objective.0,
            t.objective.1,
            cons.join("; ")
        );
    }
    match (&tuned.best, sweep::tune::bracket(&spec, &tuned)) {
        (Some(b), Some((lo, hi))) => {
            println!("\nchosen {} = {:.4} (the optimum lies in [{lo:.4}, {hi:.4}])", spec.param, b.value);
            if spec.objective != spec.param {
                println!("{} = {:.4} ± {:.4} (95 % CI)", spec.objective, b.objective.0, b.objective.1);
            }
            println!("outputs in {}/ (tune.parquet, tune.png, round-*/)", out.display());
        }
        _ => anyhow::bail!("no value in [{low}, {high}] satisfies every constraint (see the table above)"),
    }
    Ok(())
}

/// A progress bar over runs, when stderr is a terminal.
fn runs_bar(quiet: bool) -> Option<ProgressBar> {
    (!quiet && std::io::stderr().is_terminal()).then(|| {
        let b = ProgressBar::new(0);
        b.set_style(
            ProgressStyle::with_template("runs {pos}/{len} [{bar:40}] {elapsed} eta {eta}")
                .expect("valid")
                .progress_chars("=> "),
        );
        b
    })
}

fn show_runs(bar: &Option<ProgressBar>, done: usize, of: usize) {
    if let Some(b) = bar {
        b.set_length(of as u64);
        b.set_position(done as u64);
    }
}

fn cmd_merge(out: &std::path::Path, dirs: &[PathBuf]) -> anyhow::Result<()> {
    let n = sweep::merge(dirs, out)?;
    println!("merged {n} runs from {} directories into {}", dirs.len(), out.display());
    Ok(())
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

/// `sweep --slurm`: write the job-array script into `out` and submit it (or not, with --dry-run).
fn submit_slurm(
    scenario_path: &std::path::Path,
    loaded: &Loaded,
    vary: Vec<sweep::plan::Vary>,
    opts: &sweep::SweepOptions,
    out: &std::path::Path,
    slurm: &SlurmArgs,
) -> anyhow::Result<()> {
    // Fail on a bad --vary or --set now, not in every array task.
    sweep::prepare_sweep(loaded, vary.clone(), opts)?;
    std::fs::create_dir_all(out)?;
    let abs = |p: &std::path::Path| std::path::absolute(p);
    let mut sweep_args = Vec::new();
    for v in &vary {
        sweep_args.push(format!("--vary={}={}", v.path, v.spec));
    }
    sweep_args.push(format!("--replicas={}", opts.replicas));
    for s in &opts.sets {
        sweep_args.push(format!("--set={s}"));
    }
    let job = sweep::slurm::ArrayJob {
        job_name: format!("pilotsim-{}", loaded.scenario.name),
        shards: slurm.shards,
        pilotsim: std::env::current_exe()?,
        scenario: abs(scenario_path)?,
        sweep_args,
        out_dir: abs(out)?,
        cpus_per_task: u32::try_from(opts.threads.unwrap_or(1)).unwrap_or(u32::MAX),
        extra_sbatch: slurm.slurm_args.clone(),
    };
    job.validate()?;
    let script = out.join("sweep.sbatch");
    pilotsim::metrics::write::atomic(&script, sweep::slurm::sbatch_script(&job).as_bytes())?;
    if slurm.dry_run {
        println!("wrote {} (not submitted)", script.display());
        return Ok(());
    }
    let id = sweep::slurm::submit(&script)?;
    // The bare id on stdout (id=$(pilotsim sweep … --slurm)); the next step on stderr.
    println!("{id}");
    let q = |p: &std::path::Path| sweep::slurm::shell_quote(&p.display().to_string());
    eprintln!(
        "submitted job array {id} ({} tasks); when it is done: pilotsim merge --out {} {}/shard-*",
        job.shards,
        q(&out.join("merged")),
        q(out)
    );
    Ok(())
}
