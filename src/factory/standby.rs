//! `factory::standby` — how many standby startd pilots the Generator keeps queued (seed 003 §3,
//! "Startd-based Pilot Factory"): "Generator keeps submitting certain amount of Startd Pilot jobs
//! to schedd while other Startd Pilots are still running so that there are always standby Startd
//! Pilot jobs awaiting for vacancies in the pool. There is an open question, however, as for the
//! approximate number of standby Startd Pilot jobs", which "may need a sophisticated learning
//! algorithm". Three policies ([`StandbyPolicy`]):
//!
//! * `Fixed(n)`: n queued.
//! * `Proportional { per_queued_job, min, max }`: `clamp(⌈per_queued_job × queued jobs⌉, min, max)`.
//! * `Adaptive(settings)`: [`AdaptiveStandby`], a controller that learns from what it observes.
//!
//! # The adaptive controller
//!
//! A standby pilot is a replacement in transit: it is submitted when (or before) a startd pilot
//! in use disappears and takes Tsw to reach a worker node. By Little's law the number in transit
//! is `L = λ · W`, with λ the rate at which the startd pilots *in use* disappear (each lives a
//! mean lifetime, so λ = busy / mean lifetime) and W = Tsw. Keeping L queued means a replacement
//! reaches the pool about when each vacancy opens; idle startd pilots are not replaced, so the
//! pool shrinks when the load falls (they hold slots the site could give to others). On top of
//! that, jobs that no VM will take (queued now, plus the backlog's growth during Tsw — arrivals
//! less job ends — less the idle VMs) need new startd pilots of `vms` VMs each, but no more than
//! the pool has room for: a standby pilot beyond that only waits for a vacancy. Every cycle:
//!
//! ```text
//! Tsw^    ← Tsw^ + α (Tsw − Tsw^)              per standby pilot that started (queue wait)
//! 1/L^    ← 1/L^ + w (removals/(held·Δt) − 1/L^)  per cycle: removal rate per startd pilot
//! arr^    ← arr^ + w (arrivals/Δt − arr^)         per cycle (jobs submitted, per second)
//! end^    ← end^ + w (job ends/Δt − end^)         per cycle, jobs ended in its pilots
//!           with w = 1 − exp(−Δt/τ) for a cycle of Δt
//! safety  ← min(safety × up, safety_max)       if jobs waited beyond the idle VMs while the
//!                                              pool had room
//!           max(safety × down, safety_min)     else if standby pilots sat queued with idle VMs
//!
//! Tsw^ learns only from pilots that started while the pool kept a free slot: one that also
//! waited for a vacancy in a full pool would teach the controller its own backlog.
//! busy    = running − ⌊idle VMs / vms⌋
//! replace = busy / L^ × Tsw^                   Little's law
//! demand  = min(max(0, queued jobs + (arr^ − end^) × Tsw^ − idle VMs) / vms, room)
//! room    = pool − running                     (no bound when the pool is unknown)
//! target  = clamp(⌈safety × replace + demand⌉, min, max)
//! ```
//!
//! The seed gives no algorithm; this is pilotsim's. A first version replaced every running
//! startd pilot, counted all arrivals as demand and learnt L^ from each removed pilot's age:
//! on `factory_standby.ron` it kept the pool full and a thousand pilots queued (pilot
//! efficiency 0.34).
//!
//! Parameters and defaults ([`AdaptiveSettings`]): priors Tsw^ = 30 min and L^ = 4 h (the seed's
//! "within a few hours"), arr^ = end^ = 0; α = 0.2, τ = 1 h; safety 1.5 in [1, 4], up × 1.25, down × 0.9; min 0,
//! max 1000 (the head node's bound). Everything is plain `f64` arithmetic in a fixed order:
//! deterministic, no clock, no randomness.

use serde::{Deserialize, Serialize};

use super::ceil_tol;
use crate::engine::SimDuration;

/// How many standby startd pilots to keep queued (module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum StandbyPolicy {
    Fixed(u32),
    Proportional {
        /// Standby startd pilots per job waiting in the WMS for the site (or PanDA queue), at
        /// least 0: the target is `⌈per_queued_job × queued jobs⌉` (pilotsim's policy; seed 003
        /// §3 leaves the number open).
        per_queued_job: f64,
        /// Fewest standby startd pilots kept queued, whatever the queued jobs.
        min: u32,
        /// Most standby startd pilots kept queued (at least `min`).
        max: u32,
    },
    Adaptive(AdaptiveSettings),
}

impl Default for StandbyPolicy {
    fn default() -> Self {
        StandbyPolicy::Fixed(1)
    }
}

