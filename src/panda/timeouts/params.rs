//! The gdpconfig keys the timeout rules read, their defaults and PanDA's fallbacks, and the
//! per-cycle heartbeat plan (`workflow_timeout_map`, L276-289).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::engine::time::SimDuration;

use super::inputs::HeartbeatCover;
use super::{hours, hours_f64};

/// Seed default or panda-server 1.0.4 behaviour where they differ (module doc, "Variants").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum TimeoutVariant {
    /// Seed 004: paused PQs and `disableReassign` switch every timeout rule off; holding
    /// high priority is `≥ 800`; transferring jobs with `jobSubStatus` get the workflow's
    /// heartbeat timeout.
    #[default]
    Seed,
    /// panda-server 1.0.4 as written (reference §6 and the code lines in the module doc).
    PandaServer,
}

/// The gdpconfig keys (`ATLAS_PANDA.CONFIG`, read by `getConfigValue(component, key, app, vo)`)
/// of the timeout rules, fast rebrokerage, analysis rebrokerage and the JEDI pending timeout,
/// with the values the code uses when a key is missing. Two `panda_jedi.cfg` settings of the
/// pending timeout and the two transferring constants are here too (not gdpconfig keys).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TimeoutParams {
    /// `HEARTBEAT_TIMEOUT_<workflow>` (component `watcher`, app `pandaserver`, vo `atlas`;
    /// L279-285), hours, by workflow. Missing → 2 h for `production` and `analysis`, no own
    /// pass for any other workflow. 0 is a valid value (`if timeout is not None`).
    pub heartbeat_timeout: BTreeMap<String, f64>,
    /// `TIMEOUT_defined` (component `job_timeout`, app `pandaserver`; L717-720), hours,
    /// default **4**; 0 reads as unset (`if not timeoutValue`).
    pub timeout_defined: f64,
    /// `TIMEOUT_holding` (component `job_timeout`, app `pandaserver`; L417-420), hours, default
    /// **48**; 0 reads as unset.
    pub timeout_holding: f64,
    /// `FAST_REBRO_THRESHOLD_NQNR_RATIO` (component `rebroker`, app `pandaserver`; L524-527),
    /// default **3**; 0 reads as unset.
    pub fast_rebro_threshold_nqnr_ratio: f64,
    /// `FAST_REBRO_THRESHOLD_NQUEUE_FRAC` (component `rebroker`; L525-529), default **0.3**;
    /// 0 reads as unset.
    pub fast_rebro_threshold_nqueue_frac: f64,
    /// `FAST_REBRO_THRESHOLD_NQUEUE_<gshare>` (component `rebroker`; L569-577), by gshare.
    /// Missing or 0 → threshold 10 and a *dry run* (logged, nothing reassigned).
    pub fast_rebro_threshold_nqueue: BTreeMap<String, f64>,
    /// `ANALY_TIMEOUT` (component `rebroker`; L1010-1012), hours, default **12**; 0 is valid
    /// (`if timeoutVal is None`).
    pub analy_timeout: f64,
    /// `ANALY_TIMEOUT_<workingGroup>` (component `rebroker`; L1137-1145), hours, by working
    /// group; missing or 0 → `ANALY_TIMEOUT`.
    pub analy_timeout_by_group: BTreeMap<String, f64>,
    /// `PENDING_TIMEOUT_<prodSourceLabel>` (component `watchdog`, app `jedi`;
    /// TypicalWatchDogBase.py L26), hours, by label; missing → `timeout_for_pending_days`.
    pub pending_timeout: BTreeMap<String, f64>,
    /// Not gdpconfig: `panda_jedi.cfg [watchdog] timeoutForPending`, days (template: **7**;
    /// `timeoutForPendingVoLabel = atlas:managed:7` gives the same). Used as `int(days) × 24` h.
    pub timeout_for_pending_days: f64,
    /// Not gdpconfig: `panda_jedi.cfg [watchdog] waitForPending`, minutes (template: **60**).
    pub wait_for_pending_minutes: f64,
    /// Not gdpconfig: the seed's `transtimehi`, days, for transferring jobs with priority
    /// ≥ 800; in 1.0.4 the constant `TRANSFER_TIMEOUT_HI_PRIORITY = 2` (datasetManager.py L25).
    pub transtimehi: f64,
    /// Not gdpconfig: the seed's `transtimelo`, days, priority < 800;
    /// `TRANSFER_TIMEOUT_LO_PRIORITY = 6` (datasetManager.py L26).
    pub transtimelo: f64,
    /// Seed (default) or panda-server behaviour.
    pub variant: TimeoutVariant,
}

