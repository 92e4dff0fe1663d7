//! `factory::startd` — the Startd Pilot (seed 003 §2) and the Startd-based Pilot Factory's
//! throughput (§3 and "Pilot Submission Efficiency").
//!
//! A startd pilot holds one batch slot and splits it into `vms` VMs ("condor job slots sharing
//! the same CPU"). Its startd runs the generic pilot script at a fixed rate; the pilot asks the
//! WMS for a job for a free VM, "and if none of the job slots is available for executing a new
//! job, then pilot simply exits without doing anything further" (an *empty pilot run*).
//! Production jobs run as background jobs, analysis jobs as foreground jobs; while a foreground
//! job runs, the background jobs are suspended and resume after it ("Example of Using Startd
//! Pilot"), or, with `preempt_background`, are ended and requeued instead. The batch system
//! removes the startd pilot after its lifetime ("just like other user jobs, say, within a few
//! hours"), and what it runs is requeued or ended as [`OnRemoval`] says.
//!
//! # The API the world calls
//!
//! [`StartdPilot`] is a pure state machine over one slot: each method takes the time `now` and
//! returns [`StartdAction`]s for the world to apply; it never reads a clock or schedules.
//!
//! ```text
//! slot given to the startd pilot at t0:  p = StartdPilot::new(settings, t0, draw_lifetime(&dist, rng))
//!                                         timers at p.next_pilot_run() and p.removal_at()
//! pilot timer:   p.pilot_run(now)       -> [RequestJob { vm, request }] or [EmptyPilotRun];
//!                                          re-arm the timer at p.next_pilot_run()
//! job arrives:   p.job_fetched(now, vm, Some((job, kind)))   (after tp' + tpw'; None: no job)
//!                                       -> Suspend / Preempt of background jobs
//! job ends:      p.job_ended(now, vm)  -> (Finished { suspended, … }, Resume of background jobs)
//! removal:       p.remove(now)          -> Requeue / Kill of each job, CancelFetch of each fetch
//! after each:    p.rates()              -> each VM's CPU rate: reschedule job ends from it
//! ```
//!
//! CPU sharing: the slot has `slot_cpus` CPUs (default: one per VM). While a foreground job runs,
//! foreground jobs share the CPUs (rate `min(1, cpus / n_foreground)`) and background jobs get 0;
//! otherwise background jobs get `min(1, cpus / n_background)`.
//!
//! Which job a pilot run asks for ([`JobTypePolicy`]): `Any`; or `KeepOneForAnalysis`, the seed's
//! "allocate at least one of the job slots to user analysis job": when only one VM is free and
//! no analysis job runs (or is being fetched) there, ask for analysis only. With
//! `preempt_background`, a pilot run while a foreground job runs asks for analysis only (a
//! background job could not run); without it, a production job fetched then starts suspended.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::JobKind;
use super::generic::ClosedForm;
use crate::engine::distribution::Distribution;
use crate::engine::{SimDuration, SimTime};
use crate::ids::JobId;

/// Which job a pilot run asks for (seed §2: "startd may also need to explicitly request a
/// certain type of job from pilot").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum JobTypePolicy {
    /// Any job the WMS gives.
    #[default]
    Any,
    /// When one VM is free and no analysis job runs on the slot, ask for analysis only.
    KeepOneForAnalysis,
}

/// What happens to the jobs of a startd pilot the batch system removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum OnRemoval {
    /// They go back to the WMS's queue and run again elsewhere (their progress is lost).
    #[default]
    Requeue,
    /// They end, failed.
    End,
}

/// A startd pilot's settings (seed §2).
#[derive(Debug, Clone, PartialEq)]
pub struct StartdSettings {
    /// VMs the slot is split into (≥ 1).
    pub vms: u32,
    /// Time between two runs of the pilot script ("at a fixed rate").
    pub pilot_interval: SimDuration,
    pub job_types: JobTypePolicy,
    /// End and requeue background jobs when a foreground job starts, instead of suspending them.
    pub preempt_background: bool,
    pub on_removal: OnRemoval,
    /// CPUs of the slot shared by its VMs; `None`: one per VM.
    pub slot_cpus: Option<f64>,
}

