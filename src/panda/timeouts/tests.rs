//! Tests of `panda::timeouts`: every rule at threshold − 1 s, threshold and threshold + 1 s
//! (all comparisons are strict, so only + 1 s fires), the numbers of the seed and of the
//! reference §6, the variants, and property tests of the parsers and of "never panics".

use super::*;
use crate::engine::time::{SimDuration, SimTime};
use proptest::prelude::*;

mod heartbeat;
mod other;
mod quiet;
mod reassign;
mod rebro;

/// The base time of every job: 100 days, so `now − threshold` never reaches time zero.
const B: u64 = 100 * 86_400;

fn t(secs: u64) -> SimTime {
    SimTime::from_secs(secs)
}

/// `B + secs`.
fn at(secs: u64) -> SimTime {
    t(B + secs)
}

fn seed() -> TimeoutParams {
    TimeoutParams::default()
}

fn server() -> TimeoutParams {
    TimeoutParams { variant: TimeoutVariant::PandaServer, ..TimeoutParams::default() }
}

/// A job in `status` with `label`, every time column at `B`, JEDI, priority 0.
fn job(status: JobStatus, label: ProdSourceLabel) -> JobTimes {
    JobTimes {
        status,
        label,
        creation_time: t(B),
        modification_time: t(B),
        state_change_time: t(B),
        ..JobTimes::default()
    }
}

fn online() -> QueueTimes {
    QueueTimes::default()
}

/// The rule that fires at `B + secs`.
fn rule_at(p: &TimeoutParams, j: &JobTimes, q: &QueueTimes, secs: u64) -> Option<TimeoutRule> {
    check(p, j, q, at(secs)).map(|a| a.rule)
}

/// Nothing fires at threshold − 1 s and at the threshold; `rule` fires one second later.
fn edge(p: &TimeoutParams, j: &JobTimes, q: &QueueTimes, threshold: u64, rule: TimeoutRule) {
    assert_eq!(rule_at(p, j, q, threshold - 1), None, "{rule:?} at threshold − 1 s");
    assert_eq!(rule_at(p, j, q, threshold), None, "{rule:?} at the threshold (strict <)");
    assert_eq!(rule_at(p, j, q, threshold + 1), Some(rule), "{rule:?} at threshold + 1 s");
}

/// The verdict of `rule` in [`explain`].
fn verdict(p: &TimeoutParams, j: &JobTimes, q: &QueueTimes, secs: u64, rule: TimeoutRule) -> RuleVerdict {
    explain(p, j, q, at(secs)).into_iter().find(|(r, _)| *r == rule).map(|(_, v)| v).expect("rule listed")
}

#[test]
fn daemon_periods() {
    assert_eq!(Daemon::CopyArchive.period(), SimDuration::from_secs(2400));
    assert_eq!(Daemon::DatasetManager.period(), SimDuration::from_secs(2400));
    assert_eq!(Daemon::JediWatchDog.period(), SimDuration::from_secs(300));
    assert_eq!(TimeoutRule::SentHeartbeat.daemon(), Daemon::CopyArchive);
    assert_eq!(TimeoutRule::TransferTimeout.daemon(), Daemon::DatasetManager);
    assert_eq!(Daemon::CopyArchive.to_string(), "copyArchive");
}

#[test]
fn py_float_formats_like_python() {
    assert_eq!(py_float(2.0), "2.0");
    assert_eq!(py_float(48.0), "48.0");
    assert_eq!(py_float(0.5), "0.5");
    assert_eq!(py_float(2.5), "2.5");
    assert_eq!(py_float(f64::NAN), "nan");
    assert_eq!(py_float(1e-5), "1e-05");
}

fn any_status() -> impl Strategy<Value = JobStatus> {
    prop::sample::select(JobStatus::ALL.to_vec())
}

fn any_label() -> impl Strategy<Value = ProdSourceLabel> {
    prop::sample::select(vec![
        ProdSourceLabel::Managed,
        ProdSourceLabel::Test,
        ProdSourceLabel::User,
        ProdSourceLabel::Panda,
        ProdSourceLabel::Other,
    ])
}

fn any_queue_status() -> impl Strategy<Value = QueueStatus> {
    prop::sample::select(vec![
        QueueStatus::Online,
        QueueStatus::Offline,
        QueueStatus::Test,
        QueueStatus::Paused,
        QueueStatus::Brokeroff,
        QueueStatus::Other,
    ])
}

/// Any time, including the extremes of `u64`.
fn any_time() -> impl Strategy<Value = SimTime> {
    prop_oneof![Just(SimTime(0)), Just(SimTime(u64::MAX)), (0u64..4_000_000_000_000).prop_map(SimTime)]
}

/// Any number of hours, including NaN, ±∞ and negatives.
fn any_hours() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.0),
        -1.0e6f64..1.0e6,
        Just(1.0e300)
    ]
}

