//! Formulas of seed 004 and reference §4 with worked numbers. The stabilizer and new-weight
//! numbers marked "real code" were computed by executing the corresponding blocks of
//! panda-server 1.0.4 `AtlasAnalJobBroker.py` (L1619-1731, L1976-2104) on the same inputs.

use super::*;
use crate::panda::anal_broker::stabilizer::{cap_rt, failures, grand_ratio, overload, queue_limits, to_running_rate};
use crate::panda::anal_broker::weight::{
    WEIGHT_FLOOR, data_factor_without_locality, effective_running, main_weights, new_weights, original_weight,
};

const UA: &str = "User Analysis";

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9 * b.abs().max(1.0)
}

fn code() -> AnalBrokerParams {
    AnalBrokerParams { variant: AnalBrokerVariant::PandaServer, ..AnalBrokerParams::default() }
}

#[test]
fn defaults_are_panda_servers() {
    let d = AnalBrokerParams::default();
    assert_eq!((d.tw_done_job_stat, d.min_bad_jobs_to_skip_pq), (6.0, 5));
    assert_eq!(d.cap_running_user_jobs, None);
    assert_eq!((d.user_usage_threshold_a, d.user_usage_threshold_b), (1000.0, 8000.0));
    assert_eq!((d.base_queue_length_per_pq, d.base_expected_wait_hour_on_pq), (100.0, 8.0));
    assert_eq!((d.base_default_queue_length_per_pq_user, d.base_queue_ratio_on_pq), (5.0, 0.05));
    assert_eq!((d.static_max_queue_running_ratio, d.max_expected_wait_hour), (2.0, 12.0));
    assert_eq!((d.max_missing_input_files, d.min_input_completeness), (10, 90.0));
    assert_eq!((d.overload_min_queue, d.overload_ratio_offset), (20.0, 1.2));
    assert_eq!((d.storage_min_free_size, d.storage_min_free_size_output, d.max_diskio_default), (200.0, 200.0, 1e10));
    assert_eq!((d.progress_to_boost_a, d.progress_to_boost_b), (90.0, 95.0));
    assert_eq!((d.max_rem_jobs_to_boost_a, d.max_rem_jobs_to_boost_b), (500.0, 200.0));
    assert_eq!(d.variant, AnalBrokerVariant::Seed);
    assert_eq!(d.basic_weight(), BasicWeight::Original);
    assert_eq!(code().basic_weight(), BasicWeight::New);
    let chosen = AnalBrokerParams { basic_weight: Some(BasicWeight::New), ..d.clone() };
    assert_eq!(chosen.basic_weight(), BasicWeight::New);
    assert_eq!(validate(&d), Ok(()));
    let parsed: AnalBrokerParams = serde_json::from_str("{}").unwrap();
    assert_eq!(parsed, d);
    assert!(serde_json::from_str::<AnalBrokerParams>(r#"{"base_queue_length": 1}"#).is_err());
    assert!(GDPCONFIG_KEYS.contains(&("anal_jobbroker", "BASE_QUEUE_LENGTH_PER_PQ")));
    assert!(GDPCONFIG_KEYS.contains(&("prio_mgr", "CAP_RUNNING_GROUP_CORES")));
    assert!(GDPCONFIG_KEYS.contains(&("jobbroker", "MIN_WEIGHT_")));
}

#[test]
fn sanitising_and_min_weight_fallback() {
    let bad = AnalBrokerParams {
        base_queue_length_per_pq: f64::NAN,
        overload_ratio_offset: -1.0,
        max_diskio_default: 0.0,
        storage_min_free_size_output: 0.0,
        cap_running_user_jobs: Some(0),
        ..AnalBrokerParams::default()
    };
    let s = bad.sane();
    assert_eq!((s.base_queue_length_per_pq, s.overload_ratio_offset), (100.0, 1.2));
    assert_eq!((s.max_diskio_default, s.storage_min_free_size_output), (1e10, 200.0));
    assert_eq!(s.cap_running_user_jobs, None);
    assert!(validate(&bad).is_err());
    let mut p = AnalBrokerParams::default();
    p.min_weight.insert("user".into(), 0.5);
    assert_eq!(p.min_weight("user", UA), 0.5);
    p.min_weight.insert("user_User Analysis".into(), 2.0);
    assert_eq!((p.min_weight("user", UA), p.min_weight("user", "Express Analysis")), (2.0, 0.5));
    assert_eq!(p.min_weight("managed", UA), 0.0);
}

fn throttle_input(counts: JobCounts) -> ThrottleInput<'static> {
    ThrottleInput {
        gshare: UA,
        working_group: false,
        is_merging: false,
        counts: Some(counts),
        share_usage: None,
        task_class: None,
        user_eval: None,
        quota: Quota::Ok,
    }
}

/// Seed: running > CAP, queued > 2 × CAP, for jobs then cores; group keys for a workingGroup.
#[test]
fn caps_on_jobs_and_cores() {
    let p = AnalBrokerParams {
        cap_running_user_jobs: Some(100),
        cap_running_user_cores: Some(400),
        cap_running_group_jobs: Some(10),
        ..AnalBrokerParams::default()
    };
    let c = |r, q, rc, qc| JobCounts { n_run_jobs: r, n_queued_jobs: q, n_run_cores: rc, n_queued_cores: qc };
    assert_eq!(throttle(&p, &throttle_input(c(100, 200, 400, 800))), None);
    let r = throttle(&p, &throttle_input(c(101, 0, 0, 0))).unwrap();
    assert_eq!(r, ThrottleReason::RunningJobs { n: 101, group: false });
    assert_eq!(r.to_string(), "throttle to generate jobs due to too many running jobs 101 > CAP_RUNNING_USER_JOBS");
    assert_eq!(r.status(), ThrottleStatus::Waiting);
    let r = throttle(&p, &throttle_input(c(0, 201, 0, 0))).unwrap();
    assert_eq!(r.to_string(), "throttle to generate jobs due to too many queued jobs 201 > 2xCAP_RUNNING_USER_JOBS");
    assert_eq!(
        throttle(&p, &throttle_input(c(0, 0, 401, 0))),
        Some(ThrottleReason::RunningCores { n: 401, group: false })
    );
    assert_eq!(
        throttle(&p, &throttle_input(c(0, 0, 0, 801))),
        Some(ThrottleReason::QueuedCores { n: 801, group: false })
    );
    let group = ThrottleInput { working_group: true, ..throttle_input(c(11, 0, 5000, 0)) };
    let r = throttle(&p, &group).unwrap();
    assert_eq!(r.to_string(), "throttle to generate jobs due to too many running jobs 11 > CAP_RUNNING_GROUP_JOBS");
    // Merging chunks and unknown counts are never capped; no cap without the key.
    assert_eq!(throttle(&p, &ThrottleInput { is_merging: true, ..throttle_input(c(999, 999, 0, 0)) }), None);
    assert_eq!(throttle(&p, &ThrottleInput { counts: None, ..throttle_input(c(0, 0, 0, 0)) }), None);
    assert_eq!(throttle(&AnalBrokerParams::default(), &throttle_input(c(u64::MAX, u64::MAX, 0, 0))), None);
}

fn class_input(usage: f64, class: TaskClass, eval: Option<UserEval>) -> ThrottleInput<'static> {
    ThrottleInput {
        share_usage: Some(ShareUsage { usage_perc: usage, l1_eqiv_usage_perc: None }),
        task_class: Some(class),
        user_eval: eval,
        ..throttle_input(JobCounts::default())
    }
}

