//! The per-PQ filters of production job brokerage in code order (reference §2 "Filter chain
//! in code order", AtlasProdJobBroker.py L386-1516; seed 004 "Filter out preliminary
//! candidates"). Each check reads one PQ and task-level flags computed once ([`Ctx`]); the
//! chain ([`run_chain`]) stops at the first permanent skip and remembers the last temporary one,
//! which is exactly what the code's list-at-a-time filtering yields per PQ (every filter is
//! per PQ; only the input-move cutoff, [`super::input_move::io_cutoff`], looks at the whole list).

use super::fairshare_policy::ShareTask;
use super::inputs::{BrokerQueue, BrokerTask, InputLan, IpConnectivity, JobSeed, PreAssignment};
use super::params::{JobBrokerParams, JobBrokerVariant};
use super::reasons::{SkipReason, Stage};
use crate::panda::network::{self, Link, LinkCheck, NetworkSettings};

const MB: f64 = 1024.0 * 1024.0;
/// `InputChunk.defaultOutputSize`: 1500 MB, the floor of the output estimate.
pub const DEFAULT_OUTPUT_SIZE: f64 = 1500.0 * MB;
/// `getWorkDiskSize` safety margin (code) / the seed's floor of the work disk: 300 MB.
pub const WORK_DISK_MARGIN: f64 = 300.0 * MB;
/// `JobUtils.MEMORY_COMPENSATION`.
pub const MEMORY_COMPENSATION: f64 = 0.9;
/// Transferring limit when the PQ sets none (`def_maxTransferring`).
pub const DEFAULT_TRANSFERRING_LIMIT: u64 = 2000;
/// `WORLD_NUCLEUS_WEIGHT`: T1 weight of IO-intensive (> 500 kB/s) tasks with `t1Weight` 0.
pub const WORLD_NUCLEUS_WEIGHT: i64 = 4;

/// Outcome of one filter for one PQ.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Pass,
    /// `siteSkippedTmp`: kept until the temporary-problem check.
    Temporary(SkipReason),
    /// Removed now.
    Skip(SkipReason),
}

use Verdict::{Pass, Skip, Temporary};

/// Task-level quantities every filter reads, computed once per brokerage.
#[derive(Debug, Clone)]
pub struct Ctx<'a> {
    pub task: &'a BrokerTask,
    pub params: JobBrokerParams,
    pub net: NetworkSettings,
    pub variant: JobBrokerVariant,
    pub share_task: ShareTask<'a>,
    /// `inputChunk.isExpress()` in the variant's reading.
    pub express: bool,
    /// `t1Weight` after the T1 rules (L1388-1423).
    pub t1_weight: i64,
    /// `useT1Weight`: negative `t1Weight`, not merging.
    pub use_t1_weight: bool,
}

/// `isExpress()`: code — `processingType == "urgent"` or `currentPriority > 1000`
/// (InputChunk.py L1020-1024); seed — "processingType=*urgent* or priority ≥ 1000".
pub fn is_express(task: &BrokerTask, variant: JobBrokerVariant) -> bool {
    match variant {
        JobBrokerVariant::PandaServer => task.processing_type == "urgent" || task.current_priority > 1000,
        JobBrokerVariant::Seed => task.processing_type.contains("urgent") || task.current_priority >= 1000,
    }
}

impl<'a> Ctx<'a> {
    pub fn new(task: &'a BrokerTask, params: &JobBrokerParams) -> Self {
        let params = params.sane();
        let variant = params.variant;
        let high_prio = task.current_priority >= 800 || task.is_scout;
        let not_pre = !task.any_pre_assigned();
        // t1WeightForHighPrio: set only where the opportunistic filter runs (L520-551).
        let t1_high =
            if high_prio && not_pre && !task.use_event_service && (task.current_priority >= 900 || task.is_scout) {
                100
            } else {
                1
            };
        let use_t1_weight = task.t1_weight < 0 && !task.is_merging;
        let mut t1 = task.t1_weight;
        if t1 == 0 {
            t1 = if task.io_intensity.is_some_and(|io| io > 500.0) { WORLD_NUCLEUS_WEIGHT } else { 1 };
        }
        if use_t1_weight {
            t1 = 1;
        }
        Self {
            task,
            net: params.network(),
            variant,
            share_task: ShareTask {
                processing_type: &task.processing_type,
                working_group: task.working_group.as_deref(),
                gshare: task.gshare.as_deref(),
                current_priority: task.current_priority,
                is_merging: task.is_merging,
            },
            express: is_express(task, variant),
            t1_weight: t1.max(t1_high),
            use_t1_weight,
            params,
        }
    }

