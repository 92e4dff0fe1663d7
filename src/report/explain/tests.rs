//! The explain logic on a small hand-made pair of tables: a production task (task brokerage,
//! a placing job brokerage, a pending one, one that placed nothing), an analysis task whose
//! first loop skipped the PQ a later loop took, and a DIRAC job.

use super::*;
use crate::metrics::columns::Data;

fn run() -> RunIdent {
    RunIdent { scenario: "hand".into(), seed: 7 }
}

fn s(v: &[Option<&str>]) -> Vec<Option<String>> {
    v.iter().map(|x| x.map(String::from)).collect()
}

/// The table of `cols`, written by our Parquet writer and read back by our reader (so these
/// tests read what `open` would).
fn table(cols: Vec<(&str, Data)>) -> Table {
    let cols: Vec<(String, Data)> = cols.into_iter().map(|(n, d)| (n.to_string(), d)).collect();
    let bytes = crate::metrics::parquet::write_data(&cols, &[]).unwrap();
    let names: Vec<&str> = cols.iter().map(|(n, _)| n.as_str()).collect();
    let t = crate::metrics::parquet::read(&bytes, &names).unwrap();
    assert_eq!(t.columns, cols, "read back as written");
    t
}

fn all<T>(v: Vec<T>) -> Vec<Option<T>> {
    v.into_iter().map(Some).collect()
}

fn jobs() -> Table {
    let f = |v: &[Option<f64>]| Data::F64(v.to_vec());
    let cols = vec![
        ("job_id", Data::U32(all(vec![1u32, 2, 3, 4]))),
        ("site", Data::Str(s(&[Some("BNL"), Some("AGLT2"), Some("MWT2"), Some("CERN")]))),
        ("ce", Data::Str(s(&[Some("ce-bnl"), None, Some("ce-mwt2"), Some("ce-cern")]))),
        ("pilot_id", Data::U32(vec![Some(7u32), None, Some(9), Some(1)])),
        ("wms", Data::Str(s(&[Some("panda"), Some("panda"), Some("panda"), Some("dirac")]))),
        ("panda_status", Data::Str(s(&[Some("finished"), Some("activated"), Some("failed"), None]))),
        ("jedi_task_id", Data::U32(vec![Some(1u32), Some(1), Some(2), None])),
        ("computingsite", Data::Str(s(&[Some("BNL"), Some("AGLT2"), Some("MWT2"), None]))),
        ("gshare", Data::Str(s(&[Some("MC"), Some("MC"), Some("User Analysis"), None]))),
        ("attempt_nr", Data::U32(vec![Some(1u32), Some(2), Some(1), None])),
        ("brokerage_id", Data::U32(vec![Some(1u32), Some(1), Some(3), None])),
        ("defined_s", f(&[Some(60.0), Some(60.0), Some(600.0), None])),
        ("assigned_s", f(&[None, Some(60.0), Some(600.0), None])),
        ("activated_s", f(&[Some(60.0), Some(120.0), Some(660.0), None])),
        ("starting_s", f(&[Some(11_400.0), None, Some(700.0), None])),
        ("running_s", f(&[Some(11_400.5), None, Some(700.0), None])),
        ("transferring_s", f(&[Some(20_000.0), None, None, None])),
        ("final_s", f(&[Some(20_100.0), None, Some(900.0), None])),
        ("status", Data::Str(s(&[Some("Done"), Some("Waiting"), Some("Failed"), Some("Done")]))),
    ];
    table(cols)
}

/// `(id, time, kind, task, candidate, verdict, stage, reason, weight, jobs, pending)`.
type B<'a> = (u32, f64, &'a str, u32, &'a str, &'a str, &'a str, &'a str, Option<f64>, u32, Option<&'a str>);

