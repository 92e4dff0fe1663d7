//! The two timeouts outside copyArchive: datasetManager's transferring timeout (the seed's
//! `transtimehi`/`transtimelo`) and JEDI's task `pending` timeout.

use std::fmt;

use crate::engine::time::{SimDuration, SimTime};

use super::actions::{RuleVerdict, SkipReason, TimeoutAction, TimeoutEffect, TimeoutRule};
use super::inputs::{JobStatus, JobTimes, ProdSourceLabel, QueueStatus, QueueTimes};
use super::params::{TimeoutParams, TimeoutVariant};
use super::{hours, hours_f64, older};

/// `lockJobsForFinisher` (job_standalone_module L993-1010): transferring managed/test jobs
/// are picked when not modified for 1 h (priority ≥ 800) or 2 h (below).
const FINISHER_PICK_HIGH: SimDuration = hours(1);
const FINISHER_PICK_LOW: SimDuration = hours(2);
/// Priority from which the 1 h pick and `transtimehi` apply.
const TRANSFER_PRIO_LIMIT: i64 = 800;

/// datasetManager's verdict on a transferring job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinisherVerdict {
    /// Not picked this cycle (status, label, or modified within 1 h / 2 h); `fires_after` is
    /// when it will be picked.
    NotSelected { picked_after: Option<SimTime> },
    /// Seed: timeouts are off at this PQ.
    Skipped(SkipReason),
    /// Every output is at the destination: the Finisher finishes the job (not a timeout).
    Finish,
    /// Outputs missing, still within `transtimehi`/`transtimelo`: the job waits (its
    /// `modificationTime` is set to now by the pick); `times_out_after` is `None` when the job
    /// has neither `endTime` nor `startTime`.
    Wait { times_out_after: Option<SimTime> },
    /// Transfer timeout: failed, `taskBufferErrorCode` 101.
    Timeout(TimeoutAction),
}

/// The Finisher pass of datasetManager on one job (L700-735): picked as above (and then its
/// `modificationTime` is now); all outputs at the destination → finish; else if `endTime`
/// (or `startTime` when unset) is older than `transtimehi` days (priority ≥ 800 and not a
/// `user` job) or `transtimelo` days (else): failed with "transfer timeout".
pub fn check_transferring(
    params: &TimeoutParams,
    job: &JobTimes,
    queue: &QueueTimes,
    outputs_ready: bool,
    now: SimTime,
) -> FinisherVerdict {
    let picked_label = matches!(job.label, ProdSourceLabel::Managed | ProdSourceLabel::Test);
    if job.status != JobStatus::Transferring || !picked_label {
        return FinisherVerdict::NotSelected { picked_after: None };
    }
    let pick = if job.current_priority >= TRANSFER_PRIO_LIMIT { FINISHER_PICK_HIGH } else { FINISHER_PICK_LOW };
    if !older(job.modification_time, now, pick) {
        return FinisherVerdict::NotSelected { picked_after: Some(job.modification_time + pick) };
    }
    if params.variant == TimeoutVariant::Seed {
        if queue.status == QueueStatus::Paused {
            return FinisherVerdict::Skipped(SkipReason::SeedQueuePaused);
        }
        if queue.disable_reassign {
            return FinisherVerdict::Skipped(SkipReason::SeedReassignDisabled);
        }
    }
    if outputs_ready {
        return FinisherVerdict::Finish;
    }
    let th = params.resolve();
    let high = job.current_priority >= TRANSFER_PRIO_LIMIT && job.label != ProdSourceLabel::User;
    let limit = if high { th.transtimehi } else { th.transtimelo };
    match job.end_time.or(job.start_time) {
        None => FinisherVerdict::Wait { times_out_after: None },
        Some(end) if older(end, now, limit) => FinisherVerdict::Timeout(TimeoutAction {
            rule: TimeoutRule::TransferTimeout,
            effect: TimeoutEffect::TransferFailed {
                diag: "transfer timeout for output files not at the destination".to_string(),
            },
        }),
        Some(end) => FinisherVerdict::Wait { times_out_after: Some(end + limit) },
    }
}