/// Seed: C > 90 %, B > 95 %, A > max(THRESHOLD_A / slots_hi, 1) × 100 % of the UA target.
#[test]
fn class_throttle_of_user_analysis() {
    let p = AnalBrokerParams::default();
    let r = throttle(&p, &class_input(0.92, TaskClass::C, None)).unwrap();
    assert_eq!(
        r.to_string(),
        "throttle to generate jobs due to gshare User Analysis > 90% of target and task in class C"
    );
    assert_eq!(r.status(), ThrottleStatus::Waiting);
    assert_eq!(throttle(&p, &class_input(0.90, TaskClass::C, None)), None);
    assert_eq!(throttle(&p, &class_input(0.92, TaskClass::B, None)), None);
    let r = throttle(&p, &class_input(0.96, TaskClass::B, None)).unwrap();
    assert_eq!(
        r.to_string(),
        "throttle to generate jobs due to gshare User Analysis > 95% of target and task in class B"
    );
    // L1 equivalent usage lowers the usage: min(92, 85) = 85.
    let mut i = class_input(0.92, TaskClass::C, None);
    i.share_usage = Some(ShareUsage { usage_perc: 0.92, l1_eqiv_usage_perc: Some(0.85) });
    assert_eq!(throttle(&p, &i), None);
    // A: 500 slots of 1000 on hi-sites → rem 500 → ratio 0.5: seed threshold max(1000/500, 1) = 200 %.
    let half = Some(UserEval { rem_slots_a: 500.0, rem_slots_b: 7500.0 });
    assert_eq!(throttle(&p, &class_input(1.99, TaskClass::A, half)), None);
    let r = throttle(&p, &class_input(2.01, TaskClass::A, half)).unwrap();
    assert_eq!(
        r.to_string(),
        "throttle to generate jobs due to gshare User Analysis > 200.000% of target and task in class A"
    );
    // All slots used → ratio 1 → 100 %; no user evaluation → ratio 0.5 → 200 %.
    let full = Some(UserEval { rem_slots_a: 0.0, rem_slots_b: 0.0 });
    assert!(throttle(&p, &class_input(1.01, TaskClass::A, full)).is_some());
    assert_eq!(throttle(&p, &class_input(1.99, TaskClass::A, None)), None);
    assert!(throttle(&p, &class_input(2.01, TaskClass::A, None)).is_some());
    // S never, other gshares never; THRESHOLD_A = 0 → ZeroDivisionError → no class throttle.
    assert_eq!(throttle(&p, &class_input(5.0, TaskClass::S, full)), None);
    assert_eq!(throttle(&p, &ThrottleInput { gshare: "Group", ..class_input(5.0, TaskClass::C, None) }), None);
    let zero = AnalBrokerParams { user_usage_threshold_a: 0.0, ..AnalBrokerParams::default() };
    assert_eq!(throttle(&zero, &class_input(5.0, TaskClass::C, full)), None);
    assert_eq!(
        throttle(&zero, &class_input(5.0, TaskClass::C, None)).map(|r| r.status()),
        Some(ThrottleStatus::Waiting)
    );
}

