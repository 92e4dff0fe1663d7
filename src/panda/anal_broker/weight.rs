//! Brokerage weights of analysis PQs (seed 004, "Original basic weight" and "New basic
//! weight"; reference §4 "Weights", `AtlasAnalJobBroker.py` L1841-2247).
//!
//! ```text
//! nRunning ← min(20, Harvester running+submitted workers) if pilots > 0, nRunning < 20, workers > nRunning
//! numSlots: unset → as is; 0 → nRunning += nStarting; n → max(int(n / cores), nRunning)
//! original = (nRunning + 1) / (nActivated + nAssigned + nDefined + nStarting + 1)
//! new      = W_s · W_q + 2⁻²⁰, from rem_q = max(max_q_len − nQ_pq_user, 0) of the stabilizer,
//!            R[c] = Σ rem_q and N[c] = #PQs of site class c, R = Σ rem_q, n = #PQs, Nj = jobs to submit
//!   W_s (User/Express Analysis): W[c] = 0.001 for every class, Nrem = min(Nj, R), then by task class
//!      C: W[lo] = Nrem
//!      B: W[mid] = min(Nrem, R[mid]); W[lo] = Nrem − W[mid]; if W[mid] > 0: W[mid] −= 0.1, W[lo] += 0.1
//!      A, S, unknown: W[hi] = min(Nrem, R[hi]); W[mid] = min(rest, R[mid]); W[lo] = rest;
//!                     if W[hi] > 0: W[hi] −= 0.052, W[mid] += 0.05, W[lo] += 0.002
//!   W_s (other gshares) = Nj
//!   W_q (UA/EA) = max(rem_q − W[c]/N[c], 0.001·W[c]) / (R[c] − W[c])   if R[c] − W[c] > 0 and not merging
//!               = rem_q / R[c] if R[c] > 0, else 1 / N[c]
//!   W_q (other) = max(rem_q − Nj/n, 0.001·Nj) / (R − Nj), same fallbacks with R and n
//! data factor: with locality ×Σ_datasets(1 disk, 0.001 tape); without (or union) ×(1 + localDiskGB/10)
//! ```
//! The seed's table (`N_j` for the task class's own site class, small ε₁ > ε₂ elsewhere) is
//! this waterfall with `Nj ≤ R[class]`; its `W_q` is the "other gshares" formula.

use super::classify::SiteClass;
use super::input::{AnalQueue, QueueStats};
use super::params::AnalBrokerParams;
use super::stabilizer::queue_limits;
use super::throttle::{EXPRESS_ANALYSIS, TaskClass, USER_ANALYSIS};
use crate::panda::common::{RunningInputs, running_count};

/// `nWorkersCutoff` (L1859): workers count for bootstrapping up to this many.
pub use crate::panda::common::N_WORKERS_CUTOFF;
/// `weight_epsilon_init`, `_hi_mid`, `_hi_lo`, `_mid_lo` (L2003-2006).
pub const EPS_INIT: f64 = 0.001;
pub const EPS_HI_MID: f64 = 0.05;
pub const EPS_HI_LO: f64 = 0.002;
pub const EPS_MID_LO: f64 = 0.1;
/// Added to every new weight (`2**-20`).
pub const WEIGHT_FLOOR: f64 = 1.0 / 1_048_576.0;
/// Bytes per GB in the data factor (integer GB, `// 1024**3`) and its divisor `diskNorm`.
pub const GIB: u64 = 1024 * 1024 * 1024;
pub const DISK_NORM: f64 = 10.0;

/// `nRunning` as the weight uses it: bootstrapped by Harvester workers, then `numSlots`.
/// A PQ without cores in CRIC reads as 1 core (PanDA would raise on `numSlots / None`).
pub fn effective_running(q: &AnalQueue, s: &QueueStats) -> u64 {
    let inputs = RunningInputs {
        running: s.n_running,
        workers: s.n_workers.unwrap_or(0),
        n_pilot: s.n_pilot,
        starting: s.n_starting,
        num_slots: q.num_standby,
        cores: q.core_count,
    };
    running_count(&inputs, true, false).0
}

/// The original basic weight `(nRunning + 1) / (nActivated + nAssigned + nDefined + nStarting + 1)`.
pub fn original_weight(n_running: u64, s: &QueueStats) -> f64 {
    (n_running as f64 + 1.0) / (super::stabilizer::n_queue(s) as f64 + 1.0)
}