impl Default for TimeoutParams {
    fn default() -> Self {
        Self {
            heartbeat_timeout: BTreeMap::new(),
            timeout_defined: 4.0,
            timeout_holding: 48.0,
            fast_rebro_threshold_nqnr_ratio: 3.0,
            fast_rebro_threshold_nqueue_frac: 0.3,
            fast_rebro_threshold_nqueue: BTreeMap::new(),
            analy_timeout: 12.0,
            analy_timeout_by_group: BTreeMap::new(),
            pending_timeout: BTreeMap::new(),
            timeout_for_pending_days: 7.0,
            wait_for_pending_minutes: 60.0,
            transtimehi: 2.0,
            transtimelo: 6.0,
            variant: TimeoutVariant::Seed,
        }
    }
}

/// `(component, key)` of every gdpconfig key [`TimeoutParams`] reads; override families end
/// in `_`. App `pandaserver` except `watchdog` (app `jedi`).
pub const GDPCONFIG_KEYS: &[(&str, &str)] = &[
    ("watcher", "HEARTBEAT_TIMEOUT_"),
    ("job_timeout", "TIMEOUT_defined"),
    ("job_timeout", "TIMEOUT_holding"),
    ("rebroker", "FAST_REBRO_THRESHOLD_NQNR_RATIO"),
    ("rebroker", "FAST_REBRO_THRESHOLD_NQUEUE_FRAC"),
    ("rebroker", "FAST_REBRO_THRESHOLD_NQUEUE_"),
    ("rebroker", "ANALY_TIMEOUT"),
    ("rebroker", "ANALY_TIMEOUT_"),
    ("watchdog", "PENDING_TIMEOUT_"),
];

/// A usable number: NaN (which would make Python's `timedelta` raise) reads as unset.
fn known(x: f64) -> Option<f64> {
    (!x.is_nan()).then_some(x)
}

/// Python truthiness of a number: unset, 0 and NaN are "not set".
fn truthy(x: f64) -> Option<f64> {
    known(x).filter(|&v| v != 0.0)
}

impl TimeoutParams {
    /// `workflow_timeout_map[workflow]` in hours: the key's value, else 2 for `production` and
    /// `analysis`, else `None` (the workflow has no pass of its own).
    pub fn heartbeat_timeout(&self, workflow: &str) -> Option<f64> {
        match self.heartbeat_timeout.get(workflow).copied().and_then(known) {
            Some(h) => Some(h),
            None if workflow == "production" || workflow == "analysis" => Some(2.0),
            None => None,
        }
    }

    /// `TIMEOUT_defined` in hours as the code uses it (0 or NaN → 4).
    pub fn timeout_defined_hours(&self) -> f64 {
        truthy(self.timeout_defined).unwrap_or(4.0)
    }

    /// `TIMEOUT_holding` in hours as the code uses it (0 or NaN → 48).
    pub fn timeout_holding_hours(&self) -> f64 {
        truthy(self.timeout_holding).unwrap_or(48.0)
    }

    /// `ratioLimit` (0 or NaN → 3).
    pub fn nqnr_ratio(&self) -> f64 {
        truthy(self.fast_rebro_threshold_nqnr_ratio).unwrap_or(3.0)
    }