#[test]
fn quota_comes_after_caps_and_classes() {
    let p = AnalBrokerParams::default();
    let over = ThrottleInput { quota: Quota::Over, ..throttle_input(JobCounts::default()) };
    assert_eq!(throttle(&p, &over), Some(ThrottleReason::OverGlobalQuota));
    assert_eq!(ThrottleReason::OverGlobalQuota.status(), ThrottleStatus::Failed);
    let near = ThrottleInput { quota: Quota::Near, ..throttle_input(JobCounts::default()) };
    assert_eq!(throttle(&p, &near), Some(ThrottleReason::NearGlobalQuota));
    assert_eq!(throttle(&p, &ThrottleInput { is_merging: true, ..near }), None);
    let both = ThrottleInput { quota: Quota::Over, ..class_input(0.95, TaskClass::C, None) };
    assert!(matches!(throttle(&p, &both), Some(ThrottleReason::ClassC { .. })));
}

#[test]
fn numpy_linear_quantiles() {
    assert_eq!(classify::nanquantile(&[], 0.5), None);
    assert_eq!(classify::nanquantile(&[f64::NAN], 0.5), None);
    assert_eq!(classify::nanquantile(&[5.0], 0.333), Some(5.0));
    assert!(close(classify::nanquantile(&[4.0, 1.0, f64::NAN, 3.0, 2.0], 0.333).unwrap(), 1.999));
    assert!(close(classify::nanquantile(&[1.0, 2.0, 3.0, 4.0], 0.667).unwrap(), 3.001));
    assert_eq!(classify::nanquantile(&[1.0, 2.0, 3.0, 4.0], 1.0), Some(4.0));
}

