use super::*;
use crate::scenario::generate_atlas::{SITE_CONN, SITE_INFO};
use crate::scenario::{parse, validate, warnings};

fn atlas_sources() -> Sources {
    Sources {
        cric: vec![
            ("site_info.json".to_string(), SITE_INFO.to_string()),
            ("site_conn_info.json".to_string(), SITE_CONN.to_string()),
        ],
        ..Sources::default()
    }
}

#[test]
fn the_atlas_dumps_make_a_valid_panda_scenario_and_name_the_nuclei_the_backlog_keeps_out() {
    let text = build(&atlas_sources(), &Options::new("my_grid")).unwrap();
    let s = parse(&text, "my_grid").unwrap();
    assert_eq!(validate(&s), vec![]);
    let p = s.panda.as_ref().unwrap();
    assert_eq!((p.queues.len(), s.sites.len()), (150, 101));
    // The Tier-1s with a DATADISK in the data (RAL's is on RAL-LCG2-ECHO, pic has a scratch
    // disk only, Taiwan-LCG2 none).
    let nuclei: Vec<&str> = p.nuclei.iter().map(|n| n.site.as_str()).collect();
    assert_eq!(
        nuclei,
        [
            "BNL-ATLAS",
            "CERN-PROD",
            "FZK-LCG2",
            "IN2P3-CC",
            "INFN-T1",
            "NDGF-T1",
            "RRC-KI-T1",
            "SARA-MATRIX",
            "TRIUMF-LCG2"
        ]
    );
    let slots: u64 = s.sites.iter().flat_map(|x| &x.ces).map(|c| u64::from(c.slots)).sum();
    // 20 000 jobs of 3.5 core-hours over 144 h at 60 %: 811 slots (each queue's rounded).
    assert!((780..=840).contains(&slots), "{slots}");
    // The snapshot's Production Output backlog (2024-08-08) from the grid's sites into CERN-PROD:
    // 9 225 files (11 066 from every source of the matrix), over NQUEUED_NUC_CAP 2 000; into
    // BNL-ATLAS 1 743, under it.
    let into = |site: &str| s.network.iter().filter(|l| l.to == site).map(|l| l.queued_files).sum::<u64>();
    assert_eq!((into("CERN-PROD"), into("BNL-ATLAS")), (9_225, 1_743));
    let w = warnings(&s);
    let skipped: Vec<&str> = w
        .iter()
        .filter(|w| w.message.contains("criteria=-transfer_backlog"))
        .map(|w| p.nuclei[w.path["panda.nuclei[".len()..w.path.len() - 1].parse::<usize>().unwrap()].site.as_str())
        .collect();
    assert_eq!(skipped, ["CERN-PROD", "FZK-LCG2", "IN2P3-CC", "INFN-T1", "NDGF-T1"], "{w:?}");
    let cern = w.iter().find(|w| w.message.contains("\"CERN-PROD\"")).unwrap();
    assert!(
        cern.message.contains("skip nucleus=CERN-PROD due to long transfer backlog criteria=-transfer_backlog")
            && cern.message.contains("9225 queued files > NQUEUED_NUC_CAP 2000"),
        "{}",
        cern.message
    );
    // Empty links: no nucleus is skipped.
    let mut opt = Options::new("my_grid");
    opt.empty_links = true;
    let s = parse(&build(&atlas_sources(), &opt).unwrap(), "my_grid").unwrap();
    assert!(!warnings(&s).iter().any(|w| w.path.starts_with("panda.nuclei")), "{:?}", warnings(&s));
}

#[test]
fn every_nucleus_skipped_is_said_once_more_for_the_whole_run() {
    let mut opt = Options::new("g");
    opt.nuclei = vec!["CERN-PROD".into(), "FZK-LCG2".into()];
    let s = parse(&build(&atlas_sources(), &opt).unwrap(), "g").unwrap();
    let w = warnings(&s);
    assert!(w.iter().any(|w| w.path == "panda.nuclei" && w.message.contains("no production job is created")), "{w:?}");
}

