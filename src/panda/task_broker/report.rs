//! Why brokerage decided what it did, in PanDA's own words: every skipped nucleus carries a
//! [`SkipReason`] whose `Display` is the message `AtlasProdTaskBroker.py` logs (after
//! `skip nucleus=NAME`; [`Skip`] prints the whole line), a task that cannot be brokered carries
//! a [`PendingReason`], and [`Locality`] says what became of the data-locality check.
//!
//! Task brokerage has no temporary skips (unlike job brokerage, reference §2): every skip holds
//! for this brokerage cycle only, and a task left without candidates stays `assigning` and is
//! brokered afresh on a later cycle (seed: after 30 min).

use std::fmt;

use super::input::{NucleusState, WanStatus};
pub use crate::panda::pyfmt::py_float;

/// The filter stages in code order, named as in PanDA's summary (`add_summary_message`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    Status,
    TransferBacklog,
    StorageEndpoint,
    Job,
    Data,
    FullChain,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Status => "status check",
            Stage::TransferBacklog => "transfer backlog check",
            Stage::StorageEndpoint => "storage endpoint check",
            Stage::Job => "job check",
            Stage::Data => "data check",
            Stage::FullChain => "full-chain check",
        })
    }
}

/// How the disk-space message words the space (the code's or the seed's quantity).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpaceWording {
    /// `usable … - projected demand …` (panda-server 1.0.4).
    Usable,
    /// `free … - reserved …` (the code the seed documents: space_free + space_expired).
    FreePlusExpired,
}

/// Why a nucleus was dropped; `Display` reproduces PanDA's message after `skip nucleus=NAME `.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SkipReason<'a> {
    /// State other than `ACTIVE` (`criteria=-status`).
    Status { state: NucleusState },
    /// Σ queued output files > `NQUEUED_NUC_CAP` (`criteria=-transfer_backlog`).
    TransferBacklog,
    /// No endpoint for the dataset's storage token (`criteria=-match`).
    NoEndpoint { token: &'a str },
    /// The endpoint's `read_wan` is down (`criteria=-source_blacklist`).
    SourceBlacklist { endpoint: &'a str, status: WanStatus },
    /// The endpoint's `write_wan` is down (`criteria=-destination_blacklist`).
    DestinationBlacklist { endpoint: &'a str, status: WanStatus },
    /// Space minus projected demand below `DISK_THRESHOLD` (`criteria=-space`); all in GB.
    DiskShortage { space_gb: f64, demand_gb: f64, threshold_gb: f64, endpoint: &'a str, wording: SpaceWording },
    /// No PQ of the nucleus survives the job check (`criteria=-job`).
    NoJobs,
    /// Too little of the input size local (`criteria=-insize`).
    InputSize { available_bytes: u64, total_bytes: u64, fraction: f64 },
    /// Too few of the input files local (`criteria=-innum`).
    InputNum { available: u64, total: u64, fraction: f64 },
    /// `bareNucleus=only` and the task is not full-chain (`criteria=-full_chain`).
    OnlyFullChain,
    /// The task needs a bare nucleus (`criteria=-full_chain`).
    NoFullChainCapability,
    /// The full-chain parent ran on another (bare) nucleus (`criteria=-full_chain`).
    ParentElsewhere,
}

impl SkipReason<'_> {
    /// The filter that produced the reason.
    pub fn stage(&self) -> Stage {
        match self {
            SkipReason::Status { .. } => Stage::Status,
            SkipReason::TransferBacklog => Stage::TransferBacklog,
            SkipReason::NoEndpoint { .. }
            | SkipReason::SourceBlacklist { .. }
            | SkipReason::DestinationBlacklist { .. }
            | SkipReason::DiskShortage { .. } => Stage::StorageEndpoint,
            SkipReason::NoJobs => Stage::Job,
            SkipReason::InputSize { .. } | SkipReason::InputNum { .. } => Stage::Data,
            SkipReason::OnlyFullChain | SkipReason::NoFullChainCapability | SkipReason::ParentElsewhere => {
                Stage::FullChain
            }
        }
    }
}

/// Python's `x // 1024` of a GB figure, printed as the integer it is in PanDA.
fn tb(gb: f64) -> String {
    py_num((gb / 1024.0).floor())
}

impl fmt::Display for SkipReason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SkipReason::Status { state } => write!(f, "due to status={state} criteria=-status"),
            SkipReason::TransferBacklog => f.write_str("due to long transfer backlog criteria=-transfer_backlog"),
            SkipReason::NoEndpoint { token } => write!(f, "since no endpoint with {token} criteria=-match"),
            SkipReason::SourceBlacklist { endpoint, status } => {
                write!(f, "since {endpoint} has read_wan={status} criteria=-source_blacklist")
            }
            SkipReason::DestinationBlacklist { endpoint, status } => {
                write!(f, "since {endpoint} has write_wan={status} criteria=-destination_blacklist")
            }
            SkipReason::DiskShortage { space_gb, demand_gb, threshold_gb, endpoint, wording } => {
                let (have, minus) = match wording {
                    SpaceWording::Usable => ("usable", "projected demand"),
                    SpaceWording::FreePlusExpired => ("free", "reserved"),
                };
                write!(
                    f,
                    "since disk shortage ({have} {} TB - {minus} {} TB < thr {} TB) at endpoint {endpoint} \
                     criteria=-space",
                    tb(space_gb),
                    tb(demand_gb),
                    tb(threshold_gb)
                )
            }
            SkipReason::NoJobs => f.write_str("due to missing ability to run jobs criteria=-job"),
            SkipReason::InputSize { available_bytes, total_bytes, fraction } => write!(
                f,
                "due to insufficient input size {available_bytes}B < {total_bytes}*{} criteria=-insize",
                py_float(fraction)
            ),
            SkipReason::InputNum { available, total, fraction } => write!(
                f,
                "due to short number of input files {available} < {total}*{} criteria=-innum",
                py_float(fraction)
            ),
            SkipReason::OnlyFullChain => f.write_str("since only full-chain tasks are allowed criteria=-full_chain"),
            SkipReason::NoFullChainCapability => {
                f.write_str("due to lack of full-chain capability criteria=-full_chain")
            }
            SkipReason::ParentElsewhere => {
                f.write_str("since the parent of the full-chain ran elsewhere criteria=-full_chain")
            }
        }
    }
}

