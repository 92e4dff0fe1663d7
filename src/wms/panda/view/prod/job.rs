//! Job brokerage inputs: the task with its input chunk ([`BrokerTask`]) and one [`BrokerQueue`]
//! per production PQ (reference `panda.md` §2–§3, `AtlasProdJobBroker.doBrokerage`).

use super::dynamic::ProdDynamic;
use super::statics::ProdView;
use super::statics::ResourceType;
use super::statics::{QueueStatic, StreamStatic};
use crate::engine::SimDuration;
use crate::panda::harvester::config::{MapType, RunMode};
use crate::panda::job_broker::filters::{ChainResult, Ctx, run_chain};
use crate::panda::job_broker::{
    BrokerQueue, BrokerTask, DiskEstimate, Downtime, JobBrokerParams, JobCounts, LocalInput, NucleusInfo,
    PreAssignment, WalltimeEstimate,
};
use crate::panda::network::{Link, LinkMetrics};
use crate::panda::task_broker::Role;
use crate::scenario::panda::PandaQueue;
use crate::wms::panda::view::dynamic::Dynamic;

/// `inactiveTimeLimit` (AtlasProdJobBroker L561): a PQ whose `laststart` is older is inactive.
pub const INACTIVE_AFTER: SimDuration = SimDuration::from_secs(2 * 3600);
/// JEDI's default `cpuEfficiency`, % (TaskRefinerBase L173-177).
pub const CPU_EFFICIENCY: f64 = 90.0;
/// JEDI's default `baseWalltime`, s (TaskRefinerBase L178-182).
pub const BASE_WALLTIME_S: f64 = 600.0;

/// The input chunk being brokered: JEDI brokers a chunk of files that the job splitter then
/// cuts into jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    /// Jobs the chunk will make (0 reads as 1): its master files are those of this many jobs.
    pub jobs: u64,
    /// `inputChunk.useScout()`: the task's scout jobs.
    pub scout: bool,
}

impl Default for Chunk {
    fn default() -> Self {
        Self { jobs: 1, scout: false }
    }
}

/// One job brokerage: a task of a stream, its nucleus (`None` = task-brokerage hint mode),
/// its `currentPriority` and the chunk.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobQuery {
    /// Index in `panda.tasks`.
    pub stream: usize,
    /// Index in `panda.nuclei`.
    pub nucleus: Option<usize>,
    pub current_priority: i64,
    pub chunk: Chunk,
}

/// `ups_get_queues` (entity_module L3318-3339): `capability == 'ucore'` and `workflow ==
/// 'pull_ups'`. The scenario has no `workflow`; a pull UPS queue is read as a UCORE PQ whose
/// Harvester pulls (`mapType` `NoJob`) in slave mode (`runMode` `slave`: PanDA's
/// `SET_N_WORKERS` commands, the pilot streaming of reference §8).
pub fn is_ups_queue(q: &PandaQueue) -> bool {
    q.is_ucore() && q.harvester.map_type == MapType::NoJob && q.harvester.run_mode == RunMode::Slave
}

/// Hint mode (AtlasProdJobBroker L1519-1540): per PQ, whether it passes every filter of the
/// chain with no temporary problem (`panda::job_broker::filters::run_chain`). The broker's
/// later stages (input-move cutoff, weights, caps, top 10) are not reached in hint mode.
pub fn hint_survivors(task: &BrokerTask, queues: &[BrokerQueue], params: &JobBrokerParams) -> Vec<bool> {
    let ctx = Ctx::new(task, params);
    queues.iter().map(|q| matches!(run_chain(&ctx, q), ChainResult::Survived(None))).collect()
}

