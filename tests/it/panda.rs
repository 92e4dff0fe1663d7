//! The PanDA WMS end to end on the shipped PanDA quickstart: the job
//! life cycle as PanDA has it, data on the network, Harvester pilots, and the invariants.

use pilotsim::engine::SimDuration;
use pilotsim::panda::timeouts::JobStatus as PStatus;
use pilotsim::run;
use pilotsim::scenario;
use pilotsim::wms::panda::PandaWms;
use pilotsim::workload::JobStatus;

fn quickstart() -> run::Finished {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/panda_quickstart.ron");
    let loaded = scenario::load_file(&path).unwrap();
    let prepared = run::prepare(&loaded, &[]).unwrap();
    run::simulate(&prepared, 4, |_, _| {}).unwrap()
}

fn panda(f: &run::Finished) -> &PandaWms {
    let w = f.world.wms.iter().find(|w| w.name() == "panda").expect("a PanDA instance");
    let any: &dyn std::any::Any = w.as_ref();
    any.downcast_ref::<PandaWms>().expect("PandaWms")
}

#[test]
fn jobs_go_through_panda_states_in_order() {
    let f = quickstart();
    let p = panda(&f);
    let t = p.tables();
    let jobs = &f.world.core.jobs;
    assert!(t.jobs.len() > 3000, "{} jobs", t.jobs.len());
    let mut finished = 0;
    let mut via_assigned = 0;
    for j in &t.jobs {
        let x = &j.times;
        assert!(x.defined.is_some(), "every job is defined first");
        if j.status == PStatus::Finished {
            finished += 1;
            let seq = [x.defined, x.activated, x.starting, x.running, x.holding, x.transferring, x.end];
            assert!(seq.iter().all(Option::is_some), "finished job {} skipped a state: {x:?}", j.job);
            assert!(seq.windows(2).all(|w| w[0] <= w[1]), "job {} states out of order: {x:?}", j.job);
            assert_eq!(jobs[j.job as usize - 1].status, JobStatus::Done);
            // The payload ended when the pilot reported; the Adder's cycle (60 s) takes it on.
            let world_end = jobs[j.job as usize - 1].ended().expect("ended");
            assert_eq!(x.holding, Some(world_end), "job {}", j.job);
            let held = x.transferring.unwrap() - world_end;
            assert!(held > SimDuration::ZERO && held <= SimDuration::from_secs(60), "job {}: {held:?}", j.job);
            assert_eq!(x.transferring.unwrap().as_millis() % 60_000, 0, "on the Adder's tick");
        }
        if let Some(a) = x.assigned {
            via_assigned += 1;
            assert!(x.activated.is_none_or(|act| act >= a), "activated before its input arrived");
        }
    }
    assert!(finished > 3000, "{finished} finished");
    assert!(via_assigned > 100, "satellite jobs wait for their input: {via_assigned}");
}

#[test]
fn data_moves_over_the_links_and_outputs_reach_the_nucleus() {
    let f = quickstart();
    let p = panda(&f);
    assert!(p.data_counters().input_files_moved > 500, "{:?}", p.data_counters());
    assert!(p.data_counters().output_files_moved > 500, "{:?}", p.data_counters());
    assert_eq!(p.data_counters().no_route, 0, "every pair of sites has a link");
    let net = &f.world.core.network;
    assert_eq!(net.transfer_count() as u64, p.data_counters().input_files_moved + p.data_counters().output_files_moved);
    // Outputs of the MC jobs take space on BNL's disk: 1000 kB/event × 1000 events each.
    let bnl = f.world.core.storages.id("BNL_DATADISK").unwrap();
    let used = f.world.core.storages.get(bnl).unwrap().used;
    assert!(used > 15_000 * 1_000_000_000_000, "outputs stored at the nucleus: {used}");
}

#[test]
fn harvester_keeps_pilots_at_every_queue_and_shares_are_served() {
    let mut f = quickstart();
    let s = f.summary();
    assert_eq!(pilotsim::sim::check_invariants(&f.world), Vec::<String>::new());
    let p = &s.wms["panda"];
    for q in ["BNL", "BNL_SCORE", "AGLT2", "MWT2"] {
        assert!(p["queues"][q]["jobs_started"].as_u64().unwrap() > 100, "{q}: {}", p["queues"][q]);
    }
    // Shares of cores: the 8-core MC jobs hold most of them, the single-core analysis jobs
    // 1.4 % (8 % of the running jobs).
    for g in ["MC Simulation Full", "Reprocessing default", "User Analysis"] {
        let e = &s.entities[g];
        assert_eq!(e.share_unit, "cores");
        assert!(e.achieved_share.unwrap() > 0.01, "{g}: {e:?}");
    }
}

