//! Both weight formulas with numbers, the `+use` line, the roulette walk and its frequencies,
//! and the RW feedback.

use super::*;
use weight::{DataFactor, data_factor, nucleus_weight, rw_factor};

const TB: f64 = 1024.0;

fn space(free_gb: f64, total_gb: f64, cutoff_free_gb: f64) -> Option<FreeSpace> {
    Some(FreeSpace { free_gb, total_gb, cutoff_free_gb })
}

#[test]
fn rw_factor_both_variants() {
    // code: 1/RW from cutOffRW = 50 on, 1 below (and for RW 0/None) — the jump at 50
    let code = [(0.0, 1.0), (49.0, 1.0), (50.0, 0.02), (200.0, 0.005), (f64::NAN, 1.0)];
    for (rw, f) in code {
        assert_eq!(rw_factor(rw, CODE), f, "{rw}");
    }
    // seed: 1/max(rwOffset = 50, RW)
    let seed = [(0.0, 0.02), (49.0, 0.02), (50.0, 0.02), (200.0, 0.005), (f64::NAN, 0.02)];
    for (rw, f) in seed {
        assert_eq!(rw_factor(rw, SEED), f, "{rw}");
    }
}

/// RW 200, 600 of 1000 input bytes local (400 on disk), 500 of 1000 TB free:
/// 1/200 × 600/1000 × 0.001 × 0.5 × min(1000, 500) = 7.5e-4.
#[test]
fn code_weight_worked_example() {
    let p = TaskBrokerageParams::default();
    let av = Availability { tot_size: 1000, ava_size_any: 600, ava_size_disk: 400, ..Availability::default() };
    let d = data_factor(&av, None, &p);
    assert_eq!(d, Some(DataFactor { ava_size_any: 600, tot_size: 1000, size_applied: true, tape: true }));
    let w = nucleus_weight(200.0, d, space(500.0 * TB, 1000.0 * TB, 500.0 * TB), 1000.0, CODE);
    assert!(close(w, 7.5e-4), "{w}");
    // low IO intensity (≤ 200 kB/s): no size factor, the tape factor stays → 1.25e-3
    let d = data_factor(&av, Some(150.0), &p);
    let w = nucleus_weight(200.0, d, space(500.0 * TB, 1000.0 * TB, 500.0 * TB), 1000.0, CODE);
    assert!(close(w, 1.25e-3), "{w}");
    // everything on disk: no tape factor; nothing to read: no data factor at all
    let disk = Availability { tot_size: 1000, ava_size_any: 600, ava_size_disk: 600, ..Availability::default() };
    assert!(!data_factor(&disk, None, &p).expect("factor").tape);
    assert_eq!(data_factor(&Availability::default(), None, &p), None);
}

/// FREE_DISK_CUTOFF caps the free-TB factor: 2000 TB free of 4000 → 0.5 × min(1000, 2000) = 500.
#[test]
fn free_disk_cutoff_caps_the_weight() {
    let w = nucleus_weight(0.0, None, space(2000.0 * TB, 4000.0 * TB, 2000.0 * TB), 1000.0, CODE);
    assert_eq!(w, 500.0);
    let w = nucleus_weight(0.0, None, space(2000.0 * TB, 4000.0 * TB, 2000.0 * TB), 300.0, CODE);
    assert_eq!(w, 150.0);
    // ⌊free / 1024⌋: 1023.9 GB is 0 TB
    assert_eq!(nucleus_weight(0.0, None, space(1023.9, 2048.0, 1023.9), 1000.0, CODE), 0.0);
}

/// Code: the projected demand comes off the free space in both factors. 600 TB usable of
/// 1000 TB, demand 1024 GB (fullRW 3 538 944 000): 613 376 / 1 024 000 × ⌊613 376 / 1024⌋ =
/// 0.599 × 599 = 358.801.
#[test]
fn code_weight_uses_usable_minus_demand() {
    let mut w = World::new();
    w.endpoints[0].space_usable = 600.0 * TB;
    w.nuclei[0].full_rw = 3_538_944_000.0;
    let b = w.run(CODE);
    let Brokerage::Assigned(a) = &b else { panic!("{b:?}") };
    let c = &a.candidates[0];
    assert_eq!(c.space, space(613_376.0, 1_024_000.0, 613_376.0));
    assert!(close(c.weight, 358.801), "{}", c.weight);
}

/// Seed: weight = (spaceFree + spaceExpired) × min(cutoff, spaceFree) / (max(50, RW) × spaceTotal):
/// 400 TB free + 100 TB expired of 1000 TB, RW 0 → 0.02 × 0.5 × 400 = 4.
#[test]
fn seed_weight_worked_example() {
    let mut w = World::new();
    w.endpoints[0].space_free = 400.0 * TB;
    w.endpoints[0].space_expired = 100.0 * TB;
    w.nuclei[0].full_rw = 3_456_000_000.0; // the seed's weight has no demand term
    let b = w.run(SEED);
    let Brokerage::Assigned(a) = &b else { panic!("{b:?}") };
    let c = &a.candidates[0];
    assert_eq!(c.space, space(512_000.0, 1_024_000.0, 409_600.0));
    assert!(close(c.weight, 4.0), "{}", c.weight);
    // B: 500 of 1000 TB, RW 0 → 0.02 × 0.5 × 500 = 5
    assert!(close(a.candidates[1].weight, 5.0), "{}", a.candidates[1].weight);
}

