//! Job brokerage views: `BrokerTask`, `BrokerQueue`, and full runs of `job_broker::broker`.

use super::*;
use crate::panda::job_broker::{self, Downtime, EndpointStatus, LocalInput, QueueStatus, SkipReason, Stage};
use crate::panda::network::LinkMetrics;

#[test]
fn the_broker_task_of_mc_simul() {
    let w = World::new(example());
    let (v, d) = (w.view(), w.dynamic());
    let q = JobQuery { stream: 0, nucleus: Some(1), current_priority: 900, chunk: Chunk { jobs: 25, scout: true } };
    let t = v.broker_task(&q, &d).unwrap();
    assert_eq!((t.prod_source_label.as_str(), t.processing_type.as_str()), ("managed", "simul"));
    assert_eq!((t.gshare.as_deref(), t.work_queue_name.as_str()), (Some("MC Simulation Full"), "MC Simulation Full"));
    assert_eq!((t.current_priority, t.resource_type.as_str(), t.is_scout, t.is_merging), (900, "MCORE", true, false));
    assert_eq!((t.core_count, t.ram_count, t.ram_per_core, t.base_ram_count), (Some(8), Some(2000.0), true, 0.0));
    assert_eq!((t.t1_weight, t.io_intensity, t.disk_io), (-1, Some(150.0), None));
    // 200 kB/event × 1024; 1000 events per job = one 600 MB file of 200 (1000 events each).
    assert_eq!(t.disk.out_disk_bytes, 204_800.0);
    assert!(t.disk.out_scales_with_events);
    assert_eq!(t.disk.work_disk_bytes, None);
    assert_eq!(t.disk.max_events_per_job, 1000.0);
    assert_eq!((t.disk.max_effective_input_bytes, t.disk.max_input_bytes), (6e8, 6e8));
    assert_eq!((t.walltime.cpu_time, t.walltime.cpu_efficiency, t.walltime.base_walltime), (Some(400.0), 90.0, 600.0));
    assert!(t.walltime.use_hs06 && t.walltime.cpu_time_unit_set && t.trans_home_set);
    // The chunk: 25 jobs read 25 files.
    assert_eq!((t.total_input_files, t.total_input_bytes), (25, 1.5e10));
    assert!(t.remote_source_available && t.complete_replica_locations_known);
    // Nucleus AGLT2: a bare satellite, so the full-chain task keeps to its PQs; as a satellite it
    // is not in `nucleus_with_storages_unwritable_over_wan` although its write_wan is TEST.
    assert!(t.full_chain);
    let n = t.nucleus.unwrap();
    assert_eq!(
        (n.name.as_str(), n.output_endpoint.as_str(), n.write_wan_down, n.total_queued_files),
        ("AGLT2", "AGLT2_DATADISK", None, 0)
    );
    let t = v.broker_task(&JobQuery { nucleus: Some(0), ..q }, &d).unwrap();
    assert!(!t.full_chain, "BNL has no bare-nucleus mode");
    assert_eq!(t.nucleus.map(|n| (n.total_queued_files, n.write_wan_down)), Some((40, None)));
    // The reprocessing task splits one 2.5 GB file per job; hint mode has no nucleus.
    let t = v.broker_task(&query(1, None, 800), &d).unwrap();
    assert_eq!((t.resource_type.as_str(), t.disk.max_events_per_job, t.disk.max_input_bytes), ("SCORE", 500.0, 2.5e9));
    assert_eq!((t.total_input_files, t.ram_count, t.nucleus.is_none()), (1, None, true));
    assert_eq!(v.broker_task(&query(0, Some(2), 900), &d).map(|_| ()), None, "no third nucleus");
}

#[test]
fn a_nucleus_unwritable_over_wan_is_flagged_only_for_real_nuclei() {
    let mut s = example();
    s.storages[0].write_wan = StorageStatus::Off;
    let w = World::new(s);
    let t = w.view().broker_task(&query(1, Some(0), 800), &w.dynamic()).unwrap();
    assert_eq!(t.nucleus.unwrap().write_wan_down, Some(Downtime::Off));
}

