//! Data lookup and data locality (reference `panda.md` §1 "Definitions" and filters 1 and 6;
//! `AtlasBrokerUtils.getNucleiWithData` L27-114, `AtlasProdTaskBroker.py` L243-287, L433-503;
//! seed 004 "Nuclei must pass the data locality check with the following rules").
//!
//! Per nucleus and input dataset, [`get_nuclei_with_data`] sums over the constituents of the
//! dataset what the nucleus' associated input endpoints hold: a complete disk replica ends the
//! endpoint loop (`break`), otherwise the best disk replica counts as disk and the best replica
//! of any kind (disk or tape) as "any". The totals are those of the first replica row with a
//! non-zero file count and are **overwritten** per constituent (the last one wins, a quirk of the
//! code), while availabilities are summed. The task broker then sums the figures over datasets.

use super::input::{DatasetKind, DdmEndpoint, InputDataset, NucleusSpec, TaskSpec};
use super::{GIB, TaskBrokerVariant, TaskBrokerageParams};
use crate::panda::task_broker::report::SkipReason;

/// One nucleus' data figures (`tot_num`, `tot_size`, `ava_num_disk`, `ava_num_any`,
/// `ava_size_disk`, `ava_size_any`); sizes in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Availability {
    pub tot_num: u64,
    pub tot_size: u64,
    pub ava_num_disk: u64,
    pub ava_num_any: u64,
    pub ava_size_disk: u64,
    pub ava_size_any: u64,
}

impl Availability {
    /// The task broker's per-key sum over datasets (L265-272).
    pub fn add(&mut self, o: &Availability) {
        self.tot_num = self.tot_num.saturating_add(o.tot_num);
        self.tot_size = self.tot_size.saturating_add(o.tot_size);
        self.ava_num_disk = self.ava_num_disk.saturating_add(o.ava_num_disk);
        self.ava_num_any = self.ava_num_any.saturating_add(o.ava_num_any);
        self.ava_size_disk = self.ava_size_disk.saturating_add(o.ava_size_disk);
        self.ava_size_any = self.ava_size_any.saturating_add(o.ava_size_any);
    }
}

/// Whether the lookup considers the dataset (L246-258): not pseudo, not a DB release, not a
/// `log` dataset, and the primary one when the task sets `taskBrokerOnMaster`.
pub fn is_considered(ds: &InputDataset, task: &TaskSpec) -> bool {
    ds.kind == DatasetKind::Regular && (ds.master || !task.task_broker_on_master)
}

/// `remote_source_available` of `getNucleiWithData`: some constituent has a replica with a
/// known, complete file count (`total == found`, `total ∉ {None, 0}`) at an endpoint readable
/// over WAN. Without one the task errors out for this cycle.
pub fn remote_source_available(ds: &InputDataset, endpoints: &[DdmEndpoint]) -> bool {
    ds.constituents.iter().flatten().any(|r| {
        r.total_files != 0
            && r.total_files == r.found_files
            && endpoints.get(r.endpoint).is_some_and(DdmEndpoint::is_readable_remotely)
    })
}

/// `getNucleiWithData` for one dataset and one nucleus (AtlasBrokerUtils.py L27-114).
pub fn get_nuclei_with_data(ds: &InputDataset, nucleus: &NucleusSpec, endpoints: &[DdmEndpoint]) -> Availability {
    let mut out = Availability::default();
    for replicas in &ds.constituents {
        let (mut tot_num, mut tot_size) = (0u64, 0u64);
        let (mut num_disk, mut num_any, mut size_disk, mut size_any) = (0u64, 0u64, 0u64, 0u64);
        for r in replicas {
            if tot_num == 0 {
                tot_num = r.total_files;
                tot_size = r.total_bytes;
            }
            if !nucleus.input_endpoints.contains(&r.endpoint) {
                continue;
            }
            let (n, s) = (r.found_files, r.available_bytes);
            if !endpoints.get(r.endpoint).is_some_and(|e| e.is_tape) {
                // complete replica at disk: take it and stop looking
                if tot_num == n && tot_num > 0 {
                    (num_disk, num_any, size_disk, size_any) = (n, n, s, s);
                    break;
                }
                if n > num_disk {
                    (num_disk, size_disk) = (n, s);
                }
            }
            if num_any < n {
                (num_any, size_any) = (n, s);
            }
        }
        // totals overwritten per constituent; availabilities summed
        out.tot_num = tot_num;
        out.tot_size = tot_size;
        out.ava_num_disk = out.ava_num_disk.saturating_add(num_disk);
        out.ava_num_any = out.ava_num_any.saturating_add(num_any);
        out.ava_size_disk = out.ava_size_disk.saturating_add(size_disk);
        out.ava_size_any = out.ava_size_any.saturating_add(size_any);
    }
    out
}

