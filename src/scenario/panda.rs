//! The `panda` section of a scenario: PanDA as a WMS beside (or instead of)
//! `dirac`. It names what the PanDA decision modules of `crate::panda` read, with their real
//! defaults, and is validated like the `dirac` section (`panda.queues[3].maxrss`, see
//! [`check`]). `wms::panda` runs it, alone or beside DIRAC on the same grid.
//!
//! ```text
//! panda: (
//!     variant: Seed,                    // or PandaServer: every module's variant at once
//!     variants: (job_broker: Some(PandaServer)),   // per-module override, wins over `variant`
//!     gdpconfig: (...),                 // panda::gdpconfig::GdpConfig: every module's gdpconfig keys
//!                                       // (task_brokerage, job_broker, anal_broker, timeouts, dispatch, throttle, meanrss)
//!     gshares: [ (name: "Data Derivations", value: 10), ... ],   // panda::gshare::ShareNode tree
//!     nuclei: [ (site: "BNL", output_storages: ["BNL_DATADISK"], input_storages: [...]) ],
//!     queues: [ (name: "BNL", site: "BNL", type: production, corecount: Some(8), ...) ],
//!     harvester: (...),                 // [submitter] of panda_harvester.cfg
//!     tasks: [...], analysis: [...], replay: [...],   // the workload, see `workload`
//! )
//! ```
//!
//! Variants: one switch, [`PandaVariant`], sets every module's variant the way
//! `dirac.preset` sets DIRAC's options; [`PandaVariants`] overrides one module.
//!
//! | module | `Seed` (default) | `PandaServer` |
//! |---|---|---|
//! | `panda::task_broker` | `TaskBrokerVariant::Seed` | `TaskBrokerVariant::PandaServer` |
//! | `panda::job_broker` | `JobBrokerVariant::Seed` | `JobBrokerVariant::PandaServer` |
//! | `panda::network` | `NetworkVariant::Seed` | `NetworkVariant::PandaServer` |
//! | `panda::anal_broker` | `AnalBrokerVariant::Seed` | `AnalBrokerVariant::PandaServer` |
//! | `panda::arch` | `ArchVariant::Seed` | `ArchVariant::PandaServer` |
//! | `panda::timeouts` | `TimeoutVariant::Seed` | `TimeoutVariant::PandaServer` |
//! | `panda::harvester` | `AdjusterVariant::Reference` (reference §8) | `AdjusterVariant::HarvesterHead` (the code) |
//!
//! The module parameter structs also carry a `variant` field of their own
//! (`gdpconfig.job_broker.variant`, …); in a scenario those are set from the resolved variants
//! ([`PandaConfig::job_broker_params`] …) and writing anything but the default there is an error
//! that points to `panda.variants`.

pub mod check;
pub mod nuclei;
pub mod queue;
pub mod replay;
pub mod workload;

use serde::{Deserialize, Serialize};

use crate::engine::Period;
use crate::panda::anal_broker::{AnalBrokerParams, AnalBrokerVariant};
use crate::panda::arch::ArchVariant;
use crate::panda::gdpconfig::GdpConfig;
use crate::panda::gshare::ShareNode;
use crate::panda::harvester::adjuster::AdjusterVariant;
use crate::panda::harvester::config::SubmitterSettings;
use crate::panda::job_broker::{JobBrokerParams, JobBrokerVariant};
use crate::panda::network::{NetworkSettings, NetworkVariant};
use crate::panda::task_broker::{TaskBrokerVariant, TaskBrokerageParams};
use crate::panda::timeouts::{TimeoutParams, TimeoutVariant};

pub use queue::{Nucleus, PandaQueue, QueueKind, QueueStatus};
pub use replay::{JobRecord, ReplayStream};
pub use workload::{AnalysisStream, DatasetConfig, ProductionStream, ReplicaConfig};

/// Which PanDA the modules follow where the seed page and panda-server 1.0.4 differ (DESIGN.md
/// "Faithfulness": the seed is the default, the code a named variant).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum PandaVariant {
    /// Seed 004 (the PanDA brokerage documentation) read literally.
    #[default]
    Seed,
    /// panda-server 1.0.4 (and HSF/harvester HEAD for Harvester), reference `panda.md`.
    PandaServer,
}

