//! Tests of `dirac::priority`: the seed's and DIRAC 9's worked numbers, and the
//! computations checked bit for bit against an oracle on random TQ databases.
use super::*;
use crate::dirac::taskqueue::{JobId, TqChange};

/// The share entity a TQ belongs to: a JOB_SHARING group, or a (group, owner) pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Entity {
    Group(u32),
    User { group: u32, owner: u32 },
}

/// The entity of a TQ owned by `owner` in `group`.
fn entity_of(group: u32, owner: u32, job_sharing: bool) -> Entity {
    if job_sharing { Entity::Group(group) } else { Entity::User { group, owner } }
}

fn def(group: u32, owner: u32, cpu: u64) -> TqDefinition {
    TqDefinition { owner, group, cpu_time: cpu, ..Default::default() }
}

fn shares(list: &[(u32, f64)]) -> EntityShares {
    EntityShares { group: list.iter().copied().collect(), user_factor: BTreeMap::new() }
}

fn prio(db: &TaskQueueDb, js: &[u32], s: &EntityShares, w: UserPriorityWeighting) -> Vec<f64> {
    compute(db.iter(), |g| js.contains(&g), s, w).into_iter().map(|(_, p)| p).collect()
}

#[test]
fn job_sharing_group_splits_1_over_n() {
    // Seed 002: a JOB_SHARING group's TQ gets 1/N of the group priority.
    let mut db = TaskQueueDb::new();
    let mut job = 0;
    for (owner, cpu) in [(1, 500), (2, 5000), (3, 50_000), (1, 300_000)] {
        job += 1;
        db.insert_job(&def(0, owner, cpu), job, 1);
    }
    let p = prio(&db, &[0], &shares(&[(0, 3000.0)]), UserPriorityWeighting::Sum);
    assert_eq!(p, vec![750.0; 4]);
}

#[test]
fn other_groups_split_1_over_n_times_u() {
    // Seed 002: 1/(N·U), U = users with waiting jobs, N = TQs of that user.
    let mut db = TaskQueueDb::new();
    db.insert_job(&def(1, 10, 500), 1, 1);
    db.insert_job(&def(1, 10, 5000), 2, 1);
    db.insert_job(&def(1, 11, 500), 3, 1);
    let p = prio(&db, &[], &shares(&[(1, 1000.0)]), UserPriorityWeighting::Sum);
    assert_eq!(p, vec![250.0, 250.0, 500.0]);
}

#[test]
fn a_job_that_came_and_went_leaves_no_trace_in_the_priorities() {
    // Two TQs of one owner (share 1000), one priority-0 job each (RealPriority 1e-5). A
    // priority-10 job (1e6) enters the first TQ and is matched again: DIRAC sums RealPriority
    // over the jobs there now (reference §2.1), so both TQs are back at 500 (1000·1e-5/2e-5,
    // one rounding off). A running f64 sum kept 1e-5 + 1e6 − 1e6 = 9.99996e-6 and gave
    // 499.99899 / 500.00101.
    let mut db = TaskQueueDb::new();
    db.insert_job(&def(0, 1, 500), 1, 0);
    db.insert_job(&def(0, 1, 5000), 2, 0);
    db.insert_job(&def(0, 1, 500), 3, 10);
    assert_eq!(db.remove_job(1, 3, 10), Some(TqChange::Remains(1)));
    assert_eq!(db.get(1).unwrap().sum_real_priority(), 1e-5);
    for w in [UserPriorityWeighting::Average, UserPriorityWeighting::Sum] {
        let p = prio(&db, &[], &shares(&[(0, 1000.0)]), w);
        assert!(p[0] == p[1] && (p[0] - 500.0).abs() < 1e-9, "{w:?}: {p:?}");
    }
}

#[test]
fn sum_weighting_counts_jobs_average_does_not() {
    // Reference §2.2: under AVG, one job at priority 5 outweighs many at priority 1;
    // under SUM (seed), ten jobs at priority 1 outweigh one at priority 5.
    let mut db = TaskQueueDb::new();
    for j in 0..10 {
        db.insert_job(&def(0, 1, 500), j, 1);
    }
    db.insert_job(&def(0, 1, 5000), 100, 5);
    let s = shares(&[(0, 1500.0)]);
    let sum = prio(&db, &[0], &s, UserPriorityWeighting::Sum);
    assert!((sum[0] - 1000.0).abs() < 1e-9 && (sum[1] - 500.0).abs() < 1e-9, "{sum:?}");
    let avg = prio(&db, &[0], &s, UserPriorityWeighting::Average);
    assert!((avg[0] - 250.0).abs() < 1e-9 && (avg[1] - 1250.0).abs() < 1e-9, "{avg:?}");
}

