//! What production job brokerage reads: the task / input chunk being brokered ([`BrokerTask`])
//! and one record per candidate PanDA queue ([`BrokerQueue`]) — plain structs a simulation
//! fills once per cycle (the `fairsharepolicy` is parsed at load time), no strings compared in
//! the hot loop beyond the few the code compares.

use serde::{Deserialize, Serialize};

use super::fairshare_policy::FairsharePolicy;
use crate::panda::network::Link;

/// `SiteSpec.status` of a PQ (CRIC `status`; scenarios write it in CRIC's lowercase spelling).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueueStatus {
    /// Brokered to and served (CRIC's normal state).
    #[default]
    Online,
    Standby,
    Brokeroff,
    Test,
    Offline,
    Paused,
}

impl QueueStatus {
    /// CRIC's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            QueueStatus::Online => "online",
            QueueStatus::Standby => "standby",
            QueueStatus::Brokeroff => "brokeroff",
            QueueStatus::Test => "test",
            QueueStatus::Offline => "offline",
            QueueStatus::Paused => "paused",
        }
    }

    /// CRIC's string read back (`None` for a status PanDA does not know).
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "online" => QueueStatus::Online,
            "standby" => QueueStatus::Standby,
            "brokeroff" => QueueStatus::Brokeroff,
            "test" => QueueStatus::Test,
            "offline" => QueueStatus::Offline,
            "paused" => QueueStatus::Paused,
            _ => return None,
        })
    }
}

/// Task pre-assignment (reference §2 filter 1): several filters are skipped for pre-assigned tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PreAssignment {
    /// Normal brokerage over all production PQs.
    #[default]
    None,
    /// `sitePreAssigned`: the task's `site` names one PQ.
    Site,
    /// `siteListPreAssigned`: several PQs, or pre-merge PQs sharing DDM endpoints.
    SiteList,
}

/// `allowInputLAN` split rule (`enum_inputLAN`: 1 = use, 2 = only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputLan {
    Use,
    Only,
}

/// `ipConnectivity` split rule (`enum_ipConnectivity`: 1 = full, 2 = http).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpConnectivity {
    Full,
    Http,
}

impl IpConnectivity {
    pub fn as_str(self) -> &'static str {
        match self {
            IpConnectivity::Full => "full",
            IpConnectivity::Http => "http",
        }
    }
}

/// `SiteSpec.getJobSeed()` (`jobseed`, `None` → `std`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JobSeed {
    /// Normal jobs only.
    #[default]
    Std,
    /// Event-service jobs only.
    Es,
    /// Event service only for high-priority ES (`esHigh`), and normal jobs.
    EsHigh,
    /// Anything (`all`).
    All,
}

/// A DDM endpoint status in `DOWNTIME_STATUSES` (`OFF`, `TEST`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Downtime {
    Off,
    Test,
}

impl Downtime {
    pub fn as_str(self) -> &'static str {
        match self {
            Downtime::Off => "OFF",
            Downtime::Test => "TEST",
        }
    }
}

/// The task's nucleus (known in job brokerage; `None` = task-brokerage hint mode, where the
/// link check, the network weight and the full-chain check are skipped).
#[derive(Debug, Clone, Default)]
pub struct NucleusInfo {
    /// Nucleus (ATLAS site) name.
    pub name: String,
    /// Its default output endpoint's name (`ddm_endpoint_name`), for the message.
    pub output_endpoint: String,
    /// `Some` when that endpoint's `write_wan` is OFF/TEST: every satellite PQ is temporarily skipped.
    pub write_wan_down: Option<Downtime>,
    /// `networkMap["total"][<activity>_queued]`: files queued to the nucleus over all links.
    pub total_queued_files: u64,
}

