//! The `dirac` section of a scenario: the Registry groups and the options of each DIRAC
//! component, each with its real defaults (owned by the component's module).

use serde::{Deserialize, Serialize};

use crate::dirac::corrector::ShareCorrections;
use crate::dirac::director::DirectorSettings;
use crate::dirac::job_agent::JobAgentSettings;
use crate::dirac::matcher::MatcherSettings;
use crate::dirac::priority::{GroupConfig, PrioritySettings};
use crate::dirac::taskqueue::TaskQueueSettings;

/// The DIRAC WMS configuration of a scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiracConfig {
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
}

fn default_setup() -> String {
    "Production".into()
}

impl Default for DiracConfig {
    /// Every option at its real default, no group (what `dirac: ()` gives).
    fn default() -> Self {
        Self {
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
