//! The PanDA workload of a scenario: production task streams (brokered to a
//! nucleus, then split into jobs) and analysis task streams (brokered every cycle). Field names
//! are JEDI's (`JediTaskSpec`, task parameters) in snake_case; the three `splitRule` tokens task
//! brokerage reads are typed fields (`TW=` `t1_weight`, `FU=` `full_chain`, `IS=1`
//! `input_pre_staging`). Defaults are JEDI's where it has one; the few that are pilotsim's own
//! say so.

use serde::{Deserialize, Serialize};

use crate::panda::anal_broker::TaskClass;
use crate::panda::task_broker::FullChain;
use crate::workload::config::Arrival;

/// One replica of a dataset on a storage endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplicaConfig {
    /// The endpoint (`storages[].name`).
    pub storage: String,
    /// Fraction of the dataset's files present there: 1 (default) = a complete replica.
    #[serde(default = "one")]
    pub fraction: f64,
}

fn one() -> f64 {
    1.0
}

impl ReplicaConfig {
    /// A complete replica.
    pub fn complete(&self) -> bool {
        self.fraction >= 1.0
    }
}

/// An input dataset of a production task stream (each task of the stream reads its own dataset
/// of this shape).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasetConfig {
    /// `datasetName` (a prefix: the task number is appended per task).
    pub name: String,
    /// Total size in GB (10⁹ bytes, as Rucio reports sizes).
    pub size_gb: f64,
    /// Number of files.
    pub files: u64,
    /// The primary input (`isMaster()`); default true. At most one per stream.
    #[serde(default = "yes")]
    pub master: bool,
    /// Where it has replicas.
    pub replicas: Vec<ReplicaConfig>,
}

fn yes() -> bool {
    true
}

/// A stream of production tasks (`prodSourceLabel` `managed`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProductionStream {
    /// Stream name, unique among `tasks`, `analysis` and `replay`.
    pub name: String,
    /// How many tasks.
    pub count: u32,
    /// When they arrive.
    pub arrival: Arrival,
    /// Input datasets (none for event generation).
    #[serde(default)]
    pub inputs: Vec<DatasetConfig>,
    /// `nEvents` of a task.
    pub n_events: u64,
    /// `nEventsPerJob`: events of one job when the task is split; `None` = one job per input
    /// file of the master dataset (`nFilesPerJob` 1; a task without input needs this).
    #[serde(default)]
    pub n_events_per_job: Option<u64>,
    /// `cpuTime` in HS06·s per event (`cpuTimeUnit` `HS06sPerEvent`).
    pub cpu_time: f64,
    /// `coreCount` (default 1, JEDI's).
    #[serde(default = "one_u32")]
    pub core_count: u32,
    /// `ramCount` in MB per core (`ramUnit` `MBPerCore`); 0 (default) = unset, no memory check.
    #[serde(default)]
    pub ram_count: f64,
    /// `ioIntensity`, kB/s; `None` (default) = unset.
    #[serde(default)]
    pub io_intensity: Option<f64>,
    /// `outDiskCount` in kB per event (`outDiskUnit` `kBPerEvent`); 0 (default) = unset.
    #[serde(default)]
    pub out_disk_count: f64,
    /// `taskPriority` (= `currentPriority` at submission).
    pub priority: i64,
    /// `gshare`: a leaf of `panda.gshares`.
    pub gshare: String,
    /// `processingType` (e.g. `simul`, `reprocessing`, `urgent`); pilotsim's default `simul`.
    #[serde(default = "default_processing_type")]
    pub processing_type: String,
    /// `workingGroup` (`None` default).
    #[serde(default)]
    pub working_group: Option<String>,
    /// splitRule `TW=`: `t1Weight`; negative skips the transfer-backlog check (default 0).
    #[serde(default)]
    pub t1_weight: i64,
    /// splitRule `FU=`: full-chain mode (`None` default = not full-chain).
    #[serde(default)]
    pub full_chain: Option<FullChain>,
    /// splitRule `IS=1`: data carousel (input staged from tape; default false).
    #[serde(default)]
    pub input_pre_staging: bool,
    /// `architecture` (`sw_platform[@base_platform][#host_cpu_spec][&host_gpu_spec]` or JSON),
    /// parsed by `panda::arch::TaskArch`; `None` = none.
    #[serde(default)]
    pub architecture: Option<String>,
    /// Probability that a job's payload fails (pilotsim's: PanDA retries it while
    /// `max_attempt` allows); default 0.
    #[serde(default)]
    pub failure_probability: f64,
    /// `maxAttempt`: attempts of a chunk before it fails for good (JEDI's default 3 for
    /// production, `ContentsFeeder` L466).
    #[serde(default = "three")]
    pub max_attempt: u8,
}