/// Inputs of the scratch-disk estimate (reference §2 filter 13; seed "disk usage").
#[derive(Debug, Clone, Copy, Default)]
pub struct DiskEstimate {
    /// `getOutDiskSize()`: `outDiskCount` in bytes (per event if `PerEvent`, else per input byte).
    pub out_disk_bytes: f64,
    /// `outputScaleWithEvents()`: `outDiskUnit` contains `PerEvent`.
    pub out_scales_with_events: bool,
    /// `workDiskCount` in bytes; `None` = unset (the code then adds nothing, not even 300 MB).
    pub work_disk_bytes: Option<f64>,
    /// `getMaxAtomSize(getNumEvents=True)`: most events in one job.
    pub max_events_per_job: f64,
    /// `getMaxAtomSize(effectiveSize=True)`: largest effective master input of one job, bytes.
    pub max_effective_input_bytes: f64,
    /// `getMaxAtomSize()`: largest input of one job (all datasets), bytes = inputDiskCount.
    pub max_input_bytes: f64,
}

/// Inputs of the walltime estimate (reference §2 filter 15; seed "estimated walltime").
#[derive(Debug, Clone, Copy)]
pub struct WalltimeEstimate {
    /// `useHS06()`: `cpuTimeUnit` is `[m]HS06sPerEvent[Fixed]`.
    pub use_hs06: bool,
    /// `cpuTimeUnit` is set at all.
    pub cpu_time_unit_set: bool,
    /// `getCpuTime()`: HS06·s per event (already ÷1000 for `mHS06…`); `None` if unset.
    pub cpu_time: Option<f64>,
    /// `cpuEfficiency` in percent.
    pub cpu_efficiency: f64,
    /// `baseWalltime` in seconds.
    pub base_walltime: f64,
    /// `walltime` (non-HS06 tasks: seconds per effective input byte); `None` if unset.
    pub walltime: Option<f64>,
    /// `walltimeUnit` is set.
    pub walltime_unit_set: bool,
    /// `nEsConsumers × maxAttemptEsJob` for event-service tasks without cloning, else 1.
    pub es_divisor: f64,
}

impl Default for WalltimeEstimate {
    fn default() -> Self {
        Self {
            use_hs06: true,
            cpu_time_unit_set: true,
            cpu_time: None,
            cpu_efficiency: 100.0,
            base_walltime: 0.0,
            walltime: None,
            walltime_unit_set: false,
            es_divisor: 1.0,
        }
    }
}

/// The task (and input chunk) being brokered.
#[derive(Debug, Clone)]
pub struct BrokerTask {
    /// `prodSourceLabel` (`managed` for production; `test…` labels skip the pilot check).
    pub prod_source_label: String,
    /// `processingType` (zero share via its process group; `urgent` = express).
    pub processing_type: String,
    /// `workingGroup`.
    pub working_group: Option<String>,
    /// `gshare` (leaf global share).
    pub gshare: Option<String>,
    /// Work-queue name: the zero-share check is skipped for `test` and `validation`.
    pub work_queue_name: String,
    /// `currentPriority`.
    pub current_priority: i64,
    /// `resource_type` (shown in `-cap_rt` messages).
    pub resource_type: String,
    pub pre_assigned: PreAssignment,
    /// `inputChunk.useScout()`.
    pub is_scout: bool,
    /// `inputChunk.isMerging`.
    pub is_merging: bool,
    /// `mergeOutput` split rule.
    pub merge_output: bool,
    /// `None` in hint mode (no nucleus yet).
    pub nucleus: Option<NucleusInfo>,
    /// `check_full_chain_with_nucleus`: full-chain task on a bare nucleus → nucleus PQs only.
    pub full_chain: bool,
    /// `coreCount`.
    pub core_count: Option<u32>,
    /// `mergeCoreCount` (used instead of `coreCount` for merging, if set).
    pub merge_core_count: Option<u32>,
    /// `maxCoreCount` split rule.
    pub max_core_count: Option<u32>,
    /// `inputChunk.getMaxRamCount()` in MB; `None`/0 disables the memory check.
    pub ram_count: Option<f64>,
    /// `ramUnit` is `MBPerCore[Fixed]`.
    pub ram_per_core: bool,
    /// `baseRamCount` in MB.
    pub base_ram_count: f64,
    pub disk: DiskEstimate,
    pub walltime: WalltimeEstimate,
    /// `allowInputLAN`.
    pub allow_input_lan: Option<InputLan>,
    /// `useLocalIO` (force copy-to-scratch).
    pub use_local_io: bool,
    /// `useEventService()`.
    pub use_event_service: bool,
    /// `useJobCloning()`.
    pub use_job_cloning: bool,
    pub ip_connectivity: Option<IpConnectivity>,
    /// `ipStack` (`IPv4`, `IPv6`).
    pub ip_stack: Option<String>,
    /// `t1Weight` split rule (0 if unset).
    pub t1_weight: i64,
    /// `ioIntensity` kB/s.
    pub io_intensity: Option<f64>,
    /// `diskIO` kB/s.
    pub disk_io: Option<f64>,
    /// `getNumJumboJobs()`.
    pub num_jumbo_jobs: Option<u32>,
    /// `getNumReadyEvents` (jumbo tasks).
    pub n_ready_events: Option<u64>,
    /// `transHome` is set: the SW/HW check runs (its verdicts come from [`BrokerQueue::software_ok`]).
    pub trans_home_set: bool,
    /// Total input bytes of the chunk (`totalSize`, unique LFNs).
    pub total_input_bytes: f64,
    /// Number of input files (`maxNumFiles`).
    pub total_input_files: u64,
    /// From the dataset-completeness step: complete replicas can be sent out over WAN.
    pub remote_source_available: bool,
    /// `complete_replica_locations` is a non-empty set (nucleus PQs then need `write_wan` on
    /// endpoints without a complete replica).
    pub complete_replica_locations_known: bool,
}

