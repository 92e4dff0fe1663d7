//! `pilotsim new`: a complete, runnable scenario from an operator's own dumps. The grid (sites,
//! CEs, storages, links, PanDA queues) comes from queue and network JSON through
//! [`cric`]; PanDA's settings from a dump of its config table through [`gdpconfig`]; DIRAC's
//! groups and share corrections from a CS `.cfg` through [`dirac_cfg`]. What the dumps do not
//! hold — the workload — is a commented template sized by `jobs`, for the operator to edit:
//!
//! - **PanDA** (written unless only a DIRAC CS is given): gshares Production 80 (MC Simulation
//!   Full) and Analysis 20 (User Analysis); MC simulation tasks of 1 000 single-core jobs
//!   (1 000 events, 144 HS06·s per event, 200 kB out per event), one stream per nucleus with
//!   its EVNT input on that nucleus' disk, 80 % of the jobs; 20 users' analysis tasks of 100
//!   jobs (1.5 h each) reading a DAOD dataset on another site's disk, 20 %.
//! - **DIRAC** (with a CS): each group's jobs in proportion to its JobShare, one stream per user
//!   (a JobSharing group shares one stream among its users, as DIRAC pools them), jobs of
//!   about 50 min at CPU power 10.
//! - **Nuclei**: the named ones, else the WLCG Tier-1 sites the grid has (ATLAS's nuclei),
//!   else the [`AUTO_NUCLEI`] sites with the most slots that have a disk endpoint. A nucleus'
//!   output and input endpoint is its first `*DATADISK` (first disk in a grid without
//!   ATLAS names).
//! - **Slots**: with `gflops_per_core`, the dump's size; else every queue's GFLOPS scaled so
//!   the grid has `slots`, by default as many as make the template's jobs need [`TARGET_LOAD`]
//!   of them over the first six sevenths of the run, when they arrive (a PanDA job is 3.5
//!   core-hours on average, a DIRAC one 0.94).
//! - **Link backlogs**: the dump's Production Output backlog stays, a constant background
//!   (PanDA skips a nucleus whose backlog exceeds `NQUEUED_NUC_CAP`; `validate` names them);
//!   `empty_links` starts every link empty instead.

use std::fmt::Write;

use super::cric::{self, Options as CricOptions, pretty};
use super::dirac_cfg::{self, DiracCfgImport};
use crate::grid::config::StorageKind;
use crate::panda::gdpconfig;

/// WLCG Tier-1 sites as ATLAS names them: ATLAS's nuclei.
pub const TIER1: &[&str] = &[
    "BNL-ATLAS",
    "CERN-PROD",
    "FZK-LCG2",
    "IN2P3-CC",
    "INFN-T1",
    "NDGF-T1",
    "pic",
    "RAL-LCG2",
    "RRC-KI-T1",
    "SARA-MATRIX",
    "TRIUMF-LCG2",
    "Taiwan-LCG2",
];

/// Nuclei chosen when neither the names nor any Tier-1 are given: the largest sites.
pub const AUTO_NUCLEI: usize = 5;
/// The part of the slots the template's jobs need while they arrive (default slots).
pub const TARGET_LOAD: f64 = 0.6;
/// Core-hours of a PanDA template job: 80 % MC simulation of 4 h, 20 % analysis of 1.5 h.
const PANDA_CORE_H: f64 = 0.8 * 4.0 + 0.2 * 1.5;
/// The most jobs a template takes (a stream's count is a 32-bit number).
pub const MAX_JOBS: u64 = 1_000_000_000;

