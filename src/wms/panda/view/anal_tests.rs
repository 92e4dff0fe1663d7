//! The analysis view: static fields of the example scenario (units!), per-cycle statistics,
//! caps, share usage, data, and whole brokerages of the built inputs.

use std::path::PathBuf;

use super::*;
use crate::engine::{RngStreams, SimRng};
use crate::panda::anal_broker::{
    AnalBrokerVariant, Outcome, QueueStatus as AnalStatus, QueueType, SkipReason, SwCheck, TaskClass, ThrottleReason,
    ThrottleStatus, broker, throttle,
};
use crate::panda::gshare::ShareNode;
use crate::scenario::panda::{AnalysisStream, QueueStatus};
use crate::scenario::{Scenario, load_file, parse, validate};
use crate::wms::panda::view::testing::{Snapshot, deref_snapshot};

fn rng(seed: u64) -> SimRng {
    RngStreams::new(seed).stream("panda/anal/view")
}

fn example() -> Scenario {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    load_file(&root.join("tests/data/panda_example.ron")).unwrap().scenario
}

fn panda(s: &mut Scenario) -> &mut crate::scenario::panda::PandaConfig {
    s.panda.as_mut().unwrap()
}

/// A copy of the example's stream for another user and architecture.
fn stream(s: &Scenario, name: &str, user: &str, architecture: Option<&str>) -> AnalysisStream {
    let mut a = s.panda.as_ref().unwrap().analysis[0].clone();
    a.name = name.into();
    a.user = user.into();
    a.working_group = None;
    a.architecture = architecture.map(str::to_string);
    a
}

struct World {
    snap: Snapshot,
    pilots: Vec<u64>,
}
deref_snapshot!(World);

impl World {
    fn new(s: &Scenario) -> Self {
        let n_q = s.panda.as_ref().unwrap().queues.len();
        World { snap: Snapshot::new(s, SimTime::from_secs(7 * 3600)), pilots: vec![10; n_q] }
    }

    fn anal(&self) -> AnalDynamic<'_> {
        AnalDynamic { pilot_requests_3h: &self.pilots, ..AnalDynamic::default() }
    }
}

fn fresh(jobs: u64) -> AnalTaskState<'static> {
    AnalTaskState { jobs_to_generate: jobs, ..AnalTaskState::default() }
}

/// The queues `broker` selects for stream `i`, sorted, or why not.
fn selected(
    v: &AnalView,
    w: &World,
    a: &AnalDynamic<'_>,
    i: usize,
) -> (Vec<usize>, crate::panda::anal_broker::AnalBrokerage) {
    let d = w.dynamic();
    let cycle = AnalCycle::new(v, &d, a);
    let ti = v.task_input(&cycle, &d, a, i, &fresh(v.streams[i].jobs_per_task)).unwrap();
    let b = broker(&v.params, &ti.input(), &mut rng(11));
    let mut qs = match &b.outcome {
        Outcome::Selected(list) => list.iter().map(|x| x.queue).collect(),
        _ => Vec::new(),
    };
    qs.sort();
    (qs, b)
}

