//! `dirac::director` — the TaskqueueDirector's pilot-submission decision (seed 000;
//! reference `dirac.md` §4.1, the 2009 code `5409156f36`).
//!
//! Every `PollingTime` (60 s) the director looks at all task queues:
//!
//! ```text
//! pilotsPerPriority = pilotsPerIteration / ΣP        pilotsPerJob = pilotsPerIteration / ΣN
//! n = poisson((pilotsPerPriority·P_tq + pilotsPerJob·N_tq) · maxCPU / max(CPU_tq, lowestCPUBoost))
//! n = min(n, int((1 + extraPilotFraction)·N_tq) + extraPilots − waitingPilots_tq)
//! ```
//!
//! then picks a submit pool, decides private vs generic pilots, and for generic pilots divides
//! `n` by `MaxJobsInFillMode` (Python 2 integer division). Which CEs receive the pilots (the
//! WMS list-match and ranking) is the grid's business: the decision only names the pool.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::taskqueue::{TaskQueue, TqId};
use crate::engine::{Period, dist};

/// A submit pool: a named set of CEs reachable through one middleware (seed 000).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubmitPool {
    /// Pool name, unique: what `default_submit_pools` and a job stream's `submit_pools` name
    /// (seed 000's pools are `DIRAC`, `Local`, `gLite` and `SAM`; the default director has one,
    /// `gLite`).
    pub name: String,
    /// CE names this pool submits to; empty means every CE.
    #[serde(default)]
    pub ces: Vec<String>,
}

/// TaskqueueDirector options with their 2009 defaults (seed 000; reference §4.1 and appendix).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DirectorSettings {
    /// `PollingTime`: 60 s.
    pub polling_time_s: Period,
    /// `pilotsPerIteration`: 40.
    pub pilots_per_iteration: f64,
    /// `lowestCPUBoost`: 7200 s.
    pub lowest_cpu_boost_s: f64,
    /// `extraPilotFraction`: 0.2.
    pub extra_pilot_fraction: f64,
    /// `extraPilots`: 4.
    pub extra_pilots: u32,
    /// `maxPilotWaitingHours`: 6.
    pub max_pilot_waiting_hours: f64,
    /// `PrivatePilotFraction`: 0.5.
    pub private_pilot_fraction: f64,
    /// `MaxJobsInFillMode`: 2 (generic pilots run with `-M 2`).
    pub max_jobs_in_fill_mode: u32,
    /// `SubmitPools`: the pools the director knows.
    pub submit_pools: Vec<SubmitPool>,
    /// `DefaultSubmitPools`: used when a TQ names none.
    pub default_submit_pools: Vec<String>,
    /// List-match before submitting: send pilots only to CEs that can run the TQ.
    pub list_match: bool,
}

impl Default for DirectorSettings {
    fn default() -> Self {
        Self {
            polling_time_s: Period::secs(60.0),
            pilots_per_iteration: 40.0,
            lowest_cpu_boost_s: 7200.0,
            extra_pilot_fraction: 0.2,
            extra_pilots: 4,
            max_pilot_waiting_hours: 6.0,
            private_pilot_fraction: 0.5,
            max_jobs_in_fill_mode: 2,
            submit_pools: vec![SubmitPool { name: "gLite".into(), ces: vec![] }],
            default_submit_pools: vec!["gLite".into()],
            list_match: true,
        }
    }
}

/// What the director decides for one TQ in one cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    pub tq: TqId,
    /// Pilots to submit (> 0).
    pub pilots: u32,
    /// Private pilots (owner's identity) or generic ones.
    pub private: bool,
    /// The submit pool chosen (interned pool name).
    pub pool: u32,
}

/// The Poisson mean for one TQ: `(pilotsPerPriority·P + pilotsPerJob·N) · maxCPU / max(CPU, lowestCPUBoost)`.
pub fn poisson_mean(s: &DirectorSettings, tq: &TaskQueue, sum_priority: f64, sum_jobs: f64, max_cpu: f64) -> f64 {
    let per_priority = if sum_priority > 0.0 { s.pilots_per_iteration / sum_priority } else { 0.0 };
    let per_job = if sum_jobs > 0.0 { s.pilots_per_iteration / sum_jobs } else { 0.0 };
    let boost = max_cpu / (tq.head.cpu_time as f64).max(s.lowest_cpu_boost_s);
    (per_priority * tq.priority + per_job * f64::from(tq.n_jobs)) * boost
}

