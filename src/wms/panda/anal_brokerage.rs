//! Analysis brokerage in JEDI's JobGenerator: the analysis throttle and `panda::anal_broker`
//! for one task's bunch (reference §4), with the per-user job table it reads, built once per
//! JobGenerator cycle from the job table and `SiteData` (`site_data`).

use std::collections::BTreeMap;

use crate::engine::{RngStreams, SimDuration, SimRng};
use crate::panda::anal_broker::{self, Outcome};
use crate::panda::job_broker::{JobCounts, SiteCandidate, SitePicker};
use crate::panda::timeouts::JobStatus as PStatus;
use crate::scenario::Scenario;
use crate::wms::Ctx;

use super::db::{Db, snapshot};
use super::record::{DecisionKind, Placement};
use super::setup::Statics;
use super::tables::Tables;
use super::view::anal::AnalView;
use super::view::anal_cycle::{AnalCycle, AnalDynamic, AnalTaskState, UserJobs};

/// What analysis brokerage reads that is computed once per JobGenerator cycle (PanDA reads it
/// from its tables at the start of the cycle): the users' job table, pilot requests, job starts,
/// and the cycle's aggregates.
#[derive(Debug)]
struct AnalCache {
    users: Vec<UserJobs>,
    requests: Vec<u64>,
    started: Vec<u64>,
    cycle: AnalCycle,
}

/// Analysis brokerage's own state: its view, the current cycle's snapshot and its draws.
pub struct AnalBrokerage {
    view: AnalView,
    cache: Option<AnalCache>,
    rng: SimRng,
}

/// The users' job table: one row per (user, working group, PQ, leaf, cores) of the live
/// analysis jobs, sorted by user.
fn user_jobs(st: &Statics, view: &AnalView, tables: &Tables) -> Vec<UserJobs> {
    type Key = (usize, Option<usize>, usize, usize, u32);
    let mut rows: BTreeMap<Key, JobCounts> = BTreeMap::new();
    for &i in &tables.live {
        let j = &tables.jobs[i as usize];
        if !j.label.is_analysis() {
            continue;
        }
        let k = usize::from(tables.tasks[j.task as usize].stream) - st.cfg.tasks.len();
        let Some(s) = view.streams.get(k) else { continue };
        let c = rows.entry((s.user, s.group, usize::from(j.queue), usize::from(j.leaf), j.cores)).or_default();
        match j.status {
            PStatus::Defined => c.defined += 1,
            PStatus::Assigned => c.assigned += 1,
            PStatus::Activated => c.activated += 1,
            PStatus::Sent | PStatus::Starting => c.starting += 1,
            PStatus::Running => c.running += 1,
            PStatus::Transferring => c.transferring += 1,
            _ => {}
        }
    }
    rows.into_iter()
        .map(|((user, working_group, queue, leaf, cores), counts)| UserJobs {
            user,
            working_group,
            queue,
            leaf,
            cores,
            counts,
        })
        .collect()
}

impl AnalBrokerage {
    pub fn new(scenario: &Scenario, rngs: &RngStreams) -> Self {
        AnalBrokerage { view: AnalView::new(scenario), cache: None, rng: rngs.stream("panda/anal_broker") }
    }

    /// A JobGenerator cycle begins: the snapshot is read again at its first analysis task.
    pub fn new_cycle(&mut self) {
        self.cache = None;
    }

    /// Throttle and broker `want` jobs of analysis task `id`: the candidates to split over, or
    /// `None` (throttled or pending, recorded).
    pub fn broker(&mut self, st: &Statics, db: &mut Db, ctx: &dyn Ctx, id: u32, want: u64) -> Option<Placement> {
        let now = ctx.now();
        let nq = st.cfg.queues.len();
        let k = usize::from(db.tables.tasks[id as usize].stream) - st.cfg.tasks.len();
        let (queued, running) = db.workers.counts();
        if self.cache.is_none() {
            let users = user_jobs(st, &self.view, &db.tables);
            let requests: Vec<u64> = (0..nq)
                .map(|q| {
                    let c = &db.tables.counts[q];
                    db.site.gets.last_hours(q, now, 3) + 6 * (c.running + c.starting)
                })
                .collect();
            let started: Vec<u64> = (0..nq).map(|q| db.site.starts.rate_window(q, now)).collect();
            self.view.refresh_space(ctx.storages());
            let d = snapshot(&db.tables, &db.site, ctx, &queued, &running);
            let a = AnalDynamic {
                user_jobs: &users,
                pilot_requests_3h: &requests,
                started_in_window: &started,
                ..AnalDynamic::default()
            };
            let cycle = AnalCycle::new(&self.view, &d, &a);
            self.cache = Some(AnalCache { users, requests, started, cycle });
        }
        let t = &db.tables.tasks[id as usize];
        let used = t.used_queues.clone();
        let since = t.last_brokered.map(|b| (now - b).as_secs_f64() / 3600.0);
        let (outcome, throttled) = {
            let d = snapshot(&db.tables, &db.site, ctx, &queued, &running);
            let cache = self.cache.as_ref().expect("built above");
            let a = AnalDynamic {
                user_jobs: &cache.users,
                pilot_requests_3h: &cache.requests,
                started_in_window: &cache.started,
                ..AnalDynamic::default()
            };
            let state = AnalTaskState {
                jobs_to_generate: want,
                scouting: false,
                hours_since_last_success: since,
                used_queues: &used,
                recent: &[],
            };
            let input = self.view.task_input(&cache.cycle, &d, &a, k, &state)?;
            let params = &self.view.params;
            match anal_broker::throttle(params, &input.throttle_input()) {
                Some(reason) => (None, Some(reason.to_string())),
                None => (Some(anal_broker::broker(params, &input.input(), &mut self.rng)), None),
            }
        };
        let record = &mut db.record;
        let dec = record.decision(now, DecisionKind::Analysis, id);
        if let Some(reason) = throttled {
            // SC_WAITING: tried again next cycle, not a pending brokerage.
            record.set_pending(dec, &format!("throttled: {reason}"));
            return None;
        }
        let b = outcome?;
        for s in &b.skips {
            let name = &st.cfg.queues[s.queue].name;
            record.skipped(dec, name, format_args!("loop {}", s.loop_index), &s.reason, false);
        }
        let chosen = match &b.outcome {
            Outcome::Selected(c) if !c.is_empty() => c.clone(),
            _ => {
                let why = format!("no candidate PQ: pending for {} min", anal_broker::PENDING_RETRY_S / 60);
                record.set_pending(dec, &why);
                db.tables.tasks[id as usize].retry_at = now + SimDuration::from_secs(anal_broker::PENDING_RETRY_S);
                return None;
            }
        };
        db.tables.tasks[id as usize].last_brokered = Some(now);
        let rows: Vec<usize> =
            chosen.iter().map(|c| record.weighed(dec, &st.cfg.queues[c.queue].name, c.weight, false)).collect();
        let picker = SitePicker::new(
            chosen
                .iter()
                .map(|c| SiteCandidate {
                    queue: c.queue,
                    weight: c.weight,
                    n_queued_jobs: None,
                    n_assigned_jobs: None,
                    n_running_jobs_cap: None,
                })
                .collect(),
        );
        let to_queue: Vec<usize> = chosen.iter().map(|c| c.queue).collect();
        Some(Placement { decision: dec, picker, to_queue, rows })
    }
}