/// Core-hours of a DIRAC template job: CPU work LogNormal(median 30 000, σ 0.5), mean
/// 30 000·e^(σ²/2), at the imported CEs' CPU power 10.
fn dirac_core_h() -> f64 {
    30_000.0 * (0.5f64 * 0.5 / 2.0).exp() / 10.0 / 3600.0
}
/// The smallest template.
pub const MIN_JOBS: u64 = 10_000;
const PROD_JOBS_PER_TASK: u64 = 1000;
const ANAL_JOBS_PER_TASK: u64 = 100;
const USERS: u64 = 20;
/// Users of a group given their own stream; the others are listed in a comment.
const MAX_STREAMS_PER_GROUP: usize = 10;

/// The dumps, each with the name it is cited by in the scenario's comments.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// Queue and network JSON files (`cric::import`), as (name, text).
    pub cric: Vec<(String, String)>,
    /// An imported gdpconfig dump, with its file name.
    pub gdpconfig: Option<(String, gdpconfig::Imported)>,
    /// An imported DIRAC CS, with its file name.
    pub dirac: Option<(String, DiracCfgImport)>,
}

/// How the scenario is made.
#[derive(Debug, Clone)]
pub struct Options {
    pub name: String,
    pub seed: u64,
    /// Jobs of the workload template (at least [`MIN_JOBS`]).
    pub jobs: u64,
    pub duration_s: u64,
    /// Sites that are PanDA nuclei (empty: chosen, see the module doc).
    pub nuclei: Vec<String>,
    /// Total slots the grid is scaled to (default `jobs / 20`); ignored with `gflops_per_core`.
    pub slots: Option<u64>,
    /// GFLOPS of one core: the dump's own size.
    pub gflops_per_core: Option<f64>,
    pub default_mbps: f64,
    /// Start every link with no backlog.
    pub empty_links: bool,
    /// First comment line (what made the file).
    pub made_by: String,
    /// The scenario's description (default: the jobs and the dumps).
    pub description: Option<String>,
}

impl Options {
    /// Defaults for a scenario called `name`: seed 1, 20 000 jobs over a week.
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_string(),
            seed: 1,
            jobs: 20_000,
            duration_s: 7 * 86_400,
            nuclei: Vec::new(),
            slots: None,
            gflops_per_core: None,
            default_mbps: cric::DEFAULT_MBPS,
            empty_links: false,
            made_by: format!("{name} — written by `pilotsim new`"),
            description: None,
        }
    }
}

/// The scenario's RON text, or what is wrong with the dumps or options.
pub fn build(src: &Sources, opt: &Options) -> Result<String, String> {
    build_with_warnings(src, opt).map(|(text, _)| text)
}

/// [`build`], with the importer's warnings about the queue and network JSON (fields it does
/// not read, queues without GFLOPS given one slot).
pub fn build_with_warnings(src: &Sources, opt: &Options) -> Result<(String, Vec<String>), String> {
    check_options(src, opt)?;
    let split = JobSplit::of(src, opt);
    let cric_opt = |per_core: f64| CricOptions { gflops_per_core: per_core, default_mbps: opt.default_mbps };
    let per_core = gflops_per_core(src, opt, &split)?;
    let mut frag = cric::import(&src.cric, cric_opt(per_core)).map_err(|e| e.to_string())?;
    if frag.sites.is_empty() {
        return Err("the JSON files give no site: add a site_info.json or a CRIC pandaqueue dump".into());
    }
    let header = cric::header(&frag, cric_opt(per_core));
    if opt.empty_links {
        for l in &mut frag.network {
            l.queued_files = 0;
        }
    }
    let nuclei = if split.with_panda { nuclei(&frag, &opt.nuclei)? } else { Vec::new() };
    let disk = |site: &str| first_disk(&frag, site);
    let others: Vec<String> =
        frag.sites.iter().filter(|s| !nuclei.iter().any(|(n, _)| n == &s.name)).filter_map(|s| disk(&s.name)).collect();

    let mut s = String::new();
    write_comments(&mut s, src, opt, &frag, &header);
    write_run_and_grid(&mut s, src, opt, &frag);
    if let Some((_, d)) = &src.dirac {
        write_dirac(&mut s, d, split.dirac_jobs, split.active_s);
    }
    if split.with_panda {
        let gdp = match &src.gdpconfig {
            Some((_, g)) => Some(gdpconfig::to_ron_fragment(g)?),
            None => None,
        };
        let w = PandaTemplate { jobs: split.panda_jobs, active_s: split.active_s, nuclei: &nuclei, others: &others };
        write_panda(&mut s, &frag, gdp.as_deref(), &w);
    }
    let _ = writeln!(s, ")");
    Ok((s, frag.warnings))
}

