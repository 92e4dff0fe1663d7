//! Tests of `panda::task_broker`. The reference has no upstream task-brokerage test vectors
//! (§9: "No brokerage-weight tests exist upstream"), so the numbers here are worked by hand from
//! the code's formulas (`AtlasProdTaskBroker.py` L147-596) and the seed's, both variants.

use super::*;
use crate::engine::RngStreams;

mod choice;
mod filters;
mod full_chain;
mod locality;
mod props;

pub(super) const SEED: TaskBrokerVariant = TaskBrokerVariant::Seed;
pub(super) const CODE: TaskBrokerVariant = TaskBrokerVariant::PandaServer;
pub(super) const BOTH: [TaskBrokerVariant; 2] = [SEED, CODE];

pub(super) fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

/// A disk endpoint with `usable_tb` usable (and free) out of `total_tb`, both WAN directions ON.
pub(super) fn ep(name: &str, usable_tb: f64, total_tb: f64) -> DdmEndpoint {
    DdmEndpoint {
        name: name.into(),
        space_usable: usable_tb * 1024.0,
        space_free: usable_tb * 1024.0,
        space_total: total_tb * 1024.0,
        ..DdmEndpoint::default()
    }
}

/// An active nucleus writing to and reading from endpoint `endpoint`.
pub(super) fn nucleus(name: &str, endpoint: usize) -> NucleusSpec {
    NucleusSpec {
        name: name.into(),
        output_endpoints: vec![Some(endpoint)],
        input_endpoints: vec![endpoint],
        ..NucleusSpec::default()
    }
}

/// Nuclei A, B, C with 500 TB usable of 1000 TB each; every filter passes.
pub(super) struct World {
    pub task: TaskSpec,
    pub nuclei: Vec<NucleusSpec>,
    pub endpoints: Vec<DdmEndpoint>,
    pub prio_rw: Vec<f64>,
}

impl World {
    pub fn new() -> Self {
        let task = TaskSpec {
            current_priority: 500,
            task_priority: 500,
            work_queue: "MC".into(),
            outputs: vec![OutputDataset { storage_token: "ATLASDATADISK".into(), token: 0, distributed: false }],
            ..TaskSpec::default()
        };
        Self {
            task,
            nuclei: vec![nucleus("A", 0), nucleus("B", 1), nucleus("C", 2)],
            endpoints: vec![
                ep("A_DATADISK", 500.0, 1000.0),
                ep("B_DATADISK", 500.0, 1000.0),
                ep("C_DATADISK", 500.0, 1000.0),
            ],
            prio_rw: vec![0.0; 3],
        }
    }

    pub fn run_with(&self, p: &TaskBrokerageParams, v: TaskBrokerVariant, seed: u64) -> Brokerage<'_> {
        let input = BrokerageInput {
            task: &self.task,
            nuclei: &self.nuclei,
            endpoints: &self.endpoints,
            prio_rw: &self.prio_rw,
        };
        let mut rng = RngStreams::new(seed).stream("test/task_broker");
        do_brokerage(&input, p, v, &mut rng)
    }

    pub fn run(&self, v: TaskBrokerVariant) -> Brokerage<'_> {
        self.run_with(&TaskBrokerageParams::default(), v, 1)
    }
}

/// The candidates' nucleus indices of an assignment (panics in a test if pending).
pub(super) fn cands(b: &Brokerage<'_>) -> Vec<usize> {
    match b {
        Brokerage::Assigned(a) => a.candidates.iter().map(|c| c.nucleus).collect(),
        other => panic!("expected an assignment, got {other:?}"),
    }
}

pub(super) fn lines(b: &Brokerage<'_>) -> Vec<String> {
    b.skipped().iter().map(ToString::to_string).collect()
}

pub(super) fn pending<'b, 'a>(b: &'b Brokerage<'a>) -> &'b Pending<'a> {
    match b {
        Brokerage::Pending(p) => p,
        other => panic!("expected pending, got {other:?}"),
    }
}

