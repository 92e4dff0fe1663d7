//! Task brokerage views: endpoints, task, nuclei, and full runs of `do_brokerage`.

use super::*;
use crate::panda::job_broker::{self, Stage};
use crate::panda::task_broker::{
    self, BareNucleus, Brokerage, DatasetKind, FullChain, InputDataset, NucleusState, OutputDataset, Parent,
    PendingReason, Replica, Role, SkipReason, WanStatus,
};

const TB: u64 = 1_000_000_000_000;

fn args(task_no: u32, current_priority: i64) -> TaskArgs {
    TaskArgs { task_no, assigning_for_s: Some(600.0), current_priority }
}

#[test]
fn the_example_endpoints_are_ddm_endpoint_rows_in_gib() {
    let w = World::new(example());
    let e = w.view().endpoints(&w.dynamic());
    assert_eq!(e.len(), 3);
    // BNL_DATADISK: 30000 TB, 20000 used of which 500 expired.
    let (free, expired, total) = (gib((10_000 * TB) as f64), gib((500 * TB) as f64), gib((30_000 * TB) as f64));
    assert_eq!(e[0].name, "BNL_DATADISK");
    assert!(!e[0].is_tape);
    assert_eq!((e[0].read_wan, e[0].write_wan), (WanStatus::On, WanStatus::On));
    assert_eq!((e[0].space_free, e[0].space_expired, e[0].space_total), (free, expired, total));
    assert_eq!(e[0].space_usable, free + expired);
    assert_eq!(e[0].space_total, 27_939_677.238_464_355, "GB of 1024³ bytes, as the Configurator writes them");
    // A tape without a size has no Rucio usage row: NULL space, read as 0.
    assert!(e[1].is_tape);
    assert_eq!((e[1].space_usable, e[1].space_free, e[1].space_expired, e[1].space_total), (0.0, 0.0, 0.0, 0.0));
    // AGLT2_DATADISK: write_wan TEST in the scenario.
    assert_eq!((e[2].read_wan, e[2].write_wan), (WanStatus::On, WanStatus::Test));
    assert_eq!(e[2].space_free, gib((11_239_990_000_000_000u64 - 9_000 * TB) as f64));
}

#[test]
fn endpoint_space_follows_the_snapshot_and_expired_space_stays_within_the_used() {
    let mut w = World::new(example());
    w.storages.reserve(0, TB).unwrap();
    let e = w.view().endpoints(&w.dynamic());
    assert_eq!(e[0].space_free, gib((9_999 * TB) as f64));
    assert_eq!(e[0].space_expired, gib((500 * TB) as f64));
    // Deleting down to 100 TB used: the 500 TB expired cannot exceed what is used.
    w.storages.release(0, 19_901 * TB).unwrap();
    let e = w.view().endpoints(&w.dynamic());
    assert_eq!(e[0].space_expired, gib((100 * TB) as f64));
    assert_eq!(e[0].space_usable, gib((29_900 * TB) as f64) + gib((100 * TB) as f64));
}

#[test]
fn the_task_spec_of_each_example_stream() {
    let v = World::new(example()).view();
    let mc = v.task_spec(0, args(3, 850)).unwrap();
    assert_eq!((mc.task_priority, mc.current_priority), (900, 850));
    assert_eq!((mc.io_intensity, mc.t1_weight, mc.full_chain), (Some(150.0), -1, Some(FullChain::Require)));
    assert!(!mc.input_pre_staging && !mc.task_broker_on_master);
    assert_eq!(mc.work_queue, "MC Simulation Full");
    assert_eq!((mc.nucleus, mc.frozen_for_s, mc.parent), (None, Some(600.0), Parent::Itself));
    assert_eq!(
        mc.inputs,
        vec![InputDataset {
            name: "mc23.evnt.3".into(),
            kind: DatasetKind::Regular,
            master: true,
            constituents: vec![vec![
                Replica {
                    endpoint: 0,
                    total_files: 200,
                    total_bytes: 120_000_000_000,
                    found_files: 200,
                    available_bytes: 120_000_000_000
                },
                // fraction 0.5: 100 whole files of 600 MB (10⁹ bytes per GB, as Rucio).
                Replica {
                    endpoint: 2,
                    total_files: 200,
                    total_bytes: 120_000_000_000,
                    found_files: 100,
                    available_bytes: 60_000_000_000
                },
            ]],
        }]
    );
    assert_eq!(mc.outputs, vec![OutputDataset { storage_token: String::new(), token: 0, distributed: false }]);
    let re = v.task_spec(1, args(0, 800)).unwrap();
    assert!(re.input_pre_staging);
    assert_eq!((re.t1_weight, re.full_chain, re.io_intensity), (0, None, None));
    assert_eq!(re.work_queue, "Reprocessing default");
    assert_eq!(
        re.inputs[0].constituents,
        vec![vec![Replica {
            endpoint: 1,
            total_files: 2000,
            total_bytes: 5_000_000_000_000,
            found_files: 2000,
            available_bytes: 5_000_000_000_000
        }]]
    );
    assert_eq!(v.task_spec(2, args(0, 800)), None, "no third production stream");
    // task RW: (nEvents − used) × cpuTime (HS06·s per event).
    assert_eq!(v.task_rw(0, 50_000), Some(150_000.0 * 400.0));
}

