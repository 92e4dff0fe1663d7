//! [`Period`]: the interval of anything that reschedules itself — a DIRAC agent's polling, a
//! pilot's JobAgent cycle, a PanDA agent, Harvester's `lookupTime`, a pilot factory's cycle
//! and its pilots' request interval.
//!
//! A period is never read as a bare number: the only way to build one from input is
//! [`Period::new`] (which deserialization goes through), and it refuses anything under
//! [`Period::MIN_S`]. Simulated time is counted in whole milliseconds, so a period of a few
//! microseconds rounds to 0 and its timer would fire for ever at one instant, and a period of
//! a few milliseconds makes a week's run schedule billions of cycles: both were once accepted
//! and ran for ever or aborted allocating gigabytes. Real agents cycle every tens of seconds
//! (DIRAC's defaults are 60, 120, 900 and 20 s; Harvester's 60 s; the factories' 60 s), so a
//! second is far below any real setting.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::time::SimDuration;

/// The interval of a self-rescheduling timer, at least [`Period::MIN_S`] seconds.
#[derive(Copy, Clone, Debug, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Period(f64);

/// Why a number is not a [`Period`].
#[derive(Debug, Clone, PartialEq)]
pub struct PeriodError(f64);

impl fmt::Display for PeriodError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a period must be a number of seconds of at least {} s, got {}: a shorter period would fire its timer \
             again and again (time is counted in whole milliseconds, and real agents cycle every tens of seconds)",
            Period::MIN_S,
            self.0
        )
    }
}

impl std::error::Error for PeriodError {}

impl Period {
    /// The shortest period: 1 s.
    pub const MIN_S: f64 = 1.0;

    /// `s` seconds, if it is a finite number of at least [`Period::MIN_S`].
    pub fn new(s: f64) -> Result<Self, PeriodError> {
        if s.is_finite() && s >= Self::MIN_S { Ok(Self(s)) } else { Err(PeriodError(s)) }
    }

    /// A period written in the code (a real default); refused at compile time when it is under
    /// [`Period::MIN_S`], so no default escapes the floor either.
    pub const fn secs(s: f64) -> Self {
        assert!(s >= Self::MIN_S, "a period must be at least 1 s");
        Self(s)
    }

    /// The period in seconds.
    pub const fn as_secs_f64(self) -> f64 {
        self.0
    }

    /// The period as a simulated duration (at least 1 000 ms).
    pub fn duration(self) -> SimDuration {
        SimDuration::from_secs_f64(self.0)
    }
}

impl TryFrom<f64> for Period {
    type Error = PeriodError;
    fn try_from(s: f64) -> Result<Self, PeriodError> {
        Self::new(s)
    }
}

impl From<Period> for f64 {
    fn from(p: Period) -> f64 {
        p.0
    }
}

impl fmt::Display for Period {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} s", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_second_or_more_is_a_period() {
        assert_eq!(Period::new(1.0).unwrap().duration(), SimDuration::from_millis(1000));
        assert_eq!(Period::new(60.0).unwrap().as_secs_f64(), 60.0);
        for bad in [0.0004, 0.999, 0.0, -60.0, f64::NAN, f64::INFINITY] {
            assert!(Period::new(bad).is_err(), "{bad}");
        }
        let e = Period::new(0.0004).unwrap_err().to_string();
        assert!(e.contains("at least 1 s") && e.contains("0.0004"), "{e}");
    }

    #[test]
    fn a_period_reads_and_writes_as_a_number() {
        let p: Period = serde_json::from_str("120").unwrap();
        assert_eq!(p, Period::secs(120.0));
        assert_eq!(serde_json::to_string(&p).unwrap(), "120.0");
        let e = serde_json::from_str::<Period>("0.0004").unwrap_err().to_string();
        assert!(e.contains("at least 1 s"), "{e}");
    }
}
