//! The analysis brokerage view, static part: what `panda::anal_broker` reads about the PQs and
//! the task of each `panda.analysis[i]` stream that does not change during a run, resolved
//! once (reference `panda.md` §4-§5, panda-server 1.0.4 `AtlasAnalJobBroker.py`). The
//! per-cycle part (job counts, users, share usage) is in [`super::anal_cycle`].
//!
//! **Queues.** `AnalBrokerInput::queues` holds *every* PQ in scenario order, so that the
//! indices the broker answers with (`Weighed::queue`, `Skip::queue`) are the view's queue
//! indices; a production-only PQ has `QueueType::Production`, which the broker's candidate
//! generation never picks, and no statistics. Analysis candidates are CRIC `type` `analysis`
//! or `unified` and PQs whose `catchall` has `grandly_unified` (`SiteSpec.is_grandly_unified`).
//!
//! **Pseudo-queues.** PanDA brokers a UCORE PQ through its per-resource-type children
//! (`SiteMapper.get_child_site_spec`); the module lets the PQ stand for them, so the view gives
//! it the core count and `minrss`/`maxrss` of the child of the *task's* resource type
//! ([`super::harvester::child_queue`]), the one the core and memory checks would pass.
//!
//! **Endpoints and data** (`select_scope(ANALY_PS)`): input endpoints are the PQ's
//! `astorages.read_lan_analysis` if any, else `read_lan`; output `write_lan_analysis`, else
//! `write_lan`; the first of each is the default. A PQ without them has no endpoint (PanDA then
//! skips it: "output endpoint undefined"). `space_usable` = free + expired bytes, in GB of 10⁹
//! bytes (Rucio's unit), refreshed per cycle by [`AnalView::refresh_space`]. A dataset's
//! replica is seen from a PQ through its input endpoints: complete (fraction 1) on disk →
//! `Disk`, on a `*_VP_DISK` endpoint → `Vp`, on tape → `Tape`; partial replicas count only for
//! a dataset with no complete replica at any analysis PQ (`getAnalSitesWithDataDisk` returns
//! the incomplete holders when no complete one exists). The chunk is the task's whole input.
//!
//! **Fields** (AtlasAnalJobBroker.py line numbers):
//!
//! | `AnalQueue` field | from | PanDA |
//! |---|---|---|
//! | `name`, `status`, `maxtime`, `mintime`, `corepower`, `maxwdir`, `max_diskio` | CRIC attributes of the PQ | `SiteSpec` (status L657-682, diskIO L704-752, walltime L1239-1350, scratch L1089-1170) |
//! | `queue_type` | `type`, `catchall` | `type == 'analysis' or is_grandly_unified()` (L117-119) |
//! | `zero_share` | `fairsharepolicy` × the task | `hasZeroShare` (AtlasBrokerUtils L365-472; L686-702) |
//! | `core_count`, `maxrss`, `minrss` | `corecount`, `maxrss`, `minrss`; pseudo-queue on UCORE | core L792-820, memory L1052-1087 |
//! | `is_gpu` | `catchall` item `gpu…` | `SiteSpec.isGPU()` |
//! | `gpu_arch_ok` | `panda::arch::analysis_gpu_queue_check` | L822-866 |
//! | `sw` | `panda::arch::sw_filter`, standalone request (no `transHome`), worker-node GPUs | SW/HW check L897-1050, `JsonSoftwareCheck` |
//! | `uses_vp` | an input endpoint `*_VP_DISK` | `SiteSpec.use_vp` |
//! | `direct_io_capable`, `direct_io_for_job` | `direct_access_lan`, `maxinputsize == -1` | `isDirectIO`, `always_use_direct_io`, `CoreUtils.use_direct_io_for_job` |
//! | `output_space_gb`, `input_space_gb`, `same_input_output_endpoint` | default endpoints, `space_usable` | L1180-1217 |
//! | `blacklisted` | endpoint `read_lan`/`write_lan`/`write_wan`/`read_wan` | `check_endpoints_with_blacklist` (L1224) |
//! | `use_only_local_data` | `catchall` | `SiteSpec.use_only_local_data()` |
//! | `num_standby` | `num_slots` | `getNumStandby` (Harvester_Slots, L1875) |
//!
//! | `AnalTask` field | from |
//! |---|---|
//! | `gshare`, `task_priority`, `io_intensity`, `task_class` | the stream (`gshare`, `priority`, `io_intensity`, `class`) |
//! | `core_count`, `ram_count` (MB per core, `ramUnit` MBPerCore) | `core_count`, `ram_count` (0 = unset) |
//! | `has_sw_platform`, `host_hw_spec` | `architecture` parsed by `panda::arch::TaskArch` |
//! | `min_walltime` (HS06·s), `walltime_undefined` | `cpu_time × n_events_per_job`; no `cpu_time` |
//! | `n_datasets`, `remote_source_available`, `total_input_bytes`, atom sizes | `inputs` (bytes per job = input ÷ `jobs_per_task`) |
//! | `n_jobs_to_submit`, `use_scout`, `hours_since_last_success` | per task, [`super::anal_cycle::AnalTaskState`] |
//!
//! **Defaults the model cannot fill**, left at PanDA's value with the reason: PQ `cloud` ""
//! (CRIC cloud not modelled; tasks have no cloud), `diskio_usage` 0 and task `disk_io` None
//! (no diskIO in the model: the check never fires), `max_io_intensity` None (a CRIC extra queue
//! parameter), `over_local_quota` false (no Rucio quotas), `allowInputLAN` unset (so
//! `direct_io_for_job` = `maxinputsize == -1`), `distributed_input` false, `is_hpo` false,
//! `n_sites_per_job` 1, `max_core_count` None, `out_disk_count`/`work_disk_size` 0 and
//! `baseRamCount` 0 (not in the stream), `processingType` `panda-client` (process group `others`
//! for `fairsharepolicy`), JEDI refiner defaults `cpuEfficiency` 90 % and `baseWalltime` 600 s
//! (TaskRefinerBase.py L173-182).

