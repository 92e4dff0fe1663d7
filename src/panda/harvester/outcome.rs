//! What [`super::define_num_workers`] answers: per row the number and how it came about, with
//! `Display`s that reproduce Harvester's log lines (worker_adjuster.py L545-939), and the Python
//! exceptions that make it return `None` as [`AdjusterError`].

use std::fmt;

use super::config::WorkerLimits;
use super::{DEFAULT_JOB_TYPE, DEFAULT_PILOT_TYPE, TypeName, sat};

/// Why a row was skipped before the rule (Display = Harvester's log line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    QueueStatus(String),
    MissingQueueConfig,
    Throttled(String),
    /// Slave mode, PanDA commanded 0 for the row.
    SlaveZero,
    /// Self mode, a non-PR pilot type got nothing from the pre-allocation.
    NonDefaultPilotTypeZero,
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::QueueStatus(s) => write!(f, "set n_new_workers=0 since status={s}"),
            Self::MissingQueueConfig => write!(f, "set n_new_workers=0 due to missing queue_config"),
            Self::Throttled(m) => write!(f, "set n_new_workers=0 by {m}"),
            Self::SlaveZero => write!(f, "set n_new_workers=0 by panda in slave mode"),
            Self::NonDefaultPilotTypeZero => {
                write!(f, "got n_new_workers=0 for non-{DEFAULT_PILOT_TYPE} pilot_type in self mode; skipped")
            }
        }
    }
}

/// A limit check that fired (Display = Harvester's log line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitReason {
    QueueLimit { n_queue: i64, limit: i64 },
    MaxWorkers { n_queue: i64, n_ready: i64, n_running: i64, max_workers: i64 },
    Cores { cores_queue: i64, limit: i64 },
    Memory { memory_queue: i64, limit: i64 },
}

impl fmt::Display for LimitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::QueueLimit { n_queue, limit } => {
                write!(f, "No n_new_workers since n_queue({n_queue})>=n_queue_limit_per_rt({limit})")
            }
            Self::MaxWorkers { n_queue, n_ready, n_running, max_workers } => write!(
                f,
                "No n_new_workers since n_queue({n_queue}) + n_ready({n_ready}) + n_running({n_running}) >= max_workers({max_workers})"
            ),
            Self::Cores { cores_queue, limit } => {
                write!(f, "No n_new_workers since cores_queue({cores_queue}) >= queue_limit_cores({limit})")
            }
            Self::Memory { memory_queue, limit } => {
                write!(f, "No n_new_workers since memory_queue({memory_queue} MB) >= queue_limit_memory({limit} MB)")
            }
        }
    }
}

/// The step of the rule that set a computed row's number last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    MaxQueuedWorkers,
    MaxWorkers,
    QueueLimitCores,
    QueueLimitMemory,
    MaxNewWorkersPerCycle,
    MaxNewWorkers,
}

impl Step {
    /// The tail of Harvester's "setting n_new_workers to N …" line.
    pub fn log_tail(self) -> &'static str {
        match self {
            Self::MaxQueuedWorkers => "in max_queued_workers calculation",
            Self::MaxWorkers => "to respect max_workers",
            Self::QueueLimitCores => "to respect queue_limit_cores",
            Self::QueueLimitMemory => "to respect queue_limit_memory",
            Self::MaxNewWorkersPerCycle => "in order to respect maxNewWorkersPerCycle",
            Self::MaxNewWorkers => "in order to respect universal maxNewWorkers",
        }
    }
}

/// How a row's number came about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowOutcome {
    Skipped(SkipReason),
    /// A limit check fired; the row keeps `kept` (0, or the carried value under `HarvesterHead`).
    Limited {
        reason: LimitReason,
        kept: i64,
    },
    /// The rule ran: `max_queued_workers` (after the slave / pull limits), the pull-mode
    /// `n_activated` if that branch ran, and the step that set the number last.
    Computed {
        max_queued_workers: i64,
        n_activated: Option<i64>,
        binding: Step,
    },
}

/// The decision for one resource type × pilot type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowDecision {
    pub resource_type: TypeName,
    pub pilot_type: TypeName,
    /// Workers to submit (the submitter makes `n_new_workers + n_ready`).
    pub n_new_workers: u64,
    pub outcome: RowOutcome,
    /// The row's number before the UCORE aggregation changed it, if it did.
    pub before_ucore: Option<i64>,
}

