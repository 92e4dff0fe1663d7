//! The Harvester view: queue states built from hand-made scenarios and the example, run through
//! `define_num_workers` with the reference §8 numbers; worker shapes; CE weighting and choice.

use std::path::PathBuf;

use super::super::ce_choice::{CE_WEIGHT_FLOOR, CeWorkerStats, ce_weighting, choose_ce};
use super::*;
use crate::engine::{RngStreams, SimRng, SimTime};
use crate::panda::harvester::{RowOutcome, SkipReason, Step, WorkerCounts};
use crate::scenario::{load_file, parse, validate};
use crate::wms::panda::view::testing::Snapshot;

fn rng(seed: u64) -> SimRng {
    RngStreams::new(seed).stream("panda/harvester/view")
}

/// The run's tables a test fills.
/// The snapshot the Harvester view reads, at 1 h.
struct World(Snapshot);

impl World {
    fn new(s: &Scenario) -> Self {
        World(Snapshot::new(s, SimTime::from_secs(3600)))
    }
}

impl std::ops::Deref for World {
    type Target = Snapshot;
    fn deref(&self) -> &Snapshot {
        &self.0
    }
}

impl std::ops::DerefMut for World {
    fn deref_mut(&mut self) -> &mut Snapshot {
        &mut self.0
    }
}

/// Site S (CEs ce1, ce2) and T (ce3), one disk, the given PQs and `[submitter]`.
fn scenario(queues: &str, submitter: &str) -> Scenario {
    let text = format!(
        r#"Scenario(
            name: "harvester_view", duration_s: 86400,
            sites: [
                Site(name: "S", ces: [Ce(name: "ce1", slots: 100), Ce(name: "ce2", slots: 100)]),
                Site(name: "T", ces: [Ce(name: "ce3", slots: 10)]),
            ],
            storages: [Storage(name: "S_DATADISK", site: "S", total_tb: Some(1000), used_tb: 100)],
            panda: (
                gshares: [(name: "User Analysis", value: 100)],
                queues: [{queues}],
                harvester: ({submitter}),
            ),
        )"#
    );
    let s = parse(&text, "harvester_view").unwrap();
    assert_eq!(validate(&s), vec![], "the hand-made scenario is valid");
    s
}

/// A non-UCORE pull PQ `P` at site S: 8 cores, 16000 MB.
fn pull(extra: &str) -> Scenario {
    scenario(
        &format!(
            r#"(name: "P", site: "S", type: analysis, corecount: Some(8), maxrss: 16000,
                harvester: (mapType: NoJob, maxWorkers: 1000, nQueueLimitWorker: 100{extra}))"#
        ),
        "",
    )
}

fn run(s: &Scenario, w: &World) -> (QueueState, SiteDecision) {
    let v = HarvesterView::new(s);
    let state = v.queue_state(0, &w.dynamic(), &HarvesterDynamic::default()).unwrap();
    let d = v.decide(0, &state).unwrap();
    (state, d)
}

fn workers(n: u64) -> WorkerCounts {
    WorkerCounts { n, core: 8 * n, mem: 16000 * n }
}

/// Reference §8 pull mode: n_new = max(min(nActivated × 1.0, nQueueLimitWorker) − nQueue, 0):
/// min(30, 100) − 10 = 20; the state carries the PQ's counts as Harvester reads them.
#[test]
fn pull_mode_new_workers_are_activated_minus_queued() {
    let s = pull("");
    let mut w = World::new(&s);
    w.queue_jobs[0].activated = 30;
    w.workers_queued[0] = workers(10);
    w.workers_running[0] = workers(5);
    let (state, d) = run(&s, &w);
    assert_eq!(state.job_stats, JobStats::Activated(30));
    assert_eq!(state.status, Some(PqStatus::Online));
    assert_eq!(state.n_harvester_instances, Some(1));
    assert!(!state.ucore);
    assert_eq!(state.worker_stats.queue, workers(10));
    assert_eq!(state.worker_stats.running, workers(5));
    assert_eq!(state.rows.len(), 1);
    let row = &state.rows[0];
    assert_eq!((row.resource_type.as_ref(), row.commanded), ("ANY", 0));
    let pr = &row.pilots[0];
    assert_eq!((pr.pilot_type.as_ref(), pr.n_queue, pr.n_ready, pr.n_running, pr.n_activated), ("PR", 10, 0, 5, 30));
    assert_eq!(d.total(), 20);
    assert_eq!(d.limits.n_queue_limit_worker, 100);
    // 500 activated: the queue limit binds, 100 − 10 = 90.
    w.queue_jobs[0].activated = 500;
    assert_eq!(run(&s, &w).1.total(), 90);
}

