//! The kill and reassign rules of copyArchive, their order and the disableReassign variants.

use super::*;

const H1: u64 = 3600;
const H4: u64 = 4 * 3600;
const H12: u64 = 12 * 3600;
const D2: u64 = 2 * 86_400;
const H48: u64 = 48 * 3600;
const D7: u64 = 7 * 86_400;
const D21: u64 = 21 * 86_400;

fn close_of(a: &TimeoutAction) -> (u32, Option<&'static str>, u32, String) {
    match &a.effect {
        TimeoutEffect::Close { kill_code, job_sub_status, error_code, diag } => {
            (kill_code.code(), *job_sub_status, error_code.code(), diag.clone())
        }
        e => panic!("not a close: {e:?}"),
    }
}

/// Seed "4 hours for defined jobs": `TIMEOUT_defined` (4 h, 0 = unset) on `modificationTime`,
/// JEDI jobs reassigned with code 51 (L716-747).
#[test]
fn defined_4h() {
    let j = job(JobStatus::Defined, ProdSourceLabel::Managed);
    edge(&seed(), &j, &online(), H4, TimeoutRule::DefinedReassign);
    let test = job(JobStatus::Defined, ProdSourceLabel::Test);
    edge(&seed(), &test, &online(), H4, TimeoutRule::DefinedReassign);
    let a = check(&seed(), &j, &online(), at(H4 + 1)).unwrap();
    assert_eq!(close_of(&a), (51, Some("toreassign"), 100, "reassigned by JEDI".to_string()));
    assert!(a.reassigns());
    let mut p = seed();
    p.timeout_defined = 6.0;
    edge(&p, &j, &online(), 6 * H1, TimeoutRule::DefinedReassign);
    p.timeout_defined = 0.0;
    edge(&p, &j, &online(), H4, TimeoutRule::DefinedReassign);
}

/// Non-JEDI defined jobs are selected but not reassigned in 1.0.4; the stalled-defined rule
/// kills them (code 2) on `creationTime` (L749-767).
#[test]
fn defined_non_jedi_and_build_jobs() {
    let j = JobTimes { lockedby_jedi: false, ..job(JobStatus::Defined, ProdSourceLabel::Managed) };
    assert_eq!(
        verdict(&seed(), &j, &online(), H4 + 1, TimeoutRule::DefinedReassign),
        RuleVerdict::Skipped(SkipReason::NotJedi)
    );
    edge(&seed(), &j, &online(), H4, TimeoutRule::StalledDefined);
    let a = check(&seed(), &j, &online(), at(H4 + 1)).unwrap();
    assert_eq!(
        close_of(&a),
        (2, Some("toreassign"), 102, format!("expired in defined. status unchanged since {}", t(B)))
    );
    let build = JobTimes { is_build: true, ..job(JobStatus::Defined, ProdSourceLabel::Panda) };
    edge(&seed(), &build, &online(), H4, TimeoutRule::StalledDefined);
    assert_eq!(TimeoutRule::DefinedReassign.touches(), Some(Touch::ModificationTime));
}

/// Seed "12 hours for assigned jobs": managed JEDI jobs anywhere in jobsDefined4, 12 h on
/// `modificationTime` (L769-787); other labels wait for the 7-day kill on `creationTime`.
#[test]
fn assigned_12h() {
    let j = job(JobStatus::Assigned, ProdSourceLabel::Managed);
    edge(&seed(), &j, &online(), H12, TimeoutRule::LongInDefinedTable);
    let test = job(JobStatus::Assigned, ProdSourceLabel::Test);
    edge(&seed(), &test, &online(), D7, TimeoutRule::DefinedTableExpired);
    let a = check(&seed(), &test, &online(), at(D7 + 1)).unwrap();
    assert_eq!(close_of(&a).0, 2);
}

