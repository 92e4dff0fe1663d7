//! Rules shared by the production and the analysis job brokers (AtlasProdJobBroker.py and
//! AtlasAnalJobBroker.py repeat them); each broker passes the gates that differ.

use std::collections::BTreeMap;

/// `nWorkersCutoff`: Harvester workers count as running up to 20.
pub const N_WORKERS_CUTOFF: u64 = 20;

/// Which rule set the running count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunningSource {
    /// The real number of running jobs (Rreal).
    Real,
    /// `min(nBatchJob, 20)` Harvester workers (bootstrap of a UPS queue).
    Workers,
    /// `numSlots > 0` (proactive assignment).
    NumSlots,
    /// `numSlots == 0`: starting jobs counted.
    Starting,
}

/// The counts of a PQ that enter its running count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunningInputs {
    /// Running jobs.
    pub running: u64,
    /// Harvester workers (`nBatchJob`), before the cutoff.
    pub workers: u64,
    pub n_pilot: u64,
    pub starting: u64,
    /// `numSlots` as the caller reads it (`None`: unset or ignored).
    pub num_slots: Option<u64>,
    /// CRIC core count (`None` or 0 reads as 1 where `numSlots` is divided).
    pub cores: Option<u32>,
}

/// The running count both brokers use: the workers bootstrap (`n_pilot > 0`, fewer than 20
/// running, more workers, and the caller's `may_bootstrap` gate), then `numSlots`: 0 →
/// `+ nStarting`, n → `max(int(n / coreCount), nRunning)`; with `seed_slots` (the seed page's
/// rule) 0 → `max(nRunning, nStarting)` and n → `max(nRunning, n)`.
pub fn running_count(c: &RunningInputs, may_bootstrap: bool, seed_slots: bool) -> (u64, RunningSource) {
    let mut n = c.running;
    let mut src = RunningSource::Real;
    let workers = c.workers.min(N_WORKERS_CUTOFF);
    if c.n_pilot > 0 && n < N_WORKERS_CUTOFF && workers > n && may_bootstrap {
        n = workers;
        src = RunningSource::Workers;
    }
    match c.num_slots {
        None => {}
        Some(0) => {
            if !seed_slots {
                n = n.saturating_add(c.starting);
                src = RunningSource::Starting;
            } else if c.starting > n {
                n = c.starting;
                src = RunningSource::Starting;
            }
        }
        Some(slots) => {
            let v = if seed_slots { slots } else { slots / u64::from(c.cores.filter(|&c| c > 0).unwrap_or(1)) };
            if v > n {
                n = v;
                src = RunningSource::NumSlots;
            }
        }
    }
    (n, src)
}

/// A PQ time limit in the job's units: `(limit − baseWalltime) × coreCount × corepower ×
/// cpuEfficiency/100`, truncated, with HS06 (`hs06 = Some((baseWalltime, cpuEfficiency))`);
/// `limit × coreCount` without. A core count of `None` or 0 leaves the time as is.
pub fn site_time(limit: f64, cores: Option<u32>, corepower: f64, hs06: Option<(f64, f64)>) -> f64 {
    let mut s = limit;
    if let Some((base, _)) = hs06 {
        s -= base;
    }
    if s != 0.0 {
        if let Some(c) = cores.filter(|&c| c > 0) {
            s *= c as f64;
        }
    }
    if let Some((_, efficiency)) = hs06 {
        if s != 0.0 {
            s *= corepower;
        }
        s = (s * efficiency / 100.0).trunc();
    }
    s
}

/// `MIN_WEIGHT_<label>_<gshare>`, else `MIN_WEIGHT_<label>`, else 0: the key that matched
/// (`<label>` when none did) and the value, a non-finite one reading as 0 (off).
pub fn min_weight(map: &BTreeMap<String, f64>, prod_source_label: &str, gshare: &str) -> (String, f64) {
    let specific = format!("{prod_source_label}_{gshare}");
    let (key, value) = match map.get(&specific) {
        Some(&v) => (specific, v),
        None => (prod_source_label.to_string(), map.get(prod_source_label).copied().unwrap_or(0.0)),
    };
    (key, if value.is_finite() { value } else { 0.0 })
}