fn idx(c: SiteClass) -> usize {
    match c {
        SiteClass::Hi => 0,
        SiteClass::Mid => 1,
        SiteClass::Lo => 2,
    }
}

/// `W_s` per site class `[hi, mid, lo]` for a User/Express Analysis task of `class` (`None` =
/// A), `nj` jobs, remaining queue lengths `rem = [R_hi, R_mid, R_lo]`.
pub fn main_weights(class: Option<TaskClass>, nj: f64, rem: [f64; 3]) -> [f64; 3] {
    let mut w = [EPS_INIT; 3];
    let mut left = nj.min(rem.iter().sum());
    match class {
        Some(TaskClass::C) => w[2] = left,
        Some(TaskClass::B) => {
            w[1] = left.min(rem[1]);
            left -= w[1];
            w[2] = left;
            if w[1] > 0.0 {
                w[1] -= EPS_MID_LO;
                w[2] += EPS_MID_LO;
            }
        }
        _ => {
            w[0] = left.min(rem[0]);
            left -= w[0];
            w[1] = left.min(rem[1]);
            left -= w[1];
            w[2] = left;
            if w[0] > 0.0 {
                w[0] -= EPS_HI_MID + EPS_HI_LO;
                w[1] += EPS_HI_MID;
                w[2] += EPS_HI_LO;
            }
        }
    }
    w
}

/// One PQ's part of the new weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewWeight {
    pub site_class: SiteClass,
    pub max_q_len: f64,
    pub rem_q: f64,
    /// `W_s` (`nbw_main`).
    pub main: f64,
    /// `W_q` (`nbw_sec`).
    pub secondary: f64,
    /// `W_s · W_q + 2⁻²⁰`.
    pub weight: f64,
}

/// The new basic weight of every PQ of `cands` (same order). `stats(q)` and `queue(q)` give a
/// candidate's inputs.
pub fn new_weights(
    p: &AnalBrokerParams,
    gshare: &str,
    class: Option<TaskClass>,
    n_jobs: u64,
    is_merging: bool,
    rows: &[QueueStats],
) -> Vec<NewWeight> {
    let n = rows.len() as f64;
    let classes: Vec<SiteClass> = rows.iter().map(|s| s.site_class.unwrap_or_default()).collect();
    let rem: Vec<(f64, f64)> = rows
        .iter()
        .map(|s| {
            let l = queue_limits(p, s);
            (l.max_q_len, l.rem_q())
        })
        .collect();
    let (mut r_c, mut n_c) = ([0.0; 3], [0.0; 3]);
    for (c, (_, r)) in classes.iter().zip(&rem) {
        r_c[idx(*c)] += r;
        n_c[idx(*c)] += 1.0;
    }
    let r_total: f64 = rem.iter().map(|x| x.1).sum();
    let nj = n_jobs as f64;
    let by_class = gshare == USER_ANALYSIS || gshare == EXPRESS_ANALYSIS;
    let w_s = main_weights(class, nj, r_c);
    classes
        .iter()
        .zip(&rem)
        .map(|(&c, &(max_q_len, rem_q))| {
            let i = idx(c);
            let (main, pool, count) = if by_class { (w_s[i], r_c[i], n_c[i]) } else { (nj, r_total, n) };
            let numer = (rem_q - main / count).max(main * 0.001);
            let reduced = pool - main;
            let secondary = if reduced > 0.0 && !is_merging {
                numer / reduced
            } else if pool > 0.0 {
                rem_q / pool
            } else {
                1.0 / count
            };
            NewWeight { site_class: c, max_q_len, rem_q, main, secondary, weight: main * secondary + WEIGHT_FLOOR }
        })
        .collect()
}

/// Data factor without locality (or with union locality): `1 + localDiskGB / 10` when the
/// chunk's input is at least 1 GB (both sizes in whole GB, as `// 1024**3`).
pub fn data_factor_without_locality(total_input_bytes: u64, local_disk_bytes: u64) -> f64 {
    if total_input_bytes / GIB > 0 { 1.0 + (local_disk_bytes / GIB) as f64 / DISK_NORM } else { 1.0 }
}
