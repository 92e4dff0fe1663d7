//! The data side of the analysis view: replicas seen from each PQ, local bytes, the DDM
//! blacklist verdict, and the endpoints' `space_usable` (see [`super::anal`]'s module doc).

use super::anal::{AnalView, GB, QueueSide};
use crate::grid::config::{StorageKind, StorageStatus};
use crate::grid::storage::{StorageId, Storages};
use crate::panda::anal_broker::Replica;
use crate::scenario::Scenario;
use crate::scenario::panda::AnalysisStream;

/// What [`AnalView::data`] finds for one stream, per queue: replicas (row-major queue ×
/// dataset), bytes on local disk, every dataset complete locally, every dataset present.
pub(super) type StreamData = (Vec<Replica>, Vec<u64>, Vec<bool>, Vec<bool>);

impl AnalView {
    pub(super) fn is_vp(&self, s: &Scenario, e: StorageId) -> bool {
        s.storages.get(e as usize).is_some_and(|st| st.name.ends_with("_VP_DISK"))
    }

    /// `check_endpoints_with_blacklist` (AtlasBrokerUtils L1215-1285) as the first loop sees
    /// it: a PQ holding every input (`in_nucleus`, PanDA's `sites_in_nucleus` after the data
    /// check) needs readable input and writable output endpoints over LAN; any other PQ also
    /// an input endpoint receiving over WAN, an output endpoint sending over WAN, and a remote
    /// source for the input. OFF and TEST are downtimes.
    pub(super) fn blacklisted(
        &self,
        s: &Scenario,
        side: &QueueSide,
        in_nucleus: bool,
        has_inputs: bool,
        remote: bool,
    ) -> bool {
        let st = |e: &StorageId| s.storages.get(*e as usize);
        let up = |x: StorageStatus| !x.is_downtime();
        let nucleus = in_nucleus && has_inputs;
        let read_lan = side.input.iter().filter_map(st).any(|x| up(x.read_lan));
        let write_lan = side.output.iter().filter_map(st).any(|x| up(x.write_lan));
        let recv_wan = side.input.iter().filter_map(st).any(|x| nucleus || up(x.write_wan));
        let send_wan = side.output.iter().filter_map(st).any(|x| nucleus || up(x.read_wan));
        let source = remote || (nucleus && (!side.input.is_empty() || !side.output.is_empty()));
        !(read_lan && write_lan && recv_wan && send_wan && source)
    }

    /// Replicas (queue × dataset), local disk bytes, "all files local" and "holds every
    /// dataset" per queue (module doc).
    pub(super) fn data(&self, s: &Scenario, a: &AnalysisStream) -> StreamData {
        let n_q = self.queue_side.len();
        let n_ds = a.inputs.len();
        // Storage of every replica, resolved once (`None`: unknown, rejected by validation).
        let ids: Vec<Vec<Option<usize>>> = a
            .inputs
            .iter()
            .map(|d| d.replicas.iter().map(|r| s.storages.iter().position(|st| st.name == r.storage)).collect())
            .collect();
        // Per dataset: does a complete replica sit on an input endpoint of any analysis PQ?
        let any_complete: Vec<bool> = a
            .inputs
            .iter()
            .zip(&ids)
            .map(|(d, ids)| {
                d.replicas.iter().zip(ids).any(|(r, id)| {
                    r.complete()
                        && id.is_some_and(|id| {
                            self.queue_side.iter().any(|qs| qs.analysis && qs.input.contains(&(id as StorageId)))
                        })
                })
            })
            .collect();
        let mut replicas = vec![Replica::Absent; n_q * n_ds];
        let mut local = vec![0u64; n_q];
        let mut all_local = vec![n_ds > 0; n_q];
        let mut holds_all = vec![n_ds > 0; n_q];
        for (q, side) in self.queue_side.iter().enumerate() {
            for (k, (d, ids)) in a.inputs.iter().zip(&ids).enumerate() {
                let (mut disk, mut vp, mut tape, mut part_disk, mut part_tape, mut complete) =
                    (false, false, false, false, false, false);
                let mut best_disk_fraction: f64 = 0.0;
                for (r, &id) in d.replicas.iter().zip(ids) {
                    let Some(id) = id else { continue };
                    if !side.input.contains(&(id as StorageId)) {
                        continue;
                    }
                    let Some(st) = s.storages.get(id) else { continue };
                    let is_tape = st.kind == StorageKind::Tape;
                    let is_vp = st.name.ends_with("_VP_DISK");
                    if !is_tape && !is_vp {
                        best_disk_fraction = best_disk_fraction.max(r.fraction.clamp(0.0, 1.0));
                    }
                    match (r.complete(), is_tape, is_vp) {
                        (true, false, false) => disk = true,
                        (true, false, true) => vp = true,
                        (true, true, _) => tape = true,
                        (false, false, false) if r.fraction > 0.0 => part_disk = true,
                        (false, true, _) if r.fraction > 0.0 => part_tape = true,
                        _ => {}
                    }
                    complete |= r.complete();
                }
                let incomplete_ok = !any_complete.get(k).copied().unwrap_or(false);
                let state = if disk {
                    Replica::Disk
                } else if vp {
                    Replica::Vp
                } else if tape {
                    Replica::Tape
                } else if incomplete_ok && part_disk {
                    Replica::Disk
                } else if incomplete_ok && part_tape {
                    Replica::Tape
                } else {
                    Replica::Absent
                };
                if let Some(slot) = replicas.get_mut(q * n_ds + k) {
                    *slot = state;
                }
                if let Some(l) = local.get_mut(q) {
                    *l = l.saturating_add((best_disk_fraction * d.size_gb.max(0.0) * GB).round() as u64);
                }
                if let Some(x) = all_local.get_mut(q) {
                    *x &= complete;
                }
                if let Some(x) = holds_all.get_mut(q) {
                    *x &= state != Replica::Absent;
                }
            }
        }
        (replicas, local, all_local, holds_all)
    }

    /// `space_usable` of an endpoint now, GB: free + expired (unlimited → ∞).
    pub fn space_usable_gb(&self, storages: &Storages, e: StorageId) -> Option<f64> {
        let ep = storages.get(e)?;
        let Some(total) = ep.total else { return Some(f64::INFINITY) };
        let expired = self.expired.get(e as usize).copied().unwrap_or(0).min(ep.used);
        Some(total.saturating_sub(ep.used).saturating_add(expired) as f64 / GB)
    }

    /// Writes the space of every PQ's default endpoints into every stream's queues (once per
    /// cycle, before building task inputs).
    pub fn refresh_space(&mut self, storages: &Storages) {
        let spaces: Vec<(Option<f64>, Option<f64>)> = self
            .queue_side
            .iter()
            .map(|side| {
                let sp = |e: Option<&StorageId>| e.and_then(|&e| self.space_usable_gb(storages, e));
                (sp(side.output.first()), sp(side.input.first()))
            })
            .collect();
        for stream in &mut self.streams {
            for (q, (out, inp)) in stream.queues.iter_mut().zip(&spaces) {
                q.output_space_gb = *out;
                q.input_space_gb = *inp;
            }
        }
    }
}