/// The CRIC numbers a UCORE PQ is brokered with for a task of resource type `rt`:
/// `SiteMapper.get_child_site_spec` (SiteMapper.py L155-199) of the child `PQ/<rt>` with ATLAS's
/// resource types — `(coreCount, maxrss, minrss)`, with `coreCount = max(min(cc, maxcore),
/// mincore)`, `minrss = max(cc·minrampercore − cc + 1, minrss·cc/cc₀)` (or `max(minrss·cc/cc₀,
/// minrss)`), `maxrss = min(cc·maxrampercore, maxrss·cc/cc₀)` (or `min(maxrss·cc/cc₀, maxrss)`);
/// `maxrss` rounded down and `minrss` up, which decides every integer memory need the same way.
/// A non-UCORE PQ, or a UCORE PQ with fewer cores than the type's `mincore` (no such child), is
/// brokered with its own numbers.
pub fn pseudo_queue_limits(
    ucore: bool,
    corecount: Option<u32>,
    maxrss: u64,
    minrss: u64,
    rt: ResourceType,
) -> (Option<u32>, u64, u64) {
    let parent = (corecount, maxrss, minrss);
    if !ucore {
        return parent;
    }
    let core = f64::from(corecount.unwrap_or(0).max(1));
    let (mincore, maxcore, minram, maxram) = match rt {
        ResourceType::Score => (1.0, Some(1.0), None, Some(2000.0)),
        ResourceType::ScoreHimem => (1.0, Some(1.0), Some(2001.0), None),
        ResourceType::Mcore => (2.0, None, None, Some(2000.0)),
        ResourceType::McoreHimem => (2.0, None, Some(2001.0), None),
    };
    if core < mincore {
        return parent;
    }
    let cc: f64 = match maxcore {
        None => f64::max(core, mincore),
        Some(m) => f64::max(core.min(m), mincore),
    };
    let (max0, min0) = (maxrss as f64, minrss as f64);
    let child_min = match minram {
        Some(r) => f64::max(cc * r - cc + 1.0, min0 * cc / core),
        None => f64::max(min0 * cc / core, min0),
    };
    let child_max = match maxram {
        Some(r) => f64::min(cc * r, max0 * cc / core),
        None => f64::min(max0 * cc / core, max0),
    };
    (Some(cc as u32), child_max.floor() as u64, child_min.ceil() as u64)
}

fn pseudo_queue(qs: &QueueStatic, rt: ResourceType) -> (Option<u32>, u64, u64) {
    pseudo_queue_limits(qs.ucore, qs.corecount, qs.maxrss, qs.minrss, rt)
}

/// Files of dataset `k` that a chunk of `jobs` jobs reads: the master's
/// `⌈jobs × eventsPerJob / eventsPerFile⌉` files (one file per job without `nEventsPerJob`),
/// clamped to `[1, files]`; a secondary dataset the same share of its own files.
fn chunk_files(st: &StreamStatic, k: usize, jobs: u64) -> u64 {
    let g = &st.geometry;
    let (Some(m), Some(ds)) = (g.master.and_then(|m| st.datasets.get(m)), st.datasets.get(k)) else { return 0 };
    if m.files == 0 || ds.files == 0 || g.events_per_file <= 0.0 {
        return 0;
    }
    let jobs = jobs.max(1) as f64;
    let master = ((jobs * g.events_per_job / g.events_per_file).ceil() as u64).clamp(1, m.files);
    if Some(k) == g.master {
        return master;
    }
    ((ds.files as f64 * master as f64 / m.files as f64).ceil() as u64).clamp(1, ds.files)
}