impl StandbyPolicy {
    /// Problems with the policy's parameters: (field under the policy, message).
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        match self {
            StandbyPolicy::Fixed(_) => {}
            StandbyPolicy::Proportional { per_queued_job, min, max } => {
                if !(per_queued_job.is_finite() && *per_queued_job >= 0.0) {
                    out.push(("per_queued_job".into(), format!("must be a number ≥ 0, got {per_queued_job}")));
                }
                if min > max {
                    out.push(("max".into(), format!("must be ≥ min ({min}), got {max}")));
                }
            }
            StandbyPolicy::Adaptive(a) => out = a.problems(),
        }
        out
    }
}

/// The adaptive controller's parameters (module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AdaptiveSettings {
    /// Prior of the queue wait Tsw (schedd → worker node), seconds: 1800.
    pub initial_queue_wait_s: f64,
    /// Prior of a startd pilot's lifetime, seconds: 14 400.
    pub initial_lifetime_s: f64,
    /// α, the weight of a new queue wait in its moving average, in (0, 1]: 0.2.
    pub smoothing: f64,
    /// τ, the time constant of the rate estimates (removals, arrivals, job ends), seconds:
    /// 3600. A cycle of Δt weighs 1 − exp(−Δt/τ), so the estimates do not depend on the cycle.
    pub rate_window_s: f64,
    /// The safety factor's start: 1.5.
    pub safety: f64,
    /// Lower bound of the safety factor, which `safety_down` never takes it below (positive): 1.
    pub safety_min: f64,
    /// Upper bound of the safety factor, which `safety_up` never takes it above (at least
    /// `safety_min`): 4.
    pub safety_max: f64,
    /// Factor (> 1) applied when jobs waited while no startd pilot ran: 1.25.
    pub safety_up: f64,
    /// Factor (in (0, 1)) applied when standby pilots sat queued with idle VMs: 0.9.
    pub safety_down: f64,
    /// Fewest standby pilots kept queued: 0.
    pub min: u32,
    /// Most standby pilots kept queued: 1000.
    pub max: u32,
}

impl Default for AdaptiveSettings {
    fn default() -> Self {
        AdaptiveSettings {
            initial_queue_wait_s: 1800.0,
            initial_lifetime_s: 14_400.0,
            smoothing: 0.2,
            rate_window_s: 3600.0,
            safety: 1.5,
            safety_min: 1.0,
            safety_max: 4.0,
            safety_up: 1.25,
            safety_down: 0.9,
            min: 0,
            max: 1000,
        }
    }
}

impl AdaptiveSettings {
    /// Problems with the parameters: (field, message).
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut need = |field: &str, ok: bool, what: &str, v: f64| {
            if !ok {
                out.push((field.to_string(), format!("must be {what}, got {v}")));
            }
        };
        let pos = |v: f64| v.is_finite() && v > 0.0;
        need(
            "initial_queue_wait_s",
            self.initial_queue_wait_s.is_finite() && self.initial_queue_wait_s >= 0.0,
            "a number ≥ 0",
            self.initial_queue_wait_s,
        );
        need("initial_lifetime_s", pos(self.initial_lifetime_s), "a positive number", self.initial_lifetime_s);
        need("smoothing", self.smoothing > 0.0 && self.smoothing <= 1.0, "in (0, 1]", self.smoothing);
        need("rate_window_s", pos(self.rate_window_s), "a positive number", self.rate_window_s);
        need("safety_min", pos(self.safety_min), "a positive number", self.safety_min);
        need(
            "safety_max",
            self.safety_max.is_finite() && self.safety_max >= self.safety_min,
            "≥ safety_min",
            self.safety_max,
        );
        need(
            "safety",
            self.safety >= self.safety_min && self.safety <= self.safety_max,
            "in [safety_min, safety_max]",
            self.safety,
        );
        need("safety_up", self.safety_up.is_finite() && self.safety_up > 1.0, "a number > 1", self.safety_up);
        need("safety_down", self.safety_down > 0.0 && self.safety_down < 1.0, "in (0, 1)", self.safety_down);
        if self.min > self.max {
            out.push(("max".into(), format!("must be ≥ min ({}), got {}", self.min, self.max)));
        }
        out
    }
}

/// What the Generator sees at its cycle, for one site's startd pilots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StandbyObservation {
    /// Jobs waiting in the WMS for this site (or PanDA queue).
    pub queued_jobs: u64,
    /// Startd pilots holding a batch slot.
    pub running_startds: u32,
    /// Standby startd pilots: at the schedd or in the batch queue.
    pub queued_startds: u32,
    /// Free VMs of the running startd pilots.
    pub idle_vms: u32,
    /// VMs per startd pilot (≥ 1).
    pub vms_per_startd: u32,
    /// Startd pilots its CEs can hold at once (x: slots / vms); 0 if unknown.
    pub pool_startds: u32,
}