#[test]
fn the_broker_queues_of_the_example() {
    let mut w = World::new(example());
    // BNL: 12 running and 3 activated jobs of the reprocessing gshare (leaf 1), 2 of another;
    // it last started a job 3 h ago; 5 pilots running, 2 queued.
    w.queue_gshare_jobs[0][1] = JobCounts { running: 12, activated: 3, ..Default::default() };
    w.queue_jobs[0] = JobCounts { running: 14, activated: 3, transferring: 4, ..Default::default() };
    w.last_start[0] = Some(SimTime::ZERO);
    w.now = SimTime::from_secs(3 * 3600);
    w.workers_running[0] = WorkerCounts { n: 5, core: 40, mem: 0 };
    w.workers_queued[0] = WorkerCounts { n: 2, core: 16, mem: 0 };
    let (v, d) = (w.view(), w.dynamic());
    assert_eq!(v.production_queues().collect::<Vec<_>>(), vec![0, 2], "ANALY_BNL_GPU is an analysis PQ");
    let rt = [[JobCounts::default(); 4]; 3];
    let mut rt_bnl = rt;
    rt_bnl[1][ResourceType::Score.index()] = JobCounts { running: 9, ..Default::default() };
    let rt_jobs = vec![rt_bnl.to_vec(), rt.to_vec(), rt.to_vec()];
    let pd = ProdDynamic {
        live_counts: &[7, 0, 0],
        transferring_to_nucleus: &[vec![1, 2], vec![], vec![]],
        rt_jobs: Some(&rt_jobs),
        ..Default::default()
    };
    let qs = v.broker_queues(&query(1, Some(0), 800), &d, &pd);
    assert_eq!(qs.len(), 2);
    let b = &qs[0];
    assert_eq!((b.name.as_str(), b.status, b.ucore), ("BNL", QueueStatus::Online, true));
    // The UCORE PQ as its SCORE child: 1 core, maxrss min(1 × 2000, 16000 × 1/8).
    assert_eq!((b.core_count, b.maxrss, b.minrss), (Some(1), 2000, 0));
    assert_eq!((b.corepower, b.maxtime, b.mintime, b.maxwdir), (12.5, 172_800, 0, 40_000));
    assert_eq!((b.direct_io, b.always_direct_io, b.pledged_cpu), (true, false, Some(5000.0)));
    assert_eq!((b.fairshare.raw.as_str(), b.fairshare.terms.len()), ("type=evgen:20%,type=any:80%", 2));
    assert_eq!(
        (b.use_jumbo_jobs, b.min_events_for_jumbo, b.use_only_local_data, b.bare_nucleus_only),
        (true, None, false, false)
    );
    assert_eq!(
        (b.wnconnectivity.as_deref(), b.wn_ip_stack(), b.transferring_limit),
        (Some("full#IPv4"), Some("IPv4"), 0)
    );
    assert_eq!((b.in_nucleus, b.shares_nucleus_storage, b.output_storage_site.as_deref()), (true, false, Some("BNL")));
    assert_eq!(b.link, Link::Nucleus);
    let usable = gib((10_000 * 1_000_000_000_000u64) as f64) + gib((500 * 1_000_000_000_000u64) as f64);
    assert_eq!(b.output_endpoint, Some(("BNL_DATADISK".to_string(), usable)));
    // read_lan / write_lan BNL_DATADISK; the old role `pr` (the tape) is ignored.
    assert_eq!(b.input_endpoints, vec![EndpointStatus::default()]);
    assert_eq!(b.output_endpoints, vec![EndpointStatus::default()]);
    assert_eq!((b.software_ok.clone(), b.arch_preference_weight), (Ok(()), None));
    // laststart 3 h ago > 2 h: inactive. Pull queue: pilots are its workers.
    assert_eq!((b.inactive, b.n_workers, b.n_pilot, b.num_slots, b.ups_queue), (true, 7, 7, Some(100), false));
    assert_eq!(b.counts, JobCounts { running: 12, activated: 3, ..Default::default() });
    assert_eq!(b.counts_all, w.queue_jobs[0]);
    assert_eq!(b.rt_counts, Some(JobCounts { running: 9, ..Default::default() }));
    // No nucleus is unwritable in the example: nothing subtracted.
    assert_eq!((b.transferring_to_unwritable_nuclei, b.live_count), (0, 7));
    // No core statistics given: running jobs × the (child's) core count.
    assert_eq!((b.cores_running, b.cores_starting), (14.0, 0.0));
    // The reprocessing input is on tape, which the PQ does not read (`pr` role ignored).
    assert_eq!(b.local_input, LocalInput::default());
    assert_eq!((b.diskio_usage_per_core, b.max_io_intensity, b.locked), (0.0, None, false));
    let a = &qs[1];
    assert_eq!((a.name.as_str(), a.core_count, a.always_direct_io, a.pledged_cpu), ("AGLT2", None, true, Some(-1.0)));
    assert_eq!((a.output_storage_site.clone(), a.output_endpoint.clone(), a.link), (None, None, Link::Unknown));
    assert!(a.input_endpoints.is_empty() && a.output_endpoints.is_empty());
    // Push queue without workers: Harvester's job fetcher is its one pilot.
    assert_eq!((a.n_pilot, a.n_workers, a.in_nucleus), (1, 0, false));
    // mc_simul: the MCORE child (8 cores, maxrss 16000), and a CPU spec the PQs reject.
    let qs = v.broker_queues(&query(0, Some(0), 900), &d, &pd);
    assert_eq!((qs[0].core_count, qs[0].maxrss), (Some(8), 16_000));
    let msg = qs[0].software_ok.clone().unwrap_err();
    // `el9#x86-64-v3` is arch `x86`, vendor `64`, instr `v3` (arch[-vendor[-instr]]).
    assert_eq!(
        msg,
        "with AUTO due to no cpu alternative fits: the task asks for cpu arch 'x86' and the queue offers arch: \
         [\"x86_64\"] criteria=-cache"
    );
    let msg = qs[1].software_ok.clone().unwrap_err();
    assert!(msg.contains("publishes no architectures") && msg.ends_with("criteria=-cache"), "{msg}");
    // The complete replica of mc23.evnt is on BNL_DATADISK.
    assert!(qs[0].input_endpoints[0].complete_replica);
    assert_eq!(
        qs[0].local_input,
        LocalInput { disk_bytes: 6e8, disk_files: 1, disk_or_tape_bytes: 6e8, disk_or_tape_files: 1 }
    );
}

