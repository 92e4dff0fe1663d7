//! What a comparison keeps of one run for its overlay charts: the share and pilot time series
//! and every job's wait, by group and by user. A few numbers per sample and one per job, so
//! that the replicas of both sides fit in memory side by side.

use crate::metrics::recorder::{Level, Recorder};
use crate::metrics::{RunData, users};

/// Waits from submission to match in seconds, per named entity.
pub type Waits = Vec<(String, Vec<f64>)>;

/// One run's time series and waits.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Trace {
    /// Sampling instants, hours since the start.
    pub hours: Vec<f64>,
    /// Running share of each group at each instant (in its system's unit; NaN when its
    /// siblings run nothing), with its target.
    pub groups: Vec<Series>,
    /// Running and waiting pilots at each instant.
    pub pilots_running: Vec<f64>,
    pub pilots_waiting: Vec<f64>,
    /// Waits from submission to match, seconds, per group (groups in scenario order).
    pub group_waits: Waits,
    /// The same per user (`summary.json` `users`: DIRAC's user entities, PanDA's analysis
    /// users).
    pub user_waits: Waits,
}

/// One group's running share over time.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    pub name: String,
    pub target: f64,
    pub values: Vec<f64>,
}

impl Trace {
    /// The trace of a finished run.
    pub fn of(run: &RunData) -> Self {
        let r = &*run.recorder;
        let hours = r.samples.iter().map(|s| s.time.as_hours_f64()).collect();
        let groups = groups_of(r)
            .map(|e| Series {
                name: r.entities[e].name.clone(),
                target: r.entities[e].target_share,
                values: r.samples.iter().map(|s| s.share[e]).collect(),
            })
            .collect();
        // Group entities are the workload's groups, in scenario order.
        let mut group_waits: Waits = groups_of(r).map(|e| (r.entities[e].name.clone(), Vec::new())).collect();
        let slot: Vec<Option<usize>> = {
            let mut slot = vec![None; r.entities.len()];
            groups_of(r).enumerate().for_each(|(i, e)| slot[e] = Some(i));
            slot
        };
        for j in run.jobs {
            if let (Some(wait), Some(i)) = (j.wait_s(), slot[run.entities_of_stream[j.stream as usize].group]) {
                group_waits[i].1.push(wait);
            }
        }
        Self {
            hours,
            groups,
            pilots_running: r.samples.iter().map(|s| f64::from(s.pilots.running)).collect(),
            pilots_waiting: r.samples.iter().map(|s| f64::from(s.pilots.waiting)).collect(),
            group_waits,
            user_waits: users::waits(run),
        }
    }
}

/// The group entities' indices, in the recorder's (scenario) order.
fn groups_of(r: &Recorder) -> impl Iterator<Item = usize> + '_ {
    (0..r.entities.len()).filter(|&e| r.entities[e].level == Level::Group)
}
