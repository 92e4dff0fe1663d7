//! `panda::job_broker` — ATLAS production job brokerage: which PanDA queues (PQs) a task's
//! jobs may go to, and with which weights (seed 004 "ATLAS Production Job Brokerage"; reference
//! `panda.md` §2, `pandajedi/jedibrokerage/AtlasProdJobBroker.py` `doBrokerage` of
//! panda-server 1.0.4, with `AtlasBrokerUtils.hasZeroShare`, `check_endpoints_with_blacklist`,
//! `InputChunk.getOneSiteCandidate`).
//!
//! [`broker`] runs, per PQ, the filters in code order ([`filters::CHAIN`]: status, link,
//! opportunistic, inactive, zero share, jumbo, diskIO, core count, SW/HW hook, memory, scratch
//! disk, SE space/blacklist, walltime, network connectivity, event service, transferring, work
//! shortage, T1 weight, max IO intensity, full chain, pilots), then the input-move cutoff over
//! the survivors, drops the temporarily-skipped ones, weighs the rest ([`weight`]), applies the
//! final rules (lock, non-local data, caps, express network threshold, bootstrap, `MIN_WEIGHT`,
//! negative T1 weight) and keeps the top [`MAX_SITE_CANDIDATES`] by weight, bootstrap PQs first.
//! No candidate → [`Outcome::Pending`] for an hour (seed: "the task is pending for 1 hour").
//! Every PQ that is not a candidate is in [`BrokerageResult::skipped`] with the filter, PanDA's
//! message and whether it was temporary. [`pick::SitePicker`] then chooses a PQ per job bunch.
//!
//! Zero share comes from the PQ's `fairsharepolicy`, parsed once ([`fairshare_policy`]).
//! The SW/HW (release, container, CPU/GPU) check is `panda::arch`'s: the caller passes its
//! verdict per PQ ([`BrokerQueue::software_ok`], [`BrokerQueue::arch_preference_weight`]).
//! The network weight and link check are [`crate::panda::network`]'s, read through
//! [`JobBrokerParams::network`].
//!
//! # Variants ([`JobBrokerVariant`]; `Seed` is the default)
//!
//! | rule | `Seed` (seed 004) | `PandaServer` (1.0.4 code) |
//! |---|---|---|
//! | candidates | no PQ with `test` in its name | all production PQs |
//! | status | `online` | `online` or `standby` |
//! | express (`isExpress`) | processingType contains `urgent`, or prio ≥ 1000 | `== "urgent"`, or prio > 1000 |
//! | memory (MB units) | `(base + ram) × 0.9` | `ram × 0.9` (base only per core) |
//! | scratch disk | input + max(1.5 GB, out) + max(300 MB, work) ≤ maxwdir / coreCount | input + max(out, 1.5 GB) + work + 300 MB ≤ maxwdir × task_cc/site_cc |
//! | scouts / undefined walltime | `maxtime` ≥ 24 h | `(maxtime − base) × cc × corepower × eff` ≥ 24 h × 10 HS06 × cc |
//! | `numSlots` = 0 / > 0 | running = max(R, starting) / max(R, numSlots) | R + starting / max(int(numSlots/cc), R) |
//! | manyAssigned ⚠ | clamp(assigned/activated, 1, 2) | clamp((assigned+1)/(activated+1), 1, 2) |
//! | caps ⚠ | activated+starting > 2·running; defined+activated+assigned+starting > 2·running | queued > max(NQUEUELIMITSITE, 2·running) (`-cap`), per resource type (`-cap_rt`) |
//!
//! The link check and the network weight follow their own variant,
//! [`crate::panda::network::NetworkVariant`] (`JobBrokerParams::network_variant`, a scenario's
//! `panda.variants.network`): Mbps of 1 h, else 1 d, else 1 w, and a link skipped over
//! `NQUEUED_SAT_CAP` (seed) against the code's 1 w ← 1 d ← 1 h chain and skip at the cap.
//!
//! Where the seed is silent the code is followed in both (bootstrap of empty PQs, `MIN_WEIGHT`,
//! T1 weight, temporary skips, the input-move fallbacks, the weight-0-first ordering).
//!
//! Left out: the dataset-completeness step (a task-level error before any PQ filter), UCORE
//! pseudo-queue expansion (each PQ is brokered as itself), jumbo-job candidate lists, dynamic
//! numbers of events (`minGranularity`), pre-merge pre-assignment timeouts (the caller decides
//! the candidate list). PanDA iterates a Python `set` after several filters, so its candidate
//! order (and the order of equal weights) is hash-dependent; here the caller's order is kept.