/// Every field of the GPU stream and of the example's PQs as the broker will read them.
#[test]
fn example_static_fields_with_units() {
    let s = example();
    let mut v = AnalView::new(&s);
    assert_eq!((v.users.as_slice(), v.groups.as_slice()), (&["alice".to_string()][..], &["AP_HIGGS".to_string()][..]));
    assert_eq!(
        v.leaves.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
        ["MC Simulation Full", "Reprocessing default", "User Analysis"]
    );
    assert_eq!(v.params.variant, AnalBrokerVariant::Seed);
    let st = &v.streams[0];
    assert_eq!((st.user, st.group, st.leaf, st.resource_type, st.jobs_per_task), (0, Some(0), Some(2), Some(0), 10));
    assert_eq!(st.arch_error, None);
    let t = &st.task;
    assert_eq!(
        (t.gshare.as_str(), t.prod_source_label.as_str(), t.task_class, t.task_priority),
        ("User Analysis", "user", Some(TaskClass::B), 1000)
    );
    assert_eq!((t.n_datasets, t.core_count, t.ram_count, t.min_walltime), (0, Some(1), None, None));
    assert!(t.host_hw_spec && !t.has_sw_platform && t.walltime_undefined && t.ram_per_core && t.use_hs06);
    assert_eq!((t.cpu_efficiency, t.base_walltime, t.n_jobs_to_submit, t.total_input_bytes), (90.0, 600.0, 10, 0));
    // BNL: unified UCORE, seen through its SCORE pseudo-queue (1 core, maxrss min(2000, 16000/8)).
    let b = &st.queues[0];
    assert_eq!((b.name.as_str(), b.queue_type, b.status), ("BNL", QueueType::Unified, AnalStatus::Online));
    assert_eq!((b.core_count, b.maxrss, b.minrss, b.maxwdir), (Some(1), Some(2000.0), Some(0.0), Some(40000.0)));
    assert_eq!(
        (b.sw, b.is_gpu, b.gpu_arch_ok, b.zero_share, b.blacklisted),
        (SwCheck::Passed, false, true, false, false)
    );
    assert_eq!((b.maxtime, b.mintime, b.corepower, b.num_standby), (172800.0, 0.0, 12.5, Some(100)));
    assert!(b.direct_io_capable && !b.direct_io_for_job && b.same_input_output_endpoint && !b.uses_vp);
    // ANALY_BNL_GPU has no `architectures` (the GPU spec fails it) and no endpoints.
    let g = &st.queues[1];
    assert_eq!(
        (g.queue_type, g.status, g.sw, g.blacklisted),
        (QueueType::Analysis, AnalStatus::Test, SwCheck::Missing, true)
    );
    assert_eq!((g.core_count, g.maxrss), (Some(1), Some(4000.0)));
    assert_eq!(st.queues[2].queue_type, QueueType::Production);
    // space_usable = free + expired = (30000 − 20000 + 500) TB = 10 500 000 GB (10⁹ bytes).
    let w = World::new(&s);
    assert_eq!(st.queues[0].output_space_gb, None, "not refreshed yet");
    v.refresh_space(&w.storages);
    let b = &v.streams[0].queues[0];
    assert_eq!((b.output_space_gb, b.input_space_gb), (Some(10_500_000.0), Some(10_500_000.0)));
    assert_eq!(v.streams[0].queues[1].output_space_gb, None);
}

/// The example's GPU stream (`#&nvidia`) gets only BNL, whose CEs carry A100s; once
/// ANALY_BNL_GPU is online with endpoints, the GPU task still skips it for the SW/HW reason
/// (no GPU in its `architectures`), while a CPU stream gets both.
#[test]
fn gpu_stream_gets_only_the_gpu_queue() {
    let mut s = example();
    let mut v = AnalView::new(&s);
    let w = World::new(&s);
    v.refresh_space(&w.storages);
    let a = w.anal();
    let d = w.dynamic();
    let cycle = AnalCycle::new(&v, &d, &a);
    let ti = v.task_input(&cycle, &d, &a, 0, &fresh(10)).unwrap();
    assert_eq!(throttle(&v.params, &ti.throttle_input()), None, "nothing runs: no share metric, no cap");
    let (qs, b) = selected(&v, &w, &a, 0);
    assert_eq!(qs, vec![0]);
    assert!(b.reasons(1).any(|r| r.reason == SkipReason::Status(AnalStatus::Test)), "{:?}", b.skips);
    // ANALY_BNL_GPU online with BNL_DATADISK, and a CPU stream beside the GPU one.
    {
        let p = panda(&mut s);
        p.queues[1].status = QueueStatus::Online;
        for act in ["read_lan", "write_lan"] {
            p.queues[1].astorages.insert(act.into(), vec!["BNL_DATADISK".into()]);
        }
    }
    let mut cpu = stream(&s, "bob_cpu", "bob", None);
    let undefined = cpu.clone();
    (cpu.cpu_time, cpu.n_events_per_job) = (Some(100.0), Some(100));
    panda(&mut s).analysis.push(cpu);
    panda(&mut s).analysis.push(undefined);
    let mut v = AnalView::new(&s);
    v.refresh_space(&w.storages);
    let (qs, b) = selected(&v, &w, &a, 0);
    assert_eq!(qs, vec![0]);
    assert!(b.reasons(1).any(|r| r.reason == SkipReason::MissingSoftware), "{:?}", b.skips);
    let (qs, b) = selected(&v, &w, &a, 1);
    assert_eq!(qs, vec![0, 1], "{:?}", b.skips);
    // Walltime undefined: ANALY_BNL_GPU's maxtime 0 becomes (0 − 600 s baseWalltime) × 1 core ×
    // 10 HS06 × 90 % = −5400 < 24 h × 10 HS06, and PanDA skips it.
    let (qs, b) = selected(&v, &w, &a, 2);
    assert_eq!(qs, vec![0]);
    assert!(b.reasons(1).any(|r| r.reason == SkipReason::MinWalltime { site_max: -5400.0, need: 864_000.0 }));
    // Without pilot activity no PQ is usable.
    let mut idle = World::new(&s);
    idle.pilots = vec![0; 3];
    let (qs, b) = selected(&v, &idle, &idle.anal(), 1);
    assert_eq!(idle.pilots.len(), 3);
    assert!(qs.is_empty());
    assert!(b.reasons(0).any(|r| r.reason == SkipReason::NoPilot));
}

