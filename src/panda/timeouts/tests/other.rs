//! datasetManager's transferring timeout, JEDI's task pending timeout, parameters and parsers.

use super::*;

const D2: u64 = 2 * 86_400;
const D6: u64 = 6 * 86_400;

fn transferring(priority: i64) -> JobTimes {
    JobTimes {
        current_priority: priority,
        end_time: Some(t(B)),
        ..job(JobStatus::Transferring, ProdSourceLabel::Managed)
    }
}

/// Seed "transtimehi days for transferring jobs with job.currentPriority>=800, while transtimelo
/// days for … <800": 2 and 6 days in 1.0.4 (datasetManager.py L25-26, L700-735), on `endTime`.
#[test]
fn transferring_transtimehi_and_lo() {
    let hi = transferring(800);
    let v = |j: &JobTimes, secs| check_transferring(&seed(), j, &online(), false, at(secs));
    assert_eq!(v(&hi, D2 - 1), FinisherVerdict::Wait { times_out_after: Some(at(D2)) });
    assert_eq!(v(&hi, D2), FinisherVerdict::Wait { times_out_after: Some(at(D2)) });
    let FinisherVerdict::Timeout(a) = v(&hi, D2 + 1) else { panic!("2 days") };
    assert_eq!(a.rule, TimeoutRule::TransferTimeout);
    assert_eq!(a.error_code(), 101);
    assert_eq!(a.rule.to_string(), "Finisher : Kill");
    let lo = transferring(799);
    assert!(matches!(v(&lo, D6), FinisherVerdict::Wait { .. }));
    assert!(matches!(v(&lo, D6 - 1), FinisherVerdict::Wait { .. }));
    assert!(matches!(v(&lo, D6 + 1), FinisherVerdict::Timeout(_)));
    // Outputs at the destination: the Finisher finishes the job instead.
    assert_eq!(check_transferring(&seed(), &hi, &online(), true, at(D6)), FinisherVerdict::Finish);
    // Configured days.
    let p = TimeoutParams { transtimehi: 1.0, ..seed() };
    assert!(matches!(check_transferring(&p, &hi, &online(), false, at(86_401)), FinisherVerdict::Timeout(_)));
}

/// Picked only when not modified for 1 h (priority ≥ 800) or 2 h; `startTime` stands in for a
/// missing `endTime`; user jobs are not picked (`lockJobsForFinisher` labels managed/test).
#[test]
fn transferring_pick_and_fallbacks() {
    let recent = JobTimes { modification_time: at(D6 + 10 - 3600), ..transferring(800) };
    assert_eq!(
        check_transferring(&seed(), &recent, &online(), false, at(D6 + 10)),
        FinisherVerdict::NotSelected { picked_after: Some(at(D6 + 10)) }
    );
    let recent_lo = JobTimes { modification_time: at(D6 + 10 - 3601), ..transferring(799) };
    assert!(matches!(
        check_transferring(&seed(), &recent_lo, &online(), false, at(D6 + 10)),
        FinisherVerdict::NotSelected { .. }
    ));
    let start_only = JobTimes { end_time: None, start_time: Some(t(B)), ..transferring(800) };
    assert!(matches!(
        check_transferring(&seed(), &start_only, &online(), false, at(D2 + 1)),
        FinisherVerdict::Timeout(_)
    ));
    let neither = JobTimes { end_time: None, ..transferring(800) };
    assert_eq!(
        check_transferring(&seed(), &neither, &online(), false, at(D6)),
        FinisherVerdict::Wait { times_out_after: None }
    );
    let user = JobTimes { label: ProdSourceLabel::User, ..transferring(800) };
    assert_eq!(
        check_transferring(&seed(), &user, &online(), false, at(D6)),
        FinisherVerdict::NotSelected { picked_after: None }
    );
    // Seed: off at paused / disableReassign PQs; 1.0.4: on.
    let paused = QueueTimes { status: QueueStatus::Paused, ..online() };
    let hi = transferring(800);
    assert_eq!(
        check_transferring(&seed(), &hi, &paused, false, at(D2 + 1)),
        FinisherVerdict::Skipped(SkipReason::SeedQueuePaused)
    );
    assert!(matches!(check_transferring(&server(), &hi, &paused, false, at(D2 + 1)), FinisherVerdict::Timeout(_)));
    let v: RuleVerdict = check_transferring(&seed(), &hi, &online(), false, at(10)).into();
    assert_eq!(v, RuleVerdict::NotYet { fires_after: at(3600) });
}

