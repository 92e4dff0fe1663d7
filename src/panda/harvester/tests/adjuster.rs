use super::*;
use crate::panda::harvester::config::RunMode;

fn run(cfg: &HarvesterQueueConfig, state: &QueueState) -> SiteDecision {
    define_num_workers(&SubmitterSettings::default(), Some(cfg), &types(), state, AdjusterVariant::Reference).unwrap()
}

/// One non-UCORE pull PQ row (`ANY`) with `activated` jobs.
fn pull_state(activated: JobStats, row: PilotRow) -> QueueState {
    QueueState { job_stats: activated, ..state_with(vec![rt("ANY", row)]) }
}

fn only(d: &SiteDecision) -> &RowDecision {
    assert_eq!(d.rows.len(), 1);
    &d.rows[0]
}

#[test]
fn disabled_queue_missing_config_and_throttler() {
    let cfg = HarvesterQueueConfig::pull(1000, 100);
    for status in [PqStatus::Offline, PqStatus::Standby, PqStatus::Maintenance] {
        let s = QueueState { status: Some(status.clone()), ..pull_state(JobStats::Activated(50), pr(0, 0, 0)) };
        let r = only(&run(&cfg, &s)).clone();
        assert_eq!(r.n_new_workers, 0);
        assert_eq!(r.outcome, RowOutcome::Skipped(SkipReason::QueueStatus(status.as_str().into())));
    }
    let s = QueueState { status: Some(PqStatus::Offline), ..pull_state(JobStats::Activated(50), pr(0, 0, 0)) };
    assert_eq!(
        only(&run(&cfg, &s)).to_string(),
        "resource_type=ANY pilot_type=PR: set n_new_workers=0 since status=offline"
    );
    // test and brokeroff PQs still get pilots; so does a PQ absent from the cache.
    for status in [Some(PqStatus::Test), Some(PqStatus::Brokeroff), None] {
        let s = QueueState { status, ..pull_state(JobStats::Activated(50), pr(0, 0, 0)) };
        assert_eq!(only(&run(&cfg, &s)).n_new_workers, 50);
    }
    let s = pull_state(JobStats::Activated(50), pr(0, 0, 0));
    let d = define_num_workers(&SubmitterSettings::default(), None, &types(), &s, AdjusterVariant::Reference).unwrap();
    assert_eq!(only(&d).outcome, RowOutcome::Skipped(SkipReason::MissingQueueConfig));
    assert_eq!(SkipReason::MissingQueueConfig.to_string(), "set n_new_workers=0 due to missing queue_config");
    let t = QueueState { throttled: Some("SimpleThrottler:too many missed workers".into()), ..s };
    let r = only(&run(&cfg, &t)).clone();
    assert_eq!(r.n_new_workers, 0);
    assert_eq!(
        r.outcome.clone(),
        RowOutcome::Skipped(SkipReason::Throttled("SimpleThrottler:too many missed workers".into()))
    );
    assert!(r.to_string().ends_with("set n_new_workers=0 by SimpleThrottler:too many missed workers"));
}

/// Pull: min(30 activated, nQueueLimitWorker 100) − nQueue 10 = 20.
#[test]
fn pull_mode_basic() {
    let d = run(&HarvesterQueueConfig::pull(1000, 100), &pull_state(JobStats::Activated(30), pr(10, 0, 5)));
    let r = only(&d);
    assert_eq!(r.n_new_workers, 20);
    assert_eq!(
        r.outcome,
        RowOutcome::Computed { max_queued_workers: 30, n_activated: Some(30), binding: Step::MaxQueuedWorkers }
    );
    assert_eq!(
        r.to_string(),
        "resource_type=ANY pilot_type=PR: limiting max_queued_workers to min(n_activated=30, queue_limit) = 30; \
         setting n_new_workers to 20 in max_queued_workers calculation"
    );
    assert_eq!(d.limits.n_queue_limit_worker, 100);
    assert_eq!(d.total(), 20);
    assert_eq!(d.n_new_workers("ANY", "PR"), 20);
    // The limit binds: 500 activated → min(500, 100) − 10 = 90.
    let d = run(&HarvesterQueueConfig::pull(1000, 100), &pull_state(JobStats::Activated(500), pr(10, 0, 5)));
    assert_eq!(only(&d).n_new_workers, 90);
}

