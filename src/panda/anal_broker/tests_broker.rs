//! Whole brokerage cycles: candidate generation, filter order, the loops with and without data
//! locality, temporary filters, ordering and the top 10, both variants; property tests.

use proptest::prelude::*;

use super::filters::{self, Ctx, SiteList};
use super::*;
use crate::engine::{RngStreams, SimRng};

fn rng(seed: u64) -> SimRng {
    RngStreams::new(seed).stream("panda/anal_broker")
}

fn queue(name: &str) -> AnalQueue {
    AnalQueue {
        name: name.to_string(),
        cloud: "WORLD".to_string(),
        output_space_gb: Some(1000.0),
        input_space_gb: Some(1000.0),
        corepower: 10.0,
        ..AnalQueue::default()
    }
}

fn stats(running: u64) -> QueueStats {
    QueueStats { n_pilot: 10, n_running: running, n_running_all: running, ..QueueStats::default() }
}

#[derive(Clone)]
struct World {
    task: AnalTask,
    queues: Vec<AnalQueue>,
    stats: Vec<QueueStats>,
    replicas: Vec<Replica>,
    queued_total: u64,
    running_total: u64,
}

impl World {
    /// `n` online analysis PQs `ANALY_0…` with 10 running jobs each.
    fn new(n: usize) -> Self {
        Self {
            task: AnalTask::default(),
            queues: (0..n).map(|i| queue(&format!("ANALY_{i}"))).collect(),
            stats: vec![stats(10); n],
            replicas: Vec::new(),
            queued_total: 0,
            running_total: 1000,
        }
    }

    fn input(&self) -> AnalBrokerInput<'_> {
        AnalBrokerInput {
            task: &self.task,
            queues: &self.queues,
            stats: &self.stats,
            replicas: &self.replicas,
            gshare_queued_total: self.queued_total,
            gshare_running_total: self.running_total,
        }
    }

    fn run(&self, p: &AnalBrokerParams) -> AnalBrokerage {
        broker(p, &self.input(), &mut rng(7))
    }
}

fn code() -> AnalBrokerParams {
    AnalBrokerParams { variant: AnalBrokerVariant::PandaServer, ..AnalBrokerParams::default() }
}

fn seed() -> AnalBrokerParams {
    AnalBrokerParams::default()
}

fn chosen(b: &AnalBrokerage) -> Vec<usize> {
    match &b.outcome {
        Outcome::Selected(v) => v.iter().map(|w| w.queue).collect(),
        _ => Vec::new(),
    }
}

fn reasons(b: &AnalBrokerage, q: usize) -> Vec<SkipReason> {
    b.reasons(q).map(|s| s.reason).collect()
}

const PENDING: Outcome = Outcome::Pending { retry_after_s: 1200 };

/// Seed: analysis or unified PQs, online unless pre-assigned. Code: offline always out,
/// brokeroff/test unless pre-assigned, any other status (standby) passes.
#[test]
fn candidates_and_status() {
    let mut w = World::new(6);
    w.queues[1].queue_type = QueueType::Production;
    w.queues[2].queue_type = QueueType::Unified;
    w.queues[3].status = QueueStatus::Brokeroff;
    w.queues[4].status = QueueStatus::Standby;
    w.queues[5].status = QueueStatus::Offline;
    let b = w.run(&seed());
    let mut got = chosen(&b);
    got.sort();
    assert_eq!(got, [0, 2]);
    assert_eq!(reasons(&b, 1), []);
    assert_eq!(reasons(&b, 4), [SkipReason::Status(QueueStatus::Standby)]);
    let b = w.run(&code());
    got = chosen(&b);
    got.sort();
    assert_eq!(got, [0, 2, 4]);
    assert_eq!(reasons(&b, 3), [SkipReason::Status(QueueStatus::Brokeroff)]);
    assert_eq!(b.skips[0].line("ANALY_3"), "  skip site=ANALY_3 due to status=brokeroff criteria=-status");
    // Pre-assigned to the offline PQ: the seed lets it through, the code fails the task.
    w.task.preassigned = Some(5);
    assert_eq!(chosen(&w.run(&seed())), [5]);
    assert_eq!(w.run(&code()).outcome, Outcome::Fatal);
    // A pre-assigned production PQ is a candidate; brokeroff is fine when pre-assigned.
    w.task.preassigned = Some(1);
    assert_eq!(chosen(&w.run(&code())), [1]);
    w.task.preassigned = Some(3);
    assert_eq!(chosen(&w.run(&code())), [3]);
}

