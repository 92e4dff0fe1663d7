//! The persistent filters of analysis brokerage, in code order (seed 004, "Filters for
//! persistent issues"; reference §4 "Candidate generation & filter chain",
//! `AtlasAnalJobBroker.py` L543-1505).
//!
//! Each per-PQ check is a function `(ctx, queue) -> Option<SkipReason>`; the list-level steps
//! (data locality, include/exclude with `AUTO`, pre-assignment, hospital queues) take the whole
//! candidate list. [`super::broker()`] runs them in the order of [`PERSISTENT_CHAIN`].

use regex::Regex;

use super::input::{AnalBrokerInput, AnalQueue, QueueStatus, QueueType, Replica, SwCheck};
use super::params::{AnalBrokerParams, AnalBrokerVariant};
use super::reason::SkipReason;

/// `JobUtils.MEMORY_COMPENSATION`.
pub const MEMORY_COMPENSATION: f64 = 0.9;
/// 24 h × 10 HS06 (s): minimum site walltime per core for scouts, merges and walltime-undefined
/// jobs (L1322).
pub const MIN_TIME_FOR_ZERO_WALLTIME: f64 = 24.0 * 60.0 * 60.0 * 10.0;
/// Suffix of hospital queues, dropped when any other PQ remains (L1487-1505).
pub const HOSPITAL_SUFFIX: &str = "_HOSPITAL";
/// Data weight of a dataset only on tape (L577).
pub const TAPE_DATA_WEIGHT: f64 = 0.001;
const MIB: f64 = 1024.0 * 1024.0;

/// One `excludedSite`/`includedSite` entry as `AtlasBrokerUtils.isMatched` reads it.
#[derive(Debug, Clone)]
enum Pattern {
    /// No `*`: exact name.
    Exact(String),
    /// With `*` → `.*`, searched unanchored (`re.search`).
    Search(Regex),
    /// Empty, or a pattern Python's `re` would reject (which would crash the brokerage): never
    /// matches.
    Never,
}

/// A compiled site list.
#[derive(Debug, Clone, Default)]
pub struct SiteList {
    patterns: Vec<Pattern>,
    /// The list contains the literal `AUTO`.
    pub has_auto: bool,
}

impl SiteList {
    /// Compiles `names` once per brokerage.
    pub fn new(names: &[String]) -> Self {
        let patterns = names
            .iter()
            .map(|n| match n.as_str() {
                "" => Pattern::Never,
                s if s.contains('*') => Regex::new(&s.replace('*', ".*")).map_or(Pattern::Never, Pattern::Search),
                s => Pattern::Exact(s.to_string()),
            })
            .collect();
        Self { patterns, has_auto: names.iter().any(|n| n == "AUTO") }
    }

    /// `isMatched(site, list)`.
    pub fn matches(&self, site: &str) -> bool {
        self.patterns.iter().any(|p| match p {
            Pattern::Exact(s) => s == site,
            Pattern::Search(r) => r.is_match(site),
            Pattern::Never => false,
        })
    }
}

/// What the checks of one loop share.
pub struct Ctx<'a> {
    pub p: &'a AnalBrokerParams,
    pub input: AnalBrokerInput<'a>,
    /// This loop checks data locality.
    pub check_locality: bool,
    /// `sitePreAssigned`: the task's `site` is a known PQ.
    pub preassigned: Option<usize>,
    pub include: Option<SiteList>,
    pub exclude: SiteList,
}

impl Ctx<'_> {
    fn queue(&self, q: usize) -> Option<&AnalQueue> {
        self.input.queues.get(q)
    }

    /// `siteListPreAssigned`: an `includedSite` list is given.
    fn site_list_preassigned(&self) -> bool {
        self.include.is_some()
    }
}

