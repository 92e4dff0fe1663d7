//! Tests of the production views: the example scenario (`tests/data/panda_example.ron`), a
//! runnable variant of it, and a small hand-made scenario; each builds the views, asserts the
//! fields with their units, then runs the decision module on them.

mod job;
mod snapshot;
mod task;

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::*;
use crate::engine::SimTime;
use crate::grid::config::StorageStatus;
use crate::panda::harvester::config::WorkerCounts;
use crate::panda::job_broker::JobCounts;
use crate::scenario::Scenario;
use crate::wms::panda::view::testing::{Snapshot, deref_snapshot};

pub(super) fn example() -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/panda_example.ron");
    crate::scenario::load_file(&path).unwrap().scenario
}

/// The example with what keeps its production work from running anywhere removed: BNL's PQ is
/// no longer for jumbo jobs only, AGLT2's PQ is pledged and has its storage, and
/// `AGLT2_DATADISK` accepts WAN writes.
pub(super) fn runnable_example() -> Scenario {
    let mut s = example();
    s.storages[2].write_wan = StorageStatus::On;
    let p = s.panda.as_mut().unwrap();
    p.queues[0].catchall.clear();
    let aglt2 = &mut p.queues[2];
    aglt2.pledgedcpu = None;
    aglt2.astorages = BTreeMap::from([
        ("read_lan".to_string(), vec!["AGLT2_DATADISK".to_string()]),
        ("write_lan".to_string(), vec!["AGLT2_DATADISK".to_string()]),
    ]);
    assert_eq!(crate::scenario::validate(&s), vec![]);
    s
}

/// A nucleus and two satellites, one with a saturated link; a GPU-only PQ; a CPU stream with
/// its input at the nucleus and a GPU stream without input.
pub(super) const SMALL: &str = r##"
Scenario(
    name: "prod_view_small",
    duration_s: 86400,
    sites: [
        Site(name: "NUC", ces: [Ce(name: "ce.nuc", slots: 100)]),
        Site(name: "SATB", ces: [Ce(name: "ce.b", slots: 100)]),
        Site(name: "SATC", ces: [Ce(name: "ce.c", slots: 100)]),
    ],
    network: [
        Link(from: "SATB", to: "NUC", bandwidth_mbps: 1000, closeness: 2),
        Link(from: "SATC", to: "NUC", bandwidth_mbps: 1000, closeness: 1, queued_files: 150),
    ],
    storages: [
        Storage(name: "NUC_DATADISK", site: "NUC", total_tb: 1000, used_tb: 100),
        Storage(name: "SATB_DATADISK", site: "SATB", total_tb: 500, used_tb: 100),
        Storage(name: "SATC_DATADISK", site: "SATC", total_tb: 500, used_tb: 100),
    ],
    panda: (
        gshares: [(name: "MC", value: 100)],
        nuclei: [(site: "NUC", output_storages: ["NUC_DATADISK"], input_storages: ["NUC_DATADISK"])],
        queues: [
            (name: "NUC_PQ", site: "NUC", corecount: 1,
             astorages: {"read_lan": ["NUC_DATADISK"], "write_lan": ["NUC_DATADISK"]}),
            (name: "SATB_PQ", site: "SATB", corecount: 1,
             astorages: {"read_lan": ["SATB_DATADISK"], "write_lan": ["SATB_DATADISK"]}),
            (name: "SATC_PQ", site: "SATC", corecount: 1,
             astorages: {"read_lan": ["SATC_DATADISK"], "write_lan": ["SATC_DATADISK"]}),
            (name: "SATB_GPU", site: "SATB", corecount: 1,
             astorages: {"read_lan": ["SATB_DATADISK"], "write_lan": ["SATB_DATADISK"]},
             software: (architectures: [{"type": "gpu", "vendor": ["nvidia", "excl"]}],
                        wn_gpus: [(vendor: "NVIDIA", model: "NVIDIA A100-SXM4-40GB", vram: 40960)])),
        ],
        tasks: [
            (name: "simul", count: 5, arrival: Burst(at_s: 0),
             inputs: [(name: "evnt", size_gb: 10, files: 10, replicas: [(storage: "NUC_DATADISK")])],
             n_events: 10000, cpu_time: 100, priority: 500, gshare: "MC"),
            (name: "gpu", count: 1, arrival: Burst(at_s: 0), n_events: 1000, n_events_per_job: 100,
             cpu_time: 10, priority: 500, gshare: "MC", architecture: Some("#&nvidia")),
        ],
    ),
)
"##;

pub(super) fn small() -> Scenario {
    let s = crate::scenario::load_str(SMALL, "small").unwrap().scenario;
    assert_eq!(crate::scenario::validate(&s), vec![]);
    s
}

/// What the PanDA WMS would hold: the grid's storage and network and the job/worker tables.
pub(super) struct World {
    pub s: Scenario,
    pub snap: Snapshot,
}
deref_snapshot!(World);

impl World {
    pub fn new(s: Scenario) -> Self {
        World { snap: Snapshot::new(&s, SimTime::from_secs(3600)), s }
    }

    pub fn view(&self) -> ProdView {
        ProdView::new(&self.s)
    }

    /// Files in flight on link `link`: `n` transfers of 1 GB submitted now.
    pub fn queue_files(&mut self, link: u32, n: usize) {
        let now = self.now;
        for _ in 0..n {
            self.network.submit(now, link, 1_000_000_000).unwrap();
        }
    }
}

/// The job query of a stream's task with one-job chunks.
pub(super) fn query(stream: usize, nucleus: Option<usize>, current_priority: i64) -> JobQuery {
    JobQuery { stream, nucleus, current_priority, chunk: Chunk::default() }
}

/// A deterministic RNG for the task broker's draw.
pub(super) fn rng() -> crate::engine::rng::SimRng {
    crate::engine::RngStreams::new(7).stream("test/view/prod")
}

/// `x` GB of 1024³ bytes from bytes.
pub(super) fn gib(bytes: f64) -> f64 {
    bytes / crate::panda::task_broker::GIB
}
