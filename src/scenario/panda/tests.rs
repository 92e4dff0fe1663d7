//! Tests of the `panda` section: the example scenario under tests/data, validation paths,
//! round trip, variants, replay CSV errors, and the CRIC import (inline and real files).

use std::path::PathBuf;

use super::*;
use crate::grid::config::StorageKind;
use crate::scenario::cric::{self, Form, Options};
use crate::scenario::{LoadError, Scenario, load_file, parse, validate, warnings};
use crate::workload::config::Arrival;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn example() -> Scenario {
    load_file(&root().join("tests/data/panda_example.ron")).unwrap().scenario
}

fn panda(s: &mut Scenario) -> &mut PandaConfig {
    s.panda.as_mut().unwrap()
}

fn problems_of(f: impl Fn(&mut Scenario)) -> Vec<crate::scenario::Problem> {
    let mut s = example();
    f(&mut s);
    validate(&s)
}

fn has(f: impl Fn(&mut Scenario), path: &str) -> bool {
    let p = problems_of(f);
    let ok = p.iter().any(|x| x.path == path);
    if !ok {
        eprintln!("no problem at {path}: {p:?}");
    }
    ok
}

#[test]
fn the_example_with_dirac_and_panda_validates() {
    let s = example();
    assert_eq!(validate(&s), vec![]);
    let p = s.panda.as_ref().unwrap();
    assert_eq!(p.queues.len(), 3);
    assert_eq!(p.replay[0].records.len(), 100, "jan_100_BNL.csv");
    assert_eq!(p.replay[0].records[0].pandaid, 6486070333);
    assert_eq!(p.queue("BNL").unwrap().cores(), 8);
    assert_eq!(p.queue("AGLT2").unwrap().corepower, 10.0, "PanDA's assumed corepower");
    assert_eq!(s.storages[2].write_wan, crate::grid::config::StorageStatus::Test);
    let w = warnings(&s);
    assert!(w.iter().all(|w| !w.message.contains("not simulated")), "both WMSs and the replay run: {w:?}");
    assert!(w.iter().all(|w| !w.path.starts_with("panda.replay")), "every record is finished and direct: {w:?}");
    // The example's pull queue has maxWorkers; defaults are Harvester's.
    assert_eq!(p.queues[2].harvester, crate::panda::harvester::config::HarvesterQueueConfig::default());
    assert_eq!(p.harvester.max_new_workers, Some(500));
    assert_eq!(p.harvester.sleep_time, 60);
    // `--set` keeps the records read from the file.
    let set = crate::scenario::overrides::apply(&s, &["panda.queues[BNL].maxrss=8000".to_string()]).unwrap();
    let q = set.panda.as_ref().unwrap();
    assert_eq!((q.queues[0].maxrss, q.replay[0].records.len()), (8000, 100));
}

#[test]
fn a_full_panda_section_round_trips_through_ron() {
    let s = example();
    let mut p = s.panda.clone().unwrap();
    let text = ron::ser::to_string_pretty(&p, ron::ser::PrettyConfig::new()).unwrap();
    let back: PandaConfig = ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
        .from_str(&text)
        .unwrap();
    for r in &mut p.replay {
        r.records.clear(); // read from the file, not written
    }
    assert_eq!(back, p);
    // And the whole scenario.
    let whole = ron::ser::to_string_pretty(&s, ron::ser::PrettyConfig::new()).unwrap();
    let again = parse(&whole, "x").unwrap();
    assert_eq!(again.storages, s.storages);
    assert_eq!(again.panda.unwrap().queues, s.panda.unwrap().queues);
}

