//! The `dirac` section of a scenario: the Registry groups and the options of each DIRAC
//! component, each with its real defaults (owned by the component's module).

use serde::{Deserialize, Serialize};

use crate::dirac::corrector::{CorrectorVariant, ShareCorrections};
use crate::dirac::director::DirectorSettings;
use crate::dirac::job_agent::JobAgentSettings;
use crate::dirac::matcher::{MatchRules, MatcherSettings, PilotIdentity, Resource};
use crate::dirac::preset::Preset;
use crate::dirac::priority::{EntityRecalculationShares, GroupConfig, PrioritySettings, UserPriorityWeighting};
use crate::dirac::taskqueue::{CpuSegments, EmptyTqDeletion, TaskQueueSettings, TqDefinition, canonical};
use crate::grid::config::{Ce, Site};
use crate::workload::JobStream;

/// The DIRAC WMS configuration of a scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiracConfig {
    /// Which DIRAC the options default to: `Seed2009` (the seeds, default) or `Dirac9`
    /// (DIRAC 9.1.22); see `dirac::preset` for what it sets.
    #[serde(default)]
    pub preset: Preset,
    /// The DIRAC Setup jobs are submitted to and pilots serve (2009 TQs required it).
    #[serde(default = "default_setup")]
    pub setup: String,
    /// Registry groups with their JobShare, properties and users.
    #[serde(default)]
    pub groups: Vec<GroupConfig>,
    /// TaskQueueDB options (CPU segments).
    #[serde(default)]
    pub task_queues: TaskQueueSettings,
    /// Matcher options (TQ ordering, jobs per level).
    #[serde(default)]
    pub matcher: MatcherSettings,
    /// Priority options (UserPriority weighting, recalculation period).
    #[serde(default)]
    pub priority: PrioritySettings,
    /// TaskqueueDirector options.
    #[serde(default)]
    pub director: DirectorSettings,
    /// JobAgent options of the pilots.
    #[serde(default)]
    pub job_agent: JobAgentSettings,
    /// PilotStatusAgent options.
    #[serde(default)]
    pub pilot_status: PilotStatusSettings,
    /// Share corrections (`JobScheduling/ShareCorrections`); off by default as in DIRAC.
    #[serde(default)]
    pub share_corrections: ShareCorrections,
    /// A DIRAC CS `.cfg` file (path relative to the scenario file) to read the Registry
    /// groups and the ShareCorrections from, as operators write them. Values written in the
    /// scenario itself win: groups are read only if `groups` is empty, corrections only if
    /// `share_corrections` is left at its defaults.
    #[serde(default)]
    pub cfg_file: Option<String>,
    /// What reading `cfg_file` noticed (a property DIRAC does not know, a JobShare its
    /// `int()` refuses), for `validate` and `run` to print as warnings.
    #[serde(skip)]
    pub cfg_warnings: Vec<String>,
}

fn default_setup() -> String {
    "Production".into()
}

impl Default for DiracConfig {
    /// Every option at its real default, no group (what `dirac: ()` gives).
    fn default() -> Self {
        Self {
            preset: Preset::default(),
            setup: default_setup(),
            groups: Vec::new(),
            task_queues: TaskQueueSettings::default(),
            matcher: MatcherSettings::default(),
            priority: PrioritySettings::default(),
            director: DirectorSettings::default(),
            job_agent: JobAgentSettings::default(),
            pilot_status: PilotStatusSettings::default(),
            share_corrections: ShareCorrections::default(),
            cfg_file: None,
            cfg_warnings: Vec::new(),
        }
    }
}

/// The options that depend on the preset, resolved: the scenario's value where it gives one,
/// the preset's otherwise.
#[derive(Debug, Clone, PartialEq)]
pub struct DiracRules {
    pub cpu_segments: CpuSegments,
    pub matching: MatchRules,
    pub user_priority_weighting: UserPriorityWeighting,
    pub sum_identical_definitions: bool,
    pub entity_recalculation_shares: EntityRecalculationShares,
    /// 0: no limit.
    pub max_jobs_in_tq: u32,
    pub empty_tq_deletion: EmptyTqDeletion,
    /// A JobShare is read with `int()` (DIRAC 9): a non-integer gives 1000.
    pub int_job_share: bool,
    pub corrector_variant: CorrectorVariant,
}

impl DiracConfig {
    /// The preset-dependent options, resolved.
    pub fn rules(&self) -> DiracRules {
        let p = self.preset;
        let tq = &self.task_queues;
        DiracRules {
            cpu_segments: tq.cpu_segments.clone().unwrap_or_else(|| p.cpu_segments()),
            matching: MatchRules {
                ordering: self.matcher.ordering.unwrap_or_else(|| p.ordering()),
                jobs_per_level: self.matcher.jobs_per_level.unwrap_or_else(|| p.jobs_per_level()),
            },
            user_priority_weighting: self
                .priority
                .user_priority_weighting
                .unwrap_or_else(|| p.user_priority_weighting()),
            sum_identical_definitions: self
                .priority
                .sum_identical_definitions
                .unwrap_or_else(|| p.sum_identical_definitions()),
            entity_recalculation_shares: self
                .priority
                .entity_recalculation_shares
                .unwrap_or_else(|| p.entity_recalculation_shares()),
            max_jobs_in_tq: tq.max_jobs_in_tq.unwrap_or_else(|| p.max_jobs_in_tq()),
            empty_tq_deletion: tq.empty_tq_deletion.unwrap_or_else(|| p.empty_tq_deletion()),
            int_job_share: self.priority.int_job_share.unwrap_or_else(|| p.int_job_share()),
            corrector_variant: self.share_corrections.variant.unwrap_or_else(|| p.corrector_variant()),
        }
    }