#[test]
fn the_example_nuclei_and_why_they_cannot_run_jobs() {
    let w = World::new(example());
    let (v, d) = (w.view(), w.dynamic());
    let pd = ProdDynamic { nucleus_rw: &[3.6e9, 0.0], ..Default::default() };
    let n = v.nuclei(1, 800, &d, &pd).unwrap();
    assert_eq!(n.len(), 2);
    assert_eq!(
        (n[0].name.as_str(), n[0].state, n[0].role, n[0].bare_nucleus),
        ("BNL", NucleusState::Active, Role::Nucleus, None)
    );
    assert_eq!(
        (n[1].name.as_str(), n[1].role, n[1].bare_nucleus),
        ("AGLT2", Role::Satellite, Some(BareNucleus::Allow))
    );
    // Files queued into the site: the AGLT2→BNL link's 40 background files; nothing into AGLT2.
    assert_eq!((n[0].queued_output_files, n[1].queued_output_files), (40.0, 0.0));
    assert_eq!((n[0].full_rw, n[1].full_rw), (3.6e9, 0.0));
    assert_eq!((n[0].output_endpoints.clone(), n[0].input_endpoints.clone()), (vec![Some(0)], vec![0, 1]));
    assert_eq!((n[1].output_endpoints.clone(), n[1].input_endpoints.clone()), (vec![Some(2)], vec![]));
    assert_eq!((n[0].can_run_jobs, n[1].can_run_jobs), (false, false));
    // Why, in hint mode: BNL's only production PQ is for jumbo jobs, AGLT2's is opportunistic.
    let q = query(1, None, 800);
    let r = job_broker::broker(&v.broker_task(&q, &d).unwrap(), &v.broker_queues(&q, &d, &pd), v.job_broker_params());
    assert_eq!(r.why(0).map(|s| (s.stage, s.temporary)), Some((Stage::Jumbo, false)));
    assert_eq!(r.why(1).map(|s| (s.stage, s.temporary)), Some((Stage::Opportunistic, false)));
    // At priority 100 AGLT2 is no longer filtered as opportunistic but still has no storage.
    let r = job_broker::broker(
        &v.broker_task(&query(1, None, 100), &d).unwrap(),
        &v.broker_queues(&query(1, None, 100), &d, &pd),
        v.job_broker_params(),
    );
    assert_eq!(r.why(1).map(|s| (s.stage, s.temporary)), Some((Stage::Storage, true)));
    assert_eq!(v.job_check(1, 100, &d, &pd), Some(vec![false, false]));
}

#[test]
fn the_example_keeps_both_production_streams_pending_and_says_why() {
    let w = World::new(example());
    let (v, d, pd) = (w.view(), w.dynamic(), ProdDynamic::default());
    let prio = [0.0, 0.0];
    let run = |stream: usize, prio_now: i64| {
        let tb = v.task_brokerage(stream, args(0, prio_now), &d, &pd).unwrap();
        let out =
            task_broker::do_brokerage(&tb.input(&prio), v.task_brokerage_params(), v.task_broker_variant(), &mut rng());
        let skipped: Vec<(usize, String)> = out.skipped().iter().map(|s| (s.nucleus, s.reason.to_string())).collect();
        let pending = match out {
            Brokerage::Pending(p) => Some(p.reason.to_string()),
            _ => None,
        };
        (pending, skipped)
    };
    // Reprocessing: BNL is the only candidate (AGLT2 is a satellite) and it has no PQ to run jobs.
    let (pending, skipped) = run(1, 800);
    assert_eq!(pending.as_deref(), Some(PendingReason::NoSitesCanRunJobs.to_string().as_str()));
    assert_eq!(skipped, vec![(0, SkipReason::NoJobs.to_string())]);
    // mc_simul (full chain, require): AGLT2 (bare satellite) cannot be written to over WAN, BNL
    // cannot run jobs.
    let (pending, skipped) = run(0, 900);
    assert_eq!(pending.as_deref(), Some("no sites can run jobs"));
    let dest = SkipReason::DestinationBlacklist { endpoint: "AGLT2_DATADISK", status: WanStatus::Test };
    assert_eq!(skipped, vec![(1, dest.to_string()), (0, SkipReason::NoJobs.to_string())]);
}