/// Candidate generation (L122-150): PQs of type `analysis` or grandly unified, plus the
/// pre-assigned PQ whatever its type.
pub fn initial_candidates(input: &AnalBrokerInput<'_>) -> Vec<usize> {
    let pre = input.task.preassigned.filter(|&p| p < input.queues.len());
    (0..input.queues.len())
        .filter(|&q| {
            Some(q) == pre
                || input.queues.get(q).is_some_and(|x| matches!(x.queue_type, QueueType::Analysis | QueueType::Unified))
        })
        .collect()
}

/// `useVP` (L83-87, L449): not for merging, `avoid_vp`, scouts, forceStaged or distributed input.
pub fn use_vp(input: &AnalBrokerInput<'_>) -> bool {
    let t = input.task;
    !(t.is_merging || t.avoid_vp || t.use_scout || t.use_local_io || t.distributed_input)
}

/// Outcome of the data-locality step.
#[derive(Debug, Clone, PartialEq)]
pub struct Locality {
    /// Candidates left, in input order.
    pub kept: Vec<usize>,
    /// Per candidate of `kept`: Σ over datasets of 1 (disk) or 0.001 (tape only).
    pub data_weight: Vec<f64>,
    /// No PQ had all the data; the union of partial holders was used (`useUnionLocality`).
    pub union: bool,
    /// Candidates with every dataset on non-VP storage (`scanSiteWoVP`).
    pub without_vp: Vec<usize>,
}

/// The input data check (L543-654) over `cands`: PQs with every dataset on disk if any,
/// else with every dataset (tape included), else the union of partial holders (on disk first),
/// and for a pre-assigned PQ its own data or the union.
pub fn data_locality(ctx: &Ctx<'_>, cands: &[usize]) -> Locality {
    let input = &ctx.input;
    let n = input.task.n_datasets;
    let vp = use_vp(input);
    let any = |q: usize, f: &dyn Fn(Replica) -> bool| (0..n).any(|d| f(input.replica(q, d)));
    let all = |q: usize, f: &dyn Fn(Replica) -> bool| (0..n).all(|d| f(input.replica(q, d)));
    let with_tape = |r: Replica| r != Replica::Absent;
    let on_disk = |r: Replica| r == Replica::Disk || (vp && r == Replica::Vp);
    let non_vp = |r: Replica| matches!(r, Replica::Tape | Replica::Disk);
    let inter: Vec<usize> = cands.iter().copied().filter(|&q| all(q, &with_tape)).collect();
    let on_disk_all: Vec<usize> = cands.iter().copied().filter(|&q| all(q, &on_disk)).collect();
    let union: Vec<usize> = cands.iter().copied().filter(|&q| any(q, &with_tape)).collect();
    let union_disk: Vec<usize> = cands.iter().copied().filter(|&q| any(q, &on_disk)).collect();
    let mut used_union = false;
    let kept = if let Some(pre) = ctx.preassigned {
        if !inter.contains(&pre) && !union.contains(&pre) {
            Vec::new()
        } else if !inter.contains(&pre) {
            union.clone()
        } else {
            inter.clone()
        }
    } else if !on_disk_all.is_empty() {
        on_disk_all
    } else if inter.is_empty() && !union.is_empty() {
        used_union = true;
        if union_disk.is_empty() { union.clone() } else { union_disk }
    } else {
        inter.clone()
    };
    let data_weight = kept
        .iter()
        .map(|&q| {
            (0..n)
                .map(|d| match input.replica(q, d) {
                    r if on_disk(r) => 1.0,
                    Replica::Absent => 0.0,
                    _ => TAPE_DATA_WEIGHT,
                })
                .sum()
        })
        .collect();
    let without_vp = if used_union {
        cands.iter().copied().filter(|&q| any(q, &non_vp)).collect()
    } else {
        cands.iter().copied().filter(|&q| all(q, &non_vp)).collect()
    };
    Locality { kept, data_weight, union: used_union, without_vp }
}