/// Harvester in push mode (`mapType` `OneToOne`, Harvester's default, every PQ of the quickstart)
/// makes a worker only for a job it takes (reference §8, "Loop"). Before, it kept
/// `nQueueLimitWorker` empty workers queued whatever the jobs: BNL_SCORE got 19 090 pilots,
/// 17 810 of them at cycles with no activated job, and 8.2 % of the started pilots ran a job.
#[test]
fn push_mode_harvester_makes_one_worker_per_job() {
    let mut f = quickstart();
    let s = f.summary();
    assert_eq!(pilotsim::sim::check_invariants(&f.world), Vec::<String>::new());
    let p = panda(&f);
    let t = p.tables();
    // Every worker got a job (`starting` when it was submitted), and a job one worker.
    let bound = t.jobs.iter().filter(|j| j.times.starting.is_some()).count() as u64;
    assert_eq!(s.pilots.submitted, bound, "{:?}", s.pilots);
    assert_eq!(p.harvester_counters().submitted, bound);
    // A started worker runs its job: no empty pilot.
    assert_eq!(s.pilots.empty, 0, "{:?}", s.pilots);
    assert_eq!(s.pilot_efficiency, Some(1.0));
    // BNL_SCORE's CE has exactly the workers of BNL_SCORE's jobs.
    let q = t.jobs.iter().filter(|j| j.times.starting.is_some() && j.queue == 1).count();
    let grid = &f.world.core.grid;
    let ce = grid.ces.iter().position(|c| c.name == "gridgk06.sdcc.bnl.gov").expect("BNL_SCORE's CE") as u32;
    let at_ce = grid.pilots.iter().filter(|x| x.ce == ce).count();
    assert_eq!(at_ce, q);
    assert!(q > 500 && q < 19_090, "{q} workers at BNL_SCORE");
    // A worker that never started failed its job, and JEDI retried the chunk.
    assert!(p.harvester_counters().lost_jobs <= s.pilots.never_started, "{:?} {:?}", p.harvester_counters(), s.pilots);
}

#[test]
fn panda_runs_are_byte_identical() {
    let a = quickstart();
    let b = quickstart();
    assert_eq!(a.meta.digest, b.meta.digest);
    assert_eq!(a.meta.events, b.meta.events);
}