    /// The task-queue definition of stream `w`'s jobs (seed 001, "Task Queue creation"): owner,
    /// group, this Setup, the CPU time rounded up to its segment, and every requirement list.
    /// `id` interns a name; names carry their kind as a prefix (`user:`, `site:`, `tag:`, …) and
    /// pilot types are lowercased and unprefixed (a private pilot presents `private`); names are
    /// interned in field order. The DIRAC WMS and validation both build their definitions here.
    /// Job types are left empty (the DIRAC WMS sets them after every other name is interned):
    /// the Matcher reads them only from a resource that names some (reference §1.3 item 4).
    pub fn tq_definition(&self, w: &JobStream, id: &mut impl FnMut(&str) -> u32) -> TqDefinition {
        let owner = id(&format!("user:{}", w.owner));
        let group = id(&format!("group:{}", w.group));
        let setup = id(&format!("setup:{}", self.setup));
        // An empty custom list has no segment to fit to; validation refuses it
        // (`CpuSegments::problems`) but builds definitions while it checks.
        let segments = self.rules().cpu_segments;
        let cpu_time = if segments.values().is_empty() { 0 } else { segments.fit(w.cpu_time).round() as u64 };
        let sites = interned(id, "site", &w.sites);
        let banned_sites = interned(id, "site", &w.banned_sites);
        let platforms = interned(id, "platform", &w.platforms);
        let grid_ces = interned(id, "ce", &w.grid_ces);
        let pilot_types = canonical(w.pilot_types.iter().map(|t| id(&t.to_lowercase())).collect());
        let submit_pools = interned(id, "pool", &w.submit_pools);
        let tags = interned(id, "tag", &w.tags);
        TqDefinition {
            owner,
            group,
            setup,
            cpu_time,
            sites,
            banned_sites,
            platforms,
            grid_ces,
            pilot_types,
            submit_pools,
            tags,
            force_generic: w.force_generic,
            job_types: Vec::new(),
        }
    }
}

/// The ids of `names`, each interned as `prefix:name`, sorted and deduplicated (the Matcher
/// searches them; definitions compare as sets).
fn interned(id: &mut impl FnMut(&str) -> u32, prefix: &str, names: &[String]) -> Vec<u32> {
    canonical(names.iter().map(|n| id(&format!("{prefix}:{n}"))).collect())
}

/// What a pilot at a CE tells the Matcher of where it runs (seed 001; reference `dirac.md` §5):
/// its site, its CE (`GridCE`), the CE's platform, tags and `RequiredTag`s, interned as
/// [`DiracConfig::tq_definition`] interns a stream's requirements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CeResource {
    pub site: u32,
    pub grid_ce: u32,
    pub platform: u32,
    /// Sorted.
    pub tags: Vec<u32>,
    /// Sorted.
    pub required_tags: Vec<u32>,
}

impl CeResource {
    /// The description of CE `ce` of `site`, names interned by `id` (site, CE, platform, tags,
    /// required tags, in that order).
    pub fn of(site: &Site, ce: &Ce, id: &mut impl FnMut(&str) -> u32) -> Self {
        Self {
            site: id(&format!("site:{}", site.name)),
            grid_ce: id(&format!("ce:{}", ce.name)),
            platform: id(&format!("platform:{}", ce.platform)),
            tags: interned(id, "tag", &ce.tags),
            required_tags: interned(id, "tag", &ce.required_tags),
        }
    }

    /// The resource description a pilot of `identity` with `cpu_time` left presents here;
    /// `private_type` is the interned `private`, `setup` the interned Setup it serves.
    pub fn resource(&self, identity: PilotIdentity, private_type: u32, setup: u32, cpu_time: f64) -> Resource<'_> {
        Resource {
            identity,
            private_type,
            setup,
            site: self.site,
            grid_ce: self.grid_ce,
            platform: self.platform,
            tags: &self.tags,
            required_tags: &self.required_tags,
            cpu_time,
            job_types: &[],
        }
    }
}

/// PilotStatusAgent options (reference §4.3, "Pilot states").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PilotStatusSettings {
    /// `PilotStalledDays`: a pilot still waiting after this many days is given up (3).
    pub pilot_stalled_days: f64,
}

impl Default for PilotStatusSettings {
    fn default() -> Self {
        Self { pilot_stalled_days: 3.0 }
    }
}