use crate::grid::config::GpuInventory;
use crate::grid::storage::{StorageId, TB};
use crate::panda::anal_broker::throttle::USER_ANALYSIS;
use crate::panda::anal_broker::{
    AnalBrokerParams, AnalQueue, AnalTask, QueueStatus as AnalStatus, QueueType, Replica, SwCheck, TaskClass,
};
use crate::panda::arch::{
    ArchVariant, Broker, SwPass, SwRequest, TaskArch, WnGpu, WnGpuRow, analysis_gpu_queue_check, sw_filter,
};
use crate::panda::arch::{QueueSoftware, SwSkip};
use crate::panda::gshare::{Leaf, ShareNode, leaves};
use crate::panda::harvester::ResourceSpec;
use crate::panda::job_broker::{FairsharePolicy, ShareTask};
use crate::scenario::Scenario;
use crate::scenario::panda::{AnalysisStream, PandaQueue, QueueKind, QueueStatus};

use super::harvester::{child_queue, task_resource_type};

/// `processingType` of the model's user tasks (prun/pathena write `panda-client-…`): process
/// group `others` in `fairsharepolicy`.
pub const USER_PROCESSING_TYPE: &str = "panda-client";
/// Bytes per GB as Rucio and CRIC report sizes (the scenario's `size_gb`, `space_usable`).
pub const GB: f64 = 1e9;
/// JEDI's defaults for a task that does not set them (TaskRefinerBase.py L173-182).
pub const DEFAULT_CPU_EFFICIENCY: f64 = 90.0;
pub const DEFAULT_BASE_WALLTIME_S: f64 = 600.0;

/// `hasValueInCatchall(key)`: an item of the comma list starting with `key` (`re.search("^key")`).
pub fn catchall_prefix(q: &PandaQueue, key: &str) -> bool {
    q.catchall.split(',').any(|i| i.starts_with(key))
}

