//! Tests of the `factory` section: parsing, defaults, conversions, validation paths, warnings.

use std::path::PathBuf;

use super::*;
use crate::factory::standby::AdaptiveSettings;
use crate::scenario::{LoadError, QUICKSTART, parse, validate, warnings};

/// The quickstart (DIRAC) with a `factory` section.
fn quick_with(entries: &str) -> Result<Scenario, LoadError> {
    let end = QUICKSTART.rfind(')').unwrap();
    parse(&format!("{}    factory: [{entries}],\n)", &QUICKSTART[..end]), "q.ron")
}

fn problems(entries: &str) -> Vec<Problem> {
    validate(&quick_with(entries).unwrap())
}

fn paths(entries: &str) -> Vec<String> {
    problems(entries).into_iter().map(|p| p.path).collect()
}

const GENERIC: &str =
    r#"Generic(site: "LCG.CERN.cern", ces: ["ce503.cern.ch"], rate_per_min: 2.5, max_queued: Some(50))"#;
const STARTD: &str = r#"Startd(site: "LCG.CNAF.it", vms: 3, pilot_interval_s: 120, job_types: KeepOneForAnalysis,
    lifetime: LogNormal(median: 7200, sigma: 0.5), standby: Proportional(per_queued_job: 0.05, min: 1, max: 40))"#;

#[test]
fn a_dirac_scenario_with_both_kinds_validates_without_warning() {
    let s = quick_with(&format!("{GENERIC}, {STARTD}")).unwrap();
    assert_eq!(validate(&s), vec![]);
    let w = warnings(&s);
    assert!(w.is_empty(), "the world runs factories now: {w:?}");
    assert_eq!(s.factory[0].steps(), (SimDuration::from_secs(60), SimDuration::from_secs(60)));
    // Conversions to the modules' settings, with the defaults filled in.
    let g = s.factory[0].generator_settings().unwrap();
    assert_eq!(g, GeneratorSettings { rate_per_min: 2.5, max_queued: Some(50), max_total: None });
    assert_eq!(s.factory[0].target(), ("LCG.CERN.cern", &["ce503.cern.ch".to_string()][..], None));
    assert_eq!(s.factory[0].cycle(), SimDuration::from_secs(60));
    assert!(s.factory[0].startd_settings().is_none() && s.factory[1].generator_settings().is_none());
    let st = s.factory[1].startd_settings().unwrap();
    assert_eq!(
        st,
        StartdSettings {
            vms: 3,
            pilot_interval: SimDuration::from_secs(120),
            job_types: JobTypePolicy::KeepOneForAnalysis,
            preempt_background: false,
            on_removal: OnRemoval::Requeue,
            slot_cpus: None,
        }
    );
    // A round trip through RON gives the same scenario.
    let text = ron::ser::to_string(&s).unwrap();
    assert_eq!(parse(&text, "rt").unwrap(), s);
}

#[test]
fn defaults_of_a_bare_startd_factory() {
    let s = quick_with(r#"Startd(site: "LCG.RAL.uk")"#).unwrap();
    assert_eq!(validate(&s), vec![]);
    let FactoryConfig::Startd { vms, pilot_interval_s, lifetime, standby, on_removal, cycle_s, .. } = &s.factory[0]
    else {
        panic!()
    };
    assert_eq!((*vms, pilot_interval_s.as_secs_f64(), cycle_s.as_secs_f64()), (2, 300.0, 60.0));
    assert_eq!(lifetime, &Distribution::Exponential { mean: 14_400.0 });
    assert_eq!((standby, on_removal), (&StandbyPolicy::Fixed(1), &OnRemoval::Requeue));
    // The adaptive controller with every default, as the README writes it.
    let s = quick_with(r#"Startd(site: "LCG.RAL.uk", standby: Adaptive(()))"#).unwrap();
    assert_eq!(validate(&s), vec![]);
    let FactoryConfig::Startd { standby, .. } = &s.factory[0] else { panic!() };
    assert_eq!(standby, &StandbyPolicy::Adaptive(AdaptiveSettings::default()));
}

#[test]
fn an_absent_section_changes_nothing() {
    let q = parse(QUICKSTART, "q").unwrap();
    assert!(q.factory.is_empty());
    assert!(!ron::ser::to_string(&q).unwrap().contains("factory"), "not serialised when empty");
    assert!(warnings(&q).iter().all(|w| !w.path.starts_with("factory")));
}

#[test]
fn panda_queues_and_the_adaptive_policy() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/panda_example.ron");
    let text = std::fs::read_to_string(&path).unwrap();
    let end = text.rfind(')').unwrap();
    let with = |entries: &str| {
        let s = parse(&format!("{}    factory: [{entries}],\n)", &text[..end]), "p.ron").unwrap();
        (validate(&s), s)
    };
    let (p, s) = with(
        r#"Startd(site: "BNL", queue: "BNL", ces: ["gridgk03.sdcc.bnl.gov"], preempt_background: true,
                  standby: Adaptive((smoothing: 0.3, max: 200)), on_removal: End, slot_cpus: 1.0),
           Generic(site: "BNL", queue: "ANALY_BNL_GPU", rate_per_min: 1),
           Generic(site: "AGLT2", rate_per_min: 0.5)"#,
    );
    assert_eq!(p, vec![], "PanDA queues and a DIRAC factory beside them");
    let FactoryConfig::Startd { standby: StandbyPolicy::Adaptive(a), .. } = &s.factory[0] else { panic!() };
    assert_eq!(a, &AdaptiveSettings { smoothing: 0.3, max: 200, ..AdaptiveSettings::default() });
    assert_eq!(s.factory[0].target().2, Some("BNL"));
    // A queue of another site, an unknown queue.
    let (p, _) = with(
        r#"Generic(site: "AGLT2", queue: "BNL", rate_per_min: 1), Generic(site: "BNL", queue: "CERN", rate_per_min: 1)"#,
    );
    assert_eq!(p[0].path, "factory[0].queue");
    assert!(p[0].message.contains("runs at site \"BNL\", not \"AGLT2\""), "{p:?}");
    assert_eq!(p[1].path, "factory[1].queue");
    assert!(p[1].message.starts_with("unknown PanDA queue \"CERN\" (known: "), "{p:?}");
    // The same PanDA queue and CE twice.
    let (p, _) = with(
        r#"Generic(site: "BNL", queue: "BNL", rate_per_min: 1), Startd(site: "BNL", queue: "BNL", ces: ["gridgk06.sdcc.bnl.gov"])"#,
    );
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].path, "factory[1].ces");
    assert!(p[0].message.contains("already has a factory for PanDA queue \"BNL\" (factory[0])"), "{p:?}");
}