/// What the options and dumps must give before anything is imported: a template size in
/// range, a DIRAC group that can have a stream, nuclei named once, some queue or network
/// JSON, a run of at least an hour. The first that fails is the error.
fn check_options(src: &Sources, opt: &Options) -> Result<(), String> {
    if !(MIN_JOBS..=MAX_JOBS).contains(&opt.jobs) {
        return Err(format!("--jobs {}: the workload template needs {MIN_JOBS} to {MAX_JOBS} jobs", opt.jobs));
    }
    if let Some((_, d)) = &src.dirac
        && !d.groups.iter().any(|g| !g.users.is_empty() && g.job_share > 0.0)
    {
        return Err("--dirac-cfg: no group has users and a JobShare above 0: the DIRAC template has no stream".into());
    }
    let mut seen = std::collections::BTreeSet::new();
    if let Some(n) = opt.nuclei.iter().find(|n| !seen.insert(n.as_str())) {
        return Err(format!("--nuclei: {n:?} given twice"));
    }
    if src.cric.is_empty() {
        return Err("the grid comes from queue and network JSON (--cric FILE...): none given".into());
    }
    if opt.duration_s < 3600 {
        return Err(format!("duration {} s: at least an hour", opt.duration_s));
    }
    Ok(())
}

/// How the template's jobs are shared between the WMSs, and when they arrive.
struct JobSplit {
    /// PanDA is written unless only a DIRAC CS is given.
    with_panda: bool,
    /// All the jobs with DIRAC alone, half of them with both.
    dirac_jobs: u64,
    panda_jobs: u64,
    /// The streams arrive over the first six sevenths of the run.
    active_s: u64,
}

impl JobSplit {
    fn of(src: &Sources, opt: &Options) -> Self {
        let with_panda = src.gdpconfig.is_some() || src.dirac.is_none();
        let dirac_jobs = match (&src.dirac, with_panda) {
            (None, _) => 0,
            (Some(_), false) => opt.jobs,
            (Some(_), true) => opt.jobs / 2,
        };
        let panda_jobs = if with_panda { opt.jobs - dirac_jobs } else { 0 };
        Self { with_panda, dirac_jobs, panda_jobs, active_s: opt.duration_s * 6 / 7 }
    }
}

/// GFLOPS of one core: the option's, else what scales the grid to `--slots` or to the slots
/// the template's jobs need at [`TARGET_LOAD`] (a first import at 1 GFLOPS per core gives the
/// total GFLOPS).
fn gflops_per_core(src: &Sources, opt: &Options, split: &JobSplit) -> Result<f64, String> {
    if let Some(g) = opt.gflops_per_core {
        return Ok(g);
    }
    let probe = cric::import(&src.cric, CricOptions { gflops_per_core: 1.0, default_mbps: opt.default_mbps })
        .map_err(|e| e.to_string())?;
    let gflops: f64 = probe.sites.iter().flat_map(|s| &s.ces).map(|c| f64::from(c.slots)).sum();
    let core_h = split.panda_jobs as f64 * PANDA_CORE_H + split.dirac_jobs as f64 * dirac_core_h();
    let needed = (core_h / (TARGET_LOAD * split.active_s as f64 / 3600.0)).ceil() as u64;
    let slots = opt.slots.unwrap_or(needed).max(1);
    Ok((gflops / slots as f64).max(1.0))
}