/// The leaf names under a share, depth first (`fill_leaf_shares`).
fn leaf_names<'a>(node: &'a ShareNode, out: &mut Vec<&'a str>) {
    if node.children.is_empty() {
        out.push(&node.name);
    }
    for c in &node.children {
        leaf_names(c, out);
    }
}

/// `select_scope(ANALY_PS)` over one activity pair: the analysis activity when the PQ has it.
fn scoped<'q>(q: &'q PandaQueue, analysis: &str, default: &str) -> &'q [String] {
    match q.astorages.get(analysis).filter(|v| !v.is_empty()) {
        Some(v) => v,
        None => q.astorages.get(default).map_or(&[], |v| v.as_slice()),
    }
}

/// What the view knows of one PQ for every task.
#[derive(Debug, Clone, Default)]
pub struct QueueSide {
    /// CRIC `type` `analysis`/`unified` or `catchall` `grandly_unified`.
    pub analysis: bool,
    /// Input endpoints (`read_lan[_analysis]`), the first the default.
    pub input: Vec<StorageId>,
    /// Output endpoints (`write_lan[_analysis]`), the first the default.
    pub output: Vec<StorageId>,
    /// HS06 a running job of the PQ counts for (`corecount × corepower`), for the gshare usage
    /// when the caller does not give it.
    pub hs06_per_job: f64,
}

/// One analysis stream, resolved.
#[derive(Debug, Clone)]
pub struct AnalStream {
    pub name: String,
    /// Index in [`AnalView::users`].
    pub user: usize,
    /// Index in [`AnalView::groups`]; `Some` makes the caps the group's.
    pub group: Option<usize>,
    /// Index of the task's gshare in [`AnalView::leaves`] (`None`: not a leaf of the tree).
    pub leaf: Option<usize>,
    /// The task's resource type (index in [`AnalView::types`]).
    pub resource_type: Option<usize>,
    /// The class the stream declares (`analy_task_eval`), for the throttle.
    pub class: Option<TaskClass>,
    /// Jobs per task (the default `N_j` of a fresh task).
    pub jobs_per_task: u64,
    /// The task every task of the stream starts as (per-task fields set by the cycle).
    pub task: AnalTask,
    /// `queues[q]`: the PQs as this stream's tasks see them.
    pub queues: Vec<AnalQueue>,
    /// Row-major queue × dataset.
    pub replicas: Vec<Replica>,
    /// Bytes of the task's input on the PQ's local disk, per queue.
    pub local_disk_bytes: Vec<u64>,
    /// Every input dataset complete on the PQ's input endpoints (disk or tape), per queue.
    pub has_all_input_files: Vec<bool>,
    /// The architecture did not parse (validation rejects it): treated as none.
    pub arch_error: Option<String>,
}

/// The static analysis view of a scenario.
#[derive(Debug, Clone, Default)]
pub struct AnalView {
    /// Per PQ, scenario order.
    pub queue_side: Vec<QueueSide>,
    pub streams: Vec<AnalStream>,
    /// Users of the analysis streams, sorted (`prodUserName`).
    pub users: Vec<String>,
    /// Working groups of the analysis streams, sorted.
    pub groups: Vec<String>,
    /// The gshare tree and its leaves (the index convention of `Dynamic`).
    pub gshares: Vec<ShareNode>,
    pub leaves: Vec<Leaf>,
    /// The L1 shares of `gshare_preference` (`"L1 " +` each top-level share) and the indices
    /// in `leaves` of their leaves (a top-level leaf is its own).
    pub l1_leaves: Vec<(String, Vec<usize>)>,
    /// The leaf named `User Analysis` (the class throttle's share).
    pub user_analysis_leaf: Option<usize>,
    /// Resource types (`ResourceSpec::atlas_defaults()`).
    pub types: Vec<ResourceSpec>,
    /// `gdpconfig.anal_broker` with the resolved variant.
    pub params: AnalBrokerParams,
    /// Expired bytes of each storage (static: `expired_tb`).
    pub expired: Vec<u64>,
}

