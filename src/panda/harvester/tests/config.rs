use super::*;
use crate::panda::harvester::config::{MapType, RunMode};
use crate::panda::harvester::resource::{cores_of, under_memory_target};

#[test]
fn submitter_template_defaults() {
    let s = SubmitterSettings::default();
    assert_eq!((s.n_threads, s.n_queues), (3, 3));
    assert_eq!((s.lookup_time.as_secs_f64(), s.lock_interval, s.queue_lock_interval), (60.0, 600, 300));
    assert_eq!((s.check_interval, s.sleep_time), (60, 60));
    assert_eq!(s.max_new_workers, Some(1000));
    assert_eq!(s.activate_worker_factor, ActivateWorkerFactor::Static(1.0));
    assert_eq!(s.no_pilots_when_no_active_jobs, None);
    assert_eq!(s.universal_cap(), Some(1000));
    assert_eq!(SubmitterSettings { max_new_workers: Some(0), ..s.clone() }.universal_cap(), None);
    assert_eq!(SubmitterSettings { max_new_workers: None, ..s }.universal_cap(), None);
}

#[test]
fn queue_config_defaults_and_names() {
    let c = HarvesterQueueConfig::default();
    assert_eq!(c.map_type, MapType::OneToOne);
    assert_eq!(c.run_mode, RunMode::SelfMode);
    assert_eq!((c.max_workers, c.max_new_workers_per_cycle), (Some(0), Some(0)));
    assert_eq!(c.n_queue_limit_worker, None);
    assert_eq!(c.prioritized_prod_source_labels, ["rc_alrb"]);
    assert_eq!(c.prioritized_pilot_types(), ["ALRB"]);
    assert_eq!(c.submitter.n_core_factor, NCoreFactor::Uniform(1.0));
    assert!(!c.submitter.no_pilots_when_no_active_jobs);
    assert_eq!(GDPCONFIG_KEYS, &[("meanrss", "IGNORE_MEANRSS")]);
    assert!(!MeanrssParams::default().ignore_meanrss);
}

#[test]
fn pilot_type_mapping() {
    assert_eq!(prod_source_label_to_pilot_type("rc_alrb"), "ALRB");
    assert_eq!(prod_source_label_to_pilot_type("rc_test2"), "RC");
    assert_eq!(prod_source_label_to_pilot_type("ptest"), "PT");
    assert_eq!(prod_source_label_to_pilot_type("managed"), "PR");
    assert_eq!(prod_source_label_to_pilot_type("user"), "PR");
}

