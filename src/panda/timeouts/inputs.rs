//! What the rules read of a job and of its queue (PQ): plain `Copy` structs the simulation
//! fills cheaply every cycle, with PanDA's statuses and labels as enums (no strings in the
//! loop), and the parsers from PanDA's strings.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::engine::time::{SimDuration, SimTime};

use super::hours;

/// `jobStatus` (JobSpec). Unknown strings parse as [`JobStatus::Other`], never an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    Pending,
    Defined,
    Assigned,
    Waiting,
    Activated,
    Throttled,
    Sent,
    Starting,
    Running,
    Stagein,
    Stageout,
    Holding,
    Transferring,
    Merging,
    Finished,
    Failed,
    Cancelled,
    Closed,
    /// Anything else (`dummy`, `unknown`, …): no rule selects it.
    Other,
}

impl JobStatus {
    /// Every status, in declaration order (`ALL[s as usize] == s`).
    pub const ALL: [JobStatus; 19] = [
        JobStatus::Pending,
        JobStatus::Defined,
        JobStatus::Assigned,
        JobStatus::Waiting,
        JobStatus::Activated,
        JobStatus::Throttled,
        JobStatus::Sent,
        JobStatus::Starting,
        JobStatus::Running,
        JobStatus::Stagein,
        JobStatus::Stageout,
        JobStatus::Holding,
        JobStatus::Transferring,
        JobStatus::Merging,
        JobStatus::Finished,
        JobStatus::Failed,
        JobStatus::Cancelled,
        JobStatus::Closed,
        JobStatus::Other,
    ];

    /// PanDA's spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            JobStatus::Pending => "pending",
            JobStatus::Defined => "defined",
            JobStatus::Assigned => "assigned",
            JobStatus::Waiting => "waiting",
            JobStatus::Activated => "activated",
            JobStatus::Throttled => "throttled",
            JobStatus::Sent => "sent",
            JobStatus::Starting => "starting",
            JobStatus::Running => "running",
            JobStatus::Stagein => "stagein",
            JobStatus::Stageout => "stageout",
            JobStatus::Holding => "holding",
            JobStatus::Transferring => "transferring",
            JobStatus::Merging => "merging",
            JobStatus::Finished => "finished",
            JobStatus::Failed => "failed",
            JobStatus::Cancelled => "cancelled",
            JobStatus::Closed => "closed",
            JobStatus::Other => "other",
        }
    }

    /// In `ATLAS_PANDA.jobsDefined4` (defined, assigned, and in 1.0.4 pending and waiting:
    /// copyArchive L886, `killJob` L874-880).
    pub const fn in_defined_table(self) -> bool {
        matches!(self, JobStatus::Defined | JobStatus::Assigned | JobStatus::Pending | JobStatus::Waiting)
    }

    /// In `ATLAS_PANDA.jobsActive4` and not final: activated … merging.
    pub const fn in_active_table(self) -> bool {
        matches!(
            self,
            JobStatus::Activated
                | JobStatus::Throttled
                | JobStatus::Sent
                | JobStatus::Starting
                | JobStatus::Running
                | JobStatus::Stagein
                | JobStatus::Stageout
                | JobStatus::Holding
                | JobStatus::Transferring
                | JobStatus::Merging
        )
    }

    /// The statuses whose heartbeat the Anal and General Watchers check: running, starting,
    /// stagein, stageout (L299-302, L446-449).
    pub const fn is_heartbeat_status(self) -> bool {
        matches!(self, JobStatus::Running | JobStatus::Starting | JobStatus::Stagein | JobStatus::Stageout)
    }

    /// Counted as queued by fast rebrokerage and reassigned by it: defined, assigned,
    /// activated, starting (L547, L612-615).
    pub const fn is_queued_for_rebrokerage(self) -> bool {
        matches!(self, JobStatus::Defined | JobStatus::Assigned | JobStatus::Activated | JobStatus::Starting)
    }
}

impl FromStr for JobStatus {
    type Err = std::convert::Infallible;
    /// PanDA's lower-case names; anything else is [`JobStatus::Other`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(JobStatus::ALL.into_iter().find(|j| j.as_str() == s).unwrap_or(JobStatus::Other))
    }
}