#[test]
fn in_the_runnable_example_reprocessing_goes_to_bnl_with_panda_s_weight() {
    let w = World::new(runnable_example());
    let (v, d, pd) = (w.view(), w.dynamic(), ProdDynamic::default());
    let tb = v.task_brokerage(1, args(0, 800), &d, &pd).unwrap();
    assert_eq!(tb.nuclei.iter().map(|n| n.can_run_jobs).collect::<Vec<_>>(), vec![true, true]);
    let prio = [0.0, 0.0];
    let out =
        task_broker::do_brokerage(&tb.input(&prio), v.task_brokerage_params(), v.task_broker_variant(), &mut rng());
    assert_eq!(out.chosen(), Some(0));
    let Brokerage::Assigned(a) = out else { panic!("assigned") };
    assert_eq!(a.candidates.len(), 1);
    // Seed weight: 1/max(50, RW=0) × (input on tape: size 5e12/5e12, then 0.001) × free fraction
    // (free + expired)/total × min(1000 TB cutoff, ⌊free/1024⌋ TB).
    let (free, expired, total) = (gib((10_000 * TB) as f64), gib((500 * TB) as f64), gib((30_000 * TB) as f64));
    let mut w8 = 1.0 / 50.0;
    w8 *= 5e12;
    w8 /= 5e12;
    w8 *= 0.001;
    w8 *= (free + expired) / total;
    w8 *= f64::min(1000.0, (free / 1024.0).floor());
    assert_eq!(a.candidates[0].weight, w8);
    // mc_simul still cannot run: BNL's PQ rejects its CPU spec, AGLT2's has one core for 8.
    let tb = v.task_brokerage(0, args(0, 900), &d, &pd).unwrap();
    assert_eq!(tb.nuclei.iter().map(|n| n.can_run_jobs).collect::<Vec<_>>(), vec![false, false]);
    let q = query(0, None, 900);
    let r = job_broker::broker(&v.broker_task(&q, &d).unwrap(), &v.broker_queues(&q, &d, &pd), v.job_broker_params());
    assert_eq!(r.why(0).map(|s| s.stage), Some(Stage::Software));
    assert_eq!(r.why(1).map(|s| s.stage), Some(Stage::CoreCount));
}

#[test]
fn the_small_scenario_assigns_its_cpu_task_to_the_nucleus() {
    let w = World::new(small());
    let (v, d, pd) = (w.view(), w.dynamic(), ProdDynamic::default());
    let tb = v.task_brokerage(0, args(1, 500), &d, &pd).unwrap();
    assert_eq!(tb.nuclei.len(), 1);
    assert!(tb.nuclei[0].can_run_jobs);
    // 150 background files on SATC→NUC: queued into NUC.
    assert_eq!(tb.nuclei[0].queued_output_files, 150.0);
    let prio = [0.0];
    let out =
        task_broker::do_brokerage(&tb.input(&prio), v.task_brokerage_params(), v.task_broker_variant(), &mut rng());
    assert_eq!(out.chosen(), Some(0));
    assert!(out.skipped().is_empty());
    // A full nucleus: with 900 TB used of 1000 and RW demanding the rest, the space check fails.
    let pd = ProdDynamic { nucleus_rw: &[1e13], ..Default::default() };
    let tb = v.task_brokerage(0, args(1, 500), &d, &pd).unwrap();
    let out =
        task_broker::do_brokerage(&tb.input(&prio), v.task_brokerage_params(), v.task_broker_variant(), &mut rng());
    assert!(matches!(out.why_not(0), Some(SkipReason::DiskShortage { .. })), "{:?}", out.skipped());
}

#[test]
fn input_completeness_of_the_streams() {
    let v = World::new(example()).view();
    let mc = v.completeness(0).unwrap();
    // BNL_DATADISK holds all of mc23.evnt; AGLT2_DATADISK half (100 missing > 10, 50 % < 90 %).
    assert_eq!((mc.complete_locations.clone(), mc.remote_source_available, mc.error.clone()), (vec![0], true, None));
    let re = v.completeness(1).unwrap();
    assert_eq!((re.complete_locations.clone(), re.remote_source_available), (vec![1], true));
    // Readable only over LAN: no remote source; readable over neither: the brokerage stops.
    let mut s = example();
    s.storages[0].read_wan = StorageStatus::Off;
    let v = ProdView::new(&s);
    assert_eq!(
        (v.completeness(0).unwrap().remote_source_available, v.completeness(0).unwrap().error.clone()),
        (false, None)
    );
    s.storages[0].read_lan = StorageStatus::Test;
    let v = ProdView::new(&s);
    assert_eq!(v.completeness(0).unwrap().error.as_deref(), Some("mc23.evnt is incomplete at any online storage"));
    // A pre-staged dataset is not checked.
    s.storages[1].read_wan = StorageStatus::Off;
    s.storages[1].read_lan = StorageStatus::Off;
    assert_eq!(ProdView::new(&s).completeness(1).unwrap().error, None);
    assert_eq!(v.completeness(9), None);
}
