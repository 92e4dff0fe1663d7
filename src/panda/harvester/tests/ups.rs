use std::collections::BTreeMap;

use super::*;
use crate::panda::gshare::{ShareNode, Usage, sorted_leaves};
use crate::panda::harvester::ups::UpsSkip;

/// The reference §9 gshare example: executing MC 50 / Reprocessing 10 / User Analysis 40 of
/// pledges 60/20/20 sorts Reprocessing, MC, User Analysis.
fn shares() -> Vec<crate::panda::gshare::ShareStatus> {
    let tree = vec![
        ShareNode::leaf("MC", 60.0),
        ShareNode::leaf("Reprocessing", 20.0),
        ShareNode::leaf("User Analysis", 20.0),
    ];
    let usage: BTreeMap<String, Usage> = [("MC", 50.0), ("Reprocessing", 10.0), ("User Analysis", 40.0)]
        .into_iter()
        .map(|(n, e)| (n.to_string(), Usage { executing: e, queued: 0.0 }))
        .collect();
    let s = sorted_leaves(&tree, &usage);
    assert_eq!(s.iter().map(|x| x.name.as_str()).collect::<Vec<_>>(), ["Reprocessing", "MC", "User Analysis"]);
    s
}

fn pq(corecount: i64) -> UpsQueueConfig {
    UpsQueueConfig { corecount: Some(corecount), harvester: Some("h1".into()), ..UpsQueueConfig::default() }
}

fn stats(rts: &[(&str, u64, u64, u64)]) -> Vec<UpsHarvesterStats> {
    vec![UpsHarvesterStats {
        harvester_id: "h1".into(),
        rts: rts
            .iter()
            .map(|&(rt, running, submitted, ready)| UpsRtStats {
                resource_type: rt.into(),
                running,
                submitted,
                ready,
                to_submit: 0,
            })
            .collect(),
    }]
}

/// `n` activated jobs of one gshare, resource type and priority; PandaIDs from `first`.
fn jobs(n: u64, first: u64, gshare: &str, rt: &str, prio: i64) -> Vec<UpsJob> {
    (0..n)
        .map(|i| UpsJob {
            panda_id: first + i,
            gshare: gshare.into(),
            resource_type: rt.into(),
            current_priority: prio,
        })
        .collect()
}

fn ups(p: &UpsQueueConfig, st: &[UpsHarvesterStats], act: &[UpsJob]) -> UpsOutcome {
    ups_new_worker_distribution(&MeanrssParams::default(), Some(p), &types(), st, (0.0, 0.0), &shares(), act)
}

fn commanded(o: &UpsOutcome) -> Vec<(String, u64)> {
    match o {
        UpsOutcome::Command { new_workers, .. } => new_workers.clone(),
        UpsOutcome::NoCommand(r) => panic!("no command: {r}"),
    }
}

/// corecount 8; SCORE 100 running / 10 submitted, MCORE 50 running (400 cores) / 2 submitted:
/// running 500 cores, queued 26, target max(int(200.0), 600) = 600, to_submit 574.
/// Reprocessing's 5 MCORE jobs: 2 → 1 (free), → 0, −1, −2, −3 (4 × 8 cores); MC's 20 SCORE
/// jobs: 10 → 1 free, → 0 … −10 (11 cores). new = −q + 1: SCORE 11, MCORE 4.
#[test]
fn ups_basic_walk() {
    let mut act = jobs(20, 100, "MC", "SCORE", 500);
    act.extend(jobs(5, 200, "Reprocessing", "MCORE", 10));
    let o = ups(&pq(8), &stats(&[("SCORE", 100, 10, 0), ("MCORE", 50, 2, 0)]), &act);
    assert_eq!(commanded(&o), [("SCORE".to_string(), 11), ("MCORE".to_string(), 4)]);
    let UpsOutcome::Command { harvester_id, trace, .. } = &o else { unreachable!() };
    assert_eq!(harvester_id, "h1");
    assert_eq!((trace.n_cores_running, trace.n_cores_queued, trace.n_cores_target), (500, 26, 600));
    assert_eq!((trace.n_cores_to_submit, trace.n_cores_to_submit_left), (574, 574 - 32 - 11));
    assert_eq!(trace.workers_queued, [("SCORE".to_string(), -10), ("MCORE".to_string(), -3)]);
    assert_eq!(trace.to_string(), "IN CORES: nrunning 500, ntarget 600, nqueued 26. We need to process 574 cores");
    assert!(!trace.keepalive);
    // 3 jobs and 2 queued workers: the "+1" gives 2 new, not 1.
    let o = ups(&pq(1), &stats(&[("SCORE", 0, 2, 0)]), &jobs(3, 1, "MC", "SCORE", 1));
    assert_eq!(o.new_workers("SCORE"), 2);
}