const ROWS: &[B] = &[
    (0, 0.0, "task", 1, "CERN", "skipped", "Space", "disk full", None, 0, None),
    (0, 0.0, "task", 1, "BNL", "chosen", "", "", Some(5.5), 0, None),
    (1, 60.0, "job", 1, "MWT2", "skipped", "CoreCount", "due to core mismatch site:1 <> task:8", None, 0, None),
    (1, 60.0, "job", 1, "BNL", "chosen", "", "", Some(20.0), 1, None),
    (1, 60.0, "job", 1, "AGLT2", "chosen", "", "", Some(0.05), 1, None),
    (1, 60.0, "job", 1, "BNL_SCORE", "candidate", "", "", Some(0.3), 0, None),
    (2, 120.0, "job", 1, "MWT2", "skipped", "CoreCount", "core mismatch", None, 0, Some("no candidate PQ")),
    (2, 120.0, "job", 1, "BNL", "skipped", "Final", "over cap", None, 0, Some("no candidate PQ")),
    (2, 120.0, "job", 1, "AGLT2", "skipped", "Final", "over cap", None, 0, Some("no candidate PQ")),
    (3, 600.0, "analysis", 2, "MWT2", "skipped", "loop 0", "input unavailable", None, 0, None),
    (3, 600.0, "analysis", 2, "MWT2", "chosen", "", "", Some(21.0), 1, None),
    (4, 11_400.0, "job", 1, "MWT2", "skipped", "CoreCount", "core mismatch again", None, 0, None),
    (4, 11_400.0, "job", 1, "AGLT2", "candidate", "", "", Some(0.4), 0, None),
];

fn brokerage(rows: &[B]) -> Table {
    let col_u =
        |name: &'static str, f: &dyn Fn(&B) -> u32| (name, Data::U32(rows.iter().map(|r| Some(f(r))).collect()));
    let col_s =
        |name: &'static str, f: &dyn Fn(&B) -> String| (name, Data::Str(rows.iter().map(|r| Some(f(r))).collect()));
    let cols = vec![
        col_u("brokerage_id", &|r| r.0),
        ("time_s", Data::F64(rows.iter().map(|r| Some(r.1)).collect())),
        col_s("kind", &|r| r.2.into()),
        col_u("jedi_task_id", &|r| r.3),
        col_s("candidate", &|r| r.4.into()),
        col_s("verdict", &|r| r.5.into()),
        col_s("stage", &|r| r.6.into()),
        col_s("reason", &|r| r.7.into()),
        ("temporary", Data::Bool(rows.iter().map(|r| Some(r.6 == "Final")).collect())),
        ("weight", Data::F64(rows.iter().map(|r| r.8).collect())),
        col_u("jobs", &|r| r.9),
        ("pending", Data::Str(rows.iter().map(|r| r.10.map(String::from)).collect())),
    ];
    table(cols)
}

fn tables() -> RunTables {
    RunTables::from_frames(run(), jobs(), brokerage(ROWS)).unwrap()
}

fn ask(job: Option<u32>, task: Option<u32>, queue: Option<&str>) -> std::result::Result<Explanation, NotFound> {
    tables().explain(&Query { job, task, queue: queue.map(String::from) }).unwrap()
}

fn names(w: &[Weighed]) -> Vec<&str> {
    w.iter().map(|x| x.name.as_str()).collect()
}

#[test]
fn a_production_job_shows_its_life_its_placement_and_its_task_brokerage() {
    let Ok(Explanation::Job(e)) = ask(Some(1), None, None) else { panic!("job 1 is found") };
    assert_eq!((e.job.jedi_task_id, e.job.attempt_nr, e.job.computingsite.as_str()), (1, Some(1), "BNL"));
    let states: Vec<&str> = e.job.states.iter().map(|s| s.status.as_str()).collect();
    assert_eq!(states, ["defined", "activated", "starting", "running", "transferring", "finished"]);
    let d = e.placement.as_ref().unwrap();
    assert_eq!((d.brokerage_id, d.kind.as_str(), d.jobs), (1, "job", 2));
    assert_eq!(names(&d.chosen), ["BNL", "AGLT2"], "highest weight first");
    assert_eq!(names(&d.candidates), ["BNL_SCORE"]);
    assert_eq!(d.skipped.len(), 1);
    assert_eq!((d.skipped[0].name.as_str(), d.skipped[0].stage.as_str()), ("MWT2", "CoreCount"));
    assert_eq!(e.task_brokerage.len(), 1);
    let t = &e.task_brokerage[0];
    assert_eq!(names(&t.chosen), ["BNL"]);
    assert_eq!((t.skipped[0].name.as_str(), t.skipped[0].reason.as_str()), ("CERN", "disk full"));

    let text = render_text(&Explanation::Job(e));
    assert!(text.contains("  running       03:10  (11400.5 s)"), "{text}");
    assert!(text.contains("chosen     BNL        weight 20    1 job  <- this job"), "{text}");
    assert!(text.contains("skipped    MWT2       CoreCount: due to core mismatch site:1 <> task:8"), "{text}");
    assert!(text.contains("#0 at 00:00 (0 s): nucleus BNL (weight 5.5)"), "{text}");
}

