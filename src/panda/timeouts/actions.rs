//! The rules, what they do to a job and why they did not.

use std::fmt;

use crate::engine::time::{SimDuration, SimTime};

use super::inputs::{JobStatus, JobTimes, QueueStatus};
use super::{Daemon, py_float};

/// A timeout rule, in copyArchive order (then datasetManager's and the rebrokerages). `Display`
/// is the message PanDA logs when the rule acts (IDs and lists left out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TimeoutRule {
    /// L291-312: analysis jobs in running/starting/stagein/stageout, `HEARTBEAT_TIMEOUT_analysis`.
    AnalHeartbeat,
    /// L314-332: analysis jobs in transferring, same timeout.
    AnalTransferringHeartbeat,
    /// L334-351: sent jobs, 30 min.
    SentHeartbeat,
    /// L353-387: analysis holding jobs, 3 h.
    HoldingAnalysis,
    /// L389-414: holding jobs with priority > 800 (seed: ≥ 800), 3 h.
    HoldingHighPriority,
    /// L416-436: holding jobs, `TIMEOUT_holding`.
    Holding,
    /// L438-486: running/starting/stagein/stageout, `HEARTBEAT_TIMEOUT_<workflow>`.
    GeneralHeartbeat,
    /// Seed only: transferring jobs with a `jobSubStatus`, `HEARTBEAT_TIMEOUT_<workflow>`.
    TransferringHeartbeat,
    /// L488-502: anything in jobsDefined4 created more than 7 days ago.
    DefinedTableExpired,
    /// L504-519: activated jobs created more than 7 days ago.
    ActivatedExpired,
    /// L635-714: high-priority activated/starting jobs at an inactive PQ, 4 h.
    InactiveSite,
    /// L716-747: defined JEDI jobs, `TIMEOUT_defined`.
    DefinedReassign,
    /// L749-767: defined build or non-JEDI jobs, `TIMEOUT_defined` on creation.
    StalledDefined,
    /// L769-787: managed JEDI jobs in jobsDefined4 (the seed's assigned), 12 h.
    LongInDefinedTable,
    /// L789-828: activated managed JEDI jobs, 2 days.
    LongActivated,
    /// L830-861: starting managed JEDI jobs, 48 h.
    LongStarting,
    /// L863-881: test/panda/user jobs in jobsActive4 not modified for 7 days.
    AnalysisActiveExpired,
    /// L883-904: pending jobs, 1 h.
    PendingExpired,
    /// L932-953: waiting jobs, 1 h.
    WaitingExpired,
    /// L1200-1231: anything in jobsActive4 created more than 21 days ago.
    RunningTooLong,
    /// L1233-1249: throttled jobs, 7 days.
    ThrottledExpired,
    /// datasetManager L700-735: transferring outputs not at the destination after
    /// `transtimehi`/`transtimelo` days.
    TransferTimeout,
    /// L521-633: fast rebrokerage of the lowest PandaIDs at an overshooting PQ.
    FastRebrokerage,
    /// L1007-1198: analysis job groups waiting too long.
    AnalysisRebrokerage,
}

impl TimeoutRule {
    /// The daemon that runs the rule.
    pub const fn daemon(self) -> Daemon {
        match self {
            TimeoutRule::TransferTimeout => Daemon::DatasetManager,
            _ => Daemon::CopyArchive,
        }
    }

    /// Where the rule is in panda-server 1.0.4.
    pub const fn lines(self) -> &'static str {
        use TimeoutRule::*;
        match self {
            AnalHeartbeat => "copyArchive.py L291-312",
            AnalTransferringHeartbeat => "copyArchive.py L314-332",
            SentHeartbeat => "copyArchive.py L334-351",
            HoldingAnalysis => "copyArchive.py L353-387",
            HoldingHighPriority => "copyArchive.py L389-414",
            Holding => "copyArchive.py L416-436",
            GeneralHeartbeat => "copyArchive.py L438-486",
            TransferringHeartbeat => "seed 004 Timeout Rules (not in 1.0.4)",
            DefinedTableExpired => "copyArchive.py L488-502",
            ActivatedExpired => "copyArchive.py L504-519",
            InactiveSite => "copyArchive.py L635-714",
            DefinedReassign => "copyArchive.py L716-747",
            StalledDefined => "copyArchive.py L749-767",
            LongInDefinedTable => "copyArchive.py L769-787",
            LongActivated => "copyArchive.py L789-828",
            LongStarting => "copyArchive.py L830-861",
            AnalysisActiveExpired => "copyArchive.py L863-881",
            PendingExpired => "copyArchive.py L883-904",
            WaitingExpired => "copyArchive.py L932-953",
            RunningTooLong => "copyArchive.py L1200-1231",
            ThrottledExpired => "copyArchive.py L1233-1249",
            TransferTimeout => "datasetManager.py L700-735",
            FastRebrokerage => "copyArchive.py L521-633",
            AnalysisRebrokerage => "copyArchive.py L1007-1198",
        }
    }

    /// The column `lockJobsForReassign` sets to now on *every* job the rule selects, acted on
    /// or skipped (job_standalone_module L964-967); datasetManager's `lockJobsForFinisher`
    /// likewise touches `modificationTime`.
    pub const fn touches(self) -> Option<Touch> {
        match self {
            TimeoutRule::DefinedReassign
            | TimeoutRule::LongInDefinedTable
            | TimeoutRule::LongActivated
            | TimeoutRule::TransferTimeout => Some(Touch::ModificationTime),
            TimeoutRule::LongStarting => Some(Touch::StateChangeTime),
            _ => None,
        }
    }
}

