use super::*;

fn usage(entries: &[(&str, f64, f64)]) -> BTreeMap<String, Usage> {
    entries.iter().map(|&(n, e, q)| (n.to_string(), Usage { executing: e, queued: q })).collect()
}

fn names(s: &[ShareStatus]) -> Vec<&str> {
    s.iter().map(|x| x.name.as_str()).collect()
}

/// Production 80 {MC 6, Reprocessing 2} + User Analysis 20: MC 80·6/8 = 60, Repro 20, UA 20
/// (the reference §9 example, reached through nested values that do not sum to 100).
fn tree() -> Vec<ShareNode> {
    vec![
        ShareNode::branch("Production", 80.0, vec![ShareNode::leaf("MC", 6.0), ShareNode::leaf("Reprocessing", 2.0)]),
        ShareNode::leaf("User Analysis", 20.0),
    ]
}

#[test]
fn normalisation_is_the_product_down_the_tree() {
    let l = leaves(&tree());
    assert_eq!(l.iter().map(|x| x.name.as_str()).collect::<Vec<_>>(), ["MC", "Reprocessing", "User Analysis"]);
    let p: Vec<f64> = l.iter().map(|x| x.percent).collect();
    assert_eq!(p, [60.0, 20.0, 20.0]);
    // Top level 3:1 not summing to 100 → 75/25.
    let l = leaves(&[ShareNode::leaf("A", 3.0), ShareNode::leaf("B", 1.0)]);
    assert_eq!((l[0].percent, l[1].percent), (75.0, 25.0));
}

#[test]
fn degenerate_trees() {
    assert!(leaves(&[]).is_empty());
    assert!(sorted_leaves(&[], &usage(&[("MC", 5.0, 1.0)])).is_empty());
    // Zero-sum siblings (PanDA: ZeroDivisionError) → 0; NaN/negative values read as 0.
    let t = vec![
        ShareNode::branch("P", 50.0, vec![ShareNode::leaf("x", 0.0), ShareNode::leaf("y", 0.0)]),
        ShareNode::leaf("N", f64::NAN),
        ShareNode::leaf("M", -5.0),
        ShareNode::leaf("Q", 50.0),
    ];
    let p: Vec<f64> = leaves(&t).iter().map(|x| x.percent).collect();
    assert_eq!(p, [0.0, 0.0, 0.0, 0.0, 50.0]);
}

/// Reference §9: "MC 60 / Repro 20 / UA 20 normalised sorts Reprocessing, MC, User
/// Analysis". The usage is ours (the reference gives none): executing 50/10/40, E = 100 →
/// pledged 60/20/20, ratios 0.833/0.5/2.0.
#[test]
fn reference_sort_example() {
    let flat = vec![
        ShareNode::leaf("MC", 60.0),
        ShareNode::leaf("Reprocessing", 20.0),
        ShareNode::leaf("User Analysis", 20.0),
    ];
    let u = usage(&[("MC", 50.0, 7.0), ("Reprocessing", 10.0, 0.0), ("User Analysis", 40.0, 3.0)]);
    let s = sorted_leaves(&flat, &u);
    assert_eq!(names(&s), ["Reprocessing", "MC", "User Analysis"]);
    assert_eq!(s[0].pledged, 20.0);
    assert_eq!(s[0].ratio, 0.5);
    assert_eq!(s[2].ratio, 2.0);
    assert_eq!(s[1].queued, 7.0);
}

/// Siblings are sorted by their aggregate: Production (60 exec / 80 pledged = 0.75) goes
/// before User Analysis (40/20 = 2) even though MC alone (55/60) is above Reprocessing's 5/20.
#[test]
fn sorting_is_per_level() {
    let u = usage(&[("MC", 55.0, 0.0), ("Reprocessing", 5.0, 0.0), ("User Analysis", 40.0, 0.0)]);
    let s = sorted_leaves(&tree(), &u);
    assert_eq!(names(&s), ["Reprocessing", "MC", "User Analysis"]);
    // UA 10 of 100 executing (ratio 0.5) beats Production's 90/80; then MC 45/60 < Repro 45/20.
    let u = usage(&[("MC", 45.0, 0.0), ("Reprocessing", 45.0, 0.0), ("User Analysis", 10.0, 0.0)]);
    assert_eq!(names(&sorted_leaves(&tree(), &u)), ["User Analysis", "MC", "Reprocessing"]);
}

