//! The analysis brokerage view, per cycle: [`AnalCycle`] (built once per brokerage cycle from
//! [`Dynamic`] and [`AnalDynamic`]) and [`AnalView::task_input`] (per task: the
//! `AnalBrokerInput` of `panda::anal_broker::broker` and the `ThrottleInput` of
//! `panda::anal_broker::throttle`). What each count is in PanDA:
//!
//! | input | PanDA source | here |
//! |---|---|---|
//! | `QueueStats.n_running … n_starting` | `getJobStatisticsByGlobalShare`, task's gshare | `queue_gshare_jobs[q][leaf]` |
//! | `n_running_all` | `getNumJobs(…, 'running')`, every gshare | `queue_jobs[q].running` |
//! | `site_to_running_rate` | `getSiteToRunRateStats` (jobs started in the window ÷ its hours) | `started_in_window[q]` ÷ [`site_to_running_window`] |
//! | `n_workers` | `ups_load_worker_stats`, running + submitted | `workers_queued[q].n + workers_running[q].n` |
//! | `n_pilot` | `getCurrentSiteData` getJob + updateJob over 3 h | `pilot_requests_3h[q]` |
//! | `site_class` | metric `analy_site_eval` | `site_classes[q]` (none: mid) |
//! | `user` | `getUsersJobsStats` (jobsActive4 only: queued = activated + starting) | the user's rows |
//! | `users` | the same, every user of the gshare; `_total.nRunning` | all rows |
//! | `resource_type` | `getJobStatisticsByResourceTypeSite` | `rt_jobs` |
//! | `n_failed/closed/finished`, `used_by_task` | `getFailureCountsForTask_JEDI`, `getSitesUsedByTask_JEDI` | [`AnalTaskState`] |
//! | `gshare_queued_total/running_total` | `get_total_nq_nr_ratio` over every PQ | Σ `queue_gshare_jobs[·][leaf]` |
//! | throttle `counts` | `countJobsPerTarget_JEDI` (user: jobsDefined4 any group ∪ jobsActive4 without group) | the rows |
//! | throttle `share_usage` | metric `gshare_preference` (`usage_perc`, `L1 User Analysis` `eqiv_usage_perc`) | [`share_usages`] |
//!
//! The model has no `sent`, `throttled` nor `pmerge` jobs, no Rucio quota (`Quota::Ok`) and no
//! merge chunks; a task's `user_eval` is the caller's (`analy_user_eval`), none by default.

use std::collections::BTreeMap;

use super::anal::AnalView;
use super::dynamic::Dynamic;
use crate::engine::SimTime;
use crate::panda::anal_broker::{
    AnalBrokerInput, AnalQueue, AnalTask, GshareUsers, JobCounts as TargetCounts, QueueStats, Quota, Replica,
    ResourceTypeStats, ShareUsage, SiteClass, ThrottleInput, UserEval, UserQueueStats,
};
use crate::panda::gshare::{Usage, sorted_leaves};
use crate::panda::job_broker::JobCounts;

/// The L1 share whose `eqiv_usage_perc` the class throttle also reads (hard-coded in the broker).
pub const USER_ANALYSIS_L1: &str = "L1 User Analysis";
/// `usage_perc` of a share without target (`gshare_preference`).
pub const NO_TARGET_USAGE: f64 = 999_999.0;
/// Below this usage an L1 share may be idle (`idle_threshold_perc`).
pub const IDLE_THRESHOLD: f64 = 0.85;
/// `getSiteToRunRateStats` window: start times in `[now − 6 h, now − 5 min)`, both floored to
/// 10 minutes.
pub const RATE_WINDOW_S: u64 = 21_600;
pub const RATE_CUTOFF_S: u64 = 300;
const TEN_MINUTES_MS: u64 = 600_000;

/// One row of the users' job table: the `prodSourceLabel = user` jobs of one user, working
/// group, PQ, gshare leaf and core count, by status (the WMS keeps it; rows **sorted by user**,
/// any order within a user; one row per key).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UserJobs {
    /// Index in [`AnalView::users`].
    pub user: usize,
    /// Index in [`AnalView::groups`] of the jobs' `workingGroup`, `None` for personal jobs.
    pub working_group: Option<usize>,
    pub queue: usize,
    pub leaf: usize,
    /// The jobs' `coreCount` (the caps count cores).
    pub cores: u32,
    pub counts: JobCounts,
}

