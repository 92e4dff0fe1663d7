//! The two rebrokerages of copyArchive: fast rebrokerage at PQs where nQueue/nRun overshoots
//! (L521-633; seed "fast rebrokerage") and the rebrokerage of analysis job groups waiting too
//! long (L1007-1198; reference §6 "ANALY_TIMEOUT").

use std::collections::BTreeMap;
use std::fmt;

use crate::engine::time::{SimDuration, SimTime};

use super::actions::{KillCode, TimeoutAction, TimeoutRule, kill_effect};
use super::inputs::{JobStatus, JobTimes, QueueStatus};
use super::params::TimeoutParams;
use super::{hours, hours_f64, older, py_float};

/// `FAST_REBRO_THRESHOLD_NQUEUE_<gshare>` stand-in when the key is unset: 10, dry run (L576-578).
pub const DRY_RUN_NQUEUE_LIMIT: f64 = 10.0;

/// One row of `JOBS_SHARE_STATS` / `JOBSDEFINED_SHARE_STATS` (`COMPUTINGSITE, JOBSTATUS,
/// GSHARE, SUM(NJOBS)`), with PQ and gshare as the caller's indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatsRow {
    pub queue: usize,
    pub gshare: usize,
    pub status: JobStatus,
    pub n_jobs: u64,
    /// The jobs' work queue has `queue_function = 'Resource'`: left out of the statistics.
    pub resource_work_queue: bool,
    /// The PQ is in `ATLAS_PANDA.HARVESTER_Slots`: left out (its nSlots intentionally makes
    /// nQueue large while nRun is small; seed 004).
    pub harvester_slots: bool,
}

/// Queued (defined + assigned + activated + starting) and running jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ShareQueueStats {
    pub nq: u64,
    pub nr: u64,
}

/// `statsPerPQ[pq][gshare]` and `statsPerShare[gshare]` (L539-551).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FastRebroStats {
    /// By (PQ, gshare); a pair with rows of other statuses only is present with zeros.
    pub per_queue: BTreeMap<(usize, usize), ShareQueueStats>,
    /// By gshare, over every PQ counted.
    pub per_share: BTreeMap<usize, ShareQueueStats>,
}

/// Sums the statistics rows as copyArchive does, leaving out Resource work queues and
/// Harvester-slot PQs (counts saturate instead of overflowing).
pub fn aggregate_share_stats(rows: &[StatsRow]) -> FastRebroStats {
    let mut out = FastRebroStats::default();
    for r in rows.iter().filter(|r| !r.resource_work_queue && !r.harvester_slots) {
        let pq = out.per_queue.entry((r.queue, r.gshare)).or_default();
        let share = out.per_share.entry(r.gshare).or_default();
        if r.status.is_queued_for_rebrokerage() {
            pq.nq = pq.nq.saturating_add(r.n_jobs);
            share.nq = share.nq.saturating_add(r.n_jobs);
        } else if r.status == JobStatus::Running {
            pq.nr = pq.nr.saturating_add(r.n_jobs);
            share.nr = share.nr.saturating_add(r.n_jobs);
        }
    }
    out
}

/// The three checks of one (PQ, gshare) with the limits used (L568-602).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FastRebroCheck {
    pub nq: u64,
    pub nr: u64,
    /// The gshare's queued jobs over every PQ counted.
    pub nq_total: u64,
    pub ratio_limit: f64,
    pub fraction_limit: f64,
    /// `FAST_REBRO_THRESHOLD_NQUEUE_<gshare>`, or 10 in a dry run.
    pub nqueue_limit: f64,
    /// The gshare has no threshold: overshoots are logged, nothing is reassigned.
    pub dry_run: bool,
    /// `nr × ratio < nq`.
    pub ratio_check: bool,
    /// `nq > limit`.
    pub stat_check: bool,
    /// `nq > nq_total × fraction`.
    pub frac_check: bool,
}

impl FastRebroCheck {
    /// All three hold: the PQ overshoots in this gshare.
    pub fn overshoot(&self) -> bool {
        self.ratio_check && self.stat_check && self.frac_check
    }

    /// `int(ceil(min(nq − nr·ratio, nq − limit, nq − nq_total·fraction)))` (L604-612); NaN → 0.
    pub fn excess(&self) -> i64 {
        let nq = self.nq as f64;
        let e = (nq - self.nr as f64 * self.ratio_limit)
            .min(nq - self.nqueue_limit)
            .min(nq - self.nq_total as f64 * self.fraction_limit);
        e.ceil() as i64
    }

    /// How many jobs the query returns: `rownum < excess` gives `excess − 1` rows (never more
    /// than the `nq` queued jobs).
    pub fn n_jobs(&self) -> u64 {
        (self.excess().saturating_sub(1).max(0) as u64).min(self.nq)
    }

