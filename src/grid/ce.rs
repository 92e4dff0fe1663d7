//! The CE life cycle as one state machine (seed 000's pilot states,
//! reference `dirac.md` §4.3):
//!
//! ```text
//! submit ──refused (MaxWaitingJobs / MaxTotalJobs)
//!   │ middleware: abort (after abort_delay) │ stuck (Waiting for ever) │ wait (pilot_wait)
//!   ▼
//! batch queue (FIFO) ──▶ slots taken: Running ──▶ fails on a black-hole node: Failed
//!                                      │ runs jobs on its cores
//!                                      ▼
//!                 exits / walltime reached: Done │ cancelled by its WMS: Cancelled
//! ```
//!
//! Engine-agnostic: methods take the current time, return the grid events to schedule
//! ([`GridEvent`]) and append what happened to pilots to a [`Transition`] list, in order. The
//! random draws of a CE (wait, abort, stuck, failure) come from its own named streams
//! (`ce:<name>/wait` …), so adding a CE or a WMS never changes another CE's draws.

use std::collections::VecDeque;

use super::config::{Ce, Site};
use super::gpu::Gpus;
use super::pilot::{Pilot, PilotShape, PilotStatus};
use crate::engine::{RngStreams, SimDuration, SimRng, SimTime, dist};
use crate::ids::{CeId, JobId, PilotId, SiteId, WmsId};

/// Run-time state of one CE.
#[derive(Debug, Clone, Default)]
pub struct CeState {
    /// Slots (cores) held by running pilots.
    pub busy: u32,
    /// Pilots in the batch queue waiting for slots, first come first served.
    pub queue: VecDeque<PilotId>,
    /// Pilots submitted to this CE that have not started or ended (Submitted or Waiting).
    pub waiting: u32,
    /// Pilots holding slots.
    pub running: u32,
    /// Submissions refused because of a cap.
    pub refused: u32,
}

/// What the grid asks the simulation to schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridEvent {
    /// The pilot leaves the middleware and reaches its CE's batch queue.
    PilotReachesBatch(PilotId),
    /// The middleware aborts the pilot.
    PilotAborted(PilotId),
}

/// Why a CE refused a submission (DIRAC CS queue options, reference `dirac.md` §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `MaxWaitingJobs`: this many pilots are already waiting at the CE.
    MaxWaitingJobs(u32),
    /// `MaxTotalJobs`: this many pilots are already waiting or running at the CE.
    MaxTotalJobs(u32),
    /// The pilot asks for more cores than the CE has slots (or for none).
    Shape { cores: u32, slots: u32 },
    /// The pilot asks for more GPUs than one node of any kind it accepts has.
    Gpus { gpus: u32 },
}

/// What happened to a pilot, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// It took its slots (it may fail at once: an `Ended(.., Failed)` follows).
    Started(PilotId),
    /// It ended in this final status.
    Ended(PilotId, PilotStatus),
    /// A job it was running was killed with it (the pilot was cancelled).
    JobKilled(PilotId, JobId),
}

/// Pilot counts now, over every CE.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PilotCounts {
    /// Submitted or Waiting.
    pub waiting: u32,
    pub running: u32,
    /// Aborted so far (cumulative).
    pub aborted: u32,
    /// Submissions refused by a CE so far (cumulative).
    pub refused: u32,
}

/// The random streams of one CE.
#[derive(Debug, Clone)]
struct CeStreams {
    wait: SimRng,
    abort: SimRng,
    stuck: SimRng,
    failure: SimRng,
}

/// The whole grid: CE configuration and state, and every pilot.
#[derive(Debug, Clone)]
pub struct Grid {
    /// CE configurations, flattened site by site ([`CeId`] order).
    pub ces: Vec<Ce>,
    /// The site of each CE.
    pub ce_site: Vec<SiteId>,
    /// Slots of each CE.
    pub ce_slots: Vec<u32>,
    /// `max_walltime_s` of each CE as a duration, converted once: [`Grid::walltime_limit`]
    /// runs on every request for work.
    ce_walltime: Vec<SimDuration>,
    /// Run-time state of each CE.
    pub state: Vec<CeState>,
    /// Every pilot, by id.
    pub pilots: Vec<Pilot>,
    /// The CEs' GPUs and the pilots that ask for or hold some.
    pub gpus: Gpus,
    aborted: u32,
    rng: Vec<CeStreams>,
}

