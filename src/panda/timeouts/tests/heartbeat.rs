//! The Watcher rules: sent, heartbeats (HEARTBEAT_TIMEOUT_<workflow>), holding, transferring.

use super::*;

const MIN_30: u64 = 30 * 60;
const H2: u64 = 2 * 3600;
const H3: u64 = 3 * 3600;
const H48: u64 = 48 * 3600;

fn fail_of(a: &TimeoutAction) -> (u32, String) {
    match &a.effect {
        TimeoutEffect::Fail { error_code, diag } => (error_code.code(), diag.clone()),
        e => panic!("not a Watcher failure: {e:?}"),
    }
}

/// Seed "30 min for sent jobs": `modificationTime < now − 30 min` (L334-351), EC_SendError 102.
#[test]
fn sent_30_min() {
    let j = job(JobStatus::Sent, ProdSourceLabel::Managed);
    for p in [seed(), server()] {
        edge(&p, &j, &online(), MIN_30, TimeoutRule::SentHeartbeat);
    }
    let a = check(&seed(), &j, &online(), at(MIN_30 + 1)).unwrap();
    assert_eq!(fail_of(&a), (102, "Sent job didn't receive reply from pilot within 30 min".to_string()));
    assert_eq!(a.rule.to_string(), "Sent Watcher");
}

/// Seed "2 hours for heartbeats from running or starting jobs": production pass, EC_Watcher 100.
#[test]
fn production_heartbeat_2h() {
    for status in [JobStatus::Running, JobStatus::Starting, JobStatus::Stagein, JobStatus::Stageout] {
        let j = job(status, ProdSourceLabel::Managed);
        edge(&seed(), &j, &online(), H2, TimeoutRule::GeneralHeartbeat);
    }
    let j = job(JobStatus::Running, ProdSourceLabel::Managed);
    let a = check(&seed(), &j, &online(), at(H2 + 1)).unwrap();
    assert_eq!(fail_of(&a), (100, format!("lost heartbeat : {}", t(B))));
    assert_eq!(a.rule.to_string(), "General Watcher");
}

/// Analysis jobs: the Anal Watcher (L291-312) with `HEARTBEAT_TIMEOUT_analysis`, default 2 h.
#[test]
fn analysis_heartbeat_2h() {
    for label in [ProdSourceLabel::User, ProdSourceLabel::Panda] {
        let j = job(JobStatus::Running, label);
        edge(&seed(), &j, &online(), H2, TimeoutRule::AnalHeartbeat);
    }
}

/// A 30 min analysis timeout still waits for the Watcher's own 60 min (`sleepTime=60`), unless
/// `endTime` is older than 60 min.
#[test]
fn analysis_watcher_needs_60_min() {
    let mut p = seed();
    p.heartbeat_timeout.insert("analysis".into(), 0.5);
    let j = job(JobStatus::Running, ProdSourceLabel::User);
    edge(&p, &j, &online(), 3600, TimeoutRule::AnalHeartbeat);
    let with_end = JobTimes { end_time: Some(t(B - 3600)), ..j };
    edge(&p, &with_end, &online(), MIN_30, TimeoutRule::AnalHeartbeat);
}

/// The General Watcher selects every label: with analysis 4 h and production 2 h an analysis
/// job is failed by the production pass after 2 h.
#[test]
fn longer_analysis_timeout_falls_to_the_production_pass() {
    let mut p = seed();
    p.heartbeat_timeout.insert("analysis".into(), 4.0);
    let j = job(JobStatus::Running, ProdSourceLabel::User);
    edge(&p, &j, &online(), H2, TimeoutRule::GeneralHeartbeat);
}

