//! For the views' tests: an owned snapshot of a run (what [`Dynamic`] borrows), all counts
//! zero, built from a scenario.

use super::dynamic::Dynamic;
use crate::engine::SimTime;
use crate::grid::network::Network;
use crate::grid::storage::Storages;
use crate::panda::gshare::leaves;
use crate::panda::harvester::config::WorkerCounts;
use crate::panda::job_broker::JobCounts;
use crate::scenario::Scenario;

/// The tables a [`Dynamic`] borrows, owned, with zero counts at time `now`.
pub struct Snapshot {
    pub queue_jobs: Vec<JobCounts>,
    pub queue_gshare_jobs: Vec<Vec<JobCounts>>,
    pub storages: Storages,
    pub network: Network,
    pub last_start: Vec<Option<SimTime>>,
    pub workers_queued: Vec<WorkerCounts>,
    pub workers_running: Vec<WorkerCounts>,
    pub now: SimTime,
}

impl Snapshot {
    /// The empty snapshot of scenario `s` (which has a `panda` section) at `now`.
    pub fn new(s: &Scenario, now: SimTime) -> Self {
        let p = s.panda.as_ref().expect("a panda section");
        let (nq, nl) = (p.queues.len(), leaves(&p.gshares).len());
        let names: Vec<&str> = s.sites.iter().map(|x| x.name.as_str()).collect();
        Snapshot {
            queue_jobs: vec![JobCounts::default(); nq],
            queue_gshare_jobs: vec![vec![JobCounts::default(); nl]; nq],
            storages: Storages::new(&names, &s.storages).expect("valid storages"),
            network: Network::from_sites(&s.sites, &s.network).expect("valid links"),
            last_start: vec![None; nq],
            workers_queued: vec![WorkerCounts::default(); nq],
            workers_running: vec![WorkerCounts::default(); nq],
            now,
        }
    }

    /// The views' input.
    pub fn dynamic(&self) -> Dynamic<'_> {
        Dynamic {
            now: self.now,
            queue_jobs: &self.queue_jobs,
            queue_gshare_jobs: &self.queue_gshare_jobs,
            storages: &self.storages,
            network: &self.network,
            last_start: &self.last_start,
            workers_queued: &self.workers_queued,
            workers_running: &self.workers_running,
        }
    }
}

/// `Deref` to a [`Snapshot`] field `snap` for a test world that adds fields of its own.
macro_rules! deref_snapshot {
    ($t:ty) => {
        impl std::ops::Deref for $t {
            type Target = $crate::wms::panda::view::testing::Snapshot;
            fn deref(&self) -> &Self::Target {
                &self.snap
            }
        }
        impl std::ops::DerefMut for $t {
            fn deref_mut(&mut self) -> &mut Self::Target {
                &mut self.snap
            }
        }
    };
}
pub(crate) use deref_snapshot;
