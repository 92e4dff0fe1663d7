//! `pilotsim new`: a runnable scenario from an operator's dumps (`scenario::own_grid`),
//! validated before it is written; its warnings say what would make a run meaningless.

use anyhow::Context;
use pilotsim::scenario::{self, own_grid};

use super::Outcome;
use super::args::NewArgs;
use super::import::{check_mbps, read_dirac_cfg, read_gdpconfig, read_texts};
use super::out::out;

pub fn run(args: NewArgs) -> anyhow::Result<Outcome> {
    check_mbps(args.default_mbps)?;
    if let Some(g) = args.gflops_per_core.filter(|g| !(g.is_finite() && *g > 0.0)) {
        anyhow::bail!("--gflops-per-core {g}: must be a positive number");
    }
    if !(args.days.is_finite() && args.days > 0.0 && args.days <= 366.0) {
        anyhow::bail!("--days {}: must be a number of days in (0, 366]", args.days);
    }
    if args.slots == Some(0) {
        anyhow::bail!("--slots 0: the grid needs at least one slot");
    }
    if let Some(o) = args.output.as_ref().filter(|o| o.exists() && !args.force) {
        anyhow::bail!("{} exists: pass --force to overwrite it", o.display());
    }
    let name = args
        .name
        .clone()
        .or_else(|| args.output.as_ref().and_then(|o| o.file_stem()).map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "my_grid".to_string());
    if let Some(problem) = scenario::validate::name_problem(&name) {
        anyhow::bail!("--name {name:?}: {problem}");
    }
    let sources = own_grid::Sources {
        cric: read_texts(&args.cric)?,
        gdpconfig: match &args.gdpconfig {
            Some(f) => Some((f.display().to_string(), read_gdpconfig(f, &args.vo)?)),
            None => None,
        },
        dirac: match &args.dirac_cfg {
            Some(f) => Some((f.display().to_string(), read_dirac_cfg(f)?)),
            None => None,
        },
    };
    let mut opt = own_grid::Options::new(&name);
    opt.seed = args.seed;
    opt.jobs = args.jobs;
    opt.duration_s = (args.days * 86_400.0).round() as u64;
    opt.nuclei = args.nuclei.clone();
    opt.slots = args.slots;
    opt.gflops_per_core = args.gflops_per_core;
    opt.default_mbps = args.default_mbps;
    opt.empty_links = args.empty_links;
    let (text, warnings) = own_grid::build_with_warnings(&sources, &opt).map_err(anyhow::Error::msg)?;
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    // What was written must load: a failure here is pilotsim's bug, said as such.
    let parsed = scenario::parse(&text, &name)
        .map_err(|e| anyhow::anyhow!("the written scenario does not parse (a pilotsim bug): {e}"))?;
    let problems = scenario::validate(&parsed);
    if let Some(p) = problems.first() {
        anyhow::bail!("the written scenario is invalid (a pilotsim bug): {}: {}", p.path, p.message);
    }
    let shown = args.output.as_ref().map_or("<stdout>".to_string(), |o| o.display().to_string());
    for w in scenario::warnings(&parsed) {
        eprintln!("{shown}: warning: {}: {}", w.path, w.message);
    }
    match &args.output {
        Some(o) => {
            pilotsim::metrics::write::atomic(o, text.as_bytes()).with_context(|| o.display().to_string())?;
            let p = parsed.panda.as_ref();
            eprintln!(
                "wrote {}: {} sites, {} CEs, {} PanDA queues, {} nuclei{}; next: pilotsim validate {0} && pilotsim run {0}",
                o.display(),
                parsed.sites.len(),
                parsed.sites.iter().map(|s| s.ces.len()).sum::<usize>(),
                p.map_or(0, |p| p.queues.len()),
                p.map_or(0, |p| p.nuclei.len()),
                if parsed.dirac.is_some() {
                    format!(", {} DIRAC streams", parsed.workload.len())
                } else {
                    String::new()
                },
            );
        }
        None => out!("{text}"),
    }
    Ok(Outcome::Success)
}
