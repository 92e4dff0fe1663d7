//! The remaining per-PQ filters of reference §2 with literal numbers, through [`broker`].

use super::*;

fn code() -> JobBrokerParams {
    JobBrokerParams { variant: JobBrokerVariant::PandaServer, ..JobBrokerParams::default() }
}

fn pq(name: &str) -> BrokerQueue {
    BrokerQueue {
        name: name.into(),
        counts: JobCounts { running: 10, ..JobCounts::default() },
        ..BrokerQueue::default()
    }
}

/// The single skip of a one-PQ brokerage (`None` if the PQ is a candidate).
fn why(t: &BrokerTask, q: &BrokerQueue, p: &JobBrokerParams) -> Option<Skip> {
    let r = broker(t, std::slice::from_ref(q), p);
    assert_eq!(r.candidates().len() + r.skipped.len(), 1);
    r.skipped.first().cloned()
}

#[test]
fn disk_io_needs_both_task_and_queue_over_the_limit() {
    let t = BrokerTask { disk_io: Some(3000.0), core_count: Some(8), ..BrokerTask::default() };
    let mut q = pq("IO");
    q.core_count = Some(8);
    q.max_diskio = Some(300.0);
    q.diskio_usage_per_core = 400.0;
    // 3000 // 8 = 375 > 300 and 400 > 300 → temporary.
    let s = why(&t, &q, &code()).expect("skipped");
    assert_eq!((s.stage, s.temporary), (Stage::DiskIo, true));
    assert_eq!(s.to_string(), "  skip site=IO due to diskIO overload criteria=-diskIO");
    q.diskio_usage_per_core = 300.0;
    assert_eq!(why(&t, &q, &code()), None);
    q.diskio_usage_per_core = 400.0;
    q.max_diskio = Some(380.0); // 375 ≤ 380
    assert_eq!(why(&t, &q, &code()), None);
    q.max_diskio = None; // MAX_DISKIO_DEFAULT 1e10
    assert_eq!(why(&t, &q, &code()), None);
}

#[test]
fn transferring_backlog_of_satellites() {
    let t = BrokerTask::default();
    let mut q = pq("SAT");
    q.output_storage_site = Some("SAT_SITE".into());
    q.counts_all = JobCounts { running: 1500, transferring: 3001, ..JobCounts::default() };
    // max(2000, 2×1500) = 3000 < 3001 → temporary.
    let s = why(&t, &q, &code()).expect("skipped");
    assert!(s.temporary);
    assert_eq!(
        s.to_string(),
        "  skip site=SAT due to too many transferring=3001 greater than max(2000,2x1500) criteria=-transferring"
    );
    q.transferring_to_unwritable_nuclei = 1; // 3000 not > 3000
    assert_eq!(why(&t, &q, &code()), None);
    q.transferring_to_unwritable_nuclei = 0;
    q.in_nucleus = true; // nucleus PQs are not checked
    assert_eq!(why(&t, &q, &code()), None);
}

#[test]
fn event_service_seeds_connectivity_and_full_chain() {
    let mut q = pq("Q");
    let es = BrokerTask { use_event_service: true, ..BrokerTask::default() };
    assert_eq!(why(&es, &q, &code()).unwrap().reason, SkipReason::EsNotAllowed);
    q.job_seed = JobSeed::EsHigh;
    assert_eq!(why(&es, &q, &code()).unwrap().reason, SkipReason::LowPrioEsNotAllowed);
    let es_high = BrokerTask { current_priority: 900, ..es.clone() };
    assert_eq!(why(&es_high, &q, &code()), None);
    q.job_seed = JobSeed::Es;
    assert_eq!(why(&BrokerTask::default(), &q, &code()).unwrap().reason, SkipReason::OnlyEs);
    q.job_seed = JobSeed::Std;
    // wnconnectivity `http#IPv6`: http tasks pass, full tasks do not; IP stack must be equal.
    q.wnconnectivity = Some("http#IPv6".into());
    let http = BrokerTask { ip_connectivity: Some(IpConnectivity::Http), ..BrokerTask::default() };
    assert_eq!(why(&http, &q, &code()), None);
    let full = BrokerTask { ip_connectivity: Some(IpConnectivity::Full), ..BrokerTask::default() };
    assert_eq!(
        why(&full, &q, &code()).unwrap().to_string(),
        "  skip site=Q due to insufficient connectivity site=http vs task=full criteria=-network"
    );
    let v4 = BrokerTask { ip_stack: Some("IPv4".into()), ..BrokerTask::default() };
    assert_eq!(
        why(&v4, &q, &code()).unwrap().to_string(),
        "  skip site=Q due to IP stack mismatch site=IPv6 vs task=IPv4 criteria=-network"
    );
    // Full chain on a bare nucleus: nucleus PQs only; otherwise bareNucleus=only PQs are off.
    let nucleus = Some(NucleusInfo { name: "NUC".into(), ..NucleusInfo::default() });
    let fc = BrokerTask { full_chain: true, nucleus: nucleus.clone(), ..BrokerTask::default() };
    let q = pq("Q");
    assert_eq!(why(&fc, &q, &code()).unwrap().reason, SkipReason::NotInNucleusForFullChain);
    let normal = BrokerTask { nucleus, ..BrokerTask::default() };
    let bare = BrokerQueue { bare_nucleus_only: true, ..pq("B") };
    assert_eq!(why(&normal, &bare, &code()).unwrap().reason, SkipReason::OnlyForFullChain);
}