/// maxWorkers 25 with 10 queued + 5 running: min(20, 25 − 15) = 10.
#[test]
fn max_workers_caps_the_pull_number() {
    let s = scenario(
        r#"(name: "P", site: "S", type: analysis, corecount: Some(8), maxrss: 16000,
            harvester: (mapType: NoJob, maxWorkers: 25, nQueueLimitWorker: 100))"#,
        "",
    );
    let mut w = World::new(&s);
    w.queue_jobs[0].activated = 30;
    w.workers_queued[0] = workers(10);
    w.workers_running[0] = workers(5);
    let (_, d) = run(&s, &w);
    assert_eq!(d.total(), 10);
    assert_eq!(
        d.rows[0].outcome,
        RowOutcome::Computed { max_queued_workers: 25, n_activated: Some(30), binding: Step::MaxWorkers }
    );
}

/// maxNewWorkersPerCycle 7 caps 20 to 7; the global maxNewWorkers 4 of `[submitter]` to 4.
#[test]
fn per_cycle_and_global_limits() {
    let s = pull(", maxNewWorkersPerCycle: 7");
    let mut w = World::new(&s);
    w.queue_jobs[0].activated = 30;
    w.workers_queued[0] = workers(10);
    let (_, d) = run(&s, &w);
    assert_eq!(d.total(), 7);
    let global = scenario(
        r#"(name: "P", site: "S", type: analysis, corecount: Some(8), maxrss: 16000,
            harvester: (mapType: NoJob, maxWorkers: 1000, nQueueLimitWorker: 100, maxNewWorkersPerCycle: 7))"#,
        "maxNewWorkers: 4",
    );
    let (_, d) = run(&global, &w);
    assert_eq!(d.total(), 4);
    assert_eq!(
        d.rows[0].outcome,
        RowOutcome::Computed { max_queued_workers: 30, n_activated: Some(30), binding: Step::MaxNewWorkers }
    );
}

/// No activated job is no `activated` entry: the bootstrap rule max(1 − nQueue − nReady −
/// nRunning, 0) gives 1 pilot to an empty PQ, none once one worker exists, and none at all
/// with `noPilotsWhenNoActiveJobs`.
#[test]
fn bootstrap_without_activated_jobs() {
    let s = pull("");
    let mut w = World::new(&s);
    let (state, d) = run(&s, &w);
    assert_eq!(state.job_stats, JobStats::NoActivatedEntry);
    assert_eq!(d.total(), 1);
    assert_eq!(
        d.rows[0].outcome,
        RowOutcome::Computed { max_queued_workers: 1, n_activated: Some(1), binding: Step::MaxQueuedWorkers }
    );
    w.workers_running[0] = workers(1);
    assert_eq!(run(&s, &w).1.total(), 0);
    let quiet = pull(", submitter: (noPilotsWhenNoActiveJobs: true)");
    let empty = World::new(&quiet);
    assert_eq!(run(&quiet, &empty).1.total(), 0);
}

/// Offline PQs get nothing; test PQs still get pilots.
#[test]
fn queue_status_reaches_the_adjuster() {
    let off = scenario(
        r#"(name: "P", site: "S", type: analysis, status: offline,
            harvester: (mapType: NoJob, maxWorkers: 1000, nQueueLimitWorker: 100))"#,
        "",
    );
    let mut w = World::new(&off);
    w.queue_jobs[0].activated = 30;
    let (state, d) = run(&off, &w);
    assert_eq!(state.status, Some(PqStatus::Offline));
    assert_eq!(d.total(), 0);
    assert_eq!(d.rows[0].outcome, RowOutcome::Skipped(SkipReason::QueueStatus("offline".into())));
    assert_eq!(pq_status(QueueStatus::Paused), PqStatus::Other("paused".into()));
}