/// `HEARTBEAT_TIMEOUT_<workflow>`: a configured workflow of an online PQ has its own pass; a
/// missing key falls back to the production 2 h; `production`/`analysis` as a PQ workflow are
/// excluded once another workflow is listed.
#[test]
fn workflow_override_and_fallback() {
    let mut p = seed();
    p.heartbeat_timeout.insert("pull_ups".into(), 6.0);
    p.heartbeat_timeout.insert("offline_only".into(), 9.0);
    let plan = HeartbeatPlan::new(&p, ["pull_ups", "push", "pull_ups", "production"]);
    assert_eq!(plan.own_workflows().collect::<Vec<_>>(), vec![("pull_ups", SimDuration::from_secs(6 * 3600))]);
    assert_eq!(plan.cover(Some("pull_ups")), HeartbeatCover::Workflow { timeout: SimDuration::from_secs(21_600) });
    let production = HeartbeatCover::Production { timeout: SimDuration::from_secs(7200) };
    assert_eq!(plan.cover(Some("push")), production, "HEARTBEAT_TIMEOUT_push missing → production 2 h");
    assert_eq!(plan.cover(Some("offline_only")), production, "configured but no online PQ has it");
    assert_eq!(plan.cover(None), production);
    assert_eq!(plan.cover(Some("production")), HeartbeatCover::Uncovered);
    assert_eq!(plan.cover(Some("analysis")), HeartbeatCover::Uncovered);
    // Only production and analysis listed: no workflow filter at all.
    let plain = HeartbeatPlan::new(&p, ["push", "production"]);
    assert_eq!(plain.cover(Some("production")), production);
    assert_eq!(plain.cover(Some("pull_ups")), production);

    let j = job(JobStatus::Running, ProdSourceLabel::Managed);
    let q = QueueTimes { heartbeat: plan.cover(Some("pull_ups")), ..online() };
    edge(&p, &j, &q, 21_600, TimeoutRule::GeneralHeartbeat);
    let q = QueueTimes { heartbeat: plan.cover(Some("push")), ..online() };
    edge(&p, &j, &q, H2, TimeoutRule::GeneralHeartbeat);
    let q = QueueTimes { heartbeat: plan.cover(Some("production")), ..online() };
    assert_eq!(rule_at(&p, &j, &q, 30 * 86_400), Some(TimeoutRule::RunningTooLong), "no heartbeat pass");
    // HEARTBEAT_TIMEOUT_production overrides the 2 h; 0 is a valid value (`is not None`).
    p.heartbeat_timeout.insert("production".into(), 3.0);
    let q = QueueTimes { heartbeat: HeartbeatPlan::new(&p, ["push"]).cover(Some("push")), ..online() };
    edge(&p, &j, &q, H3, TimeoutRule::GeneralHeartbeat);
    p.heartbeat_timeout.insert("production".into(), 0.0);
    let q = QueueTimes { heartbeat: HeartbeatPlan::new(&p, ["push"]).cover(None), ..online() };
    assert_eq!(rule_at(&p, &j, &q, 0), None);
    assert_eq!(rule_at(&p, &j, &q, 1), Some(TimeoutRule::GeneralHeartbeat));
}

/// Paused PQs: 1.0.4 skips only the General Watcher; the seed switches every rule off.
#[test]
fn paused_queue_variants() {
    let paused = QueueTimes { status: QueueStatus::Paused, ..online() };
    let running = job(JobStatus::Running, ProdSourceLabel::Managed);
    assert_eq!(rule_at(&server(), &running, &paused, H2 + 1), None);
    let v = verdict(&server(), &running, &paused, H2 + 1, TimeoutRule::GeneralHeartbeat);
    assert_eq!(v, RuleVerdict::Skipped(SkipReason::QueuePaused { status: JobStatus::Running }));
    assert_eq!(v.to_string(), "skipped: skip General Watcher since timeout is disabled for running");
    // Other rules still run at a paused PQ in 1.0.4.
    let user = job(JobStatus::Running, ProdSourceLabel::User);
    assert_eq!(rule_at(&server(), &user, &paused, H2 + 1), Some(TimeoutRule::AnalHeartbeat));
    let sent = job(JobStatus::Sent, ProdSourceLabel::Managed);
    assert_eq!(rule_at(&server(), &sent, &paused, MIN_30 + 1), Some(TimeoutRule::SentHeartbeat));
    // Seed: nothing at all.
    for j in [running, user, sent] {
        assert_eq!(rule_at(&seed(), &j, &paused, 30 * 86_400), None);
    }
    let v = verdict(&seed(), &sent, &paused, MIN_30 + 1, TimeoutRule::SentHeartbeat);
    assert_eq!(v, RuleVerdict::Skipped(SkipReason::SeedQueuePaused));
}

/// Seed "3 hours for holding jobs with job.currentPriority>=800"; 1.0.4 uses `> 800` (L392).
#[test]
fn holding_high_priority_variants() {
    let j800 = JobTimes { current_priority: 800, ..job(JobStatus::Holding, ProdSourceLabel::Managed) };
    edge(&seed(), &j800, &online(), H3, TimeoutRule::HoldingHighPriority);
    // 1.0.4: 800 is not > 800, so it waits for TIMEOUT_holding (48 h).
    edge(&server(), &j800, &online(), H48, TimeoutRule::Holding);
    let j801 = JobTimes { current_priority: 801, ..j800 };
    edge(&server(), &j801, &online(), H3, TimeoutRule::HoldingHighPriority);
    let j799 = JobTimes { current_priority: 799, ..j800 };
    edge(&seed(), &j799, &online(), H48, TimeoutRule::Holding);
}

/// Holding rules select `modificationTime` *or* `endTime` older than the timeout (L393).
#[test]
fn holding_end_time_and_diag() {
    let j = JobTimes {
        current_priority: 900,
        modification_time: t(B + 100 * 3600),
        end_time: Some(t(B)),
        ..job(JobStatus::Holding, ProdSourceLabel::Managed)
    };
    edge(&seed(), &j, &online(), H3, TimeoutRule::HoldingHighPriority);
    let a = check(&seed(), &j, &online(), at(H3 + 1)).unwrap();
    assert_eq!(fail_of(&a), (103, format!("timeout in holding : last heartbeat at {}", t(B))));
}