#[test]
fn in_the_runnable_example_reprocessing_jobs_go_to_bnl_and_aglt2() {
    let w = World::new(runnable_example());
    let (v, d, pd) = (w.view(), w.dynamic(), ProdDynamic::default());
    let q = query(1, Some(0), 800);
    let (t, qs) = (v.broker_task(&q, &d).unwrap(), v.broker_queues(&q, &d, &pd));
    assert_eq!(
        qs[1].link,
        Link::Satellite(LinkMetrics {
            queued_files: Some(40),
            mbps_1h: None,
            mbps_1d: None,
            mbps_1w: None,
            closeness: Some(3.0),
            blocked: false
        })
    );
    let r = job_broker::broker(&t, &qs, v.job_broker_params());
    let c = r.candidates();
    assert_eq!(c.iter().map(|c| c.queue).collect::<Vec<_>>(), vec![0, 1]);
    // Neither holds the chunk's file (it is on tape): (0+1)/(0+10), one file of one to move.
    for c in c {
        assert_eq!(c.weight, 0.1 / 1.0 * ((2.5e9 + 0.0) / 2.5e9 / (1.0 / 100.0 + 1.0)));
        assert_eq!((c.terms.n_files_to_move, c.terms.mb_to_move), (1, 2384), "2.5e9 bytes = 2384 MB");
    }
    assert_eq!(c[0].terms.network.unwrap().weight, 2.5, "PQ at the nucleus");
    assert_eq!(c[1].terms.network.unwrap().weight, 0.5 * (2.0 - 40.0 / 150.0) + 0.5 * (1.0 + 8.0 / 11.0));
    assert!(r.skipped.is_empty());
    // AGLT2_DATADISK back to write_wan TEST: the satellite cannot receive its input over WAN.
    let mut s = runnable_example();
    s.storages[2].write_wan = StorageStatus::Test;
    let w = World::new(s);
    let (v, d) = (w.view(), w.dynamic());
    let r = job_broker::broker(&v.broker_task(&q, &d).unwrap(), &v.broker_queues(&q, &d, &pd), v.job_broker_params());
    assert_eq!(r.candidates().iter().map(|c| c.queue).collect::<Vec<_>>(), vec![0]);
    let skip = r.why(1).unwrap();
    assert_eq!((skip.stage, skip.temporary, &skip.reason), (Stage::Storage, true, &SkipReason::WriteWanBlacklist));
}