#[test]
fn first_failing_filter_is_the_reason() {
    let mut w = World::new(2);
    w.queues[0].status = QueueStatus::Offline;
    w.stats[0].n_pilot = 0;
    w.stats[1].n_pilot = 0;
    let b = w.run(&code());
    assert_eq!(reasons(&b, 0), [SkipReason::Status(QueueStatus::Offline)]);
    assert_eq!(reasons(&b, 1), [SkipReason::NoPilot]);
    assert_eq!(b.outcome, PENDING);
    assert_eq!(filters::PERSISTENT_CHAIN.first(), Some(&"input data check"));
}

/// Seed: all skipped by persistent filters → retried without the locality check. Code: the
/// second loop exists whenever the input is readable over WAN.
#[test]
fn retry_without_data_locality() {
    let mut w = World::new(3);
    w.task.n_datasets = 1;
    w.task.n_real_datasets = 1;
    w.replicas = vec![Replica::Absent; 3];
    for p in [seed(), code()] {
        let b = w.run(&p);
        assert_eq!(b.loops, [Loop::WithDataLocality, Loop::WithoutDataLocality]);
        assert_eq!(chosen(&b).len(), 3);
        assert!(b.skips.iter().all(|s| s.loop_index == 0 && s.reason == SkipReason::NoInputData));
    }
    w.task.remote_source_available = false;
    let b = w.run(&code());
    assert_eq!((b.loops.clone(), b.outcome), (vec![Loop::WithDataLocality], PENDING));
    assert_eq!(w.run(&seed()).loops.len(), 2);
    // Seed: priority ≥ 2000 (or IO ≤ cutoff, or the timeout) suppresses the check altogether.
    w.task.task_priority = 2000;
    assert_eq!(w.run(&seed()).loops, [Loop::WithoutDataLocality]);
    w.task.task_priority = 1000;
    w.task.io_intensity = Some(50.0);
    let p = AnalBrokerParams { io_intensity_cutoff_user: Some(100.0), ..seed() };
    assert_eq!(w.run(&p).loops, [Loop::WithoutDataLocality]);
    w.task.io_intensity = None;
    w.task.hours_since_last_success = Some(30.0);
    let p = AnalBrokerParams { data_check_timeout_user: Some(24.0), ..seed() };
    assert_eq!(w.run(&p).loops, [Loop::WithoutDataLocality]);
    // Without input datasets there is one loop, and locality is moot.
    assert_eq!(World::new(1).run(&seed()).loops, [Loop::WithDataLocality]);
}

#[test]
fn locality_prefers_disk_then_tape_then_union() {
    let mut w = World::new(3);
    w.task.n_datasets = 1;
    w.replicas = vec![Replica::Disk, Replica::Tape, Replica::Absent];
    let b = w.run(&seed());
    assert_eq!(chosen(&b), [0]);
    assert_eq!(reasons(&b, 1), [SkipReason::NoInputData]);
    w.replicas = vec![Replica::Tape, Replica::Tape, Replica::Absent];
    let b = w.run(&seed());
    let Outcome::Selected(sel) = &b.outcome else { panic!("{b:?}") };
    assert_eq!(sel.len(), 2);
    assert!(sel.iter().all(|x| x.data_factor == 0.001));
    // Two datasets held by different PQs: the union, then the size-based data factor.
    w.task.n_datasets = 2;
    w.task.n_real_datasets = 2;
    w.task.total_input_bytes = 10 << 30;
    w.replicas = vec![Replica::Disk, Replica::Absent, Replica::Absent, Replica::Disk, Replica::Absent, Replica::Absent];
    w.stats[1].local_disk_bytes = 2 << 30;
    let b = w.run(&seed());
    let Outcome::Selected(sel) = &b.outcome else { panic!("{b:?}") };
    assert_eq!(sel.len(), 2);
    let f1 = sel.iter().find(|x| x.queue == 1).unwrap().data_factor;
    assert!((f1 - 1.2).abs() < 1e-12);
    // A VP queue is avoided under union locality.
    w.queues[1].uses_vp = true;
    let b = w.run(&seed());
    assert_eq!(chosen(&b), [0]);
    assert_eq!(reasons(&b, 1), [SkipReason::AvoidVp]);
}

