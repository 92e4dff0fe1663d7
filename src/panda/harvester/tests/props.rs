use proptest::prelude::*;

use super::*;
use crate::panda::harvester::config::{MapType, RunMode};

fn opt_limit() -> impl Strategy<Value = Option<i64>> {
    prop_oneof![Just(None), (-5i64..300).prop_map(Some)]
}

fn factor() -> impl Strategy<Value = ActivateWorkerFactor> {
    prop_oneof![
        Just(ActivateWorkerFactor::Auto),
        Just(ActivateWorkerFactor::Static(f64::NAN)),
        Just(ActivateWorkerFactor::Static(f64::INFINITY)),
        (-2.0f64..4.0).prop_map(ActivateWorkerFactor::Static),
    ]
}

fn pilot_row() -> impl Strategy<Value = PilotRow> {
    (prop_oneof![Just("PR"), Just("ALRB"), Just("RC")], 0u64..300, 0u64..50, 0u64..300, 0u64..40, 0u64..500).prop_map(
        |(pt, q, r, run, n, a)| PilotRow {
            pilot_type: pt.to_string().into(),
            n_queue: q,
            n_ready: r,
            n_running: run,
            n_new_workers: n,
            n_activated: a,
        },
    )
}

fn rt_row() -> impl Strategy<Value = RtRow> {
    (
        prop_oneof![Just("SCORE"), Just("MCORE"), Just("SCORE_HIMEM"), Just("ANY"), Just("GPU")],
        0u64..60,
        prop::collection::vec(pilot_row(), 0..3),
    )
        .prop_map(|(rt, commanded, pilots)| RtRow { resource_type: rt.to_string().into(), commanded, pilots })
}

prop_compose! {
    fn config()(
        pull in any::<bool>(), slave in any::<bool>(),
        max_workers in opt_limit(), limit in opt_limit(), ratio in opt_limit(), min in opt_limit(),
        per_cycle in opt_limit(), cores in opt_limit(), cores_ratio in opt_limit(), mem in opt_limit(),
        core_factor in -3i64..6, no_pilots in any::<bool>(),
    ) -> HarvesterQueueConfig {
        let mut c = HarvesterQueueConfig {
            map_type: if pull { MapType::NoJob } else { MapType::OneToOne },
            run_mode: if slave { RunMode::Slave } else { RunMode::SelfMode },
            max_workers,
            n_queue_limit_worker: limit,
            n_queue_limit_worker_ratio: ratio,
            n_queue_limit_worker_min: min,
            max_new_workers_per_cycle: per_cycle,
            n_queue_limit_worker_cores: cores,
            n_queue_limit_worker_cores_ratio: cores_ratio,
            n_queue_limit_worker_memory: mem.map(|m| m * 100),
            ..HarvesterQueueConfig::default()
        };
        c.submitter.n_core_factor = NCoreFactor::Uniform(core_factor as f64);
        c.submitter.no_pilots_when_no_active_jobs = no_pilots;
        c
    }
}