#[test]
fn zero_pledged_ties_and_unknown_shares() {
    // Nothing executing: every pledge is 0 → all 10⁶ → tree order.
    let s = sorted_leaves(&tree(), &BTreeMap::new());
    assert_eq!(names(&s), ["MC", "Reprocessing", "User Analysis"]);
    assert!(s.iter().all(|x| x.ratio == NO_PLEDGE_RATIO));
    // Jobs of a non-leaf share count in E (100): MC 0/60 = 0 first, a zero-percent share last.
    let t = vec![ShareNode::leaf("MC", 60.0), ShareNode::leaf("Zero", 0.0), ShareNode::leaf("UA", 40.0)];
    let u = usage(&[("Undefined", 100.0, 0.0), ("Zero", 1.0, 0.0), ("UA", 0.0, 0.0)]);
    let s = sorted_leaves(&t, &u);
    assert_eq!(names(&s), ["MC", "UA", "Zero"]);
    assert_eq!(s[0].pledged, 60.6);
    // NaN usage reads as 0.
    let u = usage(&[("MC", f64::NAN, f64::INFINITY), ("UA", 1.0, 0.0)]);
    let s = sorted_leaves(&t, &u);
    assert_eq!(names(&s), ["MC", "UA", "Zero"]);
    assert_eq!((s[0].executing, s[0].queued), (0.0, 0.0));
}

