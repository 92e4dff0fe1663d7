//! Tests of `factory::startd`: the seed's example, the job-type policies, preemption, removal,
//! CPU sharing, the SPF closed form.

use super::*;
use crate::engine::RngStreams;

fn s(secs: u64) -> SimTime {
    SimTime::from_secs(secs)
}
fn d(secs: u64) -> SimDuration {
    SimDuration::from_secs(secs)
}

fn settings(vms: u32) -> StartdSettings {
    StartdSettings {
        vms,
        pilot_interval: d(300),
        job_types: JobTypePolicy::Any,
        preempt_background: false,
        on_removal: OnRemoval::Requeue,
        slot_cpus: None,
    }
}

fn rates(p: &StartdPilot) -> Vec<(usize, JobId, f64)> {
    p.rates().iter().map(|r| (r.vm, r.job, r.rate)).collect()
}

const PROD: JobKind = JobKind::Production;
const ANAL: JobKind = JobKind::Analysis;

#[test]
fn the_seeds_example_sequence() {
    // Seed 003 "Example of Using Startd Pilot": two VMs.
    let mut p = StartdPilot::new(settings(2), s(0), d(6 * 3600)).unwrap();
    assert_eq!((p.next_pilot_run(), p.removal_at()), (s(0), s(6 * 3600)));
    // Startd runs pilot, which fetches a production job: it runs on VM1 as background.
    assert_eq!(p.pilot_run(s(0)).unwrap(), StartdAction::RequestJob { vm: 0, request: JobRequest::Any });
    assert_eq!(p.job_fetched(s(60), 0, Some((1, PROD))).unwrap(), vec![]);
    assert_eq!(rates(&p), vec![(0, 1, 1.0)]);
    // Startd keeps on running pilot, which gets an analysis job this time: the production job
    // is suspended, the analysis job runs on VM2 as foreground.
    assert_eq!(p.next_pilot_run(), s(300));
    assert_eq!(p.pilot_run(s(300)).unwrap(), StartdAction::RequestJob { vm: 1, request: JobRequest::Any });
    assert_eq!(p.job_fetched(s(360), 1, Some((2, ANAL))).unwrap(), vec![StartdAction::Suspend { vm: 0, job: 1 }]);
    assert_eq!(rates(&p), vec![(0, 1, 0.0), (1, 2, 1.0)]);
    // Startd again runs pilot; no VM is available, so the pilot simply exits.
    assert_eq!(p.pilot_run(s(600)).unwrap(), StartdAction::EmptyPilotRun);
    // The analysis job finishes; the production job continues.
    let (f, actions) = p.job_ended(s(1000), 1).unwrap();
    assert_eq!(f, Finished { job: 2, kind: ANAL, wall: d(640), suspended: d(0) });
    assert_eq!(actions, vec![StartdAction::Resume { vm: 0, job: 1 }]);
    assert_eq!(rates(&p), vec![(0, 1, 1.0)]);
    // … until it finishes: 640 s of its 7940 s on the VM were suspended.
    let (f, actions) = p.job_ended(s(8000), 0).unwrap();
    assert_eq!(f, Finished { job: 1, kind: PROD, wall: d(7940), suspended: d(640) });
    assert!(actions.is_empty() && rates(&p).is_empty());
    let st = p.stats();
    assert_eq!((st.pilot_runs, st.empty_pilot_runs, st.jobs_started, st.jobs_finished), (3, 1, 2, 2));
    assert_eq!((st.suspensions, st.preemptions), (1, 0));
}

