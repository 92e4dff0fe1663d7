//! The brokerage weight of a PQ and the final rules (reference §2 "Weight", AtlasProdJobBroker.py
//! L1704-1932, and "Final filters" L1957-2056; seed 004 "Calculate brokerage weight" and
//! "Apply further filters").
//!
//! ```text
//! nRunning   = max of Rreal, min(nBatchJob, 20) (bootstrap), numSlots (see running_count)
//! manyAssigned = clamp((nAssigned+1)/(nActivated+1), 1, 2)        code  (seed: assigned/activated)
//! all input local (or none):  w = (nRunning+1) / (nActivated+nStarting+nDefined+10)
//! else:                       w = (nRunning+1) / (nActivated+nAssigned+nStarting+nDefined+10) / manyAssigned
//! input:   w ×= (totalSize + localSize) / totalSize / (nFilesToMove/100 + 1)
//! nucleus PQs (or sharing its output storage): w ×= t1Weight
//! NW_ACTIVE: w ×= weightNw (panda::network);  architecture preference: w ×= 1 + pct/100
//! ```

use super::filters::Ctx;
use super::inputs::BrokerQueue;
use super::params::JobBrokerVariant;
use super::reasons::SkipReason;
use crate::panda::common::{self, RunningInputs};
use crate::panda::network::{self, NetworkWeight};

const MB: f64 = 1024.0 * 1024.0;
pub use crate::panda::common::{N_WORKERS_CUTOFF, RunningSource};
/// `cutOffFactor` / `RT_Cap`: queued may reach twice the running.
pub const CAP_FACTOR: u64 = 2;

/// The running count used by the weight and the caps (seed "the largest one as the number of
/// running jobs"; code L1790-1830). Both variants bootstrap from workers only when the PQ has
/// pilots, is a UPS queue and the task priority ≤ `MAX_PRIO_TO_BOOTSTRAP`, and ignore
/// `numSlots` above that priority (code conditions the seed is silent on). They differ on
/// `numSlots`: seed — `max(R, nStarting)` for 0 and `max(R, numSlots)` for > 0; code —
/// `R + nStarting` and `max(int(numSlots / coreCount), R)`.
pub fn running_count(variant: JobBrokerVariant, q: &BrokerQueue, priority: i64, max_prio: i64) -> (u64, RunningSource) {
    let inputs = RunningInputs {
        running: q.counts.running,
        workers: q.n_workers,
        n_pilot: q.n_pilot,
        starting: q.counts.starting,
        num_slots: q.num_slots.filter(|_| priority <= max_prio),
        cores: q.cores(),
    };
    common::running_count(&inputs, q.ups_queue && priority <= max_prio, variant == JobBrokerVariant::Seed)
}

/// `manyAssigned`: code `clamp((a+1)/(b+1), 1, 2)` (L1832-1834); seed `max(1, min(2, a/b))`
/// (reference ⚠ "docs omit the +1"; `b = 0` reads as 2 if `a > 0`, else 1).
pub fn many_assigned(variant: JobBrokerVariant, assigned: u64, activated: u64) -> f64 {
    let r = match variant {
        JobBrokerVariant::PandaServer => (assigned + 1) as f64 / (activated + 1) as f64,
        JobBrokerVariant::Seed if activated == 0 => {
            if assigned > 0 {
                2.0
            } else {
                1.0
            }
        }
        JobBrokerVariant::Seed => assigned as f64 / activated as f64,
    };
    r.clamp(1.0, 2.0)
}

/// Every number that entered a PQ's weight (the code's `weightStr`, and more).
#[derive(Debug, Clone, PartialEq)]
pub struct WeightTerms {
    /// Rreal: running jobs of the task's gshare.
    pub n_running_real: u64,
    /// The running count used.
    pub n_running: u64,
    pub running_source: RunningSource,
    /// Defined jobs, including those generated this cycle (`liveCounter`).
    pub n_defined: u64,
    pub n_assigned: u64,
    pub n_activated: u64,
    pub n_starting: u64,
    pub many_assigned: f64,
    /// Input not fully local: assigned jobs count (weight, caps).
    pub use_assigned: bool,
    /// `(nRunning+1) / (…+10)` (÷ manyAssigned when `use_assigned`).
    pub base: f64,
    /// `int((totalSize − localSize) / MB)`.
    pub mb_to_move: i64,
    pub n_files_to_move: i64,
    /// `(total + local) / total / (nFilesToMove/100 + 1)`; 1 without input.
    pub data_factor: f64,
    /// `use_only_local_data` PQ missing input: rejected by the final rules.
    pub skip_remote_data: bool,
    /// `t1Weight` for nucleus PQs, else 1.
    pub t1_factor: f64,
    /// `weightNw` and its parts (`None` without nucleus).
    pub network: Option<NetworkWeight>,
    /// What multiplied the weight: `weightNw` when `NW_ACTIVE`, else 1.
    pub network_factor: f64,
    /// Architecture-level preference (1 if none).
    pub preference: f64,
    /// The product; not finite where PanDA raises (`nFilesToMove = -100` divides by zero): the
    /// broker skips such a PQ ([`SkipReason::WeightNotComputable`]) rather than reading it as 0,
    /// the bootstrap weight.
    pub weight: f64,
}