#[test]
fn the_variant_sets_every_module_and_an_override_wins() {
    use crate::panda::job_broker::JobBrokerVariant;
    use crate::panda::network::NetworkVariant;
    let mut c = PandaConfig::default();
    let r = c.rules();
    assert_eq!((r.job_broker, r.network, r.arch), (JobBrokerVariant::Seed, NetworkVariant::Seed, ArchVariant::Seed));
    assert_eq!(r.harvester, AdjusterVariant::Reference);
    c.variant = PandaVariant::PandaServer;
    let r = c.rules();
    assert_eq!(r.task_broker, TaskBrokerVariant::PandaServer);
    assert_eq!((r.timeouts, r.harvester), (TimeoutVariant::PandaServer, AdjusterVariant::HarvesterHead));
    c.variants.arch = Some(ArchVariant::Seed);
    c.variants.job_broker = Some(JobBrokerVariant::Seed);
    let r = c.rules();
    assert_eq!(r.arch, ArchVariant::Seed);
    assert_eq!(r.network, NetworkVariant::PandaServer, "the network follows the switch, not the job broker");
    assert_eq!(c.job_broker_params().variant, JobBrokerVariant::Seed);
    assert_eq!(c.job_broker_params().network_variant, NetworkVariant::PandaServer);
    assert_eq!(c.anal_broker_params().variant, AnalBrokerVariant::PandaServer);
    assert_eq!(c.network_settings().variant, NetworkVariant::PandaServer);
    assert_eq!(c.timeout_params().variant, TimeoutVariant::PandaServer);
    // The example overrides the job broker and the network.
    let e = example();
    let r = e.panda.as_ref().unwrap().rules();
    assert_eq!(
        (r.job_broker, r.network, r.task_broker),
        (JobBrokerVariant::PandaServer, NetworkVariant::PandaServer, TaskBrokerVariant::Seed)
    );
}

/// `panda.variants.network` reaches job brokerage (through `job_broker_params`, the one path of
/// the network settings), and the job broker's variant does not choose the network rules. Two
/// satellites of nucleus NUC with `NW_ACTIVE`: FULL has exactly `NQUEUED_SAT_CAP` = 150 files
/// queued (seed: not over the cap, kept; code: `>=`, skipped), FAST has only a 1 h FTS value of
/// 500 Mbps (seed: throughput weight 2.0; code: no 1 w value, so closeness 7.7 → 1.3).
#[test]
fn only_the_network_variant_decides_the_network_rules() {
    use crate::panda::job_broker::{BrokerQueue, BrokerTask, JobBrokerVariant, JobCounts, NucleusInfo, broker};
    use crate::panda::network::{Link, LinkMetrics, NetworkVariant};
    let nucleus = NucleusInfo { name: "NUC".into(), output_endpoint: "NUC_DATADISK".into(), ..Default::default() };
    let task = BrokerTask { nucleus: Some(nucleus), ..BrokerTask::default() };
    let sat = |name: &str, m: LinkMetrics| BrokerQueue {
        name: name.into(),
        counts: JobCounts { running: 10, ..JobCounts::default() },
        output_storage_site: Some(format!("{name}_SITE")),
        link: Link::Satellite(m),
        ..BrokerQueue::default()
    };
    let queues = [
        sat("FULL", LinkMetrics { queued_files: Some(150), ..Default::default() }),
        sat("FAST", LinkMetrics { mbps_1h: Some(500.0), ..Default::default() }),
    ];
    // (FULL kept, FAST's throughput weight)
    let decide = |c: &PandaConfig| {
        let r = broker(&task, &queues, &c.job_broker_params());
        let fast = r.candidates().iter().find(|x| x.queue == 1).and_then(|x| x.terms.network);
        (r.why(0).is_none(), fast.map(|w| w.throughput))
    };
    let is_seed = |d: (bool, Option<f64>)| d == (true, Some(2.0));
    let is_code = |d: (bool, Option<f64>)| !d.0 && d.1.is_some_and(|t| (t - 1.3).abs() < 1e-12);
    let mut c = PandaConfig::default();
    c.gdpconfig.job_broker.nw_active = true;
    assert!(is_seed(decide(&c)), "{:?}", decide(&c));
    c.variants.network = Some(NetworkVariant::PandaServer);
    assert!(is_code(decide(&c)), "only variants.network set: {:?}", decide(&c));
    c.variants = PandaVariants { job_broker: Some(JobBrokerVariant::PandaServer), ..PandaVariants::default() };
    assert!(is_seed(decide(&c)), "only variants.job_broker set: {:?}", decide(&c));
    c.variants = PandaVariants::default();
    c.variant = PandaVariant::PandaServer;
    assert!(is_code(decide(&c)), "the switch: {:?}", decide(&c));
    c.variants.network = Some(NetworkVariant::Seed);
    assert!(is_seed(decide(&c)), "the switch, network overridden: {:?}", decide(&c));
    assert_eq!(c.network_settings(), c.job_broker_params().network());
}

