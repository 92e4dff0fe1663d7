//! Nuclei that task brokerage skips for the whole run, found before it starts: what in the
//! scenario never changes decides them. Each warning quotes the line PanDA logs for the skip
//! (`  skip nucleus=NAME …`, reference panda.md §1 "Filter chain"):
//!
//! - **status** (filter 2): a state other than `ACTIVE`;
//! - **transfer backlog** (filter 3): the constant background backlog of the links into the
//!   nucleus (`network[].queued_files`, what a CRIC/FTS dump gives) alone exceeds
//!   `NQUEUED_NUC_CAP`, so no task's brokerage ever passes it (tasks' own transfers only add;
//!   not said when a task has `t1Weight < 0`, which skips the filter);
//! - **endpoint** (filter 4): no output endpoint (panda-server 1.0.4 raises there instead:
//!   every task's brokerage fails, which is said as such);
//! - **job check** (filter 5): no production PQ at the nucleus' site whose status job brokerage
//!   accepts.
//!
//! When every nucleus is skipped and the scenario has production tasks, none is assigned and
//! no production job is created: that is said too.

use crate::panda::task_broker::report::SkipReason;
use crate::panda::task_broker::{NucleusState, Role, TaskBrokerVariant};
use crate::scenario::Problem;
use crate::scenario::Scenario;

use super::PandaConfig;

/// Why task brokerage always skips nucleus `i`, as PanDA's log line, or `None`.
fn always_skipped(s: &Scenario, p: &PandaConfig, i: usize) -> Option<String> {
    let n = &p.nuclei[i];
    let line = |reason: SkipReason| format!("  skip nucleus={} {reason}", n.site);
    if n.state != NucleusState::Active {
        return Some(line(SkipReason::Status { state: n.state }));
    }
    let cap = p.task_brokerage_params().sane().nqueued_nuc_cap;
    let background = s.network.iter().filter(|l| l.to == n.site).map(|l| l.queued_files).fold(0, u64::saturating_add);
    // Tasks with `t1Weight < 0` skip the backlog filter: then not every task skips the nucleus.
    let all_check_backlog = p.tasks.iter().all(|t| t.t1_weight >= 0);
    if all_check_backlog && background as f64 > cap {
        return Some(format!(
            "{} (the links into {:?} hold a constant background of {background} queued files > NQUEUED_NUC_CAP {cap})",
            line(SkipReason::TransferBacklog),
            n.site
        ));
    }
    if n.output_storages.is_empty() && p.rules().task_broker == TaskBrokerVariant::Seed {
        return Some(format!("{} (no output_storages)", line(SkipReason::NoEndpoint { token: "" })));
    }
    let variant = p.job_broker_params().variant;
    let runs_jobs =
        p.queues.iter().any(|q| q.site == n.site && q.kind.production() && variant.accepts_status(q.status));
    if !runs_jobs {
        return Some(format!(
            "{} (no production PanDA queue at site {:?} with a status job brokerage accepts)",
            line(SkipReason::NoJobs),
            n.site
        ));
    }
    None
}

/// The warnings (see the module doc), with their field paths.
pub fn warnings(s: &Scenario, p: &PandaConfig) -> Vec<Problem> {
    let mut out = Vec::new();
    // panda-server 1.0.4 raises, rather than skips, on a nucleus without an output endpoint:
    // the brokerage of every task fails while that nucleus is a candidate.
    if p.rules().task_broker == TaskBrokerVariant::PandaServer
        && let Some(i) = p.nuclei.iter().position(|n| n.output_storages.is_empty())
    {
        out.push(Problem {
            path: format!("panda.nuclei[{i}].output_storages"),
            message: format!(
                "nucleus {:?} has no output endpoint: panda-server's task brokerage fails on it, so no production task is assigned",
                p.nuclei[i].site
            ),
        });
        return out;
    }
    let mut usable = 0;
    let mut nuclei = 0;
    for (i, n) in p.nuclei.iter().enumerate() {
        if n.role == Role::Satellite {
            continue;
        }
        nuclei += 1;
        match always_skipped(s, p, i) {
            Some(why) => out.push(Problem {
                path: format!("panda.nuclei[{i}]"),
                message: format!(
                    "every task skips nucleus {:?} all run long; PanDA logs: {}",
                    n.site,
                    why.trim_start()
                ),
            }),
            None => usable += 1,
        }
    }
    // A full-chain task may go to a satellite with a bare-nucleus mode, which is not counted.
    let satellites_open =
        p.tasks.iter().any(|t| t.full_chain.is_some()) && p.nuclei.iter().any(|n| n.bare_nucleus.is_some());
    if nuclei > 0 && usable == 0 && !p.tasks.is_empty() && !satellites_open {
        out.push(Problem {
            path: "panda.nuclei".into(),
            message: format!(
                "every nucleus ({nuclei}) is always skipped: no production task is assigned and no production job is created"
            ),
        });
    }
    out
}