/// The per-nucleus data-locality rule (L443-476), `None` when the nucleus passes:
///
/// * data carousel (`inputPreStaging`) and `ava_num_any > 0` → pass;
/// * `tot_size > INPUT_SIZE_THRESHOLD` (GB → bytes) and too little of it local → `-insize`;
/// * the file-count rule → `-innum`;
///
/// "too little" is `ava < tot × fraction` in the code and, in the seed's words ("the fraction …
/// must be larger than"), `ava ≤ tot × fraction`. The file-count rule's gate is `tot_num >
/// INPUT_NUM_THRESHOLD` in the code; the seed gates it on "the total input size" (GB, as for the
/// size rule) being larger than `INPUT_NUM_THRESHOLD` (reference ⚠).
pub fn locality_skip(
    av: &Availability,
    task: &TaskSpec,
    p: &TaskBrokerageParams,
    variant: TaskBrokerVariant,
) -> Option<SkipReason<'static>> {
    if task.input_pre_staging && av.ava_num_any > 0 {
        return None;
    }
    let seed = variant == TaskBrokerVariant::Seed;
    let short = |ava: u64, tot: u64, frac: f64| {
        let need = tot as f64 * frac;
        if seed { ava as f64 <= need } else { (ava as f64) < need }
    };
    let size_fraction = p.input_size_fraction / 100.0;
    let num_fraction = p.input_num_fraction / 100.0;
    if av.tot_size as f64 > p.input_size_threshold * GIB && short(av.ava_size_any, av.tot_size, size_fraction) {
        return Some(SkipReason::InputSize {
            available_bytes: av.ava_size_any,
            total_bytes: av.tot_size,
            fraction: size_fraction,
        });
    }
    let num_gate = if seed { av.tot_size as f64 / GIB } else { av.tot_num as f64 };
    if num_gate > p.input_num_threshold && short(av.ava_num_any, av.tot_num, num_fraction) {
        return Some(SkipReason::InputNum { available: av.ava_num_any, total: av.tot_num, fraction: num_fraction });
    }
    None
}

/// The rule that disables the locality check when no nucleus passes it (L485-492; seed
/// "The entire data locality check is disabled if no nuclei pass and …"):
/// `(ioIntensity is None or ≤ MIN_IO_INTENSITY_WITH_LOCAL_DATA) and totalInputGB ≤
/// MIN_INPUT_SIZE_WITH_LOCAL_DATA`, or priority ≥ `MAX_TASK_PRIO_WITH_LOCAL_DATA` — the
/// task's `currentPriority` in the code, its `taskPriority` in the seed.
pub fn can_disable_locality(
    task: &TaskSpec,
    total_input_gb: f64,
    p: &TaskBrokerageParams,
    variant: TaskBrokerVariant,
) -> bool {
    let low_io = task.io_intensity.is_none_or(|io| io <= p.min_io_intensity_with_local_data);
    let priority = match variant {
        TaskBrokerVariant::Seed => task.task_priority,
        TaskBrokerVariant::PandaServer => task.current_priority,
    };
    (low_io && total_input_gb <= p.min_input_size_with_local_data) || priority >= p.max_task_prio_with_local_data
}