impl From<FinisherVerdict> for RuleVerdict {
    /// The same answer in the vocabulary of the copyArchive rules (`Finish` and a pick are not
    /// timeouts: not applicable / not yet).
    fn from(v: FinisherVerdict) -> Self {
        match v {
            FinisherVerdict::NotSelected { picked_after: Some(t) } => RuleVerdict::NotYet { fires_after: t },
            FinisherVerdict::NotSelected { picked_after: None } | FinisherVerdict::Finish => RuleVerdict::NotApplicable,
            FinisherVerdict::Wait { times_out_after: Some(t) } => RuleVerdict::NotYet { fires_after: t },
            FinisherVerdict::Wait { times_out_after: None } => RuleVerdict::NotApplicable,
            FinisherVerdict::Skipped(r) => RuleVerdict::Skipped(r),
            FinisherVerdict::Timeout(a) => RuleVerdict::Fires(a),
        }
    }
}

/// A JEDI task in status `pending` (`JEDI_Tasks` columns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskPending {
    /// `prodSourceLabel` (`PENDING_TIMEOUT_<label>`; managed/test also get the
    /// high-priority passes of `AtlasProdWatchDog`).
    pub label: ProdSourceLabel,
    pub current_priority: i64,
    /// `modificationTime`: when it went (back) to pending.
    pub modification_time: SimTime,
    /// `frozenTime`: when it first went pending; `None` never times out.
    pub frozen_time: Option<SimTime>,
    /// `oldStatus IS NOT NULL` (a task without it is never picked).
    pub has_old_status: bool,
    /// The parent task is running (the task is then reactivated, never timed out).
    pub parent_running: bool,
}

/// Which pass of the JEDI watchdog picked the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PendingPass {
    /// `TypicalWatchDogBase.pre_action`: pending for `waitForPending` (60 min), timeout
    /// `PENDING_TIMEOUT_<label>` hours or `timeoutForPending` days.
    PreAction,
    /// `AtlasProdWatchDog.doActionForHighPrioPending(950, 10)`: priority ≥ 950, 10 min.
    HighPriority950,
    /// `doActionForHighPrioPending(900, 30)`: priority ≥ 900, 30 min.
    HighPriority900,
}

impl fmt::Display for PendingPass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PendingPass::PreAction => "reactivate pending tasks",
            PendingPass::HighPriority950 => "reactivated high priority (>950)",
            PendingPass::HighPriority900 => "reactivated high priority (>900)",
        })
    }
}

/// The watchdog's verdict on a pending task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskPendingVerdict {
    /// Not picked yet; `fires_after` is when the first pass will pick it (`None`: never).
    NotYet { fires_after: Option<SimTime> },
    /// Back to its `oldStatus` (`action=reactivate`).
    Reactivate { pass: PendingPass },
    /// To `exhausted` with PanDA's error dialog (`#ATM #KV jediTaskID=… timeout`).
    Timeout { pass: PendingPass, error_dialog: String },
}

/// `reactivatePendingTasks_JEDI` as the watchdog calls it each cycle (task_complex_module
/// L4571-4690; TypicalWatchDogBase L24-34; AtlasProdWatchDog L45-50, L369-377): a pending task
/// with an `oldStatus` not modified for the pass's wait is timed out when its parent is not
/// running and `frozenTime < now − timeout`, else reactivated.
pub fn check_task_pending(params: &TimeoutParams, task: &TaskPending, now: SimTime) -> TaskPendingVerdict {
    if !task.has_old_status {
        return TaskPendingVerdict::NotYet { fires_after: None };
    }
    let decide = |pass: PendingPass, timeout_hours: f64| match task.frozen_time {
        Some(frozen) if !task.parent_running && older(frozen, now, hours_f64(timeout_hours)) => {
            TaskPendingVerdict::Timeout { pass, error_dialog: format!("timeout while in pending since {frozen}") }
        }
        _ => TaskPendingVerdict::Reactivate { pass },
    };
    let wait = SimDuration::from_secs_f64(params.wait_for_pending_minutes * 60.0);
    let mut first = task.modification_time + wait;
    if older(task.modification_time, now, wait) {
        return decide(PendingPass::PreAction, params.pending_timeout_hours(task.label.as_str()));
    }
    if matches!(task.label, ProdSourceLabel::Managed | ProdSourceLabel::Test) {
        let passes = [(PendingPass::HighPriority950, 950, 10), (PendingPass::HighPriority900, 900, 30)];
        for (pass, min_priority, minutes) in passes {
            if task.current_priority < min_priority {
                continue;
            }
            let wait = SimDuration::from_secs(minutes * 60);
            if older(task.modification_time, now, wait) {
                return decide(pass, params.config_pending_timeout_hours());
            }
            first = first.min(task.modification_time + wait);
        }
    }
    TaskPendingVerdict::NotYet { fires_after: Some(first) }
}
