//! Which field reads which gdpconfig row: `(app, component, key)` → section and field. The
//! keys are the modules' own lists (`GDPCONFIG_KEYS` of each module, the reference's parameter
//! tables as data); this file adds the `app` each component is read with and the field names.
//! One row may feed several sections (`core/WORK_SHORTAGE` is read by the job broker and by the
//! throttle; `jobbroker/MIN_WEIGHT_*` by both job brokers).

use std::sync::OnceLock;

use crate::panda::{anal_broker, harvester, job_broker, task_broker, timeouts};

/// A section of [`super::GdpConfig`]: one module's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Section {
    TaskBrokerage,
    JobBroker,
    AnalBroker,
    Timeouts,
    Dispatch,
    Throttle,
    Meanrss,
}

impl Section {
    /// The field name in [`super::GdpConfig`] (and in the scenario).
    pub fn name(self) -> &'static str {
        match self {
            Self::TaskBrokerage => "task_brokerage",
            Self::JobBroker => "job_broker",
            Self::AnalBroker => "anal_broker",
            Self::Timeouts => "timeouts",
            Self::Dispatch => "dispatch",
            Self::Throttle => "throttle",
            Self::Meanrss => "meanrss",
        }
    }

    /// The `(component, key)` pairs the section's module reads (families end in `_`).
    fn keys(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Self::TaskBrokerage => task_broker::GDPCONFIG_KEYS,
            Self::JobBroker => job_broker::GDPCONFIG_KEYS,
            Self::AnalBroker => anal_broker::GDPCONFIG_KEYS,
            Self::Timeouts => timeouts::GDPCONFIG_KEYS,
            Self::Dispatch => DISPATCH_KEYS,
            Self::Throttle => THROTTLE_KEYS,
            Self::Meanrss => harvester::GDPCONFIG_KEYS,
        }
    }

    const ALL: [Section; 7] = [
        Self::TaskBrokerage,
        Self::JobBroker,
        Self::AnalBroker,
        Self::Timeouts,
        Self::Dispatch,
        Self::Throttle,
        Self::Meanrss,
    ];
}

/// `getSortingCriteria` (entity_module L815).
const DISPATCH_KEYS: &[(&str, &str)] = &[("jobdispatch", "SLOPPY_DISPATCH_RATIO")];
/// `JobThrottlerBase.toBeThrottledBase` with `comp_name` `prod_job_throttler`.
const THROTTLE_KEYS: &[(&str, &str)] = &[
    ("prod_job_throttler", "THROTTLE_THRESHOLD"),
    ("prod_job_throttler", "THROTTLE_THRESHOLD_FOR_WORK_SHORTAGE"),
    ("core", "WORK_SHORTAGE"),
    ("prod_job_throttler", "NQUEUELIMIT_"),
    ("prod_job_throttler", "NRUNNINGCAP_"),
    ("prod_job_throttler", "NQUEUECAP_"),
];

/// The `app` a component is read with (panda-server 1.0.4): JEDI's agents pass `"jedi"`
/// (`APP = "jedi"` of the brokers, `self.app` of the throttlers, the task broker's and the
/// watchdog's explicit `"jedi"`); the server's daemons and the calls without an app use the
/// default `"pandaserver"` (watcher, job_timeout, rebroker, jobdispatch, meanrss, and
/// `prio_mgr`/`analy_eval`, which even the analysis broker reads without `"jedi"`).
pub fn app_of(component: &str) -> &'static str {
    match component {
        "taskbrokerage" | "jobbroker" | "anal_jobbroker" | "core" | "watchdog" | "prod_job_throttler"
        | "anal_job_throttler" => "jedi",
        _ => "pandaserver",
    }
}

/// Whether PanDA passes a VO when it reads the key: `getConfigValue` filters by
/// `vo=:vo or vo IS NULL` only when a VO is given (base_module L257), so a key read without one
/// (the server daemons' and `prio_mgr`'s, and `NQUEUED_NUC_CAP` in `getBackloggedNuclei`)
/// sees the rows of every VO.
pub fn reads_vo(component: &str, key: &str) -> bool {
    match component {
        "jobdispatch" | "job_timeout" | "rebroker" | "meanrss" | "prio_mgr" => false,
        "taskbrokerage" => key != "NQUEUED_NUC_CAP",
        _ => true,
    }
}

/// Family fields whose name is not the prefix in snake case (the plain key of the same stem
/// holds that name).
const FAMILY_FIELDS: &[(Section, &str, &str)] = &[
    (Section::TaskBrokerage, "DISK_THRESHOLD_", "disk_threshold_by_queue"),
    (Section::Timeouts, "ANALY_TIMEOUT_", "analy_timeout_by_group"),
];

/// One gdpconfig key and the field that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySpec {
    /// `app` column PanDA reads it with.
    pub app: &'static str,
    pub component: &'static str,
    /// The key; for a family (`family` true) the prefix up to and including the last `_`.
    pub key: &'static str,
    pub section: Section,
    /// Field of the section (a map keyed by the suffix for a family).
    pub field: String,
    pub family: bool,
}

/// Every key pilotsim reads, built once from the modules' lists.
pub fn keys() -> &'static [KeySpec] {
    static KEYS: OnceLock<Vec<KeySpec>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let mut all = Vec::new();
        for section in Section::ALL {
            for &(component, key) in section.keys() {
                let family = key.ends_with('_');
                let field = FAMILY_FIELDS
                    .iter()
                    .find(|(s, k, _)| *s == section && *k == key)
                    .map_or_else(|| key.trim_end_matches('_').to_ascii_lowercase(), |(_, _, f)| f.to_string());
                all.push(KeySpec { app: app_of(component), component, key, section, field, family });
            }
        }
        all
    })
}

/// The specs that read `component/key`, each with the family suffix: every exact match, else
/// per section the longest family prefix with a non-empty suffix.
pub fn find_keys<'k>(component: &str, key: &'k str) -> Vec<(&'static KeySpec, Option<&'k str>)> {
    let all = keys();
    let exact: Vec<_> =
        all.iter().filter(|s| !s.family && s.component == component && s.key == key).map(|s| (s, None)).collect();
    if !exact.is_empty() {
        return exact;
    }
    let mut best: Vec<(&'static KeySpec, Option<&'k str>)> = Vec::new();
    for s in all.iter().filter(|s| s.family && s.component == component) {
        let Some(suffix) = key.strip_prefix(s.key) else { continue };
        if suffix.is_empty() {
            continue;
        }
        match best.iter_mut().find(|(b, _)| b.section == s.section) {
            Some(b) if b.0.key.len() < s.key.len() => *b = (s, Some(suffix)),
            Some(_) => {}
            None => best.push((s, Some(suffix))),
        }
    }
    best
}
