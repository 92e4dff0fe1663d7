//! The CE state machine on its own, without a world: caps, the FIFO batch queue, slots of
//! multi-core pilots, cancellation.

use super::*;
use crate::engine::distribution::Distribution;

fn site(slots: u32, edit: impl Fn(&mut Ce)) -> Vec<Site> {
    let mut ce: Ce = serde_json::from_str(&format!(r#"{{"name":"ce1","slots":{slots}}}"#)).unwrap();
    ce.pilot_wait = Distribution::Fixed(10.0);
    edit(&mut ce);
    vec![Site { name: "S".into(), ces: vec![ce] }]
}

fn grid(slots: u32, edit: impl Fn(&mut Ce)) -> Grid {
    Grid::new(&site(slots, edit), &RngStreams::new(1))
}

const T0: SimTime = SimTime::ZERO;

#[test]
fn a_refused_submission_draws_nothing() {
    // Two grids with a random middleware wait: one refuses a submission in between. The
    // next accepted pilot must get the same wait in both, so the refusal drew nothing.
    let wait = |c: &mut Ce| c.pilot_wait = Distribution::Exponential { mean: 300.0 };
    let mut capped = grid(10, |c| {
        wait(c);
        c.max_waiting_jobs = Some(1);
    });
    let mut free = grid(10, wait);
    let one = PilotShape::default();
    let (a, ta, _) = capped.submit(T0, 0, 0, one).unwrap();
    free.submit(T0, 0, 0, one).unwrap();
    assert_eq!(capped.submit(T0, 0, 0, one), Err(Refusal::MaxWaitingJobs(1)));
    let mut out = Vec::new();
    capped.reaches_batch(ta, a, &mut out);
    let (_, t_capped, _) = capped.submit(T0, 0, 0, one).unwrap();
    let (_, t_free, _) = free.submit(T0, 0, 0, one).unwrap();
    assert_eq!(t_capped, t_free);
    assert_ne!(t_capped, ta, "the waits are random");
    // A pilot larger than the CE, or of no core, is refused.
    assert_eq!(free.submit(T0, 0, 0, PilotShape::cpu(11)), Err(Refusal::Shape { cores: 11, slots: 10 }));
    assert_eq!(free.submit(T0, 0, 0, PilotShape::cpu(0)), Err(Refusal::Shape { cores: 0, slots: 10 }));
}

#[test]
fn a_pilot_failing_at_start_frees_its_slot_for_the_next_in_the_queue() {
    let mut g = grid(1, |c| c.pilot_failure_probability = 1.0);
    let mut out = Vec::new();
    let (a, t, _) = g.submit(T0, 0, 0, PilotShape::default()).unwrap();
    let (b, _, _) = g.submit(T0, 0, 0, PilotShape::default()).unwrap();
    g.reaches_batch(t, a, &mut out);
    assert_eq!(out, vec![Transition::Started(a), Transition::Ended(a, PilotStatus::Failed)]);
    out.clear();
    g.reaches_batch(t, b, &mut out);
    assert_eq!(out, vec![Transition::Started(b), Transition::Ended(b, PilotStatus::Failed)]);
    assert_eq!((g.state[0].busy, g.state[0].running, g.state[0].waiting), (0, 0, 0));
    assert_eq!(g.check_invariants(), Vec::<String>::new());
}

#[test]
fn cancelling_the_head_of_the_queue_lets_the_pilots_behind_it_start() {
    let mut g = grid(4, |_| {});
    let mut out = Vec::new();
    let (a, t, _) = g.submit(T0, 0, 0, PilotShape::cpu(2)).unwrap();
    let (b, _, _) = g.submit(T0, 0, 0, PilotShape::cpu(4)).unwrap();
    let (c, _, _) = g.submit(T0, 0, 0, PilotShape::cpu(2)).unwrap();
    for p in [a, b, c] {
        g.reaches_batch(t, p, &mut out);
    }
    assert_eq!(out, vec![Transition::Started(a)], "b heads the queue and holds c back");
    out.clear();
    assert!(g.cancel(t, b, &mut out));
    assert_eq!(out, vec![Transition::Ended(b, PilotStatus::Cancelled), Transition::Started(c)]);
    // Ending a pilot twice changes nothing.
    out.clear();
    g.end(t, a, PilotStatus::Done, &mut out);
    g.end(t, a, PilotStatus::Done, &mut out);
    assert_eq!(out, vec![Transition::Ended(a, PilotStatus::Done)]);
    assert_eq!(g.check_invariants(), Vec::<String>::new());
}

#[test]
fn caps_refuse_submissions() {
    let mut g = grid(10, |c| {
        c.max_waiting_jobs = Some(2);
        c.max_total_jobs = Some(2);
    });
    let one = PilotShape::default();
    let (p0, at, ev) = g.submit(T0, 0, 0, one).unwrap();
    assert_eq!((at, ev), (SimTime::from_secs(10), GridEvent::PilotReachesBatch(p0)));
    g.submit(T0, 0, 0, one).unwrap();
    assert_eq!(g.submit(T0, 0, 0, one), Err(Refusal::MaxWaitingJobs(2)));
    let mut out = Vec::new();
    g.reaches_batch(at, p0, &mut out);
    assert_eq!(out, vec![Transition::Started(p0)]);
    // One running, one waiting: within MaxWaitingJobs 2, but MaxTotalJobs 2 is reached.
    assert_eq!(g.submit(T0, 0, 0, one), Err(Refusal::MaxTotalJobs(2)));
    let c = g.counts();
    assert_eq!((c.waiting, c.running, c.refused), (1, 1, 2));
    assert_eq!(g.pilots.len(), 2, "a refused submission makes no pilot");
    assert_eq!(g.check_invariants(), Vec::<String>::new());
}

#[test]
fn the_batch_queue_is_first_come_first_served_and_multi_core_pilots_hold_their_slots() {
    let mut g = grid(4, |_| {});
    let mut out = Vec::new();
    let four = PilotShape::cpu(4);
    let (a, t, _) = g.submit(T0, 0, 0, PilotShape::cpu(3)).unwrap();
    let (b, _, _) = g.submit(T0, 0, 0, four).unwrap();
    let (c, _, _) = g.submit(T0, 0, 0, PilotShape::default()).unwrap();
    for p in [a, b, c] {
        g.reaches_batch(t, p, &mut out);
    }
    // a takes 3 of 4 slots; b needs 4 and queues; c fits but must not overtake b.
    assert_eq!(out, vec![Transition::Started(a)]);
    assert_eq!((g.state[0].busy, g.state[0].queue.len()), (3, 2));
    // a runs two jobs on its three cores.
    assert!(g.start_job(a, 1, 2, 0) && g.start_job(a, 2, 1, 0));
    assert!(!g.start_job(a, 3, 1, 0), "no core left");
    assert!(g.end_job(a, 1, 2, 0) && !g.end_job(a, 1, 2, 0));
    assert!(g.end_job(a, 2, 1, 0));
    out.clear();
    let later = SimTime::from_secs(100);
    g.end(later, a, PilotStatus::Done, &mut out);
    // b takes all four slots; c waits behind it.
    assert_eq!(out, vec![Transition::Ended(a, PilotStatus::Done), Transition::Started(b)]);
    assert_eq!(g.pilot(c).status, PilotStatus::Waiting);
    assert_eq!(g.walltime_limit(b), later + SimDuration::from_secs(172_800));
    assert_eq!(g.check_invariants(), Vec::<String>::new());
}

#[test]
fn cancelling_kills_the_jobs_of_a_running_pilot_and_frees_its_slot() {
    let mut g = grid(1, |_| {});
    let mut out = Vec::new();
    let (a, t, _) = g.submit(T0, 0, 0, PilotShape::default()).unwrap();
    let (b, _, _) = g.submit(T0, 0, 0, PilotShape::default()).unwrap();
    g.reaches_batch(t, a, &mut out);
    g.reaches_batch(t, b, &mut out);
    assert!(g.start_job(a, 7, 1, 0));
    out.clear();
    assert!(g.cancel(t, a, &mut out));
    assert_eq!(
        out,
        vec![Transition::JobKilled(a, 7), Transition::Ended(a, PilotStatus::Cancelled), Transition::Started(b)]
    );
    assert!(!g.cancel(t, a, &mut out), "already ended");
    assert_eq!(g.check_invariants(), Vec::<String>::new());
}

#[test]
fn aborted_and_stuck_pilots_never_start() {
    let mut g = grid(5, |c| c.abort_probability = 1.0);
    let (p, _, ev) = g.submit(T0, 0, 0, PilotShape::default()).unwrap();
    assert_eq!(ev, GridEvent::PilotAborted(p));
    let mut out = Vec::new();
    g.abort(SimTime::from_secs(600), p, &mut out);
    g.reaches_batch(SimTime::from_secs(700), p, &mut out);
    assert_eq!(out, vec![Transition::Ended(p, PilotStatus::Aborted)]);
    let mut g = grid(5, |c| c.stuck_probability = 1.0);
    let (p, t, _) = g.submit(T0, 0, 0, PilotShape::default()).unwrap();
    g.reaches_batch(t, p, &mut out);
    assert_eq!(g.pilot(p).status, PilotStatus::Waiting);
    assert_eq!(g.counts().waiting, 1);
}

#[test]
fn a_wrong_counter_is_a_violation_naming_its_ce() {
    let mut g = grid(4, |_| {});
    let mut out = Vec::new();
    let (a, t, _) = g.submit(T0, 0, 0, PilotShape::cpu(3)).unwrap();
    g.submit(T0, 0, 0, PilotShape::default()).unwrap();
    g.reaches_batch(t, a, &mut out);
    // a runs on 3 cores; the other pilot waits in the middleware.
    assert_eq!((g.state[0].busy, g.state[0].running, g.state[0].waiting), (3, 1, 1));
    assert_eq!(g.check_invariants(), Vec::<String>::new());
    g.state[0].busy = 2;
    g.state[0].waiting = 0;
    assert_eq!(
        g.check_invariants(),
        vec![
            "CE ce1: 2 busy slots and 1 running, but 1 running pilots holding 3".to_string(),
            "CE ce1: waiting counter 0 but 1 waiting pilots".to_string(),
        ]
    );
}

/// A CE of 8 slots with two kinds of GPU node: 1 node of 2 × V100, 1 node of 4 × A100.
fn gpu_grid() -> Grid {
    grid(8, |c| {
        c.gpus = serde_json::from_str(
            r#"[{"vendor": "nvidia", "model": "V100", "vram_mb": 16384, "gpus_per_node": 2},
                {"vendor": "nvidia", "model": "A100", "vram_mb": 40960, "gpus_per_node": 4}]"#,
        )
        .unwrap();
    })
}

fn gpu_shape(gpus: u32, kinds: u32) -> PilotShape {
    PilotShape { cores: 1, gpus, gpu_kinds: kinds }
}

#[test]
fn a_gpu_pilot_starts_only_with_its_gpus_free_and_gives_them_back() {
    let mut g = gpu_grid();
    let mut out = Vec::new();
    // Three pilots of 2 GPUs that accept only the V100 node: one runs, two queue though cores
    // are free.
    let ids: Vec<PilotId> = (0..3).map(|_| g.submit(T0, 0, 0, gpu_shape(2, 0b01)).unwrap().0).collect();
    let t = T0 + SimDuration::from_secs(10);
    for &p in &ids {
        g.reaches_batch(t, p, &mut out);
    }
    assert_eq!(out, [Transition::Started(ids[0])]);
    assert_eq!((g.gpus.busy[0].clone(), g.state[0].busy, g.state[0].queue.len()), (vec![2, 0], 1, 2));
    // A CPU pilot behind the GPU-blocked ones starts: GPUs hold back only GPU pilots.
    let cpu = g.submit(T0, 0, 0, PilotShape::cpu(1)).unwrap().0;
    out.clear();
    g.reaches_batch(t, cpu, &mut out);
    assert_eq!(out, [Transition::Started(cpu)]);
    // Its jobs use the GPUs it holds, no more.
    assert!(g.start_job(ids[0], 7, 1, 2));
    assert!(!g.start_job(ids[0], 8, 0, 1), "no GPU left in the pilot");
    assert!(!g.start_job(cpu, 9, 1, 1), "a CPU pilot holds no GPU");
    assert!(g.end_job(ids[0], 7, 1, 2));
    assert_eq!(g.check_invariants(), Vec::<String>::new());
    // It ends: the next V100 pilot takes the GPUs.
    out.clear();
    g.end(t + SimDuration::from_secs(100), ids[0], PilotStatus::Done, &mut out);
    assert_eq!(out, [Transition::Ended(ids[0], PilotStatus::Done), Transition::Started(ids[1])]);
    assert_eq!(g.gpus.busy[0], [2, 0]);
    assert_eq!(g.check_invariants(), Vec::<String>::new());
}

#[test]
fn a_gpu_pilot_takes_the_first_kind_it_accepts_and_never_one_it_excludes() {
    let mut g = gpu_grid();
    let mut out = Vec::new();
    let t = T0 + SimDuration::from_secs(10);
    // Any kind: the V100 first, then (V100 full) the A100.
    let a = g.submit(T0, 0, 0, gpu_shape(2, 0)).unwrap().0;
    let b = g.submit(T0, 0, 0, gpu_shape(2, 0)).unwrap().0;
    // Excluding the A100 (accepting only the V100): waits, though 2 A100s are free.
    let c = g.submit(T0, 0, 0, gpu_shape(1, 0b01)).unwrap().0;
    for p in [a, b, c] {
        g.reaches_batch(t, p, &mut out);
    }
    assert_eq!(out, [Transition::Started(a), Transition::Started(b)]);
    assert_eq!(g.gpus.busy[0], [2, 2]);
    assert_eq!(g.gpus.hold(c).unwrap().kind, None);
    // More GPUs than a node of any accepted kind has: refused at submission.
    assert_eq!(g.submit(T0, 0, 0, gpu_shape(3, 0b01)), Err(Refusal::Gpus { gpus: 3 }));
    assert_eq!(g.submit(T0, 0, 0, gpu_shape(5, 0)), Err(Refusal::Gpus { gpus: 5 }));
    // Cancelled while queued: its request is forgotten.
    assert!(g.cancel(t, c, &mut out));
    assert!(g.gpus.hold(c).is_none());
    assert_eq!(g.check_invariants(), Vec::<String>::new());
}