/// The opening comments: what made the file, the dumps it cites, the importer's `header`
/// (forms and counts), how the grid was sized, and how to go on.
fn write_comments(s: &mut String, src: &Sources, opt: &Options, frag: &cric::Fragment, header: &str) {
    let _ = writeln!(s, "// {}", opt.made_by);
    for (name, _) in &src.cric {
        let _ = writeln!(s, "//   grid: {name}");
    }
    if let Some((name, g)) = &src.gdpconfig {
        let _ = writeln!(s, "//   PanDA settings: {name} ({} rows applied)", g.applied.len());
    }
    if let Some((name, d)) = &src.dirac {
        let _ = writeln!(s, "//   DIRAC groups: {name} ({} groups)", d.groups.len());
    }
    *s += header;
    let slots: u64 = frag.sites.iter().flat_map(|x| &x.ces).map(|c| u64::from(c.slots)).sum();
    if opt.gflops_per_core.is_none() {
        let _ = writeln!(
            s,
            "// The grid is scaled to {slots} slots for the template's {} jobs; `--gflops-per-core` keeps the dump's size.",
            opt.jobs
        );
    }
    if opt.empty_links {
        let _ = writeln!(s, "// Every link starts with no backlog (--empty-links).");
    }
    let _ = writeln!(s, "//");
    let _ =
        writeln!(s, "// The grid is the dumps'; the workload below is a template: edit its streams (counts, arrivals,");
    let _ = writeln!(
        s,
        "// CPU times, inputs) to your own. Check with `pilotsim validate FILE`, run with `pilotsim run FILE`."
    );
}

/// `Scenario(` and its first fields: name, description, seed, the run's span and sampling,
/// then the grid (sites, storages, network).
fn write_run_and_grid(s: &mut String, src: &Sources, opt: &Options, frag: &cric::Fragment) {
    let _ = writeln!(s, "Scenario(");
    let _ = writeln!(s, "    name: {:?},", opt.name);
    let description =
        opt.description.clone().unwrap_or_else(|| format!("{} jobs on the grid of {}", opt.jobs, cited(src)));
    let _ = writeln!(s, "    description: {description:?},");
    let _ = writeln!(s, "    seed: {},", opt.seed);
    let _ = writeln!(s, "    duration_s: {},", opt.duration_s);
    let sample = if opt.duration_s >= 3 * 86_400 { 3600 } else { 600 };
    let _ = writeln!(s, "    output: (warmup_s: {}, sample_interval_s: {sample}),", opt.duration_s / 28);
    let _ = writeln!(s, "    sites: {},", pretty(&frag.sites));
    let _ = writeln!(s, "    storages: {},", pretty(&frag.storages));
    let _ = writeln!(s, "    network: {},", pretty(&frag.network));
}

/// The dumps' file names, for the description.
fn cited(src: &Sources) -> String {
    src.cric.iter().map(|(n, _)| n.rsplit('/').next().unwrap_or(n)).collect::<Vec<_>>().join(", ")
}

/// A site's data endpoint: its first `*DATADISK` when the grid names its endpoints the ATLAS
/// way (some endpoint is a `DATADISK`: scratch and group disks are not for data), else its
/// first disk.
fn first_disk(frag: &cric::Fragment, site: &str) -> Option<String> {
    let atlas_names = frag.storages.iter().any(|x| x.name.ends_with("DATADISK"));
    frag.storages
        .iter()
        .filter(|x| x.site == site && x.kind == StorageKind::Disk)
        .find(|x| !atlas_names || x.name.ends_with("DATADISK"))
        .map(|x| x.name.clone())
}