impl ProdView {
    /// The `BrokerTask` of one job brokerage (`None` for an unknown stream or nucleus):
    ///
    /// * `prodSourceLabel` `managed`; `processingType`, `workingGroup`, `gshare` from the stream;
    ///   the work queue is the gshare (global-share work queue); `currentPriority` from `q`;
    ///   `resource_type` ATLAS's ([`ResourceType::of`] the stream's cores and MB/core);
    /// * `coreCount`, `ramCount` (MB per core, `ramUnit` `MBPerCore`; 0 = unset → no memory
    ///   check), `baseRamCount` 0, `t1Weight`, `ioIntensity` from the stream;
    /// * walltime: `cpuTimeUnit` `HS06sPerEvent` with the stream's `cpu_time`, JEDI's default
    ///   `cpuEfficiency` 90 % and `baseWalltime` 600 s; `max_events_per_job` = events of one
    ///   job (`nEventsPerJob`, else those of one master file);
    /// * disk: `outDiskCount` kB/event × 1024 (`getOutDiskSize`), per event; no `workDiskCount`
    ///   (the scenario has none); `getMaxAtomSize` of one job: its master input scaled by its
    ///   events (effective size), and the files of every dataset it reads (`inputDiskCount`);
    /// * `total_input_bytes` / `total_input_files`: the chunk's files ([`Chunk`], unique files of
    ///   every input dataset; `totalSize`, `maxNumFiles`);
    /// * the nucleus: its site name, its default output endpoint (`output_storages[0]`) with its
    ///   `write_wan` in downtime only for a `Role::Nucleus` nucleus (the code's
    ///   `nucleus_with_storages_unwritable_over_wan` is built from `siteMapper.nuclei`), and
    ///   `total_queued_files` = `Network::queued_to(site)`; `full_chain` =
    ///   `check_full_chain_with_nucleus` (full-chain task and a bare nucleus);
    /// * `remote_source_available` / `complete_replica_locations_known` from the stream's
    ///   input completeness (`ProdView::completeness`);
    /// * `trans_home_set` true: ATLAS production tasks always have a release, so the SW/HW
    ///   filter runs; its verdict per PQ is `BrokerQueue::software_ok`.
    ///
    /// The dataset-completeness step before the PQ filters is not part of `BrokerTask`: the
    /// caller first checks [`ProdView::completeness`]`(stream).error` (PanDA's job brokerage of
    /// the task stops there with `retTmpError`).
    ///
    /// Left at the defaults on purpose: no pre-assignment (streams name no `site`), no merge
    /// jobs (`isMerging`, `mergeOutput`, `mergeCoreCount` — the model has no merge step), no
    /// `maxCoreCount`, no event service / job cloning / jumbo jobs, no `allowInputLAN`,
    /// `useLocalIO`, `ipConnectivity`, `ipStack` (split rules the scenario does not have), no
    /// `diskIO` (not in the model), no `walltime` (HS06 units are used).
    pub fn broker_task(&self, q: &JobQuery, d: &Dynamic) -> Option<BrokerTask> {
        let st = self.streams.get(q.stream)?;
        let nucleus = match q.nucleus {
            None => None,
            Some(n) => Some((n, self.nuclei.get(n)?)),
        };
        let cfg = &st.cfg;
        let g = &st.geometry;
        let master = g.master.and_then(|m| st.datasets.get(m));
        let (mut chunk_bytes, mut chunk_files_total, mut job_bytes) = (0.0, 0u64, 0.0);
        for (k, ds) in st.datasets.iter().enumerate() {
            let f = chunk_files(st, k, q.chunk.jobs);
            chunk_files_total += f;
            chunk_bytes += f as f64 * ds.bytes_per_file();
            job_bytes += chunk_files(st, k, 1) as f64 * ds.bytes_per_file();
        }
        let effective = master.map_or(0.0, |m| {
            if cfg.n_events > 0 { m.bytes as f64 * (g.events_per_job / cfg.n_events as f64).min(1.0) } else { 0.0 }
        });
        let nucleus_info = nucleus.map(|(i, n)| {
            let ep = n.output.first().copied().flatten().and_then(|o| self.storages.get(o));
            let write_wan_down = match ep.map(|e| e.write_wan) {
                _ if !self.unwritable_nuclei.contains(&i) => None,
                Some(crate::grid::config::StorageStatus::Test) => Some(Downtime::Test),
                Some(_) => Some(Downtime::Off),
                None => None,
            };
            NucleusInfo {
                name: n.name.clone(),
                output_endpoint: ep.map(|e| e.name.clone()).unwrap_or_default(),
                write_wan_down,
                total_queued_files: n.site.map_or(0, |s| d.network.queued_to(s)),
            }
        });
        let ram = (cfg.ram_count.is_finite() && cfg.ram_count > 0.0).then_some(cfg.ram_count);
        Some(BrokerTask {
            prod_source_label: "managed".into(),
            processing_type: cfg.processing_type.clone(),
            working_group: cfg.working_group.clone(),
            gshare: Some(cfg.gshare.clone()),
            work_queue_name: cfg.gshare.clone(),
            current_priority: q.current_priority,
            resource_type: st.resource_type.name().into(),
            pre_assigned: PreAssignment::None,
            is_scout: q.chunk.scout,
            is_merging: false,
            merge_output: false,
            full_chain: cfg.full_chain.is_some() && nucleus.is_some_and(|(_, n)| n.bare.is_some()),
            nucleus: nucleus_info,
            core_count: Some(cfg.core_count),
            merge_core_count: None,
            max_core_count: None,
            ram_count: ram,
            ram_per_core: true,
            base_ram_count: 0.0,
            disk: DiskEstimate {
                out_disk_bytes: if cfg.out_disk_count.is_finite() { cfg.out_disk_count.max(0.0) * 1024.0 } else { 0.0 },
                out_scales_with_events: true,
                work_disk_bytes: None,
                max_events_per_job: g.events_per_job,
                max_effective_input_bytes: effective,
                max_input_bytes: job_bytes,
            },
            walltime: WalltimeEstimate {
                use_hs06: true,
                cpu_time_unit_set: true,
                cpu_time: Some(cfg.cpu_time).filter(|c| c.is_finite()),
                cpu_efficiency: CPU_EFFICIENCY,
                base_walltime: BASE_WALLTIME_S,
                walltime: None,
                walltime_unit_set: false,
                es_divisor: 1.0,
            },
            allow_input_lan: None,
            use_local_io: false,
            use_event_service: false,
            use_job_cloning: false,
            ip_connectivity: None,
            ip_stack: None,
            t1_weight: cfg.t1_weight,
            io_intensity: cfg.io_intensity,
            disk_io: None,
            num_jumbo_jobs: None,
            n_ready_events: None,
            trans_home_set: true,
            total_input_bytes: chunk_bytes,
            total_input_files: chunk_files_total,
            remote_source_available: st.completeness.remote_source_available,
            complete_replica_locations_known: !st.completeness.complete_locations.is_empty(),
        })
    }