#[test]
fn dirac9_unit_test_vectors() {
    // DIRAC's Test_TaskQueueDB.py (reference §6): TQs differing only in CPUTime with average
    // priorities 5/3/2 get share·{0.5, 0.3, 0.2}; all equal → share/3 each.
    let mut db = TaskQueueDb::new();
    db.insert_job(&def(0, 1, 500), 1, 5);
    db.insert_job(&def(0, 1, 5000), 2, 3);
    db.insert_job(&def(0, 1, 50_000), 3, 2);
    for share in [0.5, 1.0, 2.0] {
        let p = prio(&db, &[0], &shares(&[(0, share)]), UserPriorityWeighting::Average);
        let want = [share * 0.5, share * 0.3, share * 0.2];
        for (got, want) in p.iter().zip(want) {
            assert!((got - want.max(TQ_MIN_SHARE)).abs() < 1e-12, "{p:?}");
        }
    }
}

#[test]
fn missing_share_defaults_to_1000_and_user_factor_applies() {
    let mut db = TaskQueueDb::new();
    db.insert_job(&def(4, 1, 500), 1, 1);
    db.insert_job(&def(4, 2, 500), 2, 1);
    let mut s = EntityShares::default();
    s.user_factor.insert((4, 2), 3.0);
    let p = prio(&db, &[], &s, UserPriorityWeighting::Sum);
    assert_eq!(p, vec![500.0, 1500.0]);
}

#[test]
fn floor_and_zero_share() {
    let mut db = TaskQueueDb::new();
    db.insert_job(&def(0, 1, 500), 1, 0);
    let p = prio(&db, &[0], &shares(&[(0, 0.0)]), UserPriorityWeighting::Sum);
    assert_eq!(p, vec![TQ_MIN_SHARE]);
}

/// The earlier implementation (maps built afresh, definitions cloned as keys): the
/// oracle the reused-buffer path must equal to the last bit.
fn oracle(db: &TaskQueueDb, js: impl Fn(u32) -> bool, s: &EntityShares, w: UserPriorityWeighting) -> Vec<(TqId, f64)> {
    let owners = owners_per_group(db.iter());
    let weight = |tq: &TaskQueue| match w {
        UserPriorityWeighting::Sum => tq.sum_real_priority(),
        UserPriorityWeighting::Average => tq.sum_real_priority() / f64::from(tq.n_jobs.max(1)),
    };
    let mut totals: BTreeMap<Entity, f64> = BTreeMap::new();
    for tq in db.iter().filter(|t| t.n_jobs > 0) {
        *totals.entry(entity_of(tq.head.group, tq.head.owner, js(tq.head.group))).or_default() += weight(tq);
    }
    let plain: Vec<(TqId, f64)> = db
        .iter()
        .filter(|t| t.n_jobs > 0)
        .map(|tq| {
            let g = tq.head.group;
            let gs = s.group.get(&g).copied().unwrap_or(DEFAULT_GROUP_SHARE);
            let e = entity_of(g, tq.head.owner, js(g));
            let es = match e {
                Entity::Group(_) => gs,
                Entity::User { group, owner } => {
                    gs / owners[&group].len() as f64 * s.user_factor.get(&(group, owner)).copied().unwrap_or(1.0)
                }
            };
            (tq.id, (es * weight(tq) / totals[&e]).max(TQ_MIN_SHARE))
        })
        .collect();
    let key =
        |id: TqId| TqDefinition { sites: Vec::new(), banned_sites: Vec::new(), ..(*db.get(id).unwrap().def).clone() };
    let mut sums: BTreeMap<TqDefinition, f64> = BTreeMap::new();
    for &(id, p) in &plain {
        *sums.entry(key(id)).or_default() += p;
    }
    plain.iter().map(|&(id, _)| (id, sums[&key(id)])).collect()
}

/// A small deterministic generator for the random TQ databases: `next(n)` is in `0..n`.
fn below(mut state: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    }
}