/// Group caps for a task with a workingGroup, user caps otherwise, with `countJobsPerTarget`'s
/// quirk: a user's queued jobs in jobsDefined4 count whatever their group.
#[test]
fn users_over_the_caps_are_throttled() {
    let mut s = example();
    let bob = stream(&s, "bob", "bob", None);
    let p = panda(&mut s);
    p.analysis.push(bob);
    p.gdpconfig.anal_broker.cap_running_group_jobs = Some(10);
    p.gdpconfig.anal_broker.cap_running_user_jobs = Some(5);
    let v = AnalView::new(&s);
    assert_eq!(v.users, ["alice", "bob"]);
    let w = World::new(&s);
    let jobs = |defined, running| JobCounts { defined, running, ..JobCounts::default() };
    let rows = [
        UserJobs { user: 0, working_group: Some(0), queue: 0, leaf: 2, cores: 1, counts: jobs(0, 11) },
        UserJobs { user: 1, working_group: None, queue: 0, leaf: 2, cores: 4, counts: jobs(12, 3) },
        UserJobs { user: 1, working_group: Some(0), queue: 0, leaf: 2, cores: 1, counts: jobs(4, 2) },
    ];
    let a = AnalDynamic { user_jobs: &rows, ..w.anal() };
    let d = w.dynamic();
    let cycle = AnalCycle::new(&v, &d, &a);
    assert_eq!(
        cycle.group_caps[0],
        TargetCounts { n_run_jobs: 13, n_queued_jobs: 4, n_run_cores: 13, n_queued_cores: 4 }
    );
    assert_eq!(
        cycle.user_caps[1],
        TargetCounts { n_run_jobs: 3, n_queued_jobs: 16, n_run_cores: 12, n_queued_cores: 52 }
    );
    let alice = v.task_input(&cycle, &d, &a, 0, &fresh(10)).unwrap();
    let r = throttle(&v.params, &alice.throttle_input()).unwrap();
    assert_eq!(r, ThrottleReason::RunningJobs { n: 13, group: true });
    assert_eq!(r.status(), ThrottleStatus::Waiting);
    let bob = v.task_input(&cycle, &d, &a, 1, &fresh(10)).unwrap();
    assert!(!bob.working_group);
    assert_eq!(throttle(&v.params, &bob.throttle_input()), Some(ThrottleReason::QueuedJobs { n: 16, group: false }));
    // At the cap (13 running, 4 ≤ 2 × 13 queued) the group is not throttled.
    panda(&mut s).gdpconfig.anal_broker.cap_running_group_jobs = Some(13);
    let v = AnalView::new(&s);
    let cycle = AnalCycle::new(&v, &d, &a);
    let alice = v.task_input(&cycle, &d, &a, 0, &fresh(10)).unwrap();
    assert_eq!(throttle(&v.params, &alice.throttle_input()), None);
}