/// Problematic PQs stay through the loop and are dropped at the end.
#[test]
fn stabilizer_skips_at_the_end() {
    let mut w = World::new(2);
    w.stats[0] = QueueStats {
        n_activated: 300,
        user: Some(UserQueueStats { n_queue: 150, n_running: 0 }),
        users: Some(GshareUsers { n_users: 2, n_running: 100 }),
        ..stats(100)
    };
    w.queued_total = 10_000;
    let b = w.run(&code());
    assert_eq!(chosen(&b), [1]);
    let r = reasons(&b, 0);
    assert!(matches!(r[..], [SkipReason::UserQueueTooLong { n_queue_user: 150, .. }]), "{r:?}");
    assert_eq!(r[0].persistence(), Persistence::Temporary);
    assert_eq!(b.weighed.len(), 2);
}

/// Code: with locality ignorable (priority ≥ 2000), loop 0 where every PQ is problematic fails
/// (`-tmp_user_problem`) and loop 1 finds the PQ without data.
#[test]
fn all_problematic_goes_to_the_second_loop() {
    let mut w = World::new(3);
    w.task.n_datasets = 1;
    w.task.n_real_datasets = 1;
    w.replicas = vec![Replica::Disk, Replica::Disk, Replica::Absent];
    w.queued_total = 100_000;
    for s in &mut w.stats[..2] {
        s.n_failed = 30;
        (s.n_activated, s.user) = (300, Some(UserQueueStats { n_queue: 200, n_running: 0 }));
    }
    w.task.task_priority = 2000;
    let b = w.run(&code());
    assert_eq!(b.loops, [Loop::WithDataLocality, Loop::WithoutDataLocality]);
    assert!(reasons(&b, 0).contains(&SkipReason::TmpUserProblem));
    assert_eq!(chosen(&b), [2]);
    // Without the suppression conditions loop 0 succeeds, then its PQs are all dropped.
    w.task.task_priority = 1000;
    let b = w.run(&code());
    assert_eq!((b.loops.len(), b.outcome), (1, PENDING));
}

#[test]
fn top_ten_with_used_pqs_first() {
    let mut w = World::new(12);
    for (i, s) in w.stats.iter_mut().enumerate() {
        *s = stats(10 + i as u64);
    }
    w.stats[0].used_by_task = true;
    let b = w.run(&seed());
    let got = chosen(&b);
    assert_eq!(got, [0, 11, 10, 9, 8, 7, 6, 5, 4, 3]);
    let low: Vec<usize> =
        b.skips.iter().filter(|s| matches!(s.reason, SkipReason::LowWeight { .. })).map(|s| s.queue).collect();
    assert_eq!(low, [2, 1]);
    // Original weight (R + 1)/(Q + 1) with nothing queued.
    let Outcome::Selected(sel) = &b.outcome else { panic!() };
    assert_eq!(sel[1].weight, 22.0);
    // Distributed input keeps every PQ.
    w.task.distributed_input = true;
    assert_eq!(chosen(&w.run(&seed())).len(), 12);
}

#[test]
fn equal_weights_are_shuffled_reproducibly() {
    let w = World::new(4);
    let firsts: std::collections::BTreeSet<usize> =
        (0..40).map(|s| chosen(&broker(&seed(), &w.input(), &mut rng(s)))[0]).collect();
    assert!(firsts.len() > 1, "{firsts:?}");
    let once = broker(&seed(), &w.input(), &mut rng(3));
    assert_eq!(once, broker(&seed(), &w.input(), &mut rng(3)));
}

