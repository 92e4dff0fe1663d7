//! The usage history the share corrector reads, as DIRAC's accounting sees it
//! (reference `dirac.md` §3.2): the average number of running jobs per entity over
//! `[now − TimeSpan, now]`, from checkpoints taken every `UpdateHistoryPeriod` (900 s).
//!
//! Between refreshes the corrector works on the last refreshed data, as the real one does.
//! Time before the start of the simulation counts as no usage (an empty accounting DB).

use crate::engine::SimTime;

/// Cumulative job-seconds per entity at refresh times.
#[derive(Debug, Clone, Default)]
pub struct UsageHistory {
    /// (time, cumulative job-seconds per entity since time 0), in time order.
    checkpoints: Vec<(SimTime, Vec<f64>)>,
}

impl UsageHistory {
    /// Record the cumulative job-seconds per entity at `now` (a refresh).
    pub fn refresh(&mut self, now: SimTime, cumulative: &[f64]) {
        self.checkpoints.push((now, cumulative.to_vec()));
    }

    /// Cumulative job-seconds of entity `e` at time `t` (seconds, may be negative), from the
    /// last checkpoint at or before `t`.
    fn cumulative_at(&self, e: usize, t: f64) -> f64 {
        let i = self.checkpoints.partition_point(|(ct, _)| ct.as_secs_f64() <= t);
        if i == 0 { 0.0 } else { self.checkpoints[i - 1].1[e] }
    }

    /// Average running jobs of each entity over the `span_s` seconds before the last refresh;
    /// `None` before the first refresh.
    pub fn average_running(&self, span_s: f64) -> Option<Vec<f64>> {
        let (now, latest) = self.checkpoints.last()?;
        let from = now.as_secs_f64() - span_s;
        Some((0..latest.len()).map(|e| (latest[e] - self.cumulative_at(e, from)) / span_s).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averages_over_the_span_before_the_last_refresh() {
        let mut h = UsageHistory::default();
        assert_eq!(h.average_running(3600.0), None);
        // Entity 0 runs 10 jobs from t=0; entity 1 runs 4 jobs from t=900.
        h.refresh(SimTime::from_secs(900), &[9000.0, 0.0]);
        h.refresh(SimTime::from_secs(1800), &[18_000.0, 3600.0]);
        h.refresh(SimTime::from_secs(2700), &[27_000.0, 7200.0]);
        // Last 900 s: 10 and 4 running.
        assert_eq!(h.average_running(900.0).unwrap(), vec![10.0, 4.0]);
        // Last 1800 s: (27000 − 9000)/1800 = 10, (7200 − 0)/1800 = 4.
        assert_eq!(h.average_running(1800.0).unwrap(), vec![10.0, 4.0]);
        // A week: the time before the start counts as zero usage.
        let week = 604_800.0;
        assert_eq!(h.average_running(week).unwrap(), vec![27_000.0 / week, 7200.0 / week]);
    }
}
