//! Worked numbers of reference `panda.md` §3 and §9 (computed with panda-server 1.0.4), both
//! variants, and the edge cases.

use super::*;

const SEED: NetworkVariant = NetworkVariant::Seed;
const CODE: NetworkVariant = NetworkVariant::PandaServer;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

fn settings(variant: NetworkVariant) -> NetworkSettings {
    NetworkSettings { nw_active: true, variant, ..NetworkSettings::default() }
}

fn sat(m: LinkMetrics) -> Link {
    Link::Satellite(m)
}

fn weight(link: &Link, variant: NetworkVariant) -> f64 {
    network_weight(link, &settings(variant)).expect("unblocked").weight
}

#[test]
fn defaults_are_the_gdpconfig_ones() {
    let d = NetworkSettings::default();
    assert!(!d.nw_active);
    assert_eq!((d.nw_queue_importance, d.nw_threshold, d.nw_weight_multiplier), (0.5, 1.7, 1.0));
    assert_eq!((d.nqueued_sat_cap, d.nqueued_nuc_cap_for_jobs), (150, 10_000));
    assert_eq!(d.variant, SEED);
    assert_eq!(validate(&d), Ok(()));
    let parsed: NetworkSettings = serde_json::from_str("{}").unwrap();
    assert_eq!(parsed, d);
    assert!(serde_json::from_str::<NetworkSettings>(r#"{"nw_activ": true}"#).is_err());
    let code: NetworkSettings = serde_json::from_str(r#"{"variant": "PandaServer"}"#).unwrap();
    assert_eq!(code.variant, CODE);
}

/// Reference §9: `convertMBpsToWeight` 0→1, 1.5→1.1, 5→1.2, 15→1.3, 30→1.5, 60→1.6, 90→1.8,
/// 150→1.9, 200→1.9, 500→2; §3: strict `>` at every step.
#[test]
fn mbps_weight_reference_vectors() {
    let vectors = [
        (0.0, 1.0),
        (1.5, 1.1),
        (5.0, 1.2),
        (15.0, 1.3),
        (30.0, 1.5),
        (60.0, 1.6),
        (90.0, 1.8),
        (150.0, 1.9),
        (200.0, 1.9),
        (500.0, 2.0),
    ];
    for (m, w) in vectors {
        assert_eq!(mbps_weight(m), w, "{m} Mbps");
    }
    let boundaries = [(1.0, 1.0), (2.0, 1.1), (10.0, 1.2), (20.0, 1.3), (50.0, 1.5), (75.0, 1.6), (100.0, 1.8)];
    for (m, w) in boundaries {
        assert_eq!(mbps_weight(m), w, "{m} Mbps");
    }
    assert_eq!(mbps_weight(200.000_001), 2.0);
    // As Python compares: NaN and negatives match no step, +∞ matches the first.
    assert_eq!(mbps_weight(f64::NAN), 1.0);
    assert_eq!(mbps_weight(-5.0), 1.0);
    assert_eq!(mbps_weight(f64::INFINITY), 2.0);
    assert_eq!(mbps_weight(f64::NEG_INFINITY), 1.0);
}

#[test]
fn queued_weight_against_the_sat_cap() {
    assert_eq!(queued_weight(0, 150), 2.0);
    assert_eq!(queued_weight(75, 150), 1.5);
    assert!(close(queued_weight(30, 150), 1.8));
    assert!(close(queued_weight(149, 150), 2.0 - 149.0 / 150.0));
    // At the cap (a skipped link) 1, beyond it floored at 0, never negative.
    assert_eq!(queued_weight(150, 150), 1.0);
    assert_eq!(queued_weight(300, 150), 0.0);
    assert_eq!(queued_weight(10_000, 150), 0.0);
    // Cap 0 (ZeroDivisionError in Python): saturated.
    assert_eq!(queued_weight(0, 0), 1.0);
    assert_eq!(queued_weight(7, 0), 1.0);
}

#[test]
fn closeness_fallback_is_normalised_between_1_and_2() {
    assert_eq!(closeness_weight(0.0), 2.0);
    assert_eq!(closeness_weight(11.0), 1.0);
    assert!(close(closeness_weight(7.7), 1.3));
    assert!(close(closeness_weight(5.5), 1.5));
    // Out-of-range and NaN are explicit: clamped, or the 0.7·11 default.
    assert_eq!(closeness_weight(-3.0), 2.0);
    assert_eq!(closeness_weight(40.0), 1.0);
    assert!(close(closeness_weight(f64::NAN), 1.3));
    assert!(close(DEFAULT_CLOSENESS, 7.7));
}

/// A PQ at the nucleus: queuedW = throughputW = 2.5, whatever the importance.
#[test]
fn nucleus_local_weighs_2_5() {
    for v in [SEED, CODE] {
        let w = network_weight(&Link::Nucleus, &settings(v)).unwrap();
        assert_eq!((w.queued, w.throughput, w.weight), (2.5, 2.5, 2.5));
    }
    let s = NetworkSettings { nw_queue_importance: 0.2, ..settings(SEED) };
    assert!(close(network_weight(&Link::Nucleus, &s).unwrap().weight, 2.5));
    // Above the best satellite (2.0 / 2.0).
    let best = sat(LinkMetrics {
        queued_files: Some(0),
        mbps_1h: Some(500.0),
        mbps_1d: Some(500.0),
        mbps_1w: Some(500.0),
        ..Default::default()
    });
    assert_eq!(weight(&best, SEED), 2.0);
    assert_eq!(weight(&best, CODE), 2.0);
}

/// No data at all (unknown link, or a row without keys): queuedW 2, closeness 7.7 → 1.3,
/// weightNw = 0.5·2 + 0.5·1.3 = 1.65.
#[test]
fn no_data_falls_back_to_default_closeness() {
    for v in [SEED, CODE] {
        for link in [Link::Unknown, sat(LinkMetrics::default())] {
            let w = network_weight(&link, &settings(v)).unwrap();
            assert!(w.from_closeness);
            assert_eq!(w.queued, 2.0);
            assert!(close(w.throughput, 1.3));
            assert!(close(w.weight, 1.65));
        }
    }
}

/// queued 30 → 1.8, 60 Mbps → 1.6: weightNw = 0.9 + 0.8 = 1.7 (1.7000000000000002 in
/// floating point, as in Python), which meets the express threshold 1.7 × 1.
#[test]
fn worked_example_and_express_threshold() {
    let m = LinkMetrics {
        queued_files: Some(30),
        mbps_1h: Some(60.0),
        mbps_1d: Some(60.0),
        mbps_1w: Some(60.0),
        closeness: Some(3.0),
        blocked: false,
    };
    for v in [SEED, CODE] {
        let w = network_weight(&sat(m), &settings(v)).unwrap();
        assert!(!w.from_closeness);
        assert!(close(w.queued, 1.8) && w.throughput == 1.6);
        assert_eq!(w.weight, 0.5 * (2.0 - 30.0 / 150.0) + 0.5 * 1.6);
        assert!(close(w.weight, 1.7));
        assert!(express_passes(&sat(m), &settings(v)));
        assert_eq!(brokerage_factor(&sat(m), &settings(v)), w.weight);
    }
    // 45 queued → 1.7, 30 Mbps → 1.5: 1.6 < 1.7, rejected for express tasks.
    let slow =
        LinkMetrics { queued_files: Some(45), mbps_1h: Some(30.0), mbps_1d: Some(30.0), mbps_1w: Some(30.0), ..m };
    assert!(close(weight(&sat(slow), SEED), 1.6));
    assert!(!express_passes(&sat(slow), &settings(SEED)));
    // A multiplier of 0.5 lowers the bar to 0.85.
    let lax = NetworkSettings { nw_weight_multiplier: 0.5, ..settings(SEED) };
    assert!(express_passes(&sat(slow), &lax));
    // Importance 1: only the queue counts; 0: only throughput.
    let q_only = NetworkSettings { nw_queue_importance: 1.0, ..settings(SEED) };
    assert!(close(network_weight(&sat(slow), &q_only).unwrap().weight, 1.7));
    let t_only = NetworkSettings { nw_queue_importance: 0.0, ..settings(SEED) };
    assert_eq!(network_weight(&sat(slow), &t_only).unwrap().weight, 1.5);
}

/// Where the seed and panda-server differ (reference §3 ⚠).
#[test]
fn fallback_chains_differ() {
    let m = |h: Option<f64>, d: Option<f64>, w: Option<f64>| LinkMetrics {
        mbps_1h: h,
        mbps_1d: d,
        mbps_1w: w,
        closeness: Some(0.0),
        ..Default::default()
    };
    let all = m(Some(300.0), Some(60.0), Some(5.0));
    assert_eq!((all.mbps(SEED), all.mbps(CODE)), (Some(300.0), Some(300.0)));
    // Only 1 h: seed uses it; the code finds no 1 w and falls back to closeness 0 → 2.0.
    let only_h = m(Some(15.0), None, None);
    assert_eq!((only_h.mbps(SEED), only_h.mbps(CODE)), (Some(15.0), None));
    assert!(close(weight(&sat(only_h), SEED), 0.5 * 2.0 + 0.5 * 1.3));
    assert!(close(weight(&sat(only_h), CODE), 0.5 * 2.0 + 0.5 * 2.0));
    // 1 h and 1 w, no 1 d: seed 1 h (300 → 2.0), the code stops at 1 w (5 → 1.2).
    let no_d = m(Some(300.0), None, Some(5.0));
    assert_eq!((no_d.mbps(SEED), no_d.mbps(CODE)), (Some(300.0), Some(5.0)));
    assert!(close(weight(&sat(no_d), SEED), 2.0));
    assert!(close(weight(&sat(no_d), CODE), 1.6));
    // 1 d and 1 w, no 1 h: both 1 d.
    let no_h = m(None, Some(60.0), Some(5.0));
    assert_eq!((no_h.mbps(SEED), no_h.mbps(CODE)), (Some(60.0), Some(60.0)));
    // Only 1 w: both 1 w. Only 1 d: seed 1 d, code none.
    assert_eq!(m(None, None, Some(5.0)).mbps(CODE), Some(5.0));
    assert_eq!(m(None, None, Some(5.0)).mbps(SEED), Some(5.0));
    assert_eq!((m(None, Some(60.0), None).mbps(SEED), m(None, Some(60.0), None).mbps(CODE)), (Some(60.0), None));
    // NaN counts as missing.
    let nan_h = m(Some(f64::NAN), Some(60.0), Some(5.0));
    assert_eq!((nan_h.mbps(SEED), nan_h.mbps(CODE)), (Some(60.0), Some(60.0)));
}

/// Zero throughput is data, not its absence: weight 1.0, not the closeness fallback.
#[test]
fn zero_throughput_is_measured() {
    let m = LinkMetrics {
        mbps_1h: Some(0.0),
        mbps_1d: Some(0.0),
        mbps_1w: Some(0.0),
        closeness: Some(0.0),
        ..Default::default()
    };
    for v in [SEED, CODE] {
        let w = network_weight(&sat(m), &settings(v)).unwrap();
        assert!(!w.from_closeness);
        assert_eq!((w.throughput, w.weight), (1.0, 1.5));
    }
    let neg = LinkMetrics { mbps_1h: Some(-4.0), mbps_1d: Some(-4.0), mbps_1w: Some(-4.0), ..m };
    assert_eq!(weight(&sat(neg), CODE), 1.5);
}

#[test]
fn blocked_links() {
    let by_flag = LinkMetrics { blocked: true, mbps_1h: Some(500.0), ..Default::default() };
    let by_closeness = LinkMetrics { closeness: Some(BLOCKED_LINK), ..Default::default() };
    let s = settings(SEED);
    for m in [by_flag, by_closeness] {
        assert!(m.is_blocked());
        assert_eq!(link_check(&sat(m), 0, &s), LinkCheck::Blocked);
        assert_eq!(network_weight(&sat(m), &s), None);
        assert_eq!(brokerage_factor(&sat(m), &s), 0.0);
        assert_eq!(brokerage_factor(&sat(m), &NetworkSettings::default()), 0.0);
        assert!(!express_passes(&sat(m), &s));
    }
    // Other negative closeness is not "blocked": clamped to 0.
    let odd = LinkMetrics { closeness: Some(-2.0), ..Default::default() };
    assert!(!odd.is_blocked());
    assert_eq!(odd.effective_closeness(), 0.0);
}

#[test]
fn link_check_in_code_order() {
    let s = settings(CODE);
    let busy = LinkMetrics { queued_files: Some(150), ..Default::default() };
    let fine = LinkMetrics { queued_files: Some(149), ..Default::default() };
    assert_eq!(link_check(&Link::Nucleus, 1_000_000, &s), LinkCheck::Ok);
    assert_eq!(link_check(&Link::Unknown, 0, &s), LinkCheck::Ok);
    assert_eq!(link_check(&Link::Unknown, 10_000, &s), LinkCheck::NucleusSaturated);
    assert_eq!(link_check(&sat(fine), 9_999, &s), LinkCheck::Ok);
    assert_eq!(link_check(&sat(busy), 0, &s), LinkCheck::LinkSaturated);
    let blocked_busy = LinkMetrics { blocked: true, ..busy };
    assert_eq!(link_check(&sat(blocked_busy), 0, &s), LinkCheck::Blocked);
    assert_eq!(link_check(&sat(blocked_busy), 10_000, &s), LinkCheck::NucleusSaturated);
    // A saturated link would weigh 1.0 on its queue; past 2 × cap, 0.
    assert!(close(weight(&sat(busy), SEED), 0.5 * 1.0 + 0.5 * 1.3));
}

/// Seed 004 skips a satellite "over the NQUEUED_SAT_CAP files queued on their links to the
/// nucleus"; panda-server 1.0.4 compares `>=` (L490-491). Default cap 150.
#[test]
fn sat_cap_boundary_by_variant() {
    let files = |n| sat(LinkMetrics { queued_files: Some(n), ..Default::default() });
    let (seed, code) = (settings(SEED), settings(CODE));
    assert_eq!(seed.nqueued_sat_cap, 150);
    assert_eq!(link_check(&files(150), 0, &seed), LinkCheck::Ok, "exactly at the cap is not over it");
    assert_eq!(link_check(&files(151), 0, &seed), LinkCheck::LinkSaturated);
    assert_eq!(link_check(&files(150), 0, &code), LinkCheck::LinkSaturated);
    assert_eq!(link_check(&files(149), 0, &code), LinkCheck::Ok);
    // The seed weighs the kept link: queued weight 2 − 150/150 = 1, with closeness 7.7 → 1.3.
    let w = network_weight(&files(150), &seed).unwrap();
    assert!(close(w.queued, 1.0) && close(w.weight, 0.5 * 1.0 + 0.5 * 1.3));
    // A smaller cap moves the boundary with it.
    let cap_10 = |v| NetworkSettings { nqueued_sat_cap: 10, ..settings(v) };
    assert_eq!(link_check(&files(10), 0, &cap_10(SEED)), LinkCheck::Ok);
    assert_eq!(link_check(&files(10), 0, &cap_10(CODE)), LinkCheck::LinkSaturated);
    assert_eq!((SEED.sat_cap_op(), CODE.sat_cap_op()), (">", ">="));
}

#[test]
fn nw_active_off_leaves_the_weight_alone() {
    let off = NetworkSettings::default();
    let slow = sat(LinkMetrics { queued_files: Some(140), mbps_1h: Some(0.5), ..Default::default() });
    assert_eq!(brokerage_factor(&slow, &off), 1.0);
    assert!(express_passes(&slow, &off));
    // Still computed.
    assert!(network_weight(&slow, &off).is_some());
}

#[test]
fn settings_are_sanitised() {
    let bad = NetworkSettings { nw_queue_importance: f64::NAN, nw_threshold: f64::INFINITY, ..settings(SEED) };
    assert!(validate(&bad).is_err());
    let s = bad.sane();
    assert_eq!((s.nw_queue_importance, s.nw_threshold), (0.5, 1.7));
    let over = NetworkSettings { nw_queue_importance: 3.0, ..settings(SEED) };
    assert!(validate(&over).is_err());
    assert_eq!(over.sane().nw_queue_importance, 1.0);
    let link = sat(LinkMetrics { queued_files: Some(75), ..Default::default() });
    assert_eq!(network_weight(&link, &over).unwrap().weight, 1.5);
    let nan_link = sat(LinkMetrics { closeness: Some(f64::NAN), mbps_1h: Some(f64::NAN), ..Default::default() });
    assert!(network_weight(&nan_link, &bad).unwrap().weight.is_finite());
}