/// corecount 1, 10 running: target max(4, 75) = 75 = to_submit; 100 jobs stop after 75 → 76.
#[test]
fn ups_stops_at_to_submit() {
    let o = ups(&pq(1), &stats(&[("SCORE", 10, 0, 0)]), &jobs(100, 1, "MC", "SCORE", 1));
    assert_eq!(o.new_workers("SCORE"), 76);
    // Queued cores above the target: to_submit is the floor 5 × corecount → 6 new.
    let o = ups(&pq(1), &stats(&[("SCORE", 10, 0, 0), ("SCORE_HIMEM", 0, 200, 0)]), &jobs(100, 1, "MC", "SCORE", 1));
    assert_eq!(o.new_workers("SCORE"), 6);
    assert_eq!(o.new_workers("SCORE_HIMEM"), 0);
}

/// ups_core_target 1000 on an online/brokeroff PQ: target max(400, 75) = 400 → 401 new;
/// a test PQ ignores it: 75 → 76.
#[test]
fn ups_core_target_by_status() {
    let act = jobs(1000, 1, "MC", "SCORE", 1);
    for (status, want) in [(PqStatus::Online, 401), (PqStatus::Brokeroff, 401), (PqStatus::Test, 76)] {
        let p = UpsQueueConfig { status, ups_core_target: Some(1000), ..pq(1) };
        assert_eq!(ups(&p, &stats(&[("SCORE", 0, 0, 0)]), &act).new_workers("SCORE"), want);
    }
}

#[test]
fn ups_keepalive_worker() {
    let o = ups(&pq(8), &stats(&[("MCORE", 10, 5, 0)]), &[]);
    assert_eq!(commanded(&o), [("SCORE".to_string(), 1)]);
    let UpsOutcome::Command { trace, .. } = &o else { unreachable!() };
    assert!(trace.keepalive);
    assert_eq!(trace.workers_queued, [("MCORE".to_string(), 5)]);
}

#[test]
fn ups_resource_type_limits() {
    // MCORE: 50 running of a limit of 50 → its jobs are skipped.
    let mut p = pq(8);
    p.resource_type_limits.insert("MCORE".into(), 50);
    let mut act = jobs(5, 1, "MC", "MCORE", 1);
    act.extend(jobs(3, 10, "MC", "SCORE", 1));
    let o = ups(&p, &stats(&[("MCORE", 50, 0, 0), ("SCORE", 0, 0, 0)]), &act);
    assert_eq!((o.new_workers("MCORE"), o.new_workers("SCORE")), (0, 4));
    // HIMEM group of 16 cores: 16 SCORE_HIMEM running use it up; both HIMEM types skipped.
    let mut p = pq(8);
    p.resource_type_limits.insert("HIMEM".into(), 16);
    let mut act = jobs(5, 1, "MC", "SCORE_HIMEM", 1);
    act.extend(jobs(5, 10, "MC", "MCORE_HIMEM", 1));
    act.extend(jobs(2, 20, "MC", "SCORE", 1));
    let o = ups(&p, &stats(&[("SCORE_HIMEM", 16, 0, 0)]), &act);
    assert_eq!(commanded(&o), [("SCORE_HIMEM".to_string(), 0), ("SCORE".to_string(), 3)]);
    // 15 running: 1 core left, so they are walked.
    let o = ups(&p, &stats(&[("SCORE_HIMEM", 15, 0, 0)]), &act);
    assert_eq!((o.new_workers("SCORE_HIMEM"), o.new_workers("MCORE_HIMEM")), (6, 6));
}