/// What a pilot run asks the WMS for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobRequest {
    Any,
    Only(JobKind),
}

impl JobRequest {
    /// True if a job of `kind` answers this request.
    pub fn admits(self, kind: JobKind) -> bool {
        matches!(self, JobRequest::Any) || self == JobRequest::Only(kind)
    }
}

/// A job on a VM, with its suspension record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmJob {
    pub job: JobId,
    pub kind: JobKind,
    pub started: SimTime,
    /// Since when it is suspended, if it is.
    pub suspended_since: Option<SimTime>,
    /// Suspended time before `suspended_since`.
    pub suspended: SimDuration,
}

impl VmJob {
    /// Total suspended time up to `now`.
    pub fn suspended_until(&self, now: SimTime) -> SimDuration {
        let open = self.suspended_since.map_or(0, |t| now.as_millis().saturating_sub(t.as_millis()));
        SimDuration::from_millis(self.suspended.as_millis() + open)
    }
}

/// One VM of the slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vm {
    Free,
    /// A pilot run is fetching a job for it (between `pilot_run` and `job_fetched`).
    Fetching(JobRequest),
    Busy(VmJob),
}

/// What the world must do after a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartdAction {
    /// The pilot script ran, found no free VM and exited at once.
    EmptyPilotRun,
    /// The pilot script runs for `vm` and asks the WMS for a job; answer with `job_fetched`.
    RequestJob { vm: usize, request: JobRequest },
    /// A background job stops progressing (a foreground job started).
    Suspend { vm: usize, job: JobId },
    /// A suspended background job progresses again (no foreground job runs any more).
    Resume { vm: usize, job: JobId },
    /// A background job is ended to make room for a foreground job: requeue it.
    Preempt { vm: usize, job: JobId, suspended: SimDuration },
    /// Removal: the job goes back to the WMS's queue.
    Requeue { vm: usize, job: JobId, suspended: SimDuration },
    /// Removal: the job ends, failed.
    Kill { vm: usize, job: JobId, suspended: SimDuration },
    /// Removal: the fetch in flight for `vm` is void (requeue the job if one was matched).
    CancelFetch { vm: usize },
}

/// A job that finished on its VM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    pub job: JobId,
    pub kind: JobKind,
    /// Wall time on the VM, suspensions included.
    pub wall: SimDuration,
    pub suspended: SimDuration,
}

/// The CPU rate of one VM's job (1 = a full CPU; 0 = suspended).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VmRate {
    pub vm: usize,
    pub job: JobId,
    pub rate: f64,
}

/// Counters of one startd pilot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StartdStats {
    pub pilot_runs: u64,
    /// Pilot runs that found no free VM.
    pub empty_pilot_runs: u64,
    pub jobs_started: u64,
    pub jobs_finished: u64,
    /// Fetches that brought no job.
    pub empty_fetches: u64,
    pub suspensions: u64,
    pub preemptions: u64,
}

/// A call the state machine cannot accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartdError {
    /// The pilot was already removed.
    Removed,
    /// A pilot run before its time.
    EarlyPilotRun { now: SimTime, next: SimTime },
    /// A VM index beyond the slot's VMs.
    NoSuchVm(usize),
    /// `job_fetched` for a VM that was not fetching.
    NotFetching(usize),
    /// `job_ended` for a VM without a job.
    NoJob(usize),
    /// The WMS gave a job of a kind the pilot did not ask for.
    WrongKind { vm: usize, asked: JobRequest, got: JobKind },
    /// Settings that cannot run (0 VMs, zero interval, CPUs not positive).
    BadSettings(String),
}

