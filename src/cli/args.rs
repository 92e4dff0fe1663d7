//! The command line of `pilotsim`: every command, option, default and help text (clap
//! derive). The doc comments of `Cli`, of the `Command` variants and of the fields are the
//! `--help` text; a variant's doc comment overrides that of its arguments struct.

use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand};

/// Deterministic discrete-event simulator of pilot-based grid workload management.
///
/// pilotsim models sites, CEs, batch queues, GPUs, storage, network links and pilots, and
/// drives faithful implementations of the systems that put jobs on them, one scenario section
/// each (several may share one grid):
///   dirac:    task queues, Matcher, TQ priorities from group shares, share corrections,
///             the TaskqueueDirector (extraPilotFraction, pilotsPerIteration), the JobAgent
///   panda:    JEDI's task and job brokerage, the analysis broker, global shares and throttle,
///             data transfers, getJob, Harvester (pull and push workers), copyArchive
///   factory:  generic and startd pilot factories (seed 003) feeding DIRAC or a PanDA queue
/// Tune settings offline, regression-check fairness, compare two configurations, and draw
/// review plots. Same scenario and seed: byte-identical outputs.
///
/// Start with `pilotsim run` (the DIRAC quickstart) or
/// `pilotsim run scenarios/panda_quickstart.ron`; every shipped scenario is in scenarios/.
#[derive(Parser)]
#[command(name = "pilotsim", version, about, long_about, verbatim_doc_comment)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The commands; each runs a `run` function of the module of the same name in `cli`.
#[derive(Subcommand)]
pub enum Command {
    /// Run one scenario and write its outputs (summary.json, Parquet tables, charts).
    ///
    /// Without SCENARIO, runs the embedded quickstart (scenarios/quickstart.ron, DIRAC).
    /// Outputs go to results/<scenario name>/ unless --out is given: jobs.parquet and
    /// pilots.parquet (one row per job and pilot), timeseries.parquet, summary.json, charts;
    /// a PanDA run adds brokerage.parquet (every brokerage decision, for `pilotsim explain`),
    /// a run with pilot factories factory_cycles.parquet, a grid with GPUs
    /// gpu_timeseries.parquet. Examples:
    ///   pilotsim run scenarios/panda_quickstart.ron
    ///   pilotsim run scenarios/factory_standby.ron --set 'factory.0.Startd.standby={"Fixed":20}'
    ///   pilotsim run scenarios/two_vo.ron --seed 7 --out results/two_vo_7
    #[command(verbatim_doc_comment)]
    Run(RunArgs),
    /// Check scenario files: prints one line per problem and exits 1 if any file is invalid.
    ///
    /// Syntax errors are printed as FILE:LINE:COL: message, semantic ones as
    /// FILE: field.path: message.
    Validate(ValidateArgs),
    /// Regression-check scenarios against their `expect` thresholds and committed baselines.
    ///
    /// Each scenario runs R replicas (seeds derived from its seed). A threshold holds if the
    /// replica mean satisfies it; a baseline metric holds if the mean is within four standard
    /// errors of the difference from the baseline's (at least 1 %, and 0.002 for shares and
    /// deviations); the shipped scenarios run enough replicas that a 10 % change fails. Prints
    /// one row per scenario and metric; exits 0 if all pass, 1 if any fails, 2 if an input is
    /// invalid.
    Check(CheckArgs),
    /// Run a grid of parameter values × replicas in parallel and summarise it.
    ///
    /// Each --vary PATH=SPEC takes a list (0.1,0.2,0.5) or an inclusive range (0:1:0.1);
    /// several make a full grid. Each point runs R replicas with seeds derived from the
    /// scenario's seed and the point. Every finished run is written at once to DIR/runs/, so
    /// rerunning the same command resumes; then DIR gets sweep.parquet (one row per run),
    /// points.parquet and points.json (mean, std, 95 % CI per point) and charts. Results do
    /// not depend on --threads. Any field a --set can reach can vary: DIRAC's director, PanDA's
    /// gdpconfig and Harvester settings, a factory's policy. Examples:
    ///   pilotsim sweep scenarios/quickstart.ron --vary dirac.director.extra_pilot_fraction=0:1:0.25
    ///   pilotsim sweep scenarios/tuning_nqueued_sat_cap.ron
    ///     --vary panda.gdpconfig.job_broker.nqueued_sat_cap=50,150,500 --replicas 4
    ///   pilotsim sweep scenarios/factory_standby.ron --set 'factory.0.Startd.standby={"Fixed":1}'
    ///     --vary factory.0.Startd.standby.Fixed=20,36,60
    #[command(verbatim_doc_comment)]
    Sweep(SweepArgs),
    /// Find the parameter value that optimises an objective subject to constraints.
    ///
    /// Sweeps --steps values over [LOW, HIGH] with replicas, then zooms into the bracket
    /// around the best feasible point for --rounds rounds. Constraints hold only if they hold
    /// with the 95 % confidence interval. `--minimize PATH` with the parameter's own path
    /// finds its smallest feasible value. Examples (DIRAC, then PanDA):
    ///   pilotsim tune scenarios/quickstart.ron --param dirac.director.extra_pilot_fraction=0:1
    ///     --minimize dirac.director.extra_pilot_fraction --target 'wait_time_s.lhcb_user.p95<=7200'
    ///   pilotsim tune scenarios/tuning_nqueued_sat_cap.ron
    ///     --param panda.gdpconfig.job_broker.nqueued_sat_cap=10:1000
    ///     --maximize panda.gdpconfig.job_broker.nqueued_sat_cap
    ///     --target 'network.links.SWT2_CPB:BNL.transfer_time_s.p95<=36000'
    #[command(verbatim_doc_comment)]
    Tune(TuneArgs),
    /// Two configurations side by side, for a review: paired runs, a table and overlay charts.
    ///
    /// Forms: two scenario files (`compare a.ron b.ron`); one scenario with two sets of
    /// overrides (`compare s.ron --a PATH=VALUE... --b PATH=VALUE...`; without a scenario, the
    /// quickstart); two existing run or sweep directories (`compare results/x results/y`).
    /// Scenarios run R replicas each with common random numbers: replica i of A and of B use
    /// the same seed (from A's seed), so both see the same random draws where their settings
    /// let them and the paired difference has a tight interval. Prints the key metrics (A, B,
    /// B − A, its 95 % CI, whether it is beyond the noise) and writes DIR/compare.html,
    /// compare.json, compare.parquet (every metric) and PNG + SVG charts that overlay A
    /// (solid) and B (dashed). Examples:
    ///   pilotsim compare scenarios/tuning_extra_pilots.ron
    ///     --a dirac.director.extra_pilot_fraction=0.2 --b dirac.director.extra_pilot_fraction=0.5
    ///   pilotsim compare scenarios/factory_standby.ron
    ///     --a 'factory.0.Startd.standby={"Fixed":20}' --b 'factory.0.Startd.standby={"Adaptive":{}}'
    #[command(verbatim_doc_comment)]
    Compare(CompareArgs),
    /// Combine the directories of a sharded sweep into the files an unsharded sweep makes.
    Merge(MergeArgs),
    /// Write DIR/report.html: one self-contained HTML page (tables and charts, no network
    /// needed) for a run (summary.json), sweep (points.json) or tune (tune.json) directory; a
    /// comparison's directory gets its compare.html again.
    Report(ReportArgs),
    /// Why did a PanDA job go where it went? Its life and the brokerage decisions behind it.
    ///
    /// Reads RUN_DIR/jobs.parquet and RUN_DIR/brokerage.parquet of a PanDA run. --job ID: the
    /// job's status times, PQ, task, attempt and gshare; the job brokerage that placed it (the
    /// chosen PQ and its weight, the other candidates by weight, each skipped PQ with its filter
    /// and PanDA's message); for a production job its task's task brokerage (nucleus, pending
    /// attempts). --task ID: every decision of the task, summarised per PQ, with the pending
    /// cycles and what blocked them. --queue NAME ("why not this queue?"): only that PQ's rows of
    /// the job's or task's decisions, or of the whole run. Times are hours:minutes since the
    /// start, and seconds. Exits 0 found, 1 the job, task or queue is not in the run, 2 not a
    /// PanDA run directory. Example: pilotsim explain results/panda_quickstart --job 17 --queue MWT2
    Explain(ExplainArgs),
    /// Write a complete, commented scenario for your own grid from its dumps.
    ///
    /// The grid (sites, CEs, storages, links, PanDA queues) comes from queue and network JSON
    /// (--cric, the forms `import cric` reads), PanDA's settings from a dump of its config table
    /// (--gdpconfig), DIRAC's groups and share corrections from a CS file (--dirac-cfg). The
    /// workload is a template sized by --jobs, to edit: MC simulation tasks brokered to the
    /// nuclei and 20 users' analysis for PanDA; a stream per DIRAC user with --dirac-cfg. The
    /// scenario is validated as it is written; its warnings (a nucleus every task skips, and
    /// why) are printed. Example:
    ///   pilotsim new -o my_grid.ron
    ///     --cric data/panda_cgsim/site_info.json data/panda_cgsim/site_conn_info.json
    #[command(verbatim_doc_comment)]
    New(NewArgs),
    /// Convert real configuration into scenario fragments.
    #[command(subcommand)]
    Import(Import),
    /// Print a generated scenario (RON) on stdout.
    #[command(subcommand)]
    Generate(Generate),
    /// Can a task architecture go to a PanDA queue, and if not, which rule rejects it?
    ///
    /// ARCH is a task architecture as `prun --architecture` or an ART header takes it: the
    /// string form sw_platform[@base_platform][#cpu_spec][&gpu_spec] (e.g. '#&nvidia:vram>=40960',
    /// 'x86_64-el9-gcc13-opt#(x86_64|aarch64)') or JSON ('{"gpu_spec": {"vendor": "nvidia",
    /// "model": {"pattern": ".*P100.*", "excl": true}}}'). QUEUE.json is one queue as PanDA's
    /// SW_TAGS shows it (releases, cmtconfigs, containers, cvmfs, architectures, tags; bare or as
    /// {"NAME": {...}}) plus its worker-node GPUs as wn_gpus: [{vendor, model, vram,
    /// architecture, framework_version, driver_version, gpus_per_host}]. Without --release the
    /// check is the analysis broker's for standalone software (hardware, regexp cmtconfig); with
    /// --release PROJECT-VERSION it is the production broker's (also cvmfs, containers,
    /// cmtconfigs, tags). Prints `accepted` or `rejected: RULE — WHY`, and for a GPU request
    /// which worker-node GPUs match. Exits 0 accepted, 1 rejected, 2 invalid input. Example:
    /// pilotsim arch-check '#&nvidia:model=.*A100.*:vram>=40960' --queue queue.json
    ArchCheck(ArchCheckArgs),
}