/// Status (L657-682). Seed: only `online` unless pre-assigned; code: `offline` always out,
/// `brokeroff`/`test` unless pre-assigned (or an include list is given), others pass.
pub fn status(ctx: &Ctx<'_>, q: usize) -> Option<SkipReason> {
    let s = ctx.queue(q)?.status;
    let is_pre = ctx.preassigned == Some(q);
    let skip = match ctx.p.variant {
        AnalBrokerVariant::Seed => {
            let listed = ctx.include.as_ref().is_some_and(|l| ctx.queue(q).is_some_and(|x| l.matches(&x.name)));
            s != QueueStatus::Online && !is_pre && !listed
        }
        AnalBrokerVariant::PandaServer => match s {
            QueueStatus::Offline => true,
            QueueStatus::Brokeroff | QueueStatus::Test => {
                !ctx.site_list_preassigned() && (ctx.preassigned.is_none() || !is_pre)
            }
            _ => false,
        },
    };
    skip.then_some(SkipReason::Status(s))
}

/// Zero share (L686-702), not for a pre-assigned task.
pub fn zero_share(ctx: &Ctx<'_>, q: usize) -> Option<SkipReason> {
    (ctx.preassigned.is_none() && ctx.queue(q)?.zero_share).then_some(SkipReason::ZeroShare)
}

/// DiskIO (L704-752): task diskIO (÷ PQ cores for a multi-core task) and the PQ's running
/// average both above the limit (`maxDiskio` or `MAX_DISKIO_DEFAULT`).
pub fn disk_io(ctx: &Ctx<'_>, q: usize) -> Option<SkipReason> {
    let x = ctx.queue(q)?;
    let limit = x.max_diskio.filter(|&m| m > 0.0).unwrap_or(ctx.p.max_diskio_default);
    let t = ctx.input.task;
    let mut task_io = t.disk_io?;
    if !matches!(t.core_count, None | Some(0) | Some(1)) {
        if let Some(c) = x.core_count.filter(|&c| c > 0) {
            task_io /= c as f64;
        }
    }
    let usage = x.diskio_usage;
    (task_io != 0.0 && usage != 0.0 && usage > limit && task_io > limit).then_some(SkipReason::DiskIoOverload)
}

/// IO intensity (L754-773): the task's above the PQ's `max_io_intensity` (not for merging).
pub fn io_intensity(ctx: &Ctx<'_>, q: usize) -> Option<SkipReason> {
    let t = ctx.input.task;
    let io = t.io_intensity.filter(|&i| i != 0.0 && !t.is_merging)?;
    let site = ctx.queue(q)?.max_io_intensity?;
    (io > site).then_some(SkipReason::MaxIoIntensity { task: io, site })
}

/// VP avoidance (L775-790): VP PQs out when the task avoids VP, VP is off (`avoid_vp` of the
/// loop: merging, distributed input, union locality) or locality is not checked.
pub fn avoid_vp(ctx: &Ctx<'_>, q: usize, avoid: bool) -> Option<SkipReason> {
    let on = ctx.input.task.avoid_vp || avoid || !ctx.check_locality;
    (on && ctx.queue(q)?.uses_vp).then_some(SkipReason::AvoidVp)
}

/// Core count (L792-820): `useMP` only (task cores > 1 → PQ cores > 1), any (0), unuse (PQ
/// cores 0/1/unset); and PQ cores ≤ the task's `maxCoreCount`.
pub fn core_count(ctx: &Ctx<'_>, q: usize) -> Option<SkipReason> {
    let t = ctx.input.task;
    let site = ctx.queue(q)?.core_count;
    let ok = match t.core_count {
        Some(c) if c > 1 => site.is_some_and(|s| s > 1),
        Some(0) => true,
        _ => matches!(site, None | Some(0) | Some(1)),
    };
    if !ok {
        return Some(SkipReason::CoreMismatch { site, task: t.core_count });
    }
    match (t.max_core_count.filter(|&m| m > 0), site.filter(|&s| s > 0)) {
        (Some(m), Some(s)) if s > m => Some(SkipReason::MaxCoreCount { site: s, task_max: m }),
        _ => None,
    }
}

