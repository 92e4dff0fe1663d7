//! Temporary filters: `cap_rt`, overload, the Analysis Stabilizer and the failure check (seed
//! 004, "Filters for temporary issues" and "Analysis Stabilizer"; reference §4,
//! `AtlasAnalJobBroker.py` L1507-1732).
//!
//! Analysis Stabilizer, per PQ, counts of the task's gshare:
//!
//! ```text
//! trr       = nR_pq_gshare × siteRate / nR_pq_total         (0 if nR_pq_total = 0; siteRate =
//!             jobs started per hour over the last 6 h, 0 if the PQ is unknown)
//! not throttled if  nQ_pq < BASE_QUEUE_LENGTH_PER_PQ  or  nQ_pq < BASE_EXPECTED_WAIT_HOUR_ON_PQ × trr
//! nQ_max    = max(BASE_QUEUE_LENGTH_PER_PQ, STATIC_MAX_QUEUE_RUNNING_RATIO × nR_pq, MAX_EXPECTED_WAIT_HOUR × trr)
//! fraction  = max(1 / nUsers_pq, nR_pq_user / nR_pq)          (second term 0 if nR_pq = 0)
//! max_q_len = max(BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER, BASE_QUEUE_RATIO_ON_PQ × nR_pq, nQ_max × fraction)
//! problematic if nQ_pq_user > max_q_len
//! ```
//! `nR_pq` is the `_total` running of the users' statistics (else the gshare's running); the code
//! counts the `_total` key among the users (`nUsers + 1`, [`AnalBrokerVariant::PandaServer`]).
//!
//! Overload: `grandRatio = Σ nQ / Σ nR` of the gshare over all PQs; a PQ with `nQ >
//! OVERLOAD_MIN_QUEUE` and (`nR = 0` or `nQ/nR > grandRatio × OVERLOAD_RATIO_OFFSET`) is skipped
//! (and problematic if `nR = 0`); if that leaves nothing, the overloaded PQs with non-VP data
//! (or any, without locality) are kept. Failures: problematic if `nFailed + nClosed >
//! max(2·nFinished, MIN_BAD_JOBS_TO_SKIP_PQ)`.

use super::input::{QueueStats, ResourceTypeStats};
use super::params::{AnalBrokerParams, AnalBrokerVariant};
use super::reason::SkipReason;

/// `RT_Cap` (L1517) and the floor of `cap_rt`.
pub const RT_CAP: u64 = 2;
pub const RT_CAP_MIN_QUEUE: u64 = 20;

/// `cap_rt` (L1511-1542): `queued > max(20, 2·running)` for the task's resource type.
pub fn cap_rt(rt: Option<ResourceTypeStats>) -> Option<SkipReason> {
    let rt = rt?;
    (rt.queued > RT_CAP_MIN_QUEUE.max(rt.running.saturating_mul(RT_CAP)))
        .then_some(SkipReason::CapRt { queued: rt.queued, running: rt.running })
}

/// Queued jobs of the gshare at a PQ (defined + assigned + activated + starting).
pub fn n_queue(s: &QueueStats) -> u64 {
    s.n_defined.saturating_add(s.n_assigned).saturating_add(s.n_activated).saturating_add(s.n_starting)
}

/// `get_total_nq_nr_ratio`: `None` when nothing runs.
pub fn grand_ratio(queued_total: u64, running_total: u64) -> Option<f64> {
    (running_total > 0).then(|| queued_total as f64 / running_total as f64)
}

/// Overload verdict of one PQ (L1566-1586): `None` = not overloaded.
pub fn overload(p: &AnalBrokerParams, s: &QueueStats, grand: Option<f64>, vp: bool) -> Option<SkipReason> {
    let (nq, nr) = (n_queue(s), s.n_running);
    if (nq as f64) <= p.overload_min_queue {
        return None;
    }
    if nr == 0 {
        return Some(SkipReason::OverloadedNoRunning { n_queue: nq, min_queue: p.overload_min_queue });
    }
    // With nothing running in the gshare every PQ has nR = 0 (handled above).
    let g = grand.unwrap_or(0.0);
    (nq as f64 / nr as f64 > g * p.overload_ratio_offset).then_some(SkipReason::Overloaded {
        n_queue: nq,
        n_running: nr,
        grand_ratio: g,
        offset: p.overload_ratio_offset,
        min_queue: p.overload_min_queue,
        vp,
    })
}

/// `to_running_rate` of the gshare at a PQ: `nR_gshare × siteRate / nR_total`.
pub fn to_running_rate(n_running_gshare: u64, site_rate: Option<f64>, n_running_total: u64) -> f64 {
    let rate = site_rate.filter(|r| r.is_finite()).unwrap_or(0.0);
    if n_running_total == 0 { 0.0 } else { n_running_gshare as f64 * rate / n_running_total as f64 }
}

