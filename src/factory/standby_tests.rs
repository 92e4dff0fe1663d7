//! Tests of `factory::standby`, with hand-computed numbers.

use super::*;

fn secs(s: u64) -> SimDuration {
    SimDuration::from_secs(s)
}

fn obs(queued_jobs: u64, running: u32, queued: u32, idle: u32) -> StandbyObservation {
    StandbyObservation {
        queued_jobs,
        running_startds: running,
        queued_startds: queued,
        idle_vms: idle,
        vms_per_startd: 2,
    }
}

#[test]
fn fixed_and_proportional() {
    let mut f = StandbyController::new(&StandbyPolicy::Fixed(4)).unwrap();
    assert_eq!(f.target(&obs(1000, 0, 0, 0)), 4);
    assert_eq!((f.to_submit(&obs(0, 9, 3, 0)), f.to_submit(&obs(0, 9, 6, 0))), (1, 0));
    let mut p = StandbyController::new(&StandbyPolicy::Proportional { per_queued_job: 0.07, min: 2, max: 20 }).unwrap();
    // 0.07 × 100 = 7.000000000000001 in floats: 7, not 8; 0.07 × 55 = 3.85 → 4.
    let t: Vec<u32> = [0, 100, 55, 1000].iter().map(|&q| p.target(&obs(q, 0, 0, 0))).collect();
    assert_eq!(t, vec![2, 7, 4, 20]);
    // The observations feed only the adaptive controller.
    p.observe_queue_wait(secs(10));
    p.observe_lifetime(secs(10));
    p.observe_arrivals(10, secs(10));
    assert_eq!(p.target(&obs(100, 0, 0, 0)), 7);
}

fn adaptive() -> AdaptiveStandby {
    AdaptiveStandby::new(&AdaptiveSettings { smoothing: 0.25, safety: 1.2, ..AdaptiveSettings::default() }).unwrap()
}

#[test]
fn littles_law_with_the_priors() {
    // 100 running startd pilots living 4 h: one leaves every 144 s; a replacement needs 30 min in
    // the queue, so 1800 / 144 = 12.5 are in transit; × safety 1.2 = 15 kept queued.
    let mut a = adaptive();
    let t = a.target(&obs(0, 100, 0, 0));
    assert!((t.replace - 12.5).abs() < 1e-12, "{t:?}");
    assert_eq!((t.target, t.demand, t.moved), (15, 0.0, SafetyMove::Kept));
}

#[test]
fn the_controller_learns_tsw_lifetimes_and_arrivals() {
    let mut a = adaptive();
    // Tsw^ = 1800 + 0.25 (3600 − 1800) = 2250 s; L^ = 14 400 + 0.25 (7200 − 14 400) = 12 600 s.
    a.observe_queue_wait(secs(3600));
    a.observe_lifetime(secs(7200));
    // 36 jobs in an hour: 0.01/s; arr^ = 0 + 0.25 × 0.01 = 0.0025/s.
    a.observe_arrivals(36, secs(3600));
    a.observe_arrivals(5, SimDuration::ZERO); // an empty span teaches nothing
    let (tsw, life, arr, safety) = a.estimates();
    assert_eq!((tsw, life, safety), (2250.0, 12_600.0, 1.2));
    assert!((arr - 0.0025).abs() < 1e-15);
    // replace = 100 / 12 600 × 2250 = 17.857…; demand = max(0, 0 + 0.0025 × 2250 − 0) / 2
    // = 2.8125; 1.2 × 17.857 + 2.8125 = 24.24 → 25.
    let t = a.target(&obs(0, 100, 0, 0));
    assert!((t.replace - 17.857_142_857_142_858).abs() < 1e-9, "{t:?}");
    assert!((t.demand - 2.8125).abs() < 1e-12);
    assert_eq!(t.target, 25);
}

#[test]
fn the_safety_factor_moves_on_starvation_and_idleness() {
    let mut a = adaptive();
    a.observe_queue_wait(secs(3600));
    a.observe_lifetime(secs(7200));
    a.observe_arrivals(36, secs(3600));
    // Jobs waited (30) while no startd pilot ran: safety 1.2 × 1.25 = 1.5. No replacement to
    // make; demand = (30 + 5.625 − 0) / 2 = 17.8125 → 18.
    let t = a.target(&obs(30, 0, 0, 0));
    assert_eq!((t.moved, t.target), (SafetyMove::Up, 18));
    assert!((t.safety - 1.5).abs() < 1e-12);
    // Standby pilots sat queued (25) while 4 VMs idled: safety 1.5 × 0.9 = 1.35;
    // 1.35 × 17.857 + (5.625 − 4) / 2 = 24.107 + 0.8125 = 24.92 → 25, and 25 are queued: submit 0.
    let t = a.target(&obs(0, 100, 25, 4));
    assert_eq!((t.moved, t.target), (SafetyMove::Down, 25));
    assert!((t.safety - 1.35).abs() < 1e-12);
    // Starvation again and again: 1.6875, 2.109, 2.637, 3.296, then capped at 4 (not 4.12).
    let ups: Vec<f64> = (0..6).map(|_| a.target(&obs(1, 0, 0, 0)).safety).collect();
    assert!((ups[0] - 1.6875).abs() < 1e-12 && ups[3] < 4.0 && ups[4] == 4.0 && ups[5] == 4.0, "{ups:?}");
    // Idleness again and again: down to safety_min = 1.
    let downs = (0..40).map(|_| a.target(&obs(0, 10, 1, 1)).safety).last().unwrap();
    assert_eq!(downs, 1.0);
    // Neither: kept.
    assert_eq!(a.target(&obs(0, 10, 0, 0)).moved, SafetyMove::Kept);
}

#[test]
fn min_and_max_bound_the_target() {
    let mut a = AdaptiveStandby::new(&AdaptiveSettings { min: 3, max: 10, ..AdaptiveSettings::default() }).unwrap();
    assert_eq!(a.target(&obs(0, 0, 0, 0)).target, 3);
    assert_eq!(a.target(&obs(10_000, 0, 0, 0)).target, 10);
    let mut c =
        StandbyController::new(&StandbyPolicy::Adaptive(AdaptiveSettings { min: 3, max: 10, ..Default::default() }))
            .unwrap();
    assert_eq!(c.to_submit(&obs(10_000, 0, 4, 0)), 6);
}

#[test]
fn bad_parameters_are_named() {
    let e = StandbyController::new(&StandbyPolicy::Proportional { per_queued_job: -1.0, min: 5, max: 2 }).unwrap_err();
    assert_eq!(e, "per_queued_job: must be a number ≥ 0, got -1");
    let p = StandbyPolicy::Proportional { per_queued_job: 1.0, min: 5, max: 2 }.problems();
    assert_eq!(p, vec![("max".to_string(), "must be ≥ min (5), got 2".to_string())]);
    let bad = AdaptiveSettings { smoothing: 0.0, safety: 9.0, safety_down: 1.0, ..AdaptiveSettings::default() };
    let fields: Vec<String> = bad.problems().into_iter().map(|(f, _)| f).collect();
    assert_eq!(fields, vec!["smoothing", "safety", "safety_down"]);
    assert!(AdaptiveStandby::new(&bad).unwrap_err().starts_with("smoothing: must be in (0, 1]"));
    assert!(AdaptiveSettings::default().problems().is_empty());
}
