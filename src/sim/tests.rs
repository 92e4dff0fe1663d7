//! Tests of whole runs on small scenarios.

use super::*;
use crate::scenario::parse;

#[test]
fn the_batch_system_kills_a_job_at_the_pilots_walltime() {
    // CPUTime 400000 is above the seed's last segment (300000), so a pilot with 349700
    // CPU seconds left takes the job but cannot finish it: killed at 350000 s, Failed.
    let s = parse(
        r#"Scenario(name: "walltime", duration_s: 400000, output: (warmup_s: 10),
            sites: [Site(name: "S", ces: [Ce(name: "ce", slots: 1, cpu_power: 1.0, max_walltime_s: 350000,
                   pilot_wait: Fixed(0))])],
            dirac: (groups: [(name: "g", properties: ["JOB_SHARING"])],
                    director: (private_pilot_fraction: 0.0)),
            workload: [JobStream(name: "long", owner: "u", group: "g", count: 1, arrival: Burst(at_s: 0),
                       cpu_work: Fixed(400000), cpu_time: 400000)])"#,
        "t",
    )
    .unwrap();
    assert_eq!(crate::scenario::validate(&s), vec![]);
    let w = run(&s, 1, |_, _| {}).unwrap();
    assert_eq!(check_invariants(&w), Vec::<String>::new());
    let job = &w.core.jobs[0];
    assert_eq!(job.status, JobStatus::Failed);
    let pilot = w.core.grid.pilot(job.pilot().unwrap());
    let limit = pilot.started().unwrap() + SimDuration::from_secs(350_000);
    assert_eq!(job.ended(), Some(limit));
    assert_eq!(pilot.ended(), Some(limit), "the pilot ends at its walltime, not later");
}

#[test]
fn an_unknown_group_is_an_error_not_a_panic() {
    // A workload stream whose group is not in `dirac.groups`, in a scenario that has not gone
    // through `validate`: the DIRAC setup must refuse it, not panic.
    let mut s = parse(crate::scenario::QUICKSTART, "q").unwrap();
    s.workload[1].group = "nobody".into();
    let problems = run(&s, 1, |_, _| {}).err().expect("refused");
    assert!(
        problems.iter().any(|p| p.path == "workload[1].group" && p.message.starts_with("unknown group \"nobody\"")),
        "{problems:?}"
    );
}