impl fmt::Display for RowDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "resource_type={} pilot_type={}: ", self.resource_type, self.pilot_type)?;
        match &self.outcome {
            RowOutcome::Skipped(r) => write!(f, "{r}")?,
            RowOutcome::Limited { reason, .. } => write!(f, "{reason}")?,
            RowOutcome::Computed { max_queued_workers, n_activated, binding } => {
                if let Some(a) = n_activated {
                    write!(
                        f,
                        "limiting max_queued_workers to min(n_activated={a}, queue_limit) = {max_queued_workers}; "
                    )?;
                }
                let n = self.before_ucore.unwrap_or(sat(self.n_new_workers));
                write!(f, "setting n_new_workers to {n} {}", binding.log_tail())?;
            }
        }
        if self.before_ucore.is_some() {
            write!(
                f,
                "; setting n_new_workers to {} of job_type={DEFAULT_JOB_TYPE} resource_type={} pilot_type={} in order to respect rtype aggregations for UCORE",
                self.n_new_workers, self.resource_type, self.pilot_type
            )?;
        }
        Ok(())
    }
}

/// The UCORE aggregation's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UcoreAggregation {
    /// Σ n_new over the resource types before the cap.
    pub total: i64,
    /// `n_new_workers_max_agg`.
    pub max_agg: i64,
    /// Whether the cap bit (total > max_agg).
    pub adjusted: bool,
}

impl fmt::Display for UcoreAggregation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.adjusted && self.max_agg == 0 {
            write!(f, "No n_new_workers since n_new_workers_max_agg=0 for UCORE")
        } else {
            write!(f, "n_new_workers_max_agg={} for UCORE (requested {})", self.max_agg, self.total)
        }
    }
}

/// `define_num_workers`' answer for one PQ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteDecision {
    pub limits: WorkerLimits,
    /// Resource types × pilot types, in input order (pilot-type `ANY` rows are not returned).
    pub rows: Vec<RowDecision>,
    /// Set on UCORE PQs.
    pub ucore: Option<UcoreAggregation>,
}

impl SiteDecision {
    /// New workers of one row (0 if absent).
    pub fn n_new_workers(&self, resource_type: &str, pilot_type: &str) -> u64 {
        self.rows
            .iter()
            .find(|r| r.resource_type == resource_type && r.pilot_type == pilot_type)
            .map_or(0, |r| r.n_new_workers)
    }

    /// New workers over all rows.
    pub fn total(&self) -> u64 {
        self.rows.iter().map(|r| r.n_new_workers).fold(0, u64::saturating_add)
    }
}

/// Where Harvester's `define_num_workers` raises and returns `None`: nothing is submitted to
/// the PQ this cycle. Display = the Python exception.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdjusterError {
    /// Pull mode with job statistics but `nQueueLimitWorker` 0 (e.g. `maxWorkers` 0):
    /// `min(n_activated, None)`.
    NoQueueLimitInPullMode,
    /// A core limit is set and a worker of `resource_type` needs 0 cores.
    ZeroCoresPerWorker { resource_type: String },
    /// A memory limit is set and a worker of `resource_type` needs 0 MB.
    ZeroMemoryPerWorker { resource_type: String },
    /// `int(nActivated × factor)` of a NaN or infinite product.
    NonFiniteActivation,
    /// `[submitter] noPilotsWhenNoActiveJobs = False` written explicitly.
    NoPilotsAttributeUnset,
    /// PanDA commanded workers for a PQ without queue config (`queue_config.runMode` on None).
    MissingQueueConfigForCommand,
}

impl fmt::Display for AdjusterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoQueueLimitInPullMode => {
                write!(f, "TypeError: '<' not supported between instances of 'NoneType' and 'int'")
            }
            Self::ZeroCoresPerWorker { resource_type } => {
                write!(f, "ZeroDivisionError: division by zero (cores per {resource_type} worker)")
            }
            Self::ZeroMemoryPerWorker { resource_type } => {
                write!(f, "ZeroDivisionError: division by zero (memory per {resource_type} worker)")
            }
            Self::NonFiniteActivation => write!(f, "ValueError: cannot convert float NaN or infinity to integer"),
            Self::NoPilotsAttributeUnset => {
                write!(f, "AttributeError: 'WorkerAdjuster' object has no attribute 'no_pilots_when_no_active_jobs'")
            }
            Self::MissingQueueConfigForCommand => {
                write!(f, "AttributeError: 'NoneType' object has no attribute 'runMode'")
            }
        }
    }
}

impl std::error::Error for AdjusterError {}
