//! The nucleus weight, the weighted choice and the RW feedback (reference `panda.md` §1
//! "Weight (L540-585) and choice (L586-596)", L609-620; seed 004 weight formulas).
//!
//! ```text
//! code:  w = 1/RW if RW ≥ 50 (cutOffRW) else 1          seed: w = 1/max(rwOffset = 50, RW)
//! with data info kept and tot_size > 0:
//!     if ioIntensity is None or > MIN_IO_INTENSITY_WITH_LOCAL_DATA:  w *= ava_size_any / tot_size
//!     if ava_size_any > ava_size_disk:                              w *= tapeWeight = 0.001
//! with a free-space record (an endpoint with a non-zero total):
//!     w *= free / total;  w *= min(FREE_DISK_CUTOFF, ⌊free_for_cutoff / 1024⌋)   (TB)
//! ```
//!
//! Choice: `r = Σw × U` with `U` one [`uniform01`] draw (PanDA's `random.uniform(0, Σw)`), then
//! walk the candidates in order subtracting each weight; the first that brings `r` to `≤ 0` is
//! chosen, the last one if none does. So `U = 0` picks the first candidate (even of weight 0),
//! a boundary `r` = Σ of the first k weights picks candidate k, and weights all 0 pick the first.

use std::collections::BTreeMap;
use std::fmt;

use rand::Rng;

use super::data::Availability;
use super::filters::FreeSpace;
use super::report::{py_float, py_num};
use super::{CUT_OFF_RW, NEG_WEIGHT_TAPE, TaskBrokerVariant, TaskBrokerageParams};
use crate::engine::dist::uniform01;

/// The data part of a weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DataFactor {
    pub ava_size_any: u64,
    pub tot_size: u64,
    /// `ava_size_any / tot_size` was applied (high or unknown IO intensity).
    pub size_applied: bool,
    /// Some input only on tape: × 0.001.
    pub tape: bool,
}

/// A weighted candidate with the pieces of its weight; `Display` is PanDA's `criteria=+use` line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weighted<'a> {
    pub nucleus: usize,
    pub name: &'a str,
    pub weight: f64,
    /// `RW` at the task's priority (`prioRW[currentPriority][nucleus]`, 0 when absent).
    pub rw: f64,
    pub variant: TaskBrokerVariant,
    pub data: Option<DataFactor>,
    pub space: Option<FreeSpace>,
    /// `FREE_DISK_CUTOFF` as read.
    pub free_disk_cutoff: f64,
}

/// `w = 1/RW` when `RW ≥ cutOffRW` (code; RW 0 or missing gives 1), `1/max(50, RW)` (seed).
pub fn rw_factor(rw: f64, variant: TaskBrokerVariant) -> f64 {
    let rw = if rw.is_finite() { rw } else { 0.0 };
    match variant {
        TaskBrokerVariant::PandaServer if rw != 0.0 && rw >= CUT_OFF_RW => 1.0 / rw,
        TaskBrokerVariant::PandaServer => 1.0,
        TaskBrokerVariant::Seed => 1.0 / rw.max(CUT_OFF_RW),
    }
}

/// The data factor of a nucleus (`None` when `tot_size` is 0: no factor at all).
pub fn data_factor(av: &Availability, io_intensity: Option<f64>, p: &TaskBrokerageParams) -> Option<DataFactor> {
    (av.tot_size > 0).then(|| DataFactor {
        ava_size_any: av.ava_size_any,
        tot_size: av.tot_size,
        size_applied: io_intensity.is_none_or(|io| io > p.min_io_intensity_with_local_data),
        tape: av.ava_size_any > av.ava_size_disk,
    })
}

/// The weight of a nucleus (L546-583), multiplied in the code's order.
pub fn nucleus_weight(
    rw: f64,
    data: Option<DataFactor>,
    space: Option<FreeSpace>,
    free_disk_cutoff: f64,
    variant: TaskBrokerVariant,
) -> f64 {
    let mut w = rw_factor(rw, variant);
    if let Some(d) = data {
        if d.size_applied {
            w *= d.ava_size_any as f64;
            w /= d.tot_size as f64;
        }
        if d.tape {
            w *= NEG_WEIGHT_TAPE;
        }
    }
    if let Some(s) = space {
        w *= s.free_gb / s.total_gb;
        w *= free_disk_cutoff.min((s.cutoff_free_gb / 1024.0).floor());
    }
    w
}

