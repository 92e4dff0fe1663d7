//! Lookahead for the event loop: while one event is handled, start loading what the next one
//! will read (issue 13: at 10⁷ jobs the first read of a job's or a pilot's record waits on main
//! memory). Hints only ([`prefetch`]): no result depends on them.

use super::world::{Event, World};
use crate::engine::prefetch;
use crate::ids::{PilotId, job_index};

impl World {
    /// Start loading what the next queued event will read while this one is handled
    /// ([`prefetch`]): a job end's job record, a pilot event's pilot. Results never depend on it.
    pub(super) fn prefetch_next(&mut self) {
        match self.core.queue.peek_next() {
            Some(&Event::JobEnd(j)) => {
                if let Some(job) = self.core.jobs.get(job_index(j)) {
                    prefetch(job);
                }
            }
            Some(&(Event::PilotAsks(p) | Event::PilotReachesBatch(p) | Event::PilotAborted(p))) => {
                self.prefetch_pilot(p);
            }
            _ => {}
        }
    }

    /// Once an event is handled, nothing is pushed before the next pop: if the queue's next
    /// event is a job end, its job record (asked for by [`Self::prefetch_next`] while this event
    /// was handled) names its pilot, whose state is then loaded during the pop. Asking at the
    /// job end itself left the pilot's first read waiting on memory (7 % of the 10⁷-job week).
    pub(super) fn prefetch_next_pilot(&mut self) {
        if let Some(&Event::JobEnd(j)) = self.core.queue.peek_next()
            && let Some(p) = self.core.jobs.get(job_index(j)).and_then(|job| job.pilot())
        {
            self.prefetch_pilot(p);
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
