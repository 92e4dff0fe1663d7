//! Why a PQ is not a candidate. `Display` reproduces what `AtlasAnalJobBroker` logs after
//! `skip site=<PQ> ` (its `criteria=-…` tag included); [`Skip::line`] gives the whole line.
//! Where the code prints a name we do not carry (an endpoint, the cmtconfig), the message says
//! what it is instead.

use std::fmt;

use super::input::QueueStatus;

/// Seed 004's two kinds of filters; the stabilizer's and failures' "problematic" PQs are
/// temporary, as are the cuts of the final check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Persistence {
    /// A property of the PQ or the task: skipped whatever the load.
    Persistent,
    /// A load or recent-history condition: may pass next cycle.
    Temporary,
}

/// One reason; numbers are those the message prints.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SkipReason {
    /// Input data check: the PQ has no (complete) replica of the input.
    NoInputData,
    Status(QueueStatus),
    ZeroShare,
    DiskIoOverload,
    MaxIoIntensity {
        task: f64,
        site: f64,
    },
    AvoidVp,
    MaxCoreCount {
        site: u32,
        task_max: u32,
    },
    CoreMismatch {
        site: Option<u32>,
        task: Option<u32>,
    },
    GpuNeedsArchitecture,
    GpuArchitectureUnavailable,
    Closed {
        n_closed: u64,
    },
    UnresolvedCmtConfig,
    MissingSoftware,
    LowMemory {
        need_mb: f64,
    },
    HighMemory {
        need_mb: f64,
    },
    NoDirectIo,
    ScratchDisk {
        have_mb: f64,
        need_mb: f64,
    },
    OutputEndpointUndefined,
    OutputDiskShortage {
        space_gb: f64,
        threshold_gb: f64,
    },
    InputEndpointUndefined,
    InputDiskShortage {
        space_gb: f64,
        threshold_gb: f64,
    },
    Blacklisted,
    OverLocalQuota,
    ShortWalltime {
        site_max: f64,
        need: f64,
    },
    LongWalltime {
        site_min: f64,
        need: f64,
    },
    ScoutWalltime {
        site_max: f64,
        need: f64,
    },
    MinWalltime {
        site_max: f64,
        need: f64,
    },
    NoPilot,
    Excluded,
    NotIncluded,
    CloudMismatch,
    NonPreassigned,
    Hospital,
    /// `cap_rt`: `queued > max(20, 2·running)` of the task's resource type.
    CapRt {
        queued: u64,
        running: u64,
    },
    Overloaded {
        n_queue: u64,
        n_running: u64,
        grand_ratio: f64,
        offset: f64,
        min_queue: f64,
        vp: bool,
    },
    /// Stabilizer: `nQ_pq_user > max_q_len`.
    UserQueueTooLong {
        n_queue_user: u64,
        max_q_len: f64,
    },
    /// Overloaded with nothing running (also marks the PQ problematic).
    OverloadedNoRunning {
        n_queue: u64,
        min_queue: f64,
    },
    TooManyFailures {
        n_failed: u64,
        n_closed: u64,
        n_finished: u64,
    },
    /// Loop 0: every candidate was problematic, so the loop without locality is tried.
    TmpUserProblem,
    BelowMinWeight {
        weight: f64,
        min_weight: f64,
    },
    /// Beyond the top `maxNumSites`.
    LowWeight {
        weight: f64,
    },
    FileUnavailable,
}

impl SkipReason {
    /// Persistent or temporary (seed 004's two filter families).
    pub fn persistence(&self) -> Persistence {
        use SkipReason::*;
        match self {
            CapRt { .. }
            | Overloaded { .. }
            | UserQueueTooLong { .. }
            | OverloadedNoRunning { .. }
            | TooManyFailures { .. }
            | TmpUserProblem
            | BelowMinWeight { .. }
            | LowWeight { .. } => Persistence::Temporary,
            _ => Persistence::Persistent,
        }
    }

