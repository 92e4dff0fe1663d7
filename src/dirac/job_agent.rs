//! `dirac::job_agent` — how a pilot's JobAgent asks for work (reference `dirac.md` §5,
//! "Pilot side"; JobAgent ConfigTemplate).
//!
//! A running pilot asks the Matcher for a job with the CPU work it has left; after a job it
//! asks again (filling mode) while that is at least `MinimumTimeLeft`; after a failed match
//! it sleeps `PollingTime·(failures+1)·2` and gives up after more than
//! `StopAfterFailedMatches` consecutive failures.

use serde::{Deserialize, Serialize};

use crate::engine::Period;

/// JobAgent options with their real defaults (reference §5 and appendix).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JobAgentSettings {
    /// `PollingTime`: 20 s.
    pub polling_time_s: Period,
    /// `StopAfterFailedMatches`: 10.
    pub stop_after_failed_matches: u32,
    /// `MinimumTimeLeft`: 5000 (normalised CPU seconds).
    pub minimum_time_left: f64,
    /// `StopMargin`: 300 s of wall time kept in reserve.
    pub stop_margin_s: f64,
}

impl Default for JobAgentSettings {
    fn default() -> Self {
        Self {
            polling_time_s: Period::secs(20.0),
            stop_after_failed_matches: 10,
            minimum_time_left: 5000.0,
            stop_margin_s: 300.0,
        }
    }
}

impl JobAgentSettings {
    /// CPU work left: `(walltime limit − StopMargin − elapsed) · CPU power`, never negative.
    pub fn cpu_time_left(&self, max_walltime_s: f64, elapsed_s: f64, cpu_power: f64) -> f64 {
        ((max_walltime_s - self.stop_margin_s - elapsed_s) * cpu_power).max(0.0)
    }

    /// True when the pilot still has enough CPU work left to ask for another job
    /// (JobAgent `_checkCPUWorkLeft` finishes when `cpuWorkLeft <= minimumTimeLeft`).
    pub fn can_ask(&self, cpu_time_left: f64) -> bool {
        cpu_time_left > self.minimum_time_left
    }

    /// Sleep after the `failures`-th consecutive failed match (1-based):
    /// `PollingTime·(matchFailedCount + 1)·2`, the counter being already incremented
    /// (JobAgent.execute: the first failure sleeps 80 s with PollingTime 20).
    pub fn backoff_s(&self, failures: u32) -> f64 {
        self.polling_time_s.as_secs_f64() * f64::from(failures + 1) * 2.0
    }

    /// True when a pilot with this many consecutive failed matches stops (more than
    /// `StopAfterFailedMatches`).
    pub fn gives_up(&self, failures: u32) -> bool {
        failures > self.stop_after_failed_matches
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_left_and_minimum() {
        let a = JobAgentSettings::default();
        // 48 h limit at power 10, after 1 h: (172800 − 300 − 3600)·10.
        assert_eq!(a.cpu_time_left(172_800.0, 3600.0, 10.0), 1_689_000.0);
        assert!(a.can_ask(5000.1) && !a.can_ask(5000.0));
        assert_eq!(a.cpu_time_left(1000.0, 2000.0, 10.0), 0.0);
    }

    #[test]
    fn backoff_and_give_up() {
        let a = JobAgentSettings::default();
        assert_eq!(a.backoff_s(1), 80.0);
        assert_eq!(a.backoff_s(10), 440.0);
        assert!(!a.gives_up(10) && a.gives_up(11));
    }
}