impl Default for BrokerTask {
    fn default() -> Self {
        Self {
            prod_source_label: "managed".into(),
            processing_type: "simul".into(),
            working_group: None,
            gshare: None,
            work_queue_name: String::new(),
            current_priority: 100,
            resource_type: "SCORE".into(),
            pre_assigned: PreAssignment::None,
            is_scout: false,
            is_merging: false,
            merge_output: false,
            nucleus: None,
            full_chain: false,
            core_count: Some(1),
            merge_core_count: None,
            max_core_count: None,
            ram_count: None,
            ram_per_core: true,
            base_ram_count: 0.0,
            disk: DiskEstimate::default(),
            walltime: WalltimeEstimate::default(),
            allow_input_lan: None,
            use_local_io: false,
            use_event_service: false,
            use_job_cloning: false,
            ip_connectivity: None,
            ip_stack: None,
            t1_weight: 0,
            io_intensity: None,
            disk_io: None,
            num_jumbo_jobs: None,
            n_ready_events: None,
            trans_home_set: false,
            total_input_bytes: 0.0,
            total_input_files: 0,
            remote_source_available: true,
            complete_replica_locations_known: false,
        }
    }
}

/// Job counts of one PQ (`getNumJobs` per status).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobCounts {
    pub defined: u64,
    pub assigned: u64,
    pub activated: u64,
    pub starting: u64,
    pub running: u64,
    pub transferring: u64,
}

/// Input of the chunk already at the PQ (`siteSizeMap`/`siteFilesMap`: local disk + cache;
/// the `WT` maps add local tape).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LocalInput {
    pub disk_bytes: f64,
    pub disk_files: u64,
    pub disk_or_tape_bytes: f64,
    pub disk_or_tape_files: u64,
}

/// Status of one DATADISK endpoint of the PQ: `true` = usable (not OFF/TEST).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndpointStatus {
    pub read_lan: bool,
    pub write_lan: bool,
    pub read_wan: bool,
    pub write_wan: bool,
    /// The endpoint holds complete replicas of all input datasets.
    pub complete_replica: bool,
}

impl Default for EndpointStatus {
    fn default() -> Self {
        Self { read_lan: true, write_lan: true, read_wan: true, write_wan: true, complete_replica: false }
    }
}