    /// The input of the chunk already at production PQ `pos` (`siteSizeMap`/`siteFilesMap`,
    /// L1542-1612): per dataset, the best replica on the PQ's input endpoints (`read_lan`):
    /// disk ones for `disk_*`, disk or tape for `disk_or_tape_*`; a partial replica holds the
    /// same share of every chunk, rounded down to whole files. Only complete replicas count
    /// for secondary datasets and, without pre-staging, when `ioIntensity > IO_INTENSITY_CUTOFF`
    /// (`complete_only`, L1559-1560).
    fn local_input(&self, st: &StreamStatic, pos: usize, jobs: u64) -> LocalInput {
        let mut out = LocalInput::default();
        let Some(qs) = self.queues.get(pos) else { return out };
        let cfg = &st.cfg;
        let high_io =
            cfg.io_intensity.is_some_and(|io| io > self.job_params.io_intensity_cutoff) && !cfg.input_pre_staging;
        for (k, ds) in st.datasets.iter().enumerate() {
            let complete_only = !ds.master || high_io;
            let (mut disk, mut any) = (0.0f64, 0.0f64);
            for r in ds.replicas.iter().filter(|r| (r.complete || !complete_only) && qs.input_all.contains(&r.storage))
            {
                let tape = self.storages.get(r.storage).is_none_or(|s| s.tape);
                if !tape {
                    disk = disk.max(r.share);
                }
                any = any.max(r.share);
            }
            let files = chunk_files(st, k, jobs) as f64;
            let (df, af) = ((disk * files).floor(), (any * files).floor());
            out.disk_files += df as u64;
            out.disk_bytes += df * ds.bytes_per_file();
            out.disk_or_tape_files += af as u64;
            out.disk_or_tape_bytes += af * ds.bytes_per_file();
        }
        out
    }