#[test]
fn keep_one_for_analysis_asks_for_analysis_for_the_last_free_vm() {
    let mut p = StartdPilot::new(
        StartdSettings { job_types: JobTypePolicy::KeepOneForAnalysis, ..settings(3) },
        s(0),
        d(1e6 as u64),
    )
    .unwrap();
    let any = |vm| StartdAction::RequestJob { vm, request: JobRequest::Any };
    let anal = |vm| StartdAction::RequestJob { vm, request: JobRequest::Only(ANAL) };
    assert_eq!(p.pilot_run(s(0)).unwrap(), any(0));
    p.job_fetched(s(10), 0, Some((1, PROD))).unwrap();
    assert_eq!(p.pilot_run(s(300)).unwrap(), any(1));
    p.job_fetched(s(310), 1, Some((2, PROD))).unwrap();
    // One VM left and no analysis job: analysis only. The WMS has none: the VM stays free.
    assert_eq!(p.pilot_run(s(600)).unwrap(), anal(2));
    assert_eq!(
        p.job_fetched(s(610), 2, Some((3, PROD))).unwrap_err(),
        StartdError::WrongKind { vm: 2, asked: JobRequest::Only(ANAL), got: PROD }
    );
    assert_eq!(p.job_fetched(s(610), 2, None).unwrap(), vec![]);
    assert_eq!((p.free_vms(), p.stats().empty_fetches), (1, 1));
    assert_eq!(p.pilot_run(s(900)).unwrap(), anal(2));
    p.job_fetched(s(910), 2, Some((4, ANAL))).unwrap();
    // Once an analysis job runs, a freed VM may take any job again.
    p.job_ended(s(1000), 0).unwrap();
    assert_eq!(p.pilot_run(s(1200)).unwrap(), any(0));
    // With two VMs, the policy asks for analysis as soon as one job runs.
    let mut two =
        StartdPilot::new(StartdSettings { job_types: JobTypePolicy::KeepOneForAnalysis, ..settings(2) }, s(0), d(9999))
            .unwrap();
    assert_eq!(two.pilot_run(s(0)).unwrap(), any(0));
    two.job_fetched(s(1), 0, Some((1, PROD))).unwrap();
    assert_eq!(two.pilot_run(s(300)).unwrap(), anal(1));
}

#[test]
fn preemption_ends_background_jobs_instead_of_suspending_them() {
    let mut p = StartdPilot::new(StartdSettings { preempt_background: true, ..settings(3) }, s(0), d(99_999)).unwrap();
    p.pilot_run(s(0)).unwrap();
    p.job_fetched(s(5), 0, Some((1, PROD))).unwrap();
    p.pilot_run(s(300)).unwrap();
    p.job_fetched(s(305), 1, Some((2, PROD))).unwrap();
    p.pilot_run(s(600)).unwrap();
    let a = p.job_fetched(s(605), 2, Some((3, ANAL))).unwrap();
    assert_eq!(
        a,
        vec![
            StartdAction::Preempt { vm: 0, job: 1, suspended: d(0) },
            StartdAction::Preempt { vm: 1, job: 2, suspended: d(0) },
        ]
    );
    assert_eq!(rates(&p), vec![(2, 3, 1.0)]);
    // While the foreground job runs, a pilot run asks for analysis only.
    assert_eq!(p.pilot_run(s(900)).unwrap(), StartdAction::RequestJob { vm: 0, request: JobRequest::Only(ANAL) });
    assert_eq!(p.stats().preemptions, 2);
}

#[test]
fn a_background_job_fetched_under_a_foreground_job_starts_suspended() {
    let mut p = StartdPilot::new(settings(3), s(0), d(99_999)).unwrap();
    p.pilot_run(s(0)).unwrap();
    p.job_fetched(s(0), 0, Some((1, ANAL))).unwrap();
    p.pilot_run(s(300)).unwrap();
    assert_eq!(p.job_fetched(s(300), 1, Some((2, PROD))).unwrap(), vec![]);
    assert_eq!(rates(&p), vec![(0, 1, 1.0), (1, 2, 0.0)]);
    // A second foreground job suspends nothing more.
    p.pilot_run(s(600)).unwrap();
    assert_eq!(p.job_fetched(s(600), 2, Some((3, ANAL))).unwrap(), vec![]);
    // The first analysis job ends: one foreground job still runs, nothing resumes.
    assert_eq!(p.job_ended(s(700), 0).unwrap().1, vec![]);
    // The last one ends: the production job resumes after 500 s suspended.
    assert_eq!(p.job_ended(s(800), 2).unwrap().1, vec![StartdAction::Resume { vm: 1, job: 2 }]);
    let (f, _) = p.job_ended(s(1800), 1).unwrap();
    assert_eq!((f.wall, f.suspended), (d(1500), d(500)));
}