    /// PanDA's `criteria=` tag.
    pub fn criteria(&self) -> &'static str {
        use SkipReason::*;
        match self {
            NoInputData => "-input",
            Status(_) => "-status",
            ZeroShare => "-zeroshare",
            DiskIoOverload => "-diskIO",
            MaxIoIntensity { .. } => "-max_io_intensity",
            AvoidVp => "-avoid_vp",
            MaxCoreCount { .. } => "-max_cpucore",
            CoreMismatch { .. } => "-cpucore",
            GpuNeedsArchitecture | GpuArchitectureUnavailable => "-architecture",
            Closed { .. } => "-closed",
            UnresolvedCmtConfig => "-regexpcmtconfig",
            MissingSoftware => "-cache",
            LowMemory { .. } => "-lowmemory",
            HighMemory { .. } => "-highmemory",
            NoDirectIo => "-remoteio",
            ScratchDisk { .. }
            | OutputEndpointUndefined
            | OutputDiskShortage { .. }
            | InputEndpointUndefined
            | InputDiskShortage { .. } => "-disk",
            Blacklisted => "-blacklist",
            OverLocalQuota => "-local_quota",
            ShortWalltime { .. } => "-shortwalltime",
            LongWalltime { .. } => "-longwalltime",
            ScoutWalltime { .. } => "-scout_walltime",
            MinWalltime { .. } => "-min_walltime",
            NoPilot => "-nopilot",
            Excluded => "-excluded",
            NotIncluded => "-notincluded",
            CloudMismatch => "-cloudmismatch",
            NonPreassigned => "-nonpreassigned",
            Hospital => "-hospital",
            CapRt { .. } => "-cap_rt",
            Overloaded { vp: false, .. } => "-overloaded",
            Overloaded { vp: true, .. } => "-overloaded_vp",
            UserQueueTooLong { .. } | OverloadedNoRunning { .. } | TooManyFailures { .. } => "-badsite",
            TmpUserProblem => "-tmp_user_problem",
            BelowMinWeight { .. } => "-below_min_weight",
            LowWeight { .. } => "-low_weight",
            FileUnavailable => "-fileunavailable",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use SkipReason::*;
        let c = self.criteria();
        let opt = |x: Option<u32>| x.map_or("None".to_string(), |v| v.to_string());
        match *self {
            NoInputData => write!(f, "since input data is unavailable locally criteria={c}"),
            Status(s) => write!(f, "due to status={} criteria={c}", s.as_str()),
            ZeroShare => write!(f, "due to zero share criteria={c}"),
            DiskIoOverload => write!(f, "due to diskIO overload criteria={c}"),
            MaxIoIntensity { task, site } => {
                write!(f, "since ioIntensity={task} is larger than site max_io_intensity={site} criteria={c}")
            }
            AvoidVp => write!(f, "to avoid VP"),
            MaxCoreCount { site, task_max } => {
                write!(f, "due to larger core count site:{site} than task_max={task_max} criteria={c}")
            }
            CoreMismatch { site, task } => {
                write!(f, "due to core mismatch cores_site={} <> cores_task={} criteria={c}", opt(site), opt(task))
            }
            GpuNeedsArchitecture => write!(f, "since architecture is required for GPU queues"),
            GpuArchitectureUnavailable => write!(f, "since the task architecture is unavailable"),
            Closed { n_closed } => write!(f, "due to n_closed={n_closed} criteria={c}"),
            UnresolvedCmtConfig => write!(f, "due to unresolved regexp in cmtconfig criteria={c}"),
            MissingSoftware => write!(f, "due to missing SW cache or irrelevant HW criteria={c}"),
            LowMemory { need_mb } => {
                write!(f, "due to insufficient RAM less than job's core-scaled requirement {need_mb} MB criteria={c}")
            }
            HighMemory { need_mb } => {
                write!(f, "due to RAM lower limit greater than job's core-scaled requirement {need_mb} MB criteria={c}")
            }
            NoDirectIo => write!(f, "since direct IO is disabled criteria={c}"),
            ScratchDisk { have_mb, need_mb } => {
                write!(f, "due to small scratch disk={have_mb} < {need_mb} criteria={c}")
            }
            OutputEndpointUndefined => write!(f, "since output endpoint undefined criteria={c}"),
            OutputDiskShortage { space_gb, threshold_gb } => {
                write!(f, "due to output disk shortage in SE {space_gb} < {threshold_gb}GB criteria={c}")
            }
            InputEndpointUndefined => write!(f, "since input endpoint undefined criteria={c}"),
            InputDiskShortage { space_gb, threshold_gb } => {
                write!(f, "due to input disk shortage in SE {space_gb} < {threshold_gb}GB criteria={c}")
            }
            Blacklisted => write!(f, "since the output endpoint is blacklisted in DDM criteria={c}"),
            OverLocalQuota => write!(f, "since the output endpoint is over local quota criteria={c}"),
            ShortWalltime { site_max, need } => {
                write!(f, "due to short site walltime {site_max} (site upper limit) less than {need} criteria={c}")
            }
            LongWalltime { site_min, need } => {
                write!(f, "due to short job walltime {site_min} (site lower limit) greater than {need} criteria={c}")
            }
            ScoutWalltime { site_max, need } => write!(
                f,
                "due to site walltime {site_max} (site upper limit) insufficient for scout jobs (requiring {need} at least) criteria={c}"
            ),
            MinWalltime { site_max, need } => write!(
                f,
                "due to site walltime {site_max} (site upper limit) insufficient for merge or walltime-undefined jobs (requiring {need} at least) criteria={c}"
            ),
            NoPilot => write!(f, "due to no pilot criteria={c}"),
            Excluded => write!(f, "excluded criteria={c}"),
            NotIncluded => write!(f, "not included criteria={c}"),
            CloudMismatch => write!(f, "cloud mismatch criteria={c}"),
            NonPreassigned => write!(f, "non pre-assigned site criteria={c}"),
            Hospital => write!(f, "due to hospital queue criteria={c}"),
            CapRt { queued, running } => write!(
                f,
                "since nQueue/max(20,nRun) with gshare+resource_type is {queued}/max(20,{running}) > 2 criteria={c}"
            ),
            Overloaded { n_queue, n_running, grand_ratio, offset, min_queue, vp } => write!(
                f,
                "nQueue>minQueue({min_queue}) and nQueue({n_queue})/nRunning({n_running}) > grandRatio({grand_ratio:.2})*offset({offset}) {}criteria={c}",
                if vp { "and VP " } else { "" }
            ),
            OverloadedNoRunning { n_queue, min_queue } => {
                write!(f, "nQueue({n_queue})>minQueue({min_queue}) and nRunning=0 criteria={c}")
            }
            UserQueueTooLong { n_queue_user, max_q_len } => write!(
                f,
                "unsuitable for the user due to long queue of the user: nQ_pq_user({n_queue_user}) > max_nQ_pq_user({max_q_len:.3}) criteria={c}"
            ),
            TooManyFailures { .. } => write!(f, "too many failed or closed jobs for last 6h criteria={c}"),
            TmpUserProblem => write!(f, "due to a temporary user-specific problem criteria={c}"),
            BelowMinWeight { weight, min_weight } => {
                write!(f, "due to weight {weight:.7} below the minimum MIN_WEIGHT={min_weight} criteria={c}")
            }
            LowWeight { weight } => {
                write!(f, "due to low weight and not-used by old jobs with weight={weight:.7} criteria={c}")
            }
            FileUnavailable => write!(f, "file unavailable criteria={c}"),
        }
    }
}

/// A skipped PQ: which, in which loop (0 with data locality, 1 without), and why.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Skip {
    /// Index into the queues.
    pub queue: usize,
    /// 0 or 1 (see [`super::broker::Loop`]); the final check counts as the last loop run.
    pub loop_index: usize,
    pub reason: SkipReason,
}

impl Skip {
    /// `"  skip site=<name> <reason>"` as PanDA logs it.
    pub fn line(&self, queue_name: &str) -> String {
        format!("  skip site={queue_name} {}", self.reason)
    }
}