/// One candidate PanDA queue as brokerage sees it this cycle.
#[derive(Debug, Clone)]
pub struct BrokerQueue {
    /// PQ name (`siteName`).
    pub name: String,
    pub status: QueueStatus,
    /// `capability == "ucore"`: capped per resource type, not per PQ.
    pub ucore: bool,
    /// `coreCount` (`None`/0 = unset).
    pub core_count: Option<u32>,
    /// `corepower` HS06 per core.
    pub corepower: f64,
    /// `maxrss` / `minrss` MB (0 = no limit).
    pub maxrss: u64,
    pub minrss: u64,
    /// `maxtime` / `mintime` seconds (0 = no limit).
    pub maxtime: u64,
    pub mintime: u64,
    /// `maxwdir` MB (0 = no check).
    pub maxwdir: u64,
    /// `direct_access_lan` (`isDirectIO`).
    pub direct_io: bool,
    /// `maxinputsize == -1` (`always_use_direct_io`).
    pub always_direct_io: bool,
    /// `pledgedCPU` (−1 = opportunistic).
    pub pledged_cpu: Option<f64>,
    /// Parsed CRIC `fairsharepolicy`.
    pub fairshare: FairsharePolicy,
    /// catchall `useJumboJobs`.
    pub use_jumbo_jobs: bool,
    pub min_events_for_jumbo: Option<u64>,
    /// `maxDiskio` kB/s per core (`None`/≤0 → `MAX_DISKIO_DEFAULT`).
    pub max_diskio: Option<f64>,
    /// Average diskIO per core of the PQ's running jobs (`getAvgDiskIO_JEDI`).
    pub diskio_usage_per_core: f64,
    pub job_seed: JobSeed,
    /// CRIC `wnconnectivity` (`network_connectivity#ip_stack`).
    pub wnconnectivity: Option<String>,
    /// `transferringlimit` (0 → 2000).
    pub transferring_limit: u64,
    /// In `nucleusSpec.allPandaSites`.
    pub in_nucleus: bool,
    /// Shares its output storage with the nucleus' PQs.
    pub shares_nucleus_storage: bool,
    /// `storageMapping[PQ]["default"]`, the ATLAS site of its output storage (`None` = unmapped).
    pub output_storage_site: Option<String>,
    /// Its link to the nucleus ([`Link::Nucleus`] if its storage is the nucleus').
    pub link: Link,
    /// Default output endpoint: name and `space_usable` GB (`None` = no such endpoint).
    pub output_endpoint: Option<(String, f64)>,
    /// DATADISK input / output endpoints.
    pub input_endpoints: Vec<EndpointStatus>,
    pub output_endpoints: Vec<EndpointStatus>,
    /// Hook for `panda::arch`: the SW/HW check verdict (`Err` = PanDA's skip message after
    /// `skip site=NAME `, e.g. `with AUTO due to missing SW cache=… criteria=-cache`).
    pub software_ok: Result<(), String>,
    /// Architecture-level preference weight (`1 + pct/100`) from the same check.
    pub arch_preference_weight: Option<f64>,
    /// `laststart` older than 2 h (`getInactiveSites_JEDI`).
    pub inactive: bool,
    /// `getJob + updateJob` in `SiteData` over 3 h.
    pub n_pilot: u64,
    /// `getNumStandby(wq, resource_type)` from `Harvester_Slots` (`None` = not defined).
    pub num_slots: Option<u64>,
    /// A UPS (pilot-streaming) queue.
    pub ups_queue: bool,
    /// Harvester workers running + submitted.
    pub n_workers: u64,
    /// `max_io_intensity` queue parameter.
    pub max_io_intensity: Option<f64>,
    /// catchall `use_only_local_data`.
    pub use_only_local_data: bool,
    /// catchall `bareNucleus=only`.
    pub bare_nucleus_only: bool,
    /// Counts for the task's work queue / gshare.
    pub counts: JobCounts,
    /// Counts over all gshares (inactive, transferring and negative-T1 rules).
    pub counts_all: JobCounts,
    /// Transferring jobs whose nucleus cannot be written over WAN.
    pub transferring_to_unwritable_nuclei: u64,
    /// Counts for the task's gshare and resource types (`None` = no resource-type statistics).
    pub rt_counts: Option<JobCounts>,
    /// Cores running / starting (`get_core_statistics`, work shortage).
    pub cores_running: f64,
    pub cores_starting: f64,
    /// Jobs generated for this PQ earlier in this cycle (`liveCounter`).
    pub live_count: u64,
    pub local_input: LocalInput,
    /// Locked by another brokerage process.
    pub locked: bool,
}