/// Per-module overrides of [`PandaConfig::variant`]; `None` (default) follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PandaVariants {
    /// Variant of `panda::task_broker`, production task brokerage to nuclei (reference panda.md
    /// §1): `Seed` reads seed 004 literally, `PandaServer` follows panda-server 1.0.4's
    /// `AtlasProdTaskBroker` (e.g. `space_usable` in the space check); `None` (default) follows
    /// `variant`.
    pub task_broker: Option<TaskBrokerVariant>,
    /// Variant of `panda::job_broker`, production job brokerage (reference panda.md §2): `Seed`
    /// reads seed 004 literally, `PandaServer` follows panda-server 1.0.4's
    /// `AtlasProdJobBroker` (e.g. `standby` PQs pass the status filter); `None` (default)
    /// follows `variant`.
    pub job_broker: Option<JobBrokerVariant>,
    /// The link check and network weight of job brokerage; independent of `job_broker`.
    pub network: Option<NetworkVariant>,
    /// Variant of `panda::anal_broker`, analysis job brokerage (reference panda.md §4): `Seed`
    /// reads seed 004 literally (the original basic weight), `PandaServer` follows panda-server
    /// 1.0.4's `AtlasAnalJobBroker` (e.g. the new basic weight); `None` (default) follows
    /// `variant`.
    pub anal_broker: Option<AnalBrokerVariant>,
    /// Variant of `panda::arch`, CPU/GPU architecture and software matching (reference panda.md
    /// §5): `Seed` follows seed 004's rules, `PandaServer` panda-server 1.0.4's
    /// `JsonSoftwareCheck` (e.g. a queue `"arch": [""]` rejects `#x86_64`); `None` (default)
    /// follows `variant`.
    pub arch: Option<ArchVariant>,
    /// Variant of `panda::timeouts`, copyArchive's timeout rules (reference panda.md §6): `Seed`
    /// switches every rule off at paused PQs and with `disableReassign`, `PandaServer` follows
    /// panda-server 1.0.4, which skips only some rules there; `None` (default) follows `variant`.
    pub timeouts: Option<TimeoutVariant>,
    /// Variant of `panda::harvester`, what a Harvester row whose worker limit check fires
    /// submits: `Reference` 0, as reference panda.md §8 writes the rule, `HarvesterHead` the
    /// `nNewWorkers` the row carried in (HSF/harvester HEAD); `None` (default) follows
    /// `variant` (`Seed` → `Reference`, `PandaServer` → `HarvesterHead`).
    pub harvester: Option<AdjusterVariant>,
}

/// Every module's variant, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PandaRules {
    pub task_broker: TaskBrokerVariant,
    pub job_broker: JobBrokerVariant,
    pub network: NetworkVariant,
    pub anal_broker: AnalBrokerVariant,
    pub arch: ArchVariant,
    pub timeouts: TimeoutVariant,
    pub harvester: AdjusterVariant,
}

/// The PanDA WMS configuration of a scenario. Every sub-structure keeps the defaults of the module
/// that owns it (panda-server 1.0.4's code fallbacks, Harvester's template values).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PandaConfig {
    /// Seed (default) or PandaServer for every module (table in the module doc).
    pub variant: PandaVariant,
    /// Per-module overrides of `variant`.
    pub variants: PandaVariants,
    /// The gdpconfig table (`ATLAS_PANDA.CONFIG`) as `pilotsim import gdpconfig` writes it: the
    /// keys of every module, one section per module (task brokerage §1, job brokerage and the
    /// network weight §2–§3, analysis brokerage §4, timeouts §6, dispatch and throttle §7).
    pub gdpconfig: GdpConfig,
    /// The global-share tree (`ATLAS_PANDA.GLOBAL_SHARES`); tasks name a leaf.
    pub gshares: Vec<ShareNode>,
    /// Nuclei and satellites (task brokerage candidates).
    pub nuclei: Vec<Nucleus>,
    /// PanDA queues on the grid's sites and CEs.
    pub queues: Vec<PandaQueue>,
    /// Harvester's `[submitter]` settings (`panda_harvester.cfg`, reference §8).
    pub harvester: SubmitterSettings,
    /// Production task streams.
    pub tasks: Vec<ProductionStream>,
    /// Analysis task streams.
    pub analysis: Vec<AnalysisStream>,
    /// Job-record streams replayed from PanDA job tables (CSV).
    pub replay: Vec<ReplayStream>,
    /// How often PanDA's agents run.
    pub agents: PandaAgents,
}