impl Grid {
    /// The grid of a scenario's sites, empty of pilots.
    pub fn new(sites: &[Site], rngs: &RngStreams) -> Self {
        let mut ces = Vec::new();
        let mut ce_site = Vec::new();
        for (s, site) in sites.iter().enumerate() {
            for ce in &site.ces {
                ces.push(ce.clone());
                ce_site.push(s as SiteId);
            }
        }
        let stream = |c: &Ce, purpose: &str| rngs.stream(&format!("ce:{}/{purpose}", c.name));
        let rng = ces
            .iter()
            .map(|c| CeStreams {
                wait: stream(c, "wait"),
                abort: stream(c, "abort"),
                stuck: stream(c, "stuck"),
                failure: stream(c, "failure"),
            })
            .collect();
        Self {
            gpus: Gpus::new(ces.iter().map(|c| c.gpus.as_slice())),
            ce_slots: ces.iter().map(|c| c.slots).collect(),
            ce_walltime: ces.iter().map(|c| SimDuration::from_secs_f64(c.max_walltime_s)).collect(),
            state: vec![CeState::default(); ces.len()],
            ces,
            ce_site,
            pilots: Vec::new(),
            aborted: 0,
            rng,
        }
    }

    /// The pilot with this id.
    pub fn pilot(&self, p: PilotId) -> &Pilot {
        &self.pilots[p as usize]
    }

    /// Hand a pilot to the middleware of CE `ce`. The CE refuses it when a cap of its queue
    /// is reached (no draw is made then); otherwise the middleware decides now whether it
    /// aborts the pilot or leaves it stuck, and when it reaches the batch queue.
    pub fn submit(
        &mut self,
        now: SimTime,
        ce: CeId,
        wms: WmsId,
        shape: PilotShape,
    ) -> Result<(PilotId, SimTime, GridEvent), Refusal> {
        let c = ce as usize;
        let (cfg, st) = (&self.ces[c], &mut self.state[c]);
        if shape.cores == 0 || shape.cores > cfg.slots {
            st.refused += 1;
            return Err(Refusal::Shape { cores: shape.cores, slots: cfg.slots });
        }
        if shape.gpus > 0 && !self.gpus.can_hold(c, shape.gpus, shape.gpu_kinds) {
            st.refused += 1;
            return Err(Refusal::Gpus { gpus: shape.gpus });
        }
        if let Some(max) = cfg.max_waiting_jobs.filter(|&m| st.waiting >= m) {
            st.refused += 1;
            return Err(Refusal::MaxWaitingJobs(max));
        }
        if let Some(max) = cfg.max_total_jobs.filter(|&m| st.waiting + st.running >= m) {
            st.refused += 1;
            return Err(Refusal::MaxTotalJobs(max));
        }
        let id = self.pilots.len() as PilotId;
        let rng = &mut self.rng[c];
        let aborts = dist::bernoulli(&mut rng.abort, cfg.abort_probability);
        let stuck = !aborts && dist::bernoulli(&mut rng.stuck, cfg.stuck_probability);
        let (delay, event) = if aborts {
            (cfg.abort_delay.sample(&mut rng.abort), GridEvent::PilotAborted(id))
        } else {
            (cfg.pilot_wait.sample(&mut rng.wait), GridEvent::PilotReachesBatch(id))
        };
        self.pilots.push(Pilot::new(id, ce, wms, shape.cores, now, stuck));
        self.gpus.ask(id, shape.gpus, shape.gpu_kinds);
        self.state[c].waiting += 1;
        Ok((id, now + SimDuration::from_secs_f64(delay), event))
    }

    /// The pilot leaves the middleware: it takes its slots at once if nobody queues before it
    /// and they are free, otherwise it queues. A stuck pilot stays Waiting for ever.
    pub fn reaches_batch(&mut self, now: SimTime, p: PilotId, out: &mut Vec<Transition>) {
        let pilot = &mut self.pilots[p as usize];
        if pilot.status != PilotStatus::Submitted {
            return; // aborted or cancelled meanwhile
        }
        pilot.status = PilotStatus::Waiting;
        if pilot.stuck {
            return;
        }
        let (c, cores) = (pilot.ce as usize, pilot.cores);
        let gpus_free = !self.gpus.any() || self.gpus.fit(c, p).is_some();
        if self.state[c].queue.is_empty() && self.fits(c, cores) && gpus_free {
            self.start(now, p, out);
        } else {
            self.state[c].queue.push_back(p);
            // Pilots held back by busy GPUs hold back only GPU pilots: a CPU pilot behind them
            // may start now. (Without GPU pilots the queue's head did not fit: nothing starts.)
            if self.gpus.any() {
                self.start_queued(now, c, out);
            }
        }
    }

    /// The middleware aborts a pilot that is still waiting.
    pub fn abort(&mut self, now: SimTime, p: PilotId, out: &mut Vec<Transition>) {
        if self.give_up_waiting(now, p, PilotStatus::Aborted) {
            self.aborted += 1;
            out.push(Transition::Ended(p, PilotStatus::Aborted));
        }
    }