fn wait(w: f64, long_mean: f64, long_n: f64, strr: f64) -> SiteWaitStats {
    SiteWaitStats { w_cl95upp: Some(w), long_q_mean: Some(long_mean), long_q_n: long_n, strr_1d: strr, grid: true }
}

/// Ranks 1000, 8000, 30000, 50000 → P33 = 7993, P67 = 30020 (numpy linear).
#[test]
fn site_classes_from_wait_times() {
    let sites = [
        wait(1000.0, 500.0, 0.0, 1.0),
        wait(2000.0, 8000.0, 3.0, 1.0),
        wait(20000.0, 30000.0, 9.0, 1.0),
        wait(50000.0, 10.0, 0.0, 1.0),
        SiteWaitStats { grid: false, ..wait(2000.0, 8000.0, 4.0, 1.0) },
        SiteWaitStats { grid: false, ..wait(1000.0, 500.0, 0.0, 0.0) },
        SiteWaitStats { grid: false, ..wait(100_000.0, 0.0, 0.0, 1.0) },
        SiteWaitStats { w_cl95upp: None, ..wait(0.0, 0.0, 0.0, 1.0) },
    ];
    let c = classify_sites(&sites, &SiteClassParams::default());
    assert!(close(c.p33.unwrap(), 7993.0) && close(c.p67.unwrap(), 30020.0));
    use SiteClass::*;
    assert_eq!(c.classes, [Some(Hi), Some(Hi), Some(Mid), Some(Lo), Some(Mid), Some(Mid), Some(Lo), None]);
    // The floors 3600 s / 10800 s: tiny quantiles do not make every site slow.
    let fast = [wait(100.0, 0.0, 0.0, 1.0), wait(3000.0, 3000.0, 0.0, 1.0), wait(9000.0, 0.0, 0.0, 1.0)];
    let c = classify_sites(&fast, &SiteClassParams::default());
    assert_eq!(c.classes, [Some(Hi), Some(Hi), Some(Mid)]);
    // No GRID site: NaN quantiles, every comparison false → mid.
    let c = classify_sites(&[SiteWaitStats { grid: false, ..wait(1.0, 1.0, 0.0, 1.0) }], &SiteClassParams::default());
    assert_eq!((c.p33, c.classes.clone()), (None, vec![Some(Mid)]));
    assert_eq!(SiteClass::default(), Mid);
    assert_eq!((Hi.value(), Mid.value(), Lo.value()), (1, 0, -1));
}