#[test]
fn problems_name_their_fields() {
    assert_eq!(paths(r#"Startd(site: "LCG.RAL.uk", vms: 0)"#), vec!["factory[0].vms"]);
    assert_eq!(problems(r#"Startd(site: "LCG.RAL.uk", vms: 0)"#)[0].message, "must be at least 1");
    assert_eq!(paths(r#"Startd(site: "LCG.RAL.uk", vms: 65)"#), vec!["factory[0].vms"]);
    let p = problems(r#"Generic(site: "LCG.NOWHERE", rate_per_min: 1)"#);
    assert_eq!(p[0].path, "factory[0].site");
    assert!(p[0].message.starts_with("unknown site \"LCG.NOWHERE\" (known: "), "{p:?}");
    let p = problems(r#"Generic(site: "LCG.RAL.uk", ces: ["ce503.cern.ch"], rate_per_min: 1)"#);
    assert_eq!(p[0].path, "factory[0].ces[0]");
    assert!(p[0].message.contains("is not at site \"LCG.RAL.uk\""), "{p:?}");
    assert_eq!(
        paths(r#"Generic(site: "LCG.RAL.uk", rate_per_min: 0, max_queued: Some(0), max_total: Some(0))"#),
        vec!["factory[0].rate_per_min", "factory[0].max_queued", "factory[0].max_total"]
    );
    assert_eq!(
        paths(
            r#"Startd(site: "LCG.RAL.uk", slot_cpus: -1, lifetime: Exponential(mean: 0),
                      standby: Proportional(per_queued_job: 1, min: 9, max: 2))"#
        ),
        vec!["factory[0].slot_cpus", "factory[0].lifetime.mean", "factory[0].standby.max"]
    );
    assert_eq!(
        paths(r#"Startd(site: "LCG.RAL.uk", standby: Adaptive((safety_up: 0.5)))"#),
        vec!["factory[0].standby.safety_up"]
    );
    // Two DIRAC factories on the same CE; a factory without queue in a PanDA-only scenario is
    // checked in `panda_queues_and_the_adaptive_policy`'s file through the DIRAC section.
    let p = problems(&format!("{GENERIC}, Generic(site: \"LCG.CERN.cern\", rate_per_min: 1)"));
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(
        (p[0].path.as_str(), p[0].message.as_str()),
        ("factory[1].ces", "CE \"ce503.cern.ch\" already has a factory for DIRAC (factory[0])")
    );
    // A one-VM startd pilot keeping its VM for analysis: valid, with a warning.
    let s = quick_with(r#"Startd(site: "LCG.RAL.uk", vms: 1, job_types: KeepOneForAnalysis)"#).unwrap();
    assert_eq!(validate(&s), vec![]);
    assert!(warnings(&s).iter().any(|w| w.path == "factory[0].job_types"));
}

#[test]
fn a_dirac_factory_needs_a_dirac_section_and_a_queue_a_panda_one() {
    let mut s = quick_with(r#"Generic(site: "LCG.RAL.uk", queue: "RAL", rate_per_min: 1)"#).unwrap();
    let p = validate(&s);
    assert_eq!(p[0].path, "factory[0].queue");
    assert!(p[0].message.contains("no `panda` section"), "{p:?}");
    // Without a dirac section (and no WMS at all) the factory names the missing section too.
    s.factory[0] = quick_with(r#"Generic(site: "LCG.RAL.uk", rate_per_min: 1)"#).unwrap().factory.remove(0);
    s.dirac = None;
    s.workload.clear();
    let p = validate(&s);
    assert!(p.iter().any(|x| x.path == "factory[0].queue" && x.message.contains("no `dirac` section")), "{p:?}");
}

#[test]
fn unknown_fields_are_syntax_errors_with_their_line() {
    let e = quick_with(r#"Startd(site: "LCG.RAL.uk", vm: 2)"#).unwrap_err().to_string();
    assert!(e.starts_with("q.ron:") && e.contains("vm"), "{e}");
    let e = quick_with(r#"Startd(site: "LCG.RAL.uk", standby: Adaptive((safty: 2)))"#).unwrap_err().to_string();
    assert!(e.contains("safty"), "{e}");
    let e = quick_with(r#"Startd(site: "LCG.RAL.uk", job_types: KeepTwo)"#).unwrap_err().to_string();
    assert!(e.contains("KeepTwo"), "{e}");
}