/// Per-PQ statistics: the gshare's counts, the user and the users of the PQ (jobsActive4 only),
/// workers, pilots, the to-running rate, the task's own history, the gshare totals.
#[test]
fn queue_statistics_of_a_task() {
    let mut s = example();
    let bob = stream(&s, "bob", "bob", None);
    panda(&mut s).analysis.push(bob);
    let v = AnalView::new(&s);
    let mut w = World::new(&s);
    w.queue_gshare_jobs[0][2] =
        JobCounts { defined: 5, assigned: 2, activated: 100, starting: 3, running: 40, transferring: 0 };
    w.queue_gshare_jobs[2][2] = JobCounts { activated: 7, running: 10, ..JobCounts::default() };
    w.queue_jobs[0].running = 70;
    w.workers_queued[0].n = 6;
    w.workers_running[0].n = 9;
    let act = |activated, starting, running| JobCounts { activated, starting, running, ..JobCounts::default() };
    let rows = [
        UserJobs { user: 0, working_group: Some(0), queue: 0, leaf: 2, cores: 1, counts: act(30, 2, 10) },
        UserJobs { user: 1, working_group: None, queue: 0, leaf: 2, cores: 1, counts: act(0, 0, 30) },
        UserJobs {
            user: 1,
            working_group: None,
            queue: 0,
            leaf: 2,
            cores: 2,
            counts: JobCounts { defined: 7, ..JobCounts::default() },
        },
    ];
    let started = [35, 0, 0];
    let a = AnalDynamic { user_jobs: &rows, started_in_window: &started, ..w.anal() };
    let d = w.dynamic();
    let cycle = AnalCycle::new(&v, &d, &a);
    assert_eq!((cycle.leaf_queued[2], cycle.leaf_running[2]), (117, 50));
    // Window at 7 h: [1 h, 6 h 50 min) = 5.833 h; 35 jobs → 6 per hour.
    assert_eq!(
        site_to_running_window(w.now),
        (SimTime::from_secs(3600), SimTime::from_secs(24_600), 21_000.0 / 3600.0)
    );
    let recent = [(0, RecentJobs { failed: 3, closed: 1, finished: 2 })];
    let state = AnalTaskState {
        jobs_to_generate: 4,
        scouting: true,
        used_queues: &[0],
        recent: &recent,
        ..AnalTaskState::default()
    };
    let ti = v.task_input(&cycle, &d, &a, 0, &state).unwrap();
    assert_eq!((ti.gshare_queued_total, ti.gshare_running_total), (117, 50));
    assert_eq!((ti.task.n_jobs_to_submit, ti.task.use_scout), (4, true));
    let st = &ti.stats[0];
    assert_eq!(
        (st.n_running, st.n_defined, st.n_assigned, st.n_activated, st.n_starting, st.n_running_all),
        (40, 5, 2, 100, 3, 70)
    );
    assert_eq!(st.user, Some(crate::panda::anal_broker::UserQueueStats { n_queue: 32, n_running: 10 }));
    assert_eq!(st.users, Some(crate::panda::anal_broker::GshareUsers { n_users: 2, n_running: 40 }));
    assert_eq!((st.n_workers, st.n_pilot, st.site_class, st.resource_type), (Some(15), 10, None, None));
    assert!((st.site_to_running_rate.unwrap() - 6.0).abs() < 1e-12);
    assert_eq!((st.n_failed, st.n_closed, st.n_finished, st.used_by_task), (3, 1, 2, true));
    assert_eq!(ti.stats[1].site_to_running_rate, None);
    assert_eq!(ti.stats[2], crate::panda::anal_broker::QueueStats::default(), "production PQ: no statistics");
    // cap_rt statistics when the caller gives them: SCORE (t = 0) at (BNL, User Analysis).
    let n_t = v.types.len();
    let mut rt = vec![JobCounts::default(); 3 * 3 * n_t];
    rt[(2) * n_t] = JobCounts { running: 4, activated: 50, defined: 1, ..JobCounts::default() };
    let a = AnalDynamic { rt_jobs: &rt, ..a };
    let ti = v.task_input(&cycle, &d, &a, 0, &state).unwrap();
    assert_eq!(
        ti.stats[0].resource_type,
        Some(crate::panda::anal_broker::ResourceTypeStats { running: 4, queued: 51 })
    );
}

