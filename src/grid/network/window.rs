//! Throughput windows of one link: the bytes of the transfers that completed on it, in coarse
//! time buckets, so the link can report its mean rate over the last hour, day and week (the
//! 1 h / 1 d / 1 w averages of FTS's dashboard, `mbps.dashb` in the network matrix).
//!
//! | window | buckets | bucket width | covered span |
//! |---|---|---|---|
//! | 1 h | 12 | 5 min | from 55 to 60 min |
//! | 1 d | 24 | 1 h | from 23 to 24 h |
//! | 1 w | 7 | 1 d | from 6 to 7 d |
//!
//! A window at time `now` sums the buckets `(cur − N, cur]`, `cur = ⌊now / width⌋` (the current,
//! partial bucket and the N − 1 before it), and divides by the nominal span (3600 s, 86 400 s,
//! 604 800 s): `Mbps = bytes · 8 / span_s / 10⁶`. Bytes count when their transfer completes,
//! as the dashboard counts a file when FTS reports it done. 43 counters (344 bytes), allocated
//! only for a link that has completed a non-empty transfer.

use crate::engine::SimTime;

/// `N` buckets of `W` milliseconds, as a ring keyed by the absolute bucket index.
#[derive(Debug, Clone)]
struct Ring<const N: usize, const W: u64> {
    /// Bytes per bucket; slot `k % N` holds bucket `k` for `k` in `(last − N, last]`.
    bytes: [u64; N],
    /// The latest bucket written.
    last: u64,
}

impl<const N: usize, const W: u64> Ring<N, W> {
    const fn new() -> Self {
        Self { bytes: [0; N], last: 0 }
    }

    /// Add `bytes` at time `t`. A bucket older than the ring holds is dropped (never happens
    /// for completions reported in time order).
    fn add(&mut self, t: SimTime, bytes: u64) {
        let k = t.as_millis() / W;
        if k > self.last {
            // Clear the slots of the buckets (last, k], at most N of them.
            let gap = (k - self.last).min(N as u64);
            for i in 0..gap {
                let slot = ((k - i) % N as u64) as usize;
                if let Some(b) = self.bytes.get_mut(slot) {
                    *b = 0;
                }
            }
            self.last = k;
        } else if self.last - k >= N as u64 {
            return;
        }
        if let Some(b) = self.bytes.get_mut((k % N as u64) as usize) {
            *b = b.saturating_add(bytes);
        }
    }

    /// Bytes in the buckets `(cur − N, cur]`, `cur = ⌊now / W⌋`.
    fn sum(&self, now: SimTime) -> u64 {
        let cur = now.as_millis() / W;
        let lo = (self.last + 1).saturating_sub(N as u64).max((cur + 1).saturating_sub(N as u64));
        let hi = self.last.min(cur);
        if lo > hi {
            return 0;
        }
        (lo..=hi).map(|k| self.bytes.get((k % N as u64) as usize).copied().unwrap_or(0)).fold(0u64, u64::saturating_add)
    }
}

const MIN5: u64 = 300_000;
const HOUR: u64 = 3_600_000;
const DAY: u64 = 86_400_000;

/// The three windows of a link.
#[derive(Debug, Clone)]
pub(super) struct Windows {
    hour: Ring<12, MIN5>,
    day: Ring<24, HOUR>,
    week: Ring<7, DAY>,
}

impl Windows {
    pub(super) const fn new() -> Self {
        Self { hour: Ring::new(), day: Ring::new(), week: Ring::new() }
    }

    /// A transfer of `bytes` completed at `t`.
    pub(super) fn add(&mut self, t: SimTime, bytes: u64) {
        self.hour.add(t, bytes);
        self.day.add(t, bytes);
        self.week.add(t, bytes);
    }

    /// Mean Mbps over the last hour, day and week; None for a window with no bytes.
    pub(super) fn mbps(&self, now: SimTime) -> [Option<f64>; 3] {
        let rate = |bytes: u64, span_s: f64| (bytes > 0).then(|| bytes as f64 * 8.0 / span_s / 1e6);
        [rate(self.hour.sum(now), 3600.0), rate(self.day.sum(now), 86_400.0), rate(self.week.sum(now), 604_800.0)]
    }
}
