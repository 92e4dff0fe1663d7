//! PanDA queues (PQs) and nuclei as a scenario writes them: CRIC's attribute names in
//! snake_case (CRIC `pandaqueue` JSON, the `schedconfig` columns `SiteSpec` reads), with
//! CRIC's meaning and PanDA's reading of an absent value as the default (reference `panda.md`
//! §2 filters, §4, §5, §8). The grid side of a PQ is its `site` and the CEs Harvester submits to.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::panda::arch::QueueSoftware;
use crate::panda::harvester::config::HarvesterQueueConfig;
use crate::panda::task_broker::{BareNucleus, NucleusState, Role};

/// CRIC `status` of a PQ: the job broker's type, written in CRIC's lowercase spelling.
pub use crate::panda::job_broker::QueueStatus;

/// CRIC `type` of a PQ: which brokerage considers it. `unified` ("grandly unified") queues take
/// production and analysis jobs (`SiteSpec.is_grandly_unified`, reference §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueueKind {
    #[default]
    Production,
    Analysis,
    Unified,
}

impl QueueKind {
    /// CRIC's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            QueueKind::Production => "production",
            QueueKind::Analysis => "analysis",
            QueueKind::Unified => "unified",
        }
    }

    /// CRIC's string read back (`None` for a type PanDA brokers nothing to, e.g. `special`).
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "production" => QueueKind::Production,
            "analysis" => QueueKind::Analysis,
            "unified" => QueueKind::Unified,
            _ => return None,
        })
    }

    /// Production job brokerage considers it.
    pub fn production(self) -> bool {
        self != QueueKind::Analysis
    }

    /// Analysis job brokerage considers it.
    pub fn analysis(self) -> bool {
        self != QueueKind::Production
    }
}

/// The CRIC `capability` values PanDA reads (`ucore` is the one brokerage tests).
pub const CAPABILITIES: &[&str] = &["score", "mcore", "ucore", "himem"];

/// The `astorages` activities of CRIC (Rucio's `read_lan`, `write_lan`, … and PanDA's `pr`
/// production read, `pw` production write, `es_events`, `es_failover`).
pub const ACTIVITIES: &[&str] = &[
    "read_lan",
    "write_lan",
    "read_wan",
    "write_wan",
    "pr",
    "pw",
    "es_events",
    "es_failover",
    "read_lan_analysis",
    "write_lan_analysis",
];

/// A PanDA queue: a CRIC `pandaqueue` on one grid site, submitting through Harvester to some of
/// its CEs. Numbers absent from CRIC are PanDA's "unset", read as no limit (reference §2 filters
/// 12–15: a 0 `maxrss`, `maxtime` or `maxwdir` switches its check off).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PandaQueue {
    /// PQ name (CRIC `name`, PanDA's `computingsite`), unique in the scenario.
    pub name: String,
    /// The grid site it runs on (`sites[].name`); for PanDA its ATLAS site (`atlas_site`).
    pub site: String,
    /// CEs of that site Harvester submits to; empty (default) = every CE of the site.
    #[serde(default)]
    pub ces: Vec<String>,
    /// CRIC `status` (default `online`).
    #[serde(default)]
    pub status: QueueStatus,
    /// CRIC `type`: `production` (default), `analysis` or `unified`.
    #[serde(default, rename = "type")]
    pub kind: QueueKind,
    /// CRIC `capability`: `score`, `mcore`, `ucore` (unified-core: resource types instead of one
    /// core count) or `himem`; `None` = unset.
    #[serde(default)]
    pub capability: Option<String>,
    /// CRIC `resource_type`: `gpu` makes every Harvester worker of the PQ request one GPU
    /// (`htcondor_submitter`: `requestGpus = 1 if resource_type == "gpu"`); `None` = unset (CPU
    /// workers).
    #[serde(default)]
    pub resource_type: Option<String>,
    /// CRIC `corecount`: cores of one pilot; `None` (or 0) = unset, read as single-core
    /// (`SiteSpec.coreCount in [None, 0]`).
    #[serde(default)]
    pub corecount: Option<u32>,
    /// CRIC `corepower`: HS06 per core (default 10, the value PanDA assumes when it is unset:
    /// reference §1 "0.25 GB per cpuTime/corePower/day, corePower assumed 10").
    #[serde(default = "default_corepower")]
    pub corepower: f64,
    /// CRIC `maxrss`: most memory of a job, MB (0 = no limit).
    #[serde(default)]
    pub maxrss: u64,
    /// CRIC `minrss`: least memory of a job, MB (0 = no limit).
    #[serde(default)]
    pub minrss: u64,
    /// CRIC `maxtime`: longest walltime, s (0 = no limit).
    #[serde(default)]
    pub maxtime: u64,
    /// CRIC `mintime`: shortest walltime, s (0 = no limit).
    #[serde(default)]
    pub mintime: u64,
    /// CRIC `maxwdir`: scratch disk of a pilot, MB (0 = no check).
    #[serde(default)]
    pub maxwdir: u64,
    /// CRIC `maxinputsize`, MB; `-1` = always direct I/O; `None` = unset.
    #[serde(default)]
    pub maxinputsize: Option<i64>,
    /// CRIC `maxdiskio`: kB/s per core; `None` (or ≤ 0) = `MAX_DISKIO_DEFAULT` (off).
    #[serde(default)]
    pub maxdiskio: Option<f64>,
    /// CRIC `pledgedcpu` (`-1` = opportunistic, dropped for priority ≥ 800 and scouts;
    /// `None` = unset).
    #[serde(default)]
    pub pledgedcpu: Option<f64>,
    /// CRIC `fairsharepolicy` (`key[op]=value:share,…`, parsed by
    /// `panda::job_broker::FairsharePolicy::parse`; default empty = no policy).
    #[serde(default)]
    pub fairsharepolicy: String,
    /// CRIC `catchall`: comma-separated flags (`bareNucleus=only`, `useJumboJobs`,
    /// `use_only_local_data`, `disableReassign`, …; default empty).
    #[serde(default)]
    pub catchall: String,
    /// CRIC `direct_access_lan` (default false).
    #[serde(default)]
    pub direct_access_lan: bool,
    /// CRIC `direct_access_wan` (default false).
    #[serde(default)]
    pub direct_access_wan: bool,
    /// CRIC `wnconnectivity` (`full#IPv4`, `http`, …; `None` = unset).
    #[serde(default)]
    pub wnconnectivity: Option<String>,
    /// CRIC `astorages`: activity (`read_lan`, `write_lan`, `read_wan`, `write_wan`, `pr`, `pw`,
    /// …) → storage names (`storages[].name`).
    #[serde(default)]
    pub astorages: BTreeMap<String, Vec<String>>,
    /// `Harvester_Slots` of the PQ (`getNumStandby`); `None` = no row.
    #[serde(default)]
    pub num_slots: Option<u64>,
    /// `transferringlimit` (0 = PanDA's 2000).
    #[serde(default)]
    pub transferringlimit: u64,
    /// Releases, cmtconfigs, containers and `architectures` (CPU and GPU) of the PQ, as
    /// `panda::arch` reads them (`SW_TAGS`; default: `releases: ["AUTO"]`, nothing else).
    #[serde(default)]
    pub software: QueueSoftware,
    /// Harvester's queue configuration of the PQ (`queue_config_mapper` defaults).
    #[serde(default)]
    pub harvester: HarvesterQueueConfig,
}