/// The cap `int((1 + extraPilotFraction)·N) + extraPilots − waitingPilots`, which may be ≤ 0.
/// Python's `int` truncates toward zero, as `as` does (saturating; validation keeps the
/// fraction non-negative, where it is the floor).
pub fn pilot_cap(s: &DirectorSettings, jobs: u32, waiting_pilots: u32) -> i64 {
    ((1.0 + s.extra_pilot_fraction) * f64::from(jobs)) as i64 + i64::from(s.extra_pilots) - i64::from(waiting_pilots)
}

/// Whether a pilot for a TQ is private, given the cycle's draw `u` in [0, 1). Seed 000,
/// literally: `privateIfGenericTQ = privatePilotFraction < random.random()`, i.e. a private
/// pilot with probability 1 − PrivatePilotFraction; always for a TQ of pilot type `private`
/// (`private_tq`); never with `ForceGeneric`.
pub fn is_private(s: &DirectorSettings, u: f64, private_tq: bool, force_generic: bool) -> bool {
    (s.private_pilot_fraction < u || private_tq) && !force_generic
}

/// Whether some draw makes a TQ's pilots generic ([`is_private`] false for some `u` in
/// [0, 1)): a generic pilot takes any owner's jobs, which validation must know.
pub fn may_submit_generic(s: &DirectorSettings, private_tq: bool, force_generic: bool) -> bool {
    force_generic || (!private_tq && s.private_pilot_fraction > 0.0)
}