/// The `generate` subcommands.
#[derive(Subcommand)]
pub enum Generate {
    /// The scale benchmark's DIRAC grid: JOBS jobs over a week on JOBS/20 slots (CEs of 1 000
    /// slots, two per site), four groups, 25 users, the director's pilotsPerIteration 40 per 10⁵
    /// slots; every size has the same load and pilot supply, so cost per event compares across
    /// sizes. Example: `pilotsim generate scale --jobs 2.1e6 > week.ron`.
    Scale {
        /// Number of jobs (at least 1 000); `1e6` and `2.1e6` are accepted.
        #[arg(long, value_parser = parse_count)]
        jobs: u64,
    },
    /// The real ATLAS grid under PanDA: the 150 queues, 101 sites, storages and 6 534 links of
    /// the CGSim data shipped in data/panda_cgsim (Apache-2.0), with JOBS jobs of MC simulation
    /// (80 %, tasks of 1 000 jobs brokered to the Tier-1 nuclei) and user analysis (20 %) over a
    /// week, on JOBS/20 slots. Example: `pilotsim generate atlas --jobs 1e6 > atlas_week.ron`.
    Atlas {
        /// Number of jobs (at least 10 000).
        #[arg(long, value_parser = parse_count)]
        jobs: u64,
    },
}

