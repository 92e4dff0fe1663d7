//! copyArchive, PanDA's timeout daemon (reference §6, `pandaserver/daemons/scripts/copyArchive.py`):
//! every cycle it applies `panda::timeouts`' rules to each job not yet final, then fast
//! rebrokerage per (PQ, gshare). A job on which no rule can fire before some time
//! (`timeouts::check_until`: every rule compares a fixed time of the job with `now`, the
//! inactive-site rule also the PQ's `laststart`, which only moves forward) is skipped until then
//! or until its status changes; the actions are those of checking every job at every cycle
//! (debug builds check it at every skip).
//!
//! What an action does here:
//! - a job reassigned (`killJob` code 51 with `toreassign`, or fast rebrokerage) or killed while
//!   still queued (defined, assigned, activated, or `starting` with a push worker not yet
//!   started, whose worker is cancelled) is `closed`; its world job is cancelled, and
//!   JEDI regenerates its chunk (attempt + 1) — for a reassignment always, for a kill while
//!   `maxAttempt` allows;
//! - a transferring job that times out is `failed` (its output transfer cancelled) and retried;
//! - a replayed job (`panda.replay`) is left alone: its fate is in its record (a job PanDA
//!   reassigned is a record of its own); it is not in `live`, though it counts in the
//!   (PQ, gshare) queue lengths fast rebrokerage reads;
//! - a kill command to a running payload is not modelled: pilots heartbeat every 30 min in PanDA,
//!   so the model's running jobs never miss a heartbeat, and the 21-day running limit is beyond a
//!   simulated week (the count of such commands is kept in `kill_commands`).

use std::collections::BTreeMap;

use crate::engine::SimTime;
use crate::panda::timeouts::{
    self, JobStatus as PStatus, JobTimes, QueueStatus as TStatus, QueueTimes, TimeoutEffect,
    disable_reassign_from_catchall,
};
use crate::panda::timeouts::{ShareQueueStats, fast_rebrokerage};
use crate::wms::Ctx;

use super::db::Db;
use super::setup::Statics;
use super::tables::PJob;

/// What copyArchive did over a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopyArchiveCounters {
    /// Actions by rule (PanDA's rule name).
    pub by_rule: BTreeMap<String, u64>,
    pub cycles: u64,
    /// Queued jobs closed and regenerated for another PQ (timeout rules).
    pub reassigned: u64,
    /// Jobs reassigned by fast rebrokerage.
    pub fast_rebrokered: u64,
    /// Queued jobs killed (closed) by a timeout.
    pub killed: u64,
    /// Transferring jobs failed by the transfer timeout.
    pub transfer_timeouts: u64,
    /// Kill commands to running payloads (not applied, see the module doc).
    pub kill_commands: u64,
}

fn queued(s: PStatus) -> bool {
    matches!(s, PStatus::Defined | PStatus::Assigned | PStatus::Activated)
}

/// What the rules read of job `j` at `now`, and whether its pilot heartbeats (sent, starting,
/// running: the pilot heartbeats every 30 min, so its row is fresh at every cycle).
fn job_times(j: &PJob, now: SimTime) -> (JobTimes, bool) {
    let fresh = matches!(j.status, PStatus::Sent | PStatus::Starting | PStatus::Running);
    let times = JobTimes {
        status: j.status,
        label: j.label,
        current_priority: j.priority,
        creation_time: j.creation,
        modification_time: if fresh { now } else { j.state_change },
        state_change_time: j.state_change,
        start_time: j.times.running,
        end_time: j.times.transferring,
        ..JobTimes::default()
    };
    (times, fresh)
}

/// copyArchive's own state: what it did.
#[derive(Debug, Default)]
pub struct CopyArchive {
    pub counters: CopyArchiveCounters,
}