#[test]
fn queue_limit_and_max_workers_reached() {
    let d = run(&HarvesterQueueConfig::pull(1000, 100), &pull_state(JobStats::Activated(500), pr(100, 0, 0)));
    let r = only(&d);
    assert_eq!(r.n_new_workers, 0);
    assert_eq!(
        r.outcome,
        RowOutcome::Limited { reason: LimitReason::QueueLimit { n_queue: 100, limit: 100 }, kept: 0 }
    );
    assert!(r.to_string().ends_with("No n_new_workers since n_queue(100)>=n_queue_limit_per_rt(100)"));
    let d = run(&HarvesterQueueConfig::pull(50, 40), &pull_state(JobStats::Activated(500), pr(10, 5, 35)));
    let r = only(&d);
    assert_eq!(r.n_new_workers, 0);
    assert!(
        r.to_string().ends_with("No n_new_workers since n_queue(10) + n_ready(5) + n_running(35) >= max_workers(50)")
    );
    // Not reached: min(100, 40) − 10 = 30, then maxWorkers 50 − (10 + 0 + 30) = 10.
    let d = run(&HarvesterQueueConfig::pull(50, 40), &pull_state(JobStats::Activated(100), pr(10, 0, 30)));
    let r = only(&d);
    assert_eq!(r.n_new_workers, 10);
    assert!(matches!(r.outcome, RowOutcome::Computed { binding: Step::MaxWorkers, .. }));
    assert!(r.to_string().ends_with("setting n_new_workers to 10 to respect max_workers"));
}

fn ucore_cric() -> CricQueue {
    CricQueue { corecount: Some(8), maxrss: Some(16_000), unified: true }
}

/// Core limit 100, 90 queued cores, MCORE workers of 8 cores: ceil(10 / 8) = 2.
#[test]
fn core_limit_with_ceil() {
    let cfg = HarvesterQueueConfig { n_queue_limit_worker_cores: Some(100), ..HarvesterQueueConfig::pull(1000, 500) };
    let mut s = QueueState {
        job_stats: JobStats::Activated(50),
        cric: ucore_cric(),
        ..state_with(vec![rt("MCORE", pr(5, 0, 0))])
    };
    s.worker_stats.queue.core = 90;
    let r = only(&run(&cfg, &s)).clone();
    assert_eq!(r.n_new_workers, 2);
    assert!(matches!(r.outcome, RowOutcome::Computed { binding: Step::QueueLimitCores, .. }));
    assert!(r.to_string().ends_with("setting n_new_workers to 2 to respect queue_limit_cores"));
    // SCORE workers of 1 core: ceil(10 / 1) = 10.
    s.rows = vec![rt("SCORE", pr(5, 0, 0))];
    assert_eq!(only(&run(&cfg, &s)).n_new_workers, 10);
    s.worker_stats.queue.core = 100;
    let r = only(&run(&cfg, &s)).clone();
    assert_eq!(r.n_new_workers, 0);
    assert!(r.to_string().ends_with("No n_new_workers since cores_queue(100) >= queue_limit_cores(100)"));
}