/// `prodSourceLabel`: production is `managed` (and `test`), analysis is `user` (and `panda`,
/// build jobs). Unknown strings parse as [`ProdSourceLabel::Other`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProdSourceLabel {
    Managed,
    Test,
    User,
    Panda,
    /// `ptest`, `rc_test`, `install`, …: only the label-blind rules select it.
    Other,
}

impl ProdSourceLabel {
    /// PanDA's spelling (the `<label>` of `PENDING_TIMEOUT_<label>`).
    pub const fn as_str(self) -> &'static str {
        match self {
            ProdSourceLabel::Managed => "managed",
            ProdSourceLabel::Test => "test",
            ProdSourceLabel::User => "user",
            ProdSourceLabel::Panda => "panda",
            ProdSourceLabel::Other => "other",
        }
    }

    /// `prodSourceLabel IN ('panda', 'user')`: what copyArchive calls analysis.
    pub const fn is_analysis(self) -> bool {
        matches!(self, ProdSourceLabel::User | ProdSourceLabel::Panda)
    }
}

impl FromStr for ProdSourceLabel {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "managed" => ProdSourceLabel::Managed,
            "test" => ProdSourceLabel::Test,
            "user" => ProdSourceLabel::User,
            "panda" => ProdSourceLabel::Panda,
            _ => ProdSourceLabel::Other,
        })
    }
}

/// A PQ's CRIC `status`. Unknown strings parse as [`QueueStatus::Other`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueueStatus {
    #[default]
    Online,
    Offline,
    Test,
    Paused,
    Brokeroff,
    Other,
}

impl QueueStatus {
    pub const fn as_str(self) -> &'static str {
        match self {
            QueueStatus::Online => "online",
            QueueStatus::Offline => "offline",
            QueueStatus::Test => "test",
            QueueStatus::Paused => "paused",
            QueueStatus::Brokeroff => "brokeroff",
            QueueStatus::Other => "other",
        }
    }

    /// `site_status in ["offline", "test"]` (inactive-site rule L684, analysis rebrokerage L1135).
    pub const fn is_offline_or_test(self) -> bool {
        matches!(self, QueueStatus::Offline | QueueStatus::Test)
    }
}

impl FromStr for QueueStatus {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "online" => QueueStatus::Online,
            "offline" => QueueStatus::Offline,
            "test" => QueueStatus::Test,
            "paused" => QueueStatus::Paused,
            "brokeroff" => QueueStatus::Brokeroff,
            _ => QueueStatus::Other,
        })
    }
}

/// `SiteSpec.hasValueInCatchall(key)` on the catchall string (SiteSpec.py L132-148): some
/// comma-separated item *starts with* `key` (`re.search("^key(=|)*", item)`; no trimming, so
/// `" disableReassign"` does not count and `"disableReassignX"` does).
pub fn catchall_has_key(catchall: &str, key: &str) -> bool {
    catchall.split(',').any(|item| item.starts_with(key))
}

/// `SiteSpec.disable_reassign()` from the catchall: `disableReassign` present. (The method's
/// second line, `self.status == "paused"`, has no `return`: a paused PQ does *not* disable
/// reassignment in 1.0.4.) `None` (no catchall) is false.
pub fn disable_reassign_from_catchall(catchall: Option<&str>) -> bool {
    catchall.is_some_and(|c| catchall_has_key(c, "disableReassign"))
}

/// Which General Watcher covers a PQ (L438-486), from [`super::HeartbeatPlan::cover`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HeartbeatCover {
    /// The `production` pass, with `HEARTBEAT_TIMEOUT_production` (default 2 h).
    Production { timeout: SimDuration },
    /// The pass of the PQ's own workflow, with `HEARTBEAT_TIMEOUT_<workflow>`.
    Workflow { timeout: SimDuration },
    /// No pass selects the PQ (its workflow is literally `production` or `analysis` while
    /// another workflow has its own timeout: the production pass excludes every listed
    /// workflow, L452-456, and the analysis one is skipped).
    Uncovered,
}