/// Real queue-config JSON: non-integer limits are unset, negatives 0 (sanity pass L586-606).
#[test]
fn queue_config_json_reads_like_the_sanity_pass() {
    let c: HarvesterQueueConfig = serde_json::from_str(
        r#"{"mapType": "NoJob", "runMode": "slave", "maxWorkers": 100, "nQueueLimitWorker": 2.5,
            "nQueueLimitWorkerRatio": -3, "nQueueLimitWorkerMin": "7", "nQueueLimitWorkerCores": true,
            "prioritizedProdSourceLabels": ["rc_test2"],
            "submitter": {"nCoreFactor": {"managed": {"SCORE": 4}}, "noPilotsWhenNoActiveJobs": true}}"#,
    )
    .unwrap();
    assert_eq!(c.map_type, MapType::NoJob);
    assert_eq!(c.run_mode, RunMode::Slave);
    assert_eq!(c.max_workers, Some(100));
    assert_eq!(c.n_queue_limit_worker, None);
    assert_eq!(c.n_queue_limit_worker_ratio, Some(0));
    assert_eq!(c.n_queue_limit_worker_min, None);
    assert_eq!(c.n_queue_limit_worker_cores, Some(1));
    assert_eq!(c.prioritized_pilot_types(), ["RC"]);
    assert!(c.submitter.no_pilots_when_no_active_jobs);
    let m: HarvesterQueueConfig = serde_json::from_str(r#"{"mapType": "ManyToOne"}"#).unwrap();
    assert_eq!(m.map_type, MapType::MultiJobs);
    assert!(serde_json::from_str::<HarvesterQueueConfig>(r#"{"maxWorker": 1}"#).is_err());
}

#[test]
fn sanity_folds_and_caps_the_limits() {
    let c = HarvesterQueueConfig {
        max_workers: Some(100),
        n_queue_limit_worker: Some(150),
        n_queue_limit_worker_max: Some(120),
        n_queue_limit_worker_ratio: Some(20),
        n_queue_limit_worker_min: Some(500),
        n_queue_limit_worker_cores: Some(8),
        n_queue_limit_worker_cores_min: Some(10),
        n_queue_limit_worker_memory: Some(-5),
        ..HarvesterQueueConfig::pull(0, 0)
    };
    let s = c.sanitized();
    assert_eq!((s.n_queue_limit_worker, s.n_queue_limit_worker_max), (Some(100), Some(100)));
    assert_eq!(s.n_queue_limit_worker_min, Some(100));
    assert_eq!(s.n_queue_limit_worker_ratio, Some(20));
    assert_eq!(s.n_queue_limit_worker_cores_min, Some(8));
    assert_eq!(s.n_queue_limit_worker_memory, Some(0));
    // Alias only: nQueueLimitWorker = min(Max, maxWorkers).
    let a = HarvesterQueueConfig { n_queue_limit_worker: None, n_queue_limit_worker_max: Some(70), ..c.clone() };
    assert_eq!(a.sanitized().n_queue_limit_worker, Some(70));
    // Push mapTypes lose the worker ratio and min.
    let p = HarvesterQueueConfig { map_type: MapType::OneToOne, ..c }.sanitized();
    assert_eq!((p.n_queue_limit_worker_ratio, p.n_queue_limit_worker_min), (None, None));
    // maxWorkers unset → 0, and it caps nQueueLimitWorker.
    let z =
        HarvesterQueueConfig { max_workers: None, n_queue_limit_worker: Some(50), ..HarvesterQueueConfig::default() };
    assert_eq!(z.sanitized().max_workers, Some(0));
    assert_eq!(z.sanitized().n_queue_limit_worker, Some(0));
}

fn running(n: u64, core: u64, mem: u64) -> WorkerCounts {
    WorkerCounts { n, core, mem }
}

#[test]
fn worker_limits_static() {
    let none = running(0, 0, 0);
    let d = worker_limits(&HarvesterQueueConfig::default(), &none);
    assert_eq!(
        d,
        WorkerLimits {
            max_workers: 0,
            n_queue_limit_worker: 0,
            n_queue_worker_cores: None,
            n_queue_worker_memory: None
        }
    );
    assert_eq!(worker_limits(&HarvesterQueueConfig::pull(100, 20), &none).n_queue_limit_worker, 20);
    // nQueueLimitWorker unset → maxWorkers.
    let c = HarvesterQueueConfig { max_workers: Some(100), ..HarvesterQueueConfig::default() };
    assert_eq!(worker_limits(&c, &none).n_queue_limit_worker, 100);
    let c = HarvesterQueueConfig { n_queue_limit_worker_cores: Some(800), ..HarvesterQueueConfig::pull(1, 1) };
    assert_eq!(worker_limits(&c, &none).n_queue_worker_cores, Some(800));
}

/// byRatio = int(nRunning × Ratio / 100), floored by Min (default 1), capped by the static limit.
#[test]
fn worker_limits_by_ratio() {
    let c = HarvesterQueueConfig { n_queue_limit_worker_ratio: Some(10), ..HarvesterQueueConfig::pull(1000, 300) };
    // 1234 × 10 / 100 = 123.4 → 123.
    assert_eq!(worker_limits(&c, &running(1234, 0, 0)).n_queue_limit_worker, 123);
    // 5000 → 500, capped by nQueueLimitWorker 300.
    assert_eq!(worker_limits(&c, &running(5000, 0, 0)).n_queue_limit_worker, 300);
    // 15 → 1 (int(1.5)); Min unset → 1.
    assert_eq!(worker_limits(&c, &running(15, 0, 0)).n_queue_limit_worker, 1);
    let m = HarvesterQueueConfig { n_queue_limit_worker_min: Some(5), ..c.clone() };
    assert_eq!(worker_limits(&m, &running(15, 0, 0)).n_queue_limit_worker, 5);
    // Push queue: the ratio is nulled by the sanity pass.
    let p = HarvesterQueueConfig { map_type: MapType::OneToOne, ..c };
    assert_eq!(worker_limits(&p, &running(15, 0, 0)).n_queue_limit_worker, 300);
}

#[test]
fn worker_limits_cores_and_memory_by_ratio() {
    let c = HarvesterQueueConfig {
        n_queue_limit_worker_cores: Some(800),
        n_queue_limit_worker_cores_ratio: Some(50),
        n_queue_limit_worker_memory_ratio: Some(40),
        ..HarvesterQueueConfig::pull(1000, 300)
    };
    let l = worker_limits(&c, &running(100, 1000, 10_000));
    assert_eq!(l.n_queue_worker_cores, Some(500));
    assert_eq!(l.n_queue_worker_memory, Some(4000));
    assert_eq!(worker_limits(&c, &running(100, 3000, 0)).n_queue_worker_cores, Some(800));
    // Nothing running: the floors, Min (unset → 1) × 1 core and × 1000 MB.
    let z = worker_limits(&c, &running(0, 0, 0));
    assert_eq!((z.n_queue_worker_cores, z.n_queue_worker_memory), (Some(1), Some(1000)));
    let m = HarvesterQueueConfig { n_queue_limit_worker_min: Some(4), ..c.clone() };
    let z = worker_limits(&m, &running(0, 0, 0));
    assert_eq!((z.n_queue_worker_cores, z.n_queue_worker_memory), (Some(4), Some(4000)));
    let e = HarvesterQueueConfig { n_queue_limit_worker_cores_min: Some(64), ..c };
    assert_eq!(worker_limits(&e, &running(0, 0, 0)).n_queue_worker_cores, Some(64));
}

#[test]
fn activate_worker_factor_parsing() {
    assert_eq!(ActivateWorkerFactor::parse("auto"), ActivateWorkerFactor::Auto);
    assert_eq!(ActivateWorkerFactor::parse("0.5"), ActivateWorkerFactor::Static(0.5));
    assert_eq!(ActivateWorkerFactor::parse(" 2 "), ActivateWorkerFactor::Static(2.0));
    assert_eq!(ActivateWorkerFactor::parse("1_000"), ActivateWorkerFactor::Static(1000.0));
    assert_eq!(ActivateWorkerFactor::parse("abc"), ActivateWorkerFactor::Static(1.0));
    assert_eq!(ActivateWorkerFactor::parse(""), ActivateWorkerFactor::Static(1.0));
    assert_eq!(ActivateWorkerFactor::Auto.site_factor(Some(4)), 0.25);
    assert_eq!(ActivateWorkerFactor::Auto.site_factor(Some(0)), 1.0);
    assert_eq!(ActivateWorkerFactor::Auto.site_factor(None), 1.0);
    assert_eq!(ActivateWorkerFactor::Static(0.5).site_factor(Some(4)), 0.5);
}

#[test]
fn n_core_factor_lookup() {
    assert_eq!(NCoreFactor::Uniform(4.0).activate_factor("managed", "SCORE", true), 0.25);
    assert_eq!(NCoreFactor::Uniform(2.7).activate_factor("managed", "SCORE", true), 0.5);
    assert_eq!(NCoreFactor::Uniform(0.0).activate_factor("managed", "SCORE", true), 1.0);
    assert_eq!(NCoreFactor::Uniform(f64::NAN).activate_factor("managed", "SCORE", true), 1.0);
    let per: NCoreFactor =
        serde_json::from_str(r#"{"managed": {"SCORE": 8, "Undefined": 2}, "Any": {"MCORE": 4}}"#).unwrap();
    assert_eq!(per.activate_factor("managed", "SCORE", true), 0.125);
    // `managed` is a key, so `Any` is not consulted: default 1.
    assert_eq!(per.activate_factor("managed", "MCORE", true), 1.0);
    // Not UCORE: resource type `Undefined`.
    assert_eq!(per.activate_factor("managed", "SCORE", false), 0.5);
    let any: NCoreFactor = serde_json::from_str(r#"{"Any": {"MCORE": 4}}"#).unwrap();
    assert_eq!(any.activate_factor("managed", "MCORE", true), 0.25);
}

/// `calculate_worker_requirements` on a UCORE PQ of 8 cores and 20000 MB, and its quirks.
#[test]
fn worker_requirements() {
    let t = types();
    let ucore = CricQueue { corecount: Some(8), maxrss: Some(20_000), unified: true };
    assert_eq!(calculate_worker_requirements(&t, "SCORE", &ucore), (1, 2000));
    assert_eq!(calculate_worker_requirements(&t, "MCORE", &ucore), (8, 16_000));
    assert_eq!(calculate_worker_requirements(&t, "SCORE_HIMEM", &ucore), (1, 2500));
    assert_eq!(calculate_worker_requirements(&t, "MCORE_HIMEM", &ucore), (8, 20_000));
    // 10000 / 3 × 3 = 10000.0 in floats: ceil stays 10000.
    let three = CricQueue { corecount: Some(3), maxrss: Some(10_000), unified: true };
    assert_eq!(calculate_worker_requirements(&t, "MCORE_HIMEM", &three), (3, 10_000));
    // Not UCORE: (maxrss, corecount) as returned, i.e. cores and memory swapped.
    let plain = CricQueue { unified: false, ..ucore };
    assert_eq!(calculate_worker_requirements(&t, "SCORE", &plain), (20_000, 8));
    assert_eq!(calculate_worker_requirements(&t, "SCORE", &CricQueue::default()), (0, 1));
    // Unknown type (the catch-all row's `ANY`): (1, 1).
    assert_eq!(calculate_worker_requirements(&t, "ANY", &ucore), (1, 1));
    assert_eq!(cores_of(&t, "MCORE", 8), 8);
    assert_eq!(cores_of(&t, "SCORE_HIMEM", 8), 1);
    assert_eq!(cores_of(&t, "GPU", 8), 1);
    assert_eq!(under_memory_target(&t, 2000.0), ["SCORE", "MCORE"]);
    assert!(under_memory_target(&t, 1500.0).is_empty());
}