impl fmt::Display for TimeoutRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use TimeoutRule::*;
        f.write_str(match self {
            AnalHeartbeat => "Anal Watcher",
            AnalTransferringHeartbeat => "Trans Anal Watcher",
            SentHeartbeat => "Sent Watcher",
            HoldingAnalysis => "Holding Anal/DDM Watcher",
            HoldingHighPriority => "High prio Holding Watcher",
            Holding => "Holding Watcher",
            GeneralHeartbeat => "General Watcher",
            TransferringHeartbeat => "Transferring Watcher (HEARTBEAT_TIMEOUT_<workflow> with jobSubStatus)",
            DefinedTableExpired => "killJobs for Defined",
            ActivatedExpired => "killJobs for Active",
            InactiveSite => "reassignJobs for JEDI at inactive site",
            DefinedReassign => "reassignJobs for JEDI defined jobs",
            StalledDefined => "reassign stalled defined build and non-JEDI jobs",
            LongInDefinedTable => "reassignJobs for long JEDI in defined table",
            LongActivated => "reassignJobs for long activated JEDI in active table",
            // PanDA's own spelling.
            LongStarting => "reassignJobs for long stating JEDI in active table",
            AnalysisActiveExpired => "killJobs for Anal Active",
            PendingExpired => "killJobs for Pending",
            WaitingExpired => "killJobs for Waiting",
            RunningTooLong => "killJobs for Running",
            ThrottledExpired => "killJobs for throttled",
            TransferTimeout => "Finisher : Kill",
            FastRebrokerage => "reassignJobs for JEDI at Nq/Nr overshoot site",
            AnalysisRebrokerage => "rebro for JEDI task",
        })
    }
}

/// A column a rule sets to "now" on the jobs it selects ([`TimeoutRule::touches`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touch {
    ModificationTime,
    StateChangeTime,
}

/// `killJob` codes copyArchive uses (job_complex_module L814-827).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KillCode {
    /// 2: expire.
    Expire = 2,
    /// 4: expire in waiting.
    ExpireInWaiting = 4,
    /// 10: fast rebrokerage in overloaded PQ.
    FastRebrokerage = 10,
    /// 51: reassigned by JEDI.
    ReassignedByJedi = 51,
}

impl KillCode {
    pub const fn code(self) -> u32 {
        self as u32
    }
}

impl fmt::Display for KillCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KillCode::Expire => "expire",
            KillCode::ExpireInWaiting => "expire in waiting",
            KillCode::FastRebrokerage => "fast rebrokerage in overloaded PQ",
            KillCode::ReassignedByJedi => "reassigned by JEDI",
        })
    }
}

/// `jobDispatcherErrorCode` the Watcher sets (jobdispatcher/ErrorCode.py).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DispatcherErrorCode {
    /// 100 `EC_Watcher`: lost heartbeat.
    Watcher = 100,
    /// 101 `EC_Recovery`: the pilot had reported an error, recovery failed.
    Recovery = 101,
    /// 102 `EC_SendError`: sent, no reply from the pilot.
    SendError = 102,
    /// 103 `EC_Holding`.
    Holding = 103,
    /// 104 `EC_Transferring`.
    Transferring = 104,
    /// 105 `EC_Timeout`: other status with an `endTime`.
    Timeout = 105,
}

impl DispatcherErrorCode {
    pub const fn code(self) -> u32 {
        self as u32
    }
}

/// `taskBufferErrorCode` set by `killJob` and the Finisher (taskbuffer/ErrorCode.py).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TaskBufferErrorCode {
    /// 100 `EC_Kill`.
    Kill = 100,
    /// 101 `EC_Transfer`.
    Transfer = 101,
    /// 102 `EC_Expire`.
    Expire = 102,
    /// 130 `EC_FastRebrokerage`.
    FastRebrokerage = 130,
}