/// Memory limit 20000 MB, 15000 queued, SCORE workers of 2000 MB: ceil(5000 / 2000) = 3.
#[test]
fn memory_limit_with_ceil() {
    let cfg =
        HarvesterQueueConfig { n_queue_limit_worker_memory: Some(20_000), ..HarvesterQueueConfig::pull(1000, 500) };
    let mut s = QueueState {
        job_stats: JobStats::Activated(50),
        cric: ucore_cric(),
        ..state_with(vec![rt("SCORE", pr(5, 0, 0))])
    };
    s.worker_stats.queue.mem = 15_000;
    let r = only(&run(&cfg, &s)).clone();
    assert_eq!(r.n_new_workers, 3);
    assert!(matches!(r.outcome, RowOutcome::Computed { binding: Step::QueueLimitMemory, .. }));
    s.worker_stats.queue.mem = 20_000;
    let r = only(&run(&cfg, &s)).clone();
    assert!(r.to_string().ends_with("No n_new_workers since memory_queue(20000 MB) >= queue_limit_memory(20000 MB)"));
    // A worker that needs 0 cores with a core limit: ZeroDivisionError, nothing submitted.
    let cfg = HarvesterQueueConfig { n_queue_limit_worker_cores: Some(100), ..HarvesterQueueConfig::pull(1000, 500) };
    let s = QueueState { cric: CricQueue { unified: false, maxrss: None, corecount: Some(8) }, ..s };
    let e = define_num_workers(&SubmitterSettings::default(), Some(&cfg), &types(), &s, AdjusterVariant::Reference);
    assert_eq!(e, Err(AdjusterError::ZeroCoresPerWorker { resource_type: "SCORE".into() }));
}

/// 0 activated: the bootstrap pilot, unless noPilotsWhenNoActiveJobs.
#[test]
fn pull_with_nothing_activated() {
    let cfg = HarvesterQueueConfig::pull(1000, 100);
    let d = run(&cfg, &pull_state(JobStats::Activated(0), pr(0, 0, 0)));
    assert_eq!(only(&d).n_new_workers, 1);
    // One queued already: max(1 − 1, 0) = 0.
    assert_eq!(only(&run(&cfg, &pull_state(JobStats::Activated(0), pr(1, 0, 0)))).n_new_workers, 0);
    let mut quiet = cfg.clone();
    quiet.submitter.no_pilots_when_no_active_jobs = true;
    let r = only(&run(&quiet, &pull_state(JobStats::Activated(0), pr(0, 0, 0)))).clone();
    assert_eq!(r.n_new_workers, 0);
    assert_eq!(
        r.outcome,
        RowOutcome::Computed { max_queued_workers: 0, n_activated: Some(0), binding: Step::MaxQueuedWorkers }
    );
    // The [submitter] switch applies to every queue.
    let global = SubmitterSettings { no_pilots_when_no_active_jobs: Some(true), ..SubmitterSettings::default() };
    let s = pull_state(JobStats::Activated(0), pr(0, 0, 0));
    let d = define_num_workers(&global, Some(&cfg), &types(), &s, AdjusterVariant::Reference).unwrap();
    assert_eq!(only(&d).n_new_workers, 0);
    // Written as False: Harvester's attribute is never set → AttributeError.
    let off = SubmitterSettings { no_pilots_when_no_active_jobs: Some(false), ..SubmitterSettings::default() };
    let e = define_num_workers(&off, Some(&cfg), &types(), &s, AdjusterVariant::Reference).unwrap_err();
    assert_eq!(e, AdjusterError::NoPilotsAttributeUnset);
    assert!(e.to_string().starts_with("AttributeError"));
}

/// No `activated` entry for the PQ: max(1 − nQueue − nReady − nRunning, 0).
#[test]
fn pull_bootstrap_without_job_statistics_entry() {
    let cfg = HarvesterQueueConfig::pull(1000, 100);
    assert_eq!(only(&run(&cfg, &pull_state(JobStats::NoActivatedEntry, pr(0, 0, 0)))).n_new_workers, 1);
    assert_eq!(only(&run(&cfg, &pull_state(JobStats::NoActivatedEntry, pr(0, 0, 3)))).n_new_workers, 0);
    let mut quiet = cfg.clone();
    quiet.submitter.no_pilots_when_no_active_jobs = true;
    assert_eq!(only(&run(&quiet, &pull_state(JobStats::NoActivatedEntry, pr(0, 0, 0)))).n_new_workers, 0);
    // No job_statistics.json at all: the configured limit, 100 − 10 = 90.
    assert_eq!(only(&run(&cfg, &pull_state(JobStats::Unavailable, pr(10, 0, 0)))).n_new_workers, 90);
}