/// `gshare_preference`: User Analysis at 100/140 HS06 of its target; with a top-level "User
/// Analysis" share its L1 equivalent usage enters the class throttle (B above 95 %).
#[test]
fn share_usage_and_class_throttle() {
    let mut s = example();
    let v = AnalView::new(&s);
    let mut w = World::new(&s);
    // BNL: 8 cores × 12.5 HS06 = 100 HS06 per job.
    w.queue_gshare_jobs[0][0].running = 6;
    w.queue_gshare_jobs[0][2].running = 1;
    let pilots = w.pilots.clone();
    let a = AnalDynamic { pilot_requests_3h: &pilots, ..AnalDynamic::default() };
    let u = share_usages(&v, &w.dynamic(), &a).unwrap();
    assert!((u[2].usage_perc - 100.0 / 140.0).abs() < 1e-12, "{u:?}");
    assert!((u[0].usage_perc - 600.0 / 336.0).abs() < 1e-12);
    assert_eq!((u[2].l1_eqiv_usage_perc, u[1].usage_perc), (None, 0.0), "no L1 User Analysis share; Reprocessing idle");
    // Nothing running at all: every target is 0, the collector divides by zero, no metric.
    assert_eq!(share_usages(&v, &World::new(&s).dynamic(), &a), None);
    // Top level "User Analysis" (a leaf): UA 200 HS06 of 160, L1 Production 600 of 640.
    panda(&mut s).gshares = vec![
        ShareNode::branch(
            "Production",
            80.0,
            vec![ShareNode::leaf("MC Simulation Full", 60.0), ShareNode::leaf("Reprocessing default", 40.0)],
        ),
        ShareNode::leaf("User Analysis", 20.0),
    ];
    let v = AnalView::new(&s);
    w.queue_gshare_jobs[0][2].running = 2;
    let d = w.dynamic();
    let u = share_usages(&v, &d, &a).unwrap();
    let eqiv = 200.0 / (160.0 + 40.0 * 160.0 / 801.0);
    assert!((u[2].usage_perc - 1.25).abs() < 1e-12);
    assert!((u[2].l1_eqiv_usage_perc.unwrap() - eqiv).abs() < 1e-12);
    let cycle = AnalCycle::new(&v, &d, &a);
    let ti = v.task_input(&cycle, &d, &a, 0, &fresh(10)).unwrap();
    match throttle(&v.params, &ti.throttle_input()) {
        Some(ThrottleReason::ClassB { usage_percent }) => assert!((usage_percent - 100.0 * eqiv).abs() < 1e-9),
        other => panic!("expected class B throttle, got {other:?}"),
    }
    // The same usage with exact HS06 from the caller.
    let hs = [Usage { executing: 600.0, queued: 0.0 }, Usage::default(), Usage { executing: 200.0, queued: 0.0 }];
    let exact = AnalDynamic { leaf_hs06: &hs, ..a };
    assert_eq!(share_usages(&v, &d, &exact), Some(u));
}

/// Replicas through the PQs' input endpoints: a complete disk replica, a dataset with only a
/// partial replica anywhere (then the partial holder counts, and remote reading is impossible),
/// local bytes and the data weight of the broker.
#[test]
fn data_locality_of_a_stream_with_inputs() {
    let mut s = example();
    let mut a = stream(&s, "bob_data", "bob", None);
    a.inputs = vec![
        crate::scenario::panda::DatasetConfig {
            name: "data.x".into(),
            size_gb: 120.0,
            files: 200,
            master: true,
            replicas: vec![
                crate::scenario::panda::ReplicaConfig { storage: "BNL_DATADISK".into(), fraction: 1.0 },
                crate::scenario::panda::ReplicaConfig { storage: "AGLT2_DATADISK".into(), fraction: 0.5 },
            ],
        },
        crate::scenario::panda::DatasetConfig {
            name: "data.y".into(),
            size_gb: 40.0,
            files: 100,
            master: false,
            replicas: vec![crate::scenario::panda::ReplicaConfig { storage: "BNL_DATADISK".into(), fraction: 0.5 }],
        },
    ];
    panda(&mut s).analysis.push(a);
    let mut v = AnalView::new(&s);
    let st = &v.streams[1];
    assert_eq!(
        st.replicas,
        vec![Replica::Disk, Replica::Disk, Replica::Absent, Replica::Absent, Replica::Absent, Replica::Absent]
    );
    assert_eq!(st.local_disk_bytes, vec![140_000_000_000, 0, 0]);
    assert_eq!(st.has_all_input_files, vec![false, false, false]);
    assert_eq!((st.task.n_datasets, st.task.total_input_bytes, st.task.max_atom_size), (2, 160_000_000_000, 1.6e10));
    assert!(!st.task.remote_source_available, "data.y: 50 of 100 files is not regarded as complete");
    let w = World::new(&s);
    v.refresh_space(&w.storages);
    let (qs, b) = selected(&v, &w, &w.anal(), 1);
    assert_eq!(qs, vec![0]);
    match b.outcome {
        // Original weight (numSlots 100 / 1 core + 1) / (0 + 1) = 101, × 2 datasets on disk.
        Outcome::Selected(list) => {
            assert_eq!((list[0].n_running, list[0].data_factor, list[0].weight), (100, 2.0, 202.0))
        }
        other => panic!("{other:?}"),
    }
}