/// A UCORE PQ in slave mode: the catch-all row (no command → 0) plus one row per resource type
/// of its pseudo-queues, with PanDA's commands; a 1-core UCORE PQ has only the SCORE types.
#[test]
fn ucore_slave_rows_per_resource_type() {
    let s = scenario(
        r#"(name: "U", site: "S", type: unified, capability: Some("ucore"), corecount: Some(8), maxrss: 16000,
            harvester: (mapType: NoJob, runMode: slave, maxWorkers: 1000, nQueueLimitWorker: 100,
                        maxNewWorkersPerCycle: 100)),
           (name: "U1", site: "S", type: unified, capability: Some("ucore"), corecount: Some(1), maxrss: 2000,
            harvester: (runMode: slave))"#,
        "",
    );
    let v = HarvesterView::new(&s);
    assert_eq!(v.queues[0].resource_types, vec![0, 1, 2, 3]);
    assert_eq!(v.queues[1].resource_types, vec![0, 1], "SCORE, SCORE_HIMEM only");
    let mut w = World::new(&s);
    w.queue_jobs[0].activated = 12;
    let mut rt = vec![RtCounts::default(); 2 * v.types.len()];
    rt[0] = RtCounts { workers_queued: 2, workers_running: 4, activated: 9, commanded: 5 }; // SCORE
    rt[2] = RtCounts { workers_queued: 1, workers_running: 0, activated: 3, commanded: 3 }; // MCORE
    let h = HarvesterDynamic { rt: &rt, commanded: &[] };
    let state = v.queue_state(0, &w.dynamic(), &h).unwrap();
    assert!(state.ucore);
    let names: Vec<&str> = state.rows.iter().map(|r| r.resource_type.as_ref()).collect();
    assert_eq!(names, ["ANY", "SCORE", "SCORE_HIMEM", "MCORE", "MCORE_HIMEM"]);
    assert_eq!(
        (state.rows[1].commanded, state.rows[1].pilots[0].n_queue, state.rows[1].pilots[0].n_activated),
        (5, 2, 9)
    );
    let d = v.decide(0, &state).unwrap();
    // Slave: maxQ = min(command + nQueue, 100), n = maxQ − nQueue → SCORE 5, MCORE 3.
    assert_eq!(
        (d.n_new_workers("SCORE", "PR"), d.n_new_workers("MCORE", "PR"), d.n_new_workers("ANY", "PR")),
        (5, 3, 0)
    );
    assert_eq!(v.worker_shape(0, "SCORE"), Some(("SCORE".into(), 1, 2000)));
    assert_eq!(v.worker_shape(0, "MCORE"), Some(("MCORE".into(), 8, 16000)));
    // The catch-all row of a pure-pull UCORE PQ makes SCORE workers.
    assert_eq!(v.worker_shape(0, "ANY"), Some(("SCORE".into(), 1, 2000)));
    // A state kept over cycles and refilled is the state built afresh: every count is
    // overwritten, none is left from the cycle before.
    let mut kept = v.blank_state(0).unwrap();
    let other = vec![RtCounts { workers_queued: 7, workers_running: 7, activated: 7, commanded: 7 }; rt.len()];
    let (seven, zero) = (WorkerCounts { n: 7, core: 7, mem: 7 }, WorkerCounts::default());
    v.count_state(0, &mut kept, 7, seven, seven, &HarvesterDynamic { rt: &other, commanded: &[7] });
    assert_ne!(kept, state);
    let (queued, running) = (w.dynamic().workers_queued[0], w.dynamic().workers_running[0]);
    assert_eq!((queued, running), (zero, zero));
    v.count_state(0, &mut kept, 12, queued, running, &h);
    assert_eq!(kept, state);
}