prop_compose! {
    fn any_job()(
        status in any_status(),
        label in any_label(),
        current_priority in any::<i64>(),
        times in (any_time(), any_time(), any_time()),
        ends in (prop::option::of(any_time()), prop::option::of(any_time())),
        flags in (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        relocation_flag in prop::option::of(-3i64..4),
    ) -> JobTimes {
        JobTimes {
            status,
            label,
            current_priority,
            creation_time: times.0,
            modification_time: times.1,
            state_change_time: times.2,
            start_time: ends.0,
            end_time: ends.1,
            lockedby_jedi: flags.0,
            is_pmerge: flags.1,
            is_build: flags.2,
            relocation_flag,
            job_sub_status_set: flags.3,
            error_reported: flags.4,
            output_report_pending: flags.5,
        }
    }
}

prop_compose! {
    fn any_queue()(
        status in any_queue_status(),
        flags in (any::<bool>(), any::<bool>()),
        last_start in prop::option::of(any_time()),
        cover in prop_oneof![
            Just(HeartbeatCover::Uncovered),
            any::<u64>().prop_map(|ms| HeartbeatCover::Production { timeout: SimDuration(ms) }),
            any::<u64>().prop_map(|ms| HeartbeatCover::Workflow { timeout: SimDuration(ms) }),
        ],
    ) -> QueueTimes {
        QueueTimes { status, disable_reassign: flags.0, last_start, heartbeat: cover, has_stale_high_prio_job: flags.1 }
    }
}

prop_compose! {
    fn any_params()(
        h in (any_hours(), any_hours(), any_hours(), any_hours(), any_hours(), any_hours()),
        d in (any_hours(), any_hours(), any_hours(), any_hours()),
        server in any::<bool>(),
    ) -> TimeoutParams {
        let mut p = TimeoutParams {
            timeout_defined: h.0,
            timeout_holding: h.1,
            fast_rebro_threshold_nqnr_ratio: h.2,
            fast_rebro_threshold_nqueue_frac: h.3,
            analy_timeout: h.4,
            timeout_for_pending_days: d.0,
            wait_for_pending_minutes: d.1,
            transtimehi: d.2,
            transtimelo: d.3,
            variant: if server { TimeoutVariant::PandaServer } else { TimeoutVariant::Seed },
            ..TimeoutParams::default()
        };
        p.heartbeat_timeout.insert("analysis".into(), h.5);
        p.heartbeat_timeout.insert("production".into(), h.5);
        p.fast_rebro_threshold_nqueue.insert("MC".into(), h.5);
        p.analy_timeout_by_group.insert("AP".into(), h.4);
        p.pending_timeout.insert("managed".into(), h.5);
        p
    }
}

proptest! {
    #[test]
    fn parsers_never_panic_and_round_trip(s in ".{0,40}") {
        let js: JobStatus = s.parse().unwrap_or(JobStatus::Other);
        if js != JobStatus::Other {
            prop_assert_eq!(js.as_str(), s.as_str());
        }
        let qs: QueueStatus = s.parse().unwrap_or(QueueStatus::Other);
        if qs != QueueStatus::Other {
            prop_assert_eq!(qs.as_str(), s.as_str());
        }
        let l: ProdSourceLabel = s.parse().unwrap_or(ProdSourceLabel::Other);
        if l != ProdSourceLabel::Other {
            prop_assert_eq!(l.as_str(), s.as_str());
        }
    }

    #[test]
    fn catchall_parser_never_panics(catchall in ".{0,80}", key in "[a-zA-Z=, ]{0,20}") {
        let has = catchall_has_key(&catchall, &key);
        // Same as the regex `^key(=|)*` on each item.
        prop_assert_eq!(has, catchall.split(',').any(|i| i.starts_with(key.as_str())));
        let _ = disable_reassign_from_catchall(Some(&catchall));
    }

    #[test]
    fn check_never_panics(p in any_params(), j in any_job(), q in any_queue(), now in any_time()) {
        let fired = check(&p, &j, &q, now);
        let all = explain(&p, &j, &q, now);
        prop_assert_eq!(all.len(), RULES.len());
        // `check` is the first rule `explain` says fires.
        let first = all.iter().find_map(|(_, v)| match v { RuleVerdict::Fires(a) => Some(a.clone()), _ => None });
        prop_assert_eq!(fired, first);
        let _ = validate(&p);
        let _ = check_transferring(&p, &j, &q, false, now);
        let plan = HeartbeatPlan::new(&p, ["production", "pull_ups", "analysis"]);
        let _ = plan.cover(Some("pull_ups"));
    }

    #[test]
    fn fast_rebro_never_panics(p in any_params(), nq in any::<u64>(), nr in any::<u64>(), total in any::<u64>(), hs in any::<bool>()) {
        let v = fast_rebro_check(&p, "MC", ShareQueueStats { nq, nr }, total, hs);
        let _ = v.to_string();
        if let Some(a) = fast_rebrokerage(&p, "MC", ShareQueueStats { nq, nr }, total, hs) {
            prop_assert!(a.n_jobs <= nq);
        }
    }

    #[test]
    fn rebro_and_tasks_never_panic(
        p in any_params(),
        times in (prop::option::of(any_time()), prop::option::of(any_time()), prop::option::of(any_time())),
        now in any_time(),
        flags in (any::<bool>(), any::<bool>()),
        prio in any::<i64>(),
        label in any_label(),
        status in any_queue_status(),
    ) {
        let g = AnalRebroGroup {
            working_group: Some("AP"),
            activated_at: times.0,
            defined_max_creation: times.1,
            last_state_change: times.2,
            site_known: flags.0,
            site_status: status,
        };
        let _ = analysis_rebrokerage(&p, &g, now);
        let task = TaskPending {
            label,
            current_priority: prio,
            modification_time: times.0.unwrap_or(SimTime::ZERO),
            frozen_time: times.1,
            has_old_status: flags.1,
            parent_running: flags.0,
        };
        let _ = check_task_pending(&p, &task, now);
    }
}