#[test]
fn user_and_task_classes() {
    let p = AnalBrokerParams::default();
    assert_eq!(user_eval(&p, 600.0, 7000.0), UserEval { rem_slots_a: 400.0, rem_slots_b: 400.0 });
    assert_eq!(user_eval(&p, 1200.0, 7000.0), UserEval { rem_slots_a: 0.0, rem_slots_b: 0.0 });
    assert_eq!(user_eval(&p, f64::NAN, -3.0), UserEval { rem_slots_a: 1000.0, rem_slots_b: 8000.0 });
    let prog = |finished, jobs| TaskProgress {
        n_files_total: 100,
        n_files_finished: finished,
        n_files_failed: 0,
        n_jobs: jobs,
    };
    let a = UserEval { rem_slots_a: 400.0, rem_slots_b: 400.0 };
    let b = UserEval { rem_slots_a: 0.0, rem_slots_b: 400.0 };
    let c = UserEval { rem_slots_a: 0.0, rem_slots_b: 0.0 };
    assert_eq!(classify_task(&p, "Express Analysis", None, &prog(0, 0)), Some(TaskClass::S));
    assert_eq!(classify_task(&p, UA, None, &prog(0, 0)), None);
    assert_eq!(classify_task(&p, UA, Some(&a), &prog(10, 100)), Some(TaskClass::A));
    assert_eq!(classify_task(&p, UA, Some(&b), &prog(10, 100)), Some(TaskClass::B));
    assert_eq!(classify_task(&p, UA, Some(&c), &prog(99, 10_000)), Some(TaskClass::C));
    // Boosts: A at 90 % with int(1000·10/100) = 100 ≤ 500 jobs left; B at 95 % with 100 ≤ 200.
    assert_eq!(prog(90, 1000).n_jobs_remaining(), 100);
    assert_eq!(classify_task(&p, UA, Some(&a), &prog(90, 1000)), Some(TaskClass::S));
    assert_eq!(classify_task(&p, UA, Some(&a), &prog(89, 1000)), Some(TaskClass::A));
    assert_eq!(classify_task(&p, UA, Some(&a), &prog(90, 6000)), Some(TaskClass::A));
    assert_eq!(classify_task(&p, UA, Some(&b), &prog(95, 2000)), Some(TaskClass::S));
    assert_eq!(classify_task(&p, UA, Some(&b), &prog(95, 5000)), Some(TaskClass::B));
    assert_eq!(classify_task(&p, UA, Some(&a), &prog(100, 1000)), Some(TaskClass::A));
    assert_eq!(TaskProgress::default().pct_finished(), 0.0);
}

fn row(running: u64, activated: u64, running_all: u64, rate: Option<f64>) -> QueueStats {
    QueueStats {
        n_running: running,
        n_activated: activated,
        n_running_all: running_all,
        site_to_running_rate: rate,
        ..QueueStats::default()
    }
}

fn with_users(mut s: QueueStats, user: Option<(u64, u64)>, n_users: u32, total_running: u64) -> QueueStats {
    s.user = user.map(|(q, r)| UserQueueStats { n_queue: q, n_running: r });
    s.users = Some(GshareUsers { n_users, n_running: total_running });
    s
}

/// Real code: P1 not throttleable (150 < 8 × trr 20 = 160), so its 50 failures are not even
/// looked at; P2 problematic (120 > 200/3) and failing (6 + 1 > max(6, 5)); P3 problematic
/// (30 > 100/4). The seed counts real users: P3's limit is 100/3 = 33.3 and P1's failures count.
#[test]
fn analysis_stabilizer_real_code_numbers() {
    let mut p1 = with_users(row(100, 150, 200, Some(40.0)), Some((90, 0)), 1, 100);
    p1.n_failed = 50;
    let mut p2 = with_users(row(100, 300, 100, Some(10.0)), Some((120, 10)), 2, 100);
    (p2.n_failed, p2.n_closed, p2.n_finished) = (6, 1, 3);
    let p3 = with_users(row(10, 120, 10, Some(2.0)), Some((30, 1)), 3, 10);
    let code = code();
    assert!(close(to_running_rate(100, Some(40.0), 200), 20.0));
    assert!(!stabilizer::throttleable(&code, &p1));
    assert_eq!(stabilizer::problems(&code, &p1).count(), 0);
    let l2 = queue_limits(&code, &p2);
    assert!(close(l2.trr, 10.0) && close(l2.max_nq_pq, 200.0) && close(l2.user_fraction, 1.0 / 3.0));
    assert!(close(l2.max_q_len, 200.0 / 3.0));
    let r2: Vec<_> = stabilizer::problems(&code, &p2).collect();
    assert_eq!(r2.len(), 2);
    assert_eq!(
        r2[0].to_string(),
        "unsuitable for the user due to long queue of the user: nQ_pq_user(120) > max_nQ_pq_user(66.667) criteria=-badsite"
    );
    assert_eq!(r2[0].persistence(), Persistence::Temporary);
    assert!(matches!(r2[1], SkipReason::TooManyFailures { n_failed: 6, n_closed: 1, n_finished: 3 }));
    let l3 = queue_limits(&code, &p3);
    assert!(close(l3.max_nq_pq, 100.0) && close(l3.max_q_len, 25.0));
    assert_eq!(stabilizer::problems(&code, &p3).count(), 1);
    let seed = AnalBrokerParams::default();
    assert!(close(queue_limits(&seed, &p3).max_q_len, 100.0 / 3.0));
    assert_eq!(stabilizer::problems(&seed, &p3).count(), 0);
    assert_eq!(stabilizer::problems(&seed, &p1).count(), 1);
    // The user without jobs at the PQ is never throttled there.
    assert_eq!(stabilizer::stabilizer(&code, &QueueStats { user: None, ..p2 }), None);
}

