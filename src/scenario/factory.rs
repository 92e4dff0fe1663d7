//! The `factory` section of a scenario (seed 003): pilot factories at sites, each
//! feeding a site's CEs with generic pilots (GPF) or startd pilots (SPF) for DIRAC or, when it
//! names a PanDA queue, for PanDA.
//!
//! ```ron
//! factory: [
//!     Generic(site: "CERN", ces: ["ce1.cern.ch"], rate_per_min: 2.0, max_queued: Some(50)),
//!     Startd(site: "BNL", queue: Some("BNL"), vms: 2, pilot_interval_s: 300,
//!            job_types: KeepOneForAnalysis, lifetime: Exponential(mean: 14400),
//!            standby: Adaptive((max: 200))),
//! ]
//! ```
//!
//! The world runs each factory (`wms::factories`, a provisioner) in place of the WMS's own pilot submission at
//! the CEs it feeds (DIRAC's director and PanDA's Harvester skip them). An absent section
//! changes nothing.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::engine::distribution::Distribution;
use crate::engine::{Period, SimDuration};
use crate::factory::generic::{GeneratorSettings, Rate};
use crate::factory::standby::StandbyPolicy;
use crate::factory::startd::{JobTypePolicy, OnRemoval, StartdSettings};
use crate::scenario::types::Scenario;
use crate::scenario::validate::{Checker, Problem, list};

/// Most VMs a startd pilot may split its slot into (pilotsim's bound).
pub const MAX_VMS: u32 = 64;

/// One pilot factory: where it submits and what (seed 003 §1-§3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum FactoryConfig {
    /// The Generic Pilot Factory (seed §1): a Generator submitting generic pilots at rate Gp.
    Generic {
        /// The site (`sites[].name`) whose head node runs the schedd and the Generator.
        site: String,
        /// CEs of that site it submits to; empty (default) = every CE of the site.
        #[serde(default)]
        ces: Vec<String>,
        /// The PanDA queue its pilots fetch jobs from; `None` (default): DIRAC's task queues.
        #[serde(default)]
        queue: Option<String>,
        /// Gp: generic pilots per minute (≥ 0.001).
        rate_per_min: f64,
        /// Most generic pilots queued at the schedd and the batch system; `None`: no cap.
        #[serde(default)]
        max_queued: Option<u32>,
        /// Most generic pilots queued or running; `None`: no cap.
        #[serde(default)]
        max_total: Option<u32>,
        /// The Generator's cycle, seconds (seed: a heartbeat "every tens of seconds"; pilotsim's
        /// default 60).
        #[serde(default = "default_cycle_s")]
        cycle_s: Period,
        /// tp: seconds the pilot script runs on the worker node before it asks for a job
        /// (seed "Pilot Submission Efficiency"; pilotsim's default 60).
        #[serde(default = "default_step_s")]
        pilot_script_s: f64,
        /// tpw: seconds to bring the job from the WMS to the worker node, spent in the slot
        /// before the payload runs (pilotsim's default 60).
        #[serde(default = "default_step_s")]
        job_fetch_s: f64,
    },
    /// The Startd-based Pilot Factory (seed §2-§3): a Generator keeping standby startd pilots
    /// queued; each splits its batch slot into VMs and runs the pilot script at a fixed rate.
    Startd {
        /// The site (`sites[].name`) whose head node runs the schedd and the Generator.
        site: String,
        /// CEs of that site it submits to; empty (default) = every CE of the site.
        #[serde(default)]
        ces: Vec<String>,
        /// The PanDA queue its pilots fetch jobs from; `None` (default): DIRAC's task queues.
        #[serde(default)]
        queue: Option<String>,
        /// VMs per startd pilot (1..=64; default 2, the seed's example).
        #[serde(default = "default_vms")]
        vms: u32,
        /// Seconds between two runs of the pilot script (pilotsim's default 300).
        #[serde(default = "default_pilot_interval_s")]
        pilot_interval_s: Period,
        /// Which job a pilot run asks for (default `Any`).
        #[serde(default)]
        job_types: JobTypePolicy,
        /// End and requeue background jobs when a foreground job starts (default false:
        /// suspend them, as in the seed's example).
        #[serde(default)]
        preempt_background: bool,
        /// CPUs of the slot shared by its VMs; `None` (default): one per VM.
        #[serde(default)]
        slot_cpus: Option<f64>,
        /// How long the batch system lets a startd pilot hold its slot, seconds (pilotsim's
        /// default: exponential, mean 4 h; the seed says "within a few hours or even shorter").
        #[serde(default = "default_lifetime")]
        lifetime: Distribution,
        /// What the removal does to its jobs (default `Requeue`).
        #[serde(default)]
        on_removal: OnRemoval,
        /// How many standby startd pilots the Generator keeps queued (default `Fixed(1)`).
        #[serde(default)]
        standby: StandbyPolicy,
        /// The Generator's cycle, seconds (default 60).
        #[serde(default = "default_cycle_s")]
        cycle_s: Period,
        /// tp': seconds one run of the pilot script takes before it asks for a job (default 60).
        #[serde(default = "default_step_s")]
        pilot_script_s: f64,
        /// tpw': seconds to bring the job to the VM before it runs (default 60).
        #[serde(default = "default_step_s")]
        job_fetch_s: f64,
    },
}