/// The periods of PanDA's agents, in seconds (each a [`Period`]: at least 1 s). PanDA takes them from its deployment's
/// configuration files (`panda_jedi.cfg` `loopCycle`s, the daemon table), not from code; the
/// defaults are copyArchive's template period where one exists (reference §6) and pilotsim's
/// choices otherwise (each says so). Harvester's cycle is `harvester.lookupTime` (60 s).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PandaAgents {
    /// JEDI's TaskBroker cycle over the tasks in `assigning` (pilotsim's default 300 s; a task
    /// left pending is retried after `task_broker::PENDING_RETRY_S` = 30 min either way).
    pub task_brokerage_s: Period,
    /// JEDI's JobGenerator cycle: throttle, job brokerage and job creation per gshare
    /// (pilotsim's default 60 s).
    pub job_generation_s: Period,
    /// copyArchive, the timeout daemon with fast rebrokerage (cron every 40 min: 2400 s,
    /// `panda::timeouts::COPY_ARCHIVE_PERIOD`).
    pub copy_archive_s: Period,
    /// How often the gshare distribution that orders dispatch is recomputed (10 s, reference §7).
    pub gshare_refresh_s: Period,
    /// The Adder (panda-server's `add_main` daemon): a job whose pilot reported its end waits
    /// `holding` until the Adder's next cycle registers its outputs and makes it `transferring`,
    /// `finished` or `failed` (pilotsim's default 60 s; the deployment's daemon table sets it).
    pub adder_s: Period,
}

impl Default for PandaAgents {
    fn default() -> Self {
        Self {
            task_brokerage_s: Period::secs(300.0),
            job_generation_s: Period::secs(60.0),
            copy_archive_s: Period::secs(2400.0),
            gshare_refresh_s: Period::secs(10.0),
            adder_s: Period::secs(60.0),
        }
    }
}

impl PandaVariant {
    /// Every module's variant for this switch alone.
    pub fn rules(self) -> PandaRules {
        let seed = self == PandaVariant::Seed;
        PandaRules {
            task_broker: if seed { TaskBrokerVariant::Seed } else { TaskBrokerVariant::PandaServer },
            job_broker: if seed { JobBrokerVariant::Seed } else { JobBrokerVariant::PandaServer },
            network: if seed { NetworkVariant::Seed } else { NetworkVariant::PandaServer },
            anal_broker: if seed { AnalBrokerVariant::Seed } else { AnalBrokerVariant::PandaServer },
            arch: if seed { ArchVariant::Seed } else { ArchVariant::PandaServer },
            timeouts: if seed { TimeoutVariant::Seed } else { TimeoutVariant::PandaServer },
            harvester: if seed { AdjusterVariant::Reference } else { AdjusterVariant::HarvesterHead },
        }
    }
}

impl PandaConfig {
    /// The variants, resolved: an override where written, the switch's otherwise.
    pub fn rules(&self) -> PandaRules {
        let base = self.variant.rules();
        let o = &self.variants;
        PandaRules {
            task_broker: o.task_broker.unwrap_or(base.task_broker),
            job_broker: o.job_broker.unwrap_or(base.job_broker),
            network: o.network.unwrap_or(base.network),
            anal_broker: o.anal_broker.unwrap_or(base.anal_broker),
            arch: o.arch.unwrap_or(base.arch),
            timeouts: o.timeouts.unwrap_or(base.timeouts),
            harvester: o.harvester.unwrap_or(base.harvester),
        }
    }

    /// `gdpconfig.task_brokerage` (the variant is passed to the task broker separately).
    pub fn task_brokerage_params(&self) -> &TaskBrokerageParams {
        &self.gdpconfig.task_brokerage
    }

    /// `gdpconfig.job_broker` with the resolved job-broker and network variants.
    pub fn job_broker_params(&self) -> JobBrokerParams {
        let rules = self.rules();
        JobBrokerParams {
            variant: rules.job_broker,
            network_variant: rules.network,
            ..self.gdpconfig.job_broker.clone()
        }
    }

    /// `gdpconfig.anal_broker` with the resolved variant.
    pub fn anal_broker_params(&self) -> AnalBrokerParams {
        AnalBrokerParams { variant: self.rules().anal_broker, ..self.gdpconfig.anal_broker.clone() }
    }

    /// `gdpconfig.timeouts` with the resolved variant.
    pub fn timeout_params(&self) -> TimeoutParams {
        TimeoutParams { variant: self.rules().timeouts, ..self.gdpconfig.timeouts.clone() }
    }

    /// The network weight's settings: the `NW_*`/`NQUEUED_*` keys of `gdpconfig.job_broker` with
    /// the resolved network variant, exactly as job brokerage reads them.
    pub fn network_settings(&self) -> NetworkSettings {
        self.job_broker_params().network()
    }

    /// The queue named `name`.
    pub fn queue(&self, name: &str) -> Option<&PandaQueue> {
        self.queues.iter().find(|q| q.name == name)
    }
}

#[cfg(test)]
mod tests;