/// The nuclei with their endpoint (see the module doc for the choice).
fn nuclei(frag: &cric::Fragment, named: &[String]) -> Result<Vec<(String, String)>, String> {
    let sites: Vec<&str> = frag.sites.iter().map(|s| s.name.as_str()).collect();
    if !named.is_empty() {
        return named
            .iter()
            .map(|n| {
                if !sites.contains(&n.as_str()) {
                    return Err(format!("--nuclei: no site {n:?} in the grid"));
                }
                let d = first_disk(frag, n).ok_or_else(|| format!("--nuclei: site {n:?} has no disk endpoint"))?;
                Ok((n.clone(), d))
            })
            .collect();
    }
    let tier1: Vec<(String, String)> =
        TIER1.iter().filter_map(|t| Some((t.to_string(), first_disk(frag, t)?))).collect();
    if !tier1.is_empty() {
        return Ok(tier1);
    }
    let mut by_slots: Vec<(u64, &str, String)> = frag
        .sites
        .iter()
        .filter_map(|s| {
            let slots = s.ces.iter().map(|c| u64::from(c.slots)).sum();
            Some((slots, s.name.as_str(), first_disk(frag, &s.name)?))
        })
        .collect();
    by_slots.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let chosen: Vec<(String, String)> =
        by_slots.into_iter().take(AUTO_NUCLEI).map(|(_, n, d)| (n.to_string(), d)).collect();
    if chosen.is_empty() {
        return Err("no site has a disk endpoint: PanDA's production tasks need a nucleus with one".into());
    }
    Ok(chosen)
}

/// What the PanDA workload template is made of.
struct PandaTemplate<'a> {
    jobs: u64,
    active_s: u64,
    nuclei: &'a [(String, String)],
    others: &'a [String],
}

fn write_panda(s: &mut String, frag: &cric::Fragment, gdpconfig: Option<&str>, w: &PandaTemplate) {
    let prod_tasks = (w.jobs as f64 * 0.8 / PROD_JOBS_PER_TASK as f64).ceil().max(1.0) as u64;
    let anal_tasks = (w.jobs as f64 * 0.2 / ANAL_JOBS_PER_TASK as f64).ceil().max(1.0) as u64;
    let _ = writeln!(s, "    panda: (");
    let _ = writeln!(s, "        // Job brokerage and the link check as panda-server 1.0.4 runs them.");
    let _ = writeln!(s, "        variants: (job_broker: Some(PandaServer), network: Some(PandaServer)),");
    if let Some(g) = gdpconfig {
        for line in g.lines() {
            let _ = writeln!(s, "        {line}");
        }
    }
    let _ = writeln!(
        s,
        "        gshares: [(name: \"Production\", value: 80, children: [(name: \"MC Simulation Full\", value: 100)]), (name: \"Analysis\", value: 20, children: [(name: \"User Analysis\", value: 100)])],"
    );
    let _ =
        writeln!(s, "        // Production tasks are brokered to a nucleus: its output goes to the first endpoint.");
    let _ = writeln!(s, "        nuclei: [");
    for (site, d) in w.nuclei {
        let _ = writeln!(s, "            (site: {site:?}, output_storages: [{d:?}], input_storages: [{d:?}]),");
    }
    let _ = writeln!(s, "        ],");
    let _ = writeln!(s, "        queues: {},", pretty(&frag.queues));
    let _ = writeln!(
        s,
        "        // Template: {prod_tasks} MC simulation tasks of {PROD_JOBS_PER_TASK} jobs (4 h at 10 HS06 per core), one stream per nucleus."
    );
    let _ = writeln!(s, "        tasks: [");
    let n = w.nuclei.len().max(1) as u64;
    for (i, (site, d)) in w.nuclei.iter().enumerate() {
        let count = prod_tasks / n + u64::from((i as u64) < prod_tasks % n);
        if count == 0 {
            continue;
        }
        let _ = writeln!(
            s,
            "            (name: \"mc23_simul_{site}\", count: {count}, arrival: Spread(start_s: 0, end_s: {}),\n             inputs: [(name: \"mc23_13p6TeV.EVNT.{site}\", size_gb: 100, files: 1000, replicas: [(storage: {d:?})])],\n             n_events: {}, n_events_per_job: 1000, cpu_time: 144, out_disk_count: 200, priority: 900,\n             gshare: \"MC Simulation Full\", failure_probability: 0.02),",
            w.active_s,
            PROD_JOBS_PER_TASK * 1000
        );
    }
    let _ = writeln!(s, "        ],");
    let _ = writeln!(
        s,
        "        // Template: {anal_tasks} analysis tasks of {ANAL_JOBS_PER_TASK} jobs (1.5 h each) by {USERS} users, inputs on other sites' disks."
    );
    let _ = writeln!(s, "        analysis: [");
    let rate_hours = w.active_s as f64 / 3600.0;
    for u in 0..USERS {
        let count = anal_tasks / USERS + u64::from(u < anal_tasks % USERS);
        let disks =
            if w.others.is_empty() { w.nuclei.iter().map(|(_, d)| d.clone()).collect() } else { w.others.to_vec() };
        if count == 0 || disks.is_empty() {
            continue;
        }
        let d = &disks[(u as usize * 7) % disks.len()];
        let rate = count as f64 / rate_hours;
        let _ = writeln!(
            s,
            "            (name: \"user{u:02}\", user: \"user{u:02}\", count: {count}, arrival: Poisson(start_s: 0, rate_per_hour: {rate:.6}),\n             jobs_per_task: {ANAL_JOBS_PER_TASK}, inputs: [(name: \"data24.DAOD_PHYS.user{u:02}\", size_gb: 20, files: 100, replicas: [(storage: {d:?})])],\n             cpu_time: 5.4, n_events_per_job: 10000, failure_probability: 0.05),"
        );
    }
    let _ = writeln!(s, "        ],");
    let _ = writeln!(s, "    ),");
}