impl TaskBufferErrorCode {
    pub const fn code(self) -> u32 {
        self as u32
    }
}

/// What PanDA does to the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeoutEffect {
    /// `Watcher.run`: `jobStatus = failed`, `endTime = modificationTime` if unset, output and
    /// log files failed, then `job_failure_postprocessing` (retry module) and the Closer.
    Fail { error_code: DispatcherErrorCode, diag: String },
    /// `killJob` archives the job as `closed` with `taskBufferErrorCode`/`Diag`; with
    /// `job_sub_status = Some("toreassign")` JEDI regenerates it for another PQ.
    Close { kill_code: KillCode, job_sub_status: Option<&'static str>, error_code: TaskBufferErrorCode, diag: String },
    /// `killJob` on a *running* job with a non-force code: only `commandToPilot = tobekilled`
    /// (the pilot kills the payload at its next heartbeat; sql2 skips `running`, L958-977).
    CommandToKill { kill_code: KillCode },
    /// The Finisher's transfer timeout: `jobStatus = failed`, `taskBufferErrorCode` 101.
    TransferFailed { diag: String },
}

/// A rule fired: which, and what PanDA does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeoutAction {
    pub rule: TimeoutRule,
    pub effect: TimeoutEffect,
}

impl TimeoutAction {
    /// PanDA's diag for the job (empty for [`TimeoutEffect::CommandToKill`]).
    pub fn diag(&self) -> &str {
        match &self.effect {
            TimeoutEffect::Fail { diag, .. }
            | TimeoutEffect::Close { diag, .. }
            | TimeoutEffect::TransferFailed { diag } => diag,
            TimeoutEffect::CommandToKill { .. } => "",
        }
    }

    /// The `killJob` code, if the action is a kill.
    pub fn kill_code(&self) -> Option<KillCode> {
        match &self.effect {
            TimeoutEffect::Close { kill_code, .. } | TimeoutEffect::CommandToKill { kill_code } => Some(*kill_code),
            _ => None,
        }
    }

    /// The error code PanDA records: `jobDispatcherErrorCode` of a Watcher failure,
    /// `taskBufferErrorCode` of a close or transfer timeout, 0 for a kill command.
    pub fn error_code(&self) -> u32 {
        match &self.effect {
            TimeoutEffect::Fail { error_code, .. } => error_code.code(),
            TimeoutEffect::Close { error_code, .. } => error_code.code(),
            TimeoutEffect::TransferFailed { .. } => TaskBufferErrorCode::Transfer.code(),
            TimeoutEffect::CommandToKill { .. } => 0,
        }
    }

    /// The job is reassigned (closed with `toreassign`, or by fast rebrokerage).
    pub fn reassigns(&self) -> bool {
        match &self.effect {
            TimeoutEffect::Close { job_sub_status, kill_code, .. } => {
                job_sub_status.is_some() || *kill_code == KillCode::FastRebrokerage
            }
            _ => false,
        }
    }
}

impl fmt::Display for TimeoutAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.effect {
            TimeoutEffect::Fail { error_code, diag } => {
                write!(f, "{}: failed, jobDispatcherErrorCode={} {}", self.rule, error_code.code(), diag)
            }
            TimeoutEffect::Close { kill_code, error_code, diag, .. } => {
                write!(
                    f,
                    "{}: killJob code={} → closed, taskBufferErrorCode={} {}",
                    self.rule,
                    kill_code.code(),
                    error_code.code(),
                    diag
                )
            }
            TimeoutEffect::CommandToKill { kill_code } => {
                write!(f, "{}: killJob code={} → commandToPilot=tobekilled", self.rule, kill_code.code())
            }
            TimeoutEffect::TransferFailed { diag } => {
                write!(f, "{}: failed, taskBufferErrorCode=101 {}", self.rule, diag)
            }
        }
    }
}

