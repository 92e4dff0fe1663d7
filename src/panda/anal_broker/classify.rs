//! Site and task classification for analysis (reference §4 "Site & task classification";
//! seed 004 points to the "Site & Task Classification" page, which it does not contain, so the
//! 1.0.4 daemons are the model here).
//!
//! **Sites** (`metric_collector.analy_site_eval`, L573-684), from the wait-time statistics of
//! `analy_pmerge_jobs_wait_time` (pmerge + HammerCloud jobs of the last 4 days, each weighted
//! `2^(−run_age / 12 h)`):
//!
//! ```text
//! rank = max(w_cl95upp, long_q_mean)                 (sites with either unknown are not classified)
//! P33, P67 = numpy nanquantile(rank over GRID sites, 0.333 / 0.667)   (linear interpolation)
//! hi  (1)  if (rank ≤ max(P33, 3600 s) or (w_cl95upp ≤ max(P33, 3600 s) and long_q_n ≤ 3))
//!             and the 1-day slot-to-running rate > 0
//! lo (−1)  elif rank > max(P67, 10800 s)
//! mid (0)  else
//! ```
//! With no GRID site, numpy's quantile is NaN and Python's `max(nan, 3600)` is NaN: every
//! comparison is false, every site is mid.
//!
//! **Users** (`analy_user_eval`, L782-860): running slots on GRID hi-sites (`A`) and mid-sites
//! (`B`) of the User/Express Analysis shares: `rem_slots_A = max(THR_A − slots_A, 0)`,
//! `rem_slots_B = max(THR_B − slots_A − slots_B, 0)`.
//!
//! **Tasks** (`task_evaluator.analy_task_eval`, L243-327): Express Analysis → S; a user without
//! evaluation → not evaluated; else A, B if `rem_slots_A ≤ 0`, C if also `rem_slots_B ≤ 0`;
//! an A task ≥ `PROGRESS_TO_BOOST_A` % of files finished with `0 < remaining jobs ≤
//! MAX_REM_JOBS_TO_BOOST_A` → S, a B task likewise with the `_B` keys → S.
//!
//! Not modelled: the weighted mean / Student-t 95 % upper bound of the wait times themselves
//! (the caller passes `w_cl95upp` and `long_q_*` as the metric stores them).

use serde::{Deserialize, Serialize};

use super::params::AnalBrokerParams;
use super::throttle::{TaskClass, UserEval};

/// Site class (`class` of metric `analy_site_eval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub enum SiteClass {
    /// −1: slow.
    Lo,
    /// 0: the broker's default for an unclassified PQ.
    #[default]
    Mid,
    /// 1: fast.
    Hi,
}

impl SiteClass {
    /// PanDA's integer value.
    pub fn value(self) -> i8 {
        match self {
            SiteClass::Lo => -1,
            SiteClass::Mid => 0,
            SiteClass::Hi => 1,
        }
    }
}

/// The hard-coded thresholds of `analy_site_eval` (not gdpconfig keys).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SiteClassParams {
    /// Quantile of the fast third: 0.333.
    pub hi_quantile: f64,
    /// Quantile of the slow third: 0.667.
    pub lo_quantile: f64,
    /// Floor of the hi threshold: 3600 s.
    pub hi_min_wait_s: f64,
    /// Floor of the lo threshold: 10800 s.
    pub lo_min_wait_s: f64,
    /// `long_q_n ≤ 3` lets a site with a good `w_cl95upp` be hi despite a long queue mean.
    pub hi_max_long_queued: f64,
}

impl Default for SiteClassParams {
    fn default() -> Self {
        Self {
            hi_quantile: 0.333,
            lo_quantile: 0.667,
            hi_min_wait_s: 3600.0,
            lo_min_wait_s: 10800.0,
            hi_max_long_queued: 3.0,
        }
    }
}

/// A site's line of `analy_pmerge_jobs_wait_time` plus what `analy_site_eval` adds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SiteWaitStats {
    /// Weighted 95 % upper bound of the wait (s); `None` (or NaN) = unknown.
    pub w_cl95upp: Option<f64>,
    /// Mean age (s) of the pmerge jobs queued longer than the weighted mean; `None` = unknown.
    pub long_q_mean: Option<f64>,
    /// How many such jobs.
    pub long_q_n: f64,
    /// Slot-to-running rate over the last day.
    pub strr_1d: f64,
    /// CRIC `resource_type == "GRID"`: only these define the quantiles.
    pub grid: bool,
}

impl SiteWaitStats {
    /// `max(w_cl95upp, long_q_mean)`, `None` when either is unknown.
    pub fn rank(&self) -> Option<f64> {
        let known = |x: Option<f64>| x.filter(|v| !v.is_nan());
        Some(known(self.w_cl95upp)?.max(known(self.long_q_mean)?))
    }
}

/// numpy `nanquantile(values, q)` with the default linear method (NaNs dropped; `None` when
/// nothing is left, numpy's NaN). `q` is clamped to `[0, 1]`.
pub fn nanquantile(values: &[f64], q: f64) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() || q.is_nan() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let t = pos - lo as f64;
    let a = *v.get(lo)?;
    let b = *v.get(lo + 1).unwrap_or(&a);
    // numpy `_lerp`: a + (b−a)·t, computed from b when t ≥ 0.5.
    let d = b - a;
    Some(if t >= 0.5 { b - d * (1.0 - t) } else { a + d * t })
}

