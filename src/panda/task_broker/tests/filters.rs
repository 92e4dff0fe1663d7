//! Each filter alone (nucleus B fails only that one), the order of the filters, and the
//! space check's numbers.

use super::*;

/// B is the only skip, with this PanDA line, and A and C stay.
fn only_b_skipped(b: &Brokerage<'_>, line: &str) {
    assert_eq!(lines(b), [line]);
    assert_eq!(cands(b), [0, 2]);
}

#[test]
fn status_alone() {
    let mut w = World::new();
    w.nuclei[1].state = NucleusState::Disabled;
    for v in BOTH {
        only_b_skipped(&w.run(v), "  skip nucleus=B due to status=DISABLED criteria=-status");
    }
}

#[test]
fn transfer_backlog_alone_and_negative_t1_weight() {
    let mut w = World::new();
    w.nuclei[1].queued_output_files = 2001.0;
    for v in BOTH {
        only_b_skipped(&w.run(v), "  skip nucleus=B due to long transfer backlog criteria=-transfer_backlog");
    }
    // `HAVING SUM(value) > NQUEUED_NUC_CAP`: exactly the cap is no backlog
    w.nuclei[1].queued_output_files = 2000.0;
    assert_eq!(cands(&w.run(CODE)), [0, 1, 2]);
    // t1Weight < 0 skips the check; 0 does not
    w.nuclei[1].queued_output_files = 1e9;
    w.task.t1_weight = -1;
    assert_eq!(cands(&w.run(SEED)), [0, 1, 2]);
    w.task.t1_weight = 0;
    assert_eq!(cands(&w.run(SEED)), [0, 2]);
    // NQUEUED_NUC_CAP from gdpconfig
    let p = TaskBrokerageParams { nqueued_nuc_cap: 2e9, ..TaskBrokerageParams::default() };
    assert_eq!(cands(&w.run_with(&p, SEED, 1)), [0, 1, 2]);
}

#[test]
fn missing_endpoint_seed_skips_code_raises() {
    let mut w = World::new();
    w.nuclei[1].output_endpoints = vec![None];
    only_b_skipped(&w.run(SEED), "  skip nucleus=B since no endpoint with ATLASDATADISK criteria=-match");
    let b = w.run(CODE);
    let p = pending(&b);
    assert_eq!(p.reason, PendingReason::EndpointLookupCrash { nucleus: "B", token: "ATLASDATADISK" });
    assert!(p.reason.to_string().contains("TypeError"));
    // a distributed output dataset is not checked at all
    w.task.outputs[0].distributed = true;
    assert_eq!(cands(&w.run(CODE)), [0, 1, 2]);
}

#[test]
fn read_wan_and_write_wan_alone() {
    let mut w = World::new();
    w.endpoints[1].read_wan = WanStatus::Off;
    for v in BOTH {
        only_b_skipped(&w.run(v), "  skip nucleus=B since B_DATADISK has read_wan=OFF criteria=-source_blacklist");
    }
    let mut w = World::new();
    w.endpoints[1].write_wan = WanStatus::Test;
    for v in BOTH {
        only_b_skipped(
            &w.run(v),
            "  skip nucleus=B since B_DATADISK has write_wan=TEST criteria=-destination_blacklist",
        );
    }
    // a missing status: the seed wants ON, the code skips only DOWNTIME_STATUSES
    let mut w = World::new();
    w.endpoints[1].write_wan = WanStatus::Missing;
    only_b_skipped(
        &w.run(SEED),
        "  skip nucleus=B since B_DATADISK has write_wan=None criteria=-destination_blacklist",
    );
    assert_eq!(cands(&w.run(CODE)), [0, 1, 2]);
}

#[test]
fn disk_space_alone() {
    let mut w = World::new();
    w.endpoints[1] = ep("B_DATADISK", 50.0, 1000.0);
    only_b_skipped(
        &w.run(CODE),
        "  skip nucleus=B since disk shortage (usable 50 TB - projected demand 0 TB < thr 100 TB) at endpoint \
         B_DATADISK criteria=-space",
    );
    only_b_skipped(
        &w.run(SEED),
        "  skip nucleus=B since disk shortage (free 50 TB - reserved 0 TB < thr 100 TB) at endpoint B_DATADISK \
         criteria=-space",
    );
    // DISK_THRESHOLD_<work queue> wins over DISK_THRESHOLD
    let mut p = TaskBrokerageParams::default();
    p.disk_threshold_by_queue.insert("MC".into(), 40.0);
    assert_eq!(cands(&w.run_with(&p, CODE, 1)), [0, 1, 2]);
    w.task.work_queue = "Reprocessing".into();
    assert_eq!(cands(&w.run_with(&p, CODE, 1)), [0, 2]);
}

/// `int(fullRW / 10 / 24 / 3600 × 0.25)`: 3 456 000 000 → 1000 GB; 6 911 654 400 → 1999.9 → 1999.
#[test]
fn projected_demand_numbers() {
    assert_eq!(crate::panda::task_broker::filters::projected_demand_gb(3_456_000_000.0), 1000.0);
    assert_eq!(crate::panda::task_broker::filters::projected_demand_gb(6_911_654_400.0), 1999.0);
    assert_eq!(crate::panda::task_broker::filters::projected_demand_gb(0.0), 0.0);
    assert_eq!(crate::panda::task_broker::filters::projected_demand_gb(f64::NAN), 0.0);
}