    /// `fractionLimit` (0 or NaN → 0.3).
    pub fn nqueue_frac(&self) -> f64 {
        truthy(self.fast_rebro_threshold_nqueue_frac).unwrap_or(0.3)
    }

    /// `FAST_REBRO_THRESHOLD_NQUEUE_<gshare>` if it is set and not 0 (else the check is a dry run
    /// with 10).
    pub fn fast_rebro_nqueue_limit(&self, gshare: &str) -> Option<f64> {
        self.fast_rebro_threshold_nqueue.get(gshare).copied().and_then(truthy)
    }

    /// The analysis rebrokerage timeout in hours for a job group: `ANALY_TIMEOUT_<workingGroup>`
    /// when the group has a working group and the key is set and not 0, else `ANALY_TIMEOUT`
    /// (NaN → 12).
    pub fn analy_timeout_hours(&self, working_group: Option<&str>) -> f64 {
        let base = known(self.analy_timeout).unwrap_or(12.0);
        match working_group.filter(|w| !w.is_empty()) {
            Some(wg) => self.analy_timeout_by_group.get(wg).copied().and_then(truthy).unwrap_or(base),
            None => base,
        }
    }

    /// `timeoutForPending` of `pre_action` in hours: `PENDING_TIMEOUT_<label>` if set (0 valid),
    /// else `int(timeoutForPending) × 24`.
    pub fn pending_timeout_hours(&self, label: &str) -> f64 {
        match self.pending_timeout.get(label).copied().and_then(known) {
            Some(h) => h,
            None => self.config_pending_timeout_hours(),
        }
    }

    /// `int(jedi_config.watchdog.timeoutForPending) × 24`: what the high-priority passes of
    /// `AtlasProdWatchDog` use (they never read gdpconfig, L369-377).
    pub fn config_pending_timeout_hours(&self) -> f64 {
        known(self.timeout_for_pending_days).unwrap_or(7.0).trunc() * 24.0
    }

    /// The thresholds of [`super::check`] resolved once (no map look-up per job).
    pub fn resolve(&self) -> Thresholds {
        Thresholds {
            variant: self.variant,
            analysis_heartbeat: hours_f64(self.heartbeat_timeout("analysis").unwrap_or(2.0)),
            timeout_holding: hours_f64(self.timeout_holding_hours()),
            timeout_defined: hours_f64(self.timeout_defined_hours()),
            transtimehi: hours_f64(known(self.transtimehi).unwrap_or(2.0) * 24.0),
            transtimelo: hours_f64(known(self.transtimelo).unwrap_or(6.0) * 24.0),
        }
    }
}

/// What a configuration gets wrong (values the accessors replace or clamp): NaN or negative
/// hours, days or thresholds.
pub fn validate(p: &TimeoutParams) -> Result<(), String> {
    let bad = |x: f64| x.is_nan() || x < 0.0;
    let scalars = [
        ("TIMEOUT_defined", p.timeout_defined),
        ("TIMEOUT_holding", p.timeout_holding),
        ("FAST_REBRO_THRESHOLD_NQNR_RATIO", p.fast_rebro_threshold_nqnr_ratio),
        ("FAST_REBRO_THRESHOLD_NQUEUE_FRAC", p.fast_rebro_threshold_nqueue_frac),
        ("ANALY_TIMEOUT", p.analy_timeout),
        ("timeoutForPending", p.timeout_for_pending_days),
        ("waitForPending", p.wait_for_pending_minutes),
        ("transtimehi", p.transtimehi),
        ("transtimelo", p.transtimelo),
    ];
    if let Some((k, v)) = scalars.iter().find(|(_, v)| bad(*v)) {
        return Err(format!("{k} = {v} must be a number ≥ 0"));
    }
    let maps = [
        ("HEARTBEAT_TIMEOUT_", &p.heartbeat_timeout),
        ("FAST_REBRO_THRESHOLD_NQUEUE_", &p.fast_rebro_threshold_nqueue),
        ("ANALY_TIMEOUT_", &p.analy_timeout_by_group),
        ("PENDING_TIMEOUT_", &p.pending_timeout),
    ];
    for (prefix, m) in maps {
        if let Some((k, v)) = m.iter().find(|(_, v)| bad(**v)) {
            return Err(format!("{prefix}{k} = {v} must be a number ≥ 0"));
        }
    }
    Ok(())
}

