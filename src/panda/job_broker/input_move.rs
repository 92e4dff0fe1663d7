//! The input-move cutoff (reference §2 filter 25, AtlasProdJobBroker.py L1614-1681; seed:
//! "If the task ioIntensity is larger than IO_INTENSITY_CUTOFF, the total size of missing files
//! must be less than SIZE_CUTOFF_TO_MOVE_INPUT and the number of missing files must be less than
//! NUM_CUTOFF_TO_MOVE_INPUT"). Unlike the other filters it looks at the whole list: PQs that pass
//! only when tape replicas count are used if no PQ passes on disk alone, and if none passes even
//! then, the check is disabled (code; the seed is silent).

use super::filters::Ctx;
use super::inputs::{BrokerQueue, PreAssignment};
use super::reasons::SkipReason;

const MB: f64 = 1024.0 * 1024.0;

/// Whether the cutoff applies to the task: not pre-assigned to a site, input, not merging,
/// `ioIntensity > IO_INTENSITY_CUTOFF`, not event service without cloning.
pub fn applies(c: &Ctx) -> bool {
    let t = c.task;
    t.pre_assigned != PreAssignment::Site
        && t.total_input_bytes > 0.0
        && !t.is_merging
        && t.io_intensity.is_some_and(|io| io > c.params.io_intensity_cutoff)
        && !t.es_without_cloning()
}

/// Input-move cutoff (L1614-1681) over the PQs that survived the chain: `None` when it does not
/// apply or is disabled (no PQ passes even with tape), else per PQ `None` (kept) or the reason.
pub fn io_cutoff(c: &Ctx, queues: &[&BrokerQueue]) -> Option<Vec<Option<SkipReason>>> {
    let t = c.task;
    let io = t.io_intensity?;
    let total = t.total_input_bytes;
    let cutoff = c.params.io_intensity_cutoff;
    if !applies(c) {
        return None;
    }
    let size_cut = c.params.size_cutoff_to_move_input;
    let num_cut = c.params.num_cutoff_to_move_input as i64;
    let mb = |local: f64| ((total - local) / MB).trunc() as i64;
    let files = |n: u64| t.total_input_files as i64 - n as i64;
    // (over even with tape, over on disk only)
    let class: Vec<(bool, bool, i64, i64)> = queues
        .iter()
        .map(|q| {
            let l = q.local_input;
            let (m, n) = (mb(l.disk_bytes), files(l.disk_files));
            let (mt, nt) = (mb(l.disk_or_tape_bytes), files(l.disk_or_tape_files));
            let over = |m: i64, n: i64| m as f64 > size_cut * 1024.0 || n > num_cut;
            (over(m.min(mt), n.min(nt)), over(m, n), m, n)
        })
        .collect();
    let n_ok = class.iter().filter(|(dt, wt, ..)| !dt && !wt).count();
    let n_wt = class.iter().filter(|(dt, wt, ..)| !dt && *wt).count();
    if n_ok + n_wt == 0 {
        return None;
    }
    let reason = |m: i64, n: i64, disk_only: bool| SkipReason::MissingInput {
        size_gb: (m as f64 / 1024.0).trunc() as i64,
        files: n,
        by_size: m as f64 > size_cut * 1024.0,
        disk_only,
        size_cutoff_gb: size_cut,
        files_cutoff: num_cut.max(0) as u64,
        io,
        io_cutoff: cutoff,
    };
    Some(
        class
            .into_iter()
            .map(|(dt, wt, m, n)| match (dt, wt) {
                (true, _) => Some(reason(m, n, false)),
                (false, true) if n_ok > 0 => Some(reason(m, n, true)),
                _ => None,
            })
            .collect(),
    )
}
