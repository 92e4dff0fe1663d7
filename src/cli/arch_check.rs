//! `pilotsim arch-check`: can a task architecture go to a PanDA queue ([`pilotsim::panda::arch`])?

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, anyhow};
use pilotsim::panda::arch::{
    ArchVariant, Broker, QueueSoftware, SwPass, SwRequest, TaskArch, gpu_verdicts, production_sw_check, sw_filter,
};

use super::Outcome;
use super::args::ArchCheckArgs;
use super::out::outln;

/// The fields of a bare queue object (anything else at the top is a queue name).
const QUEUE_FIELDS: &[&str] =
    &["releases", "in_sw_map", "cmtconfigs", "containers", "cvmfs", "architectures", "tags", "wn_gpus"];

/// `FILE:LINE:COL: message` for a serde_json error.
fn located(path: &Path, e: &serde_json::Error) -> anyhow::Error {
    let msg = e.to_string();
    let msg = msg.rsplit_once(" at line ").map_or(msg.as_str(), |(m, _)| m);
    anyhow!("{}:{}:{}: {msg}", path.display(), e.line(), e.column())
}

/// The queue of QUEUE.json, bare or wrapped as `{"NAME": {...}}`, with its name if wrapped.
fn load_queue(path: &Path) -> anyhow::Result<(Option<String>, QueueSoftware)> {
    let text = pilotsim::scenario::input::read_text(path).with_context(|| format!("reading {}", path.display()))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| located(path, &e))?;
    let wrapped = value
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.iter().next())
        .is_some_and(|(k, v)| v.is_object() && !QUEUE_FIELDS.contains(&k.as_str()));
    if wrapped {
        let map: BTreeMap<String, QueueSoftware> = serde_json::from_str(&text).map_err(|e| located(path, &e))?;
        let (name, queue) = map.into_iter().next().ok_or_else(|| anyhow!("{}: no queue", path.display()))?;
        Ok((Some(name), queue))
    } else {
        Ok((None, serde_json::from_str(&text).map_err(|e| located(path, &e))?))
    }
}

/// Print the verdict; [`Outcome::No`] when rejected; invalid input is an error (exit 2).
pub fn run(args: ArchCheckArgs) -> anyhow::Result<Outcome> {
    let variant = if args.panda_server { ArchVariant::PandaServer } else { ArchVariant::Seed };
    let arch = TaskArch::parse_with(&args.arch, variant).map_err(|e| anyhow!("architecture {:?}: {e}", args.arch))?;
    let (name, queue) = load_queue(&args.queue)?;
    for w in &arch.warnings {
        eprintln!("warning: {w}");
    }
    let container = args.container.as_deref();
    let result = match &args.release {
        Some(th) => production_sw_check(&queue, &arch, Some(th), container, args.only_tags, None, variant)
            .map_err(|e| anyhow!("--release: {e}"))?,
        None => {
            let req = SwRequest::standalone(&arch, container, args.only_tags);
            sw_filter(&queue, &arch, &req, Broker::Analysis, None, variant)
        }
    };
    let outcome = match &result {
        Ok(pass) => {
            let how = match pass {
                SwPass::Any => " (releases=ANY: no release check, no hardware requested)".to_string(),
                SwPass::Auto { resolved_platform: Some(p) } => format!(" (sw_platform resolves to {p})"),
                SwPass::Auto { resolved_platform: None } | SwPass::NotChecked => String::new(),
            };
            outln!("accepted{how}");
            Outcome::Success
        }
        Err(skip) => {
            outln!("rejected: {} — {} (criteria={})", skip.rule(), skip, skip.criteria());
            Outcome::No
        }
    };
    if let Some(name) = name {
        outln!("queue: {name}");
    }
    outln!("task: {}", arch.refined);
    if let Some(spec) = &arch.gpu_spec {
        outln!("gpu requirement: {spec}");
        if queue.wn_gpus.is_empty() {
            outln!("worker-node GPUs: none reported (only wildcard GPU requests can pass)");
        }
        for v in gpu_verdicts(spec, &queue.wn_gpus) {
            let gpu = queue.wn_gpus.get(v.index).map(ToString::to_string).unwrap_or_default();
            if v.fits() {
                outln!("  wn_gpus[{}] {gpu}: matches", v.index);
            } else {
                let failed: Vec<String> = v.failed().map(|a| a.to_string()).collect();
                outln!("  wn_gpus[{}] {gpu}: does not match ({})", v.index, failed.join(", "));
            }
        }
    }
    Ok(outcome)
}
