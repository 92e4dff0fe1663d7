//! Data lookup (`getNucleiWithData`) and the data-locality rules, with the rule that disables
//! the check.

use super::*;

const GB: u64 = 1024 * 1024 * 1024;

fn replica(endpoint: usize, total_files: u64, total_bytes: u64, found_files: u64, available_bytes: u64) -> Replica {
    Replica { endpoint, total_files, total_bytes, found_files, available_bytes }
}

fn dataset(name: &str, replicas: Vec<Replica>) -> InputDataset {
    InputDataset { name: name.into(), kind: DatasetKind::Regular, master: true, constituents: vec![replicas] }
}

/// The world plus a T2 disk (endpoint 3, no nucleus) and one input dataset of 1000 files,
/// 10 GiB: complete at A and at the T2, 50 files / 0.5 GiB at B, nothing at C.
fn world() -> World {
    let mut w = World::new();
    w.endpoints.push(ep("T2_DATADISK", 100.0, 100.0));
    w.task.inputs = vec![dataset(
        "mc.input",
        vec![
            replica(0, 1000, 10 * GB, 1000, 10 * GB),
            replica(1, 1000, 10 * GB, 50, GB / 2),
            replica(3, 1000, 10 * GB, 1000, 10 * GB),
        ],
    )];
    w
}

#[test]
fn size_rule() {
    let w = world();
    for v in BOTH {
        let b = w.run(v);
        assert_eq!(cands(&b), [0]);
        assert_eq!(
            lines(&b),
            [
                "  skip nucleus=B due to insufficient input size 536870912B < 10737418240*0.1 criteria=-insize",
                "  skip nucleus=C due to insufficient input size 0B < 10737418240*0.1 criteria=-insize",
            ]
        );
        let Brokerage::Assigned(a) = &b else { unreachable!() };
        assert_eq!(a.locality, Locality::Checked);
    }
}

/// Exactly 10 % local: the code keeps B (`ava < tot × 0.1` is false), the seed ("must be larger
/// than") does not.
#[test]
fn size_fraction_boundary_by_variant() {
    let mut w = world();
    w.task.inputs[0].constituents[0][1] = replica(1, 1000, 10 * GB, 100, GB);
    assert_eq!(cands(&w.run(CODE)), [0, 1]);
    assert_eq!(cands(&w.run(SEED)), [0]);
}

/// 1000 files of 0.5 GiB in all (under the 1 GB size threshold), 50 at B: the code's file-count
/// rule drops B (`1000 > 100` files and `50 < 1000 × 0.1`); the seed gates the rule on the total
/// input *size* (0.5 GB) being above INPUT_NUM_THRESHOLD (100), so B stays (reference ⚠).
#[test]
fn file_count_rule_by_variant() {
    let mut w = world();
    let half = GB / 2;
    w.task.inputs[0].constituents[0] = vec![
        replica(0, 1000, half, 1000, half),
        replica(1, 1000, half, 50, 25 * GB / 1000),
        replica(3, 1000, half, 1000, half),
    ];
    let b = w.run(CODE);
    assert_eq!(cands(&b), [0]);
    assert_eq!(lines(&b)[0], "  skip nucleus=B due to short number of input files 50 < 1000*0.1 criteria=-innum");
    assert_eq!(cands(&w.run(SEED)), [0, 1, 2]);
}

#[test]
fn data_carousel_keeps_any_replica() {
    let mut w = world();
    w.task.input_pre_staging = true;
    for v in BOTH {
        let b = w.run(v);
        assert_eq!(cands(&b), [0, 1]);
        assert_eq!(b.why_not(2).map(SkipReason::stage), Some(Stage::Data));
    }
}

/// The input is complete only at the T2: no nucleus passes.
fn nowhere_local() -> World {
    let mut w = world();
    w.task.inputs[0].constituents[0] = vec![replica(3, 1000, 10 * GB, 1000, 10 * GB)];
    w
}