fn default_cycle_s() -> Period {
    Period::secs(60.0)
}
fn default_step_s() -> f64 {
    60.0
}
fn default_vms() -> u32 {
    2
}
fn default_pilot_interval_s() -> Period {
    Period::secs(300.0)
}
fn default_lifetime() -> Distribution {
    Distribution::Exponential { mean: 14_400.0 }
}

impl FactoryConfig {
    /// (site, CEs, PanDA queue) the factory submits to.
    pub fn target(&self) -> (&str, &[String], Option<&str>) {
        match self {
            FactoryConfig::Generic { site, ces, queue, .. } | FactoryConfig::Startd { site, ces, queue, .. } => {
                (site, ces, queue.as_deref())
            }
        }
    }

    /// The Generator's cycle.
    pub fn cycle(&self) -> SimDuration {
        match self {
            FactoryConfig::Generic { cycle_s, .. } | FactoryConfig::Startd { cycle_s, .. } => cycle_s.duration(),
        }
    }

    /// (tp, tpw) in seconds, as written.
    fn steps_s(&self) -> (f64, f64) {
        match self {
            FactoryConfig::Generic { pilot_script_s, job_fetch_s, .. }
            | FactoryConfig::Startd { pilot_script_s, job_fetch_s, .. } => (*pilot_script_s, *job_fetch_s),
        }
    }

    /// (tp, tpw): the pilot script's run and the job's fetch.
    pub fn steps(&self) -> (SimDuration, SimDuration) {
        match self {
            FactoryConfig::Generic { pilot_script_s, job_fetch_s, .. }
            | FactoryConfig::Startd { pilot_script_s, job_fetch_s, .. } => {
                (SimDuration::from_secs_f64(*pilot_script_s), SimDuration::from_secs_f64(*job_fetch_s))
            }
        }
    }

    /// The grid ids of the CEs it feeds (its `ces`, or every CE of its site), in grid order:
    /// CEs are numbered site by site, in scenario order (`grid::Grid::new`).
    pub fn ce_ids(&self, sites: &[crate::grid::config::Site]) -> Vec<crate::ids::CeId> {
        let (site, ces, _) = self.target();
        let mut out = Vec::new();
        let mut id = 0;
        for s in sites {
            for ce in &s.ces {
                if s.name == site && (ces.is_empty() || ces.contains(&ce.name)) {
                    out.push(id);
                }
                id += 1;
            }
        }
        out
    }

    /// What identifies the factory, whatever its place in the list: its site, the WMS it
    /// feeds (the PanDA queue, or `DIRAC`) and the CEs it submits to (its `ces`, or every CE
    /// of the site, in scenario order). Validation allows one factory per (site, WMS, CE), so
    /// no two factories share it. Keys the factory's random streams (DESIGN.md,
    /// "Determinism": streams keyed by identity, never by creation order).
    pub fn identity(&self, sites: &[crate::grid::config::Site]) -> String {
        let (site, ces, queue) = self.target();
        let fed: Vec<&str> = sites
            .iter()
            .filter(|s| s.name == site)
            .flat_map(|s| &s.ces)
            .filter(|ce| ces.is_empty() || ces.contains(&ce.name))
            .map(|ce| ce.name.as_str())
            .collect();
        format!("{site}:{}:{}", queue.unwrap_or("DIRAC"), fed.join(","))
    }

    /// A generic factory's rate policy.
    pub fn generator_settings(&self) -> Option<GeneratorSettings> {
        match self {
            FactoryConfig::Generic { rate_per_min, max_queued, max_total, .. } => {
                Some(GeneratorSettings { rate_per_min: *rate_per_min, max_queued: *max_queued, max_total: *max_total })
            }
            FactoryConfig::Startd { .. } => None,
        }
    }

    /// A startd factory's pilot settings.
    pub fn startd_settings(&self) -> Option<StartdSettings> {
        match self {
            FactoryConfig::Startd {
                vms,
                pilot_interval_s,
                job_types,
                preempt_background,
                slot_cpus,
                on_removal,
                ..
            } => Some(StartdSettings {
                vms: *vms,
                pilot_interval: pilot_interval_s.duration(),
                job_types: *job_types,
                preempt_background: *preempt_background,
                on_removal: *on_removal,
                slot_cpus: *slot_cpus,
            }),
            FactoryConfig::Generic { .. } => None,
        }
    }
}

