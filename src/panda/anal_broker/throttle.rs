//! Pre-brokerage throttles of an analysis task (seed 004, "ATLAS Analysis Job Brokerage", the
//! three throttle conditions; reference §4 "Pre-brokerage throttles", `AtlasAnalJobBroker.py`
//! L167-361).
//!
//! In code order, the first that holds stops the brokerage of the task for this cycle:
//!
//! ```text
//! caps (not merging; user, or the working group if the task has one):
//!   nRunJobs   > CAP_RUNNING_{USER|GROUP}_JOBS        nQueuedJobs  > 2 × CAP_…_JOBS
//!   nRunCores  > CAP_RUNNING_{USER|GROUP}_CORES       nQueuedCores > 2 × CAP_…_CORES
//!   (queued = defined/assigned/activated/starting/throttled; a cap of 0 or unset = none)
//! class throttle (gshare "User Analysis", with its usage and the task's class known):
//!   usage% = min(100·usage_perc(UA), 100·eqiv_usage_perc(L1 UA))
//!   C: usage% > 90      B: usage% > 95      S: never
//!   A: usage% · ratio_A > 100, ratio_A = 1 − rem_slots_A / USER_USAGE_THRESHOLD_A
//!      (0.5 without a user evaluation)
//! disk quota: over the global quota → fail; near it and not merging → only merge jobs.
//! ```
//!
//! The seed's A rule, `usage > max(THRESHOLD_A / slots_hi, 1) · 100 %`, is the same inequality:
//! `rem_slots_A = max(THRESHOLD_A − slots_hi, 0)` makes `ratio_A = min(slots_hi / THRESHOLD_A, 1)`.
//!
//! Caps and the class throttle return `SC_WAITING` in 1.0.4 (panda-server #783: a throttled task
//! is not penalised by the pending timeout); the quota checks return `SC_FAILED`.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::params::AnalBrokerParams;

/// The gshare the class throttle and the new weight's site classes concern.
pub const USER_ANALYSIS: &str = "User Analysis";
/// The other gshare whose tasks get site-class weights (and are always class S).
pub const EXPRESS_ANALYSIS: &str = "Express Analysis";
/// `maxFactor` (L181): queued caps are this multiple of the running caps.
pub const QUEUED_CAP_FACTOR: u64 = 2;
/// Class throttle thresholds in % of the share target (L251-254).
pub const THROTTLE_PERC_A: f64 = 100.0;
pub const THROTTLE_PERC_B: f64 = 95.0;
pub const THROTTLE_PERC_C: f64 = 90.0;
/// `usage_slot_ratio_A` without a user evaluation (L301).
pub const RATIO_A_WITHOUT_USER_EVAL: f64 = 0.5;

/// Task class of the task evaluator (reference §4 "Site & task classification"; the
/// `class` value of metric `analy_task_eval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum TaskClass {
    /// −1: the user has no slots left in A nor B.
    C,
    /// 0: no slots left in A.
    B,
    /// 1: the default.
    A,
    /// 2: Express Analysis, or a nearly done A/B task.
    S,
}

impl TaskClass {
    /// PanDA's integer value.
    pub fn value(self) -> i8 {
        match self {
            TaskClass::C => -1,
            TaskClass::B => 0,
            TaskClass::A => 1,
            TaskClass::S => 2,
        }
    }
}

/// `countJobsPerTarget_JEDI` for the user or the working group (task_standalone_module L3701-3745).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobCounts {
    pub n_run_jobs: u64,
    pub n_queued_jobs: u64,
    pub n_run_cores: u64,
    pub n_queued_cores: u64,
}

/// The usage of the `User Analysis` share (metric `gshare_preference`), fractions of target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ShareUsage {
    /// `usage_perc` of the task's gshare (1.0 = at target).
    pub usage_perc: f64,
    /// `eqiv_usage_perc` of `L1 User Analysis`, when known.
    pub l1_eqiv_usage_perc: Option<f64>,
}

/// The user's evaluation (metric `analy_user_eval`): slots left before class A / B end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct UserEval {
    pub rem_slots_a: f64,
    pub rem_slots_b: f64,
}