impl Default for HeartbeatCover {
    /// The production pass with the default 2 h.
    fn default() -> Self {
        HeartbeatCover::Production { timeout: hours(2) }
    }
}

impl HeartbeatCover {
    /// The heartbeat timeout, if a pass covers the PQ.
    pub const fn timeout(self) -> Option<SimDuration> {
        match self {
            HeartbeatCover::Production { timeout } | HeartbeatCover::Workflow { timeout } => Some(timeout),
            HeartbeatCover::Uncovered => None,
        }
    }
}

/// One job as the timeout rules read it (columns of `jobsDefined4`/`jobsActive4`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobTimes {
    pub status: JobStatus,
    pub label: ProdSourceLabel,
    /// `currentPriority`.
    pub current_priority: i64,
    /// `creationTime`.
    pub creation_time: SimTime,
    /// `modificationTime`: the last heartbeat or update (every pilot heartbeat sets it).
    pub modification_time: SimTime,
    /// `stateChangeTime`: when the job entered its status.
    pub state_change_time: SimTime,
    /// `startTime`, if set (the transferring timeout falls back to it).
    #[serde(default)]
    pub start_time: Option<SimTime>,
    /// `endTime`, if set (the pilot reported the payload's end; holding/transferring).
    #[serde(default)]
    pub end_time: Option<SimTime>,
    /// `lockedby = 'jedi'` (a JEDI job); false is `lockedBy IS NULL`.
    pub lockedby_jedi: bool,
    /// `processingType = 'pmerge'` (pre-merge).
    #[serde(default)]
    pub is_pmerge: bool,
    /// A build job (`transformation LIKE '%build%'`).
    #[serde(default)]
    pub is_build: bool,
    /// `relocationFlag`; `Some(2)` = not reassignable. `NULL` passes `relocationFlag IS NULL OR
    /// <> 2` but fails the inactive-site rule's bare `relocationFlag <> 2`.
    #[serde(default)]
    pub relocation_flag: Option<i64>,
    /// `jobSubStatus` is set (own stage-out mechanism of the workflow).
    #[serde(default)]
    pub job_sub_status_set: bool,
    /// `pilotErrorDiag` or `exeErrorDiag` set (the Watcher then reports 101, recovery failed).
    #[serde(default)]
    pub error_reported: bool,
    /// A job output report of the pilot is waiting to be processed (`listJobOutputReport`,
    /// L357-367): the Holding Anal/DDM Watcher leaves the job alone.
    #[serde(default)]
    pub output_report_pending: bool,
}

impl Default for JobTimes {
    /// A managed JEDI job created, modified and changed at time zero, in `defined`.
    fn default() -> Self {
        Self {
            status: JobStatus::Defined,
            label: ProdSourceLabel::Managed,
            current_priority: 0,
            creation_time: SimTime::ZERO,
            modification_time: SimTime::ZERO,
            state_change_time: SimTime::ZERO,
            start_time: None,
            end_time: None,
            lockedby_jedi: true,
            is_pmerge: false,
            is_build: false,
            relocation_flag: Some(1),
            job_sub_status_set: false,
            error_reported: false,
            output_report_pending: false,
        }
    }
}

/// The job's queue (PQ) as the rules read it, filled once per PQ and cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QueueTimes {
    /// CRIC `status` (`paused` skips timeouts, `offline`/`test` make the site inactive).
    pub status: QueueStatus,
    /// In `sitesToDisableReassign` (L263-270): catchall has `disableReassign` (see
    /// [`disable_reassign_from_catchall`]); unified child queues are never in it.
    pub disable_reassign: bool,
    /// `siteData.laststart` (flag `production`, hours 3): the last pilot start, if known.
    pub last_start: Option<SimTime>,
    /// Which General Watcher pass covers the PQ ([`super::HeartbeatPlan::cover`]).
    pub heartbeat: HeartbeatCover,
    /// Some job at this PQ meets [`super::inactive_site_probe`] this cycle: the PQ is in the
    /// site list of the inactive-site rule (L642-657). The job itself always counts, so leaving
    /// this false is exact whenever the job being checked would select the PQ on its own.
    pub has_stale_high_prio_job: bool,
}