    fn pre_site(&self) -> bool {
        self.task.pre_assigned == PreAssignment::Site
    }

    /// The PQ's link as the code sees it: unmapped storage → unknown link, storage = nucleus →
    /// nucleus (`nucleus == tmpAtlasSiteName`), else the caller's link.
    pub fn link_of(&self, q: &BrokerQueue) -> Link {
        match (&q.output_storage_site, &self.task.nucleus) {
            (None, _) => Link::Unknown,
            (Some(s), Some(n)) if *s == n.name => Link::Nucleus,
            _ => q.link,
        }
    }
}

fn contains_test(name: &str) -> bool {
    name.as_bytes().windows(4).any(|w| w.eq_ignore_ascii_case(b"test"))
}

/// Seed candidate list: "excluding any queue with case-insensitive 'test' in the name" (not
/// in the code, whose candidates are all production PQs of the cloud).
pub fn candidate_name(c: &Ctx, q: &BrokerQueue) -> Verdict {
    if c.variant == JobBrokerVariant::Seed && !c.task.any_pre_assigned() && contains_test(&q.name) {
        Skip(SkipReason::TestInName)
    } else {
        Pass
    }
}

/// Status (L386-424): online or standby (code) / online (seed); not for pre-assigned tasks.
pub fn status(c: &Ctx, q: &BrokerQueue) -> Verdict {
    if c.task.any_pre_assigned() || c.variant.accepts_status(q.status) {
        Pass
    } else {
        Skip(SkipReason::Status(q.status))
    }
}

/// Link check (L427-519) through [`network::link_check`], after the nucleus `write_wan` test.
pub fn link(c: &Ctx, q: &BrokerQueue) -> Verdict {
    let (Some(nuc), Some(sat)) = (&c.task.nucleus, &q.output_storage_site) else { return Pass };
    let link = c.link_of(q);
    if link == Link::Nucleus {
        return Pass;
    }
    if let Some(dt) = nuc.write_wan_down {
        return Temporary(SkipReason::DestBlacklisted {
            endpoint: nuc.output_endpoint.clone(),
            nucleus: nuc.name.clone(),
            write_wan: dt,
        });
    }
    match network::link_check(&link, nuc.total_queued_files, &c.net) {
        LinkCheck::Ok => Pass,
        LinkCheck::NucleusSaturated => {
            Temporary(SkipReason::LinksFull { queued: nuc.total_queued_files, cap: c.net.nqueued_nuc_cap_for_jobs })
        }
        LinkCheck::Blocked => Skip(SkipReason::LinkBlocked { satellite: sat.clone(), nucleus: nuc.name.clone() }),
        LinkCheck::LinkSaturated => Temporary(SkipReason::LinkSaturated {
            queued: match link {
                Link::Satellite(m) => m.queued_files.unwrap_or(0),
                _ => 0,
            },
            op: c.net.variant.sat_cap_op(),
            cap: c.net.nqueued_sat_cap,
            satellite: sat.clone(),
            nucleus: nuc.name.clone(),
        }),
    }
}

/// Opportunistic PQs (`pledgedCPU == -1`) for priority ≥ 800 or scouts (L520-551).
pub fn opportunistic(c: &Ctx, q: &BrokerQueue) -> Verdict {
    let t = c.task;
    let applies = (t.current_priority >= 800 || t.is_scout) && !t.any_pre_assigned();
    if applies && q.is_opportunistic() { Skip(SkipReason::Opportunistic) } else { Pass }
}