/// The weight of a PQ that passed every filter.
pub fn weight_terms(c: &Ctx, q: &BrokerQueue) -> WeightTerms {
    let t = c.task;
    let cnt = &q.counts;
    let (n_running, running_source) = running_count(c.variant, q, t.current_priority, c.params.max_prio_to_bootstrap);
    let n_defined = cnt.defined + q.live_count;
    let many = many_assigned(c.variant, cnt.assigned, cnt.activated);
    let total = if t.total_input_bytes.is_finite() { t.total_input_bytes.max(0.0) } else { 0.0 };
    let local = if q.local_input.disk_bytes.is_finite() { q.local_input.disk_bytes.max(0.0) } else { 0.0 };
    let use_assigned = local < total;
    let num = (n_running + 1) as f64;
    let base = if total == 0.0 || total - local <= 0.0 {
        num / (cnt.activated + cnt.starting + n_defined + 10) as f64
    } else {
        num / (cnt.activated + cnt.assigned + cnt.starting + n_defined + 10) as f64 / many
    };
    let (mut mb_to_move, mut n_files_to_move, mut data_factor, mut skip_remote_data) = (0, 0, 1.0, false);
    if total > 0.0 {
        mb_to_move = ((total - local) / MB).trunc() as i64;
        n_files_to_move = t.total_input_files as i64 - q.local_input.disk_files as i64;
        if q.use_only_local_data && (mb_to_move > 0 || n_files_to_move > 0) {
            skip_remote_data = true;
        } else {
            data_factor = (total + local) / total / (n_files_to_move as f64 / 100.0 + 1.0);
        }
    }
    let t1_factor = if q.in_nucleus || q.shares_nucleus_storage { c.t1_weight as f64 } else { 1.0 };
    let network = t.nucleus.as_ref().and_then(|_| network::network_weight(&c.link_of(q), &c.net));
    let network_factor = match (&t.nucleus, network) {
        (Some(_), Some(nw)) if c.net.nw_active => nw.weight,
        (Some(_), None) if c.net.nw_active => 0.0,
        _ => 1.0,
    };
    // PanDA's preference weight is `1 + pct/100` with pct ≥ 0: anything below 1 (or not a
    // number) reads as 1, so a preference never zeroes or flips a weight.
    let preference = q.arch_preference_weight.filter(|p| p.is_finite() && *p >= 1.0).unwrap_or(1.0);
    let weight = base * data_factor * t1_factor * network_factor * preference;
    WeightTerms {
        n_running_real: cnt.running,
        n_running,
        running_source,
        n_defined,
        n_assigned: cnt.assigned,
        n_activated: cnt.activated,
        n_starting: cnt.starting,
        many_assigned: many,
        use_assigned,
        base,
        mb_to_move,
        n_files_to_move,
        data_factor,
        skip_remote_data,
        t1_factor,
        network,
        network_factor,
        preference,
        weight,
    }
}

/// What the final rules make of a weighed PQ (L1957-2056).
#[derive(Debug, Clone, PartialEq)]
pub enum FinalRule {
    /// Accepted with its weight; `low` = its message if it falls beyond the top 10.
    Accept { low: SkipReason },
    /// No running or queued jobs: accepted with weight forced to 0, ahead of the others.
    Bootstrap { low: SkipReason },
    /// Accepted only if it has the most running jobs (negative `t1Weight`); `low` otherwise.
    T1Candidate { n_running_all: u64, low: SkipReason },
    /// Rejected.
    Reject(SkipReason),
}

