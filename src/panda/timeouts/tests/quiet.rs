//! [`check_until`]: the bound it gives is one through which [`check_resolved`] finds nothing
//! at any later cycle, while the job stays and its PQ's `laststart` only moves forward; with a
//! fresh heartbeat it fires exactly what a `modificationTime` of `now` fires.

use super::*;

/// The base time: 100 days, so `now − threshold` never reaches time zero.
const B: u64 = 100 * 86_400_000;
/// Job and queue times spread over ten days, where the 1 h … 7 d thresholds matter.
const SPAN: u64 = 10 * 86_400_000;

fn near() -> impl Strategy<Value = SimTime> {
    (0..SPAN).prop_map(|ms| SimTime::from_millis(B + ms))
}

/// The statuses a job not yet final can be in.
fn statuses() -> impl Strategy<Value = JobStatus> {
    use JobStatus::*;
    let live = JobStatus::ALL.into_iter().filter(|s| !matches!(s, Finished | Failed | Cancelled | Closed | Other));
    prop::sample::select(live.collect::<Vec<_>>())
}

prop_compose! {
    /// A job whose times are all before `now` (as in a simulation), priority around the 800 of
    /// the high-priority rules.
    fn sim_job()(
        status in statuses(),
        label in prop::sample::select(vec![ProdSourceLabel::Managed, ProdSourceLabel::Test, ProdSourceLabel::User, ProdSourceLabel::Panda, ProdSourceLabel::Other]),
        current_priority in prop::sample::select(vec![0i64, 500, 799, 800, 801, 1000]),
        times in (near(), near(), near(), prop::option::of(near()), prop::option::of(near())),
        flags in (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        relocation_flag in prop::option::of(1i64..3),
    ) -> JobTimes {
        JobTimes {
            status,
            label,
            current_priority,
            creation_time: times.0,
            modification_time: times.1,
            state_change_time: times.2,
            start_time: times.3,
            end_time: times.4,
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
    fn sim_queue()(
        status in prop::sample::select(vec![QueueStatus::Online, QueueStatus::Offline, QueueStatus::Test, QueueStatus::Paused, QueueStatus::Brokeroff]),
        flags in (any::<bool>(), any::<bool>()),
        last_start in prop::option::of(near()),
        hours in prop::option::of(0u64..72),
    ) -> QueueTimes {
        let heartbeat = hours.map_or(HeartbeatCover::Uncovered, |h| HeartbeatCover::Production { timeout: super::hours(h) });
        QueueTimes { status, disable_reassign: flags.0, last_start, heartbeat, has_stale_high_prio_job: flags.1 }
    }
}

prop_compose! {
    fn sim_params()(server in any::<bool>(), defined in 0.0f64..24.0, holding in 0.0f64..96.0, anal in 0.0f64..6.0) -> TimeoutParams {
        let mut p = TimeoutParams {
            timeout_defined: defined,
            timeout_holding: holding,
            variant: if server { TimeoutVariant::PandaServer } else { TimeoutVariant::Seed },
            ..TimeoutParams::default()
        };
        p.heartbeat_timeout.insert("analysis".into(), anal);
        p
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn nothing_fires_through_the_bound(
        p in sim_params(),
        j in sim_job(),
        q in sim_queue(),
        now in near(),
        fresh in any::<bool>(),
        later in prop::collection::vec((0u64..=1000, prop::option::of(0u64..=1000)), 1..8),
    ) {
        // A simulation's job entered its status and was created before `now`.
        let j = JobTimes { state_change_time: j.state_change_time.min(now), ..j };
        let th = p.resolve();
        let at_now = |j: &JobTimes, t: SimTime| if fresh { JobTimes { modification_time: t, ..*j } } else { *j };
        let verdict = check_until(&th, &j, &q, now, fresh);
        prop_assert_eq!(verdict.clone().ok(), check_resolved(&th, &at_now(&j, now), &q, now));
        let Err(until) = verdict else { return Ok(()) };
        prop_assert!(until >= now);
        // Later cycles up to the bound (its end included, in thousandths of the way there),
        // each with the PQ's `laststart` moved forward or not.
        let span = (until - now).0.min(30 * 86_400_000);
        let mut q = q;
        let mut probes: Vec<(u64, Option<u64>)> = later;
        probes.sort_unstable();
        probes.push((1000, None));
        for (k, start) in probes {
            let t = now + SimDuration(span * k / 1000);
            if let Some(s) = start {
                // A pilot started between `now` and `t`.
                let started = now + SimDuration((t - now).0 * s / 1000);
                q.last_start = Some(q.last_start.map_or(started, |l| l.max(started)));
            }
            prop_assert_eq!(check_resolved(&th, &at_now(&j, t), &q, t), None, "at {} (bound {})", t, until);
        }
    }
}

#[test]
fn a_site_active_skip_ends_two_hours_after_the_last_start() {
    // A high-priority activated job 5 h old at a PQ whose last pilot started 1 h ago: the
    // inactive-site rule skips it until the site has had no start for 2 h, long activated
    // (2 d on modificationTime) comes later.
    let b = SimTime::from_millis(B);
    let h = |n: u64| b + super::hours(n);
    let j = JobTimes {
        status: JobStatus::Activated,
        current_priority: 900,
        creation_time: b,
        modification_time: b,
        state_change_time: b,
        ..JobTimes::default()
    };
    let q = QueueTimes { last_start: Some(h(4)), ..QueueTimes::default() };
    let th = TimeoutParams::default().resolve();
    assert_eq!(check_until(&th, &j, &q, h(5), false), Err(h(6)));
    assert_eq!(check_resolved(&th, &j, &q, h(6)), None);
    let fired = check_resolved(&th, &j, &q, h(6) + SimDuration(1)).map(|a| a.rule);
    assert_eq!(fired, Some(TimeoutRule::InactiveSite));
    // No pilot ever started there: 2 h from now.
    let q = QueueTimes { last_start: None, ..q };
    assert_eq!(check_until(&th, &j, &q, h(5), false), Err(h(7)));
}

#[test]
fn a_fresh_heartbeat_never_times_out_and_running_too_long_bounds_it() {
    // A running managed job: the General Watcher (2 h on modificationTime) never fires on a
    // fresh heartbeat, so the bound is the 21 days on creationTime.
    let b = SimTime::from_millis(B);
    let j = JobTimes {
        status: JobStatus::Running,
        creation_time: b,
        modification_time: b,
        state_change_time: b,
        ..JobTimes::default()
    };
    let th = TimeoutParams::default().resolve();
    let now = b + super::hours(3);
    assert_eq!(check_until(&th, &j, &QueueTimes::default(), now, true), Err(b + super::hours(21 * 24)));
    // Without it, the General Watcher fires (modificationTime 3 h old).
    let fired = check_until(&th, &j, &QueueTimes::default(), now, false).map(|a| a.rule);
    assert_eq!(fired, Ok(TimeoutRule::GeneralHeartbeat));
}

#[test]
fn a_fresh_job_that_changed_status_now_is_checked_again_at_the_next_cycle() {
    // An analysis job that entered holding at `now` with a heartbeat: the Holding Anal/DDM
    // Watcher skips it while `stateChangeTime = modificationTime`, and would select it a
    // moment later (its `endTime` is 3 h past), so the bound is `now` itself.
    let b = SimTime::from_millis(B);
    let now = b + super::hours(4);
    let j = JobTimes {
        status: JobStatus::Holding,
        label: ProdSourceLabel::User,
        creation_time: b,
        modification_time: b,
        state_change_time: now,
        end_time: Some(b),
        ..JobTimes::default()
    };
    let th = TimeoutParams::default().resolve();
    let q = QueueTimes::default();
    assert_eq!(check_until(&th, &j, &q, now, true), Err(now));
    let later = now + SimDuration(1);
    let fired = check_resolved(&th, &JobTimes { modification_time: later, ..j }, &q, later).map(|a| a.rule);
    assert_eq!(fired, Some(TimeoutRule::HoldingAnalysis));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// `check_until` asks only the rules that may select the job's status: every other rule
    /// does not apply, and the rule that fires is `check_resolved`'s.
    #[test]
    fn only_the_rules_of_the_status_can_apply(p in any_params(), j in any_job(), q in any_queue(), now in any_time()) {
        for (rule, verdict) in explain(&p, &j, &q, now) {
            if !crate::panda::timeouts::rules::may_select(rule, j.status) {
                prop_assert_eq!(verdict, RuleVerdict::NotApplicable, "{:?} on {:?}", rule, j.status);
            }
        }
        let th = p.resolve();
        prop_assert_eq!(check_until(&th, &j, &q, now, false).ok(), check_resolved(&th, &j, &q, now));
    }
}

#[test]
fn every_status_is_listed_at_its_index() {
    for (i, s) in JobStatus::ALL.iter().enumerate() {
        assert_eq!(*s as usize, i, "{s:?}");
    }
}