/// Inactive PQs (laststart > 2 h with activated+starting jobs) for priority ≥ 800, scouts and
/// merging (L553-591): temporary.
pub fn inactive(c: &Ctx, q: &BrokerQueue) -> Verdict {
    let t = c.task;
    let applies = (t.current_priority >= 800 || t.is_scout || t.is_merging || t.merge_output) && !t.any_pre_assigned();
    if applies && q.inactive && q.counts_all.activated + q.counts_all.starting > 0 {
        Temporary(SkipReason::Inactive)
    } else {
        Pass
    }
}

/// Zero share (L593-612): runs when `(sitePreAssigned and label != managed) or work queue not
/// in {test, validation}` (Python's `and`/`or` precedence).
pub fn zero_share(c: &Ctx, q: &BrokerQueue) -> Verdict {
    let t = c.task;
    let runs = (c.pre_site() && t.prod_source_label != "managed")
        || !matches!(t.work_queue_name.as_str(), "test" | "validation");
    if runs && q.fairshare.has_zero_share(&c.share_task) { Skip(SkipReason::ZeroShare) } else { Pass }
}

/// Jumbo (L616-663).
pub fn jumbo(c: &Ctx, q: &BrokerQueue) -> Verdict {
    if c.pre_site() {
        return Pass;
    }
    match (c.task.num_jumbo_jobs, c.task.n_ready_events) {
        (None, _) if q.use_jumbo_jobs => Skip(SkipReason::JumboOnly),
        (Some(_), Some(ready)) if q.use_jumbo_jobs => match q.min_events_for_jumbo {
            Some(min) if ready < min => Skip(SkipReason::FewEvents { min_events: min, ready_events: ready }),
            _ => Pass,
        },
        _ => Pass,
    }
}

/// DiskIO (L665-728): temporary when both the task's diskIO (÷ PQ cores for multicore tasks)
/// and the PQ's running average exceed the limit.
pub fn disk_io(c: &Ctx, q: &BrokerQueue) -> Verdict {
    let usage = q.diskio_usage_per_core;
    let limit = match q.max_diskio {
        Some(l) if l > 0.0 => l,
        _ => c.params.max_diskio_default(),
    };
    let task_io = c.task.disk_io.map(|io| match (c.task.core_count, q.cores()) {
        (Some(tc), Some(sc)) if tc > 1 => (io / sc as f64).floor(),
        _ => io,
    });
    let truthy = |x: f64| x != 0.0 && !x.is_nan();
    match task_io {
        Some(tio) if truthy(tio) && truthy(usage) && usage > limit && tio > limit => Temporary(SkipReason::DiskIo),
        _ => Pass,
    }
}

/// Core count (L730-761): `useMP` only / any / unuse against the PQ's `coreCount`, and
/// `maxCoreCount`.
pub fn core_count(c: &Ctx, q: &BrokerQueue) -> Verdict {
    if c.pre_site() {
        return Pass;
    }
    let t = c.task;
    let tc = t.effective_core_count();
    let site = q.core_count;
    let ok = match tc {
        Some(n) if n > 1 => site.is_some_and(|s| s > 1),
        Some(0) if t.current_priority >= 900 || t.is_scout => site.is_some_and(|s| s > 1),
        Some(0) => true,
        _ => site.is_none_or(|s| s <= 1),
    };
    if !ok {
        return Skip(SkipReason::CpuCore { site, task: tc });
    }
    match (t.max_core_count.filter(|&m| m > 0), q.cores()) {
        (Some(max), Some(s)) if s > max => Skip(SkipReason::MaxCpuCore { site: s, task_max: max }),
        _ => Pass,
    }
}

/// SW/HW availability (L763-869): the verdict of the `panda::arch` hook, when `transHome` is set.
pub fn software(c: &Ctx, q: &BrokerQueue) -> Verdict {
    match (&q.software_ok, c.task.trans_home_set) {
        (Err(m), true) => Skip(SkipReason::Software(m.clone())),
        _ => Pass,
    }
}

