//! The simulation's accounting: running jobs per share entity and their exact time integral,
//! with periodic snapshots — what DIRAC's accounting (WMSHistory) reports to the share
//! corrector, and what PanDA's throttles and global shares will read
//! (reference `dirac.md` §3.2).
//!
//! The simulation owns it and feeds it at every job start and end; WMSs read it through their
//! view. Integrals are integer job-milliseconds, so a usage does not depend on how often it
//! is read, and the recorder of the outputs (which keeps its own integrals) never influences
//! a decision.

use crate::engine::SimTime;
use crate::ids::EntityId;
use crate::workload::entities::JobEntities;

/// Running jobs and usage per entity, with snapshots.
#[derive(Debug, Clone, Default)]
pub struct Accounting {
    running: Vec<u32>,
    last_change: Vec<SimTime>,
    /// ∫ running dt since time 0 up to `last_change`, in job-milliseconds (a million jobs
    /// running for ten years is 3·10^17, within u64).
    job_ms: Vec<u64>,
    /// (time, cumulative job-milliseconds per entity), in time order.
    snapshots: Vec<(SimTime, Vec<u64>)>,
}

impl Accounting {
    /// Accounting for `n` entities, all idle.
    pub fn new(n: usize) -> Self {
        Self { running: vec![0; n], last_change: vec![SimTime::ZERO; n], job_ms: vec![0; n], snapshots: Vec::new() }
    }

    fn advance(&mut self, e: EntityId, now: SimTime) {
        let dt = (now - self.last_change[e]).as_millis();
        self.job_ms[e] += u64::from(self.running[e]) * dt;
        self.last_change[e] = now;
    }

    /// A job of these entities started.
    pub fn job_started(&mut self, now: SimTime, entities: JobEntities) {
        for e in entities.each() {
            self.advance(e, now);
            self.running[e] += 1;
        }
    }

    /// A job of these entities ended.
    pub fn job_ended(&mut self, now: SimTime, entities: JobEntities) {
        for e in entities.each() {
            self.advance(e, now);
            self.running[e] -= 1;
        }
    }

    /// Jobs of entity `e` running now.
    pub fn running(&self, e: EntityId) -> u32 {
        self.running[e]
    }

    /// Job-milliseconds of entity `e` from time 0 to `now` (not before its last change).
    pub fn job_ms(&self, e: EntityId, now: SimTime) -> u64 {
        let dt = now.as_millis().saturating_sub(self.last_change[e].as_millis());
        self.job_ms[e] + u64::from(self.running[e]) * dt
    }

    /// Take a snapshot of every entity's usage now (DIRAC: the `UpdateHistoryPeriod` refresh).
    pub fn snapshot(&mut self, now: SimTime) {
        let at: Vec<u64> = (0..self.running.len()).map(|e| self.job_ms(e, now)).collect();
        self.snapshots.push((now, at));
    }

    /// Cumulative job-milliseconds of entity `e` at time `t` (ms, may be negative): from the
    /// last snapshot at or before `t`; time before the start counts as no usage.
    fn snapshot_at(&self, e: EntityId, t: i128) -> u64 {
        let i = self.snapshots.partition_point(|(st, _)| i128::from(st.as_millis()) <= t);
        if i == 0 { 0 } else { self.snapshots[i - 1].1[e] }
    }

    /// Average running jobs of each entity over the `span_s` seconds before the last snapshot,
    /// as the corrector reads its history between refreshes; `None` before the first snapshot.
    pub fn average_running(&self, span_s: f64) -> Option<Vec<f64>> {
        let (now, latest) = self.snapshots.last()?;
        let from = i128::from(now.as_millis()) - (span_s * 1000.0).round() as i128;
        Some((0..latest.len()).map(|e| (latest[e] - self.snapshot_at(e, from)) as f64 / 1000.0 / span_s).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averages_over_the_span_before_the_last_snapshot() {
        let s = SimTime::from_secs;
        let mut a = Accounting::new(2);
        assert_eq!(a.average_running(3600.0), None);
        let e0 = JobEntities { group: 0, user: None };
        let e1 = JobEntities { group: 1, user: None };
        // Entity 0 runs 10 jobs from t=0; entity 1 runs 4 jobs from t=900.
        for _ in 0..10 {
            a.job_started(s(0), e0);
        }
        a.snapshot(s(900));
        for _ in 0..4 {
            a.job_started(s(900), e1);
        }
        a.snapshot(s(1800));
        a.snapshot(s(2700));
        assert_eq!((a.running(0), a.running(1)), (10, 4));
        assert_eq!(a.job_ms(0, s(2700)), 27_000_000);
        // Last 900 s: 10 and 4 running.
        assert_eq!(a.average_running(900.0).unwrap(), vec![10.0, 4.0]);
        // Last 1800 s: (27000 − 9000)/1800 = 10, (7200 − 0)/1800 = 4.
        assert_eq!(a.average_running(1800.0).unwrap(), vec![10.0, 4.0]);
        // A week: the time before the start counts as zero usage.
        let week = 604_800.0;
        assert_eq!(a.average_running(week).unwrap(), vec![27_000.0 / week, 7200.0 / week]);
        // Reading between snapshots changes nothing; the history moves only at a snapshot.
        a.job_ended(s(3000), e0);
        assert_eq!(a.job_ms(0, s(3000)), 30_000_000);
        assert_eq!(a.average_running(900.0).unwrap(), vec![10.0, 4.0]);
    }
}