#[test]
fn reused_buffers_give_the_oracles_bits_on_random_databases() {
    // 200 random TQDBs (3 groups, 6 owners, 3 CPU times, 3 site lists, UserPriorities
    // 0..=10, some TQs emptied but kept as DIRAC 9 does), one scratch for all of them.
    let mut next = below(0x9e37_79b9_7f4a_7c15_u64);
    let mut scratch = Scratch::default();
    for round in 0..200 {
        let mut db = TaskQueueDb::with_rules(if round % 2 == 0 { 0 } else { 3 }, true);
        let mut jobs = Vec::new();
        for j in 0..next(40) as u32 + 1 {
            let d = TqDefinition {
                group: next(3) as u32,
                owner: next(6) as u32,
                cpu_time: [500, 5000, 50_000][next(3) as usize],
                sites: [vec![], vec![1], vec![2, 3]][next(3) as usize].clone(),
                ..Default::default()
            };
            let up = next(11) as u8;
            let id = db.insert_job(&d, j, up).id();
            jobs.push((id, j, up));
        }
        for &(id, j, up) in jobs.iter().filter(|_| next(4) == 0) {
            db.remove_job(id, j, up);
        }
        let mut s = shares(&[(0, 3000.0), (1, 500.0 + round as f64)]);
        s.user_factor.insert((1, 2), 0.37);
        let js = |g: u32| g == 0;
        for w in [UserPriorityWeighting::Sum, UserPriorityWeighting::Average] {
            let want = oracle(&db, js, &s, w);
            compute_into(db.iter(), js, &s, w, &mut scratch);
            let got = sum_identical_definitions_into(&db, &mut scratch);
            let bits = |v: &[(TqId, f64)]| v.iter().map(|&(id, p)| (id, p.to_bits())).collect::<Vec<_>>();
            assert_eq!(bits(got), bits(&want), "round {round}, {w:?}");
        }
    }
}

/// Runs `recalculateTQSharesForEntity(owner, group)` as `DiracWms` does and stores the result.
fn recalculate(db: &mut TaskQueueDb, g: u32, o: u32, js: &[u32], s: &EntityShares, w: UserPriorityWeighting) {
    let mut scratch = Scratch::default();
    recalculate_entity_into(db, g, o, js.contains(&g), s, w, &mut scratch);
    let new = sum_identical_definitions_into(db, &mut scratch).to_vec();
    db.set_priorities(&new);
}

fn priorities(db: &TaskQueueDb) -> Vec<f64> {
    db.iter().map(|t| (t.priority * 1e6).round() / 1e6).collect()
}

#[test]
fn a_new_tq_recomputes_only_its_owner_unless_the_owners_may_have_changed() {
    // Reference §2.4 (`recalculateTQSharesForEntity`, the same in 2009 and 9.1.22): group 1
    // (JobShare 1000, not JOB_SHARING), AVG weighting, one job per insertion.
    let (s, avg) = (shares(&[(1, 1000.0)]), UserPriorityWeighting::Average);
    let mut db = TaskQueueDb::new();
    let insert = |db: &mut TaskQueueDb, owner: u32, cpu: u64, job: u32, up: u8| {
        if let TqChange::Created(_) = db.insert_job(&def(1, owner, cpu), job, up) {
            recalculate(db, 1, owner, &[], &s, avg);
        }
    };
    insert(&mut db, 10, 500, 1, 1); // A's a1: first owner → 1000
    insert(&mut db, 20, 500, 2, 1); // B's b1: U = 2 → 500, 500
    insert(&mut db, 20, 5000, 3, 1); // B's b2: B has 2 TQs → only B: 250, 250
    assert_eq!(priorities(&db), [500.0, 250.0, 250.0]);
    insert(&mut db, 20, 500, 4, 5); // into b1, average 3: no recalculation
    assert_eq!(priorities(&db), [500.0, 250.0, 250.0]);
    insert(&mut db, 10, 5000, 5, 1); // A's a2: only A; B keeps 250/250 (fresh: 375/125)
    assert_eq!(priorities(&db), [250.0, 250.0, 250.0, 250.0]);
    insert(&mut db, 30, 500, 6, 1); // C's c1: its first TQ, U = 3 → every owner
    assert_eq!(priorities(&db), [166.666667, 250.0, 83.333333, 166.666667, 333.333333]);
    // C's TQ is deleted: C has none left, so every owner again, with U = 2.
    assert_eq!(db.remove_job(5, 6, 1), Some(TqChange::Deleted(5)));
    recalculate(&mut db, 1, 30, &[], &s, avg);
    assert_eq!(priorities(&db), [250.0, 375.0, 125.0, 250.0]);
    // B's b2 is deleted: B keeps one TQ, not more than one, so every owner again.
    assert_eq!(db.remove_job(3, 3, 1), Some(TqChange::Deleted(3)));
    recalculate(&mut db, 1, 20, &[], &s, avg);
    assert_eq!(priorities(&db), [250.0, 500.0, 250.0]);
}

