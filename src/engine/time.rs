//! Simulated time: integer milliseconds, so event order never depends on float rounding.
//!
//! Arithmetic saturates instead of overflowing or going negative: a simulation that runs
//! off the end of time (or computes "before the start") stays well defined.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in simulated time: whole milliseconds since the simulation start.
///
/// Integer time makes the event order exact and identical in every build; a millisecond is
/// far finer than anything a grid middleware reacts to.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SimTime(pub u64);

/// A time or none, in 8 bytes where `Option<SimTime>` takes 16: `u64::MAX`, a time no run
/// reaches (every run ends at its scenario's duration), stands for none. For the fields of the
/// records a large run keeps millions of (a job's or a pilot's start and end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptTime(u64);

impl OptTime {
    pub const NONE: OptTime = OptTime(u64::MAX);

    pub fn new(t: Option<SimTime>) -> Self {
        match t {
            Some(t) => {
                debug_assert!(t.0 != u64::MAX, "the end of time is nobody's start or end");
                OptTime(t.0)
            }
            None => Self::NONE,
        }
    }

    pub fn get(self) -> Option<SimTime> {
        (self != Self::NONE).then_some(SimTime(self.0))
    }
}

/// A length of simulated time in whole milliseconds (never negative).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SimDuration(pub u64);

impl SimTime {
    /// The simulation start.
    pub const ZERO: SimTime = SimTime(0);

    /// The time `ms` milliseconds after the start.
    pub const fn from_millis(ms: u64) -> Self {
        SimTime(ms)
    }

    /// The time `s` whole seconds after the start (saturating).
    pub const fn from_secs(s: u64) -> Self {
        SimTime(s.saturating_mul(1000))
    }

    /// Milliseconds since the start.
    pub const fn as_millis(self) -> u64 {
        self.0
    }

    /// Seconds since the start, for reports and metrics.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }

    /// Hours since the start, for reports and metrics.
    pub fn as_hours_f64(self) -> f64 {
        self.0 as f64 / 3.6e6
    }

    /// The time `d` earlier, or [`SimTime::ZERO`] if that would be before the start.
    pub const fn saturating_sub(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_sub(d.0))
    }
}

impl SimDuration {
    /// No time at all.
    pub const ZERO: SimDuration = SimDuration(0);

    /// A duration of `ms` milliseconds.
    pub const fn from_millis(ms: u64) -> Self {
        SimDuration(ms)
    }

    /// A duration of `s` whole seconds (saturating).
    pub const fn from_secs(s: u64) -> Self {
        SimDuration(s.saturating_mul(1000))
    }

    /// A duration of `s` seconds, rounded to the nearest millisecond (halves away from
    /// zero). NaN and negative values give zero, values beyond `u64::MAX` ms saturate:
    /// this is exactly Rust's saturating float-to-int cast of the rounded value.
    ///
    /// Below 2⁵² ms (142 000 years) the rounding is done on integers: `f64::round` is a call into
    /// the runtime on this target (no SSE4.1 `roundsd`), 1.2 % of the 10⁷-job week's
    /// instructions, and every sampled duration comes through here. There the truncation and
    /// the fraction are exact, so "fraction ≥ 0.5 rounds up" is `round`, bit for bit.
    #[inline]
    pub fn from_secs_f64(s: f64) -> Self {
        let ms = s * 1e3;
        if (0.0..4_503_599_627_370_496.0).contains(&ms) {
            let whole = ms as u64;
            SimDuration(whole + u64::from(ms - whole as f64 >= 0.5))
        } else {
            SimDuration(ms.round() as u64)
        }
    }

    /// The duration in milliseconds.
    pub const fn as_millis(self) -> u64 {
        self.0
    }

    /// The duration in seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }
}

/// `time + duration`, saturating at the end of representable time.
impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

/// `time += duration`, saturating like `+`.
impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}

/// `later - earlier`: the time between them, zero if `later` is in fact earlier.
impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    fn sub(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

/// Sum of two durations, saturating.
impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}