/// Python's `max(x, floor)` with `x` possibly NaN (`None`): NaN stays NaN.
fn py_max(x: Option<f64>, floor: f64) -> Option<f64> {
    x.map(|v| if floor > v { floor } else { v })
}

/// The class of one site given the two quantiles (`None` = NaN). `None` when the site's rank
/// is unknown (the daemon skips it; the broker then reads it as mid).
pub fn classify_site(s: &SiteWaitStats, p33: Option<f64>, p67: Option<f64>, p: &SiteClassParams) -> Option<SiteClass> {
    let rank = s.rank()?;
    let w = s.w_cl95upp?;
    let hi_thr = py_max(p33, p.hi_min_wait_s);
    let lo_thr = py_max(p67, p.lo_min_wait_s);
    let le = |x: f64, t: Option<f64>| t.is_some_and(|t| x <= t);
    let fast = le(rank, hi_thr) || (le(w, hi_thr) && s.long_q_n <= p.hi_max_long_queued);
    Some(if fast && s.strr_1d > 0.0 {
        SiteClass::Hi
    } else if lo_thr.is_some_and(|t| rank > t) {
        SiteClass::Lo
    } else {
        SiteClass::Mid
    })
}

/// Result of [`classify_sites`].
#[derive(Debug, Clone, PartialEq)]
pub struct SiteClassification {
    /// P33 and P67 of the GRID ranks (`None` = NaN).
    pub p33: Option<f64>,
    pub p67: Option<f64>,
    /// Per site, in input order; `None` = not classified.
    pub classes: Vec<Option<SiteClass>>,
}

/// `analy_site_eval` over all sites: quantiles over GRID sites with a known rank, then every
/// site with a known rank classified.
pub fn classify_sites(sites: &[SiteWaitStats], p: &SiteClassParams) -> SiteClassification {
    let ranks: Vec<f64> = sites.iter().filter(|s| s.grid).filter_map(SiteWaitStats::rank).collect();
    let (p33, p67) = (nanquantile(&ranks, p.hi_quantile), nanquantile(&ranks, p.lo_quantile));
    SiteClassification { p33, p67, classes: sites.iter().map(|s| classify_site(s, p33, p67, p)).collect() }
}

/// `analy_user_eval` for one user: running slots on GRID hi-sites and mid-sites.
pub fn user_eval(params: &AnalBrokerParams, run_slots_hi: f64, run_slots_mid: f64) -> UserEval {
    let p = params.sane();
    let clean = |x: f64| if x.is_finite() && x > 0.0 { x } else { 0.0 };
    let (a, b) = (clean(run_slots_hi), clean(run_slots_mid));
    UserEval {
        rem_slots_a: (p.user_usage_threshold_a - a).max(0.0),
        rem_slots_b: (p.user_usage_threshold_b - a - b).max(0.0),
    }
}

/// What `analy_task_eval` reads of a task (its master input datasets and jobs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskProgress {
    pub n_files_total: u64,
    pub n_files_finished: u64,
    pub n_files_failed: u64,
    /// Distinct PandaIDs that used the task's master input files.
    pub n_jobs: u64,
}

impl TaskProgress {
    /// `pct_finished` (0 without files).
    pub fn pct_finished(&self) -> f64 {
        if self.n_files_total == 0 { 0.0 } else { self.n_files_finished as f64 * 100.0 / self.n_files_total as f64 }
    }

    /// `n_jobs_remaining = int(n_jobs · n_files_remaining / n_files_total)`.
    pub fn n_jobs_remaining(&self) -> u64 {
        if self.n_files_total == 0 {
            return 0;
        }
        let remaining = self.n_files_total.saturating_sub(self.n_files_finished).saturating_sub(self.n_files_failed);
        (self.n_jobs as f64 * remaining as f64 / self.n_files_total as f64) as u64
    }
}

/// `analy_task_eval` for one task of gshare `gshare`; `None` when the task is not evaluated
/// (its user has no evaluation), which the broker reads as class A.
pub fn classify_task(
    params: &AnalBrokerParams,
    gshare: &str,
    user: Option<&UserEval>,
    progress: &TaskProgress,
) -> Option<TaskClass> {
    if gshare == super::throttle::EXPRESS_ANALYSIS {
        return Some(TaskClass::S);
    }
    let p = params.sane();
    let u = user?;
    let mut class = TaskClass::A;
    if u.rem_slots_a <= 0.0 {
        class = if u.rem_slots_b <= 0.0 { TaskClass::C } else { TaskClass::B };
    }
    let (pct, rem) = (progress.pct_finished(), progress.n_jobs_remaining() as f64);
    let boost = |progress_min: f64, rem_max: f64| pct >= progress_min && rem > 0.0 && rem <= rem_max;
    match class {
        TaskClass::A if boost(p.progress_to_boost_a, p.max_rem_jobs_to_boost_a) => Some(TaskClass::S),
        TaskClass::B if boost(p.progress_to_boost_b, p.max_rem_jobs_to_boost_b) => Some(TaskClass::S),
        c => Some(c),
    }
}
