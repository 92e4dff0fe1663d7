//! GPUs as a counted resource of the CEs. A CE declares its GPU nodes by kind
//! ([`GpuInventory`]: vendor, model, VRAM, GPUs per node, nodes); a pilot may ask for GPUs
//! beside its cores, from the kinds its WMS allows (a mask over the CE's inventory entries).
//! The batch system starts it only when a kind it allows has that many GPUs free, and it holds
//! them until it ends; its jobs take GPUs from those it holds.
//!
//! Model (pilotsim's, stated here because the seeds are silent): a kind's GPUs are one pool
//! (which node of the kind holds them is not tracked, so fragmentation across nodes is not
//! modelled), but a pilot never asks for more GPUs than one node of the kind has; the first
//! allowed kind in inventory order with enough free GPUs is taken; a GPU node's cores are the
//! CE's slots. Pilots without GPUs never read any of this: CPU-only grids are unchanged.

use std::collections::BTreeMap;

use super::config::GpuInventory;
use crate::ids::PilotId;

/// The most GPU kinds a CE may declare: a pilot's allowed kinds are a 32-bit mask.
pub const MAX_GPU_KINDS: usize = 32;

/// What a GPU pilot asked for and what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuHold {
    /// GPUs it asked for.
    pub gpus: u32,
    /// The CE's inventory entries it accepts (bit k: entry k); 0 accepts any.
    pub kinds: u32,
    /// The entry it holds its GPUs from, once it runs.
    pub kind: Option<u8>,
    /// GPUs not used by its running jobs.
    pub free: u32,
    /// Its CE, once it runs.
    pub ce: u32,
}

impl GpuHold {
    fn accepts(&self, k: usize) -> bool {
        self.kinds == 0 || (k < MAX_GPU_KINDS && self.kinds & (1 << k) != 0)
    }
}

/// The GPUs of every CE and the pilots that ask for or hold some.
#[derive(Debug, Clone, Default)]
pub struct Gpus {
    /// Per CE, per inventory entry: `(GPUs per node, GPUs in all)`.
    total: Vec<Vec<(u32, u32)>>,
    /// Per CE, per inventory entry: GPUs held by running pilots.
    pub busy: Vec<Vec<u32>>,
    /// GPU pilots by id (CPU pilots are absent).
    holds: BTreeMap<PilotId, GpuHold>,
    /// Every GPU pilot of the run, ended ones too: the GPUs it asked for and the entry it took
    /// them from (None: it never ran). What the outputs read.
    record: BTreeMap<PilotId, (u32, Option<u8>)>,
}

