//! The per-job rules of copyArchive in code order, [`check`] (first rule that fires) and
//! [`explain`] (every rule's verdict).

use crate::engine::time::{SimDuration, SimTime};

use super::actions::{RuleVerdict, SkipReason, TimeoutAction, TimeoutRule, kill_effect, watcher_effect};
use super::inputs::{JobStatus, JobTimes, ProdSourceLabel, QueueStatus, QueueTimes};
use super::params::{Thresholds, TimeoutParams, TimeoutVariant};
use super::{KillCode, hours, older};

/// copyArchive's per-job rules in the order the daemon runs them (fast rebrokerage runs
/// between [`TimeoutRule::ActivatedExpired`] and [`TimeoutRule::InactiveSite`], analysis
/// rebrokerage between [`TimeoutRule::WaitingExpired`] and [`TimeoutRule::RunningTooLong`]).
pub const RULES: [TimeoutRule; 21] = [
    TimeoutRule::AnalHeartbeat,
    TimeoutRule::AnalTransferringHeartbeat,
    TimeoutRule::SentHeartbeat,
    TimeoutRule::HoldingAnalysis,
    TimeoutRule::HoldingHighPriority,
    TimeoutRule::Holding,
    TimeoutRule::GeneralHeartbeat,
    TimeoutRule::TransferringHeartbeat,
    TimeoutRule::DefinedTableExpired,
    TimeoutRule::ActivatedExpired,
    TimeoutRule::InactiveSite,
    TimeoutRule::DefinedReassign,
    TimeoutRule::StalledDefined,
    TimeoutRule::LongInDefinedTable,
    TimeoutRule::LongActivated,
    TimeoutRule::LongStarting,
    TimeoutRule::AnalysisActiveExpired,
    TimeoutRule::PendingExpired,
    TimeoutRule::WaitingExpired,
    TimeoutRule::RunningTooLong,
    TimeoutRule::ThrottledExpired,
];

/// Which part of the copyArchive cycle to run, for a simulation that interleaves fast
/// rebrokerage exactly where the daemon runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stage {
    /// Every rule.
    #[default]
    All,
    /// The Watchers and the 7-day kills (L291-519).
    BeforeFastRebrokerage,
    /// The reassignments and the remaining kills (L635-1249).
    AfterFastRebrokerage,
}

impl Stage {
    fn includes(self, rule: TimeoutRule) -> bool {
        let before = rule <= TimeoutRule::ActivatedExpired;
        match self {
            Stage::All => true,
            Stage::BeforeFastRebrokerage => before,
            Stage::AfterFastRebrokerage => !before,
        }
    }
}

/// Whether `rule` can select a job in `status` at all: the status part of each rule's selection
/// in [`Ctx::raw`]. A rule that cannot is [`RuleVerdict::NotApplicable`] whatever the job's
/// other columns, so [`check_until`] does not ask it.
pub(crate) const fn may_select(rule: TimeoutRule, status: JobStatus) -> bool {
    use JobStatus as S;
    use TimeoutRule::*;
    match rule {
        AnalHeartbeat | GeneralHeartbeat => status.is_heartbeat_status(),
        AnalTransferringHeartbeat | TransferringHeartbeat => matches!(status, S::Transferring),
        SentHeartbeat => matches!(status, S::Sent),
        HoldingAnalysis | HoldingHighPriority | Holding => matches!(status, S::Holding),
        DefinedTableExpired | LongInDefinedTable => status.in_defined_table(),
        ActivatedExpired | LongActivated => matches!(status, S::Activated),
        InactiveSite => matches!(status, S::Activated | S::Starting),
        DefinedReassign | StalledDefined => matches!(status, S::Defined),
        LongStarting => matches!(status, S::Starting),
        AnalysisActiveExpired | RunningTooLong => status.in_active_table(),
        PendingExpired => matches!(status, S::Pending),
        WaitingExpired => matches!(status, S::Waiting),
        ThrottledExpired => matches!(status, S::Throttled),
        // Not per-job rules of copyArchive (`check_transferring`, the rebrokerages).
        TransferTimeout | FastRebrokerage | AnalysisRebrokerage => false,
    }
}

/// Per status (`status as usize`), bit `r` set when [`RULES`]`[r]` may select it.
const RULES_BY_STATUS: [u32; JobStatus::ALL.len()] = {
    let mut masks = [0u32; JobStatus::ALL.len()];
    let mut s = 0;
    while s < masks.len() {
        let mut r = 0;
        while r < RULES.len() {
            if may_select(RULES[r], JobStatus::ALL[s]) {
                masks[s] |= 1 << r;
            }
            r += 1;
        }
        s += 1;
    }
    masks
};