impl CopyArchive {
    /// One copyArchive cycle.
    pub fn cycle(&mut self, st: &Statics, db: &mut Db, ctx: &mut dyn Ctx) {
        let now = ctx.now();
        self.counters.cycles += 1;
        let th = st.cfg.timeout_params().resolve();
        let queue_times: Vec<QueueTimes> = st
            .cfg
            .queues
            .iter()
            .enumerate()
            .map(|(q, pq)| QueueTimes {
                status: pq.status.as_str().parse().unwrap_or(TStatus::Other),
                disable_reassign: disable_reassign_from_catchall(Some(&pq.catchall)),
                last_start: db.site.last_start[q],
                heartbeat: Default::default(),
                // Left false (the job itself selects its PQ when it is stale). The skips of
                // `check_until` hold only while every field here but `last_start` stays as it
                // is, so a per-cycle value would need the memo reset when it changes.
                has_stale_high_prio_job: false,
            })
            .collect();
        let jobs = &db.tables.jobs;
        db.tables.live.retain(|&i| {
            !matches!(
                jobs[i as usize].status,
                PStatus::Finished | PStatus::Failed | PStatus::Closed | PStatus::Cancelled
            )
        });
        let live = std::mem::take(&mut db.tables.live);
        for &i in &live {
            let j = &db.tables.jobs[i as usize];
            let queue = &queue_times[j.queue as usize];
            if now <= db.tables.quiet_until[i as usize] {
                debug_assert_eq!(
                    timeouts::check_resolved(&th, &job_times(j, now).0, queue, now),
                    None,
                    "job {i} skipped while a rule fires"
                );
                continue;
            }
            let (times, fresh) = job_times(j, now);
            let action = match timeouts::check_until(&th, &times, queue, now, fresh) {
                Ok(action) => action,
                Err(until) => {
                    db.tables.quiet_until[i as usize] = until;
                    continue;
                }
            };
            let status = j.status;
            *self.counters.by_rule.entry(action.rule.to_string()).or_default() += 1;
            let worker = db.workers.worker_of(i);
            match &action.effect {
                TimeoutEffect::Close { .. } if queued(status) || worker.is_some() => {
                    let reassign = action.reassigns();
                    // A push worker's job (`starting`): Harvester kills the worker of a killed job.
                    if let Some(p) = worker {
                        db.workers.unbind(p);
                        ctx.cancel_pilot(p);
                    }
                    db.close(ctx, i);
                    if reassign {
                        self.counters.reassigned += 1;
                        db.tables.regenerate(i);
                    } else {
                        self.counters.killed += 1;
                        db.tables.retry_or_fail(i);
                    }
                }
                TimeoutEffect::TransferFailed { .. } | TimeoutEffect::Fail { .. }
                    if status == PStatus::Transferring =>
                {
                    if let Some(t) = db.tables.jobs[i as usize].output_transfer.take() {
                        ctx.cancel_transfer(t);
                    }
                    db.tables.set_status(i, PStatus::Failed, now);
                    self.counters.transfer_timeouts += 1;
                    db.tables.retry_or_fail(i);
                }
                _ => self.counters.kill_commands += 1,
            }
        }
        db.tables.live = live;
        self.fast_rebrokerage(st, db, ctx);
    }

    /// Fast rebrokerage (copyArchive L521-633): per (PQ, gshare) with nq = defined + assigned +
    /// activated + starting, nr = running, the lowest-PandaID queued jobs over the limits are
    /// reassigned. Starting jobs are already in a pilot here, so only defined/assigned/activated
    /// ones are taken.
    fn fast_rebrokerage(&mut self, st: &Statics, db: &mut Db, ctx: &mut dyn Ctx) {
        let params = st.cfg.timeout_params();
        let mut per_share: BTreeMap<usize, ShareQueueStats> = BTreeMap::new();
        for lc in &db.tables.leaf_counts {
            for (leaf, c) in lc.iter().enumerate() {
                let s = per_share.entry(leaf).or_default();
                s.nq += c.defined + c.assigned + c.activated + c.starting;
                s.nr += c.running;
            }
        }
        for q in 0..st.cfg.queues.len() {
            let slots = st.cfg.queues[q].num_slots.is_some();
            for leaf in 0..st.leaves.len() {
                let c = db.tables.leaf_counts[q][leaf];
                let pq = ShareQueueStats { nq: c.defined + c.assigned + c.activated + c.starting, nr: c.running };
                if pq.nq == 0 {
                    continue;
                }
                let total = per_share.get(&leaf).map_or(0, |s| s.nq);
                let name = &st.leaves[leaf].name;
                let Some(a) = fast_rebrokerage(&params, name, pq, total, slots) else { continue };
                let jobs = &db.tables.jobs;
                let mut victims: Vec<(crate::ids::JobId, u32)> = db
                    .tables
                    .live
                    .iter()
                    .map(|&i| (jobs[i as usize].job, i))
                    .filter(|&(_, i)| {
                        let j = &jobs[i as usize];
                        usize::from(j.queue) == q && usize::from(j.leaf) == leaf && queued(j.status)
                    })
                    .collect();
                victims.sort_unstable();
                for &(_, i) in victims.iter().take(a.n_jobs as usize) {
                    db.close(ctx, i);
                    db.tables.regenerate(i);
                    self.counters.fast_rebrokered += 1;
                }
            }
        }
    }
}