/// The adaptive controller's estimates ([`AdaptiveStandby::estimates`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimates {
    /// Tsw^: queue wait of a standby pilot, seconds.
    pub queue_wait_s: f64,
    /// L^: lifetime of a startd pilot, seconds.
    pub lifetime_s: f64,
    /// arr^, end^: jobs arriving in the WMS, and ending in its pilots, per second.
    pub arrivals_per_s: f64,
    pub ends_per_s: f64,
    pub safety: f64,
}

/// How the safety factor moved at a cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SafetyMove {
    Up,
    Down,
    Kept,
}

/// The adaptive controller's answer at one cycle, with its terms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaptiveTarget {
    /// Standby startd pilots to keep queued.
    pub target: u32,
    /// Little's-law replacements in transit (`busy / L^ × Tsw^`).
    pub replace: f64,
    /// Startd pilots for jobs no VM will take.
    pub demand: f64,
    /// The safety factor used (after this cycle's move).
    pub safety: f64,
    pub moved: SafetyMove,
}

/// The seed's "learning algorithm" (module doc): moving averages of Tsw, lifetimes and job
/// arrivals, and a safety factor adapted from starvation and idleness.
#[derive(Debug, Clone, PartialEq)]
pub struct AdaptiveStandby {
    s: AdaptiveSettings,
    queue_wait_s: f64,
    /// Removals per running startd pilot per second: 1 / L^.
    hazard: f64,
    arrival_rate: f64,
    end_rate: f64,
    safety: f64,
}

impl AdaptiveStandby {
    /// A controller at its priors; an error naming the first bad parameter.
    pub fn new(s: &AdaptiveSettings) -> Result<Self, String> {
        if let Some((f, m)) = s.problems().into_iter().next() {
            return Err(format!("{f}: {m}"));
        }
        Ok(AdaptiveStandby {
            queue_wait_s: s.initial_queue_wait_s,
            hazard: 1.0 / s.initial_lifetime_s,
            arrival_rate: 0.0,
            end_rate: 0.0,
            safety: s.safety,
            s: s.clone(),
        })
    }

    fn ewma(&self, est: f64, obs: f64) -> f64 {
        est + self.s.smoothing * (obs - est)
    }

    /// A standby startd pilot reached a worker node after waiting `tsw` since its submission.
    pub fn observe_queue_wait(&mut self, tsw: SimDuration) {
        self.queue_wait_s = self.ewma(self.queue_wait_s, tsw.as_millis() as f64 / 1e3);
    }

    /// A rate estimate moved towards `count` events over `over` (per `per` exposed): the
    /// weight is 1 − exp(−Δt/τ); an empty span or exposure teaches nothing.
    fn rate_ewma(&self, est: f64, count: f64, per: f64, over: SimDuration) -> f64 {
        let dt = over.as_millis() as f64 / 1e3;
        if dt <= 0.0 || per <= 0.0 {
            return est;
        }
        // The pure-Rust `libm`, as every transcendental function of the model (DESIGN.md,
        // "Determinism"): the platform's `exp` may differ in the last bit between machines.
        let w = 1.0 - libm::exp(-dt / self.s.rate_window_s);
        est + w * (count / (per * dt) - est)
    }

    /// `removed` startd pilots were removed by the batch system over `over`, out of `exposed`
    /// that held a slot then. The removal rate per startd pilot is 1 / L^ (for any lifetime
    /// distribution, in the steady state); learning it as a rate, not from each removed
    /// pilot's age, avoids the survivor bias of the first hours (the short-lived go first).
    pub fn observe_removals(&mut self, removed: u64, exposed: u32, over: SimDuration) {
        self.hazard = self.rate_ewma(self.hazard, removed as f64, f64::from(exposed), over);
    }

    /// `jobs` arrived for the site over `over` (the Generator cycle).
    pub fn observe_arrivals(&mut self, jobs: u64, over: SimDuration) {
        self.arrival_rate = self.rate_ewma(self.arrival_rate, jobs as f64, 1.0, over);
    }

    /// `jobs` ended (done, failed) in its pilots over `over`.
    pub fn observe_job_ends(&mut self, jobs: u64, over: SimDuration) {
        self.end_rate = self.rate_ewma(self.end_rate, jobs as f64, 1.0, over);
    }