fn anal_status(s: QueueStatus) -> AnalStatus {
    match s {
        QueueStatus::Online => AnalStatus::Online,
        QueueStatus::Standby => AnalStatus::Standby,
        QueueStatus::Brokeroff => AnalStatus::Brokeroff,
        QueueStatus::Test => AnalStatus::Test,
        QueueStatus::Offline => AnalStatus::Offline,
        QueueStatus::Paused => AnalStatus::Paused,
    }
}

/// Worker-node GPU rows of a PQ: `software.wn_gpus` when given, else one row per GPU kind of
/// its CEs (what pilots on those nodes would report to `MV_WORKER_NODE_GPU_SUMMARY`).
fn wn_gpus(s: &Scenario, q: &PandaQueue) -> Vec<WnGpu> {
    if !q.software.wn_gpus.is_empty() {
        return q.software.wn_gpus.clone();
    }
    s.sites
        .iter()
        .filter(|site| site.name == q.site)
        .flat_map(|site| site.ces.iter())
        .filter(|ce| q.ces.is_empty() || q.ces.contains(&ce.name))
        .flat_map(|ce| ce.gpus.iter())
        .map(node_gpu)
        .collect()
}

/// The row a pilot on a node of this GPU kind reports (`update_worker_node_gpu`).
pub fn node_gpu(g: &GpuInventory) -> WnGpu {
    let text = |t: &str| (!t.is_empty()).then(|| t.to_string());
    WnGpu::from(WnGpuRow {
        vendor: text(&g.vendor),
        model: text(&g.model),
        vram: Some(u64::from(g.vram_mb)),
        architecture: text(&g.microarchitecture),
        framework: Some("CUDA".to_string()).filter(|_| !g.cuda_version.is_empty()),
        framework_version: text(&g.cuda_version),
        driver_version: text(&g.driver_version),
        gpus_per_host: Some(u64::from(g.gpus_per_node)),
        host_count: Some(u64::from(g.nodes)),
    })
}

/// The `SwCheck` of the analysis SW/HW filter for a task without `transHome` (the standalone
/// branch, L1005-1023): `sw_filter` with `cmt_config_only`.
fn sw_check(q: &QueueSoftware, arch: &TaskArch, variant: ArchVariant) -> SwCheck {
    let req = SwRequest::standalone(arch, None, false);
    match sw_filter(q, arch, &req, Broker::Analysis, None, variant) {
        Ok(SwPass::Any) => SwCheck::ReleasesAny,
        Ok(_) => SwCheck::Passed,
        Err(SwSkip::UnresolvedRegexp { .. }) => SwCheck::PassedUnresolvedRegexp,
        Err(_) => SwCheck::Missing,
    }
}

impl AnalView {
    /// The view of a validated scenario (no `panda` section: empty).
    pub fn new(s: &Scenario) -> Self {
        let Some(p) = s.panda.as_ref() else { return Self::default() };
        let store_id = |name: &str| s.storages.iter().position(|st| st.name == name).map(|i| i as StorageId);
        let ids = |names: &[String]| names.iter().filter_map(|n| store_id(n)).collect::<Vec<_>>();
        let queue_side: Vec<QueueSide> = p
            .queues
            .iter()
            .map(|q| QueueSide {
                analysis: q.kind.analysis() || catchall_prefix(q, "grandly_unified"),
                input: ids(scoped(q, "read_lan_analysis", "read_lan")),
                output: ids(scoped(q, "write_lan_analysis", "write_lan")),
                hs06_per_job: f64::from(q.cores()) * q.corepower,
            })
            .collect();
        let mut users: Vec<String> = p.analysis.iter().map(|a| a.user.clone()).collect();
        users.sort();
        users.dedup();
        let mut groups: Vec<String> = p.analysis.iter().filter_map(|a| a.working_group.clone()).collect();
        groups.sort();
        groups.dedup();
        let leaves = leaves(&p.gshares);
        let l1_leaves = p
            .gshares
            .iter()
            .map(|root| {
                let mut names = Vec::new();
                leaf_names(root, &mut names);
                let idx = names.iter().filter_map(|n| leaves.iter().position(|l| l.name == **n)).collect();
                (format!("L1 {}", root.name), idx)
            })
            .collect();
        let user_analysis_leaf = leaves.iter().position(|l| l.name == USER_ANALYSIS);
        let types = ResourceSpec::atlas_defaults();
        let params = p.anal_broker_params();
        let mut view = Self {
            queue_side,
            streams: Vec::new(),
            users,
            groups,
            gshares: p.gshares.clone(),
            leaves,
            l1_leaves,
            user_analysis_leaf,
            types,
            params,
            expired: s.storages.iter().map(|st| (st.expired_tb.max(0.0) * TB).round() as u64).collect(),
        };
        let arch_variant = p.rules().arch;
        // Per PQ once: its software with the worker-node GPUs, its parsed fairshare policy.
        let per_queue: Vec<(QueueSoftware, FairsharePolicy)> = p
            .queues
            .iter()
            .map(|q| {
                let mut sw = q.software.clone();
                sw.wn_gpus = wn_gpus(s, q);
                (sw, FairsharePolicy::parse(&q.fairsharepolicy).0)
            })
            .collect();
        view.streams = p.analysis.iter().map(|a| view.stream(s, a, &per_queue, arch_variant)).collect();
        view
    }