/// `sleepTime` of the Anal Watchers (60 min), Sent (30), Holding Anal/DDM and high prio (180).
const ANAL_WATCHER_SLEEP: SimDuration = SimDuration::from_secs(60 * 60);
const SENT_TIMEOUT: SimDuration = SimDuration::from_secs(30 * 60);
const HOLDING_3H: SimDuration = hours(3);
/// Holding jobs above this priority get 3 h (L392, `currentPriority>:pLimit`).
const HOLDING_PRIO_LIMIT: i64 = 800;
/// Inactive-site rule: priority ≥ 800, job 4 h, site `laststart` 2 h (L636-638).
const INACTIVE_PRIO_LIMIT: i64 = 800;
const INACTIVE_JOB: SimDuration = hours(4);
const INACTIVE_SITE: SimDuration = hours(2);
const DAYS_7: SimDuration = hours(7 * 24);
const LONG_DEFINED: SimDuration = hours(12);
const LONG_ACTIVATED: SimDuration = hours(2 * 24);
const LONG_STARTING: SimDuration = hours(48);
const PENDING_WAITING: SimDuration = hours(1);
const RUNNING_DAYS_21: SimDuration = hours(21 * 24);

/// Does the job alone put its PQ on the inactive-site list (the site query, L642-657)? managed,
/// JEDI, priority ≥ 800, not pmerge, `relocationFlag` set and ≠ 2, and activated with
/// `modificationTime` or starting with `stateChangeTime` older than 4 h. A simulation sets
/// [`QueueTimes::has_stale_high_prio_job`] when any job of the PQ does.
pub fn inactive_site_probe(job: &JobTimes, now: SimTime) -> bool {
    inactive_site_job(job)
        && match job.status {
            JobStatus::Activated => older(job.modification_time, now, INACTIVE_JOB),
            JobStatus::Starting => older(job.state_change_time, now, INACTIVE_JOB),
            _ => false,
        }
}

/// The job filters shared by both queries of the inactive-site rule (the bare SQL
/// `relocationFlag<>2` is false for NULL).
fn inactive_site_job(job: &JobTimes) -> bool {
    job.label == ProdSourceLabel::Managed
        && job.lockedby_jedi
        && job.current_priority >= INACTIVE_PRIO_LIMIT
        && !job.is_pmerge
        && job.relocation_flag.is_some_and(|f| f != 2)
        && matches!(job.status, JobStatus::Activated | JobStatus::Starting)
}

/// `relocationFlag IS NULL OR relocationFlag<>2` (`onlyReassignable`).
fn reassignable(job: &JobTimes) -> bool {
    job.relocation_flag != Some(2)
}

/// Earliest of `t + d` and `end + d`: when "`t` or `endTime` older than `d`" becomes true.
fn or_end(t: SimTime, end: Option<SimTime>, d: SimDuration) -> SimTime {
    end.map_or(t + d, |e| (t + d).min(e + d))
}

struct Ctx<'a> {
    th: &'a Thresholds,
    job: &'a JobTimes,
    queue: &'a QueueTimes,
    now: SimTime,
}