/// `ddmIF.check_global_quota` for the user (or working group).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Quota {
    #[default]
    Ok,
    /// Close to the global limit: only merge jobs are generated.
    Near,
    /// Over the global limit.
    Over,
}

/// What the throttle looks at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThrottleInput<'a> {
    /// The task's gshare name.
    pub gshare: &'a str,
    /// The task has a workingGroup: the group's counts and `CAP_RUNNING_GROUP_*` apply.
    pub working_group: bool,
    /// A merge chunk: caps and quota-near do not apply.
    pub is_merging: bool,
    /// `None` (PanDA's empty result of a failed query) skips the caps.
    pub counts: Option<JobCounts>,
    /// `None`: no fresh `gshare_preference` metric → no class throttle.
    pub share_usage: Option<ShareUsage>,
    /// `None`: no task evaluation → no class throttle.
    pub task_class: Option<TaskClass>,
    pub user_eval: Option<UserEval>,
    pub quota: Quota,
}

/// The task status a throttle leads to (JEDI return codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThrottleStatus {
    /// `SC_WAITING`: retried later, not counted by the pending timeout.
    Waiting,
    /// `SC_FAILED`: a temporary error; the task goes pending.
    Failed,
}

/// Why the task is throttled; `Display` is PanDA's log message.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ThrottleReason {
    RunningJobs {
        n: u64,
        group: bool,
    },
    QueuedJobs {
        n: u64,
        group: bool,
    },
    RunningCores {
        n: u64,
        group: bool,
    },
    QueuedCores {
        n: u64,
        group: bool,
    },
    ClassC {
        usage_percent: f64,
    },
    ClassB {
        usage_percent: f64,
    },
    /// `threshold` = `1 / (ratio_A + 2⁻²⁰)` as the log prints it.
    ClassA {
        usage_percent: f64,
        threshold: f64,
    },
    OverGlobalQuota,
    NearGlobalQuota,
}

impl ThrottleReason {
    /// `SC_WAITING` for caps and classes (1.0.4), `SC_FAILED` for quota.
    pub fn status(&self) -> ThrottleStatus {
        match self {
            ThrottleReason::OverGlobalQuota | ThrottleReason::NearGlobalQuota => ThrottleStatus::Failed,
            _ => ThrottleStatus::Waiting,
        }
    }
}

fn key(group: bool, cores: bool) -> &'static str {
    match (group, cores) {
        (false, false) => "CAP_RUNNING_USER_JOBS",
        (false, true) => "CAP_RUNNING_USER_CORES",
        (true, false) => "CAP_RUNNING_GROUP_JOBS",
        (true, true) => "CAP_RUNNING_GROUP_CORES",
    }
}

impl fmt::Display for ThrottleReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = "throttle to generate jobs due to";
        match *self {
            ThrottleReason::RunningJobs { n, group } => {
                write!(f, "{t} too many running jobs {n} > {}", key(group, false))
            }
            ThrottleReason::QueuedJobs { n, group } => {
                write!(f, "{t} too many queued jobs {n} > {QUEUED_CAP_FACTOR}x{}", key(group, false))
            }
            ThrottleReason::RunningCores { n, group } => {
                write!(f, "{t} too many running cores {n} > {}", key(group, true))
            }
            ThrottleReason::QueuedCores { n, group } => {
                write!(f, "{t} too many queued cores {n} > {QUEUED_CAP_FACTOR}x{}", key(group, true))
            }
            ThrottleReason::ClassC { .. } => {
                write!(f, "{t} gshare {USER_ANALYSIS} > {THROTTLE_PERC_C}% of target and task in class C")
            }
            ThrottleReason::ClassB { .. } => {
                write!(f, "{t} gshare {USER_ANALYSIS} > {THROTTLE_PERC_B}% of target and task in class B")
            }
            // Python `{threshold:.3%}`: × 100, three decimals, a percent sign.
            ThrottleReason::ClassA { threshold, .. } => {
                write!(f, "{t} gshare {USER_ANALYSIS} > {:.3}% of target and task in class A", threshold * 100.0)
            }
            ThrottleReason::OverGlobalQuota => write!(f, "{t} the global disk quota being exceeded"),
            ThrottleReason::NearGlobalQuota => {
                write!(f, "throttle to generate only merge jobs due to the global disk quota being nearly exceeded")
            }
        }
    }
}

