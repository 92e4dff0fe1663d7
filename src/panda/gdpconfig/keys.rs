//! Which field reads which gdpconfig row: `(app, component, key)` → section and field, the
//! reference's parameter tables (panda.md §1–§7) as data. One row may feed several sections
//! (`core/WORK_SHORTAGE` is read by the job broker and by the throttle).

/// A section of [`super::GdpConfig`]: one module's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Section {
    Network,
    Dispatch,
    Throttle,
}

impl Section {
    /// The field name in [`super::GdpConfig`] (and in the scenario).
    pub fn name(self) -> &'static str {
        match self {
            Self::Network => "network",
            Self::Dispatch => "dispatch",
            Self::Throttle => "throttle",
        }
    }
}

/// One gdpconfig key and the field that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySpec {
    /// `app` column PanDA reads it with (`jedi` for JEDI agents, `pandaserver` for the server).
    pub app: &'static str,
    pub component: &'static str,
    /// The key; for a family (`family` true) the prefix up to and including the last `_`.
    pub key: &'static str,
    pub section: Section,
    /// Field of the section (a map keyed by the suffix for a family).
    pub field: &'static str,
    pub family: bool,
}

const fn plain(
    app: &'static str,
    component: &'static str,
    key: &'static str,
    section: Section,
    field: &'static str,
) -> KeySpec {
    KeySpec { app, component, key, section, field, family: false }
}

const fn family(
    app: &'static str,
    component: &'static str,
    key: &'static str,
    section: Section,
    field: &'static str,
) -> KeySpec {
    KeySpec { app, component, key, section, field, family: true }
}

use Section::*;

/// Every key pilotsim reads, with its real `(app, component)` (reference §2 "Parameters",
/// §3, §7; `JobThrottlerBase` uses `comp_name` `prod_job_throttler`, app `jedi`;
/// `getSortingCriteria` uses component `jobdispatch` with the default app `pandaserver`).
pub static KEYS: &[KeySpec] = &[
    // §2–§3: network weight (AtlasProdJobBroker.py L53-76)
    plain("jedi", "jobbroker", "NW_ACTIVE", Network, "nw_active"),
    plain("jedi", "jobbroker", "NW_QUEUE_IMPORTANCE", Network, "nw_queue_importance"),
    plain("jedi", "jobbroker", "NW_THRESHOLD", Network, "nw_threshold"),
    plain("jedi", "jobbroker", "NW_WEIGHT_MULTIPLIER", Network, "nw_weight_multiplier"),
    plain("jedi", "jobbroker", "NQUEUED_SAT_CAP", Network, "nqueued_sat_cap"),
    plain("jedi", "jobbroker", "NQUEUED_NUC_CAP_FOR_JOBS", Network, "nqueued_nuc_cap_for_jobs"),
    // §7: dispatch (entity_module L807-826)
    plain("pandaserver", "jobdispatch", "SLOPPY_DISPATCH_RATIO", Dispatch, "sloppy_dispatch_ratio"),
    // §7: JEDI throttle (JobThrottlerBase.toBeThrottledBase)
    plain("jedi", "prod_job_throttler", "THROTTLE_THRESHOLD", Throttle, "throttle_threshold"),
    plain(
        "jedi",
        "prod_job_throttler",
        "THROTTLE_THRESHOLD_FOR_WORK_SHORTAGE",
        Throttle,
        "throttle_threshold_for_work_shortage",
    ),
    plain("jedi", "core", "WORK_SHORTAGE", Throttle, "work_shortage"),
    family("jedi", "prod_job_throttler", "NQUEUELIMIT_", Throttle, "nqueuelimit"),
    family("jedi", "prod_job_throttler", "NRUNNINGCAP_", Throttle, "nrunningcap"),
    family("jedi", "prod_job_throttler", "NQUEUECAP_", Throttle, "nqueuecap"),
];

/// The specs that read `component/key`, each with the family suffix: every exact match, else
/// the longest family prefix with a non-empty suffix (per section).
pub fn find_keys<'k>(component: &str, key: &'k str) -> Vec<(&'static KeySpec, Option<&'k str>)> {
    let exact: Vec<_> =
        KEYS.iter().filter(|s| !s.family && s.component == component && s.key == key).map(|s| (s, None)).collect();
    if !exact.is_empty() {
        return exact;
    }
    let mut best: Vec<(&'static KeySpec, Option<&'k str>)> = Vec::new();
    for s in KEYS.iter().filter(|s| s.family && s.component == component) {
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
