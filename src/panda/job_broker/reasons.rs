//! Why a PQ is not a candidate: [`SkipReason`], whose `Display` is the text PanDA logs after
//! `  skip site=NAME ` (AtlasProdJobBroker.py, quoted with its typos; where the code's message
//! embeds its long `weightStr` or expression strings, the numbers alone are shown), the filter
//! ([`Stage`], named as in the code's job-brokerage summary) and whether the skip is temporary
//! (`siteSkippedTmp`: the PQ stays through later filters and is removed at the "temporary
//! problem check").

use std::fmt;

use super::inputs::{Downtime, IpConnectivity, QueueStatus};

pub use crate::panda::pyfmt::py_float;

fn opt<T: fmt::Display>(v: &Option<T>) -> String {
    v.as_ref().map_or_else(|| "None".to_string(), |v| v.to_string())
}

/// The filter (code's summary label) that removed a PQ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Seed candidate list (queues named `test`).
    Candidates,
    Status,
    Link,
    Opportunistic,
    Inactive,
    ZeroShare,
    Jumbo,
    DiskIo,
    CoreCount,
    Software,
    Memory,
    Disk,
    Storage,
    Walltime,
    Network,
    EventService,
    Transferring,
    Pledge,
    T1Weight,
    MaxIoIntensity,
    FullChain,
    Pilot,
    Io,
    /// Weight and cap rules, and the top-10 cut.
    Final,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Candidates => "candidate list",
            Stage::Status => "status check",
            Stage::Link => "link check",
            Stage::Opportunistic => "opportunistic check",
            Stage::Inactive => "slowness/inactive check",
            Stage::ZeroShare => "zero share check",
            Stage::Jumbo => "jumbo job check",
            Stage::DiskIo => "diskIO check",
            Stage::CoreCount => "core count check",
            Stage::Software => "SW/HW check",
            Stage::Memory => "memory check",
            Stage::Disk => "disk check",
            Stage::Storage => "Storage check",
            Stage::Walltime => "walltime check",
            Stage::Network => "network check",
            Stage::EventService => "EventService check",
            Stage::Transferring => "transferring check",
            Stage::Pledge => "pledge check",
            Stage::T1Weight => "T1 weight check",
            Stage::MaxIoIntensity => "max IO intensity check",
            Stage::FullChain => "full chain check",
            Stage::Pilot => "pilot check",
            Stage::Io => "IO check",
            Stage::Final => "final check",
        })
    }
}

/// A reason's text named by its values, without formatting it: two reasons with equal keys
/// have equal texts (every value the text shows is in the key, a float by its bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TextKey {
    variant: u8,
    words: [u64; 4],
}

impl SkipReason {
    /// The [`TextKey`] of the reasons job brokerage gives most, at its final stage: a weighed
    /// PQ below the weight cut or over its cap. They are 94 % of the skips of an ATLAS week,
    /// a fifth of them distinct, and their weight is a float whose shortest form is most of
    /// the cost of the text. `None` for the other reasons.
    pub fn text_key(&self) -> Option<TextKey> {
        let key = |variant, words| Some(TextKey { variant, words });
        match *self {
            SkipReason::Cap { weight, queued, cutoff, use_assigned } => {
                key(0, [weight.to_bits(), queued, cutoff, u64::from(use_assigned)])
            }
            SkipReason::SeedCapActivated { weight, activated_starting, running } => {
                key(1, [weight.to_bits(), activated_starting, running, 0])
            }
            SkipReason::SeedCapQueued { weight, queued, running, use_assigned } => {
                key(2, [weight.to_bits(), queued, running, u64::from(use_assigned)])
            }
            SkipReason::LowWeight { weight } => key(3, [weight.to_bits(), 0, 0, 0]),
            _ => None,
        }
    }
}