#[test]
fn in_the_small_scenario_a_saturated_link_and_the_gpu_only_pq_are_skipped() {
    // SATC_PQ's link to the nucleus carries exactly NQUEUED_SAT_CAP = 150 files: not "over" the
    // cap for the seed's network variant, so SATC_PQ stays a candidate ...
    let w = World::new(small());
    let (v, d, pd) = (w.view(), w.dynamic(), ProdDynamic::default());
    let q = query(0, Some(0), 500);
    let r = job_broker::broker(&v.broker_task(&q, &d).unwrap(), &v.broker_queues(&q, &d, &pd), v.job_broker_params());
    let mut kept: Vec<usize> = r.candidates().iter().map(|c| c.queue).collect();
    kept.sort_unstable();
    assert_eq!(kept, vec![0, 1, 2], "{:?}", r.skipped);
    // ... while panda-server's (`panda.variants.network` alone) skips it at the cap.
    let mut s = small();
    s.panda.as_mut().unwrap().variants.network = Some(crate::panda::network::NetworkVariant::PandaServer);
    let w = World::new(s);
    let (v, d) = (w.view(), w.dynamic());
    let r = job_broker::broker(&v.broker_task(&q, &d).unwrap(), &v.broker_queues(&q, &d, &pd), v.job_broker_params());
    let c = r.candidates();
    assert_eq!(c.iter().map(|c| c.queue).collect::<Vec<_>>(), vec![0, 1], "NUC_PQ (data local) before SATB_PQ");
    // NUC_PQ holds its 1 GB file: (0+1)/(0+10) × (1+1)/1/(0/100+1); SATB_PQ must move it.
    assert_eq!(c[0].weight, 0.1 * 2.0);
    assert_eq!(c[1].weight, 0.1 * (1.0 / 1.0 / (1.0 / 100.0 + 1.0)));
    // SATC_PQ has no data and its link to the nucleus carries 150 files (NQUEUED_SAT_CAP).
    let satc = r.why(2).unwrap();
    assert_eq!((satc.stage, satc.temporary), (Stage::Link, true));
    assert!(
        matches!(&satc.reason, SkipReason::LinkSaturated { queued: 150, op: ">=", cap: 150, .. }),
        "{:?}",
        satc.reason
    );
    // SATB_GPU only takes tasks with a GPU spec (`excl`).
    let gpu = r.why(3).unwrap();
    assert_eq!((gpu.stage, gpu.temporary), (Stage::Software, false));
    // The GPU task only gets the GPU PQ; the others publish no architecture.
    let q = query(1, Some(0), 500);
    let r = job_broker::broker(&v.broker_task(&q, &d).unwrap(), &v.broker_queues(&q, &d, &pd), v.job_broker_params());
    assert_eq!(r.candidates().iter().map(|c| c.queue).collect::<Vec<_>>(), vec![3]);
    for i in [0, 1] {
        assert_eq!(r.why(i).map(|s| s.stage), Some(Stage::Software), "{:?}", r.why(i));
    }
    assert_eq!(v.job_check(1, 500, &d, &pd), Some(vec![false]), "no GPU PQ at the nucleus");
    // With NW_ACTIVE the network weight multiplies: 2.5 at the nucleus, closeness 2 for SATB.
    let mut s = small();
    s.panda.as_mut().unwrap().gdpconfig.job_broker.nw_active = true;
    let w = World::new(s);
    let (v, d) = (w.view(), w.dynamic());
    let q = query(0, Some(0), 500);
    let r = job_broker::broker(&v.broker_task(&q, &d).unwrap(), &v.broker_queues(&q, &d, &pd), v.job_broker_params());
    let weight = |queue| r.candidates().iter().find(|c| c.queue == queue).map(|c| c.weight);
    assert_eq!(weight(0), Some(0.1 * 2.0 * 2.5));
    assert_eq!(weight(1), Some(0.1 * (1.0 / 1.0 / (1.0 / 100.0 + 1.0)) * (0.5 * 2.0 + 0.5 * (1.0 + 9.0 / 11.0))));
    // SATC_PQ, kept by the seed at the cap, weighs 1 on its queue: 2 − 150/150.
    assert_eq!(weight(2), Some(0.1 * (1.0 / 1.0 / (1.0 / 100.0 + 1.0)) * (0.5 * 1.0 + 0.5 * (1.0 + 10.0 / 11.0))));
}

