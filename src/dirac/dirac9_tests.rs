//! The DIRAC 9 variant against the numbers that running the real DIRAC 9.1.22 code gave
//! (reference `dirac.md` §1.1, §1.4, §2.1).

use std::collections::BTreeMap;

use super::matcher::{MatchRules, PilotIdentity, Resource, TqOrdering, request_job};
use super::preset::Preset;
use super::priority::{
    EntityShares, GroupConfig, Scratch, UserPriorityWeighting, compute, recalculate_entity_into,
    sum_identical_definitions,
};
use super::taskqueue::{TaskQueueDb, TqChange, TqDefinition};
use crate::engine::RngStreams;

const AVG: UserPriorityWeighting = UserPriorityWeighting::Average;

fn shares(group: u32, share: f64) -> EntityShares {
    EntityShares { group: BTreeMap::from([(group, share)]), user_factor: BTreeMap::new() }
}

/// DIRAC 9's priorities: compute, then sum over TQs identical but for their sites.
fn dirac9_priorities(db: &TaskQueueDb, job_sharing: bool, s: &EntityShares) -> Vec<f64> {
    let p = compute(db.iter(), |_| job_sharing, s, AVG);
    sum_identical_definitions(db, &p).into_iter().map(|(_, p)| p).collect()
}

#[test]
fn tqs_identical_but_for_sites_each_get_the_sum_600_600_300() {
    // Share 900, one entity, three TQs of one job each at UserPriority 1:
    // {CPU 3600, Sites A}, {CPU 3600, Sites B}, {CPU 86400}.
    let mut db = TaskQueueDb::new();
    let def = |cpu, sites: Vec<u32>| TqDefinition { owner: 1, group: 0, cpu_time: cpu, sites, ..Default::default() };
    db.insert_job(&def(3600, vec![10]), 1, 1);
    db.insert_job(&def(3600, vec![11]), 2, 1);
    db.insert_job(&def(86_400, vec![]), 3, 1);
    let s = shares(0, 900.0);
    let plain: Vec<f64> = compute(db.iter(), |_| true, &s, AVG).into_iter().map(|(_, p)| p).collect();
    assert_eq!(plain, [300.0, 300.0, 300.0], "without the grouping (the seed)");
    assert_eq!(dirac9_priorities(&db, true, &s), [600.0, 600.0, 300.0]);
}

#[test]
fn between_agent_passes_a_new_tq_carries_default_share_priorities_833_167_then_2500_500() {
    // Reference §2.4, the real code run: the optimizer creates prod's second TQ and recomputes
    // the owner with the process-local share 1000 (its `__groupShares` is empty): 833/167 for
    // average job priorities 5 and 1. The TaskQueuesAgent's pass, with JobShare 3000: 2500/500.
    let mut db = TaskQueueDb::with_rules(Preset::Dirac9.max_jobs_in_tq(), true);
    let prod = |cpu| TqDefinition { owner: 7, group: 0, cpu_time: cpu, ..Default::default() };
    db.insert_job(&prod(3600), 1, 5);
    assert_eq!(db.insert_job(&prod(86_400), 2, 1), TqChange::Created(2));
    let process_default = EntityShares::default();
    let mut scratch = Scratch::default();
    let at_insertion = recalculate_entity_into(&db, 0, 7, false, &process_default, AVG, &mut scratch);
    let rounded: Vec<f64> = at_insertion.iter().map(|&(_, p)| p.round()).collect();
    assert_eq!(rounded, [833.0, 167.0]);
    assert_eq!(dirac9_priorities(&db, false, &shares(0, 3000.0)), [2500.0, 500.0]);
}