pub mod fairshare_policy;
pub mod filters;
pub mod input_move;
pub mod inputs;
pub mod params;
pub mod pick;
pub mod reasons;
pub mod weight;

pub use fairshare_policy::{FairsharePolicy, FairshareWarning, ShareDecision, ShareTask};
pub use inputs::*;
pub use params::{GDPCONFIG_KEYS, JobBrokerParams, JobBrokerVariant, validate};
pub use pick::{Pick, PickKind, SiteCandidate, SitePicker};
pub use reasons::{Skip, SkipReason, Stage, TextKey, py_float};
pub use weight::{RunningSource, WeightTerms};

use filters::{ChainResult, Ctx};
use weight::FinalRule;

/// `maxSiteCandidates` for WORLD: candidates kept.
pub const MAX_SITE_CANDIDATES: usize = 10;
/// Seed: "If all queues are skipped, the task is pending for 1 hour."
pub const PENDING_RETRY_S: u64 = 3600;

/// A chosen PQ with its weight and everything that entered it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Index into the queue slice.
    pub queue: usize,
    /// The brokerage weight (0 for a PQ being bootstrapped).
    pub weight: f64,
    pub terms: WeightTerms,
    /// `nQueuedJobs` of the site candidate (for [`SitePicker`]).
    pub n_queued_jobs: u64,
    /// `nRunningJobsCap` (`None` for express tasks).
    pub n_running_jobs_cap: Option<u64>,
    /// Accepted to bootstrap an empty PQ (weight forced to 0, placed first).
    pub bootstrap: bool,
}

/// What brokerage decided for the task.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Up to [`MAX_SITE_CANDIDATES`], bootstrap PQs first, then by weight descending.
    Candidates(Vec<Candidate>),
    /// No candidate: retry after `retry_after_s`.
    Pending { retry_after_s: u64 },
}

/// The result of one brokerage.
#[derive(Debug, Clone, PartialEq)]
pub struct BrokerageResult {
    pub outcome: Outcome,
    /// Every PQ that is not a candidate, in the order decided.
    pub skipped: Vec<Skip>,
    /// `t1Weight` used for nucleus PQs.
    pub t1_weight: i64,
    /// The input-move cutoff applied but no PQ passed it, so it was disabled.
    pub io_check_disabled: bool,
}

impl BrokerageResult {
    /// The candidates (empty when pending).
    pub fn candidates(&self) -> &[Candidate] {
        match &self.outcome {
            Outcome::Candidates(c) => c,
            Outcome::Pending { .. } => &[],
        }
    }

    /// Why PQ `queue` is not a candidate (`None` if it is one, or unknown).
    pub fn why(&self, queue: usize) -> Option<&Skip> {
        self.skipped.iter().find(|s| s.queue == queue)
    }
}

fn skip(queues: &[BrokerQueue], queue: usize, stage: Stage, reason: SkipReason, temporary: bool) -> Skip {
    let name = queues.get(queue).map(|q| q.name.clone()).unwrap_or_default();
    Skip { queue, name, stage, reason, temporary }
}