/// The caps (L167-203): `None` when none is exceeded.
fn caps(p: &AnalBrokerParams, input: &ThrottleInput<'_>) -> Option<ThrottleReason> {
    let c = input.counts?;
    if input.is_merging {
        return None;
    }
    let group = input.working_group;
    let (jobs, cores) = if group {
        (p.cap_running_group_jobs, p.cap_running_group_cores)
    } else {
        (p.cap_running_user_jobs, p.cap_running_user_cores)
    };
    if let Some(cap) = jobs.filter(|&c| c > 0) {
        if c.n_run_jobs > cap {
            return Some(ThrottleReason::RunningJobs { n: c.n_run_jobs, group });
        }
        if c.n_queued_jobs > cap.saturating_mul(QUEUED_CAP_FACTOR) {
            return Some(ThrottleReason::QueuedJobs { n: c.n_queued_jobs, group });
        }
    }
    if let Some(cap) = cores.filter(|&c| c > 0) {
        if c.n_run_cores > cap {
            return Some(ThrottleReason::RunningCores { n: c.n_run_cores, group });
        }
        if c.n_queued_cores > cap.saturating_mul(QUEUED_CAP_FACTOR) {
            return Some(ThrottleReason::QueuedCores { n: c.n_queued_cores, group });
        }
    }
    None
}

/// `usage%` of the class throttle: `min(100·usage_perc, 100·eqiv_usage_perc(L1))`.
pub fn usage_percent(u: &ShareUsage) -> f64 {
    let own = u.usage_perc * 100.0;
    match u.l1_eqiv_usage_perc {
        Some(l1) if !l1.is_nan() => own.min(l1 * 100.0),
        _ => own,
    }
}

/// `usage_slot_ratio_A = 1 − rem_slots_A / USER_USAGE_THRESHOLD_A`, 0.5 without a user
/// evaluation; `None` when the threshold is 0 (PanDA's `ZeroDivisionError`, caught by the
/// surrounding `try`, which then skips the whole class throttle).
pub fn usage_slot_ratio_a(user_eval: Option<&UserEval>, threshold_a: f64) -> Option<f64> {
    match user_eval {
        None => Some(RATIO_A_WITHOUT_USER_EVAL),
        Some(_) if threshold_a == 0.0 => None,
        Some(u) => Some(1.0 - u.rem_slots_a / threshold_a),
    }
}

/// The class throttle of `User Analysis` tasks (L295-335).
fn class_throttle(p: &AnalBrokerParams, input: &ThrottleInput<'_>) -> Option<ThrottleReason> {
    if input.gshare != USER_ANALYSIS {
        return None;
    }
    let (usage, class) = (input.share_usage?, input.task_class?);
    let usage_percent = usage_percent(&usage);
    let ratio = usage_slot_ratio_a(input.user_eval.as_ref(), p.user_usage_threshold_a)?;
    match class {
        TaskClass::C if usage_percent > THROTTLE_PERC_C => Some(ThrottleReason::ClassC { usage_percent }),
        TaskClass::B if usage_percent > THROTTLE_PERC_B => Some(ThrottleReason::ClassB { usage_percent }),
        TaskClass::A if usage_percent * ratio > THROTTLE_PERC_A => {
            Some(ThrottleReason::ClassA { usage_percent, threshold: 1.0 / (ratio + 2f64.powi(-20)) })
        }
        _ => None,
    }
}

/// The pre-brokerage throttles in code order: caps, class throttle, global quota. `None` lets
/// the task go on to [`super::broker()`].
pub fn throttle(params: &AnalBrokerParams, input: &ThrottleInput<'_>) -> Option<ThrottleReason> {
    let p = params.sane();
    caps(&p, input).or_else(|| class_throttle(&p, input)).or(match input.quota {
        Quota::Over => Some(ThrottleReason::OverGlobalQuota),
        Quota::Near if !input.is_merging => Some(ThrottleReason::NearGlobalQuota),
        _ => None,
    })
}
