//! Analysis job generation: JEDI's analysis throttle and `panda::anal_broker` for one task's
//! bunch (reference §4), with the per-user job table and the per-PQ pilot activity the broker
//! reads, kept here.
//!
//! - `pilot_requests_3h[q]` (PanDA's `SiteData` getJob + updateJob over 3 h): the getJob
//!   requests the PQ's pilots made in the last 3 h, plus one updateJob per running job per
//!   30 min (a pilot's heartbeat period) over the same 3 h, i.e. 6 per job running now.
//! - `started_in_window[q]`: jobs started in `getSiteToRunRateStats`' window, the same
//!   `[now − 6 h, now − 5 min)` rounded down to 10 minutes that `site_to_running_window` divides
//!   by (reference §4, Analysis Stabilizer: `startTime>=:startTimeMin AND
//!   startTime<:startTimeMax`; seed 004: "jobs with starttime within last 6 hours"), counted from
//!   10-minute buckets. The window's bounds are bucket bounds, so the count is exact.

use std::collections::BTreeMap;

use crate::engine::SimTime;
use crate::panda::anal_broker::{self, Outcome};
use crate::panda::job_broker::{JobCounts, SiteCandidate, SitePicker};
use crate::panda::timeouts::JobStatus as PStatus;
use crate::wms::Ctx;

use super::PandaWms;
use super::record::DecisionKind;
use super::view::anal_cycle::{AnalCycle, AnalDynamic, AnalTaskState, UserJobs, site_to_running_window};

/// Milliseconds per bucket of the activity windows (10 minutes: `getSiteToRunRateStats` rounds
/// its bounds to 10 minutes).
const BUCKET_MS: u64 = 600_000;
/// Buckets kept: the 36 of the longest window (6 h) and the current one, which the window never
/// includes but which receives events meanwhile. With fewer, the current bucket would take the
/// slot of the window's oldest.
const BUCKETS: usize = 37;

/// Counts per PQ in 10-minute buckets over the last 6 h and the current bucket.
#[derive(Debug, Clone, Default)]
pub struct Activity {
    /// `[q][bucket % BUCKETS]` with the bucket number it holds.
    buckets: Vec<[(u64, u64); BUCKETS]>,
}

impl Activity {
    pub fn new(queues: usize) -> Self {
        Self { buckets: vec![[(u64::MAX, 0); BUCKETS]; queues] }
    }

    /// One event of PQ `q` at `now` (events come in time order).
    pub fn add(&mut self, q: usize, now: SimTime) {
        let b = now.as_millis() / BUCKET_MS;
        let slot = &mut self.buckets[q][(b % BUCKETS as u64) as usize];
        if slot.0 != b {
            *slot = (b, 0);
        }
        slot.1 += 1;
    }

    /// Events of PQ `q` in the buckets `[from, to)` (bucket numbers; at most `BUCKETS` back).
    fn sum(&self, q: usize, from: u64, to: u64) -> u64 {
        debug_assert!(to.saturating_sub(from) <= BUCKETS as u64, "a window longer than the buckets kept");
        self.buckets[q].iter().filter(|(b, _)| *b != u64::MAX && *b >= from && *b < to).map(|(_, n)| n).sum()
    }

    /// Over the last `hours` up to now (the current bucket and the `6·hours − 1` before it).
    pub fn last_hours(&self, q: usize, now: SimTime, hours: u64) -> u64 {
        let b = now.as_millis() / BUCKET_MS;
        self.sum(q, (b + 1).saturating_sub(hours * 6), b + 1)
    }

    /// Events of PQ `q` in `getSiteToRunRateStats`' window at `now`
    /// ([`site_to_running_window`]: 35 or 36 whole buckets, the divisor's hours).
    pub fn rate_window(&self, q: usize, now: SimTime) -> u64 {
        let (lo, hi, _) = site_to_running_window(now);
        self.sum(q, lo.as_millis() / BUCKET_MS, hi.as_millis() / BUCKET_MS)
    }
}

/// What analysis brokerage reads that is computed once per JobGenerator cycle (PanDA reads it
/// from its tables at the start of the cycle): the users' job table, pilot requests, job starts,
/// and the cycle's aggregates.
#[derive(Debug)]
pub struct AnalCache {
    users: Vec<UserJobs>,
    requests: Vec<u64>,
    started: Vec<u64>,
    cycle: AnalCycle,
}