fn default_corepower() -> f64 {
    10.0
}

impl PandaQueue {
    /// GPUs each Harvester worker of the PQ requests: one at a `resource_type: gpu` PQ (the
    /// exact, case-sensitive comparison of `htcondor_submitter`).
    pub fn worker_gpus(&self) -> u32 {
        u32::from(self.resource_type.as_deref() == Some("gpu"))
    }

    /// A queue with every attribute at its default.
    pub fn new(name: &str, site: &str, kind: QueueKind) -> Self {
        Self {
            name: name.to_string(),
            site: site.to_string(),
            ces: Vec::new(),
            resource_type: None,
            status: QueueStatus::Online,
            kind,
            capability: None,
            corecount: None,
            corepower: default_corepower(),
            maxrss: 0,
            minrss: 0,
            maxtime: 0,
            mintime: 0,
            maxwdir: 0,
            maxinputsize: None,
            maxdiskio: None,
            pledgedcpu: None,
            fairsharepolicy: String::new(),
            catchall: String::new(),
            direct_access_lan: false,
            direct_access_wan: false,
            wnconnectivity: None,
            astorages: BTreeMap::new(),
            num_slots: None,
            transferringlimit: 0,
            software: QueueSoftware::default(),
            harvester: HarvesterQueueConfig::default(),
        }
    }

    /// Cores of one pilot: `corecount`, with unset or 0 read as 1.
    pub fn cores(&self) -> u32 {
        self.corecount.filter(|&c| c > 0).unwrap_or(1)
    }

    /// `capability == "ucore"`.
    pub fn is_ucore(&self) -> bool {
        self.capability.as_deref() == Some("ucore")
    }

    /// `catchall` has the item `flag` (a comma-separated item equal to it, or `flag=…`).
    pub fn catchall_has(&self, flag: &str) -> bool {
        self.catchall.split(',').map(str::trim).any(|i| i == flag || i.split_once('=').is_some_and(|(k, _)| k == flag))
    }
}

/// A nucleus (or satellite) of task brokerage: a grid site with its CRIC state, role and
/// endpoints (`NucleusSpec`, reference §1 "Definitions").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nucleus {
    /// The grid site (`sites[].name`), which is the nucleus name tasks are assigned to.
    pub site: String,
    /// CRIC state of the nucleus' site; only `Active` (default) passes brokerage.
    #[serde(default)]
    pub state: NucleusState,
    /// `Nucleus` (default) or `Satellite` (a candidate only for full-chain tasks, with a
    /// bare-nucleus mode).
    #[serde(default)]
    pub role: Role,
    /// `bareNucleus=only|allow` of the site's catchall (`None` default).
    #[serde(default)]
    pub bare_nucleus: Option<BareNucleus>,
    /// Output endpoints by storage-token class (`getAssociatedEndpoint`): entry 0 is the
    /// default output endpoint, entry `k` the one for output datasets of token class `k`.
    #[serde(default)]
    pub output_storages: Vec<String>,
    /// Endpoints associated for input (`is_associated_for_input`).
    #[serde(default)]
    pub input_storages: Vec<String>,
}