#[test]
fn locality_disabled_when_io_low_and_input_small() {
    let w = nowhere_local();
    for v in BOTH {
        let b = w.run(v);
        assert_eq!(cands(&b), [0, 1, 2]);
        assert!(b.skipped().is_empty());
        let Brokerage::Assigned(a) = &b else { unreachable!() };
        assert!(a.candidates.iter().all(|c| c.data.is_none()), "no data factor once disabled");
        assert_eq!(
            a.locality.to_string(),
            "  disable data locality check since no nucleus has input data, (ioIntensity (None) is None or less than \
             200 kBPerS and input size (10 GB) is less than 10000) or (task.currentPriority (500) is higher than or \
             equal to 800) or the task is in assigning for 7 days"
        );
    }
    // ioIntensity exactly MIN_IO_INTENSITY_WITH_LOCAL_DATA still counts as low
    let mut w = nowhere_local();
    w.task.io_intensity = Some(200.0);
    assert_eq!(cands(&w.run(CODE)), [0, 1, 2]);
}

#[test]
fn locality_unavoidable_when_io_high() {
    let mut w = nowhere_local();
    w.task.io_intensity = Some(500.0);
    for v in BOTH {
        let b = w.run(v);
        let p = pending(&b);
        assert_eq!(p.reason, PendingReason::NoCandidates { stage: Stage::Data });
        assert_eq!(p.skipped.len(), 3);
        assert!(matches!(p.locality, Locality::Unavoidable(_)));
        assert!(
            p.locality.to_string().starts_with("  the following conditions required to disable data locality check")
        );
    }
    // a large input blocks the disabling too: 10 001 GB > MIN_INPUT_SIZE_WITH_LOCAL_DATA
    let mut w = nowhere_local();
    w.task.inputs[0].constituents[0] = vec![replica(3, 1000, 10_001 * GB, 1000, 10_001 * GB)];
    assert!(matches!(w.run(CODE), Brokerage::Pending(_)));
}

/// Priority ≥ MAX_TASK_PRIO_WITH_LOCAL_DATA disables the check: `currentPriority` in the code,
/// `taskPriority` in the seed.
#[test]
fn high_priority_disables_by_variant() {
    let mut w = nowhere_local();
    w.task.io_intensity = Some(500.0);
    w.task.current_priority = 800;
    w.task.task_priority = 500;
    assert_eq!(cands(&w.run(CODE)), [0, 1, 2]);
    assert!(matches!(w.run(SEED), Brokerage::Pending(_)));
    w.task.task_priority = 800;
    w.task.current_priority = 799;
    assert_eq!(cands(&w.run(SEED)), [0, 1, 2]);
    assert!(matches!(w.run(CODE), Brokerage::Pending(_)));
}

/// In `assigning` for more than DATA_LOCATION_CHECK_PERIOD days: no check, yet the weight keeps
/// its data factor (the code does not clear the data map on that path).
#[test]
fn frozen_task_skips_the_check_but_keeps_the_data_factor() {
    let mut w = world();
    w.task.frozen_for_s = Some(8.0 * 86_400.0);
    let b = w.run(CODE);
    assert_eq!(cands(&b), [0, 1, 2]);
    let Brokerage::Assigned(a) = &b else { unreachable!() };
    assert_eq!(a.locality.to_string(), "disabled data check since the task was in assigning for 7 days");
    let d = a.candidates[1].data.expect("data factor kept");
    assert_eq!((d.ava_size_any, d.tot_size), (GB / 2, 10 * GB));
    // exactly 7 days is not more than 7 days
    w.task.frozen_for_s = Some(7.0 * 86_400.0);
    assert_eq!(cands(&w.run(CODE)), [0]);
    // DATA_LOCATION_CHECK_PERIOD = 0 reads as 7
    let p = TaskBrokerageParams { data_location_check_period: 0.0, ..TaskBrokerageParams::default() };
    w.task.frozen_for_s = Some(6.0 * 86_400.0);
    assert_eq!(cands(&w.run_with(&p, CODE, 1)), [0]);
}