#[test]
fn use_line_reproduces_pandas_log() {
    let mut w = World::new();
    w.prio_rw = vec![0.0, 10.0, 200.0];
    w.endpoints[1].space_total = 0.0; // no space record: the weight stays the integer 1
    let b = w.run(CODE);
    let Brokerage::Assigned(a) = &b else { panic!("{b:?}") };
    let lines: Vec<String> = a.candidates.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines[0],
        "  use nucleus=A weight=250.0 1/(1 : RW=0<50)*( free_space=500 TB )/( total_space=1000 TB )*min( \
         free_space=500 TB, FREE_DISK_CUTOFF=1000 TB ) criteria=+use"
    );
    assert_eq!(lines[1], "  use nucleus=B weight=1 1/(1 : RW=10<50) criteria=+use");
    assert_eq!(
        lines[2],
        "  use nucleus=C weight=1.25 1/( RW=200 )*( free_space=500 TB )/( total_space=1000 TB )*min( free_space=500 \
         TB, FREE_DISK_CUTOFF=1000 TB ) criteria=+use"
    );
}

#[test]
fn walk_maps_the_target_like_panda() {
    let w = [1.0, 2.0, 3.0];
    assert_eq!(walk(w, 0.0), Some(0));
    assert_eq!(walk(w, 1.0), Some(0)); // 1 − 1 = 0 ≤ 0
    assert_eq!(walk(w, 1.5), Some(1));
    assert_eq!(walk(w, 3.0), Some(1));
    assert_eq!(walk(w, 3.000001), Some(2));
    assert_eq!(walk(w, 6.0), Some(2));
    assert_eq!(walk(w, 7.0), Some(2)); // none reaches 0: the last
    assert_eq!(walk([0.0, 0.0], 0.0), Some(0)); // all weights 0: the first
    assert_eq!(walk([0.0, 5.0], 0.0), Some(0)); // U = 0 picks a zero-weight first candidate
    assert_eq!(walk(std::iter::empty(), 1.0), None);
}

#[test]
fn weighted_choice_frequencies() {
    let mut rng = RngStreams::new(7).stream("test/task_broker/choice");
    let mut counts = [0u32; 3];
    let n = 60_000;
    for _ in 0..n {
        let (i, r) = select_nucleus(&[1.0, 2.0, 3.0], &mut rng).expect("candidates");
        assert!((0.0..6.0).contains(&r));
        counts[i] += 1;
    }
    let f: Vec<f64> = counts.iter().map(|&c| f64::from(c) / f64::from(n)).collect();
    for (got, want) in f.iter().zip([1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0]) {
        assert!((got - want).abs() < 0.01, "{f:?}");
    }
    assert_eq!(select_nucleus(&[], &mut rng), None);
}

/// RW 300, 150, 100 and no space record: weights 1/300 : 1/150 : 1/100 = 1 : 2 : 3, one draw per
/// brokerage.
#[test]
fn brokerage_frequencies_and_one_draw_per_task() {
    let mut w = World::new();
    w.prio_rw = vec![300.0, 150.0, 100.0];
    for e in &mut w.endpoints {
        e.space_total = 0.0;
    }
    let input = BrokerageInput { task: &w.task, nuclei: &w.nuclei, endpoints: &w.endpoints, prio_rw: &w.prio_rw };
    let p = TaskBrokerageParams::default();
    let mut rng = RngStreams::new(11).stream("test/task_broker/freq");
    let mut counts = [0u32; 3];
    let n = 30_000;
    for _ in 0..n {
        let mut twin = rng.clone();
        let chosen = do_brokerage(&input, &p, CODE, &mut rng).chosen().expect("assigned");
        counts[chosen] += 1;
        twin.next_u64();
        assert_eq!(twin.next_u64(), rng.clone().next_u64(), "exactly one draw");
    }
    let f: Vec<f64> = counts.iter().map(|&c| f64::from(c) / f64::from(n)).collect();
    for (got, want) in f.iter().zip([1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0]) {
        assert!((got - want).abs() < 0.012, "{f:?}");
    }
}

#[test]
fn record_assignment_feeds_later_tasks() {
    let mut table: PrioRw = [(500, vec![0.0; 3]), (700, vec![5.0; 3]), (900, vec![0.0; 3])].into_iter().collect();
    record_assignment(&mut table, 1, 700, 10.0);
    assert_eq!(table[&500], [0.0, 10.0, 0.0]);
    assert_eq!(table[&700], [5.0, 15.0, 5.0]);
    assert_eq!(table[&900], [0.0, 0.0, 0.0]);
    record_assignment(&mut table, 99, 900, 1.0); // unknown nucleus: nothing
    record_assignment(&mut table, 0, 900, f64::NAN); // no RW: nothing
    assert_eq!(table[&900], [0.0, 0.0, 0.0]);
    // the next task of priority 600 sees B loaded: RW 10 < 50 still weighs 1, RW 60 weighs 1/60
    record_assignment(&mut table, 1, 600, 50.0);
    assert_eq!(table[&500][1], 60.0);
    assert!(close(rw_factor(table[&500][1], CODE), 1.0 / 60.0));
}