/// GPU queues need a task architecture that `JsonSoftwareCheck` accepts (L822-844; not HPO).
pub fn gpu_architecture(ctx: &Ctx<'_>, q: usize) -> Option<SkipReason> {
    let (x, t) = (ctx.queue(q)?, ctx.input.task);
    if !x.is_gpu || t.is_hpo {
        None
    } else if !t.has_sw_platform {
        Some(SkipReason::GpuNeedsArchitecture)
    } else {
        (!x.gpu_arch_ok).then_some(SkipReason::GpuArchitectureUnavailable)
    }
}

/// Closed jobs (L846-862): any `closed` job of the task at the PQ within `TW_DONE_JOB_STAT`
/// (not pre-assigned, not merging).
pub fn closed(ctx: &Ctx<'_>, q: usize) -> Option<SkipReason> {
    let n_closed = ctx.input.stats(q).n_closed;
    (ctx.preassigned.is_none() && !ctx.input.task.is_merging && n_closed > 0).then_some(SkipReason::Closed { n_closed })
}

/// SW/HW (L864-1050, not pre-assigned): AUTO-checked PQs pass (if a regexp cmtconfig
/// resolves); `releases == ['ANY']` only without a host CPU/GPU spec.
pub fn software(ctx: &Ctx<'_>, q: usize) -> Option<SkipReason> {
    if ctx.preassigned.is_some() {
        return None;
    }
    match ctx.queue(q)?.sw {
        SwCheck::Passed => None,
        SwCheck::PassedUnresolvedRegexp => Some(SkipReason::UnresolvedCmtConfig),
        SwCheck::ReleasesAny if !ctx.input.task.host_hw_spec => None,
        _ => Some(SkipReason::MissingSoftware),
    }
}

/// The memory a job is checked with at a PQ (MB): code `int(ramCount·cores·0.9)`; seed
/// `(baseRamCount + ramCount·cores)·0.9` (cores only when per core and not merging).
pub fn memory_need(ctx: &Ctx<'_>, x: &AnalQueue) -> Option<f64> {
    let t = ctx.input.task;
    let ram = t.ram_count.filter(|&r| r != 0.0 && r.is_finite())?;
    let cores = x.core_count.filter(|&c| c > 0 && t.ram_per_core && !t.is_merging).map_or(1.0, f64::from);
    Some(match ctx.p.variant {
        AnalBrokerVariant::Seed => ((t.base_ram_count + ram * cores) * MEMORY_COMPENSATION).trunc(),
        AnalBrokerVariant::PandaServer => (ram * cores * MEMORY_COMPENSATION).trunc(),
    })
}

/// Memory (L1052-1087): the need within `[minrss, maxrss]` (0/unset = no bound).
pub fn memory(ctx: &Ctx<'_>, q: usize) -> Option<SkipReason> {
    let x = ctx.queue(q)?;
    let need = memory_need(ctx, x)?;
    let set = |v: Option<f64>| v.filter(|&m| m != 0.0);
    if need != 0.0 && set(x.maxrss).is_some_and(|m| need > m) {
        return Some(SkipReason::LowMemory { need_mb: need });
    }
    (need != 0.0 && set(x.minrss).is_some_and(|m| need < m)).then_some(SkipReason::HighMemory { need_mb: need })
}