#[test]
fn max_jobs_in_tq_opens_a_second_tq_and_u0_is_matched_first_two_times_in_three() {
    // 5 001 jobs of u0 and 1 of u1 in a non-JOB_SHARING group of share 1000.
    let mut db = TaskQueueDb::with_rules(Preset::Dirac9.max_jobs_in_tq(), true);
    let u = |owner| TqDefinition { owner, group: 0, cpu_time: 3600, ..Default::default() };
    for j in 1..=5001 {
        db.insert_job(&u(0), j, 1);
    }
    assert_eq!(db.insert_job(&u(1), 5002, 1), TqChange::Created(3));
    let sizes: Vec<u32> = db.iter().map(|t| t.n_jobs).collect();
    assert_eq!(sizes, [5000, 1, 1]);
    // The next job of u0 goes to the TQ with the fewest jobs.
    assert_eq!(db.insert_job(&u(0), 5003, 1), TqChange::Existing(2));
    db.remove_job(2, 5003, 1);
    let p = dirac9_priorities(&db, false, &shares(0, 1000.0));
    assert_eq!(p, [500.0, 500.0, 500.0]);
    for (id, p) in sum_identical_definitions(&db, &compute(db.iter(), |_| false, &shares(0, 1000.0), AVG)) {
        db.get_mut(id).unwrap().priority = p;
    }
    // RAND()/Priority over three equal priorities: u0 owns two of them, P = 2/3.
    let tags = [];
    let r = Resource {
        identity: PilotIdentity::Generic,
        private_type: 99,
        setup: 0,
        site: 0,
        grid_ce: 0,
        platform: 0,
        tags: &tags,
        required_tags: &[],
        cpu_time: 1e6,
        job_types: &[],
    };
    let rules = MatchRules { ordering: TqOrdering::RandomPriority, jobs_per_level: 50 };
    let mut rng = RngStreams::new(8).stream("test/dirac9");
    let n = 30_000;
    let u0 = (0..n).filter(|_| request_job(&db, &r, |_| false, rules, &mut rng).unwrap().tq != 3).count();
    let share = u0 as f64 / f64::from(n);
    assert!((share - 2.0 / 3.0).abs() < 0.01, "u0 first in {share} of the draws, not 1/2");
}

#[test]
fn an_emptied_tq_stays_and_counts_its_owner_in_u_until_orphan_cleaning_takes_every_empty_one() {
    let mut db = TaskQueueDb::with_rules(0, true);
    let u = |owner| TqDefinition { owner, group: 0, cpu_time: 3600, job_types: vec![5], ..Default::default() };
    db.insert_job(&u(0), 1, 1);
    db.insert_job(&u(1), 2, 1);
    assert!(!db.has_orphan());
    assert_eq!(db.remove_job(2, 2, 1), Some(TqChange::Emptied(2)));
    // u1 has no job but its TQ is still there: U = 2, u0's TQ keeps 1000/2.
    let s = shares(0, 1000.0);
    assert_eq!(compute(db.iter(), |_| false, &s, AVG), [(1, 500.0)]);
    // An emptied TQ is never reused: u1's next job opens TQ 3.
    assert_eq!(db.insert_job(&u(1), 3, 1), TqChange::Created(3));
    db.remove_job(3, 3, 1);
    // `cleanOrphanedTaskQueues` deletes both empty TQs at once and keeps TQ 1's priority.
    db.get_mut(1).unwrap().priority = 500.0;
    assert!(db.has_orphan());
    assert_eq!(db.clean_orphaned(), 2);
    assert_eq!((db.len(), db.get(1).unwrap().priority, db.has_orphan()), (1, 500.0, false));
    // Only the next recomputation sees U = 1: u0 gets the whole share.
    assert_eq!(compute(db.iter(), |_| false, &s, AVG), [(1, 1000.0)]);
    // An empty TQ without any requirement row is not noticed by `retrieveTaskQueues`.
    let bare = TqDefinition { owner: 2, group: 0, cpu_time: 3600, ..Default::default() };
    db.insert_job(&bare, 4, 1);
    db.remove_job(4, 4, 1);
    assert!(!db.has_orphan());
    // The seed's TQDB deletes at once.
    let mut seed = TaskQueueDb::new();
    seed.insert_job(&u(1), 1, 1);
    assert_eq!(seed.remove_job(1, 1, 1), Some(TqChange::Deleted(1)));
}

#[test]
fn job_sharing_as_a_real_cs_spells_it() {
    let g = |p: &str| GroupConfig { name: "g".into(), job_share: 1000.0, properties: vec![p.into()], users: vec![] };
    assert!(g("JOB_SHARING").job_sharing() && g("JobSharing").job_sharing());
    assert!(!g("NormalUser").job_sharing());
}