#[test]
fn max_workers_zero() {
    // Pull: nQueueLimitWorker 0 → min(n_activated, None) → TypeError.
    let s = pull_state(JobStats::Activated(10), pr(0, 0, 0));
    let e = define_num_workers(
        &SubmitterSettings::default(),
        Some(&HarvesterQueueConfig::pull(0, 100)),
        &types(),
        &s,
        AdjusterVariant::Reference,
    );
    assert_eq!(e, Err(AdjusterError::NoQueueLimitInPullMode));
    // Push (OneToOne): no limit → one worker queued at a time.
    let push = HarvesterQueueConfig::default();
    assert_eq!(only(&run(&push, &s)).n_new_workers, 1);
    assert_eq!(only(&run(&push, &pull_state(JobStats::Activated(10), pr(1, 0, 0)))).n_new_workers, 0);
}

fn slave(max_workers: i64, limit: i64) -> HarvesterQueueConfig {
    HarvesterQueueConfig { run_mode: RunMode::Slave, ..HarvesterQueueConfig::pull(max_workers, limit) }
}

/// PanDA commands 30: min(30 + nQueue 20, 100) − 20 = 30.
#[test]
fn slave_mode_follows_the_command() {
    let s = QueueState {
        job_stats: JobStats::Activated(1000),
        ..state_with(vec![RtRow { resource_type: "ANY".into(), commanded: 30, pilots: vec![pr(20, 0, 0)] }])
    };
    let r = only(&run(&slave(1000, 100), &s)).clone();
    assert_eq!(r.n_new_workers, 30);
    assert_eq!(
        r.outcome,
        RowOutcome::Computed { max_queued_workers: 50, n_activated: None, binding: Step::MaxQueuedWorkers }
    );
    // The limit bounds the command: min(30 + 20, 40) − 20 = 20.
    assert_eq!(only(&run(&slave(1000, 40), &s)).n_new_workers, 20);
    // Command 0.
    let z = QueueState { rows: vec![rt("ANY", pr(20, 0, 0))], ..s.clone() };
    let r = only(&run(&slave(1000, 100), &z)).clone();
    assert_eq!(r.outcome, RowOutcome::Skipped(SkipReason::SlaveZero));
    assert!(r.to_string().ends_with("set n_new_workers=0 by panda in slave mode"));
    // At the limit: 0 (Reference) or the command (HarvesterHead).
    let full = QueueState {
        rows: vec![RtRow { resource_type: "ANY".into(), commanded: 30, pilots: vec![pr(100, 0, 0)] }],
        ..s
    };
    let d = |v| define_num_workers(&SubmitterSettings::default(), Some(&slave(1000, 100)), &types(), &full, v).unwrap();
    assert_eq!(only(&d(AdjusterVariant::Reference)).n_new_workers, 0);
    let head = d(AdjusterVariant::HarvesterHead);
    assert_eq!(only(&head).n_new_workers, 30);
    assert_eq!(
        only(&head).outcome,
        RowOutcome::Limited { reason: LimitReason::QueueLimit { n_queue: 100, limit: 100 }, kept: 30 }
    );
}

#[test]
fn per_cycle_and_universal_caps() {
    let s = pull_state(JobStats::Activated(4000), pr(0, 0, 0));
    let cfg = HarvesterQueueConfig { max_new_workers_per_cycle: Some(300), ..HarvesterQueueConfig::pull(10_000, 5000) };
    let r = only(&run(&cfg, &s)).clone();
    assert_eq!(r.n_new_workers, 300);
    assert!(r.to_string().ends_with("setting n_new_workers to 300 in order to respect maxNewWorkersPerCycle"));
    let r = only(&run(&HarvesterQueueConfig::pull(10_000, 5000), &s)).clone();
    assert_eq!(r.n_new_workers, 1000);
    assert!(r.to_string().ends_with("in order to respect universal maxNewWorkers"));
    let none = SubmitterSettings { max_new_workers: None, ..SubmitterSettings::default() };
    let d = define_num_workers(
        &none,
        Some(&HarvesterQueueConfig::pull(10_000, 5000)),
        &types(),
        &s,
        AdjusterVariant::Reference,
    );
    assert_eq!(only(&d.unwrap()).n_new_workers, 4000);
}