/// Check the `factory` section: known sites, CEs of that site, PanDA queues of that site (or a
/// `dirac` section for a factory without one), one factory per CE and WMS, parameters in range.
pub(in crate::scenario) fn check(c: &mut Checker, s: &Scenario) {
    // (site, queue or DIRAC, CE) → the factory that feeds it.
    let mut fed: BTreeMap<(&str, Option<&str>, &str), usize> = BTreeMap::new();
    for (i, f) in s.factory.iter().enumerate() {
        let p = format!("factory[{i}]");
        let (site_name, ces, queue) = f.target();
        let Some(site) = s.sites.iter().find(|x| x.name == site_name) else {
            let known = s.sites.iter().map(|x| x.name.as_str()).collect();
            c.fail(format!("{p}.site"), format!("unknown site {site_name:?} (known: {})", list(&known)));
            continue;
        };
        let site_ces: BTreeSet<&str> = site.ces.iter().map(|x| x.name.as_str()).collect();
        for (j, ce) in ces.iter().enumerate() {
            if !site_ces.contains(ce.as_str()) {
                c.fail(
                    format!("{p}.ces[{j}]"),
                    format!("CE {ce:?} is not at site {site_name:?} (its CEs: {})", list(&site_ces)),
                );
            }
        }
        match (queue, &s.panda) {
            (Some(q), None) => {
                c.fail(format!("{p}.queue"), format!("PanDA queue {q:?} named but the scenario has no `panda` section"))
            }
            (Some(q), Some(panda)) => match panda.queues.iter().find(|x| x.name == q) {
                None => {
                    let known = panda.queues.iter().map(|x| x.name.as_str()).collect();
                    c.fail(format!("{p}.queue"), format!("unknown PanDA queue {q:?} (known: {})", list(&known)));
                }
                Some(pq) if pq.site != site_name => c.fail(
                    format!("{p}.queue"),
                    format!("PanDA queue {q:?} runs at site {:?}, not {site_name:?}", pq.site),
                ),
                Some(_) => {}
            },
            (None, _) if s.dirac.is_none() => c.fail(
                format!("{p}.queue"),
                "a factory without `queue` feeds DIRAC, and the scenario has no `dirac` section: name a PanDA queue",
            ),
            (None, _) => {}
        }
        let targets: Vec<&str> =
            if ces.is_empty() { site_ces.iter().copied().collect() } else { ces.iter().map(String::as_str).collect() };
        for ce in targets {
            if let Some(k) = fed.insert((site_name, queue, ce), i) {
                let wms = queue.map_or("DIRAC".to_string(), |q| format!("PanDA queue {q:?}"));
                c.fail(format!("{p}.ces"), format!("CE {ce:?} already has a factory for {wms} (factory[{k}])"));
            }
        }
        for (field, v) in [("pilot_script_s", f.steps_s().0), ("job_fetch_s", f.steps_s().1)] {
            if !(v.is_finite() && (0.0..=crate::scenario::limits::MAX_TIME_S).contains(&v)) {
                c.fail(format!("{p}.{field}"), format!("must be a number of seconds from 0 to 10 years, got {v}"));
            }
        }
        match f {
            FactoryConfig::Generic { rate_per_min, max_queued, max_total, .. } => {
                if let Err(e) = Rate::per_min(*rate_per_min) {
                    c.fail(format!("{p}.rate_per_min"), e);
                }
                for (field, cap) in [("max_queued", max_queued), ("max_total", max_total)] {
                    if *cap == Some(0) {
                        c.fail(format!("{p}.{field}"), "a cap of 0 submits nothing: leave the field out for no cap");
                    }
                }
            }
            FactoryConfig::Startd { vms, slot_cpus, lifetime, standby, .. } => {
                c.count(&format!("{p}.vms"), u64::from(*vms));
                if *vms > MAX_VMS {
                    c.fail(format!("{p}.vms"), format!("at most {MAX_VMS} VMs per startd pilot, got {vms}"));
                }
                if let Some(cpus) = slot_cpus {
                    c.positive(&format!("{p}.slot_cpus"), *cpus);
                }
                c.distribution(&format!("{p}.lifetime"), lifetime);
                for (field, message) in standby.problems() {
                    c.fail(format!("{p}.standby.{field}"), message);
                }
            }
        }
    }
}

/// Valid but worth saying: a one-VM startd pilot that keeps its VM for analysis never runs
/// production.
pub fn warnings(s: &Scenario) -> Vec<Problem> {
    let mut out = Vec::new();
    for (i, f) in s.factory.iter().enumerate() {
        if let FactoryConfig::Startd { vms: 1, job_types: JobTypePolicy::KeepOneForAnalysis, .. } = f {
            out.push(Problem {
                path: format!("factory[{i}].job_types"),
                message: "with one VM, KeepOneForAnalysis asks for analysis jobs only: production never runs there"
                    .into(),
            });
        }
    }
    out
}

#[cfg(test)]
#[path = "factory_tests.rs"]
mod tests;