    /// Refreshes `out` to the production PQs' [`BrokerQueue`]s for query `q` (entry `i` is PQ
    /// `ProdView::production_queues()[i]`); an `out` of another length is first reset from the
    /// static templates, so a caller keeping its buffer pays no allocation per cycle (only the
    /// SW/HW message of a rejected PQ is copied into the buffer's string). An unknown stream or
    /// nucleus leaves `out` empty.
    ///
    /// Static fields (CRIC): `status`, `ucore` (`capability == ucore`), `coreCount`,
    /// `corepower`, `maxrss`/`minrss`, `maxtime`/`mintime`, `maxwdir` (MB, s), `direct_io` =
    /// `direct_access_lan`, `always_direct_io` = `maxinputsize == -1`, `pledgedCPU`, the parsed
    /// `fairsharepolicy`, catchall `useJumboJobs`, `minEventsForJumbo`, `use_only_local_data`,
    /// `bareNucleus=only`, `maxdiskio`, `wnconnectivity`, `transferringlimit`, `numSlots`
    /// (`Harvester_Slots`, one number per PQ), [`is_ups_queue`]; endpoints from `astorages`
    /// (inputs `read_lan`, outputs `write_lan`, disk only; statuses from the scenario) and the
    /// site of the default output endpoint (`output_storage_site`).
    ///
    /// UCORE PQs (`capability == ucore`) are brokered by PanDA through pseudo-queues, one per
    /// resource type (`get_unified_sites`/`get_pseudo_sites`, JobBrokerBase L70-94): here the
    /// PQ's record carries the `coreCount`, `maxrss` and `minrss` of its child for the task's
    /// resource type ([`pseudo_queue_limits`]). PanDA also keeps the parent and the other
    /// children in its list, so a PQ whose several children pass is several candidates there
    /// (same weight); here each PQ is one candidate.
    ///
    /// Per query: `in_nucleus` (the PQ is at the nucleus' site; hint mode: at any `Role::Nucleus`
    /// site), `shares_nucleus_storage` (`getSitesShareDDM` of the nucleus' first PQ), `link`
    /// (nucleus PQ → [`Link::Nucleus`]; else the observed scenario link from the output
    /// storage's site to the nucleus site: queued files, FTS Mbps 1h/1d/1w, CRIC closeness,
    /// never blocked since scenario closeness is 0–11; no link → [`Link::Unknown`]),
    /// `output_endpoint` = (default output endpoint, `space_usable` GB), `complete_replica` of
    /// the input endpoints, `software_ok` (the (stream, PQ) verdict of `panda::arch`: the
    /// stream's `architecture` against the PQ's `software` with the production broker's
    /// wrapper; the scenario has no release, so AUTO PQs are taken to have it and only the
    /// CPU/GPU, `excl`, regexp-cmtconfig and ANY rules decide), `local_input` of the chunk.
    ///
    /// From the snapshot: `counts` = `Dynamic::queue_gshare_jobs[q][leaf]` (PanDA counts per
    /// work queue = gshare; zero for a gshare that is not a leaf), `counts_all` =
    /// `Dynamic::queue_jobs[q]`, `inactive` = `laststart` older than 2 h (never started: not
    /// inactive, as SQL's `laststart < :t` on NULL), `n_workers` = Harvester workers running +
    /// queued (`ups_load_worker_stats`: running and submitted), `n_pilot` = the pilots of the
    /// last 3 h (`getJob + updateJob` in `SiteData`), read as the running + queued workers plus,
    /// for a push-mode PQ (Harvester `mapType` other than `NoJob`), the Harvester job fetcher
    /// that asks PanDA for the PQ's jobs every cycle (one more requesting node; without it a
    /// push PQ could never get its first job); the [`ProdDynamic`] fields (`live_count`,
    /// `transferring_to_unwritable_nuclei`, `cores_running`/`cores_starting`, `rt_counts`).
    ///
    /// Left at the defaults on purpose: `diskio_usage_per_core` 0 (jobs have no diskIO in the
    /// model), `job_seed` `std` (no CRIC `jobseed`: no event service), `max_io_intensity`
    /// `None` (a CRIC queue parameter the scenario does not have), `arch_preference_weight`
    /// `None` (needs the worker nodes' x86-64 level shares, `get_architecture_level_map`, which
    /// the model does not have), `locked` false (one brokerage process).
    pub fn fill_queues(&self, q: &JobQuery, d: &Dynamic, p: &ProdDynamic, out: &mut Vec<BrokerQueue>) {
        let (Some(st), true) = (self.streams.get(q.stream), q.nucleus.is_none_or(|n| n < self.nuclei.len())) else {
            out.clear();
            return;
        };
        if out.len() != self.template.len() {
            out.clear();
            out.extend_from_slice(&self.template);
        }
        let leaf = st.leaf;
        for (pos, b) in out.iter_mut().enumerate() {
            let Some(qs) = self.queues.get(pos) else { continue };
            let qi = qs.panda;
            (b.core_count, b.maxrss, b.minrss) = pseudo_queue(qs, st.resource_type);
            match (&mut b.software_ok, st.software.get(pos)) {
                (Err(dst), Some(Err(src))) => dst.clone_from(src),
                (dst, Some(src)) => *dst = src.clone(),
                (dst, None) => *dst = Ok(()),
            }
            b.in_nucleus = q.nucleus.map_or(qs.in_any_nucleus, |n| qs.in_nucleus.get(n).copied().unwrap_or(false));
            b.shares_nucleus_storage = q.nucleus.map_or(qs.hint_shares, |n| qs.shares.get(n).copied().unwrap_or(false));
            b.link = self.link(pos, q.nucleus, d);
            if let (Some((_, space)), Some(o)) = (&mut b.output_endpoint, qs.default_out) {
                *space = self.space_gb(o, d).0;
            }
            for (ep, &sid) in b.input_endpoints.iter_mut().zip(&qs.input_disk) {
                ep.complete_replica = st.completeness.complete_locations.binary_search(&sid).is_ok();
            }
            b.inactive = d.last_start.get(qi).copied().flatten().is_some_and(|t| d.now - t > INACTIVE_AFTER);
            let running = d.workers_running.get(qi).map_or(0, |w| w.n);
            let queued = d.workers_queued.get(qi).map_or(0, |w| w.n);
            b.n_workers = running.saturating_add(queued);
            b.n_pilot = b.n_workers.saturating_add(u64::from(qs.push));
            b.counts_all = d.queue_jobs.get(qi).copied().unwrap_or_default();
            b.counts =
                leaf.and_then(|l| d.queue_gshare_jobs.get(qi).and_then(|v| v.get(l))).copied().unwrap_or_default();
            b.rt_counts = match (p.rt_jobs, leaf) {
                (Some(t), Some(l)) => {
                    Some(t.get(qi).and_then(|v| v.get(l)).map_or(JobCounts::default(), |a| a[st.resource_type.index()]))
                }
                _ => None,
            };
            let to = p.transferring_to_nucleus.get(qi);
            b.transferring_to_unwritable_nuclei = if q.nucleus.is_none() {
                0 // hint mode: the code builds the unwritable-nucleus map only with a nucleus
            } else {
                self.unwritable_nuclei.iter().map(|&n| to.and_then(|v| v.get(n)).copied().unwrap_or(0)).sum()
            };
            let cores = f64::from(b.core_count.filter(|&c| c > 0).unwrap_or(1));
            b.cores_running = p.cores_running.get(qi).copied().unwrap_or(b.counts_all.running as f64 * cores);
            b.cores_starting = p.cores_starting.get(qi).copied().unwrap_or(b.counts_all.starting as f64 * cores);
            b.live_count = p.live_counts.get(qi).copied().unwrap_or(0);
            b.local_input = self.local_input(st, pos, q.chunk.jobs);
        }
    }

