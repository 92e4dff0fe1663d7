//! Lookahead for the event loop: when the queue stages a batch of coming events
//! ([`crate::engine::StagedQueue`]), ask for what they will read, all at once (measured: at 10⁷
//! jobs the first read of a job's or a pilot's record waits on a page walk and main memory, and
//! prefetches issued together walk in parallel; see `engine::staged`). Hints only
//! ([`prefetch`]): no result depends on them.

use super::world::{Event, World};
use crate::engine::prefetch;
use crate::ids::{PilotId, job_index};

impl World {
    /// A batch of `fresh` events was just staged behind the ones staged a batch earlier. For
    /// the fresh ones, ask for their first record: a job end's job, a pilot event's pilot. For
    /// the earlier job ends, whose job records were asked for a batch ago, read the pilot and
    /// ask for its state. Results never depend on it.
    pub(super) fn prefetch_staged(&self, fresh: usize) {
        let staged = self.core.queue.ahead();
        let earlier = staged.len().saturating_sub(fresh);
        for (i, ev) in staged.enumerate() {
            match *ev {
                Event::JobEnd(j) if i < earlier => {
                    if let Some(p) = self.core.jobs.get(job_index(j)).and_then(|job| job.pilot()) {
                        self.prefetch_pilot(p);
                    }
                }
                Event::JobEnd(j) => {
                    if let Some(job) = self.core.jobs.get(job_index(j)) {
                        prefetch(job);
                    }
                }
                Event::PilotAsks(p) | Event::PilotReachesBatch(p) | Event::PilotAborted(p) if i >= earlier => {
                    self.prefetch_pilot(p);
                }
                _ => {}
            }
        }
    }

    /// Start loading pilot `p`'s state in the grid, in the world and in its WMS.
    pub(super) fn prefetch_pilot(&self, p: PilotId) {
        if let Some(pilot) = self.core.grid.pilots.get(p as usize) {
            prefetch(pilot);
        }
        if let Some(ask) = self.core.asks.get(p as usize) {
            prefetch(ask);
        }
        // Every WMS (reading the pilot's own would wait for the load just asked for).
        for wms in &self.wms {
            wms.prefetch_pilot(p);
        }
    }
}
