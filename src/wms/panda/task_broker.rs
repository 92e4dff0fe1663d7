//! JEDI's TaskBroker (every `agents.task_brokerage_s`): each production task in `assigning`
//! whose retry time has come goes through `panda::task_broker::do_brokerage` (inputs from
//! `view::prod`); assigned → its nucleus, the task's RW added to the nucleus' `prioRW`, and the
//! task goes to the JobGenerator; pending → retried after `PENDING_RETRY_S` (30 min).

use std::collections::BTreeMap;

use crate::engine::{RngStreams, SimDuration, SimRng, SimTime};
use crate::panda::task_broker::{self, Brokerage, BrokerageInput, PrioRw};
use crate::wms::Ctx;

use super::db::{Db, snapshot};
use super::record::{DecisionKind, Records};
use super::setup::Statics;
use super::tables::TaskStatus;
use super::view::prod::{ProdDynamic, TaskArgs};

/// The TaskBroker's own state.
#[derive(Debug)]
pub struct TaskBroker {
    /// Production tasks waiting for a nucleus.
    assigning: Vec<u32>,
    rng: SimRng,
}

/// The remaining RW of running production task `id` (events not yet generated × cpuTime)
/// and its nucleus.
fn remaining_rw(st: &Statics, db: &Db, id: u32) -> Option<(usize, f64)> {
    let t = &db.tables.tasks[id as usize];
    let (n, cfg) = (t.nucleus?, st.cfg.tasks.get(usize::from(t.stream))?);
    let shape = &st.shapes[usize::from(t.stream)];
    let used = u64::from(t.n_jobs - t.ungenerated) * shape.events_per_job;
    Some((usize::from(n), super::view::prod::task_rw(cfg, used)))
}

/// `fullRW` per nucleus (every running production task of `generating`) and, per gshare leaf,
/// the `prioRW` table for the priorities in `prios`: RW of the leaf's tasks with
/// `currentPriority ≥ p` (`calculateWorldRWwithPrio_JEDI`, reference §1 "Definitions").
fn rw_tables(st: &Statics, db: &Db, generating: &[u32], prios: &[(u16, i64)]) -> (Vec<f64>, BTreeMap<u16, PrioRw>) {
    let nn = st.cfg.nuclei.len();
    let mut full = vec![0.0; nn];
    let mut tables: BTreeMap<u16, PrioRw> = BTreeMap::new();
    for &(leaf, p) in prios {
        tables.entry(leaf).or_default().entry(p).or_insert_with(|| vec![0.0; nn]);
    }
    for &id in generating {
        let Some((n, rw)) = remaining_rw(st, db, id) else { continue };
        full[n] += rw;
        let t = &db.tables.tasks[id as usize];
        let leaf = st.shapes[usize::from(t.stream)].leaf;
        if let Some(table) = tables.get_mut(&leaf) {
            for (_, v) in table.range_mut(..=t.priority) {
                v[n] += rw;
            }
        }
    }
    (full, tables)
}

impl TaskBroker {
    pub fn new(rngs: &RngStreams) -> Self {
        TaskBroker { assigning: Vec::new(), rng: rngs.stream("panda/task_broker") }
    }

    /// Production task `id` arrived: it waits for a nucleus.
    pub fn task_arrived(&mut self, id: u32) {
        self.assigning.push(id);
    }

    /// One cycle; `generating` are the JobGenerator's tasks (their RW is the nuclei's load).
    /// The tasks assigned to a nucleus, in order, for the JobGenerator.
    pub fn cycle(&mut self, st: &Statics, db: &mut Db, generating: &[u32], ctx: &dyn Ctx) -> Vec<u32> {
        let now = ctx.now();
        let due: Vec<u32> =
            self.assigning.iter().copied().filter(|&id| db.tables.tasks[id as usize].retry_at <= now).collect();
        if due.is_empty() {
            return Vec::new();
        }
        let prios: Vec<(u16, i64)> = due
            .iter()
            .map(|&id| {
                let t = &db.tables.tasks[id as usize];
                (st.shapes[usize::from(t.stream)].leaf, t.priority)
            })
            .collect();
        let (rw, mut prio_tables) = rw_tables(st, db, generating, &prios);
        let (queued, running) = db.workers.counts();
        let (mut assigned, mut pending) = (Vec::new(), Vec::new());
        {
            let d = snapshot(&db.tables, &db.site, ctx, &queued, &running);
            let p = ProdDynamic { nucleus_rw: &rw, rt_jobs: Some(&db.tables.rt_counts), ..ProdDynamic::default() };
            // The DDM endpoints read the snapshot only: the same for every task of the cycle.
            let endpoints = st.prod_view.endpoints(&d);
            for id in due {
                let t = &db.tables.tasks[id as usize];
                let k = usize::from(t.stream);
                let args = TaskArgs {
                    task_no: t.task_no,
                    assigning_for_s: Some((now - t.arrived).as_secs_f64()),
                    current_priority: t.priority,
                };
                let Some((task, nuclei)) = st.prod_view.task_and_nuclei(k, args, &d, &p) else { continue };
                let leaf = st.shapes[k].leaf;
                let prio_rw = prio_tables.get(&leaf).and_then(|m| m.get(&t.priority)).cloned().unwrap_or_default();
                let input = BrokerageInput { task: &task, nuclei: &nuclei, endpoints: &endpoints, prio_rw: &prio_rw };
                let b = task_broker::do_brokerage(
                    &input,
                    st.prod_view.task_brokerage_params(),
                    st.prod_view.task_broker_variant(),
                    &mut self.rng,
                );
                record_decision(st, &mut db.record, now, id, &b);
                if let Some(n) = b.chosen() {
                    // The live feedback: later tasks of this cycle see the assignment.
                    let task_rw = st.prod_view.task_rw(k, 0).unwrap_or(0.0);
                    if let Some(m) = prio_tables.get_mut(&leaf) {
                        task_broker::record_assignment(m, n, args.current_priority, task_rw);
                    }
                    assigned.push((id, n));
                } else {
                    pending.push(id);
                }
            }
        }
        for id in pending {
            db.tables.tasks[id as usize].retry_at = now + SimDuration::from_secs(task_broker::PENDING_RETRY_S);
        }
        let mut out = Vec::with_capacity(assigned.len());
        for (id, n) in assigned {
            let t = &mut db.tables.tasks[id as usize];
            t.nucleus = Some(n as u16);
            t.status = TaskStatus::Running;
            t.retry_at = now;
            self.assigning.retain(|&x| x != id);
            out.push(id);
        }
        out
    }
}

/// Task `id`'s brokerage `b` in the record.
fn record_decision(st: &Statics, r: &mut Records, now: SimTime, id: u32, b: &Brokerage) {
    let dec = r.decision(now, DecisionKind::Task, id);
    for s in b.skipped() {
        r.skipped(dec, s.name, format_args!("{:?}", s.reason.stage()), &s.reason, false);
    }
    match b {
        Brokerage::Assigned(a) => {
            for c in &a.candidates {
                r.weighed(dec, c.name, c.weight, c.nucleus == a.nucleus);
            }
        }
        Brokerage::Preset { nucleus } => {
            r.weighed(dec, &st.cfg.nuclei[*nucleus].site, 0.0, true);
        }
        Brokerage::Pending(pending) => {
            r.set_pending(dec, &pending.reason.to_string());
        }
    }
}