/// Why a rule that selects the job does nothing to it (a faithful paraphrase of PanDA's log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// PandaServer: the General Watcher skips paused PQs (L469-471).
    QueuePaused { status: JobStatus },
    /// PandaServer: `disableReassign` at the inactive-site rule (L665-667).
    InactiveSiteReassignDisabled,
    /// PandaServer: `disableReassign` at the long-activated rule (L810-812).
    LongActivatedReassignDisabled,
    /// PandaServer: `disableReassign` at the long-starting rule (L851-853).
    LongStartingReassignDisabled,
    /// The PQ is not inactive: `laststart` within 2 h (or unknown) and status not offline/test.
    SiteActive { last_start: Option<SimTime>, status: QueueStatus },
    /// The job's output report is still to be processed (L379-381).
    OutputReportPending,
    /// A `lockJobsForReassign` rule selected a non-JEDI job: 1.0.4 does nothing with it.
    NotJedi,
    /// Seed: every timeout rule is off at a paused PQ.
    SeedQueuePaused,
    /// Seed: every timeout rule is off at a PQ with `disableReassign`.
    SeedReassignDisabled,
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::QueuePaused { status } => {
                write!(f, "skip General Watcher since timeout is disabled for {}", status.as_str())
            }
            SkipReason::InactiveSiteReassignDisabled => {
                f.write_str("skip reassignJobs at inactive site since reassign is disabled")
            }
            SkipReason::LongActivatedReassignDisabled => {
                f.write_str("skip reassignJobs for long activated since disabled")
            }
            SkipReason::LongStartingReassignDisabled => {
                f.write_str("skip reassignJobs for long starting since disabled")
            }
            SkipReason::SiteActive { last_start, status } => match last_start {
                Some(t) => write!(f, "site not inactive: laststart={t} status={}", status.as_str()),
                None => write!(f, "site not inactive: laststart=None status={}", status.as_str()),
            },
            SkipReason::OutputReportPending => f.write_str("found XML -> skip"),
            SkipReason::NotJedi => f.write_str("not a JEDI job: no reassignment in 1.0.4"),
            SkipReason::SeedQueuePaused => f.write_str("timeout rules disabled: the queue status is paused"),
            SkipReason::SeedReassignDisabled => {
                f.write_str("timeout rules disabled: the queue has disableReassign in catchall")
            }
        }
    }
}

/// One rule's verdict on one job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleVerdict {
    /// The rule does not select this job (status, label, priority, flags, queue).
    NotApplicable,
    /// Selected by status and flags but not old enough: fires at the first cycle strictly after
    /// `fires_after` (if nothing changes meanwhile).
    NotYet { fires_after: SimTime },
    /// Old enough but left alone.
    Skipped(SkipReason),
    /// The rule acts.
    Fires(TimeoutAction),
}

impl fmt::Display for RuleVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleVerdict::NotApplicable => f.write_str("not applicable"),
            RuleVerdict::NotYet { fires_after } => write!(f, "not yet: fires after {fires_after}"),
            RuleVerdict::Skipped(r) => write!(f, "skipped: {r}"),
            RuleVerdict::Fires(a) => write!(f, "{a}"),
        }
    }
}

/// The Watcher's verdict on a job it times out (Watcher.py L66-110); `sleep` is its
/// `sleepTime` (shown in hours in the recovery diag).
pub(crate) fn watcher_effect(job: &JobTimes, sleep: SimDuration) -> TimeoutEffect {
    let (error_code, diag) = if job.status == JobStatus::Sent {
        (DispatcherErrorCode::SendError, "Sent job didn't receive reply from pilot within 30 min".to_string())
    } else if job.error_reported {
        let h = sleep.as_millis() as f64 / 3.6e6;
        (DispatcherErrorCode::Recovery, format!("job recovery failed for {} hours", py_float(h)))
    } else {
        match job.end_time {
            None => (DispatcherErrorCode::Watcher, format!("lost heartbeat : {}", job.modification_time)),
            Some(end) => {
                let code = match job.status {
                    JobStatus::Holding => DispatcherErrorCode::Holding,
                    JobStatus::Transferring => DispatcherErrorCode::Transferring,
                    _ => DispatcherErrorCode::Timeout,
                };
                (code, format!("timeout in {} : last heartbeat at {end}", job.status.as_str()))
            }
        }
    };
    TimeoutEffect::Fail { error_code, diag }
}

/// What `killJob(code)` does to the job (job_complex_module L956-1075): none of copyArchive's
/// codes is a force kill, so a running job only gets the kill command.
pub(crate) fn kill_effect(job: &JobTimes, kill_code: KillCode) -> TimeoutEffect {
    if job.status == JobStatus::Running {
        return TimeoutEffect::CommandToKill { kill_code };
    }
    match kill_code {
        KillCode::Expire | KillCode::ExpireInWaiting => TimeoutEffect::Close {
            kill_code,
            job_sub_status: Some("toreassign"),
            error_code: TaskBufferErrorCode::Expire,
            diag: format!("expired in {}. status unchanged since {}", job.status.as_str(), job.state_change_time),
        },
        KillCode::ReassignedByJedi => TimeoutEffect::Close {
            kill_code,
            job_sub_status: Some("toreassign"),
            error_code: TaskBufferErrorCode::Kill,
            diag: "reassigned by JEDI".to_string(),
        },
        KillCode::FastRebrokerage => TimeoutEffect::Close {
            kill_code,
            job_sub_status: None,
            error_code: TaskBufferErrorCode::FastRebrokerage,
            diag: "fast rebrokerage due to Nq/Nr overshoot".to_string(),
        },
    }
}