/// The memory a job needs at this PQ, MB (`minRamCount`), `None` when the check is off.
pub fn memory_need(c: &Ctx, q: &BrokerQueue) -> Option<i64> {
    let t = c.task;
    let orig = t.ram_count.filter(|&r| r != 0.0 && r.is_finite())?;
    let cc = q.cores().map_or(1.0, f64::from);
    let orig_cc = if q.cores().is_some() { orig * cc } else { orig };
    let base = if t.base_ram_count.is_finite() { t.base_ram_count } else { 0.0 };
    let raw = match (c.variant, t.is_merging, t.ram_per_core) {
        (_, true, _) => orig,
        (JobBrokerVariant::PandaServer, false, true) => orig_cc + base,
        (JobBrokerVariant::PandaServer, false, false) => orig,
        (JobBrokerVariant::Seed, false, true) => base + orig_cc,
        (JobBrokerVariant::Seed, false, false) => base + orig,
    };
    Some((raw * MEMORY_COMPENSATION).trunc() as i64)
}

/// Memory (L871-925): `minRamCount` (×0.9, truncated) within `[minrss, maxrss]` (0 = no limit).
pub fn memory(c: &Ctx, q: &BrokerQueue) -> Verdict {
    let Some(need) = memory_need(c, q) else { return Pass };
    if q.maxrss != 0 && need != 0 && need > q.maxrss as i64 {
        Skip(SkipReason::LowMemory { need_mb: need })
    } else if q.minrss != 0 && need != 0 && need < q.minrss as i64 {
        Skip(SkipReason::HighMemory { need_mb: need })
    } else {
        Pass
    }
}

/// `CoreUtils.use_direct_io_for_job`.
pub fn direct_io_for_job(t: &BrokerTask, q: &BrokerQueue) -> bool {
    !t.is_merging && (q.always_direct_io || (!t.use_local_io && t.allow_input_lan.is_some() && q.direct_io))
}

/// `(available MB, needed MB)` of the scratch-disk check, `None` when `maxwdir` is 0.
pub fn scratch_need(c: &Ctx, q: &BrokerQueue) -> Option<(f64, f64)> {
    if q.maxwdir == 0 {
        return None;
    }
    let (t, d) = (c.task, &c.task.disk);
    let per = if d.out_scales_with_events { d.max_events_per_job } else { d.max_effective_input_bytes };
    let out = (d.out_disk_bytes.max(0.0) * per.max(0.0)).max(DEFAULT_OUTPUT_SIZE);
    let work = d.work_disk_bytes.map(|w| if w.is_finite() { w.max(0.0) } else { 0.0 });
    let input = if direct_io_for_job(t, q) { 0.0 } else { d.max_input_bytes.max(0.0) };
    let site_cc = q.core_count.filter(|&c| c > 1).unwrap_or(1) as f64;
    match c.variant {
        JobBrokerVariant::PandaServer => {
            let need = ((out + work.map_or(0.0, |w| w + WORK_DISK_MARGIN) + input) / MB).floor();
            let single = t.core_count.is_none_or(|n| n <= 1) && !t.use_event_service;
            let task_cc = if single { 1.0 } else { site_cc };
            Some((q.maxwdir as f64 * task_cc / site_cc, need))
        }
        JobBrokerVariant::Seed => {
            let need = (input + out + work.unwrap_or(0.0).max(WORK_DISK_MARGIN)) / MB;
            Some((q.maxwdir as f64 / site_cc, need))
        }
    }
}