/// A skipped nucleus: its index, its name and why. `Display` is PanDA's whole log line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Skip<'a> {
    pub nucleus: usize,
    pub name: &'a str,
    pub reason: SkipReason<'a>,
}

impl fmt::Display for Skip<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "  skip nucleus={} {}", self.name, self.reason)
    }
}

/// Why the task gets no nucleus this cycle (it stays `assigning`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PendingReason<'a> {
    /// Every candidate was skipped; `stage` is the filter that emptied the list.
    NoCandidates { stage: Stage },
    /// An input dataset has no complete replica readable over WAN anywhere (data lookup).
    NoRemoteSource { dataset: &'a str },
    /// The job check kept no nucleus (`AtlasProdJobBroker` found no PQ).
    NoSitesCanRunJobs,
    /// A full-chain task whose parent task cannot be read.
    ParentNotFound,
    /// panda-server only: a nucleus has no endpoint for an output token; the code reads
    /// `tmpEP["ddm_endpoint_name"]` before testing `tmpEP is None` (L343-344), so the whole
    /// brokerage of the task raises instead of skipping that nucleus.
    EndpointLookupCrash { nucleus: &'a str, token: &'a str },
    /// panda-server only: a full-chain parent whose nucleus the site mapper does not know
    /// (`None.get_bare_nucleus_mode()` raises).
    ParentNucleusUnknown,
}

impl fmt::Display for PendingReason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PendingReason::NoCandidates { .. } => f.write_str("no candidates"),
            PendingReason::NoRemoteSource { dataset } => {
                write!(f, "dataset={dataset} is incomplete/missing at online endpoints with read_wan=ON")
            }
            PendingReason::NoSitesCanRunJobs => f.write_str("no sites can run jobs"),
            PendingReason::ParentNotFound => f.write_str("failed to get parent taskSpec"),
            PendingReason::EndpointLookupCrash { .. } => f.write_str(
                "AtlasProdTaskBrokerThread.runImpl() failed with TypeError 'NoneType' object is not subscriptable",
            ),
            PendingReason::ParentNucleusUnknown => f.write_str(
                "AtlasProdTaskBrokerThread.runImpl() failed with AttributeError 'NoneType' object has no attribute \
                 'get_bare_nucleus_mode'",
            ),
        }
    }
}

/// The numbers of PanDA's `data_locality_check_str`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LocalityRule {
    pub io_intensity: Option<f64>,
    pub min_io_intensity: f64,
    /// `int(totInputSize)` is printed; the comparison uses the exact GB.
    pub total_input_gb: f64,
    pub min_input_size_gb: f64,
    pub priority: i64,
    pub max_task_prio: i64,
    pub period_days: f64,
}

impl fmt::Display for LocalityRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let io = self.io_intensity.map_or_else(|| "None".to_string(), py_num);
        write!(
            f,
            "(ioIntensity ({io}) is None or less than {} kBPerS and input size ({} GB) is less than {}) or \
             (task.currentPriority ({}) is higher than or equal to {}) or the task is in assigning for {} days",
            py_num(self.min_io_intensity),
            py_num(self.total_input_gb.trunc()),
            py_num(self.min_input_size_gb),
            self.priority,
            self.max_task_prio,
            py_num(self.period_days)
        )
    }
}

/// What became of the data-locality check.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Locality {
    /// Brokerage stopped before the check.
    NotReached,
    /// No input dataset was looked up (all pseudo/DBR/log): no check, no data factor.
    NoInputData,
    /// In `assigning` longer than `DATA_LOCATION_CHECK_PERIOD` days: no check, but the weight
    /// still has its data factor (the code does not clear the data map on this path).
    SkippedFrozen { period_days: f64 },
    /// The check ran and some nucleus passed.
    Checked,
    /// No nucleus passed and the disabling rule held: all kept, no data factor in the weight.
    Disabled(LocalityRule),
    /// No nucleus passed and the rule did not hold: the task waits.
    Unavoidable(LocalityRule),
}

impl fmt::Display for Locality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Locality::NotReached => f.write_str("data check not reached"),
            Locality::NoInputData => f.write_str("no input data to check"),
            Locality::SkippedFrozen { period_days } => {
                write!(f, "disabled data check since the task was in assigning for {} days", py_num(*period_days))
            }
            Locality::Checked => f.write_str("data check applied"),
            Locality::Disabled(rule) => {
                write!(f, "  disable data locality check since no nucleus has input data, {rule}")
            }
            Locality::Unavoidable(rule) => {
                write!(f, "  the following conditions required to disable data locality check: {rule}")
            }
        }
    }
}

/// A number as PanDA prints its (mostly integer) database values: integral values without a
/// fraction, others as Python's `repr(float)`.
pub fn py_num(x: f64) -> String {
    if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e16 { format!("{}", x as i64) } else { py_float(x) }
}