prop_compose! {
    fn state()(
        status in prop_oneof![Just(None), Just(Some(PqStatus::Online)), Just(Some(PqStatus::Offline))],
        stats in prop_oneof![
            Just(JobStats::Unavailable), Just(JobStats::NoActivatedEntry), (0u64..1000).prop_map(JobStats::Activated)
        ],
        rows in prop::collection::vec(rt_row(), 0..4),
        ucore in any::<bool>(), unified in any::<bool>(),
        corecount in prop_oneof![Just(None), (-1i64..16).prop_map(Some)],
        maxrss in prop_oneof![Just(None), (-1i64..40_000).prop_map(Some)],
        qc in 0u64..400, qm in 0u64..40_000, rn in 0u64..500, rc in 0u64..4000, instances in prop::option::of(0usize..4),
    ) -> QueueState {
        QueueState {
            status,
            throttled: None,
            job_stats: stats,
            worker_stats: WorkerStatsMap {
                queue: WorkerCounts { n: 0, core: qc, mem: qm },
                running: WorkerCounts { n: rn, core: rc, mem: rc * 2000 },
            },
            n_harvester_instances: instances,
            cric: CricQueue { corecount, maxrss, unified },
            rows,
            ucore,
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// No input panics; every computed row respects maxWorkers, maxNewWorkersPerCycle and the
    /// universal maxNewWorkers; the Reference variant gives 0 to limited rows; a UCORE cap holds.
    #[test]
    fn define_num_workers_respects_caps(
        cfg in config(), st in state(), f in factor(), universal in prop::option::of(-1i64..200),
        no_pilots in prop::option::of(any::<bool>()), have_cfg in any::<bool>(), head in any::<bool>(),
    ) {
        let settings = SubmitterSettings {
            max_new_workers: universal,
            activate_worker_factor: f,
            no_pilots_when_no_active_jobs: no_pilots,
            ..SubmitterSettings::default()
        };
        let variant = if head { AdjusterVariant::HarvesterHead } else { AdjusterVariant::Reference };
        let config = have_cfg.then_some(&cfg);
        let Ok(d) = define_num_workers(&settings, config, &types(), &st, variant) else { return Ok(()) };
        let sane = cfg.sanitized();
        // The input rows as `define_num_workers` sees them: a missing PR row is added last.
        let zero = PilotRow::new("PR", 0, 0);
        let flat: Vec<&PilotRow> = st.rows.iter().flat_map(|x| {
            let has_pr = x.pilots.iter().any(|p| p.pilot_type == "PR");
            x.pilots.iter().chain((!has_pr).then_some(&zero))
        }).collect();
        prop_assert_eq!(flat.len(), d.rows.len());
        for (r, p) in d.rows.iter().zip(&flat) {
            let n = r.n_new_workers as i64;
            match &r.outcome {
                RowOutcome::Skipped(_) => prop_assert_eq!(n, 0),
                RowOutcome::Limited { kept, .. } => {
                    if !head { prop_assert_eq!(n, 0); }
                    prop_assert!(n <= (*kept).max(0));
                }
                RowOutcome::Computed { .. } => {
                    if let Some(u) = settings.universal_cap() { prop_assert!(n <= u); }
                    if sane.per_cycle() > 0 { prop_assert!(n <= sane.per_cycle()); }
                    prop_assert_eq!(&p.pilot_type, &r.pilot_type);
                    if d.limits.max_workers > 0 {
                        prop_assert!(n <= (d.limits.max_workers - (p.n_queue + p.n_ready + p.n_running) as i64).max(0));
                    }
                }
            }
            if let Some(b) = r.before_ucore { prop_assert!(n <= b.max(0)); }
        }
        if let Some(u) = d.ucore.filter(|u| u.adjusted) {
            let sum: i64 = d.rows.iter().filter(|r| r.resource_type != "ANY").map(|r| r.n_new_workers as i64).sum();
            prop_assert!(sum <= u.max_agg);
        }
    }

    /// Queue-config JSON of any shape: an error or a config, never a panic.
    #[test]
    fn queue_config_parser_never_panics(s in ".{0,200}") {
        let _ = serde_json::from_str::<HarvesterQueueConfig>(&s);
        let _ = ActivateWorkerFactor::parse(&s);
    }

    /// Structured JSON with limit values of every JSON type.
    #[test]
    fn queue_config_limits_of_any_type(v in prop_oneof![
        Just("null".to_string()), Just("true".to_string()), Just("\"x\"".to_string()), Just("[1]".to_string()),
        any::<i64>().prop_map(|i| i.to_string()), any::<f64>().prop_map(|f| format!("{f:?}")),
        Just("18446744073709551615".to_string()),
    ]) {
        let json = format!(r#"{{"maxWorkers": {v}, "nQueueLimitWorker": {v}, "nQueueLimitWorkerCoresRatio": {v}}}"#);
        if let Ok(c) = serde_json::from_str::<HarvesterQueueConfig>(&json) {
            prop_assert!(c.max_workers.is_none_or(|m| m >= 0));
            let _ = worker_limits(&c, &WorkerCounts { n: u64::MAX, core: u64::MAX, mem: u64::MAX });
        }
    }

    /// UPS on arbitrary counts, limits and jobs: never panics; the keep-alive is exactly one SCORE.
    #[test]
    fn ups_never_panics(
        corecount in prop::option::of(-2i64..64), target in prop::option::of(-10i64..5000),
        meanrss in prop::option::of(-1i64..4000), limit in prop::option::of(-20i64..100),
        rts in prop::collection::vec((prop_oneof![Just("SCORE"), Just("MCORE"), Just("SCORE_HIMEM"), Just("X")],
            0u64..1000, 0u64..1000, 0u64..100), 0..5),
        njobs in 0u64..300, avg in (0.0f64..5000.0, 0.0f64..5000.0),
    ) {
        let mut p = UpsQueueConfig { corecount, ups_core_target: target, meanrss, harvester: Some("h".into()), ..UpsQueueConfig::default() };
        if let Some(l) = limit { p.resource_type_limits.insert("HIMEM".into(), l); p.resource_type_limits.insert("MCORE".into(), l); }
        let st = vec![UpsHarvesterStats { harvester_id: "h".into(), rts: rts.iter().map(|&(rt, running, submitted, ready)|
            UpsRtStats { resource_type: rt.into(), running, submitted, ready, to_submit: 0 }).collect() }];
        let kinds = ["SCORE", "MCORE", "SCORE_HIMEM", "MCORE_HIMEM"];
        let shares_ = ["MC", "Reprocessing", "Nope"];
        let act: Vec<UpsJob> = (0..njobs).map(|i| UpsJob {
            panda_id: i, gshare: shares_[(i % 3) as usize].into(), resource_type: kinds[(i % 4) as usize].into(),
            current_priority: (i % 7) as i64,
        }).collect();
        let shares = crate::panda::gshare::sorted_leaves(
            &[crate::panda::gshare::ShareNode::leaf("MC", 1.0), crate::panda::gshare::ShareNode::leaf("Reprocessing", 1.0)],
            &std::collections::BTreeMap::new(),
        );
        let o = ups_new_worker_distribution(&MeanrssParams::default(), Some(&p), &types(), &st, avg, &shares, &act);
        let UpsOutcome::Command { new_workers, trace, .. } = o else { return Err(TestCaseError::fail("no command")) };
        if trace.keepalive { prop_assert_eq!(new_workers, vec![("SCORE".to_string(), 1)]); }
        else { prop_assert!(new_workers.iter().any(|(_, n)| *n > 0)); }
    }
}

proptest! {
    /// queue_config_mapper's sanity pass is idempotent, so a config sanitized once
    /// (`Sanitized`) decides as one sanitized at every decision.
    #[test]
    fn sanitizing_twice_is_sanitizing_once(cfg in config()) {
        let once = cfg.sanitized();
        prop_assert_eq!(once.sanitized(), once);
    }
}