impl std::fmt::Display for StartdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartdError::Removed => write!(f, "the startd pilot was removed"),
            StartdError::EarlyPilotRun { now, next } => {
                write!(f, "pilot run at {} ms, before its time {} ms", now.as_millis(), next.as_millis())
            }
            StartdError::NoSuchVm(vm) => write!(f, "no VM {vm} in this slot"),
            StartdError::NotFetching(vm) => write!(f, "VM {vm} was not fetching a job"),
            StartdError::NoJob(vm) => write!(f, "VM {vm} runs no job"),
            StartdError::WrongKind { vm, asked, got } => {
                write!(f, "VM {vm} asked for {asked:?} and was given a {got:?} job")
            }
            StartdError::BadSettings(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for StartdError {}

/// Draw a startd pilot's lifetime from `dist` (seconds), in milliseconds.
pub fn draw_lifetime<R: Rng + ?Sized>(dist: &Distribution, rng: &mut R) -> SimDuration {
    SimDuration::from_secs_f64(dist.sample(rng))
}

/// One startd pilot on one batch slot (module doc: the API).
#[derive(Debug, Clone, PartialEq)]
pub struct StartdPilot {
    settings: StartdSettings,
    cpus: f64,
    vms: Vec<Vm>,
    started: SimTime,
    removal_at: SimTime,
    next_pilot_run: SimTime,
    removed: bool,
    stats: StartdStats,
}

impl StartdPilot {
    /// A startd pilot that got its slot at `now` and will be removed `lifetime` later; its first
    /// pilot run is at `now`.
    pub fn new(settings: StartdSettings, now: SimTime, lifetime: SimDuration) -> Result<Self, StartdError> {
        if settings.vms == 0 {
            return Err(StartdError::BadSettings("a startd pilot needs at least 1 VM".into()));
        }
        if settings.pilot_interval == SimDuration::ZERO {
            return Err(StartdError::BadSettings("the pilot interval must be longer than 0 ms".into()));
        }
        let cpus = settings.slot_cpus.unwrap_or(f64::from(settings.vms));
        if !(cpus.is_finite() && cpus > 0.0) {
            return Err(StartdError::BadSettings(format!("slot_cpus must be a positive number, got {cpus}")));
        }
        Ok(StartdPilot {
            vms: vec![Vm::Free; settings.vms as usize],
            settings,
            cpus,
            started: now,
            removal_at: now + lifetime,
            next_pilot_run: now,
            removed: false,
            stats: StartdStats::default(),
        })
    }

    pub fn settings(&self) -> &StartdSettings {
        &self.settings
    }
    pub fn started(&self) -> SimTime {
        self.started
    }
    /// When the batch system removes it (its start + lifetime).
    pub fn removal_at(&self) -> SimTime {
        self.removal_at
    }
    /// When the pilot script runs next.
    pub fn next_pilot_run(&self) -> SimTime {
        self.next_pilot_run
    }
    pub fn vms(&self) -> &[Vm] {
        &self.vms
    }
    pub fn stats(&self) -> StartdStats {
        self.stats
    }
    pub fn is_removed(&self) -> bool {
        self.removed
    }
    /// VMs with neither a job nor a fetch in flight.
    pub fn free_vms(&self) -> usize {
        self.vms.iter().filter(|v| matches!(v, Vm::Free)).count()
    }

    fn count(&self, foreground: bool) -> usize {
        self.vms.iter().filter(|v| matches!(v, Vm::Busy(j) if j.kind.is_foreground() == foreground)).count()
    }

    fn live(&self) -> Result<(), StartdError> {
        if self.removed { Err(StartdError::Removed) } else { Ok(()) }
    }

    fn check_vm(&self, vm: usize) -> Result<(), StartdError> {
        if vm < self.vms.len() { Ok(()) } else { Err(StartdError::NoSuchVm(vm)) }
    }

    /// What the next pilot run asks for, given the free VMs (module doc).
    fn request(&self) -> JobRequest {
        let analysis_here = self.count(true) > 0
            || self.vms.iter().any(|v| matches!(v, Vm::Fetching(JobRequest::Only(JobKind::Analysis))));
        if self.settings.preempt_background && self.count(true) > 0 {
            return JobRequest::Only(JobKind::Analysis);
        }
        match self.settings.job_types {
            JobTypePolicy::KeepOneForAnalysis if self.free_vms() == 1 && !analysis_here => {
                JobRequest::Only(JobKind::Analysis)
            }
            _ => JobRequest::Any,
        }
    }

    /// The pilot script runs (the timer at [`next_pilot_run`](Self::next_pilot_run) fired): it
    /// takes the first free VM and asks for a job, or exits at once. The next run is one
    /// interval after this one was due (fixed rate; runs missed by a late call are skipped).
    pub fn pilot_run(&mut self, now: SimTime) -> Result<StartdAction, StartdError> {
        self.live()?;
        if now < self.next_pilot_run {
            return Err(StartdError::EarlyPilotRun { now, next: self.next_pilot_run });
        }
        while self.next_pilot_run <= now {
            self.next_pilot_run += self.settings.pilot_interval;
        }
        self.stats.pilot_runs += 1;
        let Some(vm) = self.vms.iter().position(|v| matches!(v, Vm::Free)) else {
            self.stats.empty_pilot_runs += 1;
            return Ok(StartdAction::EmptyPilotRun);
        };
        let request = self.request();
        self.vms[vm] = Vm::Fetching(request);
        Ok(StartdAction::RequestJob { vm, request })
    }

    /// The fetch for `vm` came back at `now`, with a job or none. A foreground job suspends the
    /// running background jobs (or preempts them); a background job starts suspended if a
    /// foreground job runs.
    pub fn job_fetched(
        &mut self,
        now: SimTime,
        vm: usize,
        job: Option<(JobId, JobKind)>,
    ) -> Result<Vec<StartdAction>, StartdError> {
        self.live()?;
        self.check_vm(vm)?;
        let Vm::Fetching(asked) = self.vms[vm] else { return Err(StartdError::NotFetching(vm)) };
        let Some((job, kind)) = job else {
            self.stats.empty_fetches += 1;
            self.vms[vm] = Vm::Free;
            return Ok(Vec::new());
        };
        if !asked.admits(kind) {
            return Err(StartdError::WrongKind { vm, asked, got: kind });
        }
        let mut actions = Vec::new();
        let foreground_running = self.count(true) > 0;
        if kind.is_foreground() && !foreground_running {
            for (i, v) in self.vms.iter_mut().enumerate() {
                let Vm::Busy(j) = v else { continue };
                if self.settings.preempt_background {
                    let suspended = j.suspended_until(now);
                    actions.push(StartdAction::Preempt { vm: i, job: j.job, suspended });
                    self.stats.preemptions += 1;
                    *v = Vm::Free;
                } else {
                    j.suspended_since = Some(now);
                    self.stats.suspensions += 1;
                    actions.push(StartdAction::Suspend { vm: i, job: j.job });
                }
            }
        }
        let suspended_since = (!kind.is_foreground() && foreground_running).then_some(now);
        if suspended_since.is_some() {
            self.stats.suspensions += 1;
        }
        self.vms[vm] = Vm::Busy(VmJob { job, kind, started: now, suspended_since, suspended: SimDuration::ZERO });
        self.stats.jobs_started += 1;
        Ok(actions)
    }

    /// The job on `vm` finished at `now`. When the last foreground job ends, the background
    /// jobs resume.
    pub fn job_ended(&mut self, now: SimTime, vm: usize) -> Result<(Finished, Vec<StartdAction>), StartdError> {
        self.live()?;
        self.check_vm(vm)?;
        let Vm::Busy(j) = self.vms[vm] else { return Err(StartdError::NoJob(vm)) };
        self.vms[vm] = Vm::Free;
        self.stats.jobs_finished += 1;
        let finished = Finished {
            job: j.job,
            kind: j.kind,
            wall: SimDuration::from_millis(now.as_millis().saturating_sub(j.started.as_millis())),
            suspended: j.suspended_until(now),
        };
        let mut actions = Vec::new();
        if j.kind.is_foreground() && self.count(true) == 0 {
            for (i, v) in self.vms.iter_mut().enumerate() {
                if let Vm::Busy(b) = v {
                    if let Some(since) = b.suspended_since.take() {
                        b.suspended =
                            b.suspended + SimDuration::from_millis(now.as_millis().saturating_sub(since.as_millis()));
                        actions.push(StartdAction::Resume { vm: i, job: b.job });
                    }
                }
            }
        }
        Ok((finished, actions))
    }

    /// The batch system removes the startd pilot at `now`: each job is requeued or killed
    /// ([`OnRemoval`]), each fetch in flight cancelled, in VM order. Later calls are errors.
    pub fn remove(&mut self, now: SimTime) -> Result<Vec<StartdAction>, StartdError> {
        self.live()?;
        self.removed = true;
        let mut actions = Vec::new();
        for (vm, v) in self.vms.iter_mut().enumerate() {
            match *v {
                Vm::Free => {}
                Vm::Fetching(_) => actions.push(StartdAction::CancelFetch { vm }),
                Vm::Busy(j) => {
                    let suspended = j.suspended_until(now);
                    actions.push(match self.settings.on_removal {
                        OnRemoval::Requeue => StartdAction::Requeue { vm, job: j.job, suspended },
                        OnRemoval::End => StartdAction::Kill { vm, job: j.job, suspended },
                    });
                }
            }
            *v = Vm::Free;
        }
        Ok(actions)
    }

    /// The CPU rate of each VM's job, in VM order (module doc, "CPU sharing"). The world calls
    /// it after every change and reschedules job ends from it.
    pub fn rates(&self) -> Vec<VmRate> {
        let (fg, bg) = (self.count(true), self.count(false));
        let share = |n: usize| if n == 0 { 0.0 } else { (self.cpus / n as f64).min(1.0) };
        self.vms
            .iter()
            .enumerate()
            .filter_map(|(vm, v)| match v {
                Vm::Busy(j) => {
                    let rate = match (j.kind.is_foreground(), fg > 0) {
                        (true, _) => share(fg),
                        (false, true) => 0.0,
                        (false, false) => share(bg),
                    };
                    Some(VmRate { vm, job: j.job, rate })
                }
                _ => None,
            })
            .collect()
    }
}

/// SPF's throughput after its first round (seed 003 "Pilot Submission Efficiency"): with `x`
/// worker nodes held by startd pilots, each VM fetches its next job locally, so the Tsw term
/// drops and a VM finishes a job per (tp' + tpw' + Tj):
///
/// ```text
/// exact  = x · vms / (tp' + tpw' + Tj · max(1, vms / slot_cpus))    jobs per second
/// approx = x · min(vms, slot_cpus) / Tj                              the seed's (Tj + tp' + tpw') ≈ Tj
/// ```
///
/// With one CPU per VM (`slot_cpus = vms`, the seed's "more jobs can be finished") the exact
/// form is the seed's x · vms jobs per (tp' + tpw' + Tj); with fewer CPUs the VMs' jobs share
/// them. The first round takes Tsw + Tj as in GPF. A freed VM also waits for the next pilot run:
/// pass tp' = tp + pilot_interval / 2 to count that wait on average. Durations in seconds.
pub fn spf_throughput(x: f64, vms: u32, slot_cpus: f64, tp: f64, tpw: f64, tj: f64) -> ClosedForm {
    let v = f64::from(vms);
    ClosedForm { exact: x * v / (tp + tpw + tj * (v / slot_cpus).max(1.0)), approx: x * v.min(slot_cpus) / tj }
}

#[cfg(test)]
#[path = "startd_tests.rs"]
mod tests;
