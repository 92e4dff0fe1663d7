//! Job arrivals: the jobs of every stream, with their submission times and CPU work,
//! drawn from per-stream random streams so that adding a stream changes no other.

pub mod accounting;
pub mod config;
pub mod entities;
pub mod job;

use crate::engine::{RngStreams, SimDuration, SimTime, dist};
pub use accounting::Accounting;
pub use config::{Arrival, JobStream};
pub use entities::{EntityDef, JobEntities, Level, ShareEntities};
pub use job::{Job, JobStatus};

/// One job as submitted.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    /// Index of its stream.
    pub stream: u32,
    /// Submission time.
    pub submitted: SimTime,
    /// Actual CPU work, normalised seconds (≤ the stream's `cpu_time`).
    pub cpu_work: f64,
}

/// Arrival times of one stream's jobs, in order.
pub fn arrival_times(stream: &JobStream, rng: &mut crate::engine::SimRng) -> Vec<SimTime> {
    let n = stream.count as usize;
    match stream.arrival {
        Arrival::Burst { at_s } => vec![SimTime::ZERO + SimDuration::from_secs_f64(at_s); n],
        Arrival::Spread { start_s, end_s } => (0..n)
            .map(|i| SimTime::ZERO + SimDuration::from_secs_f64(start_s + (end_s - start_s) * i as f64 / n as f64))
            .collect(),
        Arrival::Poisson { start_s, rate_per_hour } => {
            let mut t = start_s;
            (0..n)
                .map(|_| {
                    t += dist::exponential(rng, 3600.0 / rate_per_hour);
                    SimTime::ZERO + SimDuration::from_secs_f64(t)
                })
                .collect()
        }
    }
}

/// Every job of every stream, ordered by submission time (ties: stream order, then
/// position in the stream), so that job ids follow submission order like DIRAC's JobIDs.
pub fn generate(streams: &[JobStream], rngs: &RngStreams) -> Vec<JobSpec> {
    let mut jobs = Vec::new();
    for (i, s) in streams.iter().enumerate() {
        let mut arrival_rng = rngs.stream(&format!("workload:{}/arrival", s.name));
        let mut work_rng = rngs.stream(&format!("workload:{}/cpu_work", s.name));
        for t in arrival_times(s, &mut arrival_rng) {
            let cpu_work = s.cpu_work.sample(&mut work_rng).clamp(0.0, s.cpu_time);
            jobs.push(JobSpec { stream: i as u32, submitted: t, cpu_work });
        }
    }
    jobs.sort_by_key(|j| (j.submitted, j.stream));
    jobs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::distribution::Distribution;

    fn stream(name: &str, arrival: Arrival) -> JobStream {
        JobStream {
            name: name.into(),
            owner: "u".into(),
            group: "g".into(),
            count: 1000,
            arrival,
            cpu_work: Distribution::Exponential { mean: 1000.0 },
            cpu_time: 3000.0,
            ..serde_json::from_str(
                r#"{"name":"","owner":"","group":"","count":1,"arrival":{"Burst":{"at_s":0}},"cpu_work":{"Fixed":1}}"#,
            )
            .unwrap()
        }
    }

    #[test]
    fn arrivals_and_caps() {
        let rngs = RngStreams::new(9);
        let a = stream("a", Arrival::Poisson { start_s: 100.0, rate_per_hour: 3600.0 });
        let b = stream("b", Arrival::Spread { start_s: 0.0, end_s: 1000.0 });
        let jobs = generate(&[a.clone(), b.clone()], &rngs);
        assert_eq!(jobs.len(), 2000);
        assert!(jobs.windows(2).all(|w| w[0].submitted <= w[1].submitted));
        assert!(jobs.iter().all(|j| j.cpu_work <= 3000.0));
        let a_times: Vec<f64> = jobs.iter().filter(|j| j.stream == 0).map(|j| j.submitted.as_secs_f64()).collect();
        // 1000 arrivals at 1/s after 100 s: the last one near 1100 s (± 5·sqrt(1000)).
        assert!((a_times[999] - 1100.0).abs() < 160.0, "{}", a_times[999]);
        // Adding a stream does not change another stream's jobs.
        let alone = generate(&[a], &rngs);
        let a_again: Vec<_> = jobs.iter().filter(|j| j.stream == 0).cloned().collect();
        assert_eq!(alone, a_again);
        let burst = generate(&[stream("c", Arrival::Burst { at_s: 5.0 })], &rngs);
        assert!(burst.iter().all(|j| j.submitted == SimTime::from_millis(5000)));
    }
}
