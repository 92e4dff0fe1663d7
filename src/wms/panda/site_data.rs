//! PanDA's `SiteData` and `laststart`: what the server records of each PQ's pilots, for
//! analysis brokerage and copyArchive to read (reference §4, §6).
//!
//! - `gets` (`SiteData` getJob): the getJob requests of the PQ's pilots (and of Harvester's
//!   job fetcher at a push PQ, one per cycle, job or not), in 10-minute buckets.
//! - `starts`: jobs started at the PQ (`getSiteToRunRateStats` counts `startTime`), the same way.
//! - `last_start`: when a job last started at the PQ (`laststart`), which copyArchive's
//!   rules read.
//!
//! Analysis brokerage reads the buckets over windows: `pilot_requests_3h[q]` is the getJob
//! requests of the last 3 h plus one updateJob per running job per 30 min (a pilot's heartbeat
//! period) over the same 3 h, i.e. 6 per job running now; `started_in_window[q]` the jobs
//! started in `getSiteToRunRateStats`' window, the same `[now − 6 h, now − 5 min)` rounded
//! down to 10 minutes that `site_to_running_window` divides by (reference §4, Analysis
//! Stabilizer: `startTime>=:startTimeMin AND startTime<:startTimeMax`; seed 004: "jobs with
//! starttime within last 6 hours"). The window's bounds are bucket bounds, so the count is exact.

use crate::engine::SimTime;

use super::view::anal_cycle::site_to_running_window;

/// What the server records of each PQ's pilots (module doc).
#[derive(Debug, Clone)]
pub struct SiteData {
    pub gets: Activity,
    pub starts: Activity,
    pub last_start: Vec<Option<SimTime>>,
}

impl SiteData {
    /// Nothing recorded yet at `queues` PQs.
    pub fn new(queues: usize) -> Self {
        SiteData { gets: Activity::new(queues), starts: Activity::new(queues), last_start: vec![None; queues] }
    }

    /// A job started at PQ `q` at `now`.
    pub fn started(&mut self, q: usize, now: SimTime) {
        self.last_start[q] = Some(now);
        self.starts.add(q, now);
    }
}

/// Milliseconds per bucket of the activity windows (10 minutes: `getSiteToRunRateStats` rounds
/// its bounds to 10 minutes).
const BUCKET_MS: u64 = 600_000;
/// Buckets kept: the 36 of the longest window (6 h) and the current one, which the window never
/// includes but which receives events meanwhile. With fewer, the current bucket would take the
/// slot of the window's oldest.
const BUCKETS: usize = 37;

/// Counts per PQ in 10-minute buckets over the last 6 h and the current bucket.
#[derive(Debug, Clone, Default)]
pub struct Activity {
    /// `[q][bucket % BUCKETS]` with the bucket number it holds.
    buckets: Vec<[(u64, u64); BUCKETS]>,
}

impl Activity {
    pub fn new(queues: usize) -> Self {
        Self { buckets: vec![[(u64::MAX, 0); BUCKETS]; queues] }
    }

    /// One event of PQ `q` at `now` (events come in time order).
    pub fn add(&mut self, q: usize, now: SimTime) {
        let b = now.as_millis() / BUCKET_MS;
        let slot = &mut self.buckets[q][(b % BUCKETS as u64) as usize];
        if slot.0 != b {
            *slot = (b, 0);
        }
        slot.1 += 1;
    }

    /// Events of PQ `q` in the buckets `[from, to)` (bucket numbers; at most `BUCKETS` back).
    fn sum(&self, q: usize, from: u64, to: u64) -> u64 {
        debug_assert!(to.saturating_sub(from) <= BUCKETS as u64, "a window longer than the buckets kept");
        self.buckets[q].iter().filter(|(b, _)| *b != u64::MAX && *b >= from && *b < to).map(|(_, n)| n).sum()
    }

    /// Over the last `hours` up to now (the current bucket and the `6·hours − 1` before it).
    pub fn last_hours(&self, q: usize, now: SimTime, hours: u64) -> u64 {
        let b = now.as_millis() / BUCKET_MS;
        self.sum(q, (b + 1).saturating_sub(hours * 6), b + 1)
    }

    /// Events of PQ `q` in `getSiteToRunRateStats`' window at `now`
    /// ([`site_to_running_window`]: 35 or 36 whole buckets, the divisor's hours).
    pub fn rate_window(&self, q: usize, now: SimTime) -> u64 {
        let (lo, hi, _) = site_to_running_window(now);
        self.sum(q, lo.as_millis() / BUCKET_MS, hi.as_millis() / BUCKET_MS)
    }
}

#[cfg(test)]
#[path = "site_data_tests.rs"]
mod tests;