/// The example: BNL is UCORE in self mode (one catch-all row, 12 activated → 12 SCORE-shaped
/// pilots over its two CEs 0 and 1), ANALY_BNL_GPU submits to gridgk06 only (CE 1), AGLT2 (a
/// push PQ with maxWorkers 0) keeps one worker queued.
#[test]
fn example_queues() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let s = load_file(&root.join("tests/data/panda_example.ron")).unwrap().scenario;
    let v = HarvesterView::new(&s);
    assert_eq!(v.queues.iter().map(|q| q.ces.clone()).collect::<Vec<_>>(), vec![vec![0, 1], vec![1], vec![2]]);
    assert_eq!(v.settings.max_new_workers, Some(500));
    let mut w = World::new(&s);
    w.queue_jobs[0].activated = 12;
    let state = v.queue_state(0, &w.dynamic(), &HarvesterDynamic::default()).unwrap();
    assert!(!state.ucore);
    assert_eq!(state.rows.len(), 1);
    assert!(state.cric.unified);
    let d = v.decide(0, &state).unwrap();
    assert_eq!(d.total(), 12);
    let plan = v.pilot_plan(0, &d, &[], &mut rng(1));
    assert_eq!((plan.total(), plan.unplaced), (12, 0));
    assert!(plan.batches.iter().all(|b| (b.resource_type.as_ref(), b.cores, b.memory_mb) == ("SCORE", 1, 2000)));
    assert!(plan.batches.iter().all(|b| b.ce == 0 || b.ce == 1));
    let agl = v.queue_state(2, &w.dynamic(), &HarvesterDynamic::default()).unwrap();
    let d = v.decide(2, &agl).unwrap();
    assert_eq!(d.total(), 1);
    assert_eq!(v.worker_shape(2, "ANY"), Some(("SCORE".into(), 1, 1)), "no corecount, no maxrss");
}

/// Two CEs without history: equal weights 1000 and 1000, target_Q = 100 + 20.
#[test]
fn ce_weighting_without_history_is_even() {
    let w = ce_weighting(&[CeWorkerStats::default(); 2], 100, 20, false);
    assert_eq!(w.target_q, 120.0);
    assert_eq!(w.total_score, 2000.0);
    assert!(w.weights.iter().all(|&x| (x - 1000.0).abs() < 1e-9), "{:?}", w.weights);
    let mut r = rng(7);
    let mut n = [0u32; 2];
    for _ in 0..2000 {
        n[choose_ce(&w, &mut r).unwrap()] += 1;
    }
    assert!(n[0] > 900 && n[1] > 900, "{n:?}");
}

/// Throughput and queue: CE0 started 10 workers in the window and runs 5; CE1 has 10 submitted
/// that never started (no running, a dead-CE penalty).
#[test]
fn ce_weighting_follows_throughput_and_penalises_dead_ces() {
    let ce0 = CeWorkerStats { submitted: 0, running: 5, hist_running: 10, ..CeWorkerStats::default() };
    let ce1 = CeWorkerStats { submitted: 10, running: 0, hist_submitted: 10, ..CeWorkerStats::default() };
    let w = ce_weighting(&[ce0, ce1], 100, 10, false);
    // thruput: CE0 log1p(10) − log1p(0) = ln 11, CE1 log1p(10) − log1p(10) = 0; average
    // log1p(20) − log1p(10) = ln 21 − ln 11; target_Q = 100 + 10.
    let (t0, avg) = (11f64.ln(), 21f64.ln() - 11f64.ln());
    let (a0, a1) = (t0 / avg + 0.5, 0.5);
    let w0 = 110.0 * a0 / (a0 + a1);
    let w1 = (110.0 * a1 / (a0 + a1) - 10.0).max(CE_WEIGHT_FLOOR) / (1.0 + 10f64.ln_1p().powi(2));
    let reg = 2000.0 / (w0 + w1);
    assert!((w.weights[0] - w0 * reg).abs() < 1e-9, "{:?}", w.weights);
    assert!((w.weights[1] - w1 * reg).abs() < 1e-9);
    assert!(w.weights[0] > 50.0 * w.weights[1]);
    // More submitted than nQueueLimitWorker: weight 0, never chosen.
    let full = CeWorkerStats { submitted: 101, running: 3, ..CeWorkerStats::default() };
    let w = ce_weighting(&[full, CeWorkerStats::default()], 100, 10, false);
    assert_eq!(w.weights[0], 0.0);
    let mut r = rng(3);
    assert!((0..100).all(|_| choose_ce(&w, &mut r) == Some(1)));
    // Every CE over the limit: nothing can be chosen.
    let w = ce_weighting(&[full, full], 100, 10, false);
    assert_eq!(choose_ce(&w, &mut r), None);
    // Slave queues aim at min(Σ submitted, Q) + n.
    assert_eq!(ce_weighting(&[full, CeWorkerStats::default()], 100, 10, true).target_q, 110.0);
    let few = CeWorkerStats { submitted: 30, running: 1, ..CeWorkerStats::default() };
    assert_eq!(ce_weighting(&[few, CeWorkerStats::default()], 100, 10, true).target_q, 40.0);
}