/// A hand-made grid: a GPU PQ on a CE with 2 × 4 A100-40GB and a CPU PQ. `vram>=40000` gets only
/// the GPU PQ, `vram>=80000` nothing (the CPU PQ has no GPU, the A100s are too small), a CPU
/// task both.
#[test]
fn gpu_requirements_select_by_worker_node_gpus() {
    let text = r##"Scenario(
        name: "gpu_view", duration_s: 86400,
        sites: [Site(name: "S", ces: [
            Ce(name: "c1", slots: 64, gpus: [(vendor: "nvidia", model: "A100", vram_mb: 40960, cuda_version: "12.2",
                                              gpus_per_node: 4, nodes: 2)]),
            Ce(name: "c2", slots: 64),
        ])],
        storages: [Storage(name: "S_DATADISK", site: "S", total_tb: Some(1000), used_tb: 10)],
        panda: (
            gshares: [(name: "User Analysis", value: 100)],
            queues: [
                (name: "ANALY_GPU", site: "S", ces: ["c1"], type: analysis, maxtime: 172800,
                 astorages: {"read_lan": ["S_DATADISK"], "write_lan": ["S_DATADISK"]},
                 software: (architectures: [{"type": "gpu", "vendor": ["nvidia"]}])),
                (name: "ANALY_CPU", site: "S", ces: ["c2"], type: analysis, maxtime: 172800,
                 astorages: {"read_lan": ["S_DATADISK"], "write_lan": ["S_DATADISK"]}),
            ],
            analysis: [
                (name: "gpu40", user: "u", count: 1, arrival: Burst(at_s: 0), jobs_per_task: 5,
                 architecture: Some("#&nvidia:vram>=40000")),
                (name: "gpu80", user: "u", count: 1, arrival: Burst(at_s: 0), jobs_per_task: 5,
                 architecture: Some("#&nvidia:vram>=80000:cuda>=12.0")),
                (name: "cpu", user: "u", count: 1, arrival: Burst(at_s: 0), jobs_per_task: 5),
            ],
        ),
    )"##;
    let s = parse(text, "gpu_view").unwrap();
    assert_eq!(validate(&s), vec![]);
    let mut v = AnalView::new(&s);
    let w = World::new(&s);
    v.refresh_space(&w.storages);
    assert_eq!((v.streams[0].queues[0].sw, v.streams[0].queues[1].sw), (SwCheck::Passed, SwCheck::Missing));
    assert_eq!(v.streams[1].queues[0].sw, SwCheck::Missing);
    let a = w.anal();
    let (qs, b) = selected(&v, &w, &a, 0);
    assert_eq!(qs, vec![0]);
    assert!(b.reasons(1).any(|r| r.reason == SkipReason::MissingSoftware));
    let (qs, b) = selected(&v, &w, &a, 1);
    assert!(qs.is_empty());
    assert!(matches!(b.outcome, Outcome::Pending { retry_after_s: 1200 }));
    assert!(b.reasons(0).any(|r| r.reason == SkipReason::MissingSoftware));
    let (qs, _) = selected(&v, &w, &a, 2);
    assert_eq!(qs, vec![0, 1]);
}

/// 150 analysis PQs: the per-cycle part touches each PQ once; equal PQs → the top 10.
#[test]
fn a_cycle_over_150_queues() {
    let mut s = example();
    {
        let p = panda(&mut s);
        let mut q = p.queues[0].clone();
        q.kind = crate::scenario::panda::QueueKind::Analysis;
        q.num_slots = None;
        p.queues = (0..150)
            .map(|i| {
                let mut x = q.clone();
                x.name = format!("ANALY_{i}");
                x
            })
            .collect();
    }
    let mut v = AnalView::new(&s);
    let w = World::new(&s);
    v.refresh_space(&w.storages);
    let a = w.anal();
    let d = w.dynamic();
    let t0 = std::time::Instant::now();
    let cycle = AnalCycle::new(&v, &d, &a);
    let ti = v.task_input(&cycle, &d, &a, 0, &fresh(10)).unwrap();
    let built = t0.elapsed();
    eprintln!("cycle + task input over 150 PQs: {built:?}");
    assert_eq!((ti.queues.len(), ti.stats.len()), (150, 150));
    assert!(ti.stats.iter().all(|st| st.n_pilot == 10));
    let b = broker(&v.params, &ti.input(), &mut rng(2));
    match b.outcome {
        Outcome::Selected(list) => assert_eq!(list.len(), 10, "maxNumSites"),
        other => panic!("{other:?}"),
    }
}
