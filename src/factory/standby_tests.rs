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
        pool_startds: 0,
    }
}

#[test]
fn fixed_and_proportional() {
    let mut f = StandbyController::new(&StandbyPolicy::Fixed(4)).unwrap();
    assert_eq!(f.target(&obs(1000, 0, 0, 0)), 4);
    let mut p = StandbyController::new(&StandbyPolicy::Proportional { per_queued_job: 0.07, min: 2, max: 20 }).unwrap();
    // 0.07 × 100 = 7.000000000000001 in floats: 7, not 8; 0.07 × 55 = 3.85 → 4.
    let t: Vec<u32> = [0, 100, 55, 1000].iter().map(|&q| p.target(&obs(q, 0, 0, 0))).collect();
    assert_eq!(t, vec![2, 7, 4, 20]);
    // The observations feed only the adaptive controller.
    p.observe_queue_wait(secs(10));
    p.observe_removals(10, 10, secs(10));
    p.observe_arrivals(10, secs(10));
    p.observe_job_ends(10, secs(10));
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

/// The example of the two tests below: Tsw observed 1 h, 9 of 100 startd pilots removed in an
/// hour, 36 jobs arrived in that hour.
fn taught() -> AdaptiveStandby {
    let mut a = adaptive();
    a.observe_queue_wait(secs(3600));
    a.observe_removals(9, 100, secs(3600));
    a.observe_arrivals(36, secs(3600));
    a
}

#[test]
fn the_controller_learns_tsw_lifetimes_and_arrivals() {
    let mut a = taught();
    // Tsw^ = 1800 + 0.25 (3600 − 1800) = 2250 s. A cycle of an hour with τ = 1 h weighs
    // w = 1 − e^−1 = 0.632 120 6: 1/L^ = 1/14 400 + w (9 / (100 × 3600) − 1/14 400)
    // = 4.135 02e-5 /s, L^ = 24 183.7 s; arr^ = w × 36/3600 = 0.006 321 2 /s.
    a.observe_arrivals(5, SimDuration::ZERO); // an empty span teaches nothing
    a.observe_removals(5, 0, secs(60)); // nor does a span without startd pilots
    let e = a.estimates();
    assert_eq!((e.queue_wait_s, e.safety, e.ends_per_s), (2250.0, 1.2, 0.0));
    assert!((e.lifetime_s - 24_183.681_414_617_477).abs() < 1e-6, "{e:?}");
    assert!((e.arrivals_per_s - 0.006_321_205_588_285_576).abs() < 1e-15);
    // replace = 100 × 4.135e-5 × 2250 = 9.3038; demand = (0 + 0.006 321 × 2250 − 0) / 2 =
    // 7.1114; 1.2 × 9.3038 + 7.1114 = 18.28 → 19.
    let t = a.target(&obs(0, 100, 0, 0));
    assert!((t.replace - 9.303_794_411_714_422).abs() < 1e-9, "{t:?}");
    assert!((t.demand - 7.111_356_286_821_273).abs() < 1e-9);
    assert_eq!(t.target, 19);
    // Job ends as fast as arrivals: the backlog does not grow, no demand.
    let mut b = taught();
    b.observe_job_ends(36, secs(3600));
    assert_eq!(b.target(&obs(0, 100, 0, 0)).demand, 0.0);
}

#[test]
fn idle_startds_are_not_replaced_and_the_pool_bounds_the_demand() {
    // 100 startd pilots of 2 VMs, 40 VMs idle: only 80 are in use and get replacements.
    let mut a = adaptive();
    let t = a.target(&obs(0, 100, 0, 40));
    assert!((t.replace - 10.0).abs() < 1e-12, "{t:?}"); // 80 / 14 400 × 1800
    // 1000 jobs waiting for VMs, but the pool holds 120 startd pilots and 100 run: at most 20
    // new ones can start; the rest would only wait for vacancies.
    let mut b = adaptive();
    let t = b.target(&StandbyObservation { pool_startds: 120, ..obs(1000, 100, 0, 0) });
    assert_eq!(t.demand, 20.0);
    assert_eq!(t.moved, SafetyMove::Up); // starved while the pool had room
    // A full pool: no demand, and the safety factor stays.
    let t = b.target(&StandbyObservation { pool_startds: 100, ..obs(1000, 100, 0, 0) });
    assert_eq!((t.demand, t.moved), (0.0, SafetyMove::Kept));
}

#[test]
fn the_safety_factor_moves_on_starvation_and_idleness() {
    let mut a = taught();
    // Jobs waited (30) beyond the idle VMs (0) with room in the pool: safety 1.2 × 1.25 = 1.5.
    // No startd pilot in use to replace; demand = (30 + 14.2228 − 0) / 2 = 22.11 → 23.
    let t = a.target(&obs(30, 0, 0, 0));
    assert_eq!((t.moved, t.target), (SafetyMove::Up, 23));
    assert!((t.safety - 1.5).abs() < 1e-12);
    // Standby pilots sat queued (25) while 4 VMs idled: safety 1.5 × 0.9 = 1.35; 98 of the 100
    // startd pilots in use: replace = 9.1177, demand = (14.2228 − 4) / 2 = 5.1114;
    // 1.35 × 9.1177 + 5.1114 = 17.42 → 18, and 25 are queued: submit 0.
    let t = a.target(&obs(0, 100, 25, 4));
    assert_eq!((t.moved, t.target), (SafetyMove::Down, 18));
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
    assert_eq!(c.target(&obs(10_000, 0, 4, 0)), 10);
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
    let window = AdaptiveSettings { rate_window_s: 0.0, ..AdaptiveSettings::default() };
    assert_eq!(window.problems()[0].0, "rate_window_s");
    assert!(AdaptiveStandby::new(&bad).unwrap_err().starts_with("smoothing: must be in (0, 1]"));
    assert!(AdaptiveSettings::default().problems().is_empty());
}