    /// [`ProdView::fill_queues`] into a new vector.
    pub fn broker_queues(&self, q: &JobQuery, d: &Dynamic, p: &ProdDynamic) -> Vec<BrokerQueue> {
        let mut out = Vec::new();
        self.fill_queues(q, d, p, &mut out);
        out
    }

    /// The link of production PQ `pos` to nucleus `nucleus` now (module doc of `prod`).
    fn link(&self, pos: usize, nucleus: Option<usize>, d: &Dynamic) -> Link {
        let (Some(n), Some(qs)) = (nucleus, self.queues.get(pos)) else { return Link::Unknown };
        let nsite = self.nuclei.get(n).and_then(|x| x.site);
        if qs.out_site.is_some() && qs.out_site == nsite {
            return Link::Nucleus;
        }
        match qs.links.get(n).copied().flatten().and_then(|l| d.network.observe(l, d.now)) {
            Some(o) => Link::Satellite(LinkMetrics {
                queued_files: Some(o.queued_files),
                mbps_1h: o.mbps_1h,
                mbps_1d: o.mbps_1d,
                mbps_1w: o.mbps_1w,
                closeness: Some(f64::from(o.closeness)),
                blocked: false,
            }),
            None => Link::Unknown,
        }
    }

    /// Whether nucleus `n` is a `Role::Nucleus` (satellites are candidates of full-chain tasks).
    pub fn is_nucleus(&self, n: usize) -> bool {
        self.nuclei.get(n).is_some_and(|x| x.role == Role::Nucleus)
    }
}