    /// PanDA's debug line for the pair (L588-602).
    pub fn log_line(&self, site: &str, gshare: &str) -> String {
        format!("{site} in {gshare} : {self}")
    }
}

fn py_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

impl fmt::Display for FastRebroCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "nQueue({})>nRun({})*{}: {}, nQueue>nQueueThreshold({}):{}, nQueue>nQueue_total({})*{}:{}",
            self.nq,
            self.nr,
            self.ratio_limit,
            py_bool(self.ratio_check),
            self.nqueue_limit,
            py_bool(self.stat_check),
            self.nq_total,
            self.fraction_limit,
            py_bool(self.frac_check)
        )
    }
}

/// Fast rebrokerage fires: reassign the `n_jobs` lowest PandaIDs of the pair among its
/// defined/assigned/activated/starting jobs ([`fast_rebro_eligible`]), each with `action`.
#[derive(Debug, Clone, PartialEq)]
pub struct FastRebroAction {
    pub check: FastRebroCheck,
    pub n_jobs: u64,
    /// `killJob` code 10 with `keep_unmerged`: closed, `taskBufferErrorCode` 130, "fast
    /// rebrokerage due to Nq/Nr overshoot".
    pub action: TimeoutAction,
}

/// The verdict on one (PQ, gshare).
#[derive(Debug, Clone, PartialEq)]
pub enum FastRebroVerdict {
    /// The PQ is in `HARVESTER_Slots`: never counted, never checked.
    HarvesterSlots,
    /// At least one check fails.
    NoOvershoot(FastRebroCheck),
    /// Overshoot, but the gshare has no `FAST_REBRO_THRESHOLD_NQUEUE_<gshare>`.
    DryRun(FastRebroCheck),
    /// Overshoot: reassign.
    Reassign(FastRebroAction),
}

impl fmt::Display for FastRebroVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FastRebroVerdict::HarvesterSlots => {
                f.write_str("PQ in HARVESTER_Slots: not considered for fast rebrokerage")
            }
            FastRebroVerdict::NoOvershoot(c) => write!(f, "{c}"),
            FastRebroVerdict::DryRun(c) => {
                write!(f, "{c} -> overshoot, dry run (no FAST_REBRO_THRESHOLD_NQUEUE_<gshare>)")
            }
            FastRebroVerdict::Reassign(a) => write!(f, "{} -> overshoot, reassign {} jobs", a.check, a.n_jobs),
        }
    }
}

/// The statuses fast rebrokerage counts as queued and reassigns.
pub fn fast_rebro_eligible(status: JobStatus) -> bool {
    status.is_queued_for_rebrokerage()
}

/// The checks of one (PQ, gshare): `pq` from [`FastRebroStats::per_queue`], `nq_total` from
/// [`FastRebroStats::per_share`].
pub fn fast_rebro_check(
    params: &TimeoutParams,
    gshare: &str,
    pq: ShareQueueStats,
    nq_total: u64,
    harvester_slots: bool,
) -> FastRebroVerdict {
    if harvester_slots {
        return FastRebroVerdict::HarvesterSlots;
    }
    let (ratio_limit, fraction_limit) = (params.nqnr_ratio(), params.nqueue_frac());
    let (nqueue_limit, dry_run) = match params.fast_rebro_nqueue_limit(gshare) {
        Some(l) => (l, false),
        None => (DRY_RUN_NQUEUE_LIMIT, true),
    };
    let nq = pq.nq as f64;
    let check = FastRebroCheck {
        nq: pq.nq,
        nr: pq.nr,
        nq_total,
        ratio_limit,
        fraction_limit,
        nqueue_limit,
        dry_run,
        ratio_check: (pq.nr as f64) * ratio_limit < nq,
        stat_check: nq > nqueue_limit,
        frac_check: nq > nq_total as f64 * fraction_limit,
    };
    if !check.overshoot() {
        FastRebroVerdict::NoOvershoot(check)
    } else if dry_run {
        FastRebroVerdict::DryRun(check)
    } else {
        let action = TimeoutAction {
            rule: TimeoutRule::FastRebrokerage,
            effect: kill_effect(&JobTimes::default(), KillCode::FastRebrokerage),
        };
        FastRebroVerdict::Reassign(FastRebroAction { check, n_jobs: check.n_jobs(), action })
    }
}

/// Fast rebrokerage of one (PQ, gshare), if it reassigns anything (seed: "Unless the gshare
/// defines the parameter it doesn't trigger the fast rebrokerage").
pub fn fast_rebrokerage(
    params: &TimeoutParams,
    gshare: &str,
    pq: ShareQueueStats,
    nq_total: u64,
    harvester_slots: bool,
) -> Option<FastRebroAction> {
    match fast_rebro_check(params, gshare, pq, nq_total, harvester_slots) {
        FastRebroVerdict::Reassign(a) => Some(a),
        _ => None,
    }
}