#[test]
fn stabilizer_limits_take_the_largest_term() {
    let p = AnalBrokerParams::default();
    // STATIC: 2 × 400 = 800 > 12 × trr(30) = 360 > 100; user 300 of 400 running → 0.75.
    let s = with_users(row(400, 900, 400, Some(30.0)), Some((700, 300)), 4, 400);
    let l = queue_limits(&p, &s);
    assert!(close(l.max_nq_pq, 800.0) && close(l.user_fraction, 0.75) && close(l.max_q_len, 600.0));
    assert!(close(l.rem_q(), 0.0));
    // Nothing running: base limits, 1/nUsers; BASE_QUEUE_RATIO_ON_PQ × nR when it dominates.
    let idle = with_users(row(0, 500, 0, None), Some((3, 0)), 5, 0);
    let l = queue_limits(&p, &idle);
    assert!(close(l.trr, 0.0) && close(l.max_nq_pq, 100.0) && close(l.max_q_len, 20.0) && close(l.rem_q(), 17.0));
    let p0 = AnalBrokerParams {
        base_queue_length_per_pq: 0.0,
        max_expected_wait_hour: 0.0,
        static_max_queue_running_ratio: 0.0,
        ..p
    };
    let big = with_users(row(1000, 0, 1000, None), Some((0, 0)), 1000, 1000);
    assert!(close(queue_limits(&p0, &big).max_q_len, 50.0));
}

#[test]
fn failures_cap_rt_and_overload() {
    let p = AnalBrokerParams::default();
    let f = |failed, closed, finished| QueueStats {
        n_failed: failed,
        n_closed: closed,
        n_finished: finished,
        ..QueueStats::default()
    };
    assert_eq!(failures(&p, &f(5, 0, 0)), None);
    assert!(failures(&p, &f(5, 1, 0)).is_some());
    assert_eq!(failures(&p, &f(10, 0, 5)), None);
    assert!(failures(&p, &f(11, 0, 5)).is_some());
    // cap_rt: queued > max(20, 2 × running).
    let rt = |running, queued| Some(ResourceTypeStats { running, queued });
    assert_eq!(cap_rt(rt(0, 20)), None);
    assert_eq!(cap_rt(rt(0, 21)), Some(SkipReason::CapRt { queued: 21, running: 0 }));
    assert_eq!(cap_rt(rt(50, 100)), None);
    assert!(cap_rt(rt(50, 101)).is_some());
    assert_eq!(cap_rt(None), None);
    assert_eq!(
        cap_rt(rt(50, 101)).unwrap().to_string(),
        "since nQueue/max(20,nRun) with gshare+resource_type is 101/max(20,50) > 2 criteria=-cap_rt"
    );
    // Overload: grand ratio 1000/1000 = 1, × 1.2; 21 queued / 10 running = 2.1 > 1.2.
    let g = grand_ratio(1000, 1000);
    assert_eq!(g, Some(1.0));
    assert_eq!(grand_ratio(5, 0), None);
    assert_eq!(overload(&p, &row(10, 20, 10, None), g, false), None);
    let r = overload(&p, &row(10, 21, 10, None), g, false).unwrap();
    assert_eq!(
        r.to_string(),
        "nQueue>minQueue(20) and nQueue(21)/nRunning(10) > grandRatio(1.00)*offset(1.2) criteria=-overloaded"
    );
    assert_eq!(overload(&p, &row(20, 24, 20, None), g, false), None);
    assert!(matches!(
        overload(&p, &row(0, 21, 0, None), None, true),
        Some(SkipReason::OverloadedNoRunning { n_queue: 21, .. })
    ));
}