    fn lifetime_s(&self) -> f64 {
        1.0 / self.hazard.max(1e-12)
    }

    /// Estimates: (Tsw^ in s, L^ in s, arrivals per s, job ends per s, safety).
    pub fn estimates(&self) -> Estimates {
        Estimates {
            queue_wait_s: self.queue_wait_s,
            lifetime_s: self.lifetime_s(),
            arrivals_per_s: self.arrival_rate,
            ends_per_s: self.end_rate,
            safety: self.safety,
        }
    }

    /// One Generator cycle: adapt the safety factor from `obs`, then the target (module doc).
    pub fn target(&mut self, obs: &StandbyObservation) -> AdaptiveTarget {
        let room = match obs.pool_startds {
            0 => f64::INFINITY,
            pool => f64::from(pool.saturating_sub(obs.running_startds)),
        };
        let moved = if obs.queued_jobs > u64::from(obs.idle_vms) && room > 0.0 {
            self.safety = (self.safety * self.s.safety_up).min(self.s.safety_max);
            SafetyMove::Up
        } else if obs.queued_startds > 0 && obs.idle_vms > 0 {
            self.safety = (self.safety * self.s.safety_down).max(self.s.safety_min);
            SafetyMove::Down
        } else {
            SafetyMove::Kept
        };
        let vms = obs.vms_per_startd.max(1);
        let busy = obs.running_startds.saturating_sub(obs.idle_vms / vms);
        let replace = f64::from(busy) * self.hazard * self.queue_wait_s;
        let growth = (self.arrival_rate - self.end_rate) * self.queue_wait_s;
        let unserved = obs.queued_jobs as f64 + growth - f64::from(obs.idle_vms);
        let demand = (unserved.max(0.0) / f64::from(vms)).min(room);
        let target = ceil_tol(self.safety * replace + demand).clamp(self.s.min, self.s.max);
        AdaptiveTarget { target, replace, demand, safety: self.safety, moved }
    }
}

/// A standby policy with its state: what the Generator of an SPF holds.
#[derive(Debug, Clone, PartialEq)]
pub enum StandbyController {
    Fixed(u32),
    Proportional { per_queued_job: f64, min: u32, max: u32 },
    Adaptive(AdaptiveStandby),
}

impl StandbyController {
    /// The controller of `policy`; an error for parameters [`StandbyPolicy::problems`] rejects.
    pub fn new(policy: &StandbyPolicy) -> Result<Self, String> {
        if let Some((f, m)) = policy.problems().into_iter().next() {
            return Err(format!("{f}: {m}"));
        }
        Ok(match policy {
            StandbyPolicy::Fixed(n) => StandbyController::Fixed(*n),
            StandbyPolicy::Proportional { per_queued_job, min, max } => {
                StandbyController::Proportional { per_queued_job: *per_queued_job, min: *min, max: *max }
            }
            StandbyPolicy::Adaptive(a) => StandbyController::Adaptive(AdaptiveStandby::new(a)?),
        })
    }

    /// Observations only the adaptive controller uses; the others ignore them.
    pub fn observe_queue_wait(&mut self, tsw: SimDuration) {
        if let StandbyController::Adaptive(a) = self {
            a.observe_queue_wait(tsw);
        }
    }
    pub fn observe_removals(&mut self, removed: u64, exposed: u32, over: SimDuration) {
        if let StandbyController::Adaptive(a) = self {
            a.observe_removals(removed, exposed, over);
        }
    }
    pub fn observe_arrivals(&mut self, jobs: u64, over: SimDuration) {
        if let StandbyController::Adaptive(a) = self {
            a.observe_arrivals(jobs, over);
        }
    }
    pub fn observe_job_ends(&mut self, jobs: u64, over: SimDuration) {
        if let StandbyController::Adaptive(a) = self {
            a.observe_job_ends(jobs, over);
        }
    }

    /// Standby startd pilots to keep queued at this cycle.
    pub fn target(&mut self, obs: &StandbyObservation) -> u32 {
        match self {
            StandbyController::Fixed(n) => *n,
            StandbyController::Proportional { per_queued_job, min, max } => {
                ceil_tol(*per_queued_job * obs.queued_jobs as f64).clamp(*min, *max)
            }
            StandbyController::Adaptive(a) => a.target(obs).target,
        }
    }

    /// The adaptive controller's estimates; None for the other policies.
    pub fn estimates(&self) -> Option<Estimates> {
        match self {
            StandbyController::Adaptive(a) => Some(a.estimates()),
            _ => None,
        }
    }
}

#[cfg(test)]
#[path = "standby_tests.rs"]
mod tests;