fn three() -> u8 {
    3
}

fn ten() -> u8 {
    10
}

fn one_u32() -> u32 {
    1
}

fn default_processing_type() -> String {
    "simul".into()
}

impl ProductionStream {
    /// The `splitRule` string with the three tokens, as JEDI would write it (`TW=…,FU=…,IS=1`).
    pub fn split_rule(&self) -> String {
        let mut parts = Vec::new();
        if self.t1_weight != 0 {
            parts.push(format!("TW={}", self.t1_weight));
        }
        if let Some(fc) = self.full_chain {
            parts.push(format!(
                "FU={}",
                match fc {
                    FullChain::Only => "1",
                    FullChain::Require => "2",
                    FullChain::Capable => "3",
                    FullChain::Other => "0",
                }
            ));
        }
        if self.input_pre_staging {
            parts.push("IS=1".into());
        }
        parts.join(",")
    }
}

/// A stream of analysis tasks (`prodSourceLabel` `user`), brokered every cycle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnalysisStream {
    /// Stream name, unique among `tasks`, `analysis` and `replay`.
    pub name: String,
    /// The user (`userName`).
    pub user: String,
    /// `workingGroup` (`None` default: a personal task).
    #[serde(default)]
    pub working_group: Option<String>,
    /// The class the task evaluation would give (`analy_task_eval`); `None` (default) = the
    /// broker's default A.
    #[serde(default)]
    pub class: Option<TaskClass>,
    /// How many tasks.
    pub count: u32,
    /// When they arrive.
    pub arrival: Arrival,
    /// Jobs per task.
    pub jobs_per_task: u32,
    /// Input datasets.
    #[serde(default)]
    pub inputs: Vec<DatasetConfig>,
    /// `cpuTime` HS06·s per event and events per job (`None` = unknown walltime).
    #[serde(default)]
    pub cpu_time: Option<f64>,
    /// `nEventsPerJob`: events of one job (at least 1), so a job's work is `cpu_time ×
    /// n_events_per_job` HS06·s, the `min_walltime` analysis brokerage checks; `None` (default):
    /// one event per job for the work, and no `min_walltime`.
    #[serde(default)]
    pub n_events_per_job: Option<u64>,
    /// `coreCount` (default 1).
    #[serde(default = "one_u32")]
    pub core_count: u32,
    /// `ramCount` MB per core (0 default = no check).
    #[serde(default)]
    pub ram_count: f64,
    /// `ioIntensity` kB/s.
    #[serde(default)]
    pub io_intensity: Option<f64>,
    /// `taskPriority` (default 1000, the priority JEDI gives user tasks).
    #[serde(default = "default_user_priority")]
    pub priority: i64,
    /// `gshare` leaf (pilotsim's default `User Analysis`, ATLAS's analysis share).
    #[serde(default = "default_user_gshare")]
    pub gshare: String,
    /// `architecture`, e.g. a GPU spec (`&nvidia…`): only PQs `panda::arch` accepts can run it.
    #[serde(default)]
    pub architecture: Option<String>,
    /// Probability that a job's payload fails (pilotsim's); default 0.
    #[serde(default)]
    pub failure_probability: f64,
    /// `maxAttempt` (JEDI's default 10 for analysis, `AtlasAnalTaskRefiner` L114).
    #[serde(default = "ten")]
    pub max_attempt: u8,
}

fn default_user_priority() -> i64 {
    1000
}

fn default_user_gshare() -> String {
    "User Analysis".into()
}