#[test]
fn an_analysis_job_has_no_task_brokerage_and_keeps_the_overridden_skip() {
    let Ok(Explanation::Job(e)) = ask(Some(3), None, None) else { panic!("job 3 is found") };
    assert!(e.task_brokerage.is_empty());
    let d = e.placement.unwrap();
    assert_eq!(d.kind, "analysis");
    assert_eq!(names(&d.chosen), ["MWT2"]);
    assert!(d.skipped[0].weighed_later, "loop 0's skip was overridden by a later loop");
    assert_eq!(e.job.states.last().unwrap().status, "failed", "final_s is named after the final status");
}

#[test]
fn jobs_not_in_the_run_or_not_pandas_are_not_found() {
    let nf = ask(Some(99), None, None).unwrap_err();
    assert_eq!(nf.message, "job 99 is not in this run (job ids go from 1 to 4)");
    let nf = ask(Some(4), None, None).unwrap_err();
    assert!(nf.message.contains("not a PanDA job") && nf.message.contains("dirac"), "{}", nf.message);
    let nf = ask(None, Some(5), None).unwrap_err();
    assert!(nf.message.contains("task 5 is not in this run (task ids go from 1 to 2)"), "{}", nf.message);
    let nf = ask(Some(1), None, Some("NOPE")).unwrap_err();
    assert!(nf.message.contains("NOPE is not a PanDA queue of this run (its PQs: AGLT2, BNL, BNL_SCORE, MWT2)"));
}

#[test]
fn a_task_is_summarised_per_queue_with_its_pending_cycles() {
    let Ok(Explanation::Task(t)) = ask(None, Some(1), None) else { panic!("task 1 is found") };
    assert_eq!(t.kind, "production");
    assert_eq!(t.jobs_by_status, BTreeMap::from([("activated".to_string(), 1), ("finished".to_string(), 1)]));
    assert_eq!(t.retries, 1);
    assert_eq!(t.task_brokerage.len(), 1);
    assert_eq!(t.decisions.iter().map(|d| d.brokerage_id).collect::<Vec<_>>(), [1, 2, 4]);
    let q = |name: &str| t.queues.iter().find(|q| q.queue == name).unwrap();
    assert_eq!((q("BNL").jobs, q("BNL").chosen, q("BNL").candidate), (1, 1, 0));
    assert_eq!(q("BNL").skipped, [StageCount { stage: "Final".into(), count: 1 }]);
    assert_eq!((q("AGLT2").chosen, q("AGLT2").candidate), (1, 1));
    assert_eq!(q("MWT2").skipped, [StageCount { stage: "CoreCount".into(), count: 3 }]);
    assert_eq!(q("MWT2").last_skip.as_ref().unwrap().reason, "core mismatch again");
    assert_eq!(q("BNL_SCORE").absent, 2);
    assert_eq!(t.queues[0].queue, "AGLT2", "most jobs first, then by name");

    assert_eq!(t.pending.len(), 2);
    let p = &t.pending[0];
    assert!(p.recorded);
    assert_eq!((p.reason.as_str(), p.cycles, p.first_s), ("no candidate PQ", 1, 120.0));
    let blocked: Vec<(&str, Vec<&str>)> = p
        .blocked_by
        .iter()
        .map(|b| (b.stage.as_str(), b.candidates.iter().map(|c| c.name.as_str()).collect()))
        .collect();
    assert_eq!(blocked, [("CoreCount", vec!["MWT2"]), ("Final", vec!["AGLT2", "BNL"])]);
    assert!(!t.pending[1].recorded);
    assert_eq!((t.pending[1].reason.as_str(), t.pending[1].first_s), (NOTHING_PLACED, 11_400.0));

    let text = render_text(&Explanation::Task(t));
    assert!(text.contains("Job brokerage: 3 decisions: 1 placed 2 jobs, 1 pending, 1 placed nothing"), "{text}");
    assert!(text.contains("Pending (job brokerage): 1 cycle at 00:02 (120 s): no candidate PQ"), "{text}");
    assert!(text.contains("  Final skipped AGLT2 (1), BNL (1)"), "{text}");
}