#[test]
fn lookup_needs_a_remote_source_and_skips_some_datasets() {
    let mut w = world();
    // only B's partial replica and A's copy, A's endpoint not readable over WAN: no complete source
    w.task.inputs[0].constituents[0] =
        vec![replica(0, 1000, 10 * GB, 1000, 10 * GB), replica(1, 1000, 10 * GB, 50, GB)];
    w.endpoints[0].read_wan = WanStatus::Off;
    w.endpoints[0].write_wan = WanStatus::On;
    let b = w.run(CODE);
    assert_eq!(
        pending(&b).reason.to_string(),
        "dataset=mc.input is incomplete/missing at online endpoints with read_wan=ON"
    );
    // pseudo, DBR and log datasets are not looked up
    for kind in [DatasetKind::Pseudo, DatasetKind::Dbr, DatasetKind::Log] {
        w.task.inputs[0].kind = kind;
        assert!(matches!(w.run(CODE), Brokerage::Assigned(_)), "{kind:?}");
    }
    // a secondary dataset is ignored only with taskBrokerOnMaster
    w.task.inputs[0].kind = DatasetKind::Regular;
    w.task.inputs[0].master = false;
    assert!(matches!(w.run(CODE), Brokerage::Pending(_)));
    w.task.task_broker_on_master = true;
    let b = w.run(CODE);
    let Brokerage::Assigned(a) = &b else { panic!("{b:?}") };
    assert_eq!(a.locality, Locality::NoInputData);
}

#[test]
fn get_nuclei_with_data_rules() {
    let mut eps = vec![ep("A_DATADISK", 1.0, 1.0), ep("A_TAPE", 1.0, 1.0)];
    eps[1].is_tape = true;
    let a = NucleusSpec { input_endpoints: vec![0, 1], ..nucleus("A", 0) };
    // complete on tape, 40 of 100 on disk: disk 40, any 100
    let ds = dataset("d", vec![replica(1, 100, 1000, 100, 1000), replica(0, 100, 1000, 40, 400)]);
    let av = data::get_nuclei_with_data(&ds, &a, &eps);
    assert_eq!((av.ava_num_disk, av.ava_num_any, av.ava_size_disk, av.ava_size_any), (40, 100, 400, 1000));
    assert_eq!((av.tot_num, av.tot_size), (100, 1000));
    // a complete disk replica ends the loop: the tape replica after it is not seen
    let ds = dataset("d", vec![replica(0, 100, 1000, 100, 1000), replica(1, 100, 1000, 100, 999)]);
    let av = data::get_nuclei_with_data(&ds, &a, &eps);
    assert_eq!((av.ava_num_disk, av.ava_num_any, av.ava_size_any), (100, 100, 1000));
    // totals come from the first row with a non-zero count; unassociated rows still set them
    let ds = dataset("d", vec![replica(7, 0, 5, 0, 0), replica(7, 300, 3000, 300, 3000), replica(0, 999, 9, 20, 200)]);
    let av = data::get_nuclei_with_data(&ds, &a, &eps);
    assert_eq!((av.tot_num, av.tot_size, av.ava_num_disk), (300, 3000, 20));
    // container: availabilities summed over constituents, totals of the last one (quirk)
    let ds = InputDataset {
        name: "cont/".into(),
        constituents: vec![vec![replica(0, 100, 100, 100, 100)], vec![replica(0, 20, 10, 10, 5)]],
        ..dataset("c", vec![])
    };
    let av = data::get_nuclei_with_data(&ds, &a, &eps);
    assert_eq!((av.tot_num, av.tot_size, av.ava_num_disk, av.ava_size_disk), (20, 10, 110, 105));
    // the task sums per dataset, totals included
    let mut sum = av;
    sum.add(&av);
    assert_eq!((sum.tot_num, sum.ava_num_any), (40, 220));
}