#[test]
fn unknown_references_are_reported_with_their_paths() {
    assert!(has(|s| panda(s).queues[0].site = "Nowhere".into(), "panda.queues[0].site"));
    assert!(has(|s| panda(s).queues[1].ces = vec!["gate01.aglt2.org".into()], "panda.queues[1].ces[0]"));
    assert!(has(|s| panda(s).nuclei[0].site = "Nowhere".into(), "panda.nuclei[0].site"));
    assert!(has(|s| panda(s).nuclei[1].output_storages = vec!["X".into()], "panda.nuclei[1].output_storages[0]"));
    assert!(has(
        |s| panda(s).queues[0].astorages.insert("read_lan".into(), vec!["X".into()]).map(|_| ()).unwrap_or(()),
        "panda.queues[0].astorages[\"read_lan\"][0]"
    ));
    assert!(has(
        |s| panda(s).queues[0].astorages.insert("fetch".into(), vec![]).map(|_| ()).unwrap_or(()),
        "panda.queues[0].astorages[\"fetch\"]"
    ));
    assert!(has(
        |s| panda(s).tasks[0].inputs[0].replicas[1].storage = "X".into(),
        "panda.tasks[0].inputs[0].replicas[1].storage"
    ));
    assert!(has(|s| panda(s).tasks[0].gshare = "Nope".into(), "panda.tasks[0].gshare"));
    let p = problems_of(|s| panda(s).tasks[0].gshare = "Production".into());
    assert!(p.iter().any(|p| p.path == "panda.tasks[0].gshare" && p.message.contains("not a leaf")), "{p:?}");
    assert!(has(|s| panda(s).analysis[0].gshare = "Nope".into(), "panda.analysis[0].gshare"));
    assert!(has(|s| panda(s).replay[0].queue = Some("Nope".into()), "panda.replay[0].queue"));
    let p = problems_of(|s| panda(s).queues[0].name = "BNL_X".into());
    let csv = "../../data/panda_cgsim/jan_100_BNL.csv";
    let want = format!("{csv}:2: computingsite: \"BNL\" is not a PanDA queue of the scenario");
    assert!(
        p.iter().any(|p| p.path == "panda.replay[0].file"
            && p.message.starts_with(&want)
            && p.message.ends_with("(and 99 more records)")),
        "{p:?}"
    );
    assert!(
        problems_of(|s| {
            panda(s).queues[0].name = "BNL_X".into();
            panda(s).replay[0].queue = Some("BNL_X".into());
        })
        .is_empty()
    );
    assert!(has(|s| s.storages[0].site = "Nowhere".into(), "storages[0].site"));
}

#[test]
fn duplicate_names_are_reported() {
    assert!(has(|s| panda(s).queues[1].name = "BNL".into(), "panda.queues[1].name"));
    assert!(has(|s| panda(s).nuclei[1].site = "BNL".into(), "panda.nuclei[1].site"));
    assert!(has(|s| panda(s).gshares[1].children[0].name = "Production".into(), "panda.gshares[1].children[0].name"));
    assert!(has(|s| panda(s).analysis[0].name = "mc_simul".into(), "panda.analysis[0].name"));
    assert!(has(|s| s.storages[1].name = "BNL_DATADISK".into(), "storages[1].name"));
}