/// Production job brokerage of `task` over `queues` (module doc). Never panics.
pub fn broker(task: &BrokerTask, queues: &[BrokerQueue], params: &JobBrokerParams) -> BrokerageResult {
    let c = Ctx::new(task, params);
    let mut skipped = Vec::new();
    // 1. Per-PQ filters.
    let mut survivors: Vec<(usize, Option<(Stage, SkipReason)>)> = Vec::with_capacity(queues.len());
    for (i, q) in queues.iter().enumerate() {
        match filters::run_chain(&c, q) {
            ChainResult::Rejected(stage, r) => skipped.push(skip(queues, i, stage, r, false)),
            ChainResult::Survived(temp) => survivors.push((i, temp)),
        }
    }
    // 2. Input-move cutoff over the survivors (temporary ones included).
    let listed: Vec<&BrokerQueue> = survivors.iter().filter_map(|(i, _)| queues.get(*i)).collect();
    let io = input_move::io_cutoff(&c, &listed);
    let io_check_disabled = io.is_none() && input_move::applies(&c) && !listed.is_empty();
    if let Some(verdicts) = io {
        let mut kept = Vec::with_capacity(survivors.len());
        for ((i, temp), v) in survivors.into_iter().zip(verdicts) {
            match v {
                Some(r) => skipped.push(skip(queues, i, Stage::Io, r, false)),
                None => kept.push((i, temp)),
            }
        }
        survivors = kept;
    }
    // 3. Temporary problems.
    let mut ok = Vec::with_capacity(survivors.len());
    for (i, temp) in survivors {
        match temp {
            Some((stage, r)) => skipped.push(skip(queues, i, stage, r, true)),
            None => ok.push(i),
        }
    }
    // 4. Weights and final rules.
    let cutoff = c.params.nqueuelimitsite(task.gshare.as_deref());
    let min_weight = c.params.min_weight(&task.prod_source_label, task.gshare.as_deref());
    let mut primary: Vec<(Candidate, SkipReason)> = Vec::new();
    let mut secondary: Vec<(usize, SkipReason)> = Vec::new();
    let mut largest_run: Option<u64> = None;
    for i in ok {
        let Some(q) = queues.get(i) else { continue };
        let terms = weight::weight_terms(&c, q);
        if !terms.weight.is_finite() {
            let r = SkipReason::WeightNotComputable { weight: terms.weight, n_files_to_move: terms.n_files_to_move };
            skipped.push(skip(queues, i, Stage::Final, r, true));
            continue;
        }
        let (n_queued_jobs, n_running_jobs_cap) = weight::queue_and_cap(&c, q, &terms, cutoff);
        let mut cand =
            Candidate { queue: i, weight: terms.weight, terms, n_queued_jobs, n_running_jobs_cap, bootstrap: false };
        match weight::final_rule(&c, q, &cand.terms, cutoff, (&min_weight.param, min_weight.value)) {
            FinalRule::Reject(r) => secondary.push((i, r)),
            FinalRule::Accept { low } => primary.push((cand, low)),
            FinalRule::Bootstrap { low } => {
                cand.weight = 0.0;
                cand.bootstrap = true;
                primary.push((cand, low));
            }
            FinalRule::T1Candidate { n_running_all, low } => {
                if largest_run.is_none_or(|l| l < n_running_all) {
                    largest_run = Some(n_running_all);
                    secondary.extend(primary.drain(..).map(|(c, low)| (c.queue, low)));
                    primary.push((cand, low));
                } else {
                    secondary.push((i, low));
                }
            }
        }
    }
    for (i, r) in secondary {
        skipped.push(skip(queues, i, Stage::Final, r, false));
    }
    // 5. Weight order, weight 0 (bootstrap) first, equal weights in brokerage order; top 10.
    // A stable sort on a key computed once per candidate, which then moves each (large)
    // element once: the comparison sort moved them at every merge.
    primary.sort_by_cached_key(|(c, _)| (c.weight != 0.0, std::cmp::Reverse(total_order_key(c.weight))));
    let mut chosen = Vec::with_capacity(primary.len().min(MAX_SITE_CANDIDATES));
    for (cand, low) in primary {
        if chosen.len() < MAX_SITE_CANDIDATES {
            chosen.push(cand);
        } else {
            skipped.push(skip(queues, cand.queue, Stage::Final, low, false));
        }
    }
    let outcome = if chosen.is_empty() {
        Outcome::Pending { retry_after_s: PENDING_RETRY_S }
    } else {
        Outcome::Candidates(chosen)
    };
    BrokerageResult { outcome, skipped, t1_weight: c.t1_weight, io_check_disabled }
}

/// `f64::total_cmp`'s order as an integer: `total_order_key(a).cmp(&total_order_key(b))` is
/// `a.total_cmp(&b)` (the key `total_cmp` itself compares: negative numbers' bits flipped
/// but the sign).
fn total_order_key(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    bits ^ ((((bits >> 63) as u64) >> 1) as i64)
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_filters;
