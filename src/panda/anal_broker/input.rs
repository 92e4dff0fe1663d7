//! What analysis brokerage reads: the task, the PQs (CRIC), their per-cycle statistics and the
//! input replicas (reference §4; the names in the doc comments are `AtlasAnalJobBroker.py`'s).
//!
//! Everything is plain data a simulation can fill on every cycle; queues are addressed by their
//! index in [`AnalBrokerInput::queues`], and a statistics or replica slice that is too short
//! reads as zeros / no replica. Checks that belong to other modules arrive as their results:
//! `hasZeroShare` (`zero_share`), `JsonSoftwareCheck` (`sw`, `gpu_arch_ok`), the DDM blacklist
//! and quota (`blacklisted`, `over_local_quota`).

use serde::{Deserialize, Serialize};

use super::classify::SiteClass;
use super::throttle::TaskClass;

/// CRIC `type` of a PQ: candidates are `analysis` and grandly unified queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum QueueType {
    #[default]
    Analysis,
    /// `is_grandly_unified()`: serves production and analysis.
    Unified,
    Production,
    Other,
}

/// CRIC `status` of a PQ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum QueueStatus {
    #[default]
    Online,
    Brokeroff,
    Test,
    Offline,
    Paused,
    Standby,
}

impl QueueStatus {
    /// CRIC's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            QueueStatus::Online => "online",
            QueueStatus::Brokeroff => "brokeroff",
            QueueStatus::Test => "test",
            QueueStatus::Offline => "offline",
            QueueStatus::Paused => "paused",
            QueueStatus::Standby => "standby",
        }
    }
}

/// Result of the SW/HW check for a PQ (`JsonSoftwareCheck.check` + `resolve_cmt_config`, §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum SwCheck {
    /// In `siteListWithSW` (AUTO PQ with the release/cache/container).
    #[default]
    Passed,
    /// Passed, but the task's regexp cmtconfig does not resolve at the PQ.
    PassedUnresolvedRegexp,
    /// Not AUTO-checked, CRIC `releases == ['ANY']`: passes only without a host CPU/GPU spec.
    ReleasesAny,
    /// Neither.
    Missing,
}

/// A complete (or regarded-complete) replica of one input dataset seen from one PQ, as
/// `getAnalSitesWithDataDisk` sorts it (the caller applies `MAX_MISSING_INPUT_FILES` /
/// `MIN_INPUT_COMPLETENESS` and the VP rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Replica {
    #[default]
    Absent,
    /// Only on tape: counts for the locality list, weight 0.001.
    Tape,
    /// On disk (not VP): weight 1, in the non-VP list.
    Disk,
    /// Through Virtual Placement: on disk only when VP is used for the task.
    Vp,
}

/// One PQ (CRIC / schedconfig; a unified PQ stands for its pseudo-queues).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnalQueue {
    /// The unified PQ name (matched by `includedSite`/`excludedSite`, `_HOSPITAL` suffix).
    pub name: String,
    pub cloud: String,
    pub queue_type: QueueType,
    pub status: QueueStatus,
    /// `hasZeroShare(site, task)` (reference §2 filter 7).
    pub zero_share: bool,
    /// CRIC `corecount`; `None` = unset.
    pub core_count: Option<u32>,
    /// CRIC `maxDiskio` (kB/s per core); `None`/≤ 0 → `MAX_DISKIO_DEFAULT`.
    pub max_diskio: Option<f64>,
    /// `getAvgDiskIO_JEDI`: average diskIO per core of the running jobs.
    pub diskio_usage: f64,
    /// `get_max_io_intensity()`; `None` = no limit.
    pub max_io_intensity: Option<f64>,
    /// `use_vp(ANALY_PS)`: a Virtual Placement queue.
    pub uses_vp: bool,
    /// `isGPU()`.
    pub is_gpu: bool,
    /// For a GPU PQ: `JsonSoftwareCheck` accepts the task architecture.
    pub gpu_arch_ok: bool,
    pub sw: SwCheck,
    /// `maxrss` / `minrss` (MB); `None` or 0 = no limit.
    pub maxrss: Option<f64>,
    pub minrss: Option<f64>,
    /// `maxwdir` (MB); `None` or 0 = no check.
    pub maxwdir: Option<f64>,
    /// `isDirectIO() or always_use_direct_io()`.
    pub direct_io_capable: bool,
    /// `CoreUtils.use_direct_io_for_job(task, site)`.
    pub direct_io_for_job: bool,
    /// `space_usable` (GB) of the default output endpoint; `None` = no output endpoint.
    pub output_space_gb: Option<f64>,
    /// `space_usable` (GB) of the default input endpoint; `None` = no input endpoint.
    pub input_space_gb: Option<f64>,
    /// Default input and output endpoints are the same (input space is then not checked).
    pub same_input_output_endpoint: bool,
    /// `check_endpoints_with_blacklist` found a blacklisted endpoint.
    pub blacklisted: bool,
    /// The output endpoint is over the user's local quota.
    pub over_local_quota: bool,
    /// `maxtime` / `mintime` (s), 0 = none.
    pub maxtime: f64,
    pub mintime: f64,
    /// `corepower` (HS06 per core).
    pub corepower: f64,
    /// `use_only_local_data()`.
    pub use_only_local_data: bool,
    /// `getNumStandby(gshare, resource_type)` (Harvester_Slots): `None` unset, 0 = dynamic.
    pub num_standby: Option<u64>,
}