impl Ctx<'_> {
    /// A Watcher rule: the SQL selects `modificationTime` (or `endTime` if `sql_end`) older
    /// than `sql`, then `Watcher.run` requires `modificationTime` or `endTime` older than its
    /// `sleep`. `Ok` = times out, `Err(deadline)` = not yet.
    fn watcher(&self, sql: SimDuration, sql_end: bool, sleep: SimDuration) -> Result<(), SimTime> {
        let j = self.job;
        let sql_deadline =
            if sql_end { or_end(j.modification_time, j.end_time, sql) } else { j.modification_time + sql };
        let watcher_deadline = or_end(j.modification_time, j.end_time, sleep);
        if self.now > sql_deadline && self.now > watcher_deadline {
            Ok(())
        } else {
            Err(sql_deadline.max(watcher_deadline))
        }
    }

    fn watcher_rule(&self, rule: TimeoutRule, sql: SimDuration, sql_end: bool, sleep: SimDuration) -> RuleVerdict {
        match self.watcher(sql, sql_end, sleep) {
            Ok(()) => RuleVerdict::Fires(TimeoutAction { rule, effect: watcher_effect(self.job, sleep) }),
            Err(fires_after) => RuleVerdict::NotYet { fires_after },
        }
    }

    /// `t < now − d`, then `then()`; else not yet.
    fn aged(&self, t: SimTime, d: SimDuration, then: impl FnOnce() -> RuleVerdict) -> RuleVerdict {
        if older(t, self.now, d) { then() } else { RuleVerdict::NotYet { fires_after: t + d } }
    }

    fn kill(&self, rule: TimeoutRule, code: KillCode) -> RuleVerdict {
        RuleVerdict::Fires(TimeoutAction { rule, effect: kill_effect(self.job, code) })
    }

    fn raw(&self, rule: TimeoutRule) -> RuleVerdict {
        use TimeoutRule::*;
        let (j, q, now) = (self.job, self.queue, self.now);
        let na = RuleVerdict::NotApplicable;
        let server = self.th.variant == TimeoutVariant::PandaServer;
        match rule {
            AnalHeartbeat if j.label.is_analysis() && j.status.is_heartbeat_status() => {
                self.watcher_rule(rule, self.th.analysis_heartbeat, false, ANAL_WATCHER_SLEEP)
            }
            AnalTransferringHeartbeat if j.label.is_analysis() && j.status == JobStatus::Transferring => {
                self.watcher_rule(rule, self.th.analysis_heartbeat, false, ANAL_WATCHER_SLEEP)
            }
            SentHeartbeat if j.status == JobStatus::Sent => self.watcher_rule(rule, SENT_TIMEOUT, false, SENT_TIMEOUT),
            HoldingAnalysis
                if j.status == JobStatus::Holding
                    && j.label.is_analysis()
                    && j.state_change_time != j.modification_time =>
            {
                match self.watcher_rule(rule, HOLDING_3H, true, HOLDING_3H) {
                    RuleVerdict::Fires(_) if j.output_report_pending => {
                        RuleVerdict::Skipped(SkipReason::OutputReportPending)
                    }
                    v => v,
                }
            }
            HoldingHighPriority if j.status == JobStatus::Holding => {
                let high = if server {
                    j.current_priority > HOLDING_PRIO_LIMIT
                } else {
                    j.current_priority >= HOLDING_PRIO_LIMIT
                };
                if high { self.watcher_rule(rule, HOLDING_3H, true, HOLDING_3H) } else { na }
            }
            Holding if j.status == JobStatus::Holding => {
                self.watcher_rule(rule, self.th.timeout_holding, true, self.th.timeout_holding)
            }
            GeneralHeartbeat if j.status.is_heartbeat_status() => match q.heartbeat.timeout() {
                None => na,
                Some(t) => match self.watcher_rule(rule, t, false, t) {
                    RuleVerdict::Fires(_) if server && q.status == QueueStatus::Paused => {
                        RuleVerdict::Skipped(SkipReason::QueuePaused { status: j.status })
                    }
                    v => v,
                },
            },
            TransferringHeartbeat if !server && j.status == JobStatus::Transferring && j.job_sub_status_set => {
                match q.heartbeat.timeout() {
                    None => na,
                    Some(t) => self.watcher_rule(rule, t, false, t),
                }
            }
            DefinedTableExpired if j.status.in_defined_table() => {
                self.aged(j.creation_time, DAYS_7, || self.kill(rule, KillCode::Expire))
            }
            ActivatedExpired if j.status == JobStatus::Activated => {
                self.aged(j.creation_time, DAYS_7, || self.kill(rule, KillCode::Expire))
            }
            InactiveSite if inactive_site_job(j) => {
                let job_deadline = j.modification_time.min(j.state_change_time) + INACTIVE_JOB;
                if now <= job_deadline {
                    return RuleVerdict::NotYet { fires_after: job_deadline };
                }
                if !(q.has_stale_high_prio_job || inactive_site_probe(j, now)) {
                    // Nothing puts the PQ on the list yet; the job will itself once its own
                    // column is old enough.
                    let own = if j.status == JobStatus::Activated { j.modification_time } else { j.state_change_time };
                    return RuleVerdict::NotYet { fires_after: own + INACTIVE_JOB };
                }
                if q.disable_reassign {
                    return RuleVerdict::Skipped(SkipReason::InactiveSiteReassignDisabled);
                }
                let inactive =
                    q.last_start.is_some_and(|t| older(t, now, INACTIVE_SITE)) || q.status.is_offline_or_test();
                if !inactive {
                    return RuleVerdict::Skipped(SkipReason::SiteActive { last_start: q.last_start, status: q.status });
                }
                self.kill(rule, KillCode::ReassignedByJedi)
            }
            DefinedReassign
                if j.status == JobStatus::Defined
                    && matches!(j.label, ProdSourceLabel::Managed | ProdSourceLabel::Test) =>
            {
                self.aged(j.modification_time, self.th.timeout_defined, || self.jedi_reassign(rule))
            }
            StalledDefined
                if j.status == JobStatus::Defined
                    && ((j.label == ProdSourceLabel::Panda && j.is_build) || !j.lockedby_jedi) =>
            {
                self.aged(j.creation_time, self.th.timeout_defined, || self.kill(rule, KillCode::Expire))
            }
            LongInDefinedTable if j.status.in_defined_table() && j.label == ProdSourceLabel::Managed => {
                self.aged(j.modification_time, LONG_DEFINED, || self.jedi_reassign(rule))
            }
            LongActivated
                if j.status == JobStatus::Activated && j.label == ProdSourceLabel::Managed && reassignable(j) =>
            {
                self.aged(j.modification_time, LONG_ACTIVATED, || {
                    if q.disable_reassign {
                        RuleVerdict::Skipped(SkipReason::LongActivatedReassignDisabled)
                    } else {
                        self.jedi_reassign(rule)
                    }
                })
            }
            LongStarting
                if j.status == JobStatus::Starting && j.label == ProdSourceLabel::Managed && reassignable(j) =>
            {
                self.aged(j.state_change_time, LONG_STARTING, || {
                    if q.disable_reassign {
                        RuleVerdict::Skipped(SkipReason::LongStartingReassignDisabled)
                    } else {
                        self.jedi_reassign(rule)
                    }
                })
            }
            AnalysisActiveExpired
                if j.status.in_active_table()
                    && matches!(j.label, ProdSourceLabel::Test | ProdSourceLabel::Panda | ProdSourceLabel::User) =>
            {
                self.aged(j.modification_time, DAYS_7, || self.kill(rule, KillCode::Expire))
            }
            PendingExpired if j.status == JobStatus::Pending => {
                self.aged(j.creation_time, PENDING_WAITING, || self.kill(rule, KillCode::ExpireInWaiting))
            }
            WaitingExpired if j.status == JobStatus::Waiting => {
                self.aged(j.creation_time, PENDING_WAITING, || self.kill(rule, KillCode::ExpireInWaiting))
            }
            RunningTooLong if j.status.in_active_table() => {
                self.aged(j.creation_time, RUNNING_DAYS_21, || self.kill(rule, KillCode::Expire))
            }
            ThrottledExpired if j.status == JobStatus::Throttled => {
                self.aged(j.creation_time, DAYS_7, || self.kill(rule, KillCode::Expire))
            }
            _ => na,
        }
    }

    /// A `lockJobsForReassign` rule acts on JEDI jobs only (code 51, keep unmerged).
    fn jedi_reassign(&self, rule: TimeoutRule) -> RuleVerdict {
        if self.job.lockedby_jedi {
            self.kill(rule, KillCode::ReassignedByJedi)
        } else {
            RuleVerdict::Skipped(SkipReason::NotJedi)
        }
    }
}