/// `TIMEOUT_holding` default 48 h (0 = unset), override in hours; the recovery diag prints the
/// Watcher's sleepTime in hours as Python does.
#[test]
fn holding_timeout_holding() {
    let j = job(JobStatus::Holding, ProdSourceLabel::Managed);
    let mut p = seed();
    p.timeout_holding = 0.0;
    edge(&p, &j, &online(), H48, TimeoutRule::Holding);
    p.timeout_holding = 10.0;
    edge(&p, &j, &online(), 36_000, TimeoutRule::Holding);
    let reported = JobTimes { error_reported: true, ..j };
    let a = check(&p, &reported, &online(), at(36_001)).unwrap();
    assert_eq!(fail_of(&a), (101, "job recovery failed for 10.0 hours".to_string()));
    let a = check(&seed(), &reported, &online(), at(H48 + 1)).unwrap();
    assert_eq!(fail_of(&a), (101, "job recovery failed for 48.0 hours".to_string()));
}

/// Holding analysis jobs (L353-387): 3 h, only when `stateChangeTime != modificationTime`, and
/// not while a job output report waits.
#[test]
fn holding_analysis() {
    let j = JobTimes { state_change_time: t(B - 1), ..job(JobStatus::Holding, ProdSourceLabel::User) };
    edge(&seed(), &j, &online(), H3, TimeoutRule::HoldingAnalysis);
    let pending_report = JobTimes { output_report_pending: true, ..j };
    assert_eq!(
        verdict(&seed(), &pending_report, &online(), H3 + 1, TimeoutRule::HoldingAnalysis),
        RuleVerdict::Skipped(SkipReason::OutputReportPending)
    );
    edge(&seed(), &pending_report, &online(), H48, TimeoutRule::Holding);
    let same = job(JobStatus::Holding, ProdSourceLabel::User);
    assert_eq!(verdict(&seed(), &same, &online(), H3 + 1, TimeoutRule::HoldingAnalysis), RuleVerdict::NotApplicable);
    edge(&seed(), &same, &online(), H48, TimeoutRule::Holding);
}

/// Transferring: analysis jobs always (L314-332); production jobs with a `jobSubStatus` only in
/// the seed ("the above HEARTBEAT_TIMEOUT_<workflow> for transferring jobs … jobSubStatus").
#[test]
fn transferring_heartbeat_variants() {
    let user = job(JobStatus::Transferring, ProdSourceLabel::User);
    for p in [seed(), server()] {
        edge(&p, &user, &online(), H2, TimeoutRule::AnalTransferringHeartbeat);
    }
    let own = JobTimes { job_sub_status_set: true, ..job(JobStatus::Transferring, ProdSourceLabel::Managed) };
    edge(&seed(), &own, &online(), H2, TimeoutRule::TransferringHeartbeat);
    assert_eq!(rule_at(&server(), &own, &online(), 20 * 86_400), None, "not selected by copyArchive 1.0.4");
    let ended = JobTimes { end_time: Some(t(B)), ..own };
    let a = check(&seed(), &ended, &online(), at(H2 + 1)).unwrap();
    assert_eq!(fail_of(&a), (104, format!("timeout in transferring : last heartbeat at {}", t(B))));
    let without = JobTimes { job_sub_status_set: false, ..own };
    assert_eq!(rule_at(&seed(), &without, &online(), H2 + 1), None);
}

/// An `endTime` on a running-like job gives EC_Timeout 105; a reported error 101 with the
/// pass's hours.
#[test]
fn watcher_diags() {
    let j = JobTimes { end_time: Some(t(B)), ..job(JobStatus::Stagein, ProdSourceLabel::Managed) };
    let a = check(&seed(), &j, &online(), at(H2 + 1)).unwrap();
    assert_eq!(fail_of(&a), (105, format!("timeout in stagein : last heartbeat at {}", t(B))));
    let j = JobTimes { error_reported: true, ..job(JobStatus::Running, ProdSourceLabel::Managed) };
    let a = check(&seed(), &j, &online(), at(H2 + 1)).unwrap();
    assert_eq!(fail_of(&a), (101, "job recovery failed for 2.0 hours".to_string()));
    let j = JobTimes { error_reported: true, ..job(JobStatus::Running, ProdSourceLabel::User) };
    let a = check(&seed(), &j, &online(), at(H2 + 1)).unwrap();
    assert_eq!(fail_of(&a), (101, "job recovery failed for 1.0 hours".to_string()), "Anal Watcher sleepTime=60");
}

/// `NotYet::fires_after` is exact: nothing at it, the rule one millisecond later.
#[test]
fn fires_after_is_exact() {
    let j = job(JobStatus::Running, ProdSourceLabel::Managed);
    let v = verdict(&seed(), &j, &online(), 60, TimeoutRule::GeneralHeartbeat);
    assert_eq!(v, RuleVerdict::NotYet { fires_after: at(H2) });
    assert_eq!(check(&seed(), &j, &online(), at(H2)), None);
    let next = SimTime(at(H2).0 + 1);
    assert_eq!(check(&seed(), &j, &online(), next).map(|a| a.rule), Some(TimeoutRule::GeneralHeartbeat));
}