/// Jobs of the task's user on a PQ in the task's gshare (`getUsersJobsStats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserQueueStats {
    /// defined + assigned + activated + starting (pmerge excluded).
    pub n_queue: u64,
    pub n_running: u64,
}

/// All users of a PQ in the task's gshare (`getUsersJobsStats[pq][gshare]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GshareUsers {
    /// Real users (the `_total` entry not counted).
    pub n_users: u32,
    /// `_total.nRunning`.
    pub n_running: u64,
}

/// The task's resource type at a PQ (`getJobStatisticsByResourceTypeSite`), for `cap_rt`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceTypeStats {
    pub running: u64,
    /// defined + assigned + activated + starting.
    pub queued: u64,
}

/// A PQ's statistics for this cycle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QueueStats {
    /// Jobs of the task's gshare at the PQ (`getJobStatisticsByGlobalShare`).
    pub n_running: u64,
    pub n_defined: u64,
    pub n_assigned: u64,
    pub n_activated: u64,
    pub n_starting: u64,
    /// Running jobs of every gshare (`getNumJobs(…, 'running')` without a tag).
    pub n_running_all: u64,
    /// Slot-to-running rate over 6 h (jobs/h, `getSiteToRunRateStats`); `None` = PQ unknown.
    pub site_to_running_rate: Option<f64>,
    /// Harvester workers running + submitted (`ups_load_worker_stats`); `None` = no entry.
    pub n_workers: Option<u64>,
    /// getJob + updateJob requests over 3 h (`SiteData`).
    pub n_pilot: u64,
    /// `analy_site_eval` class; `None` → mid.
    pub site_class: Option<SiteClass>,
    /// The task's user; `None` = no jobs of the user here.
    pub user: Option<UserQueueStats>,
    /// The gshare's users here; `None` = no user job of the gshare here.
    pub users: Option<GshareUsers>,
    /// The task's resource type here; `None` = no entry.
    pub resource_type: Option<ResourceTypeStats>,
    /// The task's jobs here within `TW_DONE_JOB_STAT` (`getFailureCountsForTask_JEDI`).
    pub n_failed: u64,
    pub n_closed: u64,
    pub n_finished: u64,
    /// Bytes of the chunk's input on the PQ's local disk (`availableFileMap[…]['localdisk']`).
    pub local_disk_bytes: u64,
    /// Every input file is available locally (disk, cache or tape) — what a
    /// `use_only_local_data` PQ needs.
    pub has_all_input_files: bool,
    /// `getSitesUsedByTask_JEDI`: the task already has jobs here.
    pub used_by_task: bool,
}