#[test]
fn activate_worker_factor_and_n_core_factor() {
    let cfg = HarvesterQueueConfig::pull(1000, 500);
    let with = |f: ActivateWorkerFactor, instances: Option<usize>, activated: u64, c: &HarvesterQueueConfig| {
        let st = SubmitterSettings { activate_worker_factor: f, ..SubmitterSettings::default() };
        let s =
            QueueState { n_harvester_instances: instances, ..pull_state(JobStats::Activated(activated), pr(0, 0, 0)) };
        only(&define_num_workers(&st, Some(c), &types(), &s, AdjusterVariant::Reference).unwrap()).n_new_workers
    };
    assert_eq!(with(ActivateWorkerFactor::Static(0.5), None, 30, &cfg), 15);
    // auto, 3 instances: int(100 / 3) = 33; no data → 1.
    assert_eq!(with(ActivateWorkerFactor::Auto, Some(3), 100, &cfg), 33);
    assert_eq!(with(ActivateWorkerFactor::Auto, None, 100, &cfg), 100);
    // auto with 2 instances and nCoreFactor 4: int(100 × 0.5 × 0.25) = int(12.5) = 12.
    let mut four = cfg.clone();
    four.submitter.n_core_factor = NCoreFactor::Uniform(4.0);
    assert_eq!(with(ActivateWorkerFactor::Auto, Some(2), 100, &four), 12);
    // 1 activated × 0.25 > 0 → at least 1, even with noPilotsWhenNoActiveJobs.
    four.submitter.no_pilots_when_no_active_jobs = true;
    assert_eq!(with(ActivateWorkerFactor::Static(1.0), None, 1, &four), 1);
    // A non-finite factor cannot be truncated: ValueError.
    let st = SubmitterSettings {
        activate_worker_factor: ActivateWorkerFactor::Static(f64::NAN),
        ..SubmitterSettings::default()
    };
    let s = pull_state(JobStats::Activated(10), pr(0, 0, 0));
    assert_eq!(
        define_num_workers(&st, Some(&cfg), &types(), &s, AdjusterVariant::Reference),
        Err(AdjusterError::NonFiniteActivation)
    );
}

fn pilot(pt: &'static str, n_queue: u64, n_activated: u64) -> PilotRow {
    PilotRow { n_activated, ..PilotRow::new(pt, n_queue, 0) }
}

/// `_set_initial_new_workers`: ALRB wants 20 − 4 = 16, RC 10 − 2 = 8, calc 30 − 6 = 24.
#[test]
fn pilot_type_preallocation() {
    let pilots = vec![pilot("PR", 0, 0), pilot("ALRB", 4, 20), pilot("RC", 2, 10)];
    let prio = ["ALRB", "RC"];
    // Command 18: ratio 0.75 → 12 and 6, nothing left for PR.
    assert_eq!(preallocate_pilot_types(&pilots, 18, 1.0, &prio).unwrap(), [0, 12, 6]);
    // Command 30: ratio 1 → 16 and 8, PR gets the 6 left.
    assert_eq!(preallocate_pilot_types(&pilots, 30, 1.0, &prio).unwrap(), [6, 16, 8]);
    // Factor 0.5: wants 10 − 4 = 6 and 5 − 2 = 3, calc 15 − 6 = 9; command 6 → ratio 2/3:
    // int(6 × 0.666…) = 4, int(3 × 0.666…) = 2.
    assert_eq!(preallocate_pilot_types(&pilots, 6, 0.5, &prio).unwrap(), [0, 4, 2]);
    // Only ALRB prioritized: RC keeps its carried 0, PR gets 30 − 16 = 14.
    assert_eq!(preallocate_pilot_types(&pilots, 30, 1.0, &["ALRB"]).unwrap(), [14, 16, 0]);
    // No command: the carried values.
    let carried = vec![PilotRow { n_new_workers: 7, ..pilot("PR", 0, 0) }];
    assert_eq!(preallocate_pilot_types(&carried, 0, 1.0, &prio).unwrap(), [7]);
}