#[test]
fn numbers_out_of_range_are_reported() {
    assert!(has(|s| panda(s).queues[1].minrss = 8000, "panda.queues[1].maxrss"));
    assert!(has(
        |s| {
            panda(s).queues[0].mintime = 200000;
        },
        "panda.queues[0].maxtime"
    ));
    assert!(has(|s| panda(s).queues[2].pledgedcpu = Some(-2.0), "panda.queues[2].pledgedcpu"));
    assert!(has(|s| panda(s).queues[2].maxinputsize = Some(-5), "panda.queues[2].maxinputsize"));
    assert!(has(|s| panda(s).queues[2].corepower = 0.0, "panda.queues[2].corepower"));
    assert!(has(|s| panda(s).queues[2].capability = Some("mega".into()), "panda.queues[2].capability"));
    assert!(has(|s| panda(s).queues[0].harvester.max_workers = Some(-1), "panda.queues[0].harvester.maxWorkers"));
    // Push with several jobs per worker, or workers per job, is not modelled.
    use crate::panda::harvester::config::MapType;
    for m in [MapType::MultiJobs, MapType::MultiWorkers] {
        assert!(has(|s| panda(s).queues[1].harvester.map_type = m, "panda.queues[1].harvester.mapType"));
    }
    assert!(problems_of(|s| panda(s).queues[1].harvester.map_type = MapType::OneToOne).is_empty());
    assert!(has(|s| panda(s).tasks[0].count = 0, "panda.tasks[0].count"));
    assert!(has(|s| panda(s).tasks[0].cpu_time = -1.0, "panda.tasks[0].cpu_time"));
    assert!(has(|s| panda(s).tasks[0].core_count = 0, "panda.tasks[0].core_count"));
    assert!(has(
        |s| panda(s).tasks[0].inputs[0].replicas[1].fraction = 1.5,
        "panda.tasks[0].inputs[0].replicas[1].fraction"
    ));
    assert!(has(|s| panda(s).tasks[0].inputs[0].files = 0, "panda.tasks[0].inputs[0].files"));
    assert!(has(
        |s| panda(s).tasks[0].arrival = Arrival::Spread { start_s: 5.0, end_s: 1.0 },
        "panda.tasks[0].arrival.end_s"
    ));
    assert!(has(|s| panda(s).tasks[1].inputs.clear(), "panda.tasks[1].n_events_per_job"));
    assert!(has(|s| panda(s).analysis[0].jobs_per_task = 0, "panda.analysis[0].jobs_per_task"));
    assert!(has(|s| panda(s).gshares[0].value = -1.0, "panda.gshares[0].value"));
    assert!(has(|s| panda(s).harvester.sleep_time = 0, "panda.harvester.sleepTime"));
    assert!(has(|s| s.storages[0].expired_tb = 30000.0, "storages[0].expired_tb"));
    assert!(has(|s| s.storages[2].used_tb = 20000.0, "storages[2].used_tb"));
}

#[test]
fn module_parameters_and_stray_variants_are_reported() {
    assert!(has(|s| panda(s).gdpconfig.job_broker.nw_threshold = f64::NAN, "panda.gdpconfig.job_broker"));
    assert!(has(
        |s| panda(s).gdpconfig.job_broker.variant = crate::panda::job_broker::JobBrokerVariant::PandaServer,
        "panda.gdpconfig.job_broker.variant"
    ));
    assert!(has(
        |s| panda(s).gdpconfig.timeouts.variant = crate::panda::timeouts::TimeoutVariant::PandaServer,
        "panda.gdpconfig.timeouts.variant"
    ));
}

#[test]
fn architectures_are_parsed_and_their_warnings_are_warnings() {
    assert!(has(|s| panda(s).analysis[0].architecture = Some("'#&nvidia'".into()), "panda.analysis[0].architecture"));
    assert!(has(
        |s| panda(s).tasks[0].architecture = Some("#&nvidia:model=(?=A100).*".into()),
        "panda.tasks[0].architecture"
    ));
    let mut s = example();
    panda(&mut s).queues[0].fairsharepolicy = "type=(evgen:0%,type=any:0%".into();
    assert!(validate(&s).is_empty());
    assert!(warnings(&s).iter().any(|w| w.path == "panda.queues[0].fairsharepolicy"), "{:?}", warnings(&s));
}

#[test]
fn missing_queues_nuclei_or_queue_types_are_reported() {
    assert!(has(|s| panda(s).queues.clear(), "panda.queues"));
    assert!(has(|s| panda(s).nuclei.clear(), "panda.nuclei"));
    let p = problems_of(|s| {
        for q in &mut panda(s).queues {
            q.kind = QueueKind::Production;
        }
    });
    assert!(p.iter().any(|p| p.path == "panda.queues" && p.message.contains("analysis")), "{p:?}");
}

#[test]
fn a_panda_only_scenario_validates_and_runs() {
    let mut s = example();
    s.dirac = None;
    assert!(has(|s| s.dirac = None, "workload"), "DIRAC job streams need the dirac section");
    s.workload.clear();
    assert_eq!(validate(&s), vec![]);
    let mut short = s.clone();
    short.duration_s = 3.0 * 3600.0;
    short.output.warmup_s = 0.0;
    let w = crate::sim::run(&short, 1, |_, _| {}).expect("a PanDA-only scenario runs");
    assert_eq!(crate::sim::check_invariants(&w), Vec::<String>::new());
    assert_eq!(w.wms.len(), 1);
    assert_eq!(w.wms[0].name(), "panda");
    // Neither section: the error names both.
    s.panda = None;
    let p = validate(&s);
    assert!(p.iter().any(|p| p.path == "dirac" && p.message.contains("panda")), "{p:?}");
}

