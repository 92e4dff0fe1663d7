//! Two snapshots, two views: they differ exactly where the snapshots differ.

use super::*;
use crate::panda::job_broker::{self, BrokerQueue, SkipReason, Stage};
use crate::panda::network::LinkMetrics;
use crate::panda::task_broker::{self, Brokerage, SkipReason as NucleusSkip};

/// The example's AGLT2→BNL link (`network[1]`).
const AGLT2_TO_BNL: u32 = 1;

/// A queue's fields as text, with its link left out.
fn without_link(b: &BrokerQueue) -> String {
    let mut c = b.clone();
    c.link = Link::Unknown;
    format!("{c:?}")
}

#[test]
fn queued_files_on_a_link_change_only_the_link_the_nucleus_backlog_and_the_network_weight() {
    let mut s = runnable_example();
    s.panda.as_mut().unwrap().gdpconfig.job_broker.nw_active = true;
    let before = World::new(s.clone());
    let mut after = World::new(s);
    after.queue_files(AGLT2_TO_BNL, 60);
    let pd = ProdDynamic::default();
    let q = query(1, Some(0), 800);
    let (v, d0, d1) = (before.view(), before.dynamic(), after.dynamic());
    let (q0, q1) = (v.broker_queues(&q, &d0, &pd), v.broker_queues(&q, &d1, &pd));
    // BNL's PQ is at the nucleus: unchanged. AGLT2's link now carries 40 + 60 files.
    assert_eq!(format!("{:?}", q0[0]), format!("{:?}", q1[0]));
    assert_eq!(without_link(&q0[1]), without_link(&q1[1]));
    let metrics = |queued| {
        Link::Satellite(LinkMetrics {
            queued_files: Some(queued),
            mbps_1h: None,
            mbps_1d: None,
            mbps_1w: None,
            closeness: Some(3.0),
            blocked: false,
        })
    };
    assert_eq!((q0[1].link, q1[1].link), (metrics(40), metrics(100)));
    // The task: only the files queued to the nucleus differ.
    let (t0, t1) = (v.broker_task(&q, &d0).unwrap(), v.broker_task(&q, &d1).unwrap());
    assert_eq!(t0.nucleus.as_ref().map(|n| n.total_queued_files), Some(40));
    assert_eq!(t1.nucleus.as_ref().map(|n| n.total_queued_files), Some(100));
    let mut t1b = t1.clone();
    t1b.nucleus.as_mut().unwrap().total_queued_files = 40;
    assert_eq!(format!("{t0:?}"), format!("{t1b:?}"));
    // The nuclei: BNL's backlog only.
    let (n0, n1) = (v.nuclei(1, 800, &d0, &pd).unwrap(), v.nuclei(1, 800, &d1, &pd).unwrap());
    assert_eq!((n0[0].queued_output_files, n1[0].queued_output_files), (40.0, 100.0));
    let mut n1b = n1.clone();
    n1b[0].queued_output_files = 40.0;
    assert_eq!(n0, n1b);
    // With NW_ACTIVE the satellite's weight drops with its queued weight 2 − q/150.
    let weight = |t: &BrokerTask, qs: &[BrokerQueue]| {
        let r = job_broker::broker(t, qs, v.job_broker_params());
        r.candidates().iter().map(|c| (c.queue, c.weight)).collect::<Vec<_>>()
    };
    let base = 0.1 * ((2.5e9 + 0.0) / 2.5e9 / (1.0 / 100.0 + 1.0));
    let nw = |queued: f64| 0.5 * (2.0 - queued / 150.0) + 0.5 * (1.0 + 8.0 / 11.0);
    assert_eq!(weight(&t0, &q0), vec![(0, base * 2.5), (1, base * nw(40.0))]);
    assert_eq!(weight(&t1, &q1), vec![(0, base * 2.5), (1, base * nw(100.0))]);
    // 50 more: 150 files on the link, the satellite is skipped for now.
    after.queue_files(AGLT2_TO_BNL, 50);
    let d2 = after.dynamic();
    let r = job_broker::broker(&v.broker_task(&q, &d2).unwrap(), &v.broker_queues(&q, &d2, &pd), v.job_broker_params());
    assert_eq!(r.candidates().iter().map(|c| c.queue).collect::<Vec<_>>(), vec![0]);
    let skip = r.why(1).unwrap();
    assert_eq!((skip.stage, skip.temporary), (Stage::Link, true));
    assert!(matches!(skip.reason, SkipReason::LinkSaturated { queued: 150, .. }));
}

