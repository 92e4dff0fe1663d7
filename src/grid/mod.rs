//! The grid model: sites, CEs with their batch queues and slots, pilots; network links are
//! configuration ([`config::Link`]) until PanDA's brokerage reads them.
//!
//! Static configuration is in [`config`]; this module holds the run-time state the
//! simulation changes: each CE's busy slots and batch queue, and the pilots.

pub mod config;
pub mod pilot;
pub mod wms;

use std::collections::VecDeque;

pub use pilot::{Pilot, PilotId, PilotStatus};

/// Run-time state of one CE.
#[derive(Debug, Clone, Default)]
pub struct CeState {
    /// Slots held by running pilots.
    pub busy: u32,
    /// Pilots in the batch queue waiting for a slot, first come first served.
    pub queue: VecDeque<PilotId>,
    /// Pilots submitted to this CE that have not started or ended (Submitted or Waiting).
    pub waiting: u32,
}

impl CeState {
    /// Take a slot if one is free.
    pub fn try_take_slot(&mut self, slots: u32) -> bool {
        if self.busy >= slots {
            return false;
        }
        self.busy += 1;
        true
    }

    /// Give a slot back.
    pub fn release_slot(&mut self) {
        debug_assert!(self.busy > 0, "releasing a slot nobody holds");
        self.busy = self.busy.saturating_sub(1);
    }
}