/// What the analysis view needs beyond [`Dynamic`] (filled by the WMS every cycle; a slice
/// that is too short or empty reads as the zero / "no data" of its field).
#[derive(Debug, Clone, Copy, Default)]
pub struct AnalDynamic<'a> {
    /// The users' jobs, see [`UserJobs`].
    pub user_jobs: &'a [UserJobs],
    /// `[q]`: pilot `getJob` + `updateJob` requests from PQ `q` in the last 3 h (`SiteData`).
    /// 0 fails the broker's pilot check.
    pub pilot_requests_3h: &'a [u64],
    /// `[q]`: jobs of PQ `q` (any label) whose start time is in [`site_to_running_window`] and
    /// that are still in the active tables (running, holding, transferring; finished or
    /// cancelled until archived).
    pub started_in_window: &'a [u64],
    /// `[q]`: `analy_site_eval` class (`panda::anal_broker::classify_sites`); none = mid.
    pub site_classes: &'a [Option<SiteClass>],
    /// `[user]`: `analy_user_eval` (`panda::anal_broker::user_eval`); none = no evaluation.
    pub user_evals: &'a [Option<UserEval>],
    /// `[(q · n_leaves + leaf) · n_types + t]`: jobs of resource type `t` (see
    /// `harvester::job_resource_type`); empty: no statistics (`cap_rt` never fires).
    pub rt_jobs: &'a [JobCounts],
    /// `[leaf]`: HS06 of the running (`executing`) and activated (`queued`) jobs of each leaf,
    /// as `JOBS_SHARE_STATS` sums the jobs' `hs06`; empty (or short): jobs × PQ `corecount ×
    /// corepower` (exact for non-UCORE PQs, whose jobs all have the PQ's cores).
    pub leaf_hs06: &'a [Usage],
}

/// The start-time window of `getSiteToRunRateStats` at `now` (simulation time 0 is taken to be
/// a round 10 minutes) and its length in hours.
pub fn site_to_running_window(now: SimTime) -> (SimTime, SimTime, f64) {
    let floor = |ms: u64| ms - ms % TEN_MINUTES_MS;
    let now = now.as_millis();
    let hi = floor(now.saturating_sub(RATE_CUTOFF_S * 1000));
    let lo = floor(now.saturating_sub(RATE_WINDOW_S * 1000));
    (SimTime::from_millis(lo), SimTime::from_millis(hi), (hi - lo) as f64 / 3_600_000.0)
}

/// What every task of a cycle shares.
#[derive(Debug, Clone, Default)]
pub struct AnalCycle {
    /// Hours of the to-running window.
    pub window_hours: f64,
    /// `[leaf]`: defined + assigned + activated + starting, and running, over every PQ.
    pub leaf_queued: Vec<u64>,
    pub leaf_running: Vec<u64>,
    /// `[q · n_leaves + leaf]`: users with jobsActive4 jobs, and their running jobs.
    users_at: Vec<(u32, u64)>,
    /// `[user]` / `[group]`: `countJobsPerTarget_JEDI`.
    pub user_caps: Vec<TargetCounts>,
    pub group_caps: Vec<TargetCounts>,
    /// `[leaf]`: the `gshare_preference` metric; `None` when the collector fails this cycle.
    pub share_usage: Option<Vec<ShareUsage>>,
}

/// defined + assigned + activated + starting.
fn queued(c: &JobCounts) -> u64 {
    c.defined.saturating_add(c.assigned).saturating_add(c.activated).saturating_add(c.starting)
}

fn add(c: &mut TargetCounts, queued: u64, running: u64, cores: u32) {
    let k = u64::from(cores);
    c.n_queued_jobs = c.n_queued_jobs.saturating_add(queued);
    c.n_queued_cores = c.n_queued_cores.saturating_add(queued.saturating_mul(k));
    c.n_run_jobs = c.n_run_jobs.saturating_add(running);
    c.n_run_cores = c.n_run_cores.saturating_add(running.saturating_mul(k));
}

/// In jobsActive4 (the tables `getUsersJobsStats` reads): activated, starting, running,
/// transferring.
fn active(c: &JobCounts) -> u64 {
    c.activated.saturating_add(c.starting).saturating_add(c.running).saturating_add(c.transferring)
}