#[test]
fn cap_rt_is_a_skip_only_in_the_seed() {
    let mut w = World::new(2);
    w.stats[0].resource_type = Some(ResourceTypeStats { running: 0, queued: 100 });
    assert_eq!(chosen(&w.run(&seed())), [1]);
    assert_eq!(w.run(&code()).skips, []);
}

#[test]
fn overload_with_fallback() {
    let mut w = World::new(3);
    for s in &mut w.stats {
        *s = QueueStats { n_activated: 50, ..stats(1) };
    }
    w.queued_total = 1000;
    w.running_total = 1000;
    // All overloaded: kept (no locality check → all "non-VP").
    assert_eq!(chosen(&w.run(&code())).len(), 3);
    w.stats[2] = stats(100);
    let b = w.run(&code());
    assert_eq!(chosen(&b), [2]);
    assert!(matches!(reasons(&b, 0)[..], [SkipReason::Overloaded { n_queue: 50, n_running: 1, .. }]));
}

#[test]
fn min_weight_and_local_data_checks() {
    let mut w = World::new(3);
    w.stats[0] = QueueStats { n_activated: 9, ..stats(0) };
    let mut p = seed();
    p.min_weight.insert("user".to_string(), 0.9);
    let b = w.run(&p);
    assert!(matches!(reasons(&b, 0)[..], [SkipReason::BelowMinWeight { .. }]));
    w.task.n_datasets = 1;
    w.replicas = vec![Replica::Disk; 3];
    w.queues[1].use_only_local_data = true;
    let b = w.run(&seed());
    assert_eq!(reasons(&b, 1), [SkipReason::FileUnavailable]);
    w.stats[1].has_all_input_files = true;
    assert!(chosen(&w.run(&seed())).contains(&1));
}

#[test]
fn include_exclude_cloud_and_hospital() {
    let mut w = World::new(4);
    for (q, name) in w.queues.iter_mut().zip(["ANALY_BNL", "ANALY_BU", "ANALY_C", "ANALY_C_HOSPITAL"]) {
        q.name = name.to_string();
    }
    w.task.excluded_sites = vec!["ANALY_B*".to_string()];
    let b = w.run(&seed());
    assert_eq!((reasons(&b, 0), reasons(&b, 3)), (vec![SkipReason::Excluded], vec![SkipReason::Hospital]));
    assert_eq!(chosen(&b), [2]);
    w.task.excluded_sites.clear();
    w.task.included_sites = Some(vec!["ANALY_C".to_string(), "AUTO".to_string()]);
    let b = w.run(&seed());
    assert_eq!((chosen(&b), reasons(&b, 0)), (vec![2], vec![SkipReason::NotIncluded]));
    w.task.included_sites = Some(vec!["NOPE".to_string(), "AUTO".to_string()]);
    assert_eq!(chosen(&w.run(&seed())).len(), 3);
    w.task.included_sites = Some(vec!["ANALY_C_HOSPITAL".to_string()]);
    assert_eq!(chosen(&w.run(&seed())), [3]);
    w.task.included_sites = None;
    w.task.cloud = Some("US".to_string());
    w.queues[0].cloud = "US".to_string();
    let b = w.run(&seed());
    assert_eq!((chosen(&b), reasons(&b, 1)), (vec![0], vec![SkipReason::CloudMismatch]));
    let l = SiteList::new(&["".to_string(), "A[*".to_string(), "*X*".to_string()]);
    assert!(l.matches("fooXbar") && !l.matches("A[x") && !l.matches("") && !l.has_auto);
}

fn ctx<'a>(p: &'a AnalBrokerParams, w: &'a World) -> Ctx<'a> {
    Ctx { p, input: w.input(), check_locality: true, preassigned: None, include: None, exclude: SiteList::default() }
}