#[test]
fn one_queue_says_plainly_how_it_came_out() {
    let verdicts = |job: Option<u32>, task: Option<u32>, queue: &str| match ask(job, task, Some(queue)) {
        Ok(Explanation::Queue(q)) => q,
        other => panic!("{other:?}"),
    };
    let q = verdicts(Some(1), None, "MWT2");
    assert_eq!(q.verdicts.len(), 1);
    let v = &q.verdicts[0];
    assert!(matches!(&v.outcome, Outcome::Skipped { stage, .. } if stage == "CoreCount"));
    assert_eq!(
        v.sentence,
        "MWT2 was skipped at 00:01 (60 s) by CoreCount: due to core mismatch site:1 <> task:8 (job brokerage #1 of task 1)"
    );
    let v = &verdicts(Some(1), None, "BNL_SCORE").verdicts[0];
    assert_eq!(v.outcome, Outcome::Candidate { weight: Some(0.3) });
    assert!(
        v.sentence.contains("a candidate at 00:01 (60 s) with weight 0.3 but got no jobs: the site picker drew BNL")
    );
    let v = &verdicts(Some(3), None, "MWT2").verdicts[0];
    assert_eq!(v.outcome, Outcome::Chosen { weight: Some(21.0), jobs: 1 });
    assert_eq!(v.earlier_skips.len(), 1, "loop 0's skip is told");
    assert!(v.sentence.contains("loop 0 had skipped it first (input unavailable), a later loop took it back"));
    assert_eq!(verdicts(Some(3), None, "BNL").verdicts[0].outcome, Outcome::Absent);

    // A task: one verdict per PQ brokerage; the whole run: the tally only.
    let q = verdicts(None, Some(1), "BNL");
    assert_eq!(q.verdicts.len(), 3);
    assert!(
        q.verdicts[1].sentence.ends_with("; the decision chose nothing: no candidate PQ"),
        "{}",
        q.verdicts[1].sentence
    );
    assert!(matches!(q.verdicts[1].outcome, Outcome::Skipped { temporary: true, .. }));
    let q = verdicts(None, None, "MWT2");
    assert!(q.verdicts.is_empty());
    assert_eq!((q.tally.decisions, q.tally.chosen, q.tally.jobs, q.jobs_here), (4, 1, 1, 1));
    assert_eq!(q.tally.skipped, [StageCount { stage: "CoreCount".into(), count: 3 }]);
}

#[test]
fn json_names_what_it_explains() {
    let e = ask(Some(1), None, Some("MWT2")).unwrap();
    let v = serde_json::to_value(&e).unwrap();
    assert_eq!(v["explains"], "queue");
    assert_eq!(v["scope"]["of"], "job");
    assert_eq!(v["verdicts"][0]["verdict"], "skipped");
    assert_eq!(v["verdicts"][0]["stage"], "CoreCount");
    let v = serde_json::to_value(ask(Some(1), None, None).unwrap()).unwrap();
    assert_eq!(v["explains"], "job");
    assert_eq!(v["placement"]["chosen"][0]["weight"], 20.0);
}

#[test]
fn tables_without_the_panda_columns_are_refused() {
    let mut jobs = jobs();
    jobs.columns.retain(|(n, _)| n != "brokerage_id");
    let err = RunTables::from_frames(run(), jobs, brokerage(ROWS)).err().unwrap().to_string();
    assert!(err.contains("jobs.parquet has no column brokerage_id"), "{err}");
}

#[test]
fn times_and_weights_read_as_operators_write_them() {
    assert_eq!(hours_minutes(11_400.0), "03:10");
    assert_eq!(hours_minutes(90_059.0), "25:00");
    assert_eq!(hours_minutes(59.9), "00:00");
    assert_eq!(text::weight(Some(5.500000000000001)), "5.5");
    assert_eq!(text::weight(Some(0.000011000000000000001)), "1.1e-5");
    assert_eq!(text::weight(Some(0.7285714285714285)), "0.7286");
    assert_eq!(text::weight(Some(520.0)), "520");
    assert_eq!(text::secs(102.897), "102.897 s");
}