#[test]
fn panda_charts_and_report_section_exist_for_panda_runs_only() {
    const PNG: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    const STEMS: [&str; 3] = ["queue_waits", "queue_lengths", "link_backlog"];
    let base = std::env::temp_dir().join(format!("pilotsim-it-panda-charts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let (panda_dir, dirac_dir) = (base.join("panda"), base.join("dirac"));
    quickstart().write(&panda_dir).unwrap();
    for stem in STEMS {
        let png = std::fs::read(panda_dir.join(format!("{stem}.png"))).unwrap();
        assert!(png.starts_with(&PNG) && png.len() > 10_000, "{stem}.png");
        let svg = std::fs::read_to_string(panda_dir.join(format!("{stem}.svg"))).unwrap();
        assert!(svg.contains("<svg") && svg.contains("panda_quickstart, seed 4"), "{stem}.svg");
    }
    let waits = std::fs::read_to_string(panda_dir.join("queue_waits.svg")).unwrap();
    for q in ["AGLT2", "BNL_SCORE", "MWT2", "n = 1557"] {
        assert!(waits.contains(q), "queue_waits names {q}");
    }
    let links = std::fs::read_to_string(panda_dir.join("link_backlog.svg")).unwrap();
    assert!(links.contains("BNL→MWT2") && links.contains("constant background not shown"));
    let share = std::fs::read_to_string(panda_dir.join("share_convergence.svg")).unwrap();
    assert!(share.contains("gshare targets are of HS06"), "the share chart says what PanDA's targets count");

    let html = pilotsim::report::html::render(&panda_dir).unwrap();
    assert!(html.contains("<h2>PanDA</h2>") && html.contains("<caption>PanDA queues</caption>"));
    assert!(
        html.contains("<tr><td>MWT2</td><td class=\"num\">1\u{202F}557</td><td class=\"num\">4.9</td>"),
        "per-PQ row"
    );
    assert!(html.contains("<caption>Harvester</caption>") && html.contains("<td>input files moved</td>"));
    let at = |name: &str| html.find(&format!("<span class=\"file\">{name}</span>")).unwrap_or_else(|| panic!("{name}"));
    assert!(at("queue_waits.svg") < at("queue_lengths.svg") && at("link_backlog.svg") < at("share_convergence.svg"));
    assert_eq!(html.matches("<figure>").count(), 7, "each chart once (the analysis users' waits too)");

    let p = run::prepare(&scenario::quickstart(), &[]).unwrap();
    run::simulate(&p, 1, |_, _| {}).unwrap().write(&dirac_dir).unwrap();
    for stem in STEMS {
        for ext in ["png", "svg"] {
            assert!(!dirac_dir.join(format!("{stem}.{ext}")).exists(), "a DIRAC run has no {stem}.{ext}");
        }
    }
    assert!(!pilotsim::report::html::render(&dirac_dir).unwrap().contains("<h2>PanDA</h2>"));
    std::fs::remove_dir_all(&base).unwrap();
}

/// The shipped replay scenario (the 100 records of `jan_100_BNL.csv` on BNL's queue), its text
/// edited by `text` (the CSV path stays relative to `scenarios/`) and its records by `records`.
fn replay(text: impl Fn(String) -> String, records: impl Fn(&mut Vec<scenario::panda::JobRecord>)) -> run::Finished {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let src = std::fs::read_to_string(dir.join("panda_replay_bnl.ron")).unwrap();
    let mut loaded = scenario::load_str_in(&text(src), "panda_replay_bnl.ron", &dir).unwrap();
    records(&mut loaded.scenario.panda.as_mut().unwrap().replay[0].records);
    let prepared = run::prepare(&loaded, &[]).unwrap();
    run::simulate(&prepared, 24, |_, _| {}).unwrap()
}

#[test]
fn replayed_records_run_for_their_recorded_time_and_end_as_recorded() {
    // Every 10th record failed, records 5 and 6 cancelled and closed (skipped).
    let mut f = replay(
        |s| s,
        |recs| {
            for (k, r) in recs.iter_mut().enumerate() {
                r.jobstatus = match k {
                    5 => "cancelled",
                    6 => "closed",
                    k if k % 10 == 3 => "failed",
                    _ => "finished",
                }
                .into();
            }
        },
    );
    assert_eq!(pilotsim::sim::check_invariants(&f.world), Vec::<String>::new());
    let recs = f.world.scenario.panda.as_ref().unwrap().replay[0].records.clone();
    let pandaids = recorded_pandaids(&mut f);
    let s = f.summary();
    let p = panda(&f);
    let t = p.tables();
    let jobs = &f.world.core.jobs;
    // Counts conserved: 98 replayed (2 skipped), each once, all final at the end.
    assert_eq!(t.jobs.len(), 98);
    let (mut finished, mut failed) = (0, 0);
    let replay_task = t.tasks.len() as u32 - 1;
    for j in &t.jobs {
        assert_eq!(j.task, replay_task, "one synthetic task");
        let world = &jobs[j.job as usize - 1];
        let (m, e) = (world.matched().unwrap(), world.ended().unwrap());
        // The record behind it: the jobs.parquet column `recorded_pandaid`.
        let pandaid = pandaids[j.job as usize - 1].expect("a replayed job");
        let rec = recs.iter().find(|r| r.pandaid == pandaid).expect("a record");
        assert_eq!((e - m).as_secs_f64(), rec.wall_s().unwrap(), "PandaID {pandaid} runs its recorded walltime");
        assert_eq!(j.cores, rec.corecount);
        match rec.jobstatus.as_str() {
            "finished" => {
                finished += 1;
                assert_eq!((j.status, world.status), (PStatus::Finished, JobStatus::Done), "PandaID {pandaid}");
                assert!(j.times.transferring.is_some(), "through transferring to the nucleus");
            }
            "failed" => {
                failed += 1;
                assert_eq!((j.status, world.status), (PStatus::Failed, JobStatus::Failed), "PandaID {pandaid}");
            }
            s => panic!("a {s} record was replayed"),
        }
        assert!(j.times.assigned.is_none() && j.times.activated == j.times.defined, "direct input: activated at once");
    }
    assert_eq!((finished, failed), (88, 10));
    let task = &t.tasks[replay_task as usize];
    assert_eq!((task.n_jobs, task.finished, task.failed, task.status.as_str()), (98, 88, 10, "done"));
    assert!(p.record().decisions.is_empty(), "no brokerage: the records placed the jobs");
    let r = &s.wms["panda"]["replay"]["bnl_january"];
    assert_eq!((r["records"].as_u64(), r["skipped"].as_u64(), r["replayed"].as_u64()), (Some(100), Some(2), Some(98)));
    assert_eq!((r["jobs"]["finished"].as_u64(), r["jobs"]["failed"].as_u64()), (Some(88), Some(10)));
    assert_eq!(r["walltime_s"]["recorded"]["p50"], r["walltime_s"]["simulated"]["p50"]);
    let (rec_q, sim_q) = (&r["job_queuetime_s"]["recorded"]["p50"], &r["job_queuetime_s"]["simulated"]["p50"]);
    assert!(rec_q.as_f64().unwrap() > sim_q.as_f64().unwrap(), "BNL alone waits less than the real one: {r}");
}

/// The `recorded_pandaid` column of jobs.parquet.
fn recorded_pandaids(f: &mut run::Finished) -> Vec<Option<u64>> {
    let data = f.data();
    let col = data.job_columns.iter().find(|c| c.name == "recorded_pandaid").expect("the column");
    match &col.values {
        pilotsim::metrics::ExtraValues::U64(v) => v.clone(),
        other => panic!("recorded_pandaid is {other:?}"),
    }
}

#[test]
fn replayed_records_stage_in_over_the_link_and_their_outputs_go_to_the_nucleus() {
    // A second site, AGLT2, linked to BNL: records 0–9 copy their input from there; the
    // stream's outputs go to the AGLT2 nucleus.
    let mut f = replay(
        |s| {
            s.replace(
                "    ],\n    storages",
                "        Site(name: \"AGLT2\", ces: [Ce(name: \"gate01.aglt2.org\", slots: 10)]),\n    ],\n    storages",
            )
            .replace(
                "    storages: [",
                "    network: [Link(from: \"AGLT2\", to: \"BNL\", bandwidth_mbps: 1000, latency_ms: 20),\n              \
                 Link(from: \"BNL\", to: \"AGLT2\", bandwidth_mbps: 1000, latency_ms: 20)],\n    storages: [\n        \
                 Storage(name: \"AGLT2_DATADISK\", site: \"AGLT2\", total_tb: Some(8000), used_tb: 6000),",
            )
            .replace(
                "nuclei: [(site: \"BNL\"",
                "nuclei: [(site: \"AGLT2\", output_storages: [\"AGLT2_DATADISK\"]), (site: \"BNL\"",
            )
            .replace("nucleus: Some(\"BNL\")", "nucleus: Some(\"AGLT2\")")
        },
        |recs| {
            for r in &mut recs[..10] {
                (r.transfertype, r.sourcesite) = ("copy".into(), "AGLT2".into());
            }
        },
    );
    assert_eq!(pilotsim::sim::check_invariants(&f.world), Vec::<String>::new());
    let p = panda(&f);
    let staged = p.tables().jobs.iter().filter(|j| j.times.assigned.is_some()).count();
    assert_eq!(staged, 10, "the 10 copied records wait assigned for their input");
    let files: u64 = f.world.scenario.panda.as_ref().unwrap().replay[0].records[..10]
        .iter()
        .map(|r| r.ninputdatafiles.unwrap() as u64)
        .sum();
    assert_eq!(p.data_counters().input_files_moved, files);
    assert_eq!(p.data_counters().output_files_moved, 100, "every output travels BNL → AGLT2");
    assert_eq!(p.data_counters().no_route, 0);
    assert!(p.tables().jobs.iter().all(|j| j.status == PStatus::Finished));
    // explain says a replayed job was placed by its record.
    let task = p.tables().tasks.len();
    let dir = std::env::temp_dir().join(format!("pilotsim-it-replay-{}", std::process::id()));
    f.write(&dir).unwrap();
    // Through the library (the binary's path is shared with other builds of the target dir).
    let tables = pilotsim::report::explain::RunTables::open(&dir).unwrap();
    let explain = |job: Option<u32>, task: Option<u32>| {
        let q = pilotsim::report::explain::Query { job, task, queue: None };
        pilotsim::report::explain::render_text(&tables.explain(&q).unwrap().unwrap())
    };
    let job = explain(Some(1), None);
    assert!(job.contains("Replayed from a job record (PandaID 6461584839)"), "{job}");
    let t = explain(None, Some(task as u32));
    assert!(t.contains(&format!("task {task} — replay")) && t.contains("100 jobs: 100 finished"), "{t}");
    std::fs::remove_dir_all(&dir).unwrap();
}