#[test]
fn running_bootstrap_and_original_weight() {
    let q = AnalQueue { core_count: Some(8), ..AnalQueue::default() };
    let mut s = row(5, 9, 5, None);
    s.n_workers = Some(30);
    assert_eq!(effective_running(&q, &s), 5, "no pilots, no bootstrap");
    s.n_pilot = 3;
    assert_eq!(effective_running(&q, &s), 20);
    s.n_workers = Some(12);
    assert_eq!(effective_running(&q, &s), 12);
    s.n_starting = 4;
    assert_eq!(effective_running(&AnalQueue { num_standby: Some(0), ..q.clone() }, &s), 16);
    assert_eq!(effective_running(&AnalQueue { num_standby: Some(400), ..q.clone() }, &s), 50);
    assert_eq!(effective_running(&AnalQueue { num_standby: Some(400), core_count: None, ..q }, &s), 400);
    // (R + 1) / (activated + assigned + defined + starting + 1) = 13 / 14.
    assert!(close(original_weight(12, &s), 13.0 / 14.0));
    assert!(close(original_weight(0, &QueueStats::default()), 1.0));
}

fn ua_rows() -> Vec<QueueStats> {
    let mut h = with_users(row(100, 150, 200, Some(40.0)), Some((10, 20)), 4, 100);
    h.site_class = Some(SiteClass::Hi);
    let mut m = with_users(row(50, 30, 50, Some(10.0)), None, 2, 50);
    m.site_class = Some(SiteClass::Mid);
    let mut l = row(0, 0, 0, None);
    l.site_class = Some(SiteClass::Lo);
    vec![h, m, l]
}

fn weights(class: Option<TaskClass>, gshare: &str, nj: u64, merging: bool, rows: &[QueueStats]) -> Vec<f64> {
    new_weights(&code(), gshare, class, nj, merging, rows).iter().map(|w| w.weight).collect()
}