impl PandaWms {
    /// The users' job table: one row per (user, working group, PQ, leaf, cores), sorted by user.
    fn user_jobs(&self) -> Vec<UserJobs> {
        type Key = (usize, Option<usize>, usize, usize, u32);
        let mut rows: BTreeMap<Key, JobCounts> = BTreeMap::new();
        for &i in &self.live {
            let j = &self.tables.jobs[i as usize];
            if !j.label.is_analysis() {
                continue;
            }
            let k = usize::from(self.tables.tasks[j.task as usize].stream) - self.cfg.tasks.len();
            let Some(s) = self.anal_view.streams.get(k) else { continue };
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

    /// Throttle and broker `want` jobs of analysis task `id`, then split them; jobs made.
    pub(super) fn generate_analysis(&mut self, ctx: &mut dyn Ctx, id: u32, want: u64) -> u64 {
        let now = ctx.now();
        let nq = self.cfg.queues.len();
        let k = usize::from(self.tables.tasks[id as usize].stream) - self.cfg.tasks.len();
        let (queued, running) = self.worker_counts();
        if self.anal_cache.is_none() {
            let users = self.user_jobs();
            let requests: Vec<u64> = (0..nq)
                .map(|q| {
                    let c = &self.tables.counts[q];
                    self.gets.last_hours(q, now, 3) + 6 * (c.running + c.starting)
                })
                .collect();
            let started: Vec<u64> = (0..nq).map(|q| self.starts.rate_window(q, now)).collect();
            self.anal_view.refresh_space(ctx.storages());
            let d = super::snapshot(&self.tables, &self.last_start, ctx, &queued, &running);
            let a = AnalDynamic {
                user_jobs: &users,
                pilot_requests_3h: &requests,
                started_in_window: &started,
                ..AnalDynamic::default()
            };
            let cycle = AnalCycle::new(&self.anal_view, &d, &a);
            self.anal_cache = Some(AnalCache { users, requests, started, cycle });
        }
        let t = &self.tables.tasks[id as usize];
        let used = t.used_queues.clone();
        let since = t.last_brokered.map(|b| (now - b).as_secs_f64() / 3600.0);
        let (outcome, throttled) = {
            let d = super::snapshot(&self.tables, &self.last_start, ctx, &queued, &running);
            let cache = self.anal_cache.as_ref().expect("built above");
            let a = AnalDynamic {
                user_jobs: &cache.users,
                pilot_requests_3h: &cache.requests,
                started_in_window: &cache.started,
                ..AnalDynamic::default()
            };
            let cycle = &cache.cycle;
            let state = AnalTaskState {
                jobs_to_generate: want,
                scouting: false,
                hours_since_last_success: since,
                used_queues: &used,
                recent: &[],
            };
            let Some(input) = self.anal_view.task_input(cycle, &d, &a, k, &state) else { return 0 };
            let params = &self.anal_view.params;
            match anal_broker::throttle(params, &input.throttle_input()) {
                Some(reason) => (None, Some(reason.to_string())),
                None => (Some(anal_broker::broker(params, &input.input(), &mut self.rng_anal)), None),
            }
        };
        let dec = self.record.decision(now, DecisionKind::Analysis, id);
        if let Some(reason) = throttled {
            // SC_WAITING: tried again next cycle, not a pending brokerage.
            self.record.set_pending(dec, &format!("throttled: {reason}"));
            return 0;
        }
        let Some(b) = outcome else { return 0 };
        for s in &b.skips {
            let name = &self.cfg.queues[s.queue].name;
            self.record.skipped(dec, name, format_args!("loop {}", s.loop_index), &s.reason, false);
        }
        let chosen = match &b.outcome {
            Outcome::Selected(c) if !c.is_empty() => c.clone(),
            _ => {
                let why = format!("no candidate PQ: pending for {} min", anal_broker::PENDING_RETRY_S / 60);
                self.record.set_pending(dec, &why);
                self.tables.tasks[id as usize].retry_at =
                    now + crate::engine::SimDuration::from_secs(anal_broker::PENDING_RETRY_S);
                return 0;
            }
        };
        self.tables.tasks[id as usize].last_brokered = Some(now);
        let rows: Vec<usize> =
            chosen.iter().map(|c| self.record.weighed(dec, &self.cfg.queues[c.queue].name, c.weight, false)).collect();
        let mut picker = SitePicker::new(
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
        let made = self.split(ctx, id, want, dec, &mut picker, &to_queue, &rows);
        let t = &mut self.tables.tasks[id as usize];
        for &q in &to_queue {
            if !t.used_queues.contains(&q) {
                t.used_queues.push(q);
            }
        }
        made
    }
}

#[cfg(test)]
#[path = "analysis_tests.rs"]
mod tests;