/// The `dirac` section (the CS's groups and corrections) and its `workload` template.
fn write_dirac(s: &mut String, d: &DiracCfgImport, jobs: u64, active_s: u64) {
    let _ = writeln!(s, "    dirac: (");
    for line in dirac_cfg::to_ron_fragment(d).lines() {
        let _ = writeln!(s, "        {line}");
    }
    let _ = writeln!(s, "    ),");
    let groups: Vec<_> = d.groups.iter().filter(|g| !g.users.is_empty() && g.job_share > 0.0).collect();
    let total: f64 = groups.iter().map(|g| g.job_share).sum();
    let _ = writeln!(
        s,
        "    // Template: {jobs} DIRAC jobs of about 50 min at CPU power 10, shared by JobShare; a JobSharing group's users share one stream."
    );
    let _ = writeln!(s, "    workload: [");
    for g in &groups {
        let group_jobs = (jobs as f64 * g.job_share / total).round() as u64;
        let owners: Vec<&String> = if g.job_sharing() { vec![&g.users[0]] } else { g.users.iter().collect() };
        let streamed = owners.len().min(MAX_STREAMS_PER_GROUP);
        if streamed < owners.len() {
            let _ = writeln!(s, "        // {}: {} more users without a stream", g.name, owners.len() - streamed);
        }
        for (k, owner) in owners.iter().take(streamed).enumerate() {
            let count = group_jobs / streamed as u64 + u64::from((k as u64) < group_jobs % streamed as u64);
            if count == 0 {
                continue;
            }
            let rate = count as f64 / (active_s as f64 / 3600.0);
            let _ = writeln!(
                s,
                "        JobStream(name: \"{}_{owner}\", owner: {owner:?}, group: {:?}, count: {count},\n                  arrival: Poisson(start_s: 0, rate_per_hour: {rate:.4}),\n                  cpu_work: LogNormal(median: 30000, sigma: 0.5), cpu_time: 50000),",
                g.name, g.name
            );
        }
    }
    let _ = writeln!(s, "    ],");
}

#[cfg(test)]
#[path = "own_grid_tests.rs"]
mod tests;
