//! Configuration of the workload as written in a scenario file: job streams and arrivals.

use serde::{Deserialize, Serialize};

use crate::engine::distribution::Distribution;

/// A stream of jobs of one owner and group with identical requirements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobStream {
    /// Label of the stream in the outputs.
    pub name: String,
    /// Owner (user name; DIRAC v9 keys task queues by user name, 2009 by DN).
    pub owner: String,
    /// Owner group; must be one of `dirac.groups`.
    pub group: String,
    /// Number of jobs.
    pub count: u32,
    /// When the jobs arrive.
    pub arrival: Arrival,
    /// Actual CPU work of each job, in normalised CPU seconds (capped at `cpu_time`).
    pub cpu_work: Distribution,
    /// The JDL `CPUTime` requirement; default 86400 s (reference §1.1, JobManifest).
    #[serde(default = "default_cpu_time")]
    pub cpu_time: f64,
    /// JDL `Priority` (UserPriority), 0..10, default 1 (reference §1.1).
    #[serde(default = "default_user_priority")]
    pub user_priority: u8,
    /// Sites allowed (empty: any).
    #[serde(default)]
    pub sites: Vec<String>,
    /// Sites the job must not run at.
    #[serde(default)]
    pub banned_sites: Vec<String>,
    /// Platforms accepted (empty: any).
    #[serde(default)]
    pub platforms: Vec<String>,
    /// Grid CEs required (empty: any).
    #[serde(default)]
    pub grid_ces: Vec<String>,
    /// Pilot types accepted: empty (any) or `["private"]` (seed 000).
    #[serde(default)]
    pub pilot_types: Vec<String>,
    /// Submit pools to use (empty: the director's DefaultSubmitPools).
    #[serde(default)]
    pub submit_pools: Vec<String>,
    /// Tags required; the CE must offer all of them.
    #[serde(default)]
    pub tags: Vec<String>,
    /// The director's `ForceGeneric` flag: only generic pilots for this TQ (seed 000).
    #[serde(default)]
    pub force_generic: bool,
    /// Probability that a job fails (application error) at its end.
    #[serde(default)]
    pub failure_probability: f64,
    /// The JDL `JobType` (default `User`, reference §1.1: "every job has one"); it becomes the
    /// task queue's `JobTypes`. `User` jobs are analysis, every other type production (seed 003).
    #[serde(default = "default_job_type")]
    pub job_type: String,
    /// The JDL `NumberOfGPUs`: GPUs each job holds while it runs (default 0). DIRAC 9 does not
    /// match on it: `JobScheduling._getTagsFromManifest` makes no tag of it and the Matcher drops
    /// the pilot's `NumberOfGPUs`, so GPU jobs reach GPU pilots only through a tag (`tags:
    /// ["GPU"]`) that CEs with GPUs offer; validation checks that every CE the stream's tags and
    /// sites match gives its pilots that many GPUs.
    #[serde(default)]
    pub number_of_gpus: u32,
}

/// DIRAC's JobType of user (analysis) jobs, the JDL default.
pub const USER_JOB_TYPE: &str = "User";

fn default_job_type() -> String {
    USER_JOB_TYPE.to_string()
}

fn default_cpu_time() -> f64 {
    86_400.0
}
fn default_user_priority() -> u8 {
    1
}

/// The arrival process of a job stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Arrival {
    /// All jobs at once.
    Burst {
        /// When every job (or task) of the stream arrives, in seconds from the start of the run
        /// (at least 0).
        at_s: f64,
    },
    /// A Poisson process with this rate, starting at `start_s`.
    Poisson {
        /// When the process starts, in seconds from the start of the run (at least 0); the first
        /// arrival comes one exponential gap after it.
        start_s: f64,
        /// Arrivals per hour (positive): exponential gaps of mean `3600 / rate_per_hour` seconds,
        /// until the stream's `count` have arrived.
        rate_per_hour: f64,
    },
    /// Evenly spaced over `[start_s, end_s)`.
    Spread {
        /// When the first job (or task) arrives, in seconds from the start of the run (at least 0).
        start_s: f64,
        /// End of the interval, in seconds from the start of the run (after `start_s`): the
        /// stream's `count` arrivals are `(end_s − start_s) / count` apart, the last one gap before
        /// it.
        end_s: f64,
    },
}