/// Scratch disk (L927-987): direct-IO-only tasks need a direct-IO PQ; the job's disk estimate
/// must fit in the scaled `maxwdir`.
pub fn scratch_disk(c: &Ctx, q: &BrokerQueue) -> Verdict {
    let t = c.task;
    if t.allow_input_lan == Some(InputLan::Only) && !q.direct_io && !q.always_direct_io && !t.is_merging {
        return Skip(SkipReason::RemoteIo);
    }
    match scratch_need(c, q) {
        Some((available_mb, need_mb)) if need_mb > available_mb => {
            Skip(SkipReason::ScratchDisk { available_mb, need_mb })
        }
        _ => Pass,
    }
}

/// SE space and blacklist (L989-1031, `check_endpoints_with_blacklist` L1215-1285): temporary.
pub fn storage(c: &Ctx, q: &BrokerQueue) -> Verdict {
    if let Some((ep, space)) = &q.output_endpoint {
        let thr = c.params.storage_min_free_size();
        if *space < thr || space.is_nan() {
            return Temporary(SkipReason::DiskShortage { endpoint: ep.clone(), space_gb: *space, threshold_gb: thr });
        }
    }
    let t = c.task;
    let mut remote = t.remote_source_available;
    let (mut read_lan, mut receive_wan) = (false, false);
    for ep in &q.input_endpoints {
        read_lan |= ep.read_lan;
        if !q.in_nucleus || (t.complete_replica_locations_known && !ep.complete_replica) {
            receive_wan |= ep.write_wan;
        } else {
            receive_wan = true;
            remote = true;
        }
    }
    let (mut write_lan, mut send_wan) = (false, false);
    for ep in &q.output_endpoints {
        write_lan |= ep.write_lan;
        if !q.in_nucleus {
            send_wan |= ep.read_wan;
        } else {
            send_wan = true;
            remote = true;
        }
    }
    let reason = [
        (read_lan, SkipReason::ReadLanBlacklist),
        (write_lan, SkipReason::WriteLanBlacklist),
        (receive_wan, SkipReason::WriteWanBlacklist),
        (send_wan, SkipReason::ReadWanBlacklist),
        (remote, SkipReason::SourceBlacklist),
    ]
    .into_iter()
    .find(|(ok, _)| !ok);
    reason.map_or(Pass, |(_, r)| Temporary(r))
}

/// The job's walltime need (`minWalltime`): HS06 — `cpuTime × nEvents`; otherwise `walltime ×
/// effective input size`; ÷ ES consumers × attempts when non-zero.
pub fn job_walltime(t: &BrokerTask) -> Option<f64> {
    let w = &t.walltime;
    let raw = if w.use_hs06 {
        w.cpu_time.map(|c| c * t.disk.max_events_per_job)
    } else {
        w.walltime.map(|wt| wt * t.disk.max_effective_input_bytes)
    };
    raw.map(|m| if m != 0.0 && w.es_divisor > 0.0 { m / w.es_divisor } else { m })
}

/// A PQ time limit in the job's units: `(limit − baseWalltime) × coreCount × corepower ×
/// cpuEfficiency/100`, truncated (HS06 tasks); `limit × coreCount` otherwise.
pub fn site_time(t: &BrokerTask, q: &BrokerQueue, limit: u64) -> f64 {
    let w = &t.walltime;
    crate::panda::common::site_time(
        limit as f64,
        q.cores(),
        q.corepower,
        w.use_hs06.then_some((w.base_walltime, w.cpu_efficiency)),
    )
}