/// One director cycle over `tqs` (all task queues, in id order).
///
/// `waiting_pilots(tq)` counts the TQ's pilots in Submitted/Waiting submitted within
/// `maxPilotWaitingHours`; `default_pools` are the interned DefaultSubmitPools;
/// `private_type` is the interned pilot type "private"; `max_cpu` the last CPU segment.
pub fn plan_cycle<R: Rng + ?Sized>(
    s: &DirectorSettings,
    tqs: &[&TaskQueue],
    waiting_pilots: impl Fn(TqId) -> u32,
    default_pools: &[u32],
    private_type: u32,
    max_cpu: f64,
    rng: &mut R,
) -> Vec<Submission> {
    let sum_priority: f64 = tqs.iter().map(|t| t.priority).sum();
    let sum_jobs: f64 = tqs.iter().map(|t| f64::from(t.n_jobs)).sum();
    let mut out = Vec::new();
    for tq in tqs {
        let drawn = dist::poisson(rng, poisson_mean(s, tq, sum_priority, sum_jobs, max_cpu));
        let n = (drawn as i64).min(pilot_cap(s, tq.n_jobs, waiting_pilots(tq.id)));
        if n <= 0 {
            continue;
        }
        // submitPools = TQ's pools or DefaultSubmitPools, randomised; the first is used.
        let mut pools =
            if tq.def.submit_pools.is_empty() { default_pools.to_vec() } else { tq.def.submit_pools.clone() };
        if pools.is_empty() {
            continue;
        }
        dist::shuffle(rng, &mut pools);
        let u = dist::uniform01(rng);
        let private = is_private(s, u, tq.def.pilot_types.contains(&private_type), tq.def.force_generic);
        let pilots = if private { n } else { n / i64::from(s.max_jobs_in_fill_mode.max(1)) };
        if pilots > 0 {
            out.push(Submission { tq: tq.id, pilots: pilots as u32, private, pool: pools[0] });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dirac::taskqueue::{TaskQueueDb, TqDefinition};
    use crate::engine::RngStreams;

    fn db_with(tqs: &[(u64, u32, f64)]) -> TaskQueueDb {
        let mut db = TaskQueueDb::new();
        let mut job = 0;
        for (owner, &(cpu, n, prio)) in tqs.iter().enumerate() {
            let def = TqDefinition { owner: owner as u32, cpu_time: cpu, ..Default::default() };
            for _ in 0..n {
                job += 1;
                db.insert_job(&def, job, 1);
            }
            db.get_mut(owner as u32 + 1).unwrap().priority = prio;
        }
        db
    }

    #[test]
    fn poisson_mean_worked_example() {
        // Two TQs: P 750/250, N 30/10, CPU 500 s / 50000 s, seed segments (maxCPU 300000).
        // TQ1: (40/1000·750 + 40/40·30)·300000/7200 = (30 + 30)·41.667 = 2500
        // TQ2: (40/1000·250 + 40/40·10)·300000/50000 = (10 + 10)·6 = 120
        let db = db_with(&[(500, 30, 750.0), (50_000, 10, 250.0)]);
        let s = DirectorSettings::default();
        let t: Vec<_> = db.iter().collect();
        assert!((poisson_mean(&s, t[0], 1000.0, 40.0, 300_000.0) - 2500.0).abs() < 1e-9);
        assert!((poisson_mean(&s, t[1], 1000.0, 40.0, 300_000.0) - 120.0).abs() < 1e-9);
    }

    #[test]
    fn cap_uses_extra_fraction_and_extra_pilots() {
        // int(1.2·N) + 4 − waiting (reference §0 item 6).
        let s = DirectorSettings::default();
        assert_eq!(pilot_cap(&s, 10, 0), 16);
        assert_eq!(pilot_cap(&s, 1, 0), 5);
        assert_eq!(pilot_cap(&s, 7, 0), 12); // int(8.4) = 8
        assert_eq!(pilot_cap(&s, 10, 16), 0);
        assert_eq!(pilot_cap(&s, 10, 20), -4);
        let s = DirectorSettings { extra_pilot_fraction: 0.5, extra_pilots: 0, ..s };
        assert_eq!(pilot_cap(&s, 10, 3), 12);
        // Python's int() truncates toward zero: int(-1.5) = -1, where a floor would give -2
        // (a fraction validation refuses, kept exact for the library's callers).
        let s = DirectorSettings { extra_pilot_fraction: -1.5, extra_pilots: 4, ..s };
        assert_eq!(pilot_cap(&s, 3, 0), 3);
    }

    #[test]
    fn cycle_is_capped_and_generic_pilots_are_halved() {
        let db = db_with(&[(500, 10, 1.0)]);
        let t: Vec<_> = db.iter().collect();
        let mut rng = RngStreams::new(1).stream("test/director");
        let mut private = 0;
        let mut generic = 0;
        for _ in 0..2000 {
            let plan = plan_cycle(&DirectorSettings::default(), &t, |_| 0, &[5], 99, 300_000.0, &mut rng);
            assert_eq!(plan.len(), 1, "the mean is huge, so n > 0 always");
            let d = &plan[0];
            assert_eq!(d.pool, 5);
            if d.private {
                assert_eq!(d.pilots, 16, "capped at int(1.2·10)+4");
                private += 1;
            } else {
                assert_eq!(d.pilots, 8, "16 / MaxJobsInFillMode 2");
                generic += 1;
            }
        }
        assert!((850..1150).contains(&private) && private + generic == 2000, "{private}");
        // All waiting pilots cover the cap: nothing is submitted.
        let plan = plan_cycle(&DirectorSettings::default(), &t, |_| 16, &[5], 99, 300_000.0, &mut rng);
        assert!(plan.is_empty());
    }

    #[test]
    fn generic_pilots_are_possible_exactly_when_some_draw_gives_one() {
        let draws: Vec<f64> = (0..1000).map(|k| f64::from(k) / 1000.0).collect();
        for frac in [0.0, 0.3, 1.0] {
            let s = DirectorSettings { private_pilot_fraction: frac, ..Default::default() };
            for (private_tq, force) in [(false, false), (true, false), (false, true), (true, true)] {
                // u = 0 is the one draw where fraction 0 would give a generic pilot; random()
                // returns it with probability 2⁻⁵³, so the draws from the first step count.
                let any = draws[1..].iter().any(|&u| !is_private(&s, u, private_tq, force));
                assert_eq!(may_submit_generic(&s, private_tq, force), any, "{frac} {private_tq} {force}");
            }
        }
    }

    #[test]
    fn private_fraction_is_the_seeds_literal_comparison() {
        // privatePilotFraction < random.random(): fraction 1.0 never gives private pilots for a
        // generic TQ, fraction 0.0 always does.
        let db = db_with(&[(500, 10, 1.0)]);
        let t: Vec<_> = db.iter().collect();
        let mut rng = RngStreams::new(2).stream("test/private");
        for (fraction, want) in [(1.0, false), (0.0, true)] {
            let s = DirectorSettings { private_pilot_fraction: fraction, ..Default::default() };
            for _ in 0..200 {
                let plan = plan_cycle(&s, &t, |_| 0, &[1], 99, 300_000.0, &mut rng);
                assert_eq!(plan[0].private, want);
            }
        }
    }
}
