//! What the `panda` section says that is valid but probably not what the author meant: each
//! warning with its field path; `validate` and `run` print them, they never stop a run.

use crate::panda::arch::TaskArch;
use crate::panda::harvester::config::MapType;
use crate::panda::job_broker::FairsharePolicy;
use crate::scenario::panda::replay::Outcome;
use crate::scenario::panda::{JobRecord, PandaConfig, PandaQueue, ReplayStream};
use crate::scenario::types::Scenario;
use crate::scenario::validate::Problem;

/// Valid but suspicious: nuclei task brokerage always skips (`nuclei`), parse warnings of `fairsharepolicy` and architectures, a dataset without
/// any replica, pull queues Harvester would submit nothing to; replay records that are skipped
/// (cancelled, closed), that need more cores than their queue's pilots, or that stage in from a
/// site the scenario does not have.
pub fn warnings(s: &Scenario, p: &PandaConfig) -> Vec<Problem> {
    let mut out = crate::scenario::panda::nuclei::warnings(s, p);
    for (i, r) in p.replay.iter().enumerate() {
        replay_warnings(&mut out, s, p, &format!("panda.replay[{i}].file"), r);
    }
    queue_warnings(&mut out, p);
    architecture_warnings(&mut out, p);
    for (i, t) in p.tasks.iter().enumerate() {
        for (k, d) in t.inputs.iter().enumerate() {
            if d.replicas.is_empty() {
                out.push(Problem {
                    path: format!("panda.tasks[{i}].inputs[{k}].replicas"),
                    message: "no replica anywhere: task brokerage will fail every such task (no complete replica readable over WAN)".into(),
                });
            }
        }
    }
    out
}

/// Replay stream `r`'s records (warned about at `path`, its file) that are skipped, that need
/// more cores than their queue's pilots have, or that stage in from a site not in the scenario.
fn replay_warnings(out: &mut Vec<Problem>, s: &Scenario, p: &PandaConfig, path: &str, r: &ReplayStream) {
    let mut warn = |message: String| out.push(Problem { path: path.to_string(), message });
    let skipped = r.records.iter().filter(|x| x.outcome() == Some(Outcome::Skipped)).count();
    if skipped > 0 {
        warn(format!(
            "{skipped} records are cancelled or closed: skipped (their jobs never ran to an end of their own)"
        ));
    }
    // A job needs a pilot with its cores free: more cores than the PQ's pilots have never runs.
    let too_big: Vec<(&JobRecord, &PandaQueue)> = r
        .records
        .iter()
        .filter(|x| x.outcome() != Some(Outcome::Skipped))
        .filter_map(|x| Some((x, p.queue(r.queue.as_deref().unwrap_or(&x.computingsite))?)))
        .filter(|(x, q)| x.corecount > q.cores())
        .collect();
    if let Some((x, q)) = too_big.first() {
        warn(format!(
            "{} records need more cores than their queue's pilots have ({}:{}: corecount {} on {:?}, corecount {}): their jobs never run",
            too_big.len(),
            r.file,
            x.line,
            x.corecount,
            q.name,
            q.cores()
        ));
    }
    // Staged-in records whose sourcesite is not a grid site read their input as if local.
    let away: Vec<&JobRecord> = r
        .records
        .iter()
        .filter(|x| !x.reads_directly() && !x.sourcesite.is_empty())
        .filter(|x| !s.sites.iter().any(|site| site.name == x.sourcesite))
        .collect();
    if let Some(x) = away.first() {
        warn(format!(
            "{} records stage in from a sourcesite that is not a site of the scenario ({}:{}: {:?}): their input is taken as already at the queue",
            away.len(),
            r.file,
            x.line,
            x.sourcesite
        ));
    }
}

/// Each queue's `fairsharepolicy` parse warnings, and a pull queue whose `maxWorkers` is 0.
fn queue_warnings(out: &mut Vec<Problem>, p: &PandaConfig) {
    for (i, q) in p.queues.iter().enumerate() {
        let (_, ws) = FairsharePolicy::parse(&q.fairsharepolicy);
        for w in ws {
            out.push(Problem { path: format!("panda.queues[{i}].fairsharepolicy"), message: w.to_string() });
        }
        let h = q.harvester.sanitized();
        if h.map_type == MapType::NoJob && h.max_workers == Some(0) {
            out.push(Problem {
                path: format!("panda.queues[{i}].harvester.maxWorkers"),
                message:
                    "maxWorkers is 0 (Harvester's default): a pull queue gets no worker (\"no worker to submit!\")"
                        .into(),
            });
        }
    }
}

/// What PanDA notes as it parses the architectures of production, then analysis, tasks.
fn architecture_warnings(out: &mut Vec<Problem>, p: &PandaConfig) {
    let arch = p.rules().arch;
    let mut arch_warnings = |path: String, a: &Option<String>| {
        if let Some(Ok(t)) = a.as_deref().map(|a| TaskArch::parse_with(a, arch)) {
            for w in t.warnings {
                out.push(Problem { path: path.clone(), message: w });
            }
        }
    };
    for (i, t) in p.tasks.iter().enumerate() {
        arch_warnings(format!("panda.tasks[{i}].architecture"), &t.architecture);
    }
    for (i, a) in p.analysis.iter().enumerate() {
        arch_warnings(format!("panda.analysis[{i}].architecture"), &a.architecture);
    }
}