#[test]
fn vms_share_the_slots_cpus() {
    // Two VMs on one CPU: two background jobs progress at half speed each.
    let mut p = StartdPilot::new(StartdSettings { slot_cpus: Some(1.0), ..settings(2) }, s(0), d(99_999)).unwrap();
    p.pilot_run(s(0)).unwrap();
    p.job_fetched(s(0), 0, Some((1, PROD))).unwrap();
    assert_eq!(rates(&p), vec![(0, 1, 1.0)]);
    p.pilot_run(s(300)).unwrap();
    p.job_fetched(s(300), 1, Some((2, PROD))).unwrap();
    assert_eq!(rates(&p), vec![(0, 1, 0.5), (1, 2, 0.5)]);
    // Four VMs on two CPUs, two foreground jobs: 1 each, background suspended.
    let mut q = StartdPilot::new(StartdSettings { slot_cpus: Some(2.0), ..settings(4) }, s(0), d(99_999)).unwrap();
    for (i, (job, kind)) in [(1, PROD), (2, ANAL), (3, ANAL), (4, PROD)].into_iter().enumerate() {
        let t = s(300 * i as u64);
        assert_eq!(q.pilot_run(t).unwrap(), StartdAction::RequestJob { vm: i, request: JobRequest::Any });
        q.job_fetched(t, i, Some((job, kind))).unwrap();
    }
    assert_eq!(rates(&q), vec![(0, 1, 0.0), (1, 2, 1.0), (2, 3, 1.0), (3, 4, 0.0)]);
}

#[test]
fn removal_requeues_or_kills_what_runs() {
    for (policy, kill) in [(OnRemoval::Requeue, false), (OnRemoval::End, true)] {
        let mut p = StartdPilot::new(StartdSettings { on_removal: policy, ..settings(3) }, s(100), d(3600)).unwrap();
        assert_eq!(p.removal_at(), s(3700));
        p.pilot_run(s(100)).unwrap();
        p.job_fetched(s(160), 0, Some((7, PROD))).unwrap();
        p.pilot_run(s(400)).unwrap();
        p.job_fetched(s(460), 1, Some((8, ANAL))).unwrap();
        p.pilot_run(s(700)).unwrap(); // VM 2 fetching when the batch system strikes
        let a = p.remove(s(3700)).unwrap();
        let (j7, j8) = if kill {
            (
                StartdAction::Kill { vm: 0, job: 7, suspended: d(3240) },
                StartdAction::Kill { vm: 1, job: 8, suspended: d(0) },
            )
        } else {
            (
                StartdAction::Requeue { vm: 0, job: 7, suspended: d(3240) },
                StartdAction::Requeue { vm: 1, job: 8, suspended: d(0) },
            )
        };
        assert_eq!(a, vec![j7, j8, StartdAction::CancelFetch { vm: 2 }]);
        assert!(p.is_removed() && p.rates().is_empty());
        assert_eq!(p.pilot_run(s(4000)).unwrap_err(), StartdError::Removed);
        assert_eq!(p.remove(s(4000)).unwrap_err(), StartdError::Removed);
    }
}