impl AnalCycle {
    /// Everything per cycle at `d.now` (O(rows + queues × leaves)).
    pub fn new(view: &AnalView, d: &Dynamic<'_>, a: &AnalDynamic<'_>) -> Self {
        let n_l = view.leaves.len();
        let n_q = view.queue_side.len();
        let (mut leaf_queued, mut leaf_running) = (vec![0u64; n_l], vec![0u64; n_l]);
        for per_leaf in d.queue_gshare_jobs.iter().take(n_q) {
            for (l, c) in per_leaf.iter().enumerate().take(n_l) {
                leaf_queued[l] = leaf_queued[l].saturating_add(queued(c));
                leaf_running[l] = leaf_running[l].saturating_add(c.running);
            }
        }
        let mut users_at = vec![(0u32, 0u64); n_q * n_l];
        let mut last_user = vec![usize::MAX; n_q * n_l];
        let mut user_caps = vec![TargetCounts::default(); view.users.len()];
        let mut group_caps = vec![TargetCounts::default(); view.groups.len()];
        for r in a.user_jobs {
            let c = &r.counts;
            if r.queue < n_q && r.leaf < n_l && active(c) > 0 {
                let cell = r.queue * n_l + r.leaf;
                if last_user[cell] != r.user {
                    last_user[cell] = r.user;
                    users_at[cell].0 = users_at[cell].0.saturating_add(1);
                }
                users_at[cell].1 = users_at[cell].1.saturating_add(c.running);
            }
            if let Some(u) = user_caps.get_mut(r.user) {
                add(u, c.defined.saturating_add(c.assigned), 0, r.cores);
                if r.working_group.is_none() {
                    add(u, c.activated.saturating_add(c.starting), c.running, r.cores);
                }
            }
            if let Some(g) = r.working_group.and_then(|g| group_caps.get_mut(g)) {
                add(g, queued(c), c.running, r.cores);
            }
        }
        Self {
            window_hours: site_to_running_window(d.now).2,
            leaf_queued,
            leaf_running,
            users_at,
            user_caps,
            group_caps,
            share_usage: share_usages(view, d, a),
        }
    }
}

/// The `gshare_preference` metric (metric_collector.py L476-571) of every leaf: `usage_perc =
/// running / target` (999999 without target) from `getGShareStatus` ([`sorted_leaves`]), and for
/// `User Analysis` the `eqiv_usage_perc` of `L1 User Analysis` (a top-level share of that name)
/// after idle L1 shares (usage < 0.85 and `min(target, max(running, queued/2))` < target) lend
/// their target to busy ones. A busy L1 share without target divides by zero in the collector,
/// which then stores nothing: `None` (no class throttle), e.g. while nothing runs at all.
pub fn share_usages(view: &AnalView, d: &Dynamic<'_>, a: &AnalDynamic<'_>) -> Option<Vec<ShareUsage>> {
    let n_l = view.leaves.len();
    let usage: Vec<Usage> = if a.leaf_hs06.len() >= n_l {
        a.leaf_hs06[..n_l].to_vec()
    } else {
        let mut u = vec![Usage::default(); n_l];
        for (q, per_leaf) in d.queue_gshare_jobs.iter().enumerate() {
            let hs = view.queue_side.get(q).map_or(0.0, |s| s.hs06_per_job);
            for (l, c) in per_leaf.iter().enumerate().take(n_l) {
                u[l].executing += c.running as f64 * hs;
                u[l].queued += c.activated as f64 * hs;
            }
        }
        u
    };
    let map: BTreeMap<String, Usage> = view.leaves.iter().zip(&usage).map(|(l, u)| (l.name.clone(), *u)).collect();
    let status = sorted_leaves(&view.gshares, &map);
    // (executing, pledged, queued) per leaf index: one pass matching names.
    let mut by_leaf: Vec<Option<(f64, f64, f64)>> = vec![None; n_l];
    for st in &status {
        if let Some(i) = view.leaves.iter().position(|l| l.name == st.name) {
            by_leaf[i] = Some((st.executing, st.pledged, st.queued));
        }
    }
    let perc = |run: f64, target: f64| if target > 0.0 { run / target } else { NO_TARGET_USAGE };
    let total_hs: f64 = status.iter().map(|s| s.pledged).sum();
    // L1 shares: (is "L1 User Analysis", running, target, queued).
    let l1: Vec<(bool, f64, f64, f64)> = view
        .l1_leaves
        .iter()
        .map(|(name, idx)| {
            let vals = || idx.iter().filter_map(|&i| by_leaf.get(i).copied().flatten());
            let sum = |f: fn((f64, f64, f64)) -> f64| vals().map(f).sum::<f64>();
            (name == USER_ANALYSIS_L1, sum(|x| x.0), sum(|x| x.1), sum(|x| x.2))
        })
        .collect();
    let proj = |&(_, run, target, queued): &(bool, f64, f64, f64)| target.min(run.max(queued / 2.0));
    let idle_total = total_hs - l1.iter().map(proj).sum::<f64>();
    let idle = |x: &(bool, f64, f64, f64)| perc(x.1, x.2) < IDLE_THRESHOLD && proj(x) < x.2;
    let busy_total: f64 = l1.iter().filter(|x| !idle(x)).map(|x| x.2).sum::<f64>() + 1.0;
    let mut ua_eqiv = None;
    for x in &l1 {
        let eqiv = if idle(x) {
            perc(x.1, x.2)
        } else {
            let target = x.2 + idle_total * x.2 / busy_total;
            if target == 0.0 {
                return None;
            }
            x.1 / target
        };
        if x.0 {
            ua_eqiv = Some(eqiv);
        }
    }
    Some(
        view.leaves
            .iter()
            .zip(&by_leaf)
            .enumerate()
            .map(|(i, (_, s))| ShareUsage {
                usage_perc: s.map_or(NO_TARGET_USAGE, |(run, target, _)| perc(run, target)),
                l1_eqiv_usage_perc: if Some(i) == view.user_analysis_leaf { ua_eqiv } else { None },
            })
            .collect(),
    )
}

