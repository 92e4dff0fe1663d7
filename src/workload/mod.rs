//! Job arrivals: the jobs of every stream, with their submission times and CPU work,
//! drawn from per-stream random streams so that adding a stream changes no other.

pub mod accounting;
pub mod config;
pub mod entities;
pub mod job;

use crate::engine::{RngStreams, SimDuration, SimTime, dist};
pub use accounting::Accounting;
pub use config::{Arrival, JobStream};
pub use entities::{EntityDef, JobEntities, Level, ShareEntities, ShareUnit};
pub use job::{Job, JobStatus};

/// A job stream as the world and the outputs see it, whichever WMS defined it: the scenario's
/// `workload` streams (DIRAC's), then the streams a WMS declares for the jobs it creates itself
/// (PanDA's tasks, split into jobs during the run).
#[derive(Debug, Clone, PartialEq)]
pub struct StreamInfo {
    /// Label in the outputs (unique).
    pub name: String,
    /// Owner: a user name (DIRAC), or PanDA's `prodUserName` (`atlas-prod` for production).
    pub owner: String,
    /// The share group it counts for: a DIRAC group, or a PanDA gshare leaf.
    pub group: String,
    /// DIRAC's JDL `Priority` (0 for PanDA streams, which have task priorities instead).
    pub user_priority: u8,
    /// The CPU-time requirement of its jobs, normalised seconds.
    pub cpu_time: f64,
    /// Probability that a job fails at its end.
    pub failure_probability: f64,
    /// The WMS instance its jobs are submitted to.
    pub wms: crate::ids::WmsId,
    /// Production or analysis (DIRAC: JobType `User` is analysis; PanDA: `prodSourceLabel`
    /// `user` is analysis): what a pilot factory's startd pilot may ask for (seed 003 §2).
    pub kind: JobKind,
    /// GPUs each of its jobs holds while it runs (0: a CPU job): DIRAC's JDL `NumberOfGPUs`;
    /// for PanDA one for a task with a GPU spec (Harvester's GPU worker requests one,
    /// `htcondor_submitter`'s `requestGpus`; no PanDA job field counts GPUs).
    pub gpus: u32,
}

/// The two kinds of job seed 003 distinguishes (§2 "Startd Pilot"): production jobs run as
/// background jobs ("lower priority but yet desirable to stay in the job slots till
/// completion"), user analysis jobs as foreground jobs ("high priority"). Neutral: DIRAC calls
/// them JobType `User` against production types, PanDA `prodSourceLabel` `user` against `managed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum JobKind {
    /// A production job: a background job on a startd pilot's VM.
    Production,
    /// A user analysis job: a foreground job on a startd pilot's VM.
    Analysis,
}

impl JobKind {
    /// True for the kind that runs as a foreground job (analysis).
    pub fn is_foreground(self) -> bool {
        self == JobKind::Analysis
    }

    /// `production` or `analysis`, as in the outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::Production => "production",
            JobKind::Analysis => "analysis",
        }
    }
}

impl StreamInfo {
    /// The scenario's job streams, stream `i` submitted to WMS `wms[i]` (0 where missing).
    pub fn of_job_streams(streams: &[JobStream], wms: &[crate::ids::WmsId]) -> Vec<Self> {
        streams.iter().enumerate().map(|(i, s)| Self::of_job_stream(s, wms.get(i).copied().unwrap_or(0))).collect()
    }

    /// A scenario job stream, submitted to WMS `wms`.
    pub fn of_job_stream(s: &JobStream, wms: crate::ids::WmsId) -> Self {
        Self {
            name: s.name.clone(),
            owner: s.owner.clone(),
            group: s.group.clone(),
            user_priority: s.user_priority,
            cpu_time: s.cpu_time,
            failure_probability: s.failure_probability,
            wms,
            kind: if s.job_type == config::USER_JOB_TYPE { JobKind::Analysis } else { JobKind::Production },
            gpus: s.number_of_gpus,
        }
    }
}

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
    arrivals(&stream.arrival, stream.count, rng)
}

/// `count` arrival times by `arrival`, in order (job streams, PanDA task streams).
pub fn arrivals(arrival: &Arrival, count: u32, rng: &mut crate::engine::SimRng) -> Vec<SimTime> {
    let n = count as usize;
    match *arrival {
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