const GDPCONFIG: &str = r#"[{"app": "jedi", "component": "taskbrokerage", "key": "NQUEUED_NUC_CAP", "value": "20000"},
 {"app": "jedi", "component": "jobbroker", "key": "NQUEUED_SAT_CAP", "value": "300", "vo": "atlas"}]"#;

const DIRAC_CFG: &str = "Registry\n{\n  Groups\n  {\n    prod\n    {\n      Users = pm\n      Properties = JobSharing\n      JobShare = 3000\n    }\n    user\n    {\n      Users = alice, bob\n      JobShare = 1000\n    }\n  }\n}\n";

#[test]
fn a_gdpconfig_dump_and_a_dirac_cs_join_the_grid() {
    let mut src = atlas_sources();
    src.gdpconfig = Some(("gdp.json".into(), gdpconfig::import(GDPCONFIG, "atlas").unwrap()));
    src.dirac = Some(("cs.cfg".into(), dirac_cfg::import(DIRAC_CFG).unwrap()));
    let text = build(&src, &Options::new("both")).unwrap();
    let s = parse(&text, "both").unwrap();
    assert_eq!(validate(&s), vec![]);
    let p = s.panda.as_ref().unwrap();
    assert_eq!(p.task_brokerage_params().nqueued_nuc_cap, 20_000.0);
    // The cap of the dump lets every nucleus in despite the snapshot's backlog.
    assert!(!warnings(&s).iter().any(|w| w.path.starts_with("panda.nuclei")));
    // Half the jobs are DIRAC's: 7 500 for prod (JobShare 3000 of 4000), shared by its users in
    // one stream; 2 500 for user, one stream per user.
    let streams: Vec<(&str, u32)> = s.workload.iter().map(|w| (w.name.as_str(), w.count)).collect();
    assert_eq!(streams, [("prod_pm", 7500), ("user_alice", 1250), ("user_bob", 1250)]);
    // DIRAC alone: all the jobs, no panda section.
    src.gdpconfig = None;
    let s = parse(&build(&src, &Options::new("dirac")).unwrap(), "dirac").unwrap();
    assert!(s.panda.is_none());
    assert_eq!(s.workload.iter().map(|w| u64::from(w.count)).sum::<u64>(), 20_000);
    assert_eq!(validate(&s), vec![]);
}

#[test]
fn the_default_slots_keep_the_load_whatever_the_run_length() {
    let slots = |days: u64| {
        let mut o = Options::new("g");
        o.duration_s = days * 86_400;
        let s = parse(&build(&atlas_sources(), &o).unwrap(), "g").unwrap();
        s.sites.iter().flat_map(|x| &x.ces).map(|c| u64::from(c.slots)).sum::<u64>() as f64
    };
    // A week holds 3.5 times as many slots' hours as two days: 3.5 times fewer slots.
    let ratio = slots(2) / slots(7);
    assert!((ratio - 3.5).abs() < 0.2, "{ratio}");
}

#[test]
fn bad_options_are_errors_that_say_what_to_do() {
    let e = |opt: Options, src: &Sources| build(src, &opt).unwrap_err();
    let mut o = Options::new("g");
    o.jobs = 10;
    assert!(e(o, &atlas_sources()).contains("needs 10000 to 1000000000 jobs"));
    let mut o = Options::new("g");
    o.nuclei = vec!["CERN-PROD".into(), "CERN-PROD".into()];
    assert_eq!(e(o, &atlas_sources()), "--nuclei: \"CERN-PROD\" given twice");
    let mut src = atlas_sources();
    src.dirac = Some((
        "cs.cfg".into(),
        dirac_cfg::import("Registry\n{\n  Groups\n  {\n    empty\n    {\n      JobShare = 10\n    }\n  }\n}\n")
            .unwrap(),
    ));
    assert!(e(Options::new("g"), &src).contains("no group has users"));
    assert!(e(Options::new("g"), &Sources::default()).contains("--cric"));
    let mut o = Options::new("g");
    o.nuclei = vec!["Atlantis".into()];
    assert_eq!(e(o, &atlas_sources()), "--nuclei: no site \"Atlantis\" in the grid");
}