fn pending_task(priority: i64, frozen: u64) -> TaskPending {
    TaskPending {
        label: ProdSourceLabel::Managed,
        current_priority: priority,
        modification_time: t(B),
        frozen_time: Some(t(frozen)),
        has_old_status: true,
        parent_running: false,
    }
}

const H168: u64 = 7 * 24 * 3600;

/// JEDI: a pending task is picked after `waitForPending` 60 min (strict), reactivated, or sent
/// to exhausted once `frozenTime` is older than 7 days (`int(7) × 24` h).
#[test]
fn task_pending_60_min_and_7_days() {
    let task = pending_task(500, B);
    assert_eq!(
        check_task_pending(&seed(), &task, at(3600)),
        TaskPendingVerdict::NotYet { fires_after: Some(at(3600)) }
    );
    assert_eq!(
        check_task_pending(&seed(), &task, at(3599)),
        TaskPendingVerdict::NotYet { fires_after: Some(at(3600)) }
    );
    assert_eq!(
        check_task_pending(&seed(), &task, at(3601)),
        TaskPendingVerdict::Reactivate { pass: PendingPass::PreAction }
    );
    // frozenTime exactly 168 h before now: not older → reactivated; one second more → timeout.
    let at_limit = pending_task(500, B + 3601 - H168);
    assert_eq!(
        check_task_pending(&seed(), &at_limit, at(3601)),
        TaskPendingVerdict::Reactivate { pass: PendingPass::PreAction }
    );
    let over = pending_task(500, B + 3600 - H168);
    let TaskPendingVerdict::Timeout { pass, error_dialog } = check_task_pending(&seed(), &over, at(3601)) else {
        panic!("7 days")
    };
    assert_eq!(pass, PendingPass::PreAction);
    assert_eq!(error_dialog, format!("timeout while in pending since {}", t(B + 3600 - H168)));
    // The parent is running, or there is no oldStatus / frozenTime.
    let parent = TaskPending { parent_running: true, ..over };
    assert_eq!(
        check_task_pending(&seed(), &parent, at(3601)),
        TaskPendingVerdict::Reactivate { pass: PendingPass::PreAction }
    );
    let no_old = TaskPending { has_old_status: false, ..over };
    assert_eq!(check_task_pending(&seed(), &no_old, at(3601)), TaskPendingVerdict::NotYet { fires_after: None });
    let no_frozen = TaskPending { frozen_time: None, ..over };
    assert_eq!(
        check_task_pending(&seed(), &no_frozen, at(3601)),
        TaskPendingVerdict::Reactivate { pass: PendingPass::PreAction }
    );
}