/// Memory `(base + ram·cores)·0.9` (seed) vs `int(ram·cores·0.9)` (code); scratch `maxwdir/cores`
/// vs `maxwdir·task_cc/site_cc`; HS06 walltime `(maxtime − base)·cores·corepower·eff`.
#[test]
fn memory_scratch_and_walltime() {
    let mut w = World::new(1);
    w.queues[0] = AnalQueue { core_count: Some(8), maxrss: Some(16000.0), ..queue("ANALY_8") };
    w.task.ram_count = Some(2000.0);
    w.task.ram_per_core = true;
    w.task.base_ram_count = 2000.0;
    let (s, c) = (seed(), code());
    assert_eq!(filters::memory(&ctx(&c, &w), 0), None);
    assert_eq!(filters::memory(&ctx(&s, &w), 0), Some(SkipReason::LowMemory { need_mb: 16200.0 }));
    w.queues[0].minrss = Some(15000.0);
    assert_eq!(filters::memory(&ctx(&c, &w), 0), Some(SkipReason::HighMemory { need_mb: 14400.0 }));
    w.queues[0].maxwdir = Some(16000.0);
    w.task.work_disk_size = 3000.0 * 1024.0 * 1024.0;
    w.task.core_count = Some(8);
    assert_eq!(filters::scratch_disk(&ctx(&c, &w), 0), None);
    assert_eq!(
        filters::scratch_disk(&ctx(&s, &w), 0),
        Some(SkipReason::ScratchDisk { have_mb: 2000.0, need_mb: 3000.0 })
    );
    w.task.core_count = None;
    assert!(filters::scratch_disk(&ctx(&c, &w), 0).is_some());
    w.queues[0].maxtime = 86400.0;
    w.queues[0].mintime = 3600.0;
    w.task.min_walltime = Some(7.0e6);
    assert_eq!(
        filters::walltime(&ctx(&c, &w), 0),
        Some(SkipReason::ShortWalltime { site_max: 6_912_000.0, need: 7.0e6 })
    );
    w.task.min_walltime = Some(1.0e5);
    assert_eq!(filters::walltime(&ctx(&c, &w), 0), Some(SkipReason::LongWalltime { site_min: 288_000.0, need: 1.0e5 }));
    w.queues[0].core_count = Some(1);
    w.queues[0].maxtime = 80_000.0;
    w.task.use_scout = true;
    assert!(matches!(filters::min_walltime_capacity(&ctx(&c, &w), 0), Some(SkipReason::ScoutWalltime { .. })));
    w.queues[0].maxtime = 86_400.0;
    assert_eq!(filters::min_walltime_capacity(&ctx(&c, &w), 0), None);
}

#[test]
fn new_weight_prefers_the_task_class_site_class() {
    let mut w = World::new(2);
    w.stats[0].site_class = Some(SiteClass::Lo);
    w.stats[1].site_class = Some(SiteClass::Hi);
    w.stats[0].n_running = 50;
    w.task.n_jobs_to_submit = 20;
    w.task.task_class = Some(TaskClass::A);
    assert_eq!(chosen(&w.run(&seed()))[0], 0, "original weight: more running");
    assert_eq!(chosen(&w.run(&code()))[0], 1, "new weight: hi-site for an A task");
    w.task.task_class = Some(TaskClass::C);
    assert_eq!(chosen(&w.run(&code()))[0], 0);
}

prop_compose! {
    fn any_queue()(status in 0..6u8, ty in 0..4u8, core in proptest::option::of(0..16u32),
                   maxrss in proptest::option::of(-10.0..64000.0f64), vp in any::<bool>(), gpu in any::<bool>(),
                   space in proptest::option::of(-1.0..500.0f64), standby in proptest::option::of(0..100u64),
                   maxtime in -1.0..1e6f64) -> AnalQueue {
        let statuses = [QueueStatus::Online, QueueStatus::Brokeroff, QueueStatus::Test, QueueStatus::Offline,
                        QueueStatus::Paused, QueueStatus::Standby];
        let types = [QueueType::Analysis, QueueType::Unified, QueueType::Production, QueueType::Other];
        AnalQueue {
            status: statuses[status as usize], queue_type: types[ty as usize], core_count: core, maxrss,
            uses_vp: vp, is_gpu: gpu, output_space_gb: space, num_standby: standby, maxtime,
            ..queue("ANALY_P")
        }
    }
}