/// The stabilizer's quantities at one PQ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueLimits {
    pub trr: f64,
    /// `nR_pq`.
    pub n_running: f64,
    pub max_nq_pq: f64,
    pub user_fraction: f64,
    pub max_q_len: f64,
    pub n_queue_user: u64,
    pub n_running_user: u64,
}

impl QueueLimits {
    /// `rem_q = max(max_q_len − nQ_pq_user, 0)`.
    pub fn rem_q(&self) -> f64 {
        (self.max_q_len - self.n_queue_user as f64).max(0.0)
    }
}

/// `nUsers_pq` as the variant counts it: the code's `len(dict)` includes `_total`; without the
/// gshare at the PQ, 1.
pub fn n_users(p: &AnalBrokerParams, s: &QueueStats) -> f64 {
    match (s.users, p.variant) {
        (None, _) => 1.0,
        (Some(u), AnalBrokerVariant::Seed) => f64::from(u.n_users.max(1)),
        (Some(u), AnalBrokerVariant::PandaServer) => f64::from(u.n_users) + 1.0,
    }
}

/// `nQ_max`, the user fraction and `max_q_len` at a PQ (the user's counts 0 when absent).
pub fn queue_limits(p: &AnalBrokerParams, s: &QueueStats) -> QueueLimits {
    let trr = to_running_rate(s.n_running, s.site_to_running_rate, s.n_running_all);
    let n_running = s.users.map_or(s.n_running, |u| u.n_running) as f64;
    let max_nq_pq = p
        .base_queue_length_per_pq
        .max(p.static_max_queue_running_ratio * n_running)
        .max(p.max_expected_wait_hour * trr);
    let user = s.user.unwrap_or_default();
    let prop = if n_running > 0.0 { user.n_running as f64 / n_running } else { 0.0 };
    let user_fraction = (1.0 / n_users(p, s)).max(prop);
    let max_q_len = p
        .base_default_queue_length_per_pq_user
        .max(p.base_queue_ratio_on_pq * n_running)
        .max(max_nq_pq * user_fraction);
    QueueLimits {
        trr,
        n_running,
        max_nq_pq,
        user_fraction,
        max_q_len,
        n_queue_user: user.n_queue,
        n_running_user: user.n_running,
    }
}

/// Whether the stabilizer looks at the PQ at all: enough queued in the gshare
/// (`nQ_pq ≥ BASE_QUEUE_LENGTH_PER_PQ` and `nQ_pq ≥ BASE_EXPECTED_WAIT_HOUR_ON_PQ × trr`).
pub fn throttleable(p: &AnalBrokerParams, s: &QueueStats) -> bool {
    let nq = n_queue(s) as f64;
    let trr = to_running_rate(s.n_running, s.site_to_running_rate, s.n_running_all);
    !(nq < p.base_queue_length_per_pq || nq < p.base_expected_wait_hour_on_pq * trr)
}

/// The stabilizer verdict (L1620-1716): `None` if the PQ is not throttleable, the user has no
/// jobs there, or its queue is within `max_q_len`.
pub fn stabilizer(p: &AnalBrokerParams, s: &QueueStats) -> Option<SkipReason> {
    if !throttleable(p, s) {
        return None;
    }
    s.user?;
    let l = queue_limits(p, s);
    (l.n_queue_user as f64 > l.max_q_len)
        .then_some(SkipReason::UserQueueTooLong { n_queue_user: l.n_queue_user, max_q_len: l.max_q_len })
}

/// Failures (L1725-1732): `nFailed + nClosed > max(2·nFinished, MIN_BAD_JOBS_TO_SKIP_PQ)`.
pub fn failures(p: &AnalBrokerParams, s: &QueueStats) -> Option<SkipReason> {
    let bad = s.n_failed.saturating_add(s.n_closed);
    (bad > s.n_finished.saturating_mul(2).max(p.min_bad_jobs_to_skip_pq)).then_some(SkipReason::TooManyFailures {
        n_failed: s.n_failed,
        n_closed: s.n_closed,
        n_finished: s.n_finished,
    })
}

/// Problems the stabilizer loop records for a PQ (not merging): the user's queue, and failures
/// — the latter, in the code, only for PQs the stabilizer reaches (throttleable, user present).
pub fn problems(p: &AnalBrokerParams, s: &QueueStats) -> impl Iterator<Item = SkipReason> {
    let reached = throttleable(p, s) && s.user.is_some();
    let fail = match p.variant {
        AnalBrokerVariant::Seed => failures(p, s),
        AnalBrokerVariant::PandaServer if reached => failures(p, s),
        AnalBrokerVariant::PandaServer => None,
    };
    stabilizer(p, s).into_iter().chain(fail)
}