    /// The WMS cancels a pilot: a waiting one leaves the queue, a running one is killed with
    /// its jobs. Returns false if it had ended already.
    pub fn cancel(&mut self, now: SimTime, p: PilotId, out: &mut Vec<Transition>) -> bool {
        if self.give_up_waiting(now, p, PilotStatus::Cancelled) {
            out.push(Transition::Ended(p, PilotStatus::Cancelled));
            // It may have headed the batch queue, holding back pilots that fit.
            self.start_queued(now, self.pilots[p as usize].ce as usize, out);
            return true;
        }
        if self.pilots[p as usize].status != PilotStatus::Running {
            return false;
        }
        for j in std::mem::take(&mut self.pilots[p as usize].running).iter() {
            out.push(Transition::JobKilled(p, j));
        }
        self.end(now, p, PilotStatus::Cancelled, out);
        true
    }

    fn give_up_waiting(&mut self, now: SimTime, p: PilotId, status: PilotStatus) -> bool {
        let pilot = &mut self.pilots[p as usize];
        if !pilot.status.is_waiting() {
            return false;
        }
        pilot.status = status;
        pilot.set_ended(now);
        self.state[pilot.ce as usize].waiting -= 1;
        if self.gpus.any() {
            self.gpus.forget(p);
        }
        true
    }

    fn fits(&self, c: usize, cores: u32) -> bool {
        self.state[c].busy + cores <= self.ce_slots[c]
    }

    /// Slots were free for `p`: it starts now, or fails at once on a black-hole node.
    fn start(&mut self, now: SimTime, p: PilotId, out: &mut Vec<Transition>) {
        let pilot = &mut self.pilots[p as usize];
        let c = pilot.ce as usize;
        let st = &mut self.state[c];
        st.waiting -= 1;
        st.running += 1;
        st.busy += pilot.cores;
        if self.gpus.any()
            && let Some(Some(k)) = self.gpus.fit(c, p)
        {
            self.gpus.take(c, p, k);
        }
        pilot.status = PilotStatus::Running;
        pilot.set_started(now);
        out.push(Transition::Started(p));
        let fails = dist::bernoulli(&mut self.rng[c].failure, self.ces[c].pilot_failure_probability);
        if fails {
            self.end(now, p, PilotStatus::Failed, out);
        }
    }

    /// A running pilot ends (it exits, fails, is cancelled or reaches its walltime): its
    /// slots go to the pilots at the head of the batch queue that fit, in order.
    /// A pilot that is not running is left alone.
    pub fn end(&mut self, now: SimTime, p: PilotId, status: PilotStatus, out: &mut Vec<Transition>) {
        if self.pilots[p as usize].status != PilotStatus::Running {
            return;
        }
        debug_assert!(now <= self.walltime_limit(p), "pilot {p} outlived its walltime");
        let pilot = &mut self.pilots[p as usize];
        debug_assert!(pilot.running.is_empty(), "pilot {p} ends with jobs running");
        let c = pilot.ce as usize;
        pilot.status = status;
        pilot.set_ended(now);
        let st = &mut self.state[c];
        st.busy -= pilot.cores;
        st.running -= 1;
        if self.gpus.any() {
            self.gpus.release(c, p);
        }
        out.push(Transition::Ended(p, status));
        self.start_queued(now, c, out);
    }

    /// Start the pilots of CE `c`'s batch queue that fit, in order. A pilot whose cores do not
    /// fit holds back every pilot behind it (no backfilling); a GPU pilot whose cores fit but
    /// whose GPUs are busy holds back only the GPU pilots behind it, as a batch system
    /// schedules its GPU nodes apart from its CPU slots.
    fn start_queued(&mut self, now: SimTime, c: usize, out: &mut Vec<Transition>) {
        let mut i = 0;
        let mut gpus_blocked = false;
        while let Some(&next) = self.state[c].queue.get(i) {
            let pilot = &self.pilots[next as usize];
            if pilot.status != PilotStatus::Waiting {
                self.state[c].queue.remove(i); // aborted or cancelled while queued
                continue;
            }
            let wants_gpus = self.gpus.hold(next).is_some();
            if wants_gpus && gpus_blocked {
                i += 1;
                continue;
            }
            if !self.fits(c, pilot.cores) {
                break;
            }
            if self.gpus.fit(c, next).is_none() {
                gpus_blocked = true;
                i += 1;
                continue;
            }
            self.state[c].queue.remove(i);
            // Starting may end the pilot at once and start others: scan again from the head.
            self.start(now, next, out);
            (i, gpus_blocked) = (0, false);
        }
    }

    /// When the batch system kills a running pilot: its start plus the CE's walltime limit.
    pub fn walltime_limit(&self, p: PilotId) -> SimTime {
        let pilot = &self.pilots[p as usize];
        pilot.started().expect("running") + self.ce_walltime[pilot.ce as usize]
    }