/// A task's jobs at one PQ within `TW_DONE_JOB_STAT` (`getFailureCountsForTask_JEDI`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecentJobs {
    pub failed: u64,
    pub closed: u64,
    pub finished: u64,
}

/// What the WMS knows of one task this cycle.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnalTaskState<'a> {
    /// `N_j`: jobs JEDI would still generate for the task (a fresh task: `jobs_per_task`).
    pub jobs_to_generate: u64,
    /// The chunk is a scout chunk (`inputChunk.useScout()`: the task is still scouting).
    pub scouting: bool,
    /// Hours since `frozenTime`, the task's last successful brokerage; `None` = never.
    pub hours_since_last_success: Option<f64>,
    /// PQs where the task already has jobs (`getSitesUsedByTask_JEDI`).
    pub used_queues: &'a [usize],
    /// `(q, counts)` of the task's failed/closed/finished jobs within `TW_DONE_JOB_STAT` hours.
    pub recent: &'a [(usize, RecentJobs)],
}

/// Both inputs of one analysis task, ready for `anal_broker::throttle` and `broker`.
#[derive(Debug, Clone)]
pub struct AnalTaskInput<'v> {
    pub task: AnalTask,
    pub queues: &'v [AnalQueue],
    pub stats: Vec<QueueStats>,
    pub replicas: &'v [Replica],
    pub gshare_queued_total: u64,
    pub gshare_running_total: u64,
    /// The task has a workingGroup (the group's counts and caps).
    pub working_group: bool,
    /// `countJobsPerTarget_JEDI` of the user or the group.
    pub counts: TargetCounts,
    pub share_usage: Option<ShareUsage>,
    pub user_eval: Option<UserEval>,
}

impl AnalTaskInput<'_> {
    /// The broker's input.
    pub fn input(&self) -> AnalBrokerInput<'_> {
        AnalBrokerInput {
            task: &self.task,
            queues: self.queues,
            stats: &self.stats,
            replicas: self.replicas,
            gshare_queued_total: self.gshare_queued_total,
            gshare_running_total: self.gshare_running_total,
        }
    }

    /// The throttle's input (no merge chunks, no disk quota in the model).
    pub fn throttle_input(&self) -> ThrottleInput<'_> {
        ThrottleInput {
            gshare: &self.task.gshare,
            working_group: self.working_group,
            is_merging: false,
            counts: Some(self.counts),
            share_usage: self.share_usage,
            task_class: self.task.task_class,
            user_eval: self.user_eval,
            quota: Quota::Ok,
        }
    }
}