impl Default for BrokerQueue {
    fn default() -> Self {
        Self {
            name: String::new(),
            status: QueueStatus::Online,
            ucore: false,
            core_count: Some(1),
            corepower: 10.0,
            maxrss: 0,
            minrss: 0,
            maxtime: 0,
            mintime: 0,
            maxwdir: 0,
            direct_io: false,
            always_direct_io: false,
            pledged_cpu: None,
            fairshare: FairsharePolicy::default(),
            use_jumbo_jobs: false,
            min_events_for_jumbo: None,
            max_diskio: None,
            diskio_usage_per_core: 0.0,
            job_seed: JobSeed::Std,
            wnconnectivity: None,
            transferring_limit: 0,
            in_nucleus: false,
            shares_nucleus_storage: false,
            output_storage_site: None,
            link: Link::Unknown,
            output_endpoint: None,
            input_endpoints: vec![EndpointStatus::default()],
            output_endpoints: vec![EndpointStatus::default()],
            software_ok: Ok(()),
            arch_preference_weight: None,
            inactive: false,
            n_pilot: 1,
            num_slots: None,
            ups_queue: false,
            n_workers: 0,
            max_io_intensity: None,
            use_only_local_data: false,
            bare_nucleus_only: false,
            counts: JobCounts::default(),
            counts_all: JobCounts::default(),
            transferring_to_unwritable_nuclei: 0,
            rt_counts: None,
            cores_running: 0.0,
            cores_starting: 0.0,
            live_count: 0,
            local_input: LocalInput::default(),
            locked: false,
        }
    }
}

impl BrokerQueue {
    /// `get_wn_connectivity()`: the part before `#`, `None` if empty or unset.
    pub fn wn_connectivity(&self) -> Option<&str> {
        self.wnconnectivity.as_deref().and_then(|w| w.split('#').next()).filter(|s| !s.is_empty())
    }

    /// `get_ipstack()`: the part after `#` when there are exactly two non-empty-tailed parts.
    pub fn wn_ip_stack(&self) -> Option<&str> {
        let w = self.wnconnectivity.as_deref()?;
        let mut it = w.split('#');
        let (_, b, c) = (it.next(), it.next(), it.next());
        match (b, c) {
            (Some(b), None) if !b.is_empty() => Some(b),
            _ => None,
        }
    }

    /// `is_opportunistic()`: `pledgedCPU == -1`.
    pub fn is_opportunistic(&self) -> bool {
        self.pledged_cpu == Some(-1.0)
    }

    /// `coreCount` with 0 read as unset.
    pub fn cores(&self) -> Option<u32> {
        self.core_count.filter(|&c| c > 0)
    }
}

impl BrokerTask {
    /// `taskCoreCount`: `mergeCoreCount` for merging when set, else `coreCount`.
    pub fn effective_core_count(&self) -> Option<u32> {
        if self.is_merging && self.merge_core_count.is_some() { self.merge_core_count } else { self.core_count }
    }

    /// Event service without job cloning (the code's `useEventService() and not useJobCloning()`).
    pub fn es_without_cloning(&self) -> bool {
        self.use_event_service && !self.use_job_cloning
    }

    /// `esHigh`: ES without cloning and priority ≥ 900 or scouts.
    pub fn es_high(&self) -> bool {
        self.es_without_cloning() && (self.current_priority >= 900 || self.is_scout)
    }

    /// Pre-assigned to one PQ or a list.
    pub fn any_pre_assigned(&self) -> bool {
        self.pre_assigned != PreAssignment::None
    }
}