#[test]
fn replay_csv_errors_name_line_and_column() {
    use super::replay::read_csv;
    let csv = std::fs::read_to_string(root().join("data/panda_cgsim/jan_100_BNL.csv")).unwrap();
    let recs = read_csv(&csv).unwrap();
    assert_eq!(recs.len(), 100);
    assert_eq!(recs.iter().filter(|r| r.corecount == 8).count(), 4, "README: 4 eight-core jobs");
    let r = &recs[0];
    assert_eq!(r.creation_s, super::replay::parse_time("2025-01-20 18:10:40").unwrap());
    assert_eq!(r.start_s.unwrap() - r.creation_s, 844, "job_queuetime 844 s");
    assert_eq!(r.pilottiming, vec![1.0, 40.0, 242.0, 3.0, 3.0, 11.0]);
    assert_eq!(r.ninputdatafiles, Some(10.0));
    assert_eq!(super::replay::parse_time("1970-01-02 00:00:00"), Some(86400));
    let header = csv.lines().next().unwrap();
    let row = csv.lines().nth(1).unwrap();
    let e = read_csv(&format!("{header}\n{row}\n{}", row.replace("2025-01-20 18:24:44", "yesterday"))).unwrap_err();
    assert_eq!((e.line, e.column.as_str()), (3, "starttime"));
    assert!(e.to_string().starts_with("3: starttime: expected a UTC time"), "{e}");
    let e = read_csv(&format!("{header}\n{}", row.replacen(",1000,729,", ",1000,high,", 1))).unwrap_err();
    assert_eq!((e.line, e.column.as_str()), (2, "currentpriority"));
    let e = read_csv(&format!("{}\n{row}", header.replace("corecount", "cores"))).unwrap_err();
    assert_eq!((e.line, e.column.as_str()), (1, "corecount"));
    let e = read_csv(&format!("{header}\n{row},extra")).unwrap_err();
    assert!(e.message.contains("cells"), "{e}");
    let e = read_csv(&format!("{header}\n{}", row.replacen(",1,10.0,", ",0,10.0,", 1))).unwrap_err();
    assert_eq!(e.column, "corecount");
    // Through the loader: FILE:LINE: column: …
    let dir = std::env::temp_dir().join(format!("pilotsim-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("jobs.csv"), format!("{header}\n{}", row.replacen("6486070333", "x", 1))).unwrap();
    let text = std::fs::read_to_string(root().join("tests/data/panda_example.ron"))
        .unwrap()
        .replace("../../data/panda_cgsim/jan_100_BNL.csv", "jobs.csv");
    std::fs::write(dir.join("s.ron"), text).unwrap();
    let e = load_file(&dir.join("s.ron")).unwrap_err();
    assert!(matches!(e, LoadError::Replay { .. }));
    assert!(e.to_string().ends_with("jobs.csv:2: pandaid: expected an integer, got \"x\""), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn replay_streams_and_records_are_validated_with_file_line_and_column() {
    let csv = "../../data/panda_cgsim/jan_100_BNL.csv";
    let at = |p: &[crate::scenario::Problem], path: &str, text: &str| {
        assert!(p.iter().any(|p| p.path == path && p.message.contains(text)), "no {path}: {text} in {p:?}");
    };
    // The gshare: a leaf, and required when the tree has more than one.
    at(
        &problems_of(|s| panda(s).replay[0].gshare = Some("Nope".into())),
        "panda.replay[0].gshare",
        "not in panda.gshares",
    );
    at(&problems_of(|s| panda(s).replay[0].gshare = Some("Analysis".into())), "panda.replay[0].gshare", "not a leaf");
    at(&problems_of(|s| panda(s).replay[0].gshare = None), "panda.replay[0].gshare", "panda.gshares has 3 leaves");
    let one_leaf = problems_of(|s| {
        let p = panda(s);
        p.replay[0].gshare = None;
        p.gshares.retain(|g| g.name == "Analysis");
        p.tasks.clear();
    });
    assert!(one_leaf.iter().all(|p| !p.path.starts_with("panda.replay")), "the only leaf is taken: {one_leaf:?}");
    // The nucleus: one of panda.nuclei.
    at(
        &problems_of(|s| panda(s).replay[0].nucleus = Some("CERN".into())),
        "panda.replay[0].nucleus",
        "unknown nucleus",
    );
    assert!(problems_of(|s| panda(s).replay[0].nucleus = Some("AGLT2".into())).is_empty());
    // A record without any run time (record 4 is line 5), with a status that is not final.
    let p = problems_of(|s| {
        let r = &mut panda(s).replay[0].records[3];
        (r.job_walltime, r.start_s, r.cpu_eff) = (None, None, Some(0.0));
    });
    at(&p, "panda.replay[0].file", &format!("{csv}:5: job_walltime: no run time recorded"));
    let p = problems_of(|s| {
        panda(s).replay[0].records[1].jobstatus = "running".into();
        panda(s).replay[0].records[7].jobstatus = "holding".into();
    });
    at(&p, "panda.replay[0].file", &format!("{csv}:3: jobstatus: expected a final status"));
    at(&p, "panda.replay[0].file", "got \"running\" (and 1 more records)");
    // A skipped record needs no run time; skipped records are counted in one warning.
    let mut s = example();
    for k in [0, 5] {
        let r = &mut panda(&mut s).replay[0].records[k];
        r.jobstatus = if k == 0 { "cancelled" } else { "closed" }.into();
        r.job_walltime = None;
    }
    panda(&mut s).replay[0].records[9].transfertype = "copy".into();
    panda(&mut s).replay[0].records[9].sourcesite = "CERN-PROD".into();
    panda(&mut s).queues[0].corecount = Some(1); // the 8-core records 3, 37, 67 (5 is closed)
    assert_eq!(validate(&s), vec![]);
    let w = warnings(&s);
    at(&w, "panda.replay[0].file", "2 records are cancelled or closed: skipped");
    at(
        &w,
        "panda.replay[0].file",
        &format!(
            "3 records need more cores than their queue's pilots have ({csv}:5: corecount 8 on \"BNL\", corecount 1)"
        ),
    );
    at(
        &w,
        "panda.replay[0].file",
        &format!("1 records stage in from a sourcesite that is not a site of the scenario ({csv}:11: \"CERN-PROD\")"),
    );
}

#[test]
fn a_record_says_its_run_time_priority_and_input() {
    use super::replay::{Outcome, read_csv};
    let csv = std::fs::read_to_string(root().join("data/panda_cgsim/jan_100_BNL.csv")).unwrap();
    let recs = read_csv(&csv).unwrap();
    let r = &recs[0];
    assert_eq!((r.line, r.outcome(), r.wall_s(), r.priority()), (2, Some(Outcome::Finished), Some(306.0), 729));
    assert_eq!(r.queue_time_s(), Some(844.0));
    assert!(r.reads_directly(), "transfertype direct");
    // job_walltime is core-seconds: the 8-core record 4 ran 225 106 s (2025-01-16 04:02:00 →
    // 2025-01-18 18:33:46), recorded as 1 800 848.
    let r8 = &recs[3];
    assert_eq!((r8.corecount, r8.job_walltime, r8.wall_s()), (8, Some(1_800_848.0), Some(225_106.0)));
    assert!(recs.iter().all(|r| r.wall_s() == Some((r.end_s.unwrap() - r.start_s.unwrap()) as f64)));
    // The fallbacks: endtime − starttime, then cpuconsumptiontime / cpu_eff / corecount.
    let mut x = r8.clone();
    x.job_walltime = None;
    assert_eq!(x.wall_s(), Some(225_106.0));
    (x.start_s, x.cpu_eff) = (None, Some(0.5));
    assert_eq!(x.wall_s(), Some(233_828.0 / 0.5 / 8.0));
    x.cpu_eff = Some(0.0);
    assert_eq!(x.wall_s(), None);
    // Priority: currentpriority, else assignedpriority, else 0.
    x.currentpriority = None;
    assert_eq!(x.priority(), 1000);
    x.assignedpriority = None;
    assert_eq!(x.priority(), 0);
    for (status, outcome) in [("failed", Some(Outcome::Failed)), ("closed", Some(Outcome::Skipped)), ("defined", None)]
    {
        x.jobstatus = status.into();
        assert_eq!(x.outcome(), outcome, "{status}");
    }
    x.transfertype = "copy".into();
    assert!(!x.reads_directly());
    x.transfertype = String::new();
    assert!(x.reads_directly(), "no transfertype: read directly");
}

fn wrap(fragment: &str) -> String {
    format!("Scenario(name: \"imported\", duration_s: 86400,\n{fragment})")
}

const SITE_INFO: &str = r#"{
  "AGLT2": {"RSE": {"AGLT2_DATADISK": "11239.99", "AGLT2_SCRATCHDISK": "170.00"}, "GFLOPS": 28407840},
  "AGLT2_MERGE": {"RSE": {"AGLT2_DATADISK": "11239.99"}, "GFLOPS": 4679040},
  "ANALY_NDGF": {"RSE": {"NDGF-T1_DATATAPE": 0, "NDGF-T1_DATADISK": "300"}, "GFLOPS": 2720}
}"#;
const SITE_CONN: &str = r#"{
  "AGLT2:AGLT2": {"closeness": {"latest": 0}, "dst": "AGLT2", "src": "AGLT2", "mbps": {"dashb": {"1w": 0.07}},
                  "files": {"queued-total": 5}},
  "AGLT2:NDGF-T1": {"closeness": {"latest": 11}, "dst": "NDGF-T1", "src": "AGLT2",
                    "mbps": {"dashb": {"1h": 20.5, "1d": 80.25, "1w": 40}}, "files": {"queued-total": 42,
                    "queued": {"Functional Test": {"latest": 30}, "Production Output": {"latest": 12}}}},
  "NDGF-T1:AGLT2": {"closeness": {"latest": -1}, "dst": "AGLT2", "src": "NDGF-T1"},
  "NDGF-T1:BNL": {"closeness": {"latest": 3}, "dst": "BNL", "src": "NDGF-T1"}
}"#;
const PANDAQUEUES: &str = r#"{
  "ANALY_NDGF": {"atlas_site": "NDGF-T1", "status": "brokeroff", "type": "analysis", "corecount": 1,
                 "maxrss": "4000", "maxtime": 86400, "pledgedcpu": -1, "direct_access_lan": true,
                 "fairsharepolicy": "type=any:100%", "catchall": "useJumboJobs",
                 "astorages": {"read_lan": ["NDGF-T1_DATADISK"]}, "wnconnectivity": "full#IPv4",
                 "releases": ["AUTO"], "cloud": "ND", "resource_type": "gpu"}
}"#;

#[test]
fn the_three_cric_forms_import_and_parse_back() {
    let files = vec![
        ("site_info.json".to_string(), SITE_INFO.to_string()),
        ("site_conn_info.json".to_string(), SITE_CONN.to_string()),
        ("pq.json".to_string(), PANDAQUEUES.to_string()),
    ];
    let f = cric::import(&files, Options::default()).unwrap();
    assert_eq!(
        f.forms.iter().map(|x| x.1).collect::<Vec<_>>(),
        vec![Form::SiteInfo, Form::SiteConn, Form::PandaQueues]
    );
    // Queue → site: AGLT2 by name, AGLT2_MERGE by its RSE prefix, ANALY_NDGF by atlas_site.
    let site = |q: &str| f.queues.iter().find(|x| x.name == q).unwrap().site.clone();
    assert_eq!(
        (site("AGLT2"), site("AGLT2_MERGE"), site("ANALY_NDGF")),
        ("AGLT2".into(), "AGLT2".into(), "NDGF-T1".into())
    );
    assert_eq!(f.sites.len(), 2);
    let aglt2 = &f.sites[0];
    assert_eq!(aglt2.ces.iter().map(|c| c.slots).collect::<Vec<_>>(), vec![28408, 4679], "GFLOPS / 1000");
    let ndgf = f.queues.iter().find(|q| q.name == "ANALY_NDGF").unwrap();
    assert_eq!(
        (ndgf.status, ndgf.kind, ndgf.maxrss, ndgf.maxtime),
        (QueueStatus::Brokeroff, QueueKind::Analysis, 4000, 86400)
    );
    assert_eq!((ndgf.pledgedcpu, ndgf.direct_access_lan), (Some(-1.0), true));
    // CRIC `resource_type: gpu` at a site the dumps give no GPU node: CPU workers, and a warning.
    assert_eq!((ndgf.resource_type.as_deref(), ndgf.worker_gpus()), (None, 0));
    assert!(f.warnings.iter().any(|w| w.starts_with("ANALY_NDGF: resource_type \"gpu\"")), "{:?}", f.warnings);
    assert!(f.warnings.iter().any(|w| w.contains("\"cloud\"")), "{:?}", f.warnings);
    // Storages: tape of size 0 unlimited; one endpoint per RSE.
    let st = |n: &str| f.storages.iter().find(|s| s.name == n).unwrap();
    assert_eq!(st("AGLT2_DATADISK").total_tb, Some(11239.99));
    assert_eq!((st("NDGF-T1_DATATAPE").kind, st("NDGF-T1_DATATAPE").total_tb), (StorageKind::Tape, None));
    assert_eq!(st("NDGF-T1_DATADISK").site, "NDGF-T1");
    // Links: the blocked one dropped, the one to BNL (no queue there) too; max of 1h/1d/1w.
    assert_eq!((f.network.len(), f.blocked_links, f.foreign_links), (2, 1, 1));
    let l = f.network.iter().find(|l| l.to == "NDGF-T1").unwrap();
    // The Production Output backlog, what PanDA reads (30 Functional Test files are not);
    // a link with only a total has the total.
    assert_eq!((l.bandwidth_mbps, l.closeness, l.queued_files), (80.25, 11, 12));
    let lan = f.network.iter().find(|l| l.to == "AGLT2").unwrap();
    assert_eq!((lan.queued_files, f.total_only_links), (5, 1));
    let text = cric::to_ron_fragment(&f, Options::default());
    let s = parse(&wrap(&text), "fragment").unwrap();
    assert_eq!(s.panda.as_ref().unwrap().queues, f.queues);
    assert_eq!(s.storages, f.storages);
    assert_eq!(validate(&s), vec![], "an imported fragment is a valid PanDA-only scenario");
}

#[test]
fn cric_errors_have_file_line_and_column() {
    let e = cric::import(&[("bad.json".into(), "{\n  \"A\": {\"RSE\": {}\n".into())], Options::default()).unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("bad.json", 3));
    assert!(e.to_string().starts_with("bad.json:3:"), "{e}");
    let e =
        cric::import(&[("pq.json".into(), r#"{"Q": {"type": "special"}}"#.into())], Options::default()).unwrap_err();
    assert!(e.to_string().contains("Q.type"), "{e}");
    let e = cric::import(&[("x.json".into(), "[1]".into())], Options::default()).unwrap_err();
    assert!(e.to_string().contains("expected a JSON object"), "{e}");
}

#[test]
fn the_real_cgsim_files_import() {
    let read = |n: &str| {
        let p = root().join("data/panda_cgsim").join(n);
        (n.to_string(), std::fs::read_to_string(&p).unwrap())
    };
    let f = cric::import(&[read("site_info.json"), read("site_conn_info.json")], Options::default()).unwrap();
    assert_eq!(f.queues.len(), 150);
    // 99 sites with queues, and 2 that only hold RSEs the queues read.
    assert_eq!(f.sites.len(), 101);
    let queue_sites: std::collections::BTreeSet<&str> = f.queues.iter().map(|q| q.site.as_str()).collect();
    assert_eq!(queue_sites.len(), 99);
    let aglt2 = f.storages.iter().find(|s| s.name == "AGLT2_DATADISK").unwrap();
    assert_eq!((aglt2.site.as_str(), aglt2.total_tb), ("AGLT2", Some(11239.99)));
    assert_eq!(f.queues.iter().find(|q| q.name == "AGLT2_MERGE").unwrap().site, "AGLT2");
    assert_eq!(f.network.len() + f.blocked_links + f.foreign_links, 15377);
    assert_eq!((f.network.len(), f.blocked_links), (REAL_LINKS, REAL_BLOCKED));
    let slots: u64 = f.sites.iter().flat_map(|s| &s.ces).map(|c| u64::from(c.slots)).sum();
    assert!((1_570_000..1_580_000).contains(&slots), "{slots}");
    let text = cric::to_ron_fragment(&f, Options::default());
    let s = parse(&wrap(&text), "fragment").unwrap();
    assert_eq!(s.sites.len(), 101);
    assert_eq!(validate(&s), vec![]);
    // The link matrix alone: every link, no site.
    let g = cric::import(&[read("site_conn_info.json")], Options::default()).unwrap();
    assert_eq!((g.sites.len(), g.network.len() + g.blocked_links), (0, 15377));
}

/// Links of site_conn_info.json between the 101 sites (the only closeness −1 pair is between
/// sites without a queue, so none is dropped as blocked here).
const REAL_LINKS: usize = 6534;
const REAL_BLOCKED: usize = 0;