/// Seed "2 days for activated or starting jobs": activated on `modificationTime` (L789-828),
/// starting on `stateChangeTime` (48 h, L830-861); `relocationFlag = 2` is not reassignable.
#[test]
fn activated_2d_and_starting_48h() {
    let j = job(JobStatus::Activated, ProdSourceLabel::Managed);
    edge(&seed(), &j, &online(), D2, TimeoutRule::LongActivated);
    let pinned = JobTimes { relocation_flag: Some(2), ..j };
    assert_eq!(verdict(&seed(), &pinned, &online(), D2 + 1, TimeoutRule::LongActivated), RuleVerdict::NotApplicable);
    let null_flag = JobTimes { relocation_flag: None, ..j };
    edge(&seed(), &null_flag, &online(), D2, TimeoutRule::LongActivated);
    // Starting: a fresh heartbeat keeps the General Watcher away; stateChangeTime counts.
    let s = JobTimes { modification_time: t(B + H48), ..job(JobStatus::Starting, ProdSourceLabel::Managed) };
    edge(&seed(), &s, &online(), H48, TimeoutRule::LongStarting);
    assert_eq!(TimeoutRule::LongStarting.touches(), Some(Touch::StateChangeTime));
    assert_eq!(TimeoutRule::LongStarting.to_string(), "reassignJobs for long stating JEDI in active table");
}

/// `disableReassign`: 1.0.4 skips the long-activated, long-starting and inactive-site rules
/// only; the seed switches every rule off. A paused PQ does not disable reassignment in 1.0.4.
#[test]
fn disable_reassign_variants() {
    let q = QueueTimes { disable_reassign: true, ..online() };
    let j = job(JobStatus::Activated, ProdSourceLabel::Managed);
    assert_eq!(rule_at(&server(), &j, &q, D2 + 1), None);
    let v = verdict(&server(), &j, &q, D2 + 1, TimeoutRule::LongActivated);
    assert_eq!(v, RuleVerdict::Skipped(SkipReason::LongActivatedReassignDisabled));
    assert_eq!(v.to_string(), "skipped: skip reassignJobs for long activated since disabled");
    // The 7-day kill on creationTime is not a reassignment: it still fires in 1.0.4.
    assert_eq!(rule_at(&server(), &j, &q, D7 + 1), Some(TimeoutRule::ActivatedExpired));
    assert_eq!(rule_at(&seed(), &j, &q, D21 + 1), None);
    let sent = job(JobStatus::Sent, ProdSourceLabel::Managed);
    assert_eq!(rule_at(&server(), &sent, &q, 1801), Some(TimeoutRule::SentHeartbeat));
    assert_eq!(rule_at(&seed(), &sent, &q, 1801), None);
    assert_eq!(
        verdict(&seed(), &sent, &q, 1801, TimeoutRule::SentHeartbeat),
        RuleVerdict::Skipped(SkipReason::SeedReassignDisabled)
    );
    let s = JobTimes { modification_time: t(B + H48), ..job(JobStatus::Starting, ProdSourceLabel::Managed) };
    assert_eq!(
        verdict(&server(), &s, &q, H48 + 1, TimeoutRule::LongStarting),
        RuleVerdict::Skipped(SkipReason::LongStartingReassignDisabled)
    );
    let paused = QueueTimes { status: QueueStatus::Paused, ..online() };
    assert_eq!(rule_at(&server(), &j, &paused, D2 + 1), Some(TimeoutRule::LongActivated));
}

fn high(status: JobStatus) -> JobTimes {
    JobTimes { current_priority: 800, ..job(status, ProdSourceLabel::Managed) }
}