#[test]
fn pseudo_queues_resource_types_and_catchall() {
    assert_eq!(pseudo_queue_limits(true, Some(8), 16_000, 0, ResourceType::Score), (Some(1), 2000, 0));
    assert_eq!(pseudo_queue_limits(true, Some(8), 16_000, 0, ResourceType::Mcore), (Some(8), 16_000, 0));
    // HIMEM children: minrss cc·2001 − cc + 1; maxrss scaled from the parent.
    assert_eq!(pseudo_queue_limits(true, Some(8), 16_000, 0, ResourceType::McoreHimem), (Some(8), 16_000, 16_001));
    assert_eq!(pseudo_queue_limits(true, Some(8), 15_999, 4000, ResourceType::ScoreHimem), (Some(1), 1999, 2001));
    // No MCORE child of a 1-core PQ; a non-UCORE PQ is itself.
    assert_eq!(pseudo_queue_limits(true, Some(1), 4000, 0, ResourceType::Mcore), (Some(1), 4000, 0));
    assert_eq!(pseudo_queue_limits(false, Some(8), 16_000, 0, ResourceType::Score), (Some(8), 16_000, 0));
    assert_eq!(ResourceType::of(1, 0.0), ResourceType::Score);
    assert_eq!(ResourceType::of(1, 2001.0).name(), "SCORE_HIMEM");
    assert_eq!(ResourceType::of(8, 2000.0), ResourceType::Mcore);
    assert_eq!(ResourceType::of(8, 4000.0).index(), 3);
    let mut q = crate::scenario::panda::PandaQueue::new("X", "S", crate::scenario::panda::QueueKind::Unified);
    assert!(!is_ups_queue(&q));
    q.capability = Some("ucore".into());
    q.harvester.map_type = crate::panda::harvester::config::MapType::NoJob;
    q.harvester.run_mode = crate::panda::harvester::config::RunMode::Slave;
    assert!(is_ups_queue(&q));
    // catchall as SiteSpec reads it: a prefix match for flags, `key=value` for values.
    let mut s = example();
    s.panda.as_mut().unwrap().queues[2].catchall = "useJumboJobsX,minEventsForJumbo=500,bareNucleus=only".into();
    let w = World::new(s);
    let qs = w.view().broker_queues(&query(1, None, 100), &w.dynamic(), &ProdDynamic::default());
    assert_eq!((qs[1].use_jumbo_jobs, qs[1].min_events_for_jumbo, qs[1].bare_nucleus_only), (true, Some(500), true));
}