/// `(nQueuedJobs, nRunningJobsCap)` the PQ's site candidate carries (L1934-1955): code — UCORE
/// by resource type, else `activated + starting (+ assigned)` against `max(NQUEUELIMITSITE,
/// 2·nRunning)`; seed — `defined + activated + starting (+ assigned)` against `2·nRunning`. No
/// cap for express tasks.
pub fn queue_and_cap(c: &Ctx, q: &BrokerQueue, w: &WeightTerms, cutoff: u64) -> (u64, Option<u64>) {
    let ass = if w.use_assigned { w.n_assigned } else { 0 };
    let (queued, cap) = match c.variant {
        JobBrokerVariant::PandaServer if q.ucore => {
            let (rq, rr) = rt_stats(q, w);
            (rq, cutoff.max(CAP_FACTOR * rr))
        }
        JobBrokerVariant::PandaServer => (w.n_activated + w.n_starting + ass, cutoff.max(CAP_FACTOR * w.n_running)),
        JobBrokerVariant::Seed => (w.n_defined + w.n_activated + w.n_starting + ass, CAP_FACTOR * w.n_running),
    };
    (queued, (!c.express).then_some(cap))
}

/// `(nQueue_rt, nRun_rt)`: resource-type statistics of the PQ, `(0, 0)` without them.
fn rt_stats(q: &BrokerQueue, w: &WeightTerms) -> (u64, u64) {
    match &q.rt_counts {
        None => (0, 0),
        Some(rt) => {
            let ass = if w.use_assigned { rt.assigned } else { 0 };
            (rt.defined + ass + rt.activated + rt.starting, rt.running.max(w.n_running))
        }
    }
}

/// The final rules in code order (first match decides).
pub fn final_rule(c: &Ctx, q: &BrokerQueue, w: &WeightTerms, cutoff: u64, min_weight: (&str, f64)) -> FinalRule {
    let t = c.task;
    let weight = w.weight;
    if q.locked {
        return FinalRule::Reject(SkipReason::Locked);
    }
    if w.skip_remote_data {
        return FinalRule::Reject(SkipReason::NonLocal);
    }
    let ass = if w.use_assigned { w.n_assigned } else { 0 };
    match c.variant {
        JobBrokerVariant::PandaServer => {
            let (queued, _) = queue_and_cap(c, q, w, cutoff);
            let cap = cutoff.max(CAP_FACTOR * w.n_running);
            if !c.express && !q.ucore && queued > cap {
                return FinalRule::Reject(SkipReason::Cap { weight, queued, cutoff, use_assigned: w.use_assigned });
            }
        }
        JobBrokerVariant::Seed => {
            let act_start = w.n_activated + w.n_starting;
            if !c.express && act_start > CAP_FACTOR * w.n_running {
                return FinalRule::Reject(SkipReason::SeedCapActivated {
                    weight,
                    activated_starting: act_start,
                    running: w.n_running,
                });
            }
        }
    }
    if c.net.nw_active && c.express && t.nucleus.is_some() {
        let nw = w.network.map_or(0.0, |n| n.weight);
        if !network::express_passes(&c.link_of(q), &c.net) {
            return FinalRule::Reject(SkipReason::LowNetworkWeight { weight_nw: nw, threshold: c.net.nw_threshold });
        }
    }
    match c.variant {
        JobBrokerVariant::PandaServer if q.rt_counts.is_some() && !c.express => {
            let (rq, rr) = rt_stats(q, w);
            if rq > cutoff.max(rr * CAP_FACTOR) {
                return FinalRule::Reject(SkipReason::CapRt {
                    queued: rq,
                    cutoff,
                    running_rt: rr,
                    use_assigned: w.use_assigned,
                    resource_type: t.resource_type.clone(),
                });
            }
        }
        JobBrokerVariant::Seed if !c.express => {
            let queued = w.n_defined + w.n_activated + ass + w.n_starting;
            if queued > CAP_FACTOR * w.n_running {
                return FinalRule::Reject(SkipReason::SeedCapQueued {
                    weight,
                    queued,
                    running: w.n_running,
                    use_assigned: w.use_assigned,
                });
            }
        }
        _ => {}
    }
    let all_zero = w.n_running + w.n_activated + w.n_assigned + w.n_starting + w.n_defined == 0;
    if all_zero && t.current_priority <= c.params.max_prio_to_bootstrap && !t.is_merging && !c.express {
        return FinalRule::Bootstrap { low: SkipReason::OthersBootstrap { weight } };
    }
    let (param, min) = min_weight;
    if min > 0.0 && weight < min {
        return FinalRule::Reject(SkipReason::BelowMinWeight { param: param.to_string(), min, weight });
    }
    if c.use_t1_weight {
        return FinalRule::T1Candidate {
            n_running_all: q.counts_all.running,
            low: SkipReason::LowRunningForT1 { n_running_all: q.counts_all.running },
        };
    }
    FinalRule::Accept { low: SkipReason::LowWeight { weight } }
}