/// Scratch disk (L1089-1170): direct-IO-only tasks need a direct-IO PQ; the job's disk need
/// (MB) against `maxwdir` scaled by cores (see [`AnalBrokerVariant`]).
pub fn scratch_disk(ctx: &Ctx<'_>, q: usize) -> Option<SkipReason> {
    let (x, t) = (ctx.queue(q)?, ctx.input.task);
    if t.input_lan_only && !x.direct_io_capable && !t.is_merging {
        return Some(SkipReason::NoDirectIo);
    }
    let maxwdir = x.maxwdir.filter(|&m| m != 0.0)?;
    let need = if t.is_merging {
        (2.0 * t.max_atom_size / MIB).floor()
    } else {
        let per_job = t.max_size_per_job.map(|m| (m / MIB).floor());
        if x.direct_io_for_job {
            let mut need = ((t.out_disk_count * t.eff_atom_size + t.work_disk_size) / MIB).floor();
            if let Some(m) = per_job.filter(|_| !t.use_local_io) {
                // Code quirk: the per-job size is already in MB, the work size in bytes.
                need = need.max((t.out_disk_count * m + t.work_disk_size) / MIB);
            }
            need
        } else {
            let need = ((t.out_disk_count * t.eff_atom_size + t.work_disk_size + t.max_atom_size) / MIB).floor();
            per_job.map_or(need, |m| need.max(m))
        }
    };
    let site_cc = x.core_count.filter(|&c| c > 1).map_or(1.0, f64::from);
    let have = match ctx.p.variant {
        AnalBrokerVariant::Seed => maxwdir / site_cc,
        AnalBrokerVariant::PandaServer => {
            let task_cc = if matches!(t.core_count, None | Some(0) | Some(1)) { 1.0 } else { site_cc };
            maxwdir * task_cc / site_cc
        }
    };
    (need > have).then_some(SkipReason::ScratchDisk { have_mb: have, need_mb: need })
}

/// SE space, blacklist, local quota (L1172-1237).
pub fn storage(ctx: &Ctx<'_>, q: usize) -> Option<SkipReason> {
    let x = ctx.queue(q)?;
    let Some(out) = x.output_space_gb else { return Some(SkipReason::OutputEndpointUndefined) };
    let thr_out = ctx.p.storage_min_free_size_output;
    if out < thr_out {
        return Some(SkipReason::OutputDiskShortage { space_gb: out, threshold_gb: thr_out });
    }
    if !ctx.check_locality {
        let Some(inp) = x.input_space_gb else { return Some(SkipReason::InputEndpointUndefined) };
        let thr_in = ctx.p.storage_min_free_size;
        if !x.same_input_output_endpoint && inp < thr_in {
            return Some(SkipReason::InputDiskShortage { space_gb: inp, threshold_gb: thr_in });
        }
    }
    if x.blacklisted {
        return Some(SkipReason::Blacklisted);
    }
    x.over_local_quota.then_some(SkipReason::OverLocalQuota)
}

/// A site time limit as the walltime check scales it: `(t − baseWalltime)·cores·corepower ·
/// cpuEfficiency/100`, truncated, with HS06; `t·cores` without (L1262-1278).
pub fn site_time(ctx: &Ctx<'_>, x: &AnalQueue, limit: f64) -> f64 {
    let t = ctx.input.task;
    crate::panda::common::site_time(
        limit,
        x.core_count,
        x.corepower,
        t.use_hs06.then_some((t.base_walltime, t.cpu_efficiency)),
    )
}

/// Walltime (L1239-1307): the job need within the PQ's scaled `[mintime, maxtime]`; only when
/// the need is known and > 0, not for merging.
pub fn walltime(ctx: &Ctx<'_>, q: usize) -> Option<SkipReason> {
    let (x, t) = (ctx.queue(q)?, ctx.input.task);
    let need = t.min_walltime.filter(|&w| w > 0.0 && !t.is_merging)?;
    let site_max = site_time(ctx, x, x.maxtime);
    if x.maxtime != 0.0 && need > site_max {
        return Some(SkipReason::ShortWalltime { site_max, need });
    }
    let site_min = site_time(ctx, x, x.mintime);
    (x.mintime != 0.0 && need < site_min).then_some(SkipReason::LongWalltime { site_min, need })
}