    /// Job `j` starts in pilot `p` on `cores` of its free cores and `gpus` of its free GPUs (0
    /// for a CPU job); false (nothing taken) if either is short.
    pub fn start_job(&mut self, p: PilotId, j: JobId, cores: u32, gpus: u32) -> bool {
        let pilot = &self.pilots[p as usize];
        if pilot.status != PilotStatus::Running || pilot.free_cores < cores {
            return false;
        }
        if !self.gpus.take_for_job(p, gpus) {
            return false;
        }
        let pilot = &mut self.pilots[p as usize];
        pilot.free_cores -= cores;
        pilot.running.push(j);
        pilot.jobs_run += 1;
        true
    }

    /// Job `j` of pilot `p` ends, giving back its cores and GPUs; false if the pilot does not
    /// run it.
    pub fn end_job(&mut self, p: PilotId, j: JobId, cores: u32, gpus: u32) -> bool {
        let pilot = &mut self.pilots[p as usize];
        if !pilot.running.remove(j) {
            return false;
        }
        pilot.free_cores += cores;
        self.gpus.give_back(p, gpus);
        true
    }

    /// Pilot counts now.
    pub fn counts(&self) -> PilotCounts {
        PilotCounts {
            waiting: self.state.iter().map(|c| c.waiting).sum(),
            running: self.state.iter().map(|c| c.running).sum(),
            aborted: self.aborted,
            refused: self.state.iter().map(|c| c.refused).sum(),
        }
    }

    /// Invariants of the grid; a description of each violation.
    ///
    /// One pass over the pilots counts each CE's running pilots, their cores and its waiting
    /// pilots (a pass per CE made the check O(CEs × pilots): 6.7 s for the 10⁷-job week's 500
    /// CEs and 1.9 M pilots).
    pub fn check_invariants(&self) -> Vec<String> {
        let mut bad = Vec::new();
        // Per CE: running pilots, their cores, waiting pilots.
        let mut counted = vec![(0u32, 0u32, 0u32); self.state.len()];
        for p in &self.pilots {
            let Some(n) = counted.get_mut(p.ce as usize) else { continue };
            if p.status == PilotStatus::Running {
                n.0 += 1;
                n.1 += p.cores;
            } else if p.status.is_waiting() {
                n.2 += 1;
            }
        }
        for (c, (st, &(running, cores, waiting))) in self.state.iter().zip(&counted).enumerate() {
            if running != st.running || cores != st.busy || st.busy > self.ce_slots[c] {
                bad.push(format!(
                    "CE {}: {} busy slots and {} running, but {running} running pilots holding {cores}",
                    self.ces[c].name, st.busy, st.running
                ));
            }
            if waiting != st.waiting {
                bad.push(format!(
                    "CE {}: waiting counter {} but {waiting} waiting pilots",
                    self.ces[c].name, st.waiting
                ));
            }
        }
        for p in &self.pilots {
            if p.status != PilotStatus::Running && !p.running.is_empty() {
                bad.push(format!("pilot {} is {} but runs jobs {:?}", p.id, p.status.as_str(), p.running));
            }
        }
        bad.extend(self.check_gpus());
        bad
    }

    /// Busy GPUs never exceed the inventory, per CE and kind, and equal what the running GPU
    /// pilots hold; a pilot's jobs never use more GPUs than it holds.
    fn check_gpus(&self) -> Vec<String> {
        let mut bad = Vec::new();
        let mut held: Vec<Vec<u32>> = self.gpus.busy.iter().map(|b| vec![0; b.len()]).collect();
        for (p, h) in self.gpus.holding() {
            let pilot = &self.pilots[p as usize];
            if pilot.status != PilotStatus::Running {
                bad.push(format!("pilot {p} is {} but holds {} GPUs", pilot.status.as_str(), h.gpus));
            }
            if h.free > h.gpus {
                bad.push(format!("pilot {p}: {} GPUs free of the {} it holds", h.free, h.gpus));
            }
            if let Some(n) = h.kind.and_then(|k| held.get_mut(pilot.ce as usize)?.get_mut(usize::from(k))) {
                *n += h.gpus;
            }
        }
        for (c, (busy, held)) in self.gpus.busy.iter().zip(&held).enumerate() {
            for (k, (&b, &h)) in busy.iter().zip(held).enumerate() {
                let inventory = self.gpus.inventory(c, k);
                if b != h || b > inventory {
                    bad.push(format!(
                        "CE {} GPU kind {k}: {b} busy of {inventory}, but running pilots hold {h}",
                        self.ces[c].name
                    ));
                }
            }
        }
        bad
    }
}

#[cfg(test)]
mod tests;