#[test]
fn dispatch_sloppy_ratio() {
    let d = DispatchSettings::default();
    assert_eq!(d.sloppy_dispatch_ratio, 10);
    assert_eq!((0..100).filter(|&r| dispatch_order(&d, r) == DispatchOrder::Age).count(), 10);
    let p = DispatchSettings { sloppy_rule: SloppyRule::PandaServer, ..d };
    assert_eq!((0..100).filter(|&r| dispatch_order(&p, r) == DispatchOrder::Age).count(), 11);
    let p0 = DispatchSettings { sloppy_dispatch_ratio: 0, ..p };
    assert_eq!((0..100).filter(|&r| dispatch_order(&p0, r) == DispatchOrder::Age).count(), 11);
    let d0 = DispatchSettings { sloppy_dispatch_ratio: 0, ..d };
    assert!((0..100).all(|r| dispatch_order(&d0, r) == DispatchOrder::GlobalShares));
    let s: DispatchSettings = serde_json::from_str(r#"{"sloppy_dispatch_ratio": 25}"#).unwrap();
    assert_eq!(s.sloppy_dispatch_ratio, 25);
    assert!(serde_json::from_str::<DispatchSettings>(r#"{"sloppy": 25}"#).is_err());
}

#[test]
fn dispatch_order_of_jobs() {
    let sorted = sorted_leaves(
        &[ShareNode::leaf("MC", 50.0), ShareNode::leaf("Test", 1.0), ShareNode::leaf("UA", 49.0)],
        &usage(&[("MC", 10.0, 0.0), ("Test", 90.0, 0.0)]),
    );
    assert_eq!(names(&sorted), ["UA", "MC", "Test"]);
    let ranks = share_ranks(&sorted);
    assert_eq!((share_rank(&ranks, "Test"), share_rank(&ranks, "UA"), share_rank(&ranks, "MC")), (0, 0, 1));
    assert_eq!(share_rank(&ranks, "Undefined"), 3);
    let job = |id, prio, share: &str| Candidate {
        panda_id: id,
        current_priority: prio,
        share_rank: share_rank(&ranks, share),
    };
    let mut jobs =
        vec![job(1, 900, "Undefined"), job(2, 100, "MC"), job(3, 500, "MC"), job(4, 1, "UA"), job(5, 7, "Test")];
    sort_candidates(&mut jobs, DispatchOrder::GlobalShares);
    assert_eq!(jobs.iter().map(|j| j.panda_id).collect::<Vec<_>>(), [5, 4, 3, 2, 1]);
    sort_candidates(&mut jobs, DispatchOrder::Age);
    assert_eq!(jobs.iter().map(|j| j.panda_id).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
}

/// A work queue evaluated for resource type SCORE.
fn k(work_queue: &str) -> ThrottleKey<'_> {
    ThrottleKey { work_queue, resource_type: "SCORE" }
}

fn input(n_running: u64, n_not_run: u64, n_defined: u64) -> ThrottleInput {
    ThrottleInput { n_running, n_not_run, n_defined, ..Default::default() }
}

#[test]
fn throttle_bunch_and_limit() {
    let s = ThrottleSettings::default();
    // 100·2 − 50 = 150 → clamped to 500; limit 4·500.
    let d = throttle(&s, &k("MC"), true, &input(100, 50, 0));
    assert_eq!((d.threshold, d.n_jobs_in_bunch, d.n_queue_limit), (2.0, 500, 2000));
    // 1000·2 − 100 = 1900 → 600; limit 2400.
    let d = throttle(&s, &k("MC"), true, &input(1000, 100, 0));
    assert_eq!((d.n_jobs_in_bunch, d.n_queue_limit), (600, 2400));
    // 1000 queued < 0.9·2400 → not enough: max(600/2, 2400/20) = 300.
    let d = throttle(&s, &k("MC"), true, &input(1000, 1000, 0));
    assert_eq!(d.verdict, ThrottleVerdict::Pass { max_num_jobs: Some(300), not_enough_queued: true });
    // 2000 − 1500 = 500, limit 2000; 1900 queued ≥ 0.9·2000 and ≥ nRun, ratio 1.9 ≤ 2 → plain pass.
    let d = throttle(&s, &k("MC"), true, &input(1000, 1500, 400));
    assert_eq!(d.verdict, ThrottleVerdict::Pass { max_num_jobs: Some(250), not_enough_queued: false });
    // 2100 queued > 2000 and ratio 2.1 > 2 → skip.
    let d = throttle(&s, &k("MC"), true, &input(1000, 1900, 200));
    assert_eq!(d.verdict, ThrottleVerdict::Skip(ThrottleReason::QueueRatio));
}

#[test]
fn throttle_limits() {
    let s = ThrottleSettings::default();
    assert_eq!(
        throttle(&s, &k("MC"), true, &input(0, 2001, 0)).verdict,
        ThrottleVerdict::Skip(ThrottleReason::NothingRunning)
    );
    let short = ThrottleInput { total_walltime: Some(1.0e6), ..input(0, 2001, 0) };
    assert!(matches!(throttle(&s, &k("MC"), true, &short).verdict, ThrottleVerdict::Pass { .. }));
    assert_eq!(
        throttle(&s, &k("MC"), true, &input(100, 2001, 100)).verdict,
        ThrottleVerdict::Skip(ThrottleReason::QueueRatio)
    );
    let hp = ThrottleInput { high_prio_queued: true, ..input(100, 2001, 100) };
    assert_eq!(
        throttle(&s, &k("MC"), true, &hp).verdict,
        ThrottleVerdict::PriorityFloor { reason: ThrottleReason::QueueRatio, max_num_jobs: 250 }
    );
    // nRun 2000 → bunch 600, limit 2400; ratio 1.2 ≤ 2 but 2401 defined > 2400.
    assert_eq!(
        throttle(&s, &k("MC"), true, &input(2000, 0, 2401)).verdict,
        ThrottleVerdict::Skip(ThrottleReason::TooManyDefined)
    );
    let w = ThrottleInput { n_waiting: 1201, ..input(10, 0, 0) };
    assert_eq!(throttle(&s, &k("MC"), true, &w).verdict, ThrottleVerdict::Skip(ThrottleReason::TooManyWaiting));
    // an unthrottled share passes without a cap (`retUnThrottled` before `setMaxNumJobs`)
    assert_eq!(
        throttle(&s, &k("MC"), false, &input(0, 99_999, 0)).verdict,
        ThrottleVerdict::Pass { max_num_jobs: None, not_enough_queued: false }
    );
    let mut caps = ThrottleSettings::default();
    caps.nrunningcap.insert("MC".into(), 50);
    caps.nqueuecap.insert("UA".into(), 10);
    caps.nqueuelimit.insert("UA".into(), 100);
    let hp = ThrottleInput { high_prio_queued: true, ..input(60, 0, 0) };
    assert_eq!(throttle(&caps, &k("MC"), true, &hp).verdict, ThrottleVerdict::Skip(ThrottleReason::RunningCap));
    let d = throttle(&caps, &k("UA"), true, &input(60, 11, 0));
    assert_eq!((d.n_queue_limit, d.verdict), (100, ThrottleVerdict::Skip(ThrottleReason::QueueCap)));
}

#[test]
fn throttle_settings_and_bad_numbers() {
    let s: ThrottleSettings = serde_json::from_str(
        r#"{"throttle_threshold": 3.0, "work_shortage": true, "throttle_threshold_for_work_shortage": 5.0, "nqueuelimit": {"MC": 7}}"#,
    )
    .unwrap();
    let d = throttle(&s, &k("MC"), true, &input(1000, 0, 0));
    assert_eq!((d.threshold, d.n_queue_limit), (5.0, 7));
    assert!(serde_json::from_str::<ThrottleSettings>(r#"{"THROTTLE": 1}"#).is_err());
    let nan = ThrottleSettings { throttle_threshold: f64::NAN, ..Default::default() };
    assert_eq!(throttle(&nan, &k("MC"), true, &input(u64::MAX, u64::MAX, u64::MAX)).threshold, 2.0);
    let nanw = ThrottleInput { total_walltime: Some(f64::NAN), ..input(0, 5000, 0) };
    assert!(matches!(throttle(&nan, &k("MC"), true, &nanw).verdict, ThrottleVerdict::Pass { .. }));
}

#[test]
fn configuration_levels_as_get_configuration() {
    // `__getConfiguration`: NQUEUELIMIT_<wq>_<rt>, then _<MCORE|SCORE>*, then _<wq>; 0 is unset.
    let mut m = BTreeMap::new();
    m.insert("MC".to_string(), 900);
    let mcore = ThrottleKey { work_queue: "MC", resource_type: "MCORE_HIMEM" };
    assert_eq!(configured(&m, &mcore), Some((900, ConfigLevel::GlobalShare)));
    m.insert("MC_MCORE*".to_string(), 800);
    assert_eq!(configured(&m, &mcore), Some((800, ConfigLevel::McoreScore)));
    m.insert("MC_MCORE_HIMEM".to_string(), 0);
    assert_eq!(configured(&m, &mcore), Some((800, ConfigLevel::McoreScore)), "0 reads as unset (`if value:`)");
    m.insert("MC_MCORE_HIMEM".to_string(), 700);
    assert_eq!(configured(&m, &mcore), Some((700, ConfigLevel::ResourceType)));
    // SCORE jobs of the same queue see only the gshare-level key
    assert_eq!(configured(&m, &k("MC")), Some((900, ConfigLevel::GlobalShare)));
    // a resource type that is neither: Python formats the missing family as `None*`
    m.insert("MC_None*".to_string(), 5);
    assert_eq!(
        configured(&m, &ThrottleKey { work_queue: "MC", resource_type: "GPU" }),
        Some((5, ConfigLevel::McoreScore))
    );
}

#[test]
fn limits_compare_counts_of_their_own_level() {
    // NQUEUELIMIT at gshare level: the gshare's queued jobs (3000 > 2500) decide, not the
    // resource type's (100); the ratio still uses the resource type (100/50 = 2, not > 2).
    let mut s = ThrottleSettings::default();
    s.nqueuelimit.insert("MC".into(), 2500);
    let gs = LevelCounts { n_running: 5000, n_not_run: 2000, n_defined: 1000 };
    let x = ThrottleInput { gs: Some(gs), ..input(50, 100, 0) };
    let d = throttle(&s, &k("MC"), true, &x);
    assert_eq!(d.queue_limit_level, Some(ConfigLevel::GlobalShare));
    assert!(matches!(d.verdict, ThrottleVerdict::Pass { .. }), "{d:?}");
    // 1000 defined at gshare level > 900: too many defined
    s.nqueuelimit.insert("MC".into(), 900);
    assert_eq!(throttle(&s, &k("MC"), true, &x).verdict, ThrottleVerdict::Skip(ThrottleReason::TooManyDefined));
    // NRUNNINGCAP at SCORE* level reads the family's running count
    let mut c = ThrottleSettings::default();
    c.nrunningcap.insert("MC_SCORE*".into(), 60);
    let ms = LevelCounts { n_running: 61, n_not_run: 0, n_defined: 0 };
    let y = ThrottleInput { ms: Some(ms), ..input(10, 0, 0) };
    assert_eq!(throttle(&c, &k("MC"), true, &y).verdict, ThrottleVerdict::Skip(ThrottleReason::RunningCap));
    assert!(matches!(throttle(&c, &k("MC"), true, &input(10, 0, 0)).verdict, ThrottleVerdict::Pass { .. }));
}

#[test]
fn prestage_and_event_service_work_queues() {
    // Reprocessing: nRun 100 → bunch 500, limit 5000 (configured), 1000 queued → room 4000,
    // bunch grows to the max 600, so maxNumJobs = 600 / 2 = 300.
    let mut s = ThrottleSettings::default();
    s.nqueuelimit.insert("Reprocessing default".into(), 5000);
    let key = ThrottleKey { work_queue: "Reprocessing default", resource_type: "SCORE" };
    let d = throttle(&s, &key, true, &input(100, 1000, 0));
    assert_eq!(d.n_jobs_in_bunch, 600);
    assert!(matches!(d.verdict, ThrottleVerdict::Pass { max_num_jobs: Some(300), .. }), "{d:?}");
    // eventservice works at gshare level and ignores the walltime condition: nothing running
    // in the share, 2001 queued > NQUEUELIMIT_eventservice 2000 → skip even with little
    // walltime queued. (Without a configured limit the queued count is the resource type's, as
    // `nNotRun_queuelimit` is at LEVEL_None.)
    s.nqueuelimit.insert("eventservice".into(), 2000);
    s.nqueuelimit.insert("MC".into(), 2000);
    let es = ThrottleKey { work_queue: "eventservice", resource_type: "SCORE" };
    let gs = LevelCounts { n_running: 0, n_not_run: 2001, n_defined: 0 };
    let x = ThrottleInput { gs: Some(gs), total_walltime: Some(1.0), ..input(7, 0, 0) };
    assert_eq!(throttle(&s, &es, true, &x).verdict, ThrottleVerdict::Skip(ThrottleReason::NothingRunning));
    assert!(matches!(throttle(&s, &k("MC"), true, &x).verdict, ThrottleVerdict::Pass { .. }));
}