/// Slave mode end to end: command 30 split into ALRB 16 / RC 8 / PR 6, each then obeyed.
#[test]
fn slave_mode_with_pilot_types() {
    let mut cfg = slave(1000, 100);
    cfg.prioritized_prod_source_labels = vec!["rc_alrb".into(), "rc_test2".into()];
    let row =
        RtRow { resource_type: "ANY".into(), commanded: 30, pilots: vec![pilot("ALRB", 4, 20), pilot("RC", 2, 10)] };
    let d = run(&cfg, &QueueState { job_stats: JobStats::Activated(30), ..state_with(vec![row]) });
    let got: Vec<(&str, u64)> = d.rows.iter().map(|r| (r.pilot_type.as_ref(), r.n_new_workers)).collect();
    assert_eq!(got, [("ALRB", 16), ("RC", 8), ("PR", 6)]);
}

/// Self mode: a non-PR pilot type without a share of a command is skipped.
#[test]
fn non_default_pilot_type_in_self_mode() {
    let row = RtRow { resource_type: "ANY".into(), commanded: 0, pilots: vec![pr(0, 0, 0), pilot("ALRB", 0, 5)] };
    let d = run(
        &HarvesterQueueConfig::pull(1000, 100),
        &QueueState { job_stats: JobStats::Activated(10), ..state_with(vec![row]) },
    );
    assert_eq!(d.n_new_workers("ANY", "PR"), 10);
    let alrb = &d.rows[1];
    assert_eq!(alrb.outcome, RowOutcome::Skipped(SkipReason::NonDefaultPilotTypeZero));
    assert!(alrb.to_string().ends_with("got n_new_workers=0 for non-PR pilot_type in self mode; skipped"));
}

fn ucore_state(activated: u64, rows: Vec<RtRow>) -> QueueState {
    QueueState { job_stats: JobStats::Activated(activated), cric: ucore_cric(), ucore: true, ..state_with(rows) }
}

/// UCORE, 8 activated: SCORE 8 − 3 = 5, MCORE 8 − 5 = 3, SCORE_HIMEM 8 − 6 = 2; total 10 over
/// max_agg = min(40 − 14, 1000 − 14, maxNewWorkersPerCycle 7, 1000) = 7.
/// divmod(5·7, 10) = (3, 5), divmod(3·7, 10) = (2, 1), divmod(2·7, 10) = (1, 4): 6 handed out,
/// the last one to the largest remainder, SCORE → 4, 2, 1.
#[test]
fn ucore_largest_remainder() {
    let cfg = HarvesterQueueConfig { max_new_workers_per_cycle: Some(7), ..HarvesterQueueConfig::pull(1000, 40) };
    let s = ucore_state(8, vec![rt("SCORE", pr(3, 0, 0)), rt("MCORE", pr(5, 0, 0)), rt("SCORE_HIMEM", pr(6, 0, 0))]);
    let d = run(&cfg, &s);
    assert_eq!(d.ucore, Some(UcoreAggregation { total: 10, max_agg: 7, adjusted: true }));
    let got: Vec<(u64, Option<i64>)> = d.rows.iter().map(|r| (r.n_new_workers, r.before_ucore)).collect();
    assert_eq!(got, [(4, Some(5)), (2, Some(3)), (1, Some(2))]);
    assert!(d.rows[0].to_string().ends_with(
        "setting n_new_workers to 4 of job_type=managed resource_type=SCORE pilot_type=PR in order to respect rtype aggregations for UCORE"
    ));
    // Enough room (per cycle 10): nothing changes.
    let roomy = HarvesterQueueConfig { max_new_workers_per_cycle: Some(10), ..cfg };
    let d = run(&roomy, &s);
    assert_eq!(d.ucore, Some(UcoreAggregation { total: 10, max_agg: 10, adjusted: false }));
    assert_eq!(d.total(), 10);
}