/// Walltime (L1033-1208): the job must fit under `maxtime` and not be shorter than `mintime`;
/// scouts, merges and walltime-undefined tasks need a day-long PQ.
pub fn walltime(c: &Ctx, q: &BrokerQueue) -> Verdict {
    let t = c.task;
    let w = &t.walltime;
    let job = job_walltime(t);
    let smax = site_time(t, q, q.maxtime);
    if q.maxtime != 0 {
        if let Some(j) = job.filter(|&j| j != 0.0) {
            if j > smax {
                return Skip(SkipReason::ShortWalltime { site_limit: smax, job: j });
            }
        }
    }
    let undefined = (w.walltime.is_none_or(|x| x == 0.0) && !w.walltime_unit_set && !w.cpu_time_unit_set)
        || (w.cpu_time.is_none_or(|x| x == 0.0) && w.cpu_time_unit_set);
    if (!c.pre_site() && t.is_scout) || t.is_merging || undefined {
        let cc = q.cores();
        let (short, seed) = match c.variant {
            JobBrokerVariant::PandaServer => {
                let need = 24.0 * 3600.0 * 10.0 * cc.map_or(1.0, f64::from);
                (smax != 0.0 && smax < need, false)
            }
            JobBrokerVariant::Seed => (q.maxtime != 0 && q.maxtime < 24 * 3600, true),
        };
        if short {
            let site_limit = if seed { q.maxtime as f64 } else { smax };
            return Skip(if t.is_scout {
                SkipReason::ScoutWalltime { site_limit, core_count: cc, seed }
            } else {
                SkipReason::MinWalltime { site_limit, core_count: cc, seed }
            });
        }
    }
    if q.mintime != 0 {
        let smin = site_time(t, q, q.mintime);
        if job.is_none_or(|j| j < smin) {
            return Skip(SkipReason::LongWalltime { site_limit: smin, job });
        }
    }
    Pass
}

/// Network connectivity and IP stack (L1210-1251), not for a pre-assigned site.
pub fn network_connectivity(c: &Ctx, q: &BrokerQueue) -> Verdict {
    if c.pre_site() {
        return Pass;
    }
    if let Some(ip) = c.task.ip_connectivity {
        let wn = q.wn_connectivity();
        if !(wn == Some("full") || (wn == Some("http") && ip == IpConnectivity::Http)) {
            return Skip(SkipReason::Connectivity { site: wn.map(str::to_string), task: ip });
        }
    }
    if let Some(stack) = c.task.ip_stack.as_deref().filter(|s| !s.is_empty()) {
        if q.wn_ip_stack() != Some(stack) {
            return Skip(SkipReason::IpStack { site: q.wn_ip_stack().map(str::to_string), task: stack.to_string() });
        }
    }
    Pass
}

/// Event service job seeds (L1253-1299).
pub fn event_service(c: &Ctx, q: &BrokerQueue) -> Verdict {
    if c.pre_site() {
        return Pass;
    }
    match (c.task.es_without_cloning(), q.job_seed) {
        (true, JobSeed::Std) => Skip(SkipReason::EsNotAllowed),
        (true, JobSeed::EsHigh) if !c.task.es_high() => Skip(SkipReason::LowPrioEsNotAllowed),
        (false, JobSeed::Es) => Skip(SkipReason::OnlyEs),
        _ => Pass,
    }
}

/// Transferring backlog of satellite PQs (L1301-1349): temporary.
pub fn transferring(c: &Ctx, q: &BrokerQueue) -> Verdict {
    let Some(sat) = &q.output_storage_site else { return Pass };
    let at_nucleus = c.task.nucleus.as_ref().is_some_and(|n| n.name == *sat);
    if q.in_nucleus || q.shares_nucleus_storage || at_nucleus {
        return Pass;
    }
    let limit = if q.transferring_limit == 0 { DEFAULT_TRANSFERRING_LIMIT } else { q.transferring_limit };
    let n_tra = q.counts_all.transferring as i64 - q.transferring_to_unwritable_nuclei as i64;
    let n_run = q.counts_all.running;
    if (limit.max(2 * n_run) as i64) < n_tra {
        Temporary(SkipReason::Transferring { transferring: n_tra, limit, running: n_run })
    } else {
        Pass
    }
}

/// Work shortage (L1351-1386): no opportunistic PQs, no pledged PQs over their pledge.
pub fn pledge(c: &Ctx, q: &BrokerQueue) -> Verdict {
    if c.pre_site() || !c.params.work_shortage {
        return Pass;
    }
    if q.is_opportunistic() {
        return Skip(SkipReason::NonPledged);
    }
    match q.pledged_cpu {
        Some(p) if p > 0.0 && q.cores_running + q.cores_starting > p => {
            Skip(SkipReason::OverPledged { cores: q.cores_running + q.cores_starting, pledged: p })
        }
        _ => Pass,
    }
}