/// usable (= free) 103 400 GB, demand 1000 GB, threshold 100 TB = 102 400 GB: the code keeps the
/// nucleus (`102 400 < 102 400` is false), the seed does not (`> diskThreshold`).
#[test]
fn space_threshold_boundary_by_variant() {
    let mut w = World::new();
    w.nuclei[1].full_rw = 3_456_000_000.0;
    w.endpoints[1].space_usable = 103_400.0;
    w.endpoints[1].space_free = 103_400.0;
    assert_eq!(cands(&w.run(CODE)), [0, 1, 2]);
    only_b_skipped(
        &w.run(SEED),
        "  skip nucleus=B since disk shortage (free 100 TB - reserved 0 TB < thr 100 TB) at endpoint B_DATADISK \
         criteria=-space",
    );
    // the seed counts expired secondary data as free; the code reads space_usable only
    w.endpoints[1].space_free = 100_000.0;
    w.endpoints[1].space_expired = 4_000.0;
    assert_eq!(cands(&w.run(SEED)), [0, 1, 2]);
    w.endpoints[1].space_usable = 50_000.0;
    assert_eq!(cands(&w.run(CODE)), [0, 2]);
}

#[test]
fn job_check_alone() {
    let mut w = World::new();
    w.nuclei[1].can_run_jobs = false;
    for v in BOTH {
        only_b_skipped(&w.run(v), "  skip nucleus=B due to missing ability to run jobs criteria=-job");
    }
    for n in &mut w.nuclei {
        n.can_run_jobs = false;
    }
    let b = w.run(CODE);
    assert_eq!(pending(&b).reason.to_string(), "no sites can run jobs");
}

#[test]
fn bare_only_alone() {
    let mut w = World::new();
    w.nuclei[1].bare_nucleus = Some(BareNucleus::Only);
    for v in BOTH {
        only_b_skipped(&w.run(v), "  skip nucleus=B since only full-chain tasks are allowed criteria=-full_chain");
    }
}

/// A change to the world and the reason B is expected to be skipped for.
type Case = (fn(&mut World), &'static str);

/// B fails several filters; the first in code order is the one reported, and once.
#[test]
fn first_failing_filter_is_the_reason() {
    let cases: [Case; 6] = [
        (
            |w| {
                w.nuclei[1].state = NucleusState::Disabled;
                w.nuclei[1].queued_output_files = 1e6;
                w.endpoints[1].read_wan = WanStatus::Off;
                w.nuclei[1].can_run_jobs = false;
            },
            "due to status=DISABLED criteria=-status",
        ),
        (
            |w| {
                w.nuclei[1].queued_output_files = 1e6;
                w.endpoints[1].read_wan = WanStatus::Off;
                w.endpoints[1].space_usable = 0.0;
            },
            "due to long transfer backlog criteria=-transfer_backlog",
        ),
        (
            |w| {
                w.endpoints[1].read_wan = WanStatus::Off;
                w.endpoints[1].write_wan = WanStatus::Off;
                w.endpoints[1].space_usable = 0.0;
            },
            "since B_DATADISK has read_wan=OFF criteria=-source_blacklist",
        ),
        (
            |w| {
                w.endpoints[1].write_wan = WanStatus::Off;
                w.endpoints[1].space_usable = 0.0;
            },
            "since B_DATADISK has write_wan=OFF criteria=-destination_blacklist",
        ),
        (
            |w| {
                w.endpoints[1].space_usable = 0.0;
                w.nuclei[1].can_run_jobs = false;
            },
            "since disk shortage (usable 0 TB - projected demand 0 TB < thr 100 TB) at endpoint B_DATADISK \
             criteria=-space",
        ),
        (
            |w| {
                w.nuclei[1].can_run_jobs = false;
                w.nuclei[1].bare_nucleus = Some(BareNucleus::Only);
            },
            "due to missing ability to run jobs criteria=-job",
        ),
    ];
    for (setup, reason) in cases {
        let mut w = World::new();
        setup(&mut w);
        let b = w.run(CODE);
        assert_eq!(b.skipped().len(), 1, "{reason}");
        assert_eq!(b.why_not(1).map(ToString::to_string).as_deref(), Some(reason));
        assert_eq!(b.why_not(0), None);
    }
}

/// Over several output datasets the endpoint with the smallest free fraction is kept, and a
/// later dataset's failure still drops the nucleus.
#[test]
fn endpoint_check_over_several_datasets() {
    let mut w = World::new();
    w.endpoints.push(ep("A_SCRATCH", 300.0, 1000.0));
    w.nuclei[0].output_endpoints = vec![Some(0), Some(3)];
    w.task.outputs.push(OutputDataset { storage_token: "ATLASSCRATCHDISK".into(), token: 1, distributed: false });
    for n in 1..3 {
        w.nuclei[n].output_endpoints = vec![Some(n), Some(n)];
    }
    let b = w.run(CODE);
    let Brokerage::Assigned(a) = &b else { panic!("{b:?}") };
    let space = a.candidates[0].space.expect("space record");
    assert_eq!((space.free_gb, space.total_gb), (300.0 * 1024.0, 1000.0 * 1024.0));
    w.endpoints[3].write_wan = WanStatus::Off;
    assert_eq!(w.run(CODE).why_not(0).map(SkipReason::stage), Some(Stage::StorageEndpoint));
}