impl fmt::Display for Weighted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::from("1");
        let rw = py_num(self.rw);
        let rw_divides = match self.variant {
            TaskBrokerVariant::PandaServer => self.rw != 0.0 && self.rw >= CUT_OFF_RW,
            TaskBrokerVariant::Seed => true,
        };
        match self.variant {
            TaskBrokerVariant::PandaServer if rw_divides => s += &format!("/( RW={rw} )"),
            TaskBrokerVariant::PandaServer => s += &format!("/(1 : RW={rw}<{})", py_num(CUT_OFF_RW)),
            TaskBrokerVariant::Seed => s += &format!("/max( rwOffset={}, RW={rw} )", py_num(CUT_OFF_RW)),
        }
        if let Some(d) = self.data {
            if d.size_applied {
                s += &format!("* ( available_input_size_DISKTAPE={} )", d.ava_size_any);
                s += &format!("/ ( total_input_size={} )", d.tot_size);
            }
            if d.tape {
                s += &format!("*( weight_TAPE={} )", py_float(NEG_WEIGHT_TAPE));
            }
        }
        if let Some(sp) = self.space {
            let tb = |gb: f64| py_num((gb / 1024.0).floor());
            s += &format!("*( free_space={} TB )/( total_space={} TB )", tb(sp.free_gb), tb(sp.total_gb));
            s += &format!(
                "*min( free_space={} TB, FREE_DISK_CUTOFF={} TB )",
                tb(sp.cutoff_free_gb),
                py_num(self.free_disk_cutoff)
            );
        }
        // Python keeps the integer 1 when no float factor touched it.
        let int_weight = !rw_divides && self.space.is_none() && self.data.is_none_or(|d| !d.size_applied && !d.tape);
        let w = if int_weight { py_num(self.weight) } else { py_float(self.weight) };
        write!(f, "  use nucleus={} weight={w} {s} criteria=+use", self.name)
    }
}

/// PanDA's cumulative walk for a given target `r` (L587-595): the first index where the
/// running `r − Σw ≤ 0`, else the last; `None` only for no candidates.
pub fn walk(weights: impl IntoIterator<Item = f64>, target: f64) -> Option<usize> {
    let mut r = target;
    let mut last = None;
    for (i, w) in weights.into_iter().enumerate() {
        r -= w;
        if r <= 0.0 {
            return Some(i);
        }
        last = Some(i);
    }
    last
}

/// The weighted choice: one draw `U` from `rng` (always exactly one, even for a single
/// candidate, as PanDA always calls `random.uniform`), `r = Σw × U`, then [`walk`]. Returns the
/// index and `r`; no draw and `None` for no candidates.
pub fn select_nucleus<R: Rng + ?Sized>(weights: &[f64], rng: &mut R) -> Option<(usize, f64)> {
    if weights.is_empty() {
        return None;
    }
    let total: f64 = weights.iter().fold(0.0, |acc, w| acc + w);
    let target = total * uniform01(rng);
    walk(weights.iter().copied(), target).map(|i| (i, target))
}

/// The RW table of one brokerage cycle: `prioRW[priority][nucleus]` (RW of the tasks of the
/// same work queue with `currentPriority ≥ priority`), built by the caller for the priorities
/// of the cycle's tasks.
pub type PrioRw = BTreeMap<i64, Vec<f64>>;

/// The live feedback after an assignment (L609-620): the task's RW is added to the chosen
/// nucleus in every map of priority ≤ the task's, so later tasks of the cycle see it. Each map
/// has one entry per nucleus (the caller builds them so); an index beyond a map is ignored, a
/// non-finite task RW adds nothing and a non-finite entry restarts from the task's RW.
pub fn record_assignment(table: &mut PrioRw, nucleus: usize, current_priority: i64, task_rw: f64) {
    let add = if task_rw.is_finite() { task_rw } else { 0.0 };
    for (_, map) in table.range_mut(..=current_priority) {
        if let Some(v) = map.get_mut(nucleus) {
            *v = if v.is_finite() { *v + add } else { add };
        }
    }
}