impl Gpus {
    /// The GPU inventories of the CEs, in CE order; none busy.
    pub fn new<'a>(inventories: impl Iterator<Item = &'a [GpuInventory]>) -> Self {
        let total: Vec<Vec<(u32, u32)>> = inventories
            .map(|inv| inv.iter().map(|g| (g.gpus_per_node, g.gpus_per_node.saturating_mul(g.nodes))).collect())
            .collect();
        let busy = total.iter().map(|t| vec![0; t.len()]).collect();
        Self { total, busy, holds: BTreeMap::new(), record: BTreeMap::new() }
    }

    /// GPUs in all of entry `k` of CE `c`.
    pub fn inventory(&self, c: usize, k: usize) -> u32 {
        self.total.get(c).and_then(|t| t.get(k)).map_or(0, |t| t.1)
    }

    /// Whether CE `c` could ever give `gpus` GPUs from one node of a kind `kinds` accepts.
    pub fn can_hold(&self, c: usize, gpus: u32, kinds: u32) -> bool {
        let hold = GpuHold { gpus, kinds, kind: None, free: 0, ce: 0 };
        self.total[c].iter().enumerate().any(|(k, &(per_node, _))| hold.accepts(k) && gpus <= per_node)
    }

    /// Pilot `p` asks for `gpus` GPUs of the kinds in `kinds` (nothing for `gpus` 0).
    pub fn ask(&mut self, p: PilotId, gpus: u32, kinds: u32) {
        if gpus > 0 {
            self.holds.insert(p, GpuHold { gpus, kinds, kind: None, free: 0, ce: 0 });
            self.record.insert(p, (gpus, None));
        }
    }

    /// Whether any pilot asks for or holds GPUs now (never, in a CPU-only grid).
    pub fn any(&self) -> bool {
        !self.holds.is_empty()
    }

    /// What pilot `p` asked for and holds (`None`: a CPU pilot).
    pub fn hold(&self, p: PilotId) -> Option<&GpuHold> {
        self.holds.get(&p)
    }

    /// The entry pilot `p` would take its GPUs from at CE `c` now; `Some(None)` for a CPU
    /// pilot, `None` when no accepted kind has enough free.
    pub fn fit(&self, c: usize, p: PilotId) -> Option<Option<usize>> {
        let Some(h) = self.holds.get(&p) else { return Some(None) };
        let free = |k: usize| self.total[c][k].1 - self.busy[c][k];
        (0..self.total[c].len()).find(|&k| h.accepts(k) && h.gpus <= self.total[c][k].0 && h.gpus <= free(k)).map(Some)
    }

    /// Pilot `p` starts at CE `c` holding its GPUs from entry `k`.
    pub fn take(&mut self, c: usize, p: PilotId, k: usize) {
        if let Some(h) = self.holds.get_mut(&p) {
            self.busy[c][k] += h.gpus;
            debug_assert!(self.busy[c][k] <= self.total[c][k].1, "CE {c} GPU kind {k} over its inventory");
            h.kind = Some(k as u8);
            h.free = h.gpus;
            h.ce = c as u32;
            self.record.insert(p, (h.gpus, h.kind));
        }
    }

    /// Pilot `p` ends at CE `c`: the GPUs it held are free again, and it leaves the table.
    pub fn release(&mut self, c: usize, p: PilotId) {
        if let Some(h) = self.holds.remove(&p)
            && let Some(k) = h.kind
        {
            self.busy[c][usize::from(k)] -= h.gpus;
        }
    }

    /// A pilot that never ran (aborted, cancelled while waiting) forgets its request.
    pub fn forget(&mut self, p: PilotId) {
        self.holds.remove(&p);
    }

    /// A job takes `gpus` of pilot `p`'s free GPUs; false if it does not have them.
    pub fn take_for_job(&mut self, p: PilotId, gpus: u32) -> bool {
        if gpus == 0 {
            return true;
        }
        match self.holds.get_mut(&p) {
            Some(h) if h.kind.is_some() && h.free >= gpus => {
                h.free -= gpus;
                true
            }
            _ => false,
        }
    }

    /// A job of pilot `p` gives back its `gpus`.
    pub fn give_back(&mut self, p: PilotId, gpus: u32) {
        if gpus > 0
            && let Some(h) = self.holds.get_mut(&p)
        {
            h.free = (h.free + gpus).min(h.gpus);
        }
    }

    /// Every GPU pilot of the run (ended ones too): the GPUs it asked for and the inventory
    /// entry of its CE it took them from (None: it never ran), in pilot id order.
    pub fn record(&self) -> &BTreeMap<PilotId, (u32, Option<u8>)> {
        &self.record
    }

    /// GPUs of pilot `p` its running jobs do not use (0 for a CPU pilot).
    pub fn free_of(&self, p: PilotId) -> u32 {
        self.holds.get(&p).map_or(0, |h| h.free)
    }

    /// The inventory entry pilot `p` holds its GPUs from, while it runs.
    pub fn kind_of(&self, p: PilotId) -> Option<usize> {
        self.holds.get(&p).and_then(|h| h.kind).map(usize::from)
    }

    /// GPUs held by running pilots and used by their running jobs, per CE and inventory entry,
    /// flattened in CE then entry order.
    pub fn usage(&self) -> (Vec<u32>, Vec<u32>) {
        let held: Vec<u32> = self.busy.iter().flatten().copied().collect();
        let offsets: Vec<usize> = self.busy.iter().scan(0, |o, b| Some(std::mem::replace(o, *o + b.len()))).collect();
        let mut used = vec![0; held.len()];
        for (_, h) in self.holding() {
            if let Some(k) = h.kind {
                used[offsets[h.ce as usize] + usize::from(k)] += h.gpus - h.free;
            }
        }
        (held, used)
    }

    /// The GPU pilots holding GPUs, with their hold.
    pub fn holding(&self) -> impl Iterator<Item = (PilotId, &GpuHold)> {
        self.holds.iter().filter(|(_, h)| h.kind.is_some()).map(|(&p, h)| (p, h))
    }
}