impl AnalView {
    /// The inputs of one task of stream `stream` (module doc; call [`AnalView::refresh_space`]
    /// first in the cycle). `None` for an unknown stream.
    pub fn task_input<'v>(
        &'v self,
        cycle: &AnalCycle,
        d: &Dynamic<'_>,
        a: &AnalDynamic<'_>,
        stream: usize,
        state: &AnalTaskState<'_>,
    ) -> Option<AnalTaskInput<'v>> {
        let s = self.streams.get(stream)?;
        let mut task = s.task.clone();
        task.n_jobs_to_submit = state.jobs_to_generate;
        task.use_scout = state.scouting;
        task.hours_since_last_success = state.hours_since_last_success;
        let (n_q, n_l, n_t) = (self.queue_side.len(), self.leaves.len(), self.types.len());
        let mut stats = vec![QueueStats::default(); n_q];
        for (q, st) in stats.iter_mut().enumerate() {
            if !self.queue_side.get(q).is_some_and(|x| x.analysis) {
                continue;
            }
            let g = s.leaf.and_then(|l| d.queue_gshare_jobs.get(q)?.get(l)).copied().unwrap_or_default();
            let (wq, wr) = (d.workers_queued.get(q).map_or(0, |w| w.n), d.workers_running.get(q).map_or(0, |w| w.n));
            let started = a.started_in_window.get(q).copied().unwrap_or(0);
            st.n_running = g.running;
            st.n_defined = g.defined;
            st.n_assigned = g.assigned;
            st.n_activated = g.activated;
            st.n_starting = g.starting;
            st.n_running_all = d.queue_jobs.get(q).map_or(0, |c| c.running);
            st.site_to_running_rate =
                (started > 0).then(|| if cycle.window_hours > 0.0 { started as f64 / cycle.window_hours } else { 0.0 });
            st.n_workers = Some(wq.saturating_add(wr)).filter(|&w| w > 0);
            st.n_pilot = a.pilot_requests_3h.get(q).copied().unwrap_or(0);
            st.site_class = a.site_classes.get(q).copied().flatten();
            if let Some(l) = s.leaf {
                let (n_users, n_running) = cycle.users_at.get(q * n_l + l).copied().unwrap_or_default();
                st.users = (n_users > 0).then_some(GshareUsers { n_users, n_running });
                if let Some(t) = s.resource_type {
                    let c = a.rt_jobs.get((q * n_l + l) * n_t + t).copied().unwrap_or_default();
                    let queued = queued(&c);
                    st.resource_type =
                        (queued > 0 || c.running > 0).then_some(ResourceTypeStats { running: c.running, queued });
                }
            }
            st.local_disk_bytes = s.local_disk_bytes.get(q).copied().unwrap_or(0);
            st.has_all_input_files = s.has_all_input_files.get(q).copied().unwrap_or(false);
        }
        // The task's user: a contiguous range of the user-sorted rows.
        let rows = a.user_jobs;
        let (lo, hi) = (rows.partition_point(|r| r.user < s.user), rows.partition_point(|r| r.user <= s.user));
        for r in rows.get(lo..hi).unwrap_or(&[]) {
            if Some(r.leaf) != s.leaf || active(&r.counts) == 0 {
                continue;
            }
            if let Some(st) = stats.get_mut(r.queue) {
                let u = st.user.get_or_insert(UserQueueStats::default());
                u.n_queue = u.n_queue.saturating_add(r.counts.activated.saturating_add(r.counts.starting));
                u.n_running = u.n_running.saturating_add(r.counts.running);
            }
        }
        for &(q, rj) in state.recent {
            if let Some(st) = stats.get_mut(q) {
                st.n_failed = rj.failed;
                st.n_closed = rj.closed;
                st.n_finished = rj.finished;
            }
        }
        for &q in state.used_queues {
            if let Some(st) = stats.get_mut(q) {
                st.used_by_task = true;
            }
        }
        let leaf_total = |v: &Vec<u64>| s.leaf.and_then(|l| v.get(l)).copied().unwrap_or(0);
        let counts = match s.group {
            Some(g) => cycle.group_caps.get(g).copied(),
            None => cycle.user_caps.get(s.user).copied(),
        };
        Some(AnalTaskInput {
            task,
            queues: &s.queues,
            stats,
            replicas: &s.replicas,
            gshare_queued_total: leaf_total(&cycle.leaf_queued),
            gshare_running_total: leaf_total(&cycle.leaf_running),
            working_group: s.group.is_some(),
            counts: counts.unwrap_or_default(),
            share_usage: s.leaf.and_then(|l| cycle.share_usage.as_ref()?.get(l).copied()),
            user_eval: a.user_evals.get(s.user).copied().flatten(),
        })
    }
}

#[cfg(test)]
#[path = "anal_tests.rs"]
mod tests;
