//! Worked numbers of seed 004 and reference `panda.md` §2/§9 through [`broker`], both variants.

use proptest::prelude::*;

use super::weight::{many_assigned, running_count};
use super::*;
use crate::panda::network::{Link, LinkMetrics, NetworkVariant};

const SEED: JobBrokerVariant = JobBrokerVariant::Seed;
const CODE: JobBrokerVariant = JobBrokerVariant::PandaServer;
const MB: f64 = 1024.0 * 1024.0;
const GB: f64 = 1024.0 * MB;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

fn params(variant: JobBrokerVariant) -> JobBrokerParams {
    JobBrokerParams { variant, ..JobBrokerParams::default() }
}

fn pq(name: &str) -> BrokerQueue {
    BrokerQueue {
        name: name.into(),
        counts: JobCounts { running: 10, ..JobCounts::default() },
        ..BrokerQueue::default()
    }
}

fn only_skip(r: &BrokerageResult) -> &Skip {
    assert_eq!(r.skipped.len(), 1, "{:?}", r.skipped);
    &r.skipped[0]
}

#[test]
fn defaults_are_the_gdpconfig_ones() {
    let d = JobBrokerParams::default();
    assert!(!d.nw_active && !d.work_shortage);
    assert_eq!((d.nw_queue_importance, d.nw_threshold, d.nw_weight_multiplier), (0.5, 1.7, 1.0));
    assert_eq!((d.nqueued_sat_cap, d.nqueued_nuc_cap_for_jobs), (150, 10_000));
    assert_eq!((d.io_intensity_cutoff, d.max_prio_to_bootstrap), (200.0, 150));
    assert_eq!((d.size_cutoff_to_move_input, d.num_cutoff_to_move_input), (10.0, 100));
    assert_eq!((d.max_diskio_default(), d.storage_min_free_size()), (1e10, 200.0));
    assert_eq!(d.nqueuelimitsite(Some("MC Simulation")), 20);
    assert_eq!(d.min_weight("managed", None).value, 0.0);
    assert_eq!(d.variant, SEED);
    assert_eq!(validate(&d), Ok(()));
    assert_eq!(serde_json::from_str::<JobBrokerParams>("{}").unwrap(), d);
    assert!(serde_json::from_str::<JobBrokerParams>(r#"{"nw_activ": true}"#).is_err());
    assert!(GDPCONFIG_KEYS.contains(&("core", "WORK_SHORTAGE")));
    assert!(GDPCONFIG_KEYS.contains(&("jobbroker", "NQUEUELIMITSITE_")));
    // Every key names a field of the params (snake_case, families without their `_`).
    let json = serde_json::to_value(JobBrokerParams::default()).unwrap();
    for (_, key) in GDPCONFIG_KEYS {
        let field = key.trim_end_matches('_').to_lowercase();
        assert!(json.as_object().unwrap().contains_key(&field), "{key} → {field}");
        assert_eq!(json[&field].is_object(), key.ends_with('_'), "{key}: a family is a map");
    }
}

#[test]
fn per_gshare_and_per_label_overrides_fall_back_as_panda() {
    let mut p = JobBrokerParams::default();
    p.nqueuelimitsite.insert("MC Simulation".into(), 50);
    p.nqueuelimitsite.insert("Express".into(), 0); // `if not cutOffValue` → 20
    assert_eq!(p.nqueuelimitsite(Some("MC Simulation")), 50);
    assert_eq!(p.nqueuelimitsite(Some("Express")), 20);
    assert_eq!(p.nqueuelimitsite(Some("Other")), 20);
    p.min_weight.insert("managed".into(), 0.01);
    p.min_weight.insert("managed_Express".into(), 0.5);
    let m = p.min_weight("managed", Some("Express"));
    assert_eq!((m.param.as_str(), m.value), ("MIN_WEIGHT_managed_Express", 0.5));
    let m = p.min_weight("managed", Some("MC Simulation"));
    assert_eq!((m.param.as_str(), m.value), ("MIN_WEIGHT_managed", 0.01));
    p.max_diskio_default = Some(0.0);
    p.storage_min_free_size = Some(0.0);
    assert_eq!((p.max_diskio_default(), p.storage_min_free_size()), (1e10, 200.0));
    p.nw_threshold = f64::NAN;
    assert!(validate(&p).is_err());
    assert_eq!(p.sane().nw_threshold, 1.7);
}

/// Seed 004 zero share, through the whole brokerage, with PanDA's log line.
#[test]
fn zero_share_skips_with_pandas_message() {
    let mut q = pq("CERN-PROD");
    q.fairshare = FairsharePolicy::parse("type=evgen:100%,type=simul:100%,type=any:0%").0;
    let pile = BrokerTask { processing_type: "pile".into(), ..BrokerTask::default() };
    let r = broker(&pile, std::slice::from_ref(&q), &params(CODE));
    assert_eq!(r.outcome, Outcome::Pending { retry_after_s: 3600 });
    let s = only_skip(&r);
    assert_eq!((s.stage, s.temporary), (Stage::ZeroShare, false));
    assert_eq!(s.to_string(), "  skip site=CERN-PROD due to zero share criteria=-zeroshare");
    let simul = BrokerTask::default();
    assert_eq!(broker(&simul, std::slice::from_ref(&q), &params(CODE)).candidates().len(), 1);
    // §9: priority>500:0,… rejects simul@600, accepts simul@400; not run for work queue `test`.
    q.fairshare = FairsharePolicy::parse("priority>500:0,type=simul:100%,type=any:0%").0;
    let at = |p: i64, wq: &str| BrokerTask { current_priority: p, work_queue_name: wq.into(), ..BrokerTask::default() };
    assert!(broker(&at(600, ""), std::slice::from_ref(&q), &params(CODE)).candidates().is_empty());
    assert_eq!(broker(&at(400, ""), std::slice::from_ref(&q), &params(CODE)).candidates().len(), 1);
    assert_eq!(broker(&at(600, "test"), std::slice::from_ref(&q), &params(CODE)).candidates().len(), 1);
}

/// Seed: (baseRamCount + ramCount × coreCount) × 0.9 within [minrss, maxrss].
#[test]
fn memory_with_the_compensation() {
    let t = BrokerTask { ram_count: Some(2000.0), ram_per_core: true, base_ram_count: 500.0, ..BrokerTask::default() };
    let mut q = pq("MCORE");
    q.core_count = Some(8);
    for v in [SEED, CODE] {
        let c = filters::Ctx::new(&t, &params(v));
        assert_eq!(filters::memory_need(&c, &q), Some(14850)); // (500 + 2000×8)×0.9
        q.maxrss = 14850;
        assert_eq!(filters::memory(&c, &q), filters::Verdict::Pass);
        q.maxrss = 14849;
        assert_eq!(filters::memory(&c, &q), filters::Verdict::Skip(SkipReason::LowMemory { need_mb: 14850 }));
        q.maxrss = 0;
        q.minrss = 14851;
        assert_eq!(filters::memory(&c, &q), filters::Verdict::Skip(SkipReason::HighMemory { need_mb: 14850 }));
        q.minrss = 0;
    }
    // MB per job: seed (base + ram)×0.9 = 2250; code drops base: 2000×0.9 = 1800.
    let per_job = BrokerTask { ram_per_core: false, ..t.clone() };
    assert_eq!(filters::memory_need(&filters::Ctx::new(&per_job, &params(SEED)), &q), Some(2250));
    assert_eq!(filters::memory_need(&filters::Ctx::new(&per_job, &params(CODE)), &q), Some(1800));
    // Truncation as int(): 1999 × 0.9 = 1799.1 → 1799; no ramCount → no check.
    let odd = BrokerTask { ram_count: Some(1999.0), ram_per_core: false, ..BrokerTask::default() };
    assert_eq!(filters::memory_need(&filters::Ctx::new(&odd, &params(CODE)), &q), Some(1799));
    assert_eq!(filters::memory_need(&filters::Ctx::new(&BrokerTask::default(), &params(CODE)), &q), None);
    let msg = SkipReason::LowMemory { need_mb: 14850 }.to_string();
    assert_eq!(
        msg,
        "due to sue to insufficient RAM less than less than job's core-scaled requirement 14850 MB criteria=-lowmemory"
    );
}

/// Disk: out = max(1.5 GB, outDisk × nEvents), + work, + input unless direct IO.
#[test]
fn scratch_disk_estimate_both_variants() {
    let disk = DiskEstimate {
        out_disk_bytes: 100.0 * 1024.0, // 100 kB per event × 1000 events = 100 MB < 1.5 GB
        out_scales_with_events: true,
        work_disk_bytes: Some(GB),
        max_events_per_job: 1000.0,
        max_effective_input_bytes: 2.0 * GB,
        max_input_bytes: 2.0 * GB,
    };
    let t = BrokerTask { disk, ..BrokerTask::default() };
    let mut q = pq("DISK");
    q.maxwdir = 4872;
    // Code: 1500 + (1024 + 300) + 2048 = 4872 MB against maxwdir × 1/1.
    let code = filters::Ctx::new(&t, &params(CODE));
    assert_eq!(filters::scratch_need(&code, &q), Some((4872.0, 4872.0)));
    assert_eq!(filters::scratch_disk(&code, &q), filters::Verdict::Pass);
    q.maxwdir = 4871;
    assert!(matches!(filters::scratch_disk(&code, &q), filters::Verdict::Skip(SkipReason::ScratchDisk { .. })));
    // Seed: 2048 + 1500 + max(300, 1024) = 4572 MB against maxwdir / coreCount.
    let seed = filters::Ctx::new(&t, &params(SEED));
    q.maxwdir = 4572 * 8;
    q.core_count = Some(8);
    assert_eq!(filters::scratch_need(&seed, &q), Some((4572.0, 4572.0)));
    // Code for a single-core task on an 8-core PQ: maxwdir × 1/8 too; for an 8-core task all of it.
    assert_eq!(filters::scratch_need(&code, &q).unwrap().0, 4572.0);
    let mc = BrokerTask { core_count: Some(8), ..t.clone() };
    assert_eq!(filters::scratch_need(&filters::Ctx::new(&mc, &params(CODE)), &q).unwrap().0, 4572.0 * 8.0);
    // Direct IO drops the input; `allowInputLAN=only` needs a direct-IO PQ.
    let dio = BrokerTask { allow_input_lan: Some(InputLan::Only), ..t.clone() };
    assert_eq!(
        filters::scratch_disk(&filters::Ctx::new(&dio, &params(CODE)), &q),
        filters::Verdict::Skip(SkipReason::RemoteIo)
    );
    q.direct_io = true;
    assert_eq!(filters::scratch_need(&filters::Ctx::new(&dio, &params(CODE)), &q).unwrap().1, 2824.0);
    let m = SkipReason::ScratchDisk { available_mb: 4871.0, need_mb: 4872.0 }.to_string();
    assert_eq!(m, "due to small scratch disk 4871.0 MB less than 4872 MB criteria=-disk");
}

/// Walltime: cpuTime × nEvents ≤ (maxtime − base) × cores × corepower × eff; ≥ mintime; a day
/// for scouts.
#[test]
fn walltime_estimate() {
    let wt = WalltimeEstimate { cpu_time: Some(100.0), cpu_efficiency: 100.0, ..WalltimeEstimate::default() };
    let disk = DiskEstimate { max_events_per_job: 1000.0, ..DiskEstimate::default() };
    let t = BrokerTask { walltime: wt, disk, ..BrokerTask::default() };
    let mut q = pq("WT");
    q.maxtime = 3600; // 3600 × 1 × 10 × 1.0 = 36000 < 100000
    let c = filters::Ctx::new(&t, &params(CODE));
    assert_eq!(filters::job_walltime(&t), Some(100_000.0));
    assert_eq!(filters::site_time(&t, &q, q.maxtime), 36_000.0);
    let v = filters::walltime(&c, &q);
    assert_eq!(v, filters::Verdict::Skip(SkipReason::ShortWalltime { site_limit: 36_000.0, job: 100_000.0 }));
    q.maxtime = 10_000; // 100000 ≤ 100000
    assert_eq!(filters::walltime(&c, &q), filters::Verdict::Pass);
    q.mintime = 20_000; // 200000 > job → too short for the PQ
    assert!(matches!(filters::walltime(&c, &q), filters::Verdict::Skip(SkipReason::LongWalltime { .. })));
    q.mintime = 0;
    // Efficiency 50 % and base 1000 s: (10000 − 1000) × 10 × 0.5 = 45000.
    let t2 =
        BrokerTask { walltime: WalltimeEstimate { cpu_efficiency: 50.0, base_walltime: 1000.0, ..wt }, ..t.clone() };
    assert_eq!(filters::site_time(&t2, &q, q.maxtime), 45_000.0);
    // Scouts: code needs 24 h × 10 HS06 × cores = 864000 at cc 1; seed needs maxtime ≥ 86400 s.
    let scout = BrokerTask { is_scout: true, ..t.clone() };
    q.maxtime = 80_000; // 800000 HS06 s < 864000; seed: 80000 < 86400
    for v in [CODE, SEED] {
        let r = filters::walltime(&filters::Ctx::new(&scout, &params(v)), &q);
        assert!(matches!(r, filters::Verdict::Skip(SkipReason::ScoutWalltime { .. })), "{v:?}");
    }
    q.corepower = 11.0; // code: 880000 ≥ 864000 passes; seed still 80000 s < 1 day
    assert_eq!(filters::walltime(&filters::Ctx::new(&scout, &params(CODE)), &q), filters::Verdict::Pass);
    assert!(matches!(
        filters::walltime(&filters::Ctx::new(&scout, &params(SEED)), &q),
        filters::Verdict::Skip(SkipReason::ScoutWalltime { seed: true, .. })
    ));
    let m = SkipReason::ScoutWalltime { site_limit: 800000.0, core_count: Some(1), seed: false }.to_string();
    assert_eq!(
        m,
        "due to site walltime 800000.0 (site upper limit) insufficient for scout jobs (requiring 24hr*10HS06s*1cores at least) criteria=-scout_walltime"
    );
    let long = Skip {
        queue: 0,
        name: "X".into(),
        stage: Stage::Walltime,
        reason: SkipReason::LongWalltime { site_limit: 1.0, job: None },
        temporary: false,
    };
    assert!(long.to_string().starts_with("  skip site X due to short job walltime 1.0"));
}

/// Seed running-count rule: the largest of Rreal, min(nBatchJob, 20), numSlots, nStarting.
#[test]
fn running_count_rule() {
    let mut q = pq("UPS");
    q.counts = JobCounts { running: 5, starting: 7, ..JobCounts::default() };
    q.ups_queue = true;
    q.n_workers = 50;
    for v in [SEED, CODE] {
        assert_eq!(running_count(v, &q, 100, 150), (20, RunningSource::Workers), "min(nBatchJob, 20)");
        assert_eq!(running_count(v, &q, 151, 150), (5, RunningSource::Real), "priority above bootstrap");
    }
    q.n_workers = 3; // not more than Rreal
    assert_eq!(running_count(CODE, &q, 100, 150).0, 5);
    q.num_slots = Some(0);
    assert_eq!(running_count(CODE, &q, 100, 150), (12, RunningSource::Starting)); // R + starting
    assert_eq!(running_count(SEED, &q, 100, 150), (7, RunningSource::Starting)); // max(R, starting)
    q.num_slots = Some(64);
    q.core_count = Some(8);
    assert_eq!(running_count(CODE, &q, 100, 150), (8, RunningSource::NumSlots)); // int(64/8)
    assert_eq!(running_count(SEED, &q, 100, 150), (64, RunningSource::NumSlots));
    assert_eq!(running_count(CODE, &q, 200, 150).0, 5, "numSlots ignored above MAX_PRIO_TO_BOOTSTRAP");
    q.num_slots = None;
    q.ups_queue = false;
    q.n_workers = 50;
    assert_eq!(running_count(CODE, &q, 100, 150).0, 5, "not a UPS queue");
}

/// ⚠ manyAssigned: code clamp((a+1)/(b+1)), seed clamp(a/b).
#[test]
fn many_assigned_both_variants() {
    assert_eq!(many_assigned(CODE, 9, 4), 2.0);
    assert_eq!(many_assigned(CODE, 5, 3), 1.5);
    assert_eq!(many_assigned(CODE, 3, 4), 1.0);
    assert_eq!(many_assigned(SEED, 6, 4), 1.5);
    assert_eq!(many_assigned(SEED, 5, 3), 5.0 / 3.0);
    assert_eq!(many_assigned(SEED, 3, 4), 1.0);
    assert_eq!((many_assigned(SEED, 4, 0), many_assigned(SEED, 0, 0), many_assigned(CODE, 0, 0)), (2.0, 1.0, 1.0));
}

fn weighed(t: &BrokerTask, q: &BrokerQueue, v: JobBrokerVariant) -> Candidate {
    let r = broker(t, std::slice::from_ref(q), &params(v));
    r.candidates().first().cloned().unwrap_or_else(|| panic!("{:?}", r.skipped))
}

/// w = (R+1)/(act+ass+start+def+10)/manyAssigned × data factor.
#[test]
fn weight_formula_and_data_availability() {
    let mut q = pq("W");
    q.counts = JobCounts { running: 30, activated: 5, starting: 2, defined: 3, assigned: 9, transferring: 0 };
    q.live_count = 1;
    // No input: assigned ignored → 31 / (5 + 2 + 4 + 10) = 31/21.
    let c = weighed(&BrokerTask::default(), &q, CODE);
    assert!(close(c.weight, 31.0 / 21.0));
    assert_eq!((c.terms.n_defined, c.terms.use_assigned), (4, false));
    // 10 GB, 100 files, 8 GB and 80 files local: 31 / (5+9+2+4+10) / clamp(10/6) × 1.8 / 1.2.
    let t = BrokerTask { total_input_bytes: 10.0 * GB, total_input_files: 100, ..BrokerTask::default() };
    q.local_input =
        LocalInput { disk_bytes: 8.0 * GB, disk_files: 80, disk_or_tape_bytes: 8.0 * GB, disk_or_tape_files: 80 };
    let c = weighed(&t, &q, CODE);
    assert!(close(c.terms.many_assigned, 10.0 / 6.0));
    assert!(close(c.terms.base, 31.0 / 30.0 / (10.0 / 6.0)));
    assert!(close(c.terms.data_factor, 1.5));
    assert_eq!((c.terms.mb_to_move, c.terms.n_files_to_move), (2048, 20));
    assert!(close(c.weight, 31.0 / 30.0 / (10.0 / 6.0) * 1.5));
    // Seed manyAssigned = min(2, 9/5) = 1.8.
    assert!(close(weighed(&t, &q, SEED).terms.base, 31.0 / 30.0 / 1.8));
    // All local: no assigned, factor (10+10)/10/1 = 2.
    q.local_input.disk_bytes = 10.0 * GB;
    q.local_input.disk_files = 100;
    let c = weighed(&t, &q, CODE);
    assert!(close(c.weight, 31.0 / 21.0 * 2.0));
    // use_only_local_data with data missing → -non_local.
    q.local_input.disk_files = 99;
    q.use_only_local_data = true;
    let r = broker(&t, std::slice::from_ref(&q), &params(CODE));
    assert_eq!(only_skip(&r).reason, SkipReason::NonLocal);
}

fn nucleus_task() -> BrokerTask {
    let nucleus = NucleusInfo { name: "NUC".into(), output_endpoint: "NUC_DATADISK".into(), ..NucleusInfo::default() };
    BrokerTask { nucleus: Some(nucleus), ..BrokerTask::default() }
}

/// NW_ACTIVE multiplies by weightNw (2.5 at the nucleus); T1 weight for nucleus PQs.
#[test]
fn network_and_t1_factors() {
    let t = nucleus_task();
    let mut p = params(CODE);
    p.nw_active = true;
    let mut nuc = pq("NUC_PQ");
    nuc.output_storage_site = Some("NUC".into());
    nuc.in_nucleus = true;
    let mut sat = pq("SAT_PQ");
    sat.output_storage_site = Some("SAT".into());
    sat.link = Link::Satellite(LinkMetrics { queued_files: Some(75), mbps_1w: Some(60.0), ..LinkMetrics::default() });
    let r = broker(&t, &[nuc.clone(), sat.clone()], &p);
    let base = 11.0 / 10.0;
    let c = r.candidates();
    assert_eq!(c.len(), 2);
    assert!(close(c[0].weight, base * 2.5) && c[0].queue == 0);
    assert!(close(c[1].weight, base * (0.5 * 1.5 + 0.5 * 1.6)));
    // NW_ACTIVE off: computed, not applied.
    let r = broker(&t, &[nuc.clone(), sat.clone()], &params(CODE));
    assert!(close(r.candidates()[0].weight, base) && r.candidates()[0].terms.network.is_some());
    // t1Weight 0 + ioIntensity > 500 → 4; priority ≥ 900 → 100.
    let io = BrokerTask { io_intensity: Some(600.0), ..t.clone() };
    let r = broker(&io, &[nuc.clone()], &params(CODE));
    assert_eq!(r.t1_weight, 4);
    assert!(close(r.candidates()[0].weight, base * 4.0));
    let hi = BrokerTask { current_priority: 900, ..t.clone() };
    assert_eq!(broker(&hi, &[nuc.clone()], &params(CODE)).t1_weight, 100);
    // Express with NW_ACTIVE: weightNw 1.55 < 1.7 → rejected; the nucleus PQ (2.5) passes.
    let ex = BrokerTask { processing_type: "urgent".into(), ..t.clone() };
    let r = broker(&ex, &[nuc, sat], &p);
    assert_eq!(r.candidates().len(), 1);
    assert!(matches!(only_skip(&r).reason, SkipReason::LowNetworkWeight { .. }));
}

#[test]
fn link_check_skips() {
    let mut t = nucleus_task();
    let mut q = pq("SAT_PQ");
    q.output_storage_site = Some("SAT".into());
    q.link = Link::Satellite(LinkMetrics { closeness: Some(-1.0), ..LinkMetrics::default() });
    let r = broker(&t, std::slice::from_ref(&q), &params(CODE));
    let s = only_skip(&r);
    assert!(!s.temporary);
    assert_eq!(
        s.to_string(),
        "  skip site=SAT_PQ due to agis_closeness=-1, from satellite=SAT to nucleus=NUC: criteria=-link_unusable"
    );
    // Exactly NQUEUED_SAT_CAP = 150 files queued: the seed's network variant skips "over" the
    // cap and keeps the PQ, the code's skips at it (`>=`) and says so, whatever the job broker's.
    q.link = Link::Satellite(LinkMetrics { queued_files: Some(150), ..LinkMetrics::default() });
    for jb in [SEED, CODE] {
        let r = broker(&t, std::slice::from_ref(&q), &params(jb));
        assert!(r.skipped.is_empty() && r.candidates().len() == 1, "{:?}", r.skipped);
        let code_net = JobBrokerParams { network_variant: NetworkVariant::PandaServer, ..params(jb) };
        let r = broker(&t, std::slice::from_ref(&q), &code_net);
        assert!(only_skip(&r).temporary);
        assert_eq!(
            only_skip(&r).to_string(),
            "  skip site=SAT_PQ due to too many output files queued in the channel 150(>=150 link limit), from satellite=SAT to nucleus=NUC: criteria=-link_unusable"
        );
    }
    q.link = Link::Satellite(LinkMetrics { queued_files: Some(151), ..LinkMetrics::default() });
    let r = broker(&t, std::slice::from_ref(&q), &params(CODE));
    assert_eq!(
        only_skip(&r).to_string(),
        "  skip site=SAT_PQ due to too many output files queued in the channel 151(>150 link limit), from satellite=SAT to nucleus=NUC: criteria=-link_unusable"
    );
    t.nucleus.as_mut().unwrap().total_queued_files = 10_000;
    q.link = Link::Unknown;
    let r = broker(&t, std::slice::from_ref(&q), &params(CODE));
    assert_eq!(
        only_skip(&r).to_string(),
        "  skip site=SAT_PQ due to too many output files being transferred to the nucleus 10000(>10000 total limit): criteria=-links_full"
    );
}

/// Final caps: code `-cap` with max(NQUEUELIMITSITE, 2·nRun); seed `activated+starting > 2×running`.
#[test]
fn cap_rules_both_variants() {
    let mut q = pq("CAP");
    q.counts = JobCounts { running: 10, activated: 15, starting: 6, ..JobCounts::default() };
    let t = BrokerTask::default();
    let r = broker(&t, std::slice::from_ref(&q), &params(CODE));
    assert!(matches!(only_skip(&r).reason, SkipReason::Cap { queued: 21, cutoff: 20, .. }));
    assert!(only_skip(&r).to_string().contains("greater than max(20,2*nRun) criteria=-cap"));
    let r = broker(&t, std::slice::from_ref(&q), &params(SEED));
    assert!(matches!(only_skip(&r).reason, SkipReason::SeedCapActivated { activated_starting: 21, running: 10, .. }));
    q.counts.activated = 14; // 20: passes max(20, 20); seed too (20 ≤ 20)
    assert_eq!(broker(&t, std::slice::from_ref(&q), &params(CODE)).candidates().len(), 1);
    // Seed's second rule counts defined too: 14 + 6 + 1 = 21 > 20.
    q.counts.defined = 1;
    let r = broker(&t, std::slice::from_ref(&q), &params(SEED));
    assert!(matches!(only_skip(&r).reason, SkipReason::SeedCapQueued { queued: 21, .. }));
    // Code's floor of 20 lets an idle PQ queue: 0 running, 20 activated.
    q.counts = JobCounts { activated: 20, ..JobCounts::default() };
    let c = broker(&t, std::slice::from_ref(&q), &params(CODE));
    assert_eq!((c.candidates()[0].n_queued_jobs, c.candidates()[0].n_running_jobs_cap), (20, Some(20)));
    assert!(broker(&t, std::slice::from_ref(&q), &params(SEED)).candidates().is_empty());
    // -cap_rt with resource-type statistics.
    q.counts = JobCounts { running: 10, ..JobCounts::default() };
    q.rt_counts = Some(JobCounts { running: 3, defined: 10, activated: 11, ..JobCounts::default() });
    let r = broker(&t, std::slice::from_ref(&q), &params(CODE));
    assert!(matches!(only_skip(&r).reason, SkipReason::CapRt { queued: 21, running_rt: 10, .. }));
    // Express tasks have no cap.
    let ex = BrokerTask { current_priority: 1001, ..t.clone() };
    assert_eq!(broker(&ex, std::slice::from_ref(&q), &params(CODE)).candidates()[0].n_running_jobs_cap, None);
}

/// total_input_files 0 with 100 files local: nFilesToMove = −100, PanDA's
/// `/ (nFilesToMove / 100 + 1)` raises ZeroDivisionError. The PQ is skipped (temporary), not
/// weighed 0 and sorted first like a bootstrap PQ.
#[test]
fn a_weight_that_cannot_be_computed_is_skipped() {
    let t = BrokerTask { total_input_bytes: 10.0 * GB, total_input_files: 0, ..BrokerTask::default() };
    let mut bad = pq("BAD");
    bad.local_input.disk_bytes = 5.0 * GB;
    bad.local_input.disk_files = 100;
    let good = pq("GOOD");
    for v in [CODE, SEED] {
        let r = broker(&t, &[bad.clone(), good.clone()], &params(v));
        assert_eq!(r.candidates().iter().map(|c| c.queue).collect::<Vec<_>>(), [1]);
        assert!(r.candidates().iter().all(|c| !c.bootstrap && c.weight.is_finite() && c.weight > 0.0));
        let s = only_skip(&r);
        assert_eq!((s.queue, s.stage, s.temporary), (0, Stage::Final, true));
        assert_eq!(s.reason, SkipReason::WeightNotComputable { weight: f64::INFINITY, n_files_to_move: -100 });
        assert_eq!(
            s.to_string(),
            "  skip site=BAD since its weight could not be computed (weight=inf nFilesToMove=-100; PanDA would raise here) criteria=-weight"
        );
    }
}

/// PanDA's preference weight is `1 + pct/100 ≥ 1`: 0, 0.5, NaN and -1 read as 1.
#[test]
fn preference_weights_below_one_read_as_one() {
    let plain = weighed(&BrokerTask::default(), &pq("P"), CODE).weight;
    for p in [0.0, 0.5, f64::NAN, -1.0, f64::INFINITY] {
        let q = BrokerQueue { arch_preference_weight: Some(p), ..pq("P") };
        let c = weighed(&BrokerTask::default(), &q, CODE);
        assert_eq!((c.terms.preference, c.weight, c.bootstrap), (1.0, plain, false), "{p}");
    }
    let q = BrokerQueue { arch_preference_weight: Some(1.5), ..pq("P") };
    assert!(close(weighed(&BrokerTask::default(), &q, CODE).weight, plain * 1.5));
}

/// Empty PQs bootstrap with weight 0 at the head; top 10; everything skipped → pending 1 h.
#[test]
fn bootstrap_top10_and_pending() {
    let t = BrokerTask::default();
    let mut qs: Vec<BrokerQueue> = (0..12)
        .map(|i| {
            let mut q = pq(&format!("PQ{i}"));
            q.counts.running = i as u64 + 1;
            q
        })
        .collect();
    qs.push(BrokerQueue { name: "EMPTY".into(), ..BrokerQueue::default() });
    let r = broker(&t, &qs, &params(CODE));
    let c = r.candidates();
    assert_eq!(c.len(), 10);
    assert!(c[0].bootstrap && c[0].weight == 0.0 && c[0].queue == 12);
    assert_eq!(c[1].queue, 11);
    assert!(c[1..].windows(2).all(|w| w[0].weight >= w[1].weight));
    let low: Vec<_> = r.skipped.iter().map(|s| (s.queue, s.stage)).collect();
    assert_eq!(low, vec![(2, Stage::Final), (1, Stage::Final), (0, Stage::Final)]);
    assert_eq!(r.why(0).unwrap().to_string(), "  skip site=PQ0 due to low weight, weight=0.2 criteria=-low_weight");
    // Priority above MAX_PRIO_TO_BOOTSTRAP: empty PQ weighs 1/10.
    let hi = BrokerTask { current_priority: 151, ..t.clone() };
    assert!(!broker(&hi, &qs[12..], &params(CODE)).candidates()[0].bootstrap);
    // All offline → pending.
    for q in &mut qs {
        q.status = QueueStatus::Offline;
    }
    let r = broker(&t, &qs, &params(CODE));
    assert_eq!(r.outcome, Outcome::Pending { retry_after_s: 3600 });
    assert_eq!(r.skipped.len(), 13);
    assert_eq!(r.skipped[0].to_string(), "  skip site=PQ0 due to status=offline criteria=-status");
    assert!(broker(&t, &[], &params(CODE)).candidates().is_empty());
}

#[test]
fn temporary_skips_and_variant_candidate_rules() {
    let t = BrokerTask::default();
    let mut q = pq("NOPILOT");
    q.n_pilot = 0;
    q.status = QueueStatus::Standby;
    let r = broker(&t, std::slice::from_ref(&q), &params(CODE));
    let s = only_skip(&r);
    assert_eq!((s.stage, s.temporary), (Stage::Pilot, true));
    assert_eq!(s.to_string(), "  skip site=NOPILOT due to no pilot criteria=-nopilot");
    // Seed: standby is not online.
    assert_eq!(only_skip(&broker(&t, std::slice::from_ref(&q), &params(SEED))).stage, Stage::Status);
    // numSlots defined → no pilot needed; a temporary skip is overridden by a later permanent one.
    q.status = QueueStatus::Online;
    q.num_slots = Some(4);
    assert_eq!(broker(&t, std::slice::from_ref(&q), &params(CODE)).candidates().len(), 1);
    q.num_slots = None;
    q.output_endpoint = Some(("X_DATADISK".into(), 100.0));
    q.maxwdir = 1;
    let r = broker(&t, std::slice::from_ref(&q), &params(CODE));
    assert_eq!((only_skip(&r).stage, only_skip(&r).temporary), (Stage::Disk, false));
    q.maxwdir = 0;
    let r = broker(&t, std::slice::from_ref(&q), &params(CODE));
    assert_eq!(only_skip(&r).reason.to_string(), "due to no pilot criteria=-nopilot", "last temporary wins");
    // Seed excludes `test` PQs by name; the code does not.
    let tq = pq("ANALY_Test_queue");
    assert_eq!(only_skip(&broker(&t, std::slice::from_ref(&tq), &params(SEED))).reason, SkipReason::TestInName);
    assert_eq!(broker(&t, std::slice::from_ref(&tq), &params(CODE)).candidates().len(), 1);
}

#[test]
fn storage_space_and_blacklist() {
    let t = BrokerTask::default();
    let mut q = pq("SE");
    q.output_endpoint = Some(("SE_DATADISK".into(), 199.5));
    let r = broker(&t, std::slice::from_ref(&q), &params(CODE));
    assert_eq!(
        only_skip(&r).to_string(),
        "  skip site=SE due to disk shortage at SE_DATADISK 199.5GB < 200.0GB criteria=-disk"
    );
    q.output_endpoint = Some(("SE_DATADISK".into(), 200.0));
    q.input_endpoints = vec![EndpointStatus { write_wan: false, ..EndpointStatus::default() }];
    let r = broker(&t, std::slice::from_ref(&q), &params(CODE));
    assert_eq!(only_skip(&r).reason, SkipReason::WriteWanBlacklist);
    // At the nucleus write_wan is not needed.
    q.in_nucleus = true;
    assert_eq!(broker(&t, std::slice::from_ref(&q), &params(CODE)).candidates().len(), 1);
    q.input_endpoints.clear();
    assert_eq!(only_skip(&broker(&t, std::slice::from_ref(&q), &params(CODE))).reason, SkipReason::ReadLanBlacklist);
}

#[test]
fn core_count_express_and_io_cutoff() {
    let mut q = pq("SCORE");
    let mc = BrokerTask { core_count: Some(8), ..BrokerTask::default() };
    let r = broker(&mc, std::slice::from_ref(&q), &params(CODE));
    assert_eq!(only_skip(&r).to_string(), "  skip site=SCORE due to core mismatch site:1 <> task:8 criteria=-cpucore");
    q.core_count = Some(16);
    let capped = BrokerTask { max_core_count: Some(8), ..mc.clone() };
    assert!(matches!(
        only_skip(&broker(&capped, std::slice::from_ref(&q), &params(CODE))).reason,
        SkipReason::MaxCpuCore { .. }
    ));
    // Express: code `> 1000` / `== urgent`, seed `≥ 1000` / contains `urgent`.
    let at = |p: i64, pt: &str| BrokerTask { current_priority: p, processing_type: pt.into(), ..BrokerTask::default() };
    assert!(!filters::is_express(&at(1000, "simul"), CODE) && filters::is_express(&at(1000, "simul"), SEED));
    assert!(!filters::is_express(&at(1, "urgent_reco"), CODE) && filters::is_express(&at(1, "urgent_reco"), SEED));
    // Input-move cutoff: 20 GB missing at one PQ, 0 at the other.
    let t = BrokerTask {
        io_intensity: Some(500.0),
        total_input_bytes: 20.0 * GB,
        total_input_files: 10,
        ..BrokerTask::default()
    };
    let far = pq("FAR");
    let mut near = pq("NEAR");
    near.local_input =
        LocalInput { disk_bytes: 20.0 * GB, disk_files: 10, disk_or_tape_bytes: 20.0 * GB, disk_or_tape_files: 10 };
    let r = broker(&t, &[far.clone(), near], &params(CODE));
    assert_eq!(r.candidates().len(), 1);
    assert_eq!(
        only_skip(&r).to_string(),
        "  skip site=FAR since size of missing input is too large (20 GB > 10.0 GB) for IO intensive task (500.0 > 200.0 kBPerS) criteria=-io"
    );
    // No PQ passes → the check is disabled.
    let r = broker(&t, std::slice::from_ref(&far), &params(CODE));
    assert!(r.io_check_disabled && r.candidates().len() == 1);
}

#[test]
fn min_weight_and_negative_t1_weight() {
    let t = BrokerTask::default();
    let mut p = params(CODE);
    p.min_weight.insert("managed".into(), 0.5);
    let r = broker(&t, &[pq("A")], &p); // weight 11/10... no: running 10 → 11/10 = 1.1
    assert_eq!(r.candidates().len(), 1);
    let mut idle = pq("B");
    idle.counts = JobCounts { running: 1, activated: 1, ..JobCounts::default() }; // 2/11
    let r = broker(&t, std::slice::from_ref(&idle), &p);
    assert_eq!(
        only_skip(&r).to_string(),
        "  skip site=B due to weight below the minimum MIN_WEIGHT_managed=0.5, weight=0.18181818181818182 criteria=-below_min_weight"
    );
    // t1Weight = −1: nucleus PQs only, and of them the one with the most running jobs.
    let neg = BrokerTask { t1_weight: -1, ..nucleus_task() };
    let mk = |n: &str, run: u64, nuc: bool| {
        let mut q = pq(n);
        q.in_nucleus = nuc;
        q.counts_all.running = run;
        q
    };
    let r = broker(
        &neg,
        &[mk("N1", 50, true), mk("SAT", 500, false), mk("N2", 80, true), mk("N3", 60, true)],
        &params(CODE),
    );
    assert_eq!(r.candidates().iter().map(|c| c.queue).collect::<Vec<_>>(), vec![2]);
    assert_eq!(r.why(1).unwrap().reason, SkipReason::NegativeT1Weight);
    assert_eq!(r.why(0).unwrap().reason, SkipReason::LowRunningForT1 { n_running_all: 50 });
    assert_eq!(r.why(3).unwrap().reason, SkipReason::LowRunningForT1 { n_running_all: 60 });
}

#[test]
fn python_float_repr() {
    assert_eq!(py_float(1.0), "1.0");
    assert_eq!(py_float(0.25), "0.25");
    assert_eq!(py_float(1e-7), "1e-07");
    assert_eq!(py_float(1.5e16), "1.5e+16");
    assert_eq!(py_float(0.0001), "0.0001");
    assert_eq!(py_float(f64::NAN), "nan");
    assert_eq!(py_float(-3.0), "-3.0");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn broker_never_panics(
        counts in proptest::collection::vec((0u64..50, 0u64..50, 0u64..50, 0u64..50, 0u64..50), 0..14),
        prio in -100i64..2000,
        total in prop_oneof![Just(f64::NAN), Just(-1.0), 0.0..1e12],
        ram in prop_oneof![Just(None), Just(Some(f64::NAN)), (0.0..1e5).prop_map(Some)],
        cc in 0u32..65, maxwdir in 0u64..100_000, maxtime in 0u64..400_000,
        pref in prop_oneof![Just(None), Just(Some(f64::NAN)), (0.0..3.0).prop_map(Some)],
        seed in any::<bool>(),
    ) {
        let t = BrokerTask {
            current_priority: prio, total_input_bytes: total, total_input_files: 10, ram_count: ram,
            io_intensity: Some(300.0), walltime: WalltimeEstimate { cpu_time: Some(10.0), ..WalltimeEstimate::default() },
            disk: DiskEstimate { max_events_per_job: 100.0, out_disk_bytes: f64::NAN, ..DiskEstimate::default() },
            ..nucleus_task()
        };
        let qs: Vec<BrokerQueue> = counts.iter().enumerate().map(|(i, &(r, a, s, d, g))| BrokerQueue {
            name: format!("Q{i}"), core_count: Some(cc), maxwdir, maxtime, arch_preference_weight: pref,
            counts: JobCounts { running: r, activated: a, starting: s, defined: d, assigned: g, transferring: 0 },
            output_storage_site: Some(if i % 2 == 0 { "NUC".into() } else { format!("S{i}") }),
            link: Link::Satellite(LinkMetrics { queued_files: Some(r * 4), mbps_1h: Some(a as f64), ..LinkMetrics::default() }),
            ..BrokerQueue::default()
        }).collect();
        let p = JobBrokerParams { variant: if seed { SEED } else { CODE }, nw_active: true, ..JobBrokerParams::default() };
        let r = broker(&t, &qs, &p);
        prop_assert!(r.candidates().len() <= MAX_SITE_CANDIDATES);
        prop_assert_eq!(r.candidates().len() + r.skipped.len(), qs.len());
        prop_assert!(r.candidates().iter().all(|c| c.weight.is_finite() && c.weight >= 0.0));
        for s in &r.skipped { let _ = s.to_string(); }
    }
}

proptest! {
    /// The candidates' sort key orders weights as `f64::total_cmp` does, signed zeros, NaNs
    /// and infinities included.
    #[test]
    fn total_order_key_is_total_cmp(
        a in prop_oneof![any::<f64>(), Just(0.0), Just(-0.0), Just(f64::NAN), Just(-f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY)],
        b in prop_oneof![any::<f64>(), Just(0.0), Just(-0.0), Just(f64::MIN_POSITIVE), Just(-f64::NAN), Just(f64::NEG_INFINITY)],
    ) {
        prop_assert_eq!(total_order_key(a).cmp(&total_order_key(b)), a.total_cmp(&b));
    }
}