/// The task (and its input chunk) being brokered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnalTask {
    pub gshare: String,
    pub prod_source_label: String,
    /// `analy_task_eval`; `None` → class A (1).
    pub task_class: Option<TaskClass>,
    pub task_priority: i64,
    /// kB/s; `None`/0 = unknown.
    pub io_intensity: Option<f64>,
    /// Hours since `frozenTime` (the last successful cycle); `None` = unset.
    pub hours_since_last_success: Option<f64>,
    /// Input datasets of the chunk, and those that are not pseudo.
    pub n_datasets: usize,
    pub n_real_datasets: usize,
    /// Every input dataset is readable over WAN (else locality can never be ignored).
    pub remote_source_available: bool,
    /// An input dataset is distributed: all candidates kept (no top 10).
    pub distributed_input: bool,
    /// `getNumSitesPerJob()`: 1 except for event-service cloning.
    pub n_sites_per_job: u32,
    pub is_merging: bool,
    pub use_scout: bool,
    /// `avoid_vp()`; `use_local_io()` (forceStaged).
    pub avoid_vp: bool,
    pub use_local_io: bool,
    /// `coreCount`; `None` = unset (single-core), 0 = any.
    pub core_count: Option<u32>,
    /// `get_max_core_count()` from splitRule.
    pub max_core_count: Option<u32>,
    /// `diskIO` (kB/s).
    pub disk_io: Option<f64>,
    /// The task has an architecture (`get_sw_platform()` non-empty); HPO workflow.
    pub has_sw_platform: bool,
    pub is_hpo: bool,
    /// The task has a host CPU or GPU spec.
    pub host_hw_spec: bool,
    /// `getMaxRamCount()` (MB; `None`/0 = no check), per core if `ram_per_core`.
    pub ram_count: Option<f64>,
    pub ram_per_core: bool,
    /// `baseRamCount` (MB), used by the seed formula only.
    pub base_ram_count: f64,
    /// `getOutDiskSize()` (bytes of output per byte of input), `getWorkDiskSize()` (bytes).
    pub out_disk_count: f64,
    pub work_disk_size: f64,
    /// `getMaxAtomSize()` and its effective size (bytes).
    pub max_atom_size: f64,
    pub eff_atom_size: f64,
    /// `getMaxSizePerJob()` (bytes).
    pub max_size_per_job: Option<f64>,
    /// `allowInputLAN() == 'only'`.
    pub input_lan_only: bool,
    /// `useHS06()`; job need `cpuTime × nEvents` (or `walltime × size`), `None`/0 = unknown.
    pub use_hs06: bool,
    pub min_walltime: Option<f64>,
    pub base_walltime: f64,
    /// `cpuEfficiency` (%).
    pub cpu_efficiency: f64,
    /// No walltime nor units, or `cpuTimeUnit` without cpuTime.
    pub walltime_undefined: bool,
    /// `excludedSite`, `includedSite` (`*` wildcards; `AUTO` in the include list).
    pub excluded_sites: Vec<String>,
    pub included_sites: Option<Vec<String>>,
    /// Pre-assigned PQ (`site`), an index into the queues.
    pub preassigned: Option<usize>,
    /// `cloud`; `None`, "" or "any" = any.
    pub cloud: Option<String>,
    /// `N_j`: jobs the chunk would be split into.
    pub n_jobs_to_submit: u64,
    /// Total input size of the chunk (bytes).
    pub total_input_bytes: u64,
}

impl Default for AnalTask {
    fn default() -> Self {
        Self {
            gshare: super::throttle::USER_ANALYSIS.to_string(),
            prod_source_label: "user".to_string(),
            task_class: None,
            task_priority: 1000,
            io_intensity: None,
            hours_since_last_success: None,
            n_datasets: 0,
            n_real_datasets: 0,
            remote_source_available: true,
            distributed_input: false,
            n_sites_per_job: 1,
            is_merging: false,
            use_scout: false,
            avoid_vp: false,
            use_local_io: false,
            core_count: None,
            max_core_count: None,
            disk_io: None,
            has_sw_platform: false,
            is_hpo: false,
            host_hw_spec: false,
            ram_count: None,
            ram_per_core: false,
            base_ram_count: 0.0,
            out_disk_count: 0.0,
            work_disk_size: 0.0,
            max_atom_size: 0.0,
            eff_atom_size: 0.0,
            max_size_per_job: None,
            input_lan_only: false,
            use_hs06: true,
            min_walltime: None,
            base_walltime: 0.0,
            cpu_efficiency: 100.0,
            walltime_undefined: false,
            excluded_sites: Vec::new(),
            included_sites: None,
            preassigned: None,
            cloud: None,
            n_jobs_to_submit: 1,
            total_input_bytes: 0,
        }
    }
}

/// Everything one brokerage call reads.
#[derive(Debug, Clone, Copy)]
pub struct AnalBrokerInput<'a> {
    pub task: &'a AnalTask,
    pub queues: &'a [AnalQueue],
    /// Per queue, same order; missing entries read as `QueueStats::default()`.
    pub stats: &'a [QueueStats],
    /// Row-major `queue × dataset` (`n_datasets` per queue); missing entries are `Absent`.
    pub replicas: &'a [Replica],
    /// Σ queued (defined+assigned+activated+starting) and Σ running of the task's gshare over
    /// **all** PQs (`get_total_nq_nr_ratio`).
    pub gshare_queued_total: u64,
    pub gshare_running_total: u64,
}

impl AnalBrokerInput<'_> {
    /// The statistics of queue `q` (zeros when absent).
    pub fn stats(&self, q: usize) -> QueueStats {
        self.stats.get(q).copied().unwrap_or_default()
    }

    /// The replica of dataset `d` seen from queue `q`.
    pub fn replica(&self, q: usize, d: usize) -> Replica {
        q.checked_mul(self.task.n_datasets)
            .and_then(|row| row.checked_add(d))
            .and_then(|i| self.replicas.get(i))
            .copied()
            .unwrap_or_default()
    }
}