/// Why a PQ was skipped. `Display` = PanDA's message after `  skip site=NAME `.
#[derive(Debug, Clone, PartialEq)]
pub enum SkipReason {
    /// Seed only: "excluding any queue with case-insensitive 'test' in the name".
    TestInName,
    Status(QueueStatus),
    DestBlacklisted {
        endpoint: String,
        nucleus: String,
        write_wan: Downtime,
    },
    LinksFull {
        queued: u64,
        cap: u64,
    },
    LinkBlocked {
        satellite: String,
        nucleus: String,
    },
    /// `op`: the comparison the network variant applied (`>` seed, `>=` code), written into
    /// the message in place of panda-server's fixed `>`.
    LinkSaturated {
        queued: u64,
        op: &'static str,
        cap: u64,
        satellite: String,
        nucleus: String,
    },
    Opportunistic,
    Inactive,
    ZeroShare,
    JumboOnly,
    FewEvents {
        min_events: u64,
        ready_events: u64,
    },
    DiskIo,
    MaxCpuCore {
        site: u32,
        task_max: u32,
    },
    CpuCore {
        site: Option<u32>,
        task: Option<u32>,
    },
    /// The `panda::arch` hook's message.
    Software(String),
    LowMemory {
        need_mb: i64,
    },
    HighMemory {
        need_mb: i64,
    },
    RemoteIo,
    ScratchDisk {
        available_mb: f64,
        need_mb: f64,
    },
    DiskShortage {
        endpoint: String,
        space_gb: f64,
        threshold_gb: f64,
    },
    ReadLanBlacklist,
    WriteLanBlacklist,
    WriteWanBlacklist,
    ReadWanBlacklist,
    SourceBlacklist,
    ShortWalltime {
        site_limit: f64,
        job: f64,
    },
    ScoutWalltime {
        site_limit: f64,
        core_count: Option<u32>,
        seed: bool,
    },
    MinWalltime {
        site_limit: f64,
        core_count: Option<u32>,
        seed: bool,
    },
    LongWalltime {
        site_limit: f64,
        job: Option<f64>,
    },
    Connectivity {
        site: Option<String>,
        task: IpConnectivity,
    },
    IpStack {
        site: Option<String>,
        task: String,
    },
    EsNotAllowed,
    LowPrioEsNotAllowed,
    OnlyEs,
    Transferring {
        transferring: i64,
        limit: u64,
        running: u64,
    },
    NonPledged,
    OverPledged {
        cores: f64,
        pledged: f64,
    },
    NegativeT1Weight,
    MaxIoIntensity {
        task: f64,
        site: f64,
    },
    NotInNucleusForFullChain,
    OnlyForFullChain,
    NoPilot,
    MissingInput {
        size_gb: i64,
        files: i64,
        by_size: bool,
        disk_only: bool,
        size_cutoff_gb: f64,
        files_cutoff: u64,
        io: f64,
        io_cutoff: f64,
    },
    Locked,
    NonLocal,
    Cap {
        weight: f64,
        queued: u64,
        cutoff: u64,
        use_assigned: bool,
    },
    /// Seed: "activated + starting > 2 × running".
    SeedCapActivated {
        weight: f64,
        activated_starting: u64,
        running: u64,
    },
    /// Seed: "defined+activated+assigned+starting > 2 × running".
    SeedCapQueued {
        weight: f64,
        queued: u64,
        running: u64,
        use_assigned: bool,
    },
    LowNetworkWeight {
        weight_nw: f64,
        threshold: f64,
    },
    CapRt {
        queued: u64,
        cutoff: u64,
        running_rt: u64,
        use_assigned: bool,
        resource_type: String,
    },
    OthersBootstrap {
        weight: f64,
    },
    BelowMinWeight {
        param: String,
        min: f64,
        weight: f64,
    },
    LowRunningForT1 {
        n_running_all: u64,
    },
    LowWeight {
        weight: f64,
    },
    /// Not PanDA's: the weight is not a finite number (e.g. `nFilesToMove = -100`, where PanDA's
    /// `/ (nFilesToMove / 100 + 1)` raises ZeroDivisionError and the brokerage fails); the PQ is
    /// skipped as a temporary problem instead of being given weight 0, the bootstrap weight.
    WeightNotComputable {
        weight: f64,
        n_files_to_move: i64,
    },
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use SkipReason::*;
        let p = crate::panda::pyfmt::PyFloat;
        match self {
            TestInName => write!(f, "since 'test' is in its name criteria=-test"),
            Status(s) => write!(f, "due to status={} criteria=-status", s.as_str()),
            DestBlacklisted { endpoint, nucleus, write_wan } => write!(
                f,
                "due to {endpoint} at nucleus={nucleus} unwritable over WAN write_wan={}: criteria=-dest_blacklisted",
                write_wan.as_str()
            ),
            LinksFull { queued, cap } => write!(
                f,
                "due to too many output files being transferred to the nucleus {queued}(>{cap} total limit): criteria=-links_full"
            ),
            LinkBlocked { satellite, nucleus } => write!(
                f,
                "due to agis_closeness=-1, from satellite={satellite} to nucleus={nucleus}: criteria=-link_unusable"
            ),
            LinkSaturated { queued, op, cap, satellite, nucleus } => write!(
                f,
                "due to too many output files queued in the channel {queued}({op}{cap} link limit), from satellite={satellite} to nucleus={nucleus}: criteria=-link_unusable"
            ),
            Opportunistic => write!(f, "to avoid opportunistic for high priority jobs criteria=-opportunistic"),
            Inactive => write!(
                f,
                "since high prio/scouts/merge needs to avoid inactive sites (laststart is older than 2h) criteria=-inactive"
            ),
            ZeroShare => write!(f, "due to zero share criteria=-zeroshare"),
            JumboOnly => write!(f, "since it is only for jumbo jobs criteria=-jumbo"),
            FewEvents { min_events, ready_events } => {
                write!(f, "since not enough events ({min_events}<{ready_events}) for jumbo criteria=-fewevents")
            }
            DiskIo => write!(f, "due to diskIO overload criteria=-diskIO"),
            MaxCpuCore { site, task_max } => {
                write!(f, "due to larger core count site:{site} than task_max={task_max} criteria=-max_cpucore")
            }
            CpuCore { site, task } => {
                write!(f, "due to core mismatch site:{} <> task:{} criteria=-cpucore", opt(site), opt(task))
            }
            Software(m) => f.write_str(m),
            LowMemory { need_mb } => write!(
                f,
                "due to sue to insufficient RAM less than less than job's core-scaled requirement {need_mb} MB criteria=-lowmemory"
            ),
            HighMemory { need_mb } => write!(
                f,
                "due to RAM lower limit greater than than job's core-scaled requirement {need_mb} MB criteria=-highmemory"
            ),
            RemoteIo => write!(f, "since direct IO is disabled criteria=-remoteio"),
            ScratchDisk { available_mb, need_mb } => {
                write!(f, "due to small scratch disk {} MB less than {} MB criteria=-disk", p(*available_mb), need_mb)
            }
            DiskShortage { endpoint, space_gb, threshold_gb } => {
                write!(
                    f,
                    "due to disk shortage at {endpoint} {}GB < {}GB criteria=-disk",
                    p(*space_gb),
                    p(*threshold_gb)
                )
            }
            ReadLanBlacklist => {
                write!(f, "since input endpoints cannot read over LAN, read_lan is not ON criteria=-read_lan_blacklist")
            }
            WriteLanBlacklist => write!(
                f,
                "since output endpoints cannot write over LAN, write_lan is not ON criteria=-write_lan_blacklist"
            ),
            WriteWanBlacklist => write!(
                f,
                "since input endpoints cannot receive files over WAN, write_wan is not ON criteria=-write_wan_blacklist"
            ),
            ReadWanBlacklist => write!(
                f,
                "since output endpoints cannot send out files over WAN, read_wan is not ON criteria=-read_wan_blacklist"
            ),
            SourceBlacklist => write!(
                f,
                "since source endpoints cannot transfer files over WAN and it is satellite criteria=-source_blacklist"
            ),
            ShortWalltime { site_limit, job } => write!(
                f,
                "due to short site walltime {} (site upper limit) less than {} criteria=-shortwalltime",
                p(*site_limit),
                p(*job)
            ),
            ScoutWalltime { site_limit, core_count, seed } | MinWalltime { site_limit, core_count, seed } => {
                let who = if matches!(self, ScoutWalltime { .. }) { "scout" } else { "walltime-undefined" };
                let need = match (seed, core_count) {
                    (true, _) => "24hr".to_string(),
                    (false, Some(c)) => format!("24hr*10HS06s*{c}cores"),
                    (false, None) => "24hr*10HS06s".to_string(),
                };
                let crit = if who == "scout" { "scout_walltime" } else { "min_walltime" };
                write!(
                    f,
                    "due to site walltime {} (site upper limit) insufficient for {who} jobs (requiring {need} at least) criteria=-{crit}",
                    p(*site_limit)
                )
            }
            LongWalltime { site_limit, job } => write!(
                f,
                "due to short job walltime {} (site lower limit) greater than {} criteria=-longwalltime",
                p(*site_limit),
                job.map_or_else(|| "None".to_string(), py_float)
            ),
            Connectivity { site, task } => write!(
                f,
                "due to insufficient connectivity site={} vs task={} criteria=-network",
                opt(site),
                task.as_str()
            ),
            IpStack { site, task } => {
                write!(f, "due to IP stack mismatch site={} vs task={task} criteria=-network", opt(site))
            }
            EsNotAllowed => write!(f, "since EventService is not allowed criteria=-es"),
            LowPrioEsNotAllowed => write!(f, "since low prio EventService is not allowed criteria=-eshigh"),
            OnlyEs => write!(f, "since only EventService is allowed criteria=-nones"),
            Transferring { transferring, limit, running } => write!(
                f,
                "due to too many transferring={transferring} greater than max({limit},2x{running}) criteria=-transferring"
            ),
            NonPledged => write!(f, "to avoid opportunistic in case of work shortage criteria=-non_pledged"),
            OverPledged { cores, pledged } => write!(
                f,
                "since nCores(running+starting)={} more than pledgedCPU={} in case of work shortage criteria=-over_pledged",
                p(*cores),
                p(*pledged)
            ),
            NegativeT1Weight => write!(f, "due to negative T1 weight criteria=-t1weight"),
            MaxIoIntensity { task, site } => write!(
                f,
                "since ioIntensity={} is larger than site max_io_intensity={} criteria=-max_io_intensity",
                p(*task),
                p(*site)
            ),
            NotInNucleusForFullChain => write!(f, "not in nucleus for full chain criteria=-full_chain"),
            OnlyForFullChain => write!(f, "only for full chain criteria=-not_full_chain"),
            NoPilot => write!(f, "due to no pilot criteria=-nopilot"),
            MissingInput { size_gb, files, by_size, disk_only, size_cutoff_gb, files_cutoff, io, io_cutoff } => {
                let disk = if *disk_only { "disk " } else { "" };
                if *by_size {
                    write!(
                        f,
                        "since size of missing {disk}input is too large ({size_gb} GB > {} GB) ",
                        p(*size_cutoff_gb)
                    )?;
                } else {
                    write!(
                        f,
                        "since the number of missing {disk}input files is too large ({files} > {files_cutoff}) "
                    )?;
                }
                write!(f, "for IO intensive task ({} > {} kBPerS) criteria=-io", p(*io), p(*io_cutoff))
            }
            Locked => write!(f, "due to locked by another brokerage criteria=-lock"),
            NonLocal => write!(f, "due to non-local data criteria=-non_local"),
            Cap { weight, queued, cutoff, use_assigned } => {
                if *use_assigned {
                    write!(f, "weight={} due to nDefined+nActivated+nAssigned+nStarting={queued} ", p(*weight))?;
                } else {
                    write!(
                        f,
                        "weight={} due to nDefined+nActivated+nStarting={queued} (nAssigned ignored due to data locally available) ",
                        p(*weight)
                    )?;
                }
                write!(f, "greater than max({cutoff},2*nRun) criteria=-cap")
            }
            SeedCapActivated { weight, activated_starting, running } => write!(
                f,
                "weight={} due to nActivated+nStarting={activated_starting} greater than 2*nRun=2*{running} criteria=-cap",
                p(*weight)
            ),
            SeedCapQueued { weight, queued, running, use_assigned } => {
                let what = if *use_assigned {
                    "nDefined+nActivated+nAssigned+nStarting"
                } else {
                    "nDefined+nActivated+nStarting (nAssigned ignored due to data locally available)"
                };
                write!(
                    f,
                    "weight={} due to {what}={queued} greater than 2*nRun=2*{running} criteria=-cap_rt",
                    p(*weight)
                )
            }
            LowNetworkWeight { weight_nw, threshold } => write!(
                f,
                "due to low network weight for express task weightNw={} threshold={} criteria=-lowNetworkWeight",
                p(*weight_nw),
                p(*threshold)
            ),
            CapRt { queued, cutoff, running_rt, use_assigned, resource_type } => {
                if *use_assigned {
                    write!(f, "since nDefined_rt+nActivated_rt+nAssigned_rt+nStarting_rt={queued} ")?;
                } else {
                    write!(
                        f,
                        "since nDefined_rt+nActivated_rt+nStarting_rt={queued} (nAssigned_rt ignored due to data locally available) "
                    )?;
                }
                write!(
                    f,
                    "with gshare+resource_type({resource_type}) is greater than max({cutoff},2*nRun_rt=2*{running_rt}) criteria=-cap_rt"
                )
            }
            OthersBootstrap { weight } => write!(
                f,
                "as others being bootstrapped (no running or queued jobs), weight={} criteria=-others_bootstrap",
                p(*weight)
            ),
            BelowMinWeight { param, min, weight } => write!(
                f,
                "due to weight below the minimum {param}={}, weight={} criteria=-below_min_weight",
                p(*min),
                p(*weight)
            ),
            LowRunningForT1 { n_running_all } => {
                write!(f, "due to low total nRunningAll={n_running_all} for negative T1 weight criteria=-t1_weight")
            }
            LowWeight { weight } => write!(f, "due to low weight, weight={} criteria=-low_weight", p(*weight)),
            WeightNotComputable { weight, n_files_to_move } => write!(
                f,
                "since its weight could not be computed (weight={} nFilesToMove={n_files_to_move}; PanDA would raise here) criteria=-weight",
                p(*weight)
            ),
        }
    }
}

/// A PQ that is not a candidate, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skip {
    /// Index into the queue slice given to [`super::broker`].
    pub queue: usize,
    /// The PQ's name (for the log line).
    pub name: String,
    /// The filter that removed it.
    pub stage: Stage,
    pub reason: SkipReason,
    /// A temporary problem (`siteSkippedTmp`): the PQ went through the later filters and was
    /// removed at the "temporary problem check"; the reason is the last one recorded.
    pub temporary: bool,
}

impl fmt::Display for Skip {
    /// PanDA's log line, two leading spaces included.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sep = if matches!(self.reason, SkipReason::LongWalltime { .. }) { " " } else { "=" };
        write!(f, "  skip site{sep}{} {}", self.name, self.reason)
    }
}