/// `PENDING_TIMEOUT_<label>` (hours) overrides `timeoutForPending` for the 60 min pass; the
/// high-priority passes (≥ 950 after 10 min, ≥ 900 after 30 min) use the config file's days.
#[test]
fn task_pending_overrides_and_high_priority() {
    let mut p = seed();
    p.pending_timeout.insert("managed".into(), 1.0);
    let frozen_2h = pending_task(500, B - 3600);
    assert!(matches!(check_task_pending(&p, &frozen_2h, at(3601)), TaskPendingVerdict::Timeout { .. }));
    let user = TaskPending { label: ProdSourceLabel::User, ..frozen_2h };
    assert!(
        matches!(check_task_pending(&p, &user, at(3601)), TaskPendingVerdict::Reactivate { .. }),
        "no key for user"
    );
    let p950 = pending_task(950, B - 3600);
    assert_eq!(check_task_pending(&p, &p950, at(600)), TaskPendingVerdict::NotYet { fires_after: Some(at(600)) });
    assert_eq!(
        check_task_pending(&p, &p950, at(601)),
        TaskPendingVerdict::Reactivate { pass: PendingPass::HighPriority950 }
    );
    let p900 = pending_task(900, B - 3600);
    assert_eq!(check_task_pending(&p, &p900, at(1800)), TaskPendingVerdict::NotYet { fires_after: Some(at(1800)) });
    assert_eq!(
        check_task_pending(&p, &p900, at(1801)),
        TaskPendingVerdict::Reactivate { pass: PendingPass::HighPriority900 }
    );
    let old = pending_task(950, B - H168);
    assert!(matches!(
        check_task_pending(&p, &old, at(601)),
        TaskPendingVerdict::Timeout { pass: PendingPass::HighPriority950, .. }
    ));
    let user_high = TaskPending { label: ProdSourceLabel::User, ..p950 };
    assert_eq!(check_task_pending(&p, &user_high, at(601)), TaskPendingVerdict::NotYet { fires_after: Some(at(3600)) });
    // `int(timeoutForPending)`: 7.9 days are 7 × 24 h.
    let p = TimeoutParams { timeout_for_pending_days: 7.9, ..seed() };
    assert_eq!(p.config_pending_timeout_hours(), 168.0);
    assert_eq!(p.pending_timeout_hours("managed"), 168.0);
}

/// The defaults of every key (reference §6 and the code) and PanDA's fallbacks.
#[test]
fn params_defaults_and_fallbacks() {
    let p = TimeoutParams::default();
    assert_eq!(p.heartbeat_timeout("production"), Some(2.0));
    assert_eq!(p.heartbeat_timeout("analysis"), Some(2.0));
    assert_eq!(p.heartbeat_timeout("pull_ups"), None);
    assert_eq!((p.timeout_defined_hours(), p.timeout_holding_hours()), (4.0, 48.0));
    assert_eq!((p.nqnr_ratio(), p.nqueue_frac()), (3.0, 0.3));
    assert_eq!(p.fast_rebro_nqueue_limit("MC"), None);
    assert_eq!(p.analy_timeout_hours(None), 12.0);
    assert_eq!(p.pending_timeout_hours("managed"), 168.0);
    assert_eq!((p.transtimehi, p.transtimelo), (2.0, 6.0));
    assert_eq!(p.wait_for_pending_minutes, 60.0);
    assert_eq!(p.variant, TimeoutVariant::Seed);
    let th = p.resolve();
    assert_eq!(th.analysis_heartbeat, SimDuration::from_secs(7200));
    assert_eq!(th.timeout_defined, SimDuration::from_secs(14_400));
    assert_eq!(th.timeout_holding, SimDuration::from_secs(172_800));
    assert_eq!((th.transtimehi, th.transtimelo), (SimDuration::from_secs(172_800), SimDuration::from_secs(518_400)));
    assert_eq!(validate(&p), Ok(()));
    // NaN is unset; 0 is unset where the code tests truthiness, a value where it tests None.
    let q = TimeoutParams { timeout_defined: f64::NAN, analy_timeout: 0.0, ..TimeoutParams::default() };
    assert_eq!((q.timeout_defined_hours(), q.analy_timeout_hours(Some("x"))), (4.0, 0.0));
    assert!(validate(&q).is_err());
    let mut r = TimeoutParams::default();
    r.heartbeat_timeout.insert("production".into(), -1.0);
    assert_eq!(validate(&r), Err("HEARTBEAT_TIMEOUT_production = -1 must be a number ≥ 0".to_string()));
}