/// Pilots go to the CE whose weight is positive; a PQ without CEs places none.
#[test]
fn pilot_plan_places_workers_by_ce_weight() {
    let s = pull("");
    let v = HarvesterView::new(&s);
    assert_eq!(v.queues[0].ces, vec![0, 1]);
    let mut w = World::new(&s);
    w.queue_jobs[0].activated = 30;
    let (_, d) = run(&s, &w);
    let full = CeWorkerStats { submitted: 150, running: 10, ..CeWorkerStats::default() };
    let plan = v.pilot_plan(0, &d, &[full], &mut rng(5));
    assert_eq!(plan.total(), 30);
    assert_eq!(plan.batches.len(), 1);
    let b = &plan.batches[0];
    assert_eq!(
        (b.ce, b.count, b.cores, b.memory_mb, b.resource_type.as_ref(), b.pilot_type.as_ref()),
        (1, 30, 8, 16000, "MCORE", "PR")
    );
    let mut lonely = HarvesterView::new(&s);
    lonely.queues[0].ces.clear();
    let plan = lonely.pilot_plan(0, &d, &[], &mut rng(5));
    assert_eq!((plan.total(), plan.unplaced), (0, 30));
}

/// Resource types of tasks and jobs, and UCORE pseudo-queues.
#[test]
fn resource_types_and_pseudo_queues() {
    let t = ResourceSpec::atlas_defaults();
    assert_eq!(task_resource_type(&t, Some(1), 0.0, 0.0, true), Some(0), "SCORE");
    assert_eq!(task_resource_type(&t, Some(1), 2222.0, 0.0, true), Some(0), "int(2222 × 0.9) = 1999 ≤ 2000");
    assert_eq!(task_resource_type(&t, Some(1), 2300.0, 0.0, true), Some(1), "2070 → SCORE_HIMEM");
    assert_eq!(task_resource_type(&t, Some(8), 2000.0, 0.0, true), Some(2), "MCORE");
    assert_eq!(task_resource_type(&t, Some(0), 0.0, 0.0, true), Some(2), "0 cores = 8");
    assert_eq!(task_resource_type(&t, Some(4), 16000.0, 0.0, false), Some(3), "16000/4 × 0.9 = 3600 → MCORE_HIMEM");
    assert_eq!(job_resource_type(&t, Some(8), 16000.0), Some(2));
    assert_eq!(job_resource_type(&t, None, 2001.0), Some(1));
    let s = scenario(
        r#"(name: "U", site: "S", type: unified, capability: Some("ucore"), corecount: Some(8), maxrss: 16000, minrss: 800)"#,
        "",
    );
    let q = &s.panda.as_ref().unwrap().queues[0];
    assert_eq!(child_queue(q, &t[0]), Some(ChildQueue { core_count: 1, minrss: 800.0, maxrss: 2000.0 }));
    assert_eq!(child_queue(q, &t[1]), Some(ChildQueue { core_count: 1, minrss: 2001.0, maxrss: 2000.0 }));
    assert_eq!(child_queue(q, &t[2]), Some(ChildQueue { core_count: 8, minrss: 800.0, maxrss: 16000.0 }));
    assert_eq!(child_queue(q, &t[3]).map(|c| c.minrss), Some(8.0 * 2001.0 - 8.0 + 1.0));
}
