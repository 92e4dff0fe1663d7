//! One pilot factory: its configuration, how it submits, its state and what it did.

use crate::engine::distribution::Distribution;
use crate::engine::{SimDuration, SimRng, SimTime};
use crate::factory::generic::Generator;
use crate::factory::standby::{Estimates, StandbyController, StandbyObservation};
use crate::factory::startd::StartdSettings;
use crate::ids::{CeId, WmsId};
use crate::scenario::factory::FactoryConfig;

/// What a factory did, for `summary.json` (`factory[i]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct FactoryStats {
    /// Pilots the Generator submitted to the CEs (the head node's load).
    pub pilots_submitted: u64,
    /// Submissions the CEs refused (their queues full).
    pub pilots_refused: u64,
    pub pilots_started: u64,
    /// Generic pilots that found no job and exited.
    pub pilots_without_job: u64,
    /// Jobs started in its pilots.
    pub jobs_started: u64,
    /// Jobs that finished (Done) in its pilots.
    pub jobs_done: u64,
    /// Jobs that failed in its pilots (their own failure, the walltime, or a removal that kills).
    pub jobs_failed: u64,
    /// Jobs given back to the WMS (removal with `Requeue`, or preemption).
    pub jobs_requeued: u64,
    /// Startd pilots: runs of the pilot script, runs that found no free VM, fetches without job.
    pub pilot_runs: u64,
    pub empty_pilot_runs: u64,
    pub empty_fetches: u64,
    /// Background jobs suspended / preempted by a foreground job.
    pub suspensions: u64,
    pub preemptions: u64,
    /// Suspended time of the jobs that left its VMs (finished, requeued or killed), seconds.
    pub suspended_s: f64,
    /// Startd pilots removed by the batch system.
    pub removals: u64,
    /// Time its pilots' slots ran a job (start → end, requeue or kill; suspended time
    /// included), seconds; `summary.json` adds the jobs still running at the end.
    pub busy_s: f64,
    /// Σ over Generator cycles of the standby startd pilots queued, and the cycles: their mean.
    pub standby_sum: u64,
    pub cycles: u64,
}

/// How one factory submits.
pub enum Mode {
    Generic(Generator),
    Startd { settings: StartdSettings, standby: StandbyController, lifetime: Distribution },
}

impl Factory {
    /// True for a Startd-based Pilot Factory.
    pub fn is_startd(&self) -> bool {
        matches!(self.mode, Mode::Startd { .. })
    }
}

/// One factory's state.
pub struct Factory {
    pub cfg: FactoryConfig,
    /// The WMS its pilots fetch jobs from.
    pub(super) wms: WmsId,
    pub(super) ces: Vec<CeId>,
    /// The CE the next submission tries first (round robin).
    pub(super) next_ce: usize,
    pub(super) mode: Mode,
    /// tp, tpw.
    pub(super) steps: (SimDuration, SimDuration),
    pub(super) last_cycle: SimTime,
    /// Jobs submitted to its WMS, and ended in its pilots, at the last cycle (for the rates).
    pub(super) seen_submitted: u64,
    pub(super) seen_ended: u64,
    pub(super) seen_removals: u64,
    pub(super) rng: SimRng,
    /// Its pilots not started / holding a slot.
    pub(super) queued: u32,
    pub(super) running: u32,
    pub stats: FactoryStats,
}

/// One startd Generator cycle: what its standby policy saw and decided.
#[derive(Debug, Clone, Copy)]
pub struct CycleRow {
    pub time: SimTime,
    pub factory: u32,
    pub obs: StandbyObservation,
    /// The policy's standby target, and the standby pilots queued after the cycle's submissions.
    pub target: u32,
    pub standby: u32,
    /// The adaptive controller's estimates after the cycle.
    pub estimates: Option<Estimates>,
}