/// Seed "4 hours for activated or starting jobs with job.currentPriority>=800 at the queues where
/// laststart … is older than 2 hours or the queue status is test or offline" (L635-714).
#[test]
fn inactive_site_4h() {
    let stale = QueueTimes { last_start: Some(t(B)), ..online() };
    let j = high(JobStatus::Activated);
    edge(&seed(), &j, &stale, H4, TimeoutRule::InactiveSite);
    assert_eq!(close_of(&check(&seed(), &j, &stale, at(H4 + 1)).unwrap()).0, 51);
    // Priority 799, NULL relocationFlag (bare `<> 2`), pmerge: not this rule.
    for other in [
        JobTimes { current_priority: 799, ..j },
        JobTimes { relocation_flag: None, ..j },
        JobTimes { is_pmerge: true, ..j },
        JobTimes { lockedby_jedi: false, ..j },
    ] {
        assert_eq!(verdict(&seed(), &other, &stale, H4 + 1, TimeoutRule::InactiveSite), RuleVerdict::NotApplicable);
    }
    // laststart exactly 2 h old is not older than 2 h; one second more is.
    let q = QueueTimes { last_start: Some(at(H4 + 1 - 7200)), ..online() };
    let v = verdict(&seed(), &j, &q, H4 + 1, TimeoutRule::InactiveSite);
    assert_eq!(
        v,
        RuleVerdict::Skipped(SkipReason::SiteActive { last_start: q.last_start, status: QueueStatus::Online })
    );
    let q = QueueTimes { last_start: Some(at(H4 - 7200)), ..online() };
    assert_eq!(rule_at(&seed(), &j, &q, H4 + 1), Some(TimeoutRule::InactiveSite));
    // No laststart: only offline/test make the site inactive.
    assert_eq!(rule_at(&seed(), &j, &online(), H4 + 1), None);
    for status in [QueueStatus::Offline, QueueStatus::Test] {
        let q = QueueTimes { status, ..online() };
        assert_eq!(rule_at(&seed(), &j, &q, H4 + 1), Some(TimeoutRule::InactiveSite));
    }
    let q = QueueTimes { disable_reassign: true, ..stale };
    assert_eq!(
        verdict(&server(), &j, &q, H4 + 1, TimeoutRule::InactiveSite),
        RuleVerdict::Skipped(SkipReason::InactiveSiteReassignDisabled)
    );
}

/// The PQ is listed by activated jobs' `modificationTime` and starting jobs'
/// `stateChangeTime`; a listed PQ loses every job with either column old.
#[test]
fn inactive_site_listing() {
    let stale = QueueTimes { last_start: Some(t(B)), ..online() };
    let starting = JobTimes { modification_time: at(H4), ..high(JobStatus::Starting) };
    assert!(inactive_site_probe(&starting, at(H4 + 1)));
    assert_eq!(rule_at(&seed(), &starting, &stale, H4 + 1), Some(TimeoutRule::InactiveSite));
    // Activated with an old stateChangeTime but a fresh modificationTime does not list the PQ …
    let activated = JobTimes { modification_time: at(H4), ..high(JobStatus::Activated) };
    assert!(!inactive_site_probe(&activated, at(H4 + 1)));
    assert_eq!(rule_at(&seed(), &activated, &stale, H4 + 1), None);
    assert_eq!(
        verdict(&seed(), &activated, &stale, H4 + 1, TimeoutRule::InactiveSite),
        RuleVerdict::NotYet { fires_after: at(2 * H4) }
    );
    // … but is reassigned once another job has listed it.
    let listed = QueueTimes { has_stale_high_prio_job: true, ..stale };
    assert_eq!(rule_at(&seed(), &activated, &listed, H4 + 1), Some(TimeoutRule::InactiveSite));
}

/// Seed "1 hour for pending jobs" (L883-904) and waiting jobs (L932-953): kill code 4.
#[test]
fn pending_and_waiting_1h() {
    for (status, rule) in
        [(JobStatus::Pending, TimeoutRule::PendingExpired), (JobStatus::Waiting, TimeoutRule::WaitingExpired)]
    {
        let j = job(status, ProdSourceLabel::User);
        edge(&seed(), &j, &online(), H1, rule);
        let a = check(&seed(), &j, &online(), at(H1 + 1)).unwrap();
        let diag = format!("expired in {}. status unchanged since {}", status.as_str(), t(B));
        assert_eq!(close_of(&a), (4, Some("toreassign"), 102, diag));
    }
}

/// Seed "7 days for throttled jobs" on `creationTime` (L1233-1249).
#[test]
fn throttled_7d() {
    let j = JobTimes { modification_time: at(D7), ..job(JobStatus::Throttled, ProdSourceLabel::User) };
    edge(&seed(), &j, &online(), D7, TimeoutRule::ThrottledExpired);
}