/// Minimum walltime capacity (L1309-1350): scouts (not pre-assigned) and walltime-undefined
/// tasks need a scaled `maxtime` ≥ 24 h × 10 HS06 × cores.
pub fn min_walltime_capacity(ctx: &Ctx<'_>, q: usize) -> Option<SkipReason> {
    let (x, t) = (ctx.queue(q)?, ctx.input.task);
    if !((ctx.preassigned.is_none() && t.use_scout) || t.walltime_undefined) {
        return None;
    }
    let site_max = site_time(ctx, x, x.maxtime);
    let need = MIN_TIME_FOR_ZERO_WALLTIME * x.core_count.filter(|&c| c > 0).map_or(1.0, f64::from);
    if site_max != 0.0 && site_max < need {
        return Some(if t.use_scout {
            SkipReason::ScoutWalltime { site_max, need }
        } else {
            SkipReason::MinWalltime { site_max, need }
        });
    }
    None
}

/// Pilots (L1352-1374): no getJob/updateJob in 3 h, unless the task label is `test`.
pub fn pilot(ctx: &Ctx<'_>, q: usize) -> Option<SkipReason> {
    (ctx.input.stats(q).n_pilot == 0 && ctx.input.task.prod_source_label != "test").then_some(SkipReason::NoPilot)
}

/// A per-PQ check; each carries the condition under which the code runs it.
pub type Check = fn(&Ctx<'_>, usize) -> Option<SkipReason>;

/// Status, zero share, diskIO, IO intensity: the checks before the VP check (which takes the
/// loop's `avoidVP`).
pub const CHAIN_BEFORE_VP: &[Check] = &[status, zero_share, disk_io, io_intensity];
/// Core count … pilots: the checks after the VP check.
pub const CHAIN_AFTER_VP: &[Check] = &[
    core_count,
    gpu_architecture,
    closed,
    software,
    memory,
    scratch_disk,
    storage,
    walltime,
    min_walltime_capacity,
    pilot,
];
/// The whole persistent chain by name, for documentation and tests.
pub const PERSISTENT_CHAIN: &[&str] = &[
    "input data check",
    "status check",
    "zero share check",
    "diskIO check",
    "max IO intensity check",
    "avoid VP queue check",
    "CPU core check",
    "architecture check",
    "too many closed check",
    "SW/HW check",
    "memory check",
    "scratch disk check",
    "storage space check",
    "walltime check",
    "minimum walltime capacity check",
    "pilot activity check",
    "include/exclude check",
    "preassign check",
    "hospital check",
];

/// Include/exclude/cloud (L1376-1414): returns the kept PQs and the skips. `AUTO` in the include
/// list admits unlisted PQs only when no listed PQ is left.
pub fn include_exclude(ctx: &Ctx<'_>, cands: &[usize]) -> (Vec<usize>, Vec<(usize, SkipReason)>) {
    let (mut kept, mut auto, mut skips) = (Vec::new(), Vec::new(), Vec::new());
    let task_cloud = ctx.input.task.cloud.as_deref().filter(|c| !matches!(*c, "" | "any"));
    for &q in cands {
        let Some(x) = ctx.queue(q) else { continue };
        if ctx.exclude.matches(&x.name) {
            skips.push((q, SkipReason::Excluded));
            continue;
        }
        let mut is_auto = false;
        if let Some(inc) = ctx.include.as_ref().filter(|l| !l.matches(&x.name)) {
            if inc.has_auto {
                is_auto = true;
            } else {
                skips.push((q, SkipReason::NotIncluded));
                continue;
            }
        }
        if task_cloud.is_some_and(|c| c != x.cloud) {
            skips.push((q, SkipReason::CloudMismatch));
            continue;
        }
        if is_auto { auto.push(q) } else { kept.push(q) }
    }
    if kept.is_empty() {
        kept = auto;
    } else {
        skips.extend(auto.into_iter().map(|q| (q, SkipReason::NotIncluded)));
    }
    (kept, skips)
}

/// Hospital queues (L1487-1505) are dropped when any other PQ is left.
pub fn is_hospital(ctx: &Ctx<'_>, q: usize) -> bool {
    ctx.queue(q).is_some_and(|x| x.name.ends_with(HOSPITAL_SUFFIX))
}