/// meanrss 2000 and workers at 2500 MB/core: only SCORE and MCORE jobs are walked.
#[test]
fn ups_memory_target() {
    let p = UpsQueueConfig { meanrss: Some(2000), ..pq(8) };
    let mut act = jobs(4, 1, "MC", "SCORE_HIMEM", 1);
    act.extend(jobs(2, 10, "MC", "SCORE", 1));
    let st = stats(&[("SCORE", 0, 0, 0)]);
    let run = |params: MeanrssParams, p: &UpsQueueConfig, avg: (f64, f64)| {
        ups_new_worker_distribution(&params, Some(p), &types(), &st, avg, &shares(), &act)
    };
    let o = run(MeanrssParams::default(), &p, (2500.0, 2400.0));
    assert_eq!((o.new_workers("SCORE"), o.new_workers("SCORE_HIMEM")), (3, 0));
    let UpsOutcome::Command { trace, .. } = &o else { unreachable!() };
    assert_eq!(trace.resource_types_under_target, Some(vec!["SCORE".to_string(), "MCORE".to_string()]));
    // IGNORE_MEANRSS, or workers under the target: everything is walked.
    let o = run(MeanrssParams { ignore_meanrss: true }, &p, (2500.0, 2400.0));
    assert_eq!(o.new_workers("SCORE_HIMEM"), 5);
    assert_eq!(run(MeanrssParams::default(), &p, (1900.0, 1800.0)).new_workers("SCORE_HIMEM"), 5);
    // A target under every type's ceiling: the empty list filters nothing.
    let low = UpsQueueConfig { meanrss: Some(1500), ..pq(8) };
    assert_eq!(run(MeanrssParams::default(), &low, (2500.0, 2400.0)).new_workers("SCORE_HIMEM"), 5);
}

/// to_submit 5 (queued cores above target): the under-pledged share's jobs go first, whatever
/// the priorities of the others; within a share, priority then PandaID.
#[test]
fn ups_walks_in_gshare_then_priority_order() {
    let mut act = jobs(10, 1, "User Analysis", "SCORE", 1000);
    act.extend(jobs(10, 100, "Reprocessing", "MCORE", 1));
    let st = stats(&[("SCORE_HIMEM", 0, 200, 0)]);
    let o = ups(&pq(1), &st, &act);
    assert_eq!(commanded(&o), [("SCORE_HIMEM".to_string(), 0), ("MCORE".to_string(), 6)]);
    // Same share: the 3 MCORE jobs of priority 900 come before 10 SCORE ones of priority 5.
    let mut act = jobs(10, 1, "MC", "SCORE", 5);
    act.extend(jobs(3, 100, "MC", "MCORE", 900));
    let o = ups(&pq(1), &st, &act);
    assert_eq!((o.new_workers("MCORE"), o.new_workers("SCORE")), (4, 3));
    // A share that is not a leaf is never walked: keep-alive only.
    let o = ups(&pq(1), &stats(&[]), &jobs(10, 1, "Express", "SCORE", 5));
    assert_eq!(commanded(&o), [("SCORE".to_string(), 1)]);
}

#[test]
fn ups_no_command() {
    let st = stats(&[("SCORE", 1, 0, 0)]);
    let none = ups_new_worker_distribution(&MeanrssParams::default(), None, &types(), &st, (0.0, 0.0), &shares(), &[]);
    assert_eq!(none, UpsOutcome::NoCommand(UpsSkip::NoQueueConfig));
    let unassigned = UpsQueueConfig { harvester: None, ..pq(8) };
    assert_eq!(ups(&unassigned, &st, &[]), UpsOutcome::NoCommand(UpsSkip::NoHarvesterAssigned));
    let other = UpsQueueConfig { harvester: Some("h2".into()), ..pq(8) };
    let o = ups(&other, &st, &[]);
    assert_eq!(o.new_workers("SCORE"), 0);
    let UpsOutcome::NoCommand(r) = o else { unreachable!() };
    assert_eq!(r.to_string(), "No harvester instance assigned or not in statistics");
}

/// maxrss 24000 on 8 cores (3000 MB/core): SCORE 10 running × 1 core × 2000, MCORE_HIMEM
/// 1 running + 1 submitted × 8 cores × 3000: (20000 + 48000) / 26 and (20000 + 24000) / 18.
#[test]
fn average_memory() {
    let p = UpsQueueConfig { maxrss: Some(24_000), ..pq(8) };
    let st = stats(&[("SCORE", 10, 0, 0), ("MCORE_HIMEM", 1, 1, 0), ("GPU", 5, 5, 0)]);
    let (all, run) = average_memory_workers(&types(), &p, &st[0]);
    assert!((all - 2615.3846153846152).abs() < 1e-9);
    assert!((run - 2444.4444444444443).abs() < 1e-9);
    assert_eq!(average_memory_workers(&types(), &p, &stats(&[])[0]), (0.0, 0.0));
}

/// running = u64::MAX plus submitted workers saturates instead of overflowing.
#[test]
fn average_memory_saturates_on_huge_counts() {
    let p = UpsQueueConfig { maxrss: Some(24_000), ..pq(8) };
    let st = stats(&[("SCORE", u64::MAX, 5, 0)]);
    let (all, run) = average_memory_workers(&types(), &p, &st[0]);
    assert_eq!((all, run), (2000.0, 2000.0));
}