#[test]
fn a_job_sharing_group_is_recomputed_whole() {
    // A JOB_SHARING group is one entity: a new TQ of any owner sets every TQ of the group,
    // even when its owner already has one (the owner shortcut would set 1 500/1 500 for
    // owner 1's two TQs and leave owner 2's at its 1 500 of the step before).
    let (s, sum) = (shares(&[(0, 3000.0)]), UserPriorityWeighting::Sum);
    let mut db = TaskQueueDb::new();
    for (job, (owner, cpu)) in [(1, 500), (2, 500), (1, 5000)].into_iter().enumerate() {
        db.insert_job(&def(0, owner, cpu), job as u32, 1);
        recalculate(&mut db, 0, owner, &[0], &s, sum);
    }
    assert_eq!(priorities(&db), [1000.0, 1000.0, 1000.0]);
}

#[test]
fn entity_recalculation_sets_what_a_fresh_computation_gives_to_the_entity_only() {
    // After every step of a random history (jobs in, jobs out, DIRAC 9's delayed deletions),
    // a TQ creation or deletion must set exactly the TQs DIRAC selects (the JOB_SHARING
    // group; the owner's TQs if it has more than one; else the whole group) to what a
    // computation of every TQ gives, bit for bit, and leave every other TQ as it was.
    let mut next = below(0x2545_f491_4f6c_dd1d_u64);
    let mut s = shares(&[(0, 3000.0), (1, 700.0), (2, 50.0)]);
    s.user_factor.insert((1, 2), 0.37);
    let js = [0];
    for (weighting, keep_empty) in [(UserPriorityWeighting::Sum, false), (UserPriorityWeighting::Average, true)] {
        let mut db = TaskQueueDb::with_rules(if keep_empty { 4 } else { 0 }, keep_empty);
        let mut waiting: Vec<(TqId, JobId, u8, TqDefinition)> = Vec::new();
        let (mut whole, mut owner_only) = (0, 0);
        for job in 0..3000 {
            let (change, d) = if waiting.is_empty() || next(2) == 0 {
                let d = TqDefinition {
                    group: next(3) as u32,
                    owner: next(5) as u32,
                    cpu_time: [500, 5000][next(2) as usize],
                    sites: [vec![], vec![7]][next(2) as usize].clone(),
                    ..Default::default()
                };
                let up = next(11) as u8;
                let c = db.insert_job(&d, job, up);
                waiting.push((c.id(), job, up, d.clone()));
                (c, d)
            } else {
                let (id, j, up, d) = waiting.swap_remove(next(waiting.len() as u64) as usize);
                (db.remove_job(id, j, up).unwrap(), d)
            };
            let mut entity = matches!(change, TqChange::Created(_) | TqChange::Deleted(_)).then_some(d);
            if keep_empty && next(3) == 0 {
                let empty: Vec<TqId> = db.iter().filter(|t| t.n_jobs == 0).map(|t| t.id).collect();
                if let Some(&id) = empty.first() {
                    let tq = db.delete_empty(id).unwrap();
                    if entity.is_none() {
                        entity = Some((*tq.def).clone());
                    }
                }
            }
            let Some(d) = entity else { continue };
            let before: Vec<(TqId, u64)> = db.iter().map(|t| (t.id, t.priority.to_bits())).collect();
            recalculate(&mut db, d.group, d.owner, &js, &s, weighting);
            let owned = db.iter().filter(|t| t.head.group == d.group && t.head.owner == d.owner).count();
            let only_owner = !js.contains(&d.group) && owned > 1;
            if only_owner {
                owner_only += 1
            } else {
                whole += 1
            }
            let fresh = sum_identical_definitions(&db, &compute(db.iter(), |g| js.contains(&g), &s, weighting));
            for (t, (id, old)) in db.iter().zip(before) {
                let set = t.n_jobs > 0 && t.head.group == d.group && (!only_owner || t.head.owner == d.owner);
                let want = if set { fresh.iter().find(|f| f.0 == id).unwrap().1.to_bits() } else { old };
                assert_eq!(t.priority.to_bits(), want, "job {job}, TQ {id}, set: {set}");
            }
        }
        assert!(whole > 50 && owner_only > 50, "both branches taken: {whole} whole, {owner_only} owner only");
    }
}