/// Real code: hi/mid/lo PQs with rem_q 38/40/100 and Nj = 50.
#[test]
fn new_basic_weight_real_code_numbers() {
    let rows = ua_rows();
    let w = new_weights(&code(), UA, Some(TaskClass::A), 50, false, &rows);
    assert_eq!((w[0].max_q_len, w[0].rem_q, w[1].max_q_len, w[2].max_q_len), (48.0, 38.0, 40.0, 100.0));
    let expect = |got: Vec<f64>, want: [f64; 3]| {
        for (g, e) in got.iter().zip(want) {
            assert!(close(*g, e), "{got:?} vs {want:?}");
        }
    };
    expect(
        weights(Some(TaskClass::A), UA, 50, false, &rows),
        [37.94800095367432, 12.050000953674317, 0.0020009536743164063],
    );
    expect(weights(None, UA, 50, false, &rows), [37.94800095367432, 12.050000953674317, 0.0020009536743164063]);
    expect(
        weights(Some(TaskClass::S), UA, 50, false, &rows),
        [37.94800095367432, 12.050000953674317, 0.0020009536743164063],
    );
    expect(
        weights(Some(TaskClass::B), UA, 50, false, &rows),
        [0.0010009536743164063, 39.900000953674315, 10.100000953674316],
    );
    expect(
        weights(Some(TaskClass::C), UA, 50, false, &rows),
        [0.0010009536743164063, 0.0010009536743164063, 50.000000953674316],
    );
    expect(
        weights(Some(TaskClass::A), UA, 50, true, &rows),
        [37.94800095367432, 12.050000953674317, 0.0020009536743164063],
    );
    expect(
        weights(Some(TaskClass::A), UA, 500, false, &rows),
        [37.94800095367432, 40.050000953674314, 100.00200095367431],
    );
    // Other gshares: W_s = Nj, W_q over all PQs (users absent: rem_q 240/120/100).
    let group: Vec<QueueStats> = rows.iter().map(|s| QueueStats { user: None, users: None, ..*s }).collect();
    expect(
        weights(Some(TaskClass::A), "Group", 50, false, &group),
        [27.235773311397896, 12.601626969934479, 10.162602579690576],
    );
}

/// The seed's W_s table: the task class's own site class gets ≈ N_j, the others small ε with
/// ε₁ > ε₂ (A: mid 0.05 > lo 0.002; B: lo 0.1 > hi 0.001; C: 0.001 for hi and mid).
#[test]
fn main_weight_waterfall_matches_the_seed_table() {
    let w = main_weights(Some(TaskClass::A), 10.0, [100.0, 100.0, 100.0]);
    assert!(close(w[0], 9.948) && close(w[1], 0.05) && close(w[2], 0.002));
    let w = main_weights(Some(TaskClass::B), 10.0, [100.0, 100.0, 100.0]);
    assert!(close(w[0], 0.001) && close(w[1], 9.9) && close(w[2], 0.1));
    let w = main_weights(Some(TaskClass::C), 10.0, [100.0, 100.0, 100.0]);
    assert_eq!(w, [0.001, 0.001, 10.0]);
    // Nothing left to fill anywhere: the waterfall overwrites ε_init with 0 (as the code does).
    assert_eq!(main_weights(Some(TaskClass::A), 10.0, [0.0; 3]), [0.0, 0.0, 0.0]);
    assert!(close(WEIGHT_FLOOR, 2f64.powi(-20)));
}

#[test]
fn data_factor_without_locality_in_whole_gb() {
    let gib = 1u64 << 30;
    assert!(close(data_factor_without_locality(5 * gib, 3 * gib + gib / 2), 1.3));
    assert_eq!(data_factor_without_locality(gib / 2, gib / 2), 1.0);
    assert_eq!(data_factor_without_locality(5 * gib, gib - 1), 1.0);
}

#[test]
fn skip_messages() {
    let s = Skip { queue: 0, loop_index: 0, reason: SkipReason::Status(QueueStatus::Brokeroff) };
    assert_eq!(s.line("ANALY_X"), "  skip site=ANALY_X due to status=brokeroff criteria=-status");
    assert_eq!(SkipReason::NoPilot.to_string(), "due to no pilot criteria=-nopilot");
    assert_eq!(
        SkipReason::CoreMismatch { site: None, task: Some(8) }.to_string(),
        "due to core mismatch cores_site=None <> cores_task=8 criteria=-cpucore"
    );
    assert_eq!(
        SkipReason::OutputDiskShortage { space_gb: 150.0, threshold_gb: 200.0 }.to_string(),
        "due to output disk shortage in SE 150 < 200GB criteria=-disk"
    );
    assert_eq!(SkipReason::NoPilot.persistence(), Persistence::Persistent);
    assert_eq!(SkipReason::LowWeight { weight: 1.0 }.persistence(), Persistence::Temporary);
    assert_eq!(SkipReason::CapRt { queued: 1, running: 0 }.persistence(), Persistence::Temporary);
}