#[test]
fn fill_queues_reuses_the_buffer_and_unknown_inputs_give_nothing() {
    let w = World::new(example());
    let (v, d, pd) = (w.view(), w.dynamic(), ProdDynamic::default());
    let mut buf = Vec::new();
    v.fill_queues(&query(0, Some(0), 900), &d, &pd, &mut buf);
    let ptr = buf.as_ptr();
    let names: Vec<String> = buf.iter().map(|b| b.name.clone()).collect();
    v.fill_queues(&query(1, None, 800), &d, &pd, &mut buf);
    assert_eq!(buf.as_ptr(), ptr, "no reallocation from one cycle to the next");
    assert_eq!(buf.iter().map(|b| b.name.clone()).collect::<Vec<_>>(), names);
    assert_eq!(buf[0].core_count, Some(1), "the stream's pseudo-queue, not the previous one's");
    assert!(buf[0].software_ok.is_ok() && buf[0].in_nucleus && buf[0].link == Link::Unknown);
    v.fill_queues(&query(5, None, 800), &d, &pd, &mut buf);
    assert!(buf.is_empty());
    v.fill_queues(&query(0, Some(7), 800), &d, &pd, &mut buf);
    assert!(buf.is_empty());
    assert!(
        v.nuclei(5, 800, &d, &pd).is_none()
            && v.task_brokerage(5, TaskArgs { task_no: 0, assigning_for_s: None, current_priority: 1 }, &d, &pd)
                .is_none()
    );
    // Short snapshot slices read as empty tables.
    let mut empty = World::new(example());
    empty.queue_jobs.clear();
    empty.queue_gshare_jobs.clear();
    empty.last_start.clear();
    empty.workers_queued.clear();
    empty.workers_running.clear();
    let qs = v.broker_queues(&query(0, Some(0), 900), &empty.dynamic(), &pd);
    assert_eq!((qs[0].counts, qs[0].n_pilot, qs[0].inactive), (JobCounts::default(), 0, false));
    // A scenario without a panda section: an empty view.
    let mut s = example();
    s.panda = None;
    let v = ProdView::new(&s);
    assert_eq!(v.production_queues().len(), 0);
    assert!(v.broker_task(&query(0, None, 1), &d).is_none());
}

#[test]
fn a_cycle_over_150_queues_is_cheap() {
    let mut s = small();
    let p = s.panda.as_mut().unwrap();
    let base = p.queues[1].clone();
    for i in 0..146 {
        let mut q = base.clone();
        q.name = format!("SATB_PQ_{i}");
        p.queues.push(q);
    }
    let w = World::new(s);
    let (v, d, pd) = (w.view(), w.dynamic(), ProdDynamic::default());
    assert_eq!(v.production_queues().len(), 150);
    let q = query(0, Some(0), 500);
    let mut buf = Vec::new();
    v.fill_queues(&q, &d, &pd, &mut buf);
    let start = std::time::Instant::now();
    let rounds = 100;
    for _ in 0..rounds {
        v.fill_queues(&q, &d, &pd, &mut buf);
    }
    let per_cycle = start.elapsed() / rounds;
    eprintln!("fill_queues over 150 PQs: {per_cycle:?} per cycle (debug build)");
    assert!(per_cycle < std::time::Duration::from_millis(5), "{per_cycle:?}");
    let r = job_broker::broker(&v.broker_task(&q, &d).unwrap(), &buf, v.job_broker_params());
    assert_eq!(r.candidates().len(), job_broker::MAX_SITE_CANDIDATES);
}