/// Shown as `H:MM:SS.mmm` since the start, hours not wrapping at a day
/// (e.g. `0:00:01.500`, `27:03:04.005`), so logs sort and read naturally.
impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0 % 1000;
        let s = self.0 / 1000;
        write!(f, "{}:{:02}:{:02}.{:03}", s / 3600, s / 60 % 60, s % 60, ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opt_time_keeps_every_time_a_run_reaches() {
        for t in [None, Some(SimTime::ZERO), Some(SimTime(1)), Some(SimTime(u64::MAX - 1))] {
            assert_eq!(OptTime::new(t).get(), t);
        }
        assert_eq!(OptTime::NONE.get(), None);
        assert_eq!(size_of::<OptTime>(), 8);
    }

    #[test]
    fn conversions() {
        assert_eq!(SimTime::from_secs(3).as_millis(), 3000);
        assert_eq!(SimTime::from_millis(1500).as_secs_f64(), 1.5);
        assert_eq!(SimTime::from_secs(7200).as_hours_f64(), 2.0);
        assert_eq!(SimDuration::from_secs(2), SimDuration::from_millis(2000));
        assert_eq!(SimDuration::from_millis(250).as_secs_f64(), 0.25);
        assert_eq!(SimTime::from_secs(u64::MAX), SimTime(u64::MAX));
    }

    #[test]
    fn from_secs_f64_rounds_and_saturates() {
        assert_eq!(SimDuration::from_secs_f64(1.2346), SimDuration(1235));
        assert_eq!(SimDuration::from_secs_f64(1.2344), SimDuration(1234));
        assert_eq!(SimDuration::from_secs_f64(0.0004), SimDuration(0));
        assert_eq!(SimDuration::from_secs_f64(f64::NAN), SimDuration(0));
        assert_eq!(SimDuration::from_secs_f64(-5.0), SimDuration(0));
        assert_eq!(SimDuration::from_secs_f64(-0.0), SimDuration(0));
        assert_eq!(SimDuration::from_secs_f64(1e300), SimDuration(u64::MAX));
        assert_eq!(SimDuration::from_secs_f64(f64::INFINITY), SimDuration(u64::MAX));
    }

    #[test]
    fn from_secs_f64_rounds_as_f64_round_does() {
        // The integer path against `round` on both sides of every boundary it has: halves,
        // the largest double below a half, 2^52 ms, and random magnitudes from 1e-6 s to 1e17 s.
        let plain = |s: f64| SimDuration((s * 1e3).round() as u64);
        let below_half = f64::from_bits(0.5_f64.to_bits() - 1);
        let mut edges =
            vec![0.0, -0.0, 1e-3 * below_half, 5e-4, 2.5e-3, 1.0005, 4_503_599_627_370.496, 4_503_599_627_370.497];
        edges.extend([4_503_599_627_370_495.0, 4_503_599_627_370_496.0, 4_503_599_627_370_497.0].map(|ms| ms / 1e3));
        for k in 0..2000_u32 {
            edges.push(f64::from(k) * 1e-3 + 5e-4);
            edges.push((f64::from(k) + below_half) * 1e-3);
        }
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mantissa = (state >> 11) as f64 / (1u64 << 53) as f64;
            edges.push(mantissa * 10f64.powi((state % 24) as i32 - 6));
        }
        for s in edges {
            assert_eq!(SimDuration::from_secs_f64(s), plain(s), "{s:e} s");
        }
    }

    #[test]
    fn arithmetic_saturates() {
        let t = SimTime::from_secs(10);
        assert_eq!(t + SimDuration::from_secs(5), SimTime::from_secs(15));
        assert_eq!(SimTime(u64::MAX - 1) + SimDuration(10), SimTime(u64::MAX));
        assert_eq!(SimTime::from_secs(15) - t, SimDuration::from_secs(5));
        assert_eq!(t - SimTime::from_secs(15), SimDuration::ZERO);
        assert_eq!(t.saturating_sub(SimDuration::from_secs(4)), SimTime::from_secs(6));
        assert_eq!(t.saturating_sub(SimDuration::from_secs(40)), SimTime::ZERO);
        assert_eq!(SimDuration(u64::MAX) + SimDuration(1), SimDuration(u64::MAX));
        let mut u = t;
        u += SimDuration(1);
        assert_eq!(u, SimTime(10_001));
    }

    #[test]
    fn display() {
        assert_eq!(SimTime::ZERO.to_string(), "0:00:00.000");
        assert_eq!(SimTime::from_millis(1500).to_string(), "0:00:01.500");
        assert_eq!(SimTime::from_millis(((27 * 60 + 3) * 60 + 4) * 1000 + 5).to_string(), "27:03:04.005");
    }
}