/// Every `(component, key)` in `GDPCONFIG_KEYS` reaches its field through `panda::gdpconfig`
/// (the one importer of PanDA's config table); a key under the wrong component does not.
#[test]
fn gdpconfig_keys_map_to_fields() {
    use crate::panda::gdpconfig;
    let row = |component: &str, key: &str| {
        format!(
            r#"{{"app": "{}", "component": "{component}", "key": "{key}", "value": "7"}}"#,
            gdpconfig::app_of(component)
        )
    };
    let mut rows: Vec<String> = GDPCONFIG_KEYS
        .iter()
        .map(|(component, key)| row(component, &if key.ends_with('_') { format!("{key}X") } else { key.to_string() }))
        .collect();
    rows.push(row("rebroker", "TIMEOUT_defined"));
    let imported = gdpconfig::import(&format!("[{}]", rows.join(",")), "atlas").expect("import");
    let p = imported.config.timeouts;
    assert_eq!(p.heartbeat_timeout("X"), Some(7.0));
    assert_eq!(p.fast_rebro_nqueue_limit("X"), Some(7.0));
    assert_eq!(p.analy_timeout_hours(Some("X")), 7.0);
    assert_eq!(p.pending_timeout_hours("X"), 7.0);
    assert_eq!((p.timeout_defined, p.timeout_holding, p.analy_timeout), (7.0, 7.0, 7.0));
    assert_eq!((p.fast_rebro_threshold_nqnr_ratio, p.fast_rebro_threshold_nqueue_frac), (7.0, 7.0));
    assert_eq!(imported.warnings.len(), 1, "rebroker/TIMEOUT_defined is no key: {:?}", imported.warnings);
    // Every key names a field of the params: snake_case of the key, `ANALY_TIMEOUT_<group>` the
    // map `analy_timeout_by_group`.
    let json = serde_json::to_value(TimeoutParams::default()).unwrap();
    for (_, key) in GDPCONFIG_KEYS {
        let field = match *key {
            "ANALY_TIMEOUT_" => "analy_timeout_by_group".to_string(),
            k => k.trim_end_matches('_').to_lowercase(),
        };
        assert!(json.as_object().unwrap().contains_key(&field), "{key} → {field}");
        assert_eq!(json[&field].is_object(), key.ends_with('_'), "{key}: a family is a map");
    }
}

#[test]
fn params_serde_round_trip_and_unknown_fields() {
    let mut p = server();
    p.heartbeat_timeout.insert("pull_ups".into(), 6.0);
    let json = serde_json::to_string(&p).unwrap();
    assert_eq!(serde_json::from_str::<TimeoutParams>(&json).unwrap(), p);
    let partial: TimeoutParams = serde_json::from_str(r#"{"timeout_defined": 6.0}"#).unwrap();
    assert_eq!((partial.timeout_defined, partial.timeout_holding), (6.0, 48.0));
    assert!(serde_json::from_str::<TimeoutParams>(r#"{"TIMEOUT_defined": 6.0}"#).is_err());
}

#[test]
fn parsers() {
    assert_eq!("transferring".parse::<JobStatus>(), Ok(JobStatus::Transferring));
    assert_eq!("Running".parse::<JobStatus>(), Ok(JobStatus::Other), "PanDA statuses are lower case");
    assert_eq!("paused".parse::<QueueStatus>(), Ok(QueueStatus::Paused));
    assert_eq!("user".parse::<ProdSourceLabel>(), Ok(ProdSourceLabel::User));
    assert!(JobStatus::Pending.in_defined_table() && !JobStatus::Pending.in_active_table());
    assert!(JobStatus::Throttled.in_active_table() && !JobStatus::Closed.in_active_table());
    assert!(catchall_has_key("jobChunkSize=10,disableReassign", "disableReassign"));
    assert!(catchall_has_key("disableReassign=True", "disableReassign"));
    assert!(catchall_has_key("disableReassignX", "disableReassign"), "prefix match, as the regex");
    assert!(!catchall_has_key("a, disableReassign", "disableReassign"), "no trimming");
    assert!(!catchall_has_key("", "disableReassign"));
    assert!(!disable_reassign_from_catchall(None));
    assert!(disable_reassign_from_catchall(Some("disableReassign")));
}