prop_compose! {
    fn any_stats()(r in 0..500u64, a in 0..500u64, all in 0..1000u64, rate in proptest::option::of(-5.0..100.0f64),
                   pilot in 0..3u64, class in 0..4u8, uq in proptest::option::of((0..300u64, 0..300u64)),
                   users in proptest::option::of((0..5u32, 0..500u64)), failed in 0..20u64,
                   used in any::<bool>(), workers in proptest::option::of(0..50u64)) -> QueueStats {
        QueueStats {
            n_running: r, n_activated: a, n_running_all: all, site_to_running_rate: rate, n_pilot: pilot,
            site_class: [None, Some(SiteClass::Lo), Some(SiteClass::Mid), Some(SiteClass::Hi)][class as usize],
            user: uq.map(|(q, r)| UserQueueStats { n_queue: q, n_running: r }),
            users: users.map(|(n, r)| GshareUsers { n_users: n, n_running: r }),
            n_failed: failed, used_by_task: used, n_workers: workers, ..QueueStats::default()
        }
    }
}

proptest! {
    #[test]
    fn brokerage_never_panics(queues in proptest::collection::vec(any_queue(), 0..8),
                              stats in proptest::collection::vec(any_stats(), 0..8),
                              reps in proptest::collection::vec(0..4u8, 0..20),
                              n_datasets in 0..3usize, prio in 0..3000i64, merging in any::<bool>(), code_variant in any::<bool>(),
                              class in 0..5u8, pre in proptest::option::of(0..10usize), nj in 0..100u64,
                              seed_value in 0..1000u64) {
        let replicas = reps.iter().map(|&r| [Replica::Absent, Replica::Tape, Replica::Disk, Replica::Vp][r as usize]).collect();
        let task = AnalTask {
            n_datasets, n_real_datasets: n_datasets, task_priority: prio, is_merging: merging,
            task_class: [None, Some(TaskClass::C), Some(TaskClass::B), Some(TaskClass::A), Some(TaskClass::S)][class as usize],
            preassigned: pre, n_jobs_to_submit: nj, ram_count: Some(2000.0), min_walltime: Some(1e4),
            ..AnalTask::default()
        };
        let w = World { task, queues, stats, replicas, queued_total: 100, running_total: 0 };
        let p = if code_variant { code() } else { seed() };
        let b = broker(&p, &w.input(), &mut rng(seed_value));
        let sel = chosen(&b);
        prop_assert!(sel.len() <= 10 && sel.iter().all(|&q| q < w.queues.len()));
        prop_assert!(b.skips.iter().all(|s| s.queue < w.queues.len()));
        for s in &b.weighed {
            prop_assert!(!s.weight.is_nan());
        }
    }

    #[test]
    fn site_lists_never_panic(names in proptest::collection::vec(".{0,12}", 0..5), site in ".{0,12}") {
        let l = SiteList::new(&names);
        let _ = l.matches(&site);
    }

    #[test]
    fn params_parsing_never_panics(text in ".{0,80}") {
        if let Ok(p) = serde_json::from_str::<AnalBrokerParams>(&text) {
            let _ = validate(&p);
        }
    }

    #[test]
    fn classification_never_panics(ws in proptest::collection::vec((proptest::option::of(-1e6..1e6f64), -1e6..1e6f64, -5.0..5.0f64, any::<bool>()), 0..8),
                                   q in -1.0..2.0f64) {
        let sites: Vec<SiteWaitStats> = ws.iter().map(|&(w, l, s, g)| SiteWaitStats {
            w_cl95upp: w, long_q_mean: Some(l), long_q_n: s, strr_1d: s, grid: g }).collect();
        let c = classify_sites(&sites, &SiteClassParams { hi_quantile: q, ..SiteClassParams::default() });
        prop_assert_eq!(c.classes.len(), sites.len());
    }
}