#[test]
fn high_priority_work_shortage_and_io_intensity() {
    // Opportunistic PQs (pledgedcpu = -1) are skipped for priority ≥ 800 only.
    let mut q = pq("OPP");
    q.pledged_cpu = Some(-1.0);
    let hi = BrokerTask { current_priority: 800, ..BrokerTask::default() };
    assert_eq!(why(&hi, &q, &code()).unwrap().reason, SkipReason::Opportunistic);
    assert_eq!(why(&BrokerTask::default(), &q, &code()), None);
    // Inactive (laststart > 2 h) with activated jobs: temporary, for high priority.
    let mut idle = pq("IDLE");
    idle.inactive = true;
    idle.counts_all.activated = 1;
    let s = why(&hi, &idle, &code()).unwrap();
    assert_eq!((s.stage, s.temporary), (Stage::Inactive, true));
    idle.counts_all.activated = 0;
    assert_eq!(why(&hi, &idle, &code()), None);
    // WORK_SHORTAGE: opportunistic out; pledged 100 cores with 80 + 30 busy out.
    let mut p = code();
    p.work_shortage = true;
    assert_eq!(why(&BrokerTask::default(), &q, &p).unwrap().reason, SkipReason::NonPledged);
    let mut pledged = pq("PL");
    pledged.pledged_cpu = Some(100.0);
    pledged.cores_running = 80.0;
    pledged.cores_starting = 30.0;
    assert_eq!(
        why(&BrokerTask::default(), &pledged, &p).unwrap().to_string(),
        "  skip site=PL since nCores(running+starting)=110.0 more than pledgedCPU=100.0 in case of work shortage criteria=-over_pledged"
    );
    pledged.cores_starting = 20.0;
    assert_eq!(why(&BrokerTask::default(), &pledged, &p), None);
    // max_io_intensity.
    let io = BrokerTask { io_intensity: Some(150.0), ..BrokerTask::default() };
    let capped = BrokerQueue { max_io_intensity: Some(100.0), ..pq("MIO") };
    assert_eq!(why(&io, &capped, &code()).unwrap().reason, SkipReason::MaxIoIntensity { task: 150.0, site: 100.0 });
    // SW/HW hook: the caller's verdict, only when transHome is set.
    let sw =
        BrokerQueue { software_ok: Err("without AUTO due to missing SW cache criteria=-cache".into()), ..pq("SW") };
    assert_eq!(why(&BrokerTask::default(), &sw, &code()), None);
    let with_sw = BrokerTask { trans_home_set: true, ..BrokerTask::default() };
    assert_eq!(
        why(&with_sw, &sw, &code()).unwrap().to_string(),
        "  skip site=SW without AUTO due to missing SW cache criteria=-cache"
    );
    // Architecture preference multiplies the weight: 11/10 × 1.25.
    let pref = BrokerQueue { arch_preference_weight: Some(1.25), ..pq("PREF") };
    let r = broker(&BrokerTask::default(), std::slice::from_ref(&pref), &code());
    assert!((r.candidates()[0].weight - 1.1 * 1.25).abs() < 1e-12);
}
