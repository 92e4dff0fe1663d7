//! What a comparison keeps of one run for its overlay charts: the share and pilot time series,
//! every job's wait by group and by user, and where the run has them PanDA's waits per queue,
//! the link backlogs of its transfers and the jobs finished in each pilot factory. A few numbers
//! per sample and one or two per job or transfer, so that the replicas of both sides fit in
//! memory side by side.

use crate::metrics::recorder::Level;
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
    /// Waits from submission to match, seconds, per group (the run's wait chart's: `report::outputs::group_waits`).
    pub group_waits: Waits,
    /// The same per user (`summary.json` `users`: DIRAC's user entities, PanDA's analysis
    /// users).
    pub user_waits: Waits,
    /// PanDA: waits from `activated` to `running` per queue, seconds.
    pub queue_waits: Waits,
    /// Per link, the changes `(hours, ±1)` of this run's files queued or in transfer on it.
    pub link_backlogs: Vec<(String, Vec<(f64, i64)>)>,
    /// Per pilot factory, the end times (hours) of the jobs finished in its pilots.
    pub factory_ends: Vec<(String, Vec<f64>)>,
    /// The run's length, hours.
    pub end_hours: f64,
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
        let groups = (0..r.entities.len())
            .filter(|&e| r.entities[e].level == Level::Group)
            .map(|e| Series {
                name: r.entities[e].name.clone(),
                target: r.entities[e].target_share,
                values: r.samples.iter().map(|s| s.share[e]).collect(),
            })
            .collect();
        Self {
            hours,
            groups,
            pilots_running: r.samples.iter().map(|s| f64::from(s.pilots.running)).collect(),
            pilots_waiting: r.samples.iter().map(|s| f64::from(s.pilots.waiting)).collect(),
            group_waits: crate::report::outputs::group_waits(run),
            user_waits: users::waits(run),
            queue_waits: crate::report::outputs::queue_waits(run),
            link_backlogs: crate::report::outputs::link_backlogs(run),
            factory_ends: crate::report::factory_charts::finished_by_factory(run),
            end_hours: run.meta.end.as_hours_f64(),
        }
    }
}