    /// `users` index of a user name (binary search).
    pub fn user_index(&self, name: &str) -> Option<usize> {
        self.users.binary_search_by(|u| u.as_str().cmp(name)).ok()
    }

    /// `groups` index of a working group.
    pub fn group_index(&self, name: &str) -> Option<usize> {
        self.groups.binary_search_by(|g| g.as_str().cmp(name)).ok()
    }

    /// Index of a stream by name.
    pub fn stream_index(&self, name: &str) -> Option<usize> {
        self.streams.iter().position(|st| st.name == name)
    }

    fn stream(
        &self,
        s: &Scenario,
        a: &AnalysisStream,
        per_queue: &[(QueueSoftware, FairsharePolicy)],
        variant: ArchVariant,
    ) -> AnalStream {
        let queues = s.panda.as_ref().map_or(&[][..], |p| p.queues.as_slice());
        let (arch, arch_error) = match a.architecture.as_deref().filter(|t| !t.is_empty()) {
            None => (TaskArch::none(), None),
            Some(t) => match TaskArch::parse_with(t, variant) {
                Ok(arch) => (arch, None),
                Err(e) => (TaskArch::none(), Some(e.to_string())),
            },
        };
        let ram = (a.ram_count > 0.0 && a.ram_count.is_finite()).then_some(a.ram_count);
        let rt = task_resource_type(&self.types, Some(a.core_count), ram.unwrap_or(0.0), 0.0, true);
        let (replicas, local_disk_bytes, has_all, in_nucleus) = self.data(s, a);
        let n_ds = a.inputs.len();
        let remote_source_available = a.inputs.iter().all(|d| {
            d.replicas.iter().any(|r| {
                let st = s.storages.iter().find(|st| st.name == r.storage);
                let found = (r.fraction.clamp(0.0, 1.0) * d.files as f64).floor();
                let regarded = r.complete()
                    || (found > 0.0
                        && d.files > 0
                        && (d.files as f64 - found <= self.params.max_missing_input_files as f64
                            || found / d.files as f64 * 100.0 >= self.params.min_input_completeness));
                regarded && st.is_some_and(|st| !st.read_wan.is_downtime() && !st.name.ends_with("_VP_DISK"))
            })
        });
        let total_input_bytes: f64 = a.inputs.iter().map(|d| d.size_gb.max(0.0) * GB).sum();
        let jobs_per_task = u64::from(a.jobs_per_task.max(1));
        let atom = total_input_bytes / jobs_per_task as f64;
        let min_walltime = match (a.cpu_time, a.n_events_per_job) {
            (Some(c), Some(n)) => Some(c * n as f64),
            _ => None,
        };
        let task = AnalTask {
            gshare: a.gshare.clone(),
            prod_source_label: "user".to_string(),
            task_class: a.class,
            task_priority: a.priority,
            io_intensity: a.io_intensity,
            n_datasets: n_ds,
            n_real_datasets: n_ds,
            remote_source_available,
            core_count: Some(a.core_count),
            has_sw_platform: !arch.sw_platform.is_empty(),
            host_hw_spec: arch.cpu_specs.is_some() || arch.gpu_spec.is_some(),
            ram_count: ram,
            ram_per_core: true,
            max_atom_size: atom,
            eff_atom_size: atom,
            use_hs06: true,
            min_walltime,
            base_walltime: DEFAULT_BASE_WALLTIME_S,
            cpu_efficiency: DEFAULT_CPU_EFFICIENCY,
            walltime_undefined: a.cpu_time.is_none(),
            n_jobs_to_submit: jobs_per_task,
            total_input_bytes: total_input_bytes.round() as u64,
            ..AnalTask::default()
        };
        let share_task = ShareTask {
            processing_type: USER_PROCESSING_TYPE,
            working_group: a.working_group.as_deref(),
            gshare: Some(&a.gshare),
            current_priority: a.priority,
            is_merging: false,
        };
        let anal_queues = queues
            .iter()
            .enumerate()
            .zip(per_queue)
            .map(|((i, q), (sw, policy))| {
                let side = self.queue_side.get(i).cloned().unwrap_or_default();
                let child = rt.and_then(|t| self.types.get(t)).and_then(|t| child_queue(q, t));
                let is_gpu = catchall_prefix(q, "gpu");
                let holds_all = in_nucleus.get(i).copied().unwrap_or(false);
                let blacklisted = self.blacklisted(s, &side, holds_all, n_ds > 0, remote_source_available);
                AnalQueue {
                    name: q.name.clone(),
                    cloud: String::new(),
                    queue_type: match q.kind {
                        QueueKind::Analysis => QueueType::Analysis,
                        QueueKind::Unified => QueueType::Unified,
                        QueueKind::Production if side.analysis => QueueType::Unified,
                        QueueKind::Production => QueueType::Production,
                    },
                    status: anal_status(q.status),
                    zero_share: policy.has_zero_share(&share_task),
                    core_count: child.map_or(q.corecount, |c| Some(c.core_count)),
                    max_diskio: q.maxdiskio,
                    diskio_usage: 0.0,
                    max_io_intensity: None,
                    uses_vp: side.input.iter().any(|&e| self.is_vp(s, e)),
                    is_gpu,
                    gpu_arch_ok: analysis_gpu_queue_check(sw, is_gpu, false, &arch, variant).is_ok(),
                    sw: sw_check(sw, &arch, variant),
                    maxrss: Some(child.map_or(q.maxrss as f64, |c| c.maxrss)),
                    minrss: Some(child.map_or(q.minrss as f64, |c| c.minrss)),
                    maxwdir: Some(q.maxwdir as f64),
                    direct_io_capable: q.direct_access_lan || q.maxinputsize == Some(-1),
                    direct_io_for_job: q.maxinputsize == Some(-1),
                    output_space_gb: None,
                    input_space_gb: None,
                    same_input_output_endpoint: !side.input.is_empty() && side.input.first() == side.output.first(),
                    blacklisted,
                    over_local_quota: false,
                    maxtime: q.maxtime as f64,
                    mintime: q.mintime as f64,
                    corepower: q.corepower,
                    use_only_local_data: catchall_prefix(q, "use_only_local_data"),
                    num_standby: q.num_slots,
                }
            })
            .collect();
        AnalStream {
            name: a.name.clone(),
            user: self.user_index(&a.user).unwrap_or(0),
            group: a.working_group.as_deref().and_then(|g| self.group_index(g)),
            leaf: self.leaves.iter().position(|l| l.name == a.gshare),
            resource_type: rt,
            class: a.class,
            jobs_per_task,
            task,
            queues: anal_queues,
            replicas,
            local_disk_bytes,
            has_all_input_files: has_all,
            arch_error,
        }
    }
}