/// Seed: the reason every rule is off at this PQ, if it is.
fn seed_disabled(th: &Thresholds, queue: &QueueTimes) -> Option<SkipReason> {
    if th.variant != TimeoutVariant::Seed {
        None
    } else if queue.status == QueueStatus::Paused {
        Some(SkipReason::SeedQueuePaused)
    } else if queue.disable_reassign {
        Some(SkipReason::SeedReassignDisabled)
    } else {
        None
    }
}

/// One rule's verdict on one job at one PQ.
pub(crate) fn evaluate(
    rule: TimeoutRule,
    th: &Thresholds,
    job: &JobTimes,
    queue: &QueueTimes,
    now: SimTime,
) -> RuleVerdict {
    let verdict = Ctx { th, job, queue, now }.raw(rule);
    match (seed_disabled(th, queue), verdict) {
        (_, RuleVerdict::NotApplicable) => RuleVerdict::NotApplicable,
        (Some(reason), _) => RuleVerdict::Skipped(reason),
        (None, v) => v,
    }
}

/// The first copyArchive rule that fires on `job` at `queue` at `now`, with what PanDA does;
/// `None` if none does. Resolves `params` (two map look-ups); in a loop over many jobs use
/// [`check_resolved`] with [`TimeoutParams::resolve`].
pub fn check(params: &TimeoutParams, job: &JobTimes, queue: &QueueTimes, now: SimTime) -> Option<TimeoutAction> {
    check_resolved(&params.resolve(), job, queue, now)
}