#[test]
fn a_transfer_backlog_into_the_nucleus_keeps_new_tasks_away() {
    let mut w = World::new(runnable_example());
    let pd = ProdDynamic::default();
    let args = TaskArgs { task_no: 0, assigning_for_s: Some(0.0), current_priority: 800 };
    let prio = [0.0, 0.0];
    let run = |w: &World| {
        let v = w.view();
        let tb = v.task_brokerage(1, args, &w.dynamic(), &pd).unwrap();
        let out =
            task_broker::do_brokerage(&tb.input(&prio), v.task_brokerage_params(), v.task_broker_variant(), &mut rng());
        (out.chosen(), out.why_not(0).cloned().map(|r| r.to_string()))
    };
    assert_eq!(run(&w), (Some(0), None));
    // 40 background + 1961 in flight = 2001 > NQUEUED_NUC_CAP (2000).
    w.queue_files(AGLT2_TO_BNL, 1961);
    assert_eq!(run(&w), (None, Some(NucleusSkip::TransferBacklog.to_string())));
    // A negative T1 weight skips the backlog check (reference §1 filter 3).
    let mut s = runnable_example();
    s.panda.as_mut().unwrap().tasks[1].t1_weight = -1;
    let mut w = World::new(s);
    w.queue_files(AGLT2_TO_BNL, 1961);
    let v = w.view();
    let tb = v.task_brokerage(1, args, &w.dynamic(), &pd).unwrap();
    let out =
        task_broker::do_brokerage(&tb.input(&prio), v.task_brokerage_params(), v.task_broker_variant(), &mut rng());
    assert!(matches!(out, Brokerage::Assigned(_)));
}

#[test]
fn storage_and_job_counts_change_only_their_fields() {
    let before = World::new(runnable_example());
    let mut after = World::new(runnable_example());
    after.storages.reserve(2, 2_000_000_000_000_000).unwrap(); // 2000 TB more at AGLT2_DATADISK
    after.queue_gshare_jobs[0][1] = JobCounts { activated: 30, running: 5, ..Default::default() };
    let pd = ProdDynamic::default();
    let q = query(1, Some(0), 800);
    let v = before.view();
    let (d0, d1) = (before.dynamic(), after.dynamic());
    let (e0, e1) = (v.endpoints(&d0), v.endpoints(&d1));
    assert_eq!((&e0[0], &e0[1]), (&e1[0], &e1[1]));
    assert_eq!(e0[2].space_free - e1[2].space_free, gib(2e15));
    let (q0, q1) = (v.broker_queues(&q, &d0, &pd), v.broker_queues(&q, &d1, &pd));
    // BNL: only its gshare counts; AGLT2: only its output endpoint's free space.
    let mut q1b = q1.clone();
    q1b[0].counts = JobCounts::default();
    q1b[1].output_endpoint = q0[1].output_endpoint.clone();
    assert_eq!(format!("{q0:?}"), format!("{q1b:?}"));
    assert_eq!(q1[0].counts.activated, 30);
    let usable = |b: &BrokerQueue| b.output_endpoint.as_ref().map(|e| e.1).unwrap();
    assert_eq!(usable(&q0[1]) - usable(&q1[1]), gib(2e15));
    // Brokerage: 30 activated for 5 running caps nothing at the UCORE PQ (PanDA caps UCORE PQs
    // per resource type only) but its weight falls to (5+1)/(30+0+0+0+10).
    let r = job_broker::broker(&v.broker_task(&q, &d1).unwrap(), &q1, v.job_broker_params());
    let bnl = r.candidates().iter().find(|c| c.queue == 0).unwrap();
    assert_eq!(bnl.terms.base, 6.0 / 40.0 / 1.0);
}
