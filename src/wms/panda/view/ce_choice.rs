//! Which CE a Harvester pilot goes to: the HTCondor submitter's CE weighting in "CRIC Grid CE"
//! mode (HSF/harvester `htcondor_submitter.py` `submit_workers`, `submitter_common.py`
//! `get_ce_weighting` / `choose_ce`; the statistics of `db_proxy.py` `get_worker_ce_stats` and
//! `get_worker_ce_backend_throughput`).
//!
//! Harvester computes the weights once per `submit_workers` call (one call per resource-type row
//! of the cycle) and then draws **one CE per worker at random** with those weights:
//!
//! ```text
//! N = #CEs, Q = nQueueLimitWorker, n = workers of this call
//! thruput(ce)  = log1p(hist_submitted + hist_running + hist_finished) − log1p(hist_submitted)
//! thruput_avg  = the same over the sums of every CE
//! adj(ce)      = thruput(ce) / thruput_avg + 1/N          (1/N when thruput_avg = 0)
//! target_Q     = Q + n        (slave queue: min(Σ submitted, Q) + n)
//! w0(ce)       = 0                                      if the CE has workers and submitted > Q
//!              = max(target_Q · adj(ce)/Σadj − submitted, 2⁻¹⁰), ÷ (1 + log1p(submitted)²) if running = 0
//! w(ce)        = w0(ce) · 1000·N / Σ w0                 (regulator 1 when Σ w0 = 0)
//! choose_ce:   r = random() · 1000·N; walk the CEs in order skipping w = 0, first with Σw ≥ r;
//!              else the last positive one; none → the worker is not submitted
//! ```
//!
//! This module keeps the randomness (it takes an `&mut impl Rng`): a round-robin or a "most
//! free slots" rule would change which CE saturates first and how pilots spread when one CE
//! stops running them (the `running = 0` penalty), which is what an operator tuning
//! `nQueueLimitWorker` looks at. The draw is reproducible from the simulation's seeded stream.

use rand::Rng;

use crate::engine::dist;

/// `multiplier` of `get_ce_weighting`: the total score is this × the number of CEs.
pub const CE_WEIGHT_MULTIPLIER: f64 = 1000.0;
/// `time_window` of `get_ce_statistics` (s): the history window of the throughput counts.
pub const CE_HISTORY_WINDOW_S: u64 = 21_600;
/// The floor of an initial weight (`2**-10`).
pub const CE_WEIGHT_FLOOR: f64 = 1.0 / 1024.0;

/// The worker statistics of one PQ at one of its CEs, as the submitter reads them. The caller
/// (the Harvester model) counts its own workers of this PQ.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CeWorkerStats {
    /// `get_worker_ce_stats`: workers of the PQ at the CE now in status `submitted`.
    pub submitted: u64,
    /// `get_worker_ce_stats`: workers of the PQ at the CE now `running`.
    pub running: u64,
    /// `get_worker_ce_backend_throughput` (window [`CE_HISTORY_WINDOW_S`]): workers created more
    /// than 3 h ago whose start time is unset or within the last 6 h, counted by their current
    /// status `submitted` …
    pub hist_submitted: u64,
    /// … `running` …
    pub hist_running: u64,
    /// … and `finished`.
    pub hist_finished: u64,
}

impl CeWorkerStats {
    /// The CE appears in `worker_ce_stats_dict` (the SQL returns a row only for a CE with a
    /// running or submitted worker).
    fn listed(&self) -> bool {
        self.submitted > 0 || self.running > 0
    }

    fn thruput(&self) -> f64 {
        let init = self.hist_submitted.saturating_add(self.hist_running).saturating_add(self.hist_finished);
        (init as f64).ln_1p() - (self.hist_submitted as f64).ln_1p()
    }
}

/// What `get_ce_weighting` returns: the total score, the weight of each CE (same order as the
/// statistics) and `target_Q`.
#[derive(Debug, Clone, PartialEq)]
pub struct CeWeighting {
    pub total_score: f64,
    pub weights: Vec<f64>,
    pub target_q: f64,
}

/// `get_ce_weighting` over the CEs of one PQ (module doc). `n_queue_limit_worker` is the
/// `nQueueLimitWorker` of `get_worker_limits` ([`crate::panda::harvester::SiteDecision`]'s
/// `limits`), `n_new_workers` the workers of this call, `slave` the queue's `runMode`.
pub fn ce_weighting(
    stats: &[CeWorkerStats],
    n_queue_limit_worker: i64,
    n_new_workers: u64,
    slave: bool,
) -> CeWeighting {
    let n = stats.len() as f64;
    let q_limit = n_queue_limit_worker as f64;
    let (init_all, fin_all) = stats.iter().fold((0u64, 0u64), |(i, f), s| {
        let init = s.hist_submitted.saturating_add(s.hist_running).saturating_add(s.hist_finished);
        (i.saturating_add(init), f.saturating_add(s.hist_submitted))
    });
    let thruput_avg = (init_all as f64).ln_1p() - (fin_all as f64).ln_1p();
    let mut target_q = q_limit + n_new_workers as f64;
    if slave {
        let total_q: f64 = stats.iter().filter(|s| s.listed()).map(|s| s.submitted as f64).sum();
        target_q = total_q.min(q_limit) + n_new_workers as f64;
    }
    // thruput_avg = 0 means no CE has a started worker in the window, so every thruput is 0 too
    // (the code's ZeroDivisionError branch that re-raises is unreachable).
    let adj = |s: &CeWorkerStats| if thruput_avg == 0.0 { 1.0 / n } else { s.thruput() / thruput_avg + 1.0 / n };
    let base_sum: f64 = stats.iter().map(adj).sum();
    let init: Vec<f64> = stats
        .iter()
        .map(|s| {
            let (q, r) = (s.submitted as f64, s.running as f64);
            if s.listed() && q > q_limit {
                return 0.0;
            }
            let expected = target_q * adj(s) / base_sum;
            let mut w = (expected - q).max(CE_WEIGHT_FLOOR);
            if r == 0.0 {
                w /= 1.0 + q.ln_1p().powi(2);
            }
            w
        })
        .collect();
    let sum: f64 = init.iter().sum();
    let total_score = CE_WEIGHT_MULTIPLIER * n;
    let regulator = if sum == 0.0 { 1.0 } else { total_score / sum };
    CeWeighting { total_score, weights: init.into_iter().map(|w| w * regulator).collect(), target_q }
}

/// `choose_ce`: the index of the CE one worker goes to, `None` when no CE has a positive weight
/// (Harvester then does not submit the worker).
pub fn choose_ce<R: Rng + ?Sized>(w: &CeWeighting, rng: &mut R) -> Option<usize> {
    let lucky = dist::uniform01(rng) * w.total_score;
    let mut cur = 0.0;
    let mut last = None;
    for (i, &x) in w.weights.iter().enumerate() {
        if x == 0.0 {
            continue;
        }
        last = Some(i);
        cur += x;
        if cur >= lucky {
            return Some(i);
        }
    }
    last.filter(|&i| w.weights.get(i).is_some_and(|&x| x > 0.0))
}