/// The per-job thresholds of copyArchive and datasetManager, resolved from [`TimeoutParams`]
/// (negative hours read as 0: with PanDA's negative `timedelta` every job not modified in the
/// future would time out, as with 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    pub variant: TimeoutVariant,
    /// `HEARTBEAT_TIMEOUT_analysis` (default 2 h).
    pub analysis_heartbeat: SimDuration,
    /// `TIMEOUT_holding` (default 48 h).
    pub timeout_holding: SimDuration,
    /// `TIMEOUT_defined` (default 4 h).
    pub timeout_defined: SimDuration,
    /// `transtimehi` (2 d).
    pub transtimehi: SimDuration,
    /// `transtimelo` (6 d).
    pub transtimelo: SimDuration,
}

impl Default for Thresholds {
    fn default() -> Self {
        TimeoutParams::default().resolve()
    }
}

/// `workflow_timeout_map` of one copyArchive cycle (L276-289): `production` and `analysis`
/// always, plus every workflow of an *online* PQ whose `HEARTBEAT_TIMEOUT_<workflow>` is set.
/// Built once per cycle; [`HeartbeatPlan::cover`] then tells each PQ its General Watcher pass.
#[derive(Debug, Clone, PartialEq)]
pub struct HeartbeatPlan {
    production: SimDuration,
    /// Configured workflows other than production/analysis, in first-seen order.
    extra: Vec<(String, SimDuration)>,
}

impl HeartbeatPlan {
    /// From the workflows of the online PQs (duplicates and unset keys are fine).
    pub fn new<'a>(params: &TimeoutParams, online_workflows: impl IntoIterator<Item = &'a str>) -> Self {
        let mut extra: Vec<(String, SimDuration)> = Vec::new();
        for w in online_workflows {
            if w == "production" || w == "analysis" || extra.iter().any(|(x, _)| x == w) {
                continue;
            }
            if let Some(h) = params.heartbeat_timeout(w) {
                extra.push((w.to_string(), hours_f64(h)));
            }
        }
        Self { production: hours_f64(params.heartbeat_timeout("production").unwrap_or(2.0)), extra }
    }

    /// The workflows with their own pass, besides production (`workflows` minus the two).
    pub fn own_workflows(&self) -> impl Iterator<Item = (&str, SimDuration)> {
        self.extra.iter().map(|(w, d)| (w.as_str(), *d))
    }

    /// The General Watcher pass of a PQ with CRIC `workflow` (`None`: unset, or the PQ is not
    /// in `schedconfig_json`, the LEFT JOIN's NULL). With only production and analysis listed,
    /// the production pass takes every PQ (no workflow filter). Otherwise a listed workflow
    /// has its own pass, `production`/`analysis` written as a PQ's workflow are excluded from
    /// the production pass (`NOT IN` all of `workflows`, L452-456) and have no pass, and every
    /// other PQ is production's.
    pub fn cover(&self, workflow: Option<&str>) -> HeartbeatCover {
        let production = HeartbeatCover::Production { timeout: self.production };
        if self.extra.is_empty() {
            return production;
        }
        match workflow {
            None => production,
            Some("production" | "analysis") => HeartbeatCover::Uncovered,
            Some(w) => match self.extra.iter().find(|(x, _)| x == w) {
                Some((_, timeout)) => HeartbeatCover::Workflow { timeout: *timeout },
                None => production,
            },
        }
    }
}

impl Default for HeartbeatPlan {
    /// Only production and analysis, 2 h.
    fn default() -> Self {
        Self { production: hours(2), extra: Vec::new() }
    }
}