/// A count written as an integer or in float notation (`2.1e6`).
fn parse_count(s: &str) -> Result<u64, String> {
    if let Ok(n) = s.parse::<u64>() {
        return Ok(n);
    }
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x <= 1e15 => Ok(x as u64),
        _ => Err(format!("{s:?} is not a whole number of jobs (e.g. 1000000 or 1e6)")),
    }
}

/// Arguments of `pilotsim run`.
#[derive(Args)]
pub struct RunArgs {
    /// Scenario file (RON). Default: the embedded quickstart.
    pub scenario: Option<PathBuf>,
    /// Master seed of every random stream (default: the scenario's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Output directory (default: results/<scenario name>/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Override a scenario field, e.g. `--set dirac.director.extra_pilot_fraction=0.5`
    /// or `--set 'sites[LCG.CERN.cern].ces.0.slots=800'`. Values are JSON or plain strings.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// No progress bar and no summary table.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Arguments of `pilotsim validate`.
#[derive(Args)]
pub struct ValidateArgs {
    /// Scenario files (RON).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// Arguments of `pilotsim check`.
#[derive(Args)]
pub struct CheckArgs {
    /// Scenario files, or directories whose *.ron files are all checked.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Replicas per scenario (default: the scenario's `expect.replicas`, 5); at least 1.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub replicas: Option<u32>,
    /// Where baselines live.
    #[arg(long, default_value = "results/baselines")]
    pub baselines: PathBuf,
    /// Rewrite the baselines from this run instead of comparing.
    #[arg(long, conflicts_with = "sets")]
    pub update_baselines: bool,
    /// Change every scenario before it runs (PATH=VALUE as in `run --set`, repeatable): checks
    /// a change (a fair share, a director setting) against the committed baselines. Example:
    /// pilotsim check scenarios/quickstart.ron --set 'dirac.groups[lhcb_user].job_share=500'
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
}

/// Arguments of `pilotsim arch-check`.
#[derive(Args)]
pub struct ArchCheckArgs {
    /// The task architecture (string or JSON form; quote it for the shell, not inside).
    #[arg(allow_hyphen_values = true)]
    pub arch: String,
    /// The queue: one SW_TAGS entry plus `wn_gpus` (JSON).
    #[arg(long, value_name = "QUEUE.json")]
    pub queue: PathBuf,
    /// A production task's release (transHome), e.g. Athena-24.0.1, or a nightly.
    #[arg(long, value_name = "PROJECT-VERSION")]
    pub release: Option<String>,
    /// The task's fat container (container_name).
    #[arg(long)]
    pub container: Option<String>,
    /// The task uses only tags for its fat container (onlyTagsForFC).
    #[arg(long)]
    pub only_tags: bool,
    /// Follow panda-server 1.0.4's code where it differs from the documentation (seed).
    #[arg(long)]
    pub panda_server: bool,
}

/// Arguments of `pilotsim sweep`.
#[derive(Args)]
pub struct SweepArgs {
    /// Scenario file (RON).
    pub scenario: PathBuf,
    /// A varied field and its values, e.g. dirac.director.extra_pilot_fraction=0:1:0.1.
    #[arg(long = "vary", value_name = "PATH=SPEC", required = true)]
    pub vary: Vec<String>,
    /// Replicas per point (at least 1).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub replicas: u32,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Output directory (default: results/<scenario name>-sweep/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Fixed overrides applied to every point.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Run only the I-th of N slices of the runs (I/N, 0-based); combine with `merge`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    #[command(flatten)]
    pub slurm: SlurmArgs,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Arguments of `pilotsim tune`.
#[derive(Args)]
pub struct TuneArgs {
    /// Scenario file (RON).
    pub scenario: PathBuf,
    /// The tuned field and its range, PATH=LOW:HIGH.
    #[arg(long, value_name = "PATH=LOW:HIGH")]
    pub param: String,
    /// Metric (or the parameter path) to minimise.
    #[arg(long, conflicts_with = "maximize", required_unless_present = "maximize")]
    pub minimize: Option<String>,
    /// Metric to maximise.
    #[arg(long)]
    pub maximize: Option<String>,
    /// A constraint `METRIC<=X` or `METRIC>=X`, repeatable.
    #[arg(long = "target", value_name = "METRIC<=X")]
    pub targets: Vec<String>,
    /// Values per round.
    #[arg(long, default_value_t = 6)]
    pub steps: usize,
    /// Rounds of zooming.
    #[arg(long, default_value_t = 2)]
    pub rounds: usize,
    /// Replicas per value (at least 1).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub replicas: u32,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Fixed overrides.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Output directory (default: results/<scenario name>-tune/).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Arguments of `pilotsim merge`.
#[derive(Args)]
pub struct MergeArgs {
    /// Where to write the merged sweep.
    #[arg(long, required = true)]
    pub out: PathBuf,
    /// Shard directories.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
}

/// Arguments of `pilotsim explain`.
#[derive(Args)]
#[command(group(ArgGroup::new("what").required(true).multiple(true).args(["job", "task", "queue"])))]
pub struct ExplainArgs {
    /// The output directory of a PanDA run (`pilotsim run SCENARIO --out RUN_DIR`).
    pub run_dir: PathBuf,
    /// A job id (`job_id` of jobs.parquet).
    #[arg(long, value_name = "ID", conflicts_with = "task")]
    pub job: Option<u32>,
    /// A JEDI task id (`jedi_task_id`).
    #[arg(long, value_name = "ID")]
    pub task: Option<u32>,
    /// A PanDA queue: only its rows (chosen, a candidate with its weight, or skipped by which filter).
    #[arg(long, value_name = "NAME")]
    pub queue: Option<String>,
    /// Print the explanation as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `pilotsim report`.
#[derive(Args)]
pub struct ReportArgs {
    /// A run or sweep output directory.
    pub dir: PathBuf,
}

/// Options of `sweep --slurm`.
#[derive(Args)]
pub struct SlurmArgs {
    /// Write an sbatch script for a Slurm job array (one task per shard) into the output
    /// directory and submit it instead of running locally; then `merge` the shard-* dirs.
    #[arg(long)]
    pub slurm: bool,
    /// Shards (array tasks) for --slurm.
    #[arg(long, default_value_t = 4)]
    pub shards: u32,
    /// Extra sbatch option for --slurm, repeatable, e.g. --slurm-arg=--time=02:00:00.
    #[arg(long = "slurm-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub slurm_args: Vec<String>,
    /// With --slurm: write the script but do not submit it.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Args)]
pub struct NewArgs {
    /// Queue and network JSON files: site_info.json, site_conn_info.json, CRIC pandaqueue dumps.
    #[arg(long, required = true, num_args = 1.., value_name = "FILE")]
    pub cric: Vec<PathBuf>,
    /// A JSON dump of PanDA's config table (ATLAS_PANDA.CONFIG), as `import gdpconfig` reads it.
    #[arg(long, value_name = "FILE")]
    pub gdpconfig: Option<PathBuf>,
    /// The VO whose gdpconfig rows are read.
    #[arg(long, default_value = "atlas")]
    pub vo: String,
    /// A DIRAC CS .cfg file (Registry/Groups, ShareCorrections): adds DIRAC on the same grid.
    /// Without --gdpconfig the scenario is then DIRAC's alone.
    #[arg(long, value_name = "FILE")]
    pub dirac_cfg: Option<PathBuf>,
    /// Scenario name (default: the output file's stem, else my_grid).
    #[arg(long)]
    pub name: Option<String>,
    /// Jobs of the workload template (10 000 to 10⁹; `2e4` is accepted).
    #[arg(long, default_value = "20000", value_parser = parse_count)]
    pub jobs: u64,
    /// Length of the run, days.
    #[arg(long, default_value_t = 7.0)]
    pub days: f64,
    /// Sites that are PanDA nuclei, comma-separated (default: the Tier-1 sites of the grid, else
    /// the five largest sites with a disk endpoint).
    #[arg(long, value_delimiter = ',', value_name = "SITE,...")]
    pub nuclei: Vec<String>,
    /// Scale the grid to this many slots (default: enough for the template's jobs to need 60 %
    /// of them while they arrive).
    #[arg(long, conflicts_with = "gflops_per_core")]
    pub slots: Option<u64>,
    /// Keep the dump's size instead: slots = GFLOPS / this.
    #[arg(long)]
    pub gflops_per_core: Option<f64>,
    /// Bandwidth of links without FTS data, Mbps.
    #[arg(long, default_value_t = pilotsim::scenario::cric::DEFAULT_MBPS)]
    pub default_mbps: f64,
    /// Start every link with no backlog (default: the dump's Production Output backlog, held
    /// constant, as PanDA would read it all along).
    #[arg(long)]
    pub empty_links: bool,
    /// The scenario's seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the scenario to FILE (default: standard output).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Overwrite FILE if it exists.
    #[arg(long)]
    pub force: bool,
}

/// The `import` subcommands.
#[derive(Subcommand)]
pub enum Import {
    /// Print the RON fragment (groups, share_corrections) equivalent to a DIRAC CS .cfg file
    /// (Registry/Groups and Operations/.../JobScheduling/ShareCorrections).
    DiracCfg {
        /// The .cfg file.
        file: PathBuf,
    },
    /// Print the `gdpconfig: (...)` fragment (for a scenario's `panda:` section) of a dump of
    /// PanDA's config table (ATLAS_PANDA.CONFIG).
    ///
    /// FILE is a JSON array of rows as the table holds them, e.g.
    /// `[{"app": "jedi", "component": "jobbroker", "key": "NW_ACTIVE", "value": "True", "vo": "atlas"}]`
    /// (`type` and `value_json` columns are honoured when present). Rows are looked up as
    /// PanDA does, by (app, component, key) for the VO or VO-independent; keys pilotsim does
    /// not model are listed as warnings on stderr; a value its key cannot take is an error
    /// naming the row. Unset keys keep panda-server's code defaults.
    #[command(verbatim_doc_comment)]
    Gdpconfig {
        /// The JSON dump.
        file: PathBuf,
        /// The VO whose rows are read (rows with no VO apply to all).
        #[arg(long, default_value = "atlas")]
        vo: String,
    },
    /// Print the `sites`, `storages`, `network` and `panda: (queues: [...])` fragment of queue
    /// and network descriptions.
    ///
    /// Each FILE is JSON in one of three forms, detected from its entries:
    ///   site_info.json       QUEUE: {"RSE": {RSE: TB}, "GFLOPS": n}
    ///   site_conn_info.json  "SRC:DST": {"closeness", "mbps": {"dashb": {"1h","1d","1w"}}, "files"}
    ///   CRIC pandaqueue JSON QUEUE: {"atlas_site", "status", "type", "corecount", "maxrss", ...}
    /// A queue is put on its CRIC atlas_site, else on the link-matrix site named like the queue
    /// or like the prefix of one of its RSEs, else on a site named after it; it gets one CE with
    /// GFLOPS / --gflops-per-core slots. A link's bandwidth is the largest of the FTS 1h/1d/1w
    /// averages (--default-mbps without any); closeness -1 (blocked) drops it. Tape RSEs and
    /// sizes of 0 are unlimited. Unknown fields are warnings on stderr.
    #[command(verbatim_doc_comment)]
    Cric {
        /// The JSON files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// GFLOPS of one core (slots = GFLOPS / this).
        #[arg(long, default_value_t = pilotsim::scenario::cric::DEFAULT_GFLOPS_PER_CORE)]
        gflops_per_core: f64,
        /// Bandwidth of links without FTS data, Mbps.
        #[arg(long, default_value_t = pilotsim::scenario::cric::DEFAULT_MBPS)]
        default_mbps: f64,
    },
}

#[derive(Args)]
pub struct CompareArgs {
    /// Scenario files (one, or two: A and B) or two run or sweep directories (A and B).
    #[arg(value_name = "A_OR_SCENARIO", num_args = 0..=2)]
    pub inputs: Vec<PathBuf>,
    /// Override applied to A only (repeatable): PATH=VALUE as in `run --set`.
    #[arg(long = "a", value_name = "PATH=VALUE")]
    pub a: Vec<String>,
    /// Override applied to B only (repeatable).
    #[arg(long = "b", value_name = "PATH=VALUE")]
    pub b: Vec<String>,
    /// Override applied to both sides (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Replicas per side (each pair shares a seed).
    #[arg(long, short = 'r', default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub replicas: u32,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Output directory (default: results/<A>-vs-<B>/, or results/<scenario>-compare/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// No progress bar and no table.
    #[arg(long, short)]
    pub quiet: bool,
}

#[cfg(test)]
#[path = "help_tests.rs"]
mod tests;