/// Negative `t1Weight` (L1388-1423): nucleus PQs (and those sharing its output storage) only.
pub fn t1_weight(c: &Ctx, q: &BrokerQueue) -> Verdict {
    if c.use_t1_weight && !(q.in_nucleus || q.shares_nucleus_storage) {
        Skip(SkipReason::NegativeT1Weight)
    } else {
        Pass
    }
}

/// `max_io_intensity` (L1425-1447).
pub fn max_io_intensity(c: &Ctx, q: &BrokerQueue) -> Verdict {
    match (c.task.io_intensity, q.max_io_intensity) {
        (Some(io), Some(m)) if io != 0.0 && !c.task.is_merging && io > m => {
            Skip(SkipReason::MaxIoIntensity { task: io, site: m })
        }
        _ => Pass,
    }
}

/// Full chain (L1449-1480), when the nucleus is known.
pub fn full_chain(c: &Ctx, q: &BrokerQueue) -> Verdict {
    match (&c.task.nucleus, c.task.full_chain) {
        (None, _) => Pass,
        (Some(_), true) if !q.in_nucleus => Skip(SkipReason::NotInNucleusForFullChain),
        (Some(_), false) if q.bare_nucleus_only => Skip(SkipReason::OnlyForFullChain),
        _ => Pass,
    }
}

/// Pilot check (L1482-1516): no pilot in 3 h → temporary, unless test label (and not express),
/// jumbo on a jumbo PQ, or `numSlots` defined.
pub fn pilot(c: &Ctx, q: &BrokerQueue) -> Verdict {
    let t = c.task;
    if t.any_pre_assigned() || q.n_pilot > 0 {
        return Pass;
    }
    let test_label = t.prod_source_label.contains("test") && !c.express;
    let jumbo = t.num_jumbo_jobs.is_some() && q.use_jumbo_jobs;
    if test_label || jumbo || q.num_slots.is_some() { Pass } else { Temporary(SkipReason::NoPilot) }
}

/// A per-PQ filter.
pub type Filter = fn(&Ctx, &BrokerQueue) -> Verdict;

/// The per-PQ filters in code order.
pub const CHAIN: &[(Stage, Filter)] = &[
    (Stage::Candidates, candidate_name),
    (Stage::Status, status),
    (Stage::Link, link),
    (Stage::Opportunistic, opportunistic),
    (Stage::Inactive, inactive),
    (Stage::ZeroShare, zero_share),
    (Stage::Jumbo, jumbo),
    (Stage::DiskIo, disk_io),
    (Stage::CoreCount, core_count),
    (Stage::Software, software),
    (Stage::Memory, memory),
    (Stage::Disk, scratch_disk),
    (Stage::Storage, storage),
    (Stage::Walltime, walltime),
    (Stage::Network, network_connectivity),
    (Stage::EventService, event_service),
    (Stage::Transferring, transferring),
    (Stage::Pledge, pledge),
    (Stage::T1Weight, t1_weight),
    (Stage::MaxIoIntensity, max_io_intensity),
    (Stage::FullChain, full_chain),
    (Stage::Pilot, pilot),
];

/// Result of the chain for one PQ.
#[derive(Debug, Clone, PartialEq)]
pub enum ChainResult {
    /// Removed by a filter.
    Rejected(Stage, SkipReason),
    /// Reached the end; `Some` = a temporary problem (the last one recorded).
    Survived(Option<(Stage, SkipReason)>),
}

/// Runs [`CHAIN`] on one PQ.
pub fn run_chain(c: &Ctx, q: &BrokerQueue) -> ChainResult {
    let mut temp = None;
    for &(stage, check) in CHAIN {
        match check(c, q) {
            Pass => {}
            Temporary(r) => temp = Some((stage, r)),
            Skip(r) => return ChainResult::Rejected(stage, r),
        }
    }
    ChainResult::Survived(temp)
}