/// Seed "21 days for running jobs": anything in jobsActive4 created 21 days ago is killed with
/// code 2; a running job only gets the kill command (L1200-1231).
#[test]
fn running_21d() {
    let j = JobTimes { modification_time: at(D21), ..job(JobStatus::Running, ProdSourceLabel::Managed) };
    edge(&seed(), &j, &online(), D21, TimeoutRule::RunningTooLong);
    let a = check(&seed(), &j, &online(), at(D21 + 1)).unwrap();
    assert_eq!(a.effect, TimeoutEffect::CommandToKill { kill_code: KillCode::Expire });
    assert_eq!(a.diag(), "");
    let holding = JobTimes { modification_time: at(D21), ..job(JobStatus::Holding, ProdSourceLabel::Managed) };
    assert_eq!(close_of(&check(&seed(), &holding, &online(), at(D21 + 1)).unwrap()).0, 2);
}

/// The 7-day kills: jobsDefined4 and activated on `creationTime`, analysis jobs in jobsActive4
/// on `modificationTime` (L488-519, L863-881).
#[test]
fn seven_day_kills() {
    let activated = JobTimes { modification_time: at(D7), ..job(JobStatus::Activated, ProdSourceLabel::User) };
    edge(&seed(), &activated, &online(), D7, TimeoutRule::ActivatedExpired);
    let merging = JobTimes { creation_time: at(D7), ..job(JobStatus::Merging, ProdSourceLabel::User) };
    edge(&seed(), &merging, &online(), D7, TimeoutRule::AnalysisActiveExpired);
    let pending_other = JobTimes { label: ProdSourceLabel::Other, ..job(JobStatus::Waiting, ProdSourceLabel::Other) };
    assert_eq!(rule_at(&seed(), &pending_other, &online(), D7 + 1), Some(TimeoutRule::DefinedTableExpired));
}

/// First match wins in code order: a managed pending job not modified for 13 h is reassigned
/// by the 12 h rule (L769) before the pending kill (L883) sees it.
#[test]
fn code_order_decides() {
    let j = JobTimes { modification_time: t(B - 13 * 3600), ..job(JobStatus::Pending, ProdSourceLabel::Managed) };
    assert_eq!(rule_at(&seed(), &j, &online(), H1 + 1), Some(TimeoutRule::LongInDefinedTable));
    let th = seed().resolve();
    let stale = JobTimes { creation_time: t(B - D7), ..job(JobStatus::Activated, ProdSourceLabel::Managed) };
    let now = at(D2 + 1);
    assert_eq!(check_resolved(&th, &stale, &online(), now).map(|a| a.rule), Some(TimeoutRule::ActivatedExpired));
    let before = check_stage(&th, &stale, &online(), now, Stage::BeforeFastRebrokerage);
    assert_eq!(before.map(|a| a.rule), Some(TimeoutRule::ActivatedExpired));
    let after = check_stage(&th, &stale, &online(), now, Stage::AfterFastRebrokerage);
    assert_eq!(after.map(|a| a.rule), Some(TimeoutRule::LongActivated));
}

#[test]
fn explain_lists_every_rule_in_order() {
    let j = job(JobStatus::Running, ProdSourceLabel::Managed);
    let all = explain(&server(), &j, &online(), at(60));
    assert_eq!(all.iter().map(|(r, _)| *r).collect::<Vec<_>>(), RULES.to_vec());
    assert_eq!(all[6], (TimeoutRule::GeneralHeartbeat, RuleVerdict::NotYet { fires_after: at(7200) }));
    assert_eq!(all[7], (TimeoutRule::TransferringHeartbeat, RuleVerdict::NotApplicable));
    assert_eq!(all[19].1, RuleVerdict::NotYet { fires_after: at(D21) });
    assert_eq!(TimeoutRule::InactiveSite.lines(), "copyArchive.py L635-714");
}