#[test]
fn defaults_are_the_codes_fallbacks() {
    let d = TaskBrokerageParams::default();
    assert_eq!((d.disk_threshold, d.free_disk_cutoff), (100.0, 1000.0));
    assert_eq!((d.input_size_threshold, d.input_num_threshold), (1.0, 100.0));
    assert_eq!((d.input_size_fraction, d.input_num_fraction), (10.0, 10.0));
    assert_eq!((d.min_io_intensity_with_local_data, d.min_input_size_with_local_data), (200.0, 10000.0));
    assert_eq!(d.max_task_prio_with_local_data, 800);
    assert_eq!((d.data_location_check_period, d.nqueued_nuc_cap), (7.0, 2000.0));
    assert_eq!((CUT_OFF_RW, NEG_WEIGHT_TAPE, SPACE_PER_RW_GB, PENDING_RETRY_S), (50.0, 0.001, 0.25, 1800));
    assert_eq!(TaskBrokerVariant::default(), SEED);
    let parsed: TaskBrokerageParams = serde_json::from_str("{}").unwrap();
    assert_eq!(parsed, d);
    assert!(serde_json::from_str::<TaskBrokerageParams>(r#"{"disk_treshold": 5}"#).is_err());
    let p: TaskBrokerageParams =
        serde_json::from_str(r#"{"disk_threshold_by_queue": {"MC": 50}, "nqueued_nuc_cap": 10}"#).unwrap();
    assert_eq!((p.disk_threshold("MC"), p.disk_threshold("Reprocessing"), p.nqueued_nuc_cap), (50.0, 100.0, 10.0));
}

#[test]
fn gdpconfig_keys_name_every_field() {
    assert!(GDPCONFIG_KEYS.iter().all(|(c, _)| *c == "taskbrokerage"));
    for key in
        ["DISK_THRESHOLD_", "DISK_THRESHOLD", "FREE_DISK_CUTOFF", "NQUEUED_NUC_CAP", "DATA_LOCATION_CHECK_PERIOD"]
    {
        assert!(GDPCONFIG_KEYS.contains(&("taskbrokerage", key)), "{key}");
    }
    // Every key names a field of the struct: snake_case of the key, `DISK_THRESHOLD_<queue>`
    // the map `disk_threshold_by_queue`.
    let json = serde_json::to_value(TaskBrokerageParams::default()).unwrap();
    for (_, key) in GDPCONFIG_KEYS {
        let field = match *key {
            "DISK_THRESHOLD_" => "disk_threshold_by_queue".to_string(),
            k => k.trim_end_matches('_').to_lowercase(),
        };
        assert!(json.as_object().unwrap().contains_key(&field), "{key} → {field}");
        assert_eq!(json[&field].is_object(), key.ends_with('_'), "{key}: a family is a map");
    }
}

#[test]
fn accessors_fall_back_as_panda_does() {
    let mut p = TaskBrokerageParams::default();
    p.disk_threshold_by_queue.insert("MC".into(), 0.0);
    // DISK_THRESHOLD_<queue> set to 0 is used (`is None` test), not the global value.
    assert_eq!(p.disk_threshold("MC"), 0.0);
    assert_eq!(p.disk_threshold("other"), 100.0);
    // `if not data_location_check_period: 7`
    p.data_location_check_period = 0.0;
    assert_eq!(p.data_location_check_period_days(), 7.0);
    p.data_location_check_period = 3.0;
    assert_eq!(p.data_location_check_period_days(), 3.0);
    let nan = TaskBrokerageParams { free_disk_cutoff: f64::NAN, input_size_fraction: f64::NAN, ..p };
    let s = nan.sane();
    assert_eq!((s.free_disk_cutoff, s.input_size_fraction), (1000.0, 10.0));
}

#[test]
fn split_rule_and_catchall_parsers() {
    assert_eq!(FullChain::from_split_rule("TW=1,FU=1"), Some(FullChain::Only));
    assert_eq!(FullChain::from_split_rule("FU=2"), Some(FullChain::Require));
    assert_eq!(FullChain::from_split_rule("FU=3,IS=1"), Some(FullChain::Capable));
    // a string compare: `01` is full-chain without a mode
    assert_eq!(FullChain::from_split_rule("FU=01"), Some(FullChain::Other));
    // re.search scans on to the first place the whole pattern matches
    assert_eq!(FullChain::from_split_rule("FU=x,FU=2"), Some(FullChain::Require));
    assert_eq!(FullChain::from_split_rule("FU=,TW=3"), None);
    assert_eq!(FullChain::from_split_rule(""), None);
    assert_eq!(t1_weight_from_split_rule("TW=-1"), Ok(-1));
    assert_eq!(t1_weight_from_split_rule("NG=5,TW=3"), Ok(3));
    assert_eq!(t1_weight_from_split_rule("NG=5"), Ok(0));
    assert_eq!(t1_weight_from_split_rule("TW=--2"), Err(SplitRuleError::T1WeightNotAnInteger));
    assert_eq!(t1_weight_from_split_rule("TW=99999999999999999999999"), Ok(i64::MAX));
    assert!(input_pre_staging_from_split_rule("IS=1"));
    assert!(input_pre_staging_from_split_rule("IS=10"));
    assert!(!input_pre_staging_from_split_rule("IS=0"));
    assert_eq!(BareNucleus::from_catchall("bareNucleus=only"), Some(BareNucleus::Only));
    assert_eq!(BareNucleus::from_catchall("x=1,bareNucleus=allow"), Some(BareNucleus::Allow));
    assert_eq!(BareNucleus::from_catchall("bareNucleus=maybe"), None);
    assert_eq!(BareNucleus::from_catchall("bareNucleus="), None);
    // the first matching item decides, even with a value PanDA then rejects
    assert_eq!(BareNucleus::from_catchall("bareNucleus=foo,bareNucleus=only"), None);
    assert_eq!(BareNucleus::from_catchall(" bareNucleus=only"), None);
}

#[test]
fn python_number_formats() {
    use report::{py_float, py_num};
    assert_eq!(py_float(1e-5), "1e-05");
    assert_eq!(py_float(0.0001), "0.0001");
    assert_eq!(py_float(250.0), "250.0");
    assert_eq!(py_float(1.5e16), "1.5e+16");
    assert_eq!(py_float(0.1), "0.1");
    assert_eq!(py_float(0.00075), "0.00075");
    assert_eq!(py_num(100.0), "100");
    assert_eq!(py_num(2.5), "2.5");
}

#[test]
fn preset_nucleus_skips_everything_and_draws_nothing() {
    let mut w = World::new();
    w.nuclei[1].state = NucleusState::Disabled;
    w.task.nucleus = Some(1);
    assert_eq!(w.run(CODE), Brokerage::Preset { nucleus: 1 });
    let input = BrokerageInput { task: &w.task, nuclei: &w.nuclei, endpoints: &w.endpoints, prio_rw: &w.prio_rw };
    let mut rng = RngStreams::new(3).stream("test/preset");
    let fresh = rng.clone().next_u64();
    do_brokerage(&input, &TaskBrokerageParams::default(), SEED, &mut rng);
    assert_eq!(rng.next_u64(), fresh, "no draw");
    // a name the site mapper does not know is no preset
    w.task.nucleus = Some(9);
    assert_eq!(cands(&w.run(CODE)), [0, 2]);
}

#[test]
fn all_skipped_is_pending_thirty_minutes() {
    let mut w = World::new();
    for n in &mut w.nuclei {
        n.state = NucleusState::Test;
    }
    for v in BOTH {
        let b = w.run(v);
        let p = pending(&b);
        assert_eq!(p.retry_after_s, 1800);
        assert_eq!(p.reason, PendingReason::NoCandidates { stage: Stage::Status });
        assert_eq!(p.reason.to_string(), "no candidates");
        assert_eq!(lines(&b).len(), 3);
        assert_eq!(b.chosen(), None);
        assert_eq!(b.why_not(2).map(ToString::to_string).as_deref(), Some("due to status=TEST criteria=-status"));
    }
    let w = World { nuclei: vec![], ..World::new() };
    assert_eq!(pending(&w.run(SEED)).reason, PendingReason::NoCandidates { stage: Stage::Status });
}