#[test]
fn pilot_runs_keep_a_fixed_rate_and_bad_calls_are_errors() {
    let mut p = StartdPilot::new(settings(1), s(0), d(99_999)).unwrap();
    assert_eq!(p.pilot_run(s(0)).unwrap(), StartdAction::RequestJob { vm: 0, request: JobRequest::Any });
    assert_eq!(p.pilot_run(s(299)).unwrap_err(), StartdError::EarlyPilotRun { now: s(299), next: s(300) });
    // A late call (at 1000 s) runs once and keeps the grid: next at 1200 s.
    assert_eq!(p.pilot_run(s(1000)).unwrap(), StartdAction::EmptyPilotRun);
    assert_eq!(p.next_pilot_run(), s(1200));
    assert_eq!(p.job_fetched(s(1000), 3, None).unwrap_err(), StartdError::NoSuchVm(3));
    p.job_fetched(s(1000), 0, Some((1, PROD))).unwrap();
    assert_eq!(p.job_fetched(s(1000), 0, None).unwrap_err(), StartdError::NotFetching(0));
    p.job_ended(s(1100), 0).unwrap();
    assert_eq!(p.job_ended(s(1100), 0).unwrap_err(), StartdError::NoJob(0));
    for bad in [
        StartdSettings { vms: 0, ..settings(1) },
        StartdSettings { pilot_interval: SimDuration::ZERO, ..settings(1) },
        StartdSettings { slot_cpus: Some(0.0), ..settings(1) },
    ] {
        let e = StartdPilot::new(bad, s(0), d(1)).unwrap_err();
        assert!(matches!(e, StartdError::BadSettings(_)), "{e}");
    }
    assert_eq!(StartdError::NoSuchVm(3).to_string(), "no VM 3 in this slot");
}

#[test]
fn lifetimes_are_drawn_from_the_distribution_passed_in() {
    let mut rng = RngStreams::new(7).stream("test/startd-lifetime");
    assert_eq!(draw_lifetime(&Distribution::Fixed(4.0 * 3600.0), &mut rng), d(14_400));
    let mean = (0..20_000)
        .map(|_| draw_lifetime(&Distribution::Exponential { mean: 7200.0 }, &mut rng).as_millis() as f64 / 1e3)
        .sum::<f64>()
        / 20_000.0;
    assert!((mean - 7200.0).abs() < 150.0, "{mean}");
}

#[test]
fn spf_closed_form_with_the_seed_numbers() {
    // x = 100 nodes, Tsw = 30 min, Tj = 2 h, tp' = tpw' = 1 min. GPF: 100 jobs per 150 min (the
    // seed's form); SPF after its first round: 100 jobs per 122 min per VM.
    let m = 60.0;
    let gpf = super::super::generic::gpf_throughput(100.0, 30.0 * m, 120.0 * m, m, m);
    let one = spf_throughput(100.0, 1, 1.0, m, m, 120.0 * m);
    assert_eq!(one.exact, 100.0 / (122.0 * m));
    assert_eq!(one.approx, 100.0 / (120.0 * m));
    // 49.18 jobs/h vs GPF's 40: 1.23 times as many (150/122).
    assert!((one.exact * 3600.0 - 49.180_327_868_852_46).abs() < 1e-9);
    assert!((one.exact / gpf.approx - 150.0 / 122.0).abs() < 1e-12);
    // Two VMs with a CPU each: 200 jobs per 122 min, 98.36 jobs/h, 2.46 times GPF.
    let two = spf_throughput(100.0, 2, 2.0, m, m, 120.0 * m);
    assert_eq!(two.exact, 200.0 / (122.0 * m));
    assert!((two.exact * 3600.0 - 98.360_655_737_704_92).abs() < 1e-9);
    // Two VMs sharing one CPU: each job takes 2 Tj, 200 per 242 min: 49.59 jobs/h.
    let shared = spf_throughput(100.0, 2, 1.0, m, m, 120.0 * m);
    assert_eq!(shared.exact, 200.0 / (242.0 * m));
    assert_eq!(shared.approx, 100.0 / (120.0 * m));
    // The wait for the next pilot run, interval 5 min: tp' = 1 + 2.5 min; 100 per 124.5 min.
    assert_eq!(spf_throughput(100.0, 1, 1.0, 3.5 * m, m, 120.0 * m).exact, 100.0 / (124.5 * m));
}