/// Analysis rebrokerage: jobs younger than this are not candidates, and a group with a state
/// change this recent is left alone (`sortTimeLimit`, `recentRuntimeLimit`, L1017, L1103).
pub const ANAL_REBRO_MIN_AGE: SimDuration = hours(3);

/// One analysis job group (`jobDefinitionID`, user, PQ, `jediTaskID`) of JEDI-locked user/panda
/// jobs with a `jobsetID` — what the rebrokerage queries group by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AnalRebroGroup<'a> {
    /// The tasks' `workingGroup` (for `ANALY_TIMEOUT_<workingGroup>`).
    pub working_group: Option<&'a str>,
    /// If the group has activated/starting jobs: when its lowest PandaID became activated
    /// (`jobs_statuslog`; the earliest such record).
    pub activated_at: Option<SimTime>,
    /// If it has defined/assigned jobs: their latest `creationTime`.
    pub defined_max_creation: Option<SimTime>,
    /// The latest `stateChangeTime` of a job of the group in a status other than closed,
    /// failed or starting (active and archived tables).
    pub last_state_change: Option<SimTime>,
    /// The PQ is known to the site mapper.
    pub site_known: bool,
    pub site_status: QueueStatus,
}

/// Why a candidate group is left alone (PanDA's log, L1128-1165).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AnalRebroSkip {
    UnknownSite,
    /// Younger than `ANALY_TIMEOUT` (`maxModificationTime > now − timeout`).
    WaitForTimeLimit {
        timeout_hours: f64,
        since: SimTime,
    },
    /// A job of the group changed state within 3 h.
    RecentActivity {
        at: SimTime,
    },
}

impl fmt::Display for AnalRebroSkip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnalRebroSkip::UnknownSite => f.write_str("    -> skip unknown site"),
            AnalRebroSkip::WaitForTimeLimit { timeout_hours, since } => {
                write!(f, "    -> skip wait for normal timelimit=now-{}h<maxModTime={since}", py_float(*timeout_hours))
            }
            AnalRebroSkip::RecentActivity { at } => write!(f, "    -> skip due to recent activity at {at}"),
        }
    }
}

/// The verdict on an analysis job group.
#[derive(Debug, Clone, PartialEq)]
pub enum AnalRebroVerdict {
    /// Not old enough to be a candidate (no job activated or created more than 3 h ago);
    /// `fires_after` is when it becomes one, if it has a time at all.
    NotCandidate {
        fires_after: Option<SimTime>,
    },
    Skipped(AnalRebroSkip),
    /// Reassign every defined/assigned/activated/starting job of the group (`killJobs(…, "51")`,
    /// highest PandaID first); `immediate` when the PQ is offline or test.
    Reassign {
        immediate: bool,
        action: TimeoutAction,
    },
}

/// Rebrokerage of one analysis job group (L1007-1198). The candidate time is the
/// activation of the group's lowest PandaID if older than 3 h, else the newest creation of its
/// defined/assigned jobs if older than 3 h. An offline/test PQ reassigns at once; otherwise the
/// group waits until `now − ANALY_TIMEOUT[_<workingGroup>] ≥` that time (non-strict: at exactly
/// the timeout it is reassigned) and no job of it changed state in the last 3 h.
pub fn analysis_rebrokerage(params: &TimeoutParams, group: &AnalRebroGroup<'_>, now: SimTime) -> AnalRebroVerdict {
    let candidate = |t: Option<SimTime>| t.filter(|&t| older(t, now, ANAL_REBRO_MIN_AGE));
    let Some(since) = candidate(group.activated_at).or_else(|| candidate(group.defined_max_creation)) else {
        let first = [group.activated_at, group.defined_max_creation].into_iter().flatten().min();
        return AnalRebroVerdict::NotCandidate { fires_after: first.map(|t| t + ANAL_REBRO_MIN_AGE) };
    };
    if !group.site_known {
        return AnalRebroVerdict::Skipped(AnalRebroSkip::UnknownSite);
    }
    let action = TimeoutAction {
        rule: TimeoutRule::AnalysisRebrokerage,
        effect: kill_effect(&JobTimes::default(), KillCode::ReassignedByJedi),
    };
    if group.site_status.is_offline_or_test() {
        return AnalRebroVerdict::Reassign { immediate: true, action };
    }
    let timeout_hours = params.analy_timeout_hours(group.working_group);
    if since + hours_f64(timeout_hours) > now {
        return AnalRebroVerdict::Skipped(AnalRebroSkip::WaitForTimeLimit { timeout_hours, since });
    }
    if let Some(at) = group.last_state_change.filter(|&t| t + ANAL_REBRO_MIN_AGE > now) {
        return AnalRebroVerdict::Skipped(AnalRebroSkip::RecentActivity { at });
    }
    AnalRebroVerdict::Reassign { immediate: false, action }
}