/// [`check`] with resolved thresholds: no allocation unless a rule fires.
pub fn check_resolved(th: &Thresholds, job: &JobTimes, queue: &QueueTimes, now: SimTime) -> Option<TimeoutAction> {
    check_stage(th, job, queue, now, Stage::All)
}

/// [`check_resolved`] restricted to one part of the cycle.
pub fn check_stage(
    th: &Thresholds,
    job: &JobTimes,
    queue: &QueueTimes,
    now: SimTime,
    stage: Stage,
) -> Option<TimeoutAction> {
    if seed_disabled(th, queue).is_some() {
        return None;
    }
    RULES.iter().filter(|r| stage.includes(**r)).find_map(|&rule| match evaluate(rule, th, job, queue, now) {
        RuleVerdict::Fires(action) => Some(action),
        _ => None,
    })
}

/// [`check_resolved`] for a daemon that checks the same jobs cycle after cycle: the first rule
/// that fires (`Ok`), or else (`Err`) the latest time through which no rule can fire on this job,
/// so the daemon may skip it until then.
///
/// The bound holds while the job's columns stay as they are, the queue's `status`,
/// `disable_reassign`, `heartbeat` and `has_stale_high_prio_job` stay as they are, and its
/// `last_start` only moves forward (a pilot that starts later starts at or after `now`). Every
/// rule compares a fixed time of the job with `now` ([`RuleVerdict::NotYet::fires_after`]),
/// except the inactive-site rule, whose site test reads `last_start`: while it skips a site
/// that is active, the bound is `last_start + 2 h`, when the site goes inactive if no pilot
/// starts meanwhile, or, when no pilot has ever started there, `now + 2 h`, the earliest it
/// could (a pilot starting now). Skips for a reason of the job or of the queue's fixed
/// columns, and rules that do not select the job, never end.
///
/// `heartbeat_fresh`: the job's pilot heartbeats at every cycle (its `modificationTime` is
/// always `now`; `job.modification_time` is ignored). Once the job has been in its status for a
/// while (`stateChangeTime < now`), the rules see a modification time no deadline reaches,
/// which gives the same verdict at every later `now` as `modificationTime = now`: `now > now +
/// T` is false, `min(now, stateChangeTime)` is `stateChangeTime`, "`modificationTime` or
/// `endTime` older than `T`" is the `endTime` test, and `stateChangeTime ≠ modificationTime`
/// holds both ways. A rule that reads `modificationTime` alone therefore never fires on such a
/// job. In the instant the status changes, that last test differs, so the answer is then
/// exact for `now` only (`Err(now)`).
pub fn check_until(
    th: &Thresholds,
    job: &JobTimes,
    queue: &QueueTimes,
    now: SimTime,
    heartbeat_fresh: bool,
) -> Result<TimeoutAction, SimTime> {
    const NEVER: SimTime = SimTime::from_millis(u64::MAX);
    if seed_disabled(th, queue).is_some() {
        return Err(NEVER);
    }
    let (modification_time, mut until) = match heartbeat_fresh {
        false => (job.modification_time, NEVER),
        true if job.state_change_time < now => (NEVER, NEVER),
        true => (now, now),
    };
    let job = &JobTimes { modification_time, ..*job };
    let ctx = Ctx { th, job, queue, now };
    // The rules that may select the job's status, in code order (the seed's switch-off is
    // checked above, so each verdict is the rule's own).
    let mut rules = RULES_BY_STATUS[job.status as usize];
    while rules != 0 {
        let rule = RULES[rules.trailing_zeros() as usize];
        rules &= rules - 1;
        let bound = match ctx.raw(rule) {
            RuleVerdict::Fires(action) => return Ok(action),
            RuleVerdict::NotYet { fires_after } => fires_after,
            RuleVerdict::Skipped(SkipReason::SiteActive { last_start, .. }) => {
                last_start.unwrap_or(now) + INACTIVE_SITE
            }
            RuleVerdict::Skipped(_) | RuleVerdict::NotApplicable => NEVER,
        };
        until = until.min(bound);
    }
    Err(until)
}

/// Every rule's verdict on `job`, in code order (rules after the first that fires would not see
/// the job in PanDA; they are shown to answer "what else would apply").
pub fn explain(
    params: &TimeoutParams,
    job: &JobTimes,
    queue: &QueueTimes,
    now: SimTime,
) -> Vec<(TimeoutRule, RuleVerdict)> {
    let th = params.resolve();
    RULES.iter().map(|&rule| (rule, evaluate(rule, &th, job, queue, now))).collect()
}