/// Positive and prioritized rows first: PR 3 and ALRB 3 over max_agg 5 both get ⌊15/6⌋ = 2
/// with remainder 3; the spare one goes to ALRB (prioritized), MCORE (0) gets none.
#[test]
fn ucore_remainder_prefers_prioritized_pilot_types() {
    let cfg = HarvesterQueueConfig { max_new_workers_per_cycle: Some(5), ..HarvesterQueueConfig::pull(1000, 40) };
    let score = RtRow {
        resource_type: "SCORE".into(),
        commanded: 0,
        pilots: vec![pr(0, 0, 0), PilotRow { n_new_workers: 3, ..pilot("ALRB", 0, 0) }],
    };
    let d = run(&cfg, &ucore_state(3, vec![score, rt("MCORE", pr(3, 0, 0))]));
    let got: Vec<(&str, &str, u64)> =
        d.rows.iter().map(|r| (r.resource_type.as_ref(), r.pilot_type.as_ref(), r.n_new_workers)).collect();
    assert_eq!(got, [("SCORE", "PR", 2), ("SCORE", "ALRB", 3), ("MCORE", "PR", 0)]);
    assert_eq!(d.ucore.map(|u| (u.total, u.max_agg)), Some((6, 5)));
}

/// maxNewWorkersPerCycle 0 (the default) enters the UCORE cap as 0: nothing is submitted.
#[test]
fn ucore_with_default_per_cycle_submits_nothing() {
    let s = ucore_state(8, vec![rt("SCORE", pr(3, 0, 0)), rt("MCORE", pr(5, 0, 0))]);
    let d = run(&HarvesterQueueConfig::pull(1000, 40), &s);
    assert_eq!(d.total(), 0);
    let u = d.ucore.unwrap();
    assert_eq!((u.total, u.max_agg, u.adjusted), (8, 0, true));
    assert_eq!(u.to_string(), "No n_new_workers since n_new_workers_max_agg=0 for UCORE");
}

/// Huge deserialized counts saturate instead of overflowing the UCORE aggregation: one row
/// with nQueue = nReady = nRunning = 2⁶², whose totals exceed i64 in `max_workers − Σ`.
#[test]
fn ucore_aggregation_saturates_on_huge_counts() {
    let big = 1u64 << 62;
    let s = ucore_state(8, vec![rt("SCORE", pr(big, big, big))]);
    let d = run(&HarvesterQueueConfig::pull(1000, 40), &s);
    assert_eq!(d.total(), 0);
    assert_eq!(d.ucore.map(|u| (u.total, u.max_agg)), Some((0, 0)));
}

/// Two slave-mode UCORE rows commanded u64::MAX each (no limits, no per-cycle or universal
/// cap): their sum saturates at i64::MAX instead of overflowing.
#[test]
fn ucore_aggregation_saturates_on_huge_commands() {
    let settings = SubmitterSettings { max_new_workers: None, ..SubmitterSettings::default() };
    let cfg = slave(0, 0);
    let row = |t: &'static str| RtRow { resource_type: t.into(), commanded: u64::MAX, pilots: vec![pr(0, 0, 0)] };
    let s = ucore_state(8, vec![row("SCORE"), row("MCORE")]);
    let d = define_num_workers(&settings, Some(&cfg), &types(), &s, AdjusterVariant::Reference).unwrap();
    let u = d.ucore.unwrap();
    assert_eq!((u.total, u.max_agg, u.adjusted), (i64::MAX, 0, true));
    assert_eq!(d.total(), 0);
}
