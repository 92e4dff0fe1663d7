//! What the PanDA WMS computes once from the scenario: the shape of each stream's jobs (how a
//! task splits, what one job reads, computes and writes), the grid side of each PQ and nucleus,
//! the share entities (one per gshare leaf) and the job streams the world sees. A replay stream
//! has a shape too (its gshare, no retry); its jobs' sizes are each record's (`replay`).

use crate::engine::SimTime;
use crate::grid::storage::{StorageId, Storages};
use crate::ids::{SiteId, WmsId};
use crate::panda::arch::{ArchVariant, GpuSpec, TaskArch, match_gpu_spec};
use crate::panda::gshare::{Leaf, leaves};
use crate::panda::harvester::config::MapType;
use crate::panda::timeouts::ProdSourceLabel;
use crate::scenario::Scenario;
use crate::scenario::panda::{DatasetConfig, PandaConfig};
use crate::workload::{Arrival, EntityDef, JobEntities, JobKind, Level, ShareEntities, ShareUnit, StreamInfo};

use super::tables::{Task, TaskStatus};
use super::view::anal::node_gpu;
use super::view::prod::{ProdView, ResourceType};

/// HS06·s of one hour on a core of 10 HS06 (the corePower PanDA assumes): the CPU work of an
/// analysis job whose task gives no `cpuTime` (pilotsim's assumption, stated in the docs).
pub const UNKNOWN_JOB_WORK: f64 = 36_000.0;

/// How the tasks of one PanDA stream split into jobs and what a job does.
#[derive(Debug, Clone)]
pub struct StreamShape {
    pub name: String,
    pub count: u32,
    pub arrival: Arrival,
    pub analysis: bool,
    pub label: ProdSourceLabel,
    /// `prodUserName`: the analysis user, `atlas-prod` for production.
    pub owner: String,
    /// gshare leaf index.
    pub leaf: u16,
    pub priority: i64,
    /// Jobs of one task.
    pub n_jobs: u32,
    /// Events of one job.
    pub events_per_job: u64,
    /// CPU work of one job per core, HS06·s (the world runs it `cpu_work / cpu_power` seconds).
    pub cpu_work: f64,
    pub cores: u32,
    /// ATLAS resource type index (`view::prod::ResourceType`).
    pub rt: u8,
    /// Input of one job: files and bytes of the master dataset.
    pub input_files: u32,
    pub input_bytes: u64,
    /// Output of one job, bytes (`outDiskCount` × events).
    pub output_bytes: u64,
    /// Where the master dataset has complete or partial replicas: (storage, fraction).
    pub replicas: Vec<(StorageId, f64)>,
    pub failure_probability: f64,
    pub max_attempt: u8,
    /// The task architecture's GPU spec (`get_host_gpu_spec`): its jobs hold one GPU and run
    /// only where the node's GPUs match it (`check_task_architecture` at `getJob`).
    pub gpu_spec: Option<GpuSpec>,
}

/// The GPU spec of a task `architecture` (an unparsable one has none: validation refuses it).
fn gpu_spec(architecture: Option<&str>, variant: ArchVariant) -> Option<GpuSpec> {
    let text = architecture.filter(|t| !t.is_empty())?;
    TaskArch::parse_with(text, variant).ok()?.gpu_spec
}

fn master(inputs: &[DatasetConfig]) -> Option<&DatasetConfig> {
    inputs.iter().find(|d| d.master)
}

fn replicas(storages: &Storages, d: Option<&DatasetConfig>) -> Vec<(StorageId, f64)> {
    d.map(|d| d.replicas.iter().filter_map(|r| Some((storages.id(&r.storage)?, r.fraction))).collect())
        .unwrap_or_default()
}

/// Input of one job of `n_jobs` over the master dataset `d`: (files, bytes), at least one file.
fn job_input(d: Option<&DatasetConfig>, n_jobs: u32) -> (u32, u64) {
    let Some(d) = d else { return (0, 0) };
    let n = f64::from(n_jobs.max(1));
    let files = (d.files as f64 / n).ceil().max(1.0);
    let bytes = (d.size_gb * 1e9 / n).round().max(0.0);
    (files.min(f64::from(u32::MAX)) as u32, bytes as u64)
}

/// What every agent reads and none changes: the configuration and the scenario's static facts.
#[derive(Debug, Clone)]
pub struct Statics {
    /// The `panda` section.
    pub cfg: PandaConfig,
    /// The inputs of production task and job brokerage (read by the TaskBroker and the
    /// JobGenerator).
    pub prod_view: ProdView,
    /// The world stream of PanDA stream `k` is `first_stream + k`.
    pub first_stream: u32,
    /// Harvester's `mapType` of each PQ is a push one (workers made from jobs): its pilots ask
    /// for no job, each runs the job its worker was made for.
    pub push: Vec<bool>,
    pub leaves: Vec<Leaf>,
    /// Production streams, then analysis streams, then replay streams.
    pub shapes: Vec<StreamShape>,
    /// Index of the first replay stream's shape (`shapes.len()` when there is none).
    pub first_replay: usize,
    /// Grid site of each PQ.
    pub queue_site: Vec<SiteId>,
    /// Grid site of each nucleus.
    pub nucleus_site: Vec<SiteId>,
    /// Default output endpoint of each nucleus (`output_storages[0]`).
    pub nucleus_output: Vec<Option<StorageId>>,
    /// Per stream shape, per CE: the CE's GPU inventory entries (bit k: entry k) whose nodes
    /// satisfy the shape's GPU spec (`match_gpu_spec` on the one kind a pilot there reports);
    /// empty for a shape without one.
    pub node_accepts: Vec<Vec<u32>>,
    /// Some stream has a GPU spec: only then does `getJob` look at a job's task for it.
    pub gpu_streams: bool,
}

/// [`Statics::node_accepts`] of one shape.
fn node_accepts(s: &Scenario, shape: &StreamShape) -> Vec<u32> {
    let Some(spec) = &shape.gpu_spec else { return Vec::new() };
    let ces = s.sites.iter().flat_map(|site| &site.ces);
    ces.map(|ce| {
        let fits = |g| match_gpu_spec(spec, &[node_gpu(g)]).is_ok();
        let kinds = ce.gpus.iter().enumerate().take(crate::grid::gpu::MAX_GPU_KINDS);
        kinds.filter(|(_, g)| fits(g)).fold(0, |m, (k, _)| m | (1 << k))
    })
    .collect()
}

impl Statics {
    pub fn new(s: &Scenario, cfg: &PandaConfig) -> Self {
        let site_names: Vec<&str> = s.sites.iter().map(|x| x.name.as_str()).collect();
        let storages = Storages::new(&site_names, &s.storages).unwrap_or_default();
        let site = |name: &str| site_names.iter().position(|n| *n == name).unwrap_or(0) as SiteId;
        let leaves = leaves(&cfg.gshares);
        let leaf = |g: &str| leaves.iter().position(|l| l.name == g).unwrap_or(0) as u16;
        let mut shapes = Vec::new();
        let variant = cfg.rules().arch;
        for t in &cfg.tasks {
            let m = master(&t.inputs);
            let n_jobs = match t.n_events_per_job {
                Some(per) => t.n_events.div_ceil(per.max(1)),
                None => m.map_or(1, |d| d.files),
            }
            .clamp(1, u64::from(u32::MAX)) as u32;
            let events_per_job = t.n_events_per_job.unwrap_or(t.n_events / u64::from(n_jobs)).max(1);
            let (input_files, input_bytes) = job_input(m, n_jobs);
            shapes.push(StreamShape {
                name: t.name.clone(),
                count: t.count,
                arrival: t.arrival.clone(),
                analysis: false,
                label: ProdSourceLabel::Managed,
                owner: "atlas-prod".into(),
                leaf: leaf(&t.gshare),
                priority: t.priority,
                n_jobs,
                events_per_job,
                cpu_work: t.cpu_time * events_per_job as f64 / f64::from(t.core_count.max(1)),
                cores: t.core_count.max(1),
                rt: ResourceType::of(t.core_count, t.ram_count).index() as u8,
                input_files,
                input_bytes,
                output_bytes: (t.out_disk_count * 1000.0 * events_per_job as f64).round().max(0.0) as u64,
                replicas: replicas(&storages, m),
                failure_probability: t.failure_probability,
                max_attempt: t.max_attempt.max(1),
                gpu_spec: gpu_spec(t.architecture.as_deref(), variant),
            });
        }
        for a in &cfg.analysis {
            let m = master(&a.inputs);
            let n_jobs = a.jobs_per_task.max(1);
            let events_per_job = a.n_events_per_job.unwrap_or(1).max(1);
            let (input_files, input_bytes) = job_input(m, n_jobs);
            let work = a.cpu_time.map_or(UNKNOWN_JOB_WORK, |c| c * events_per_job as f64);
            shapes.push(StreamShape {
                name: a.name.clone(),
                count: a.count,
                arrival: a.arrival.clone(),
                analysis: true,
                label: ProdSourceLabel::User,
                owner: a.user.clone(),
                leaf: leaf(&a.gshare),
                priority: a.priority,
                n_jobs,
                events_per_job,
                cpu_work: work / f64::from(a.core_count.max(1)),
                cores: a.core_count.max(1),
                rt: ResourceType::of(a.core_count, a.ram_count).index() as u8,
                input_files,
                input_bytes,
                output_bytes: 0,
                replicas: replicas(&storages, m),
                failure_probability: a.failure_probability,
                max_attempt: a.max_attempt.max(1),
                gpu_spec: gpu_spec(a.architecture.as_deref(), variant),
            });
        }
        let first_replay = shapes.len();
        for r in &cfg.replay {
            // The records carry no gshare: the stream's, or the tree's only leaf (validation).
            let leaf = r.gshare.as_deref().map_or(0, leaf);
            shapes.push(replay_shape(r, leaf));
        }
        let queue_site: Vec<SiteId> = cfg.queues.iter().map(|q| site(&q.site)).collect();
        Self {
            cfg: cfg.clone(),
            prod_view: ProdView::new(s),
            first_stream: 0,
            push: cfg.queues.iter().map(|q| q.harvester.map_type != MapType::NoJob).collect(),
            node_accepts: shapes.iter().map(|shape| node_accepts(s, shape)).collect(),
            gpu_streams: shapes.iter().any(|shape| shape.gpu_spec.is_some()),
            shapes,
            first_replay,
            queue_site,
            nucleus_site: cfg.nuclei.iter().map(|n| site(&n.site)).collect(),
            nucleus_output: cfg
                .nuclei
                .iter()
                .map(|n| n.output_storages.first().and_then(|name| storages.id(name)))
                .collect(),
            leaves,
        }
    }

    /// Fraction of stream `k`'s master input held at grid site `site` (the best replica there).
    pub fn local_fraction(&self, k: usize, site: SiteId, storages: &Storages) -> f64 {
        self.shapes[k]
            .replicas
            .iter()
            .filter(|(id, _)| storages.get(*id).is_some_and(|e| e.site == site))
            .map(|(_, f)| *f)
            .fold(0.0, f64::max)
    }
}

/// The shape of replay stream `r` counting for gshare leaf `leaf`: user jobs (the records carry
/// no `prodSourceLabel`; nothing a replayed job goes through reads it) of one attempt, with no
/// input dataset and no random failure; each job's sizes are its record's.
fn replay_shape(r: &crate::scenario::panda::ReplayStream, leaf: u16) -> StreamShape {
    StreamShape {
        name: r.name.clone(),
        count: 1,
        arrival: Arrival::Burst { at_s: r.start_s },
        analysis: false,
        label: ProdSourceLabel::User,
        owner: r.name.clone(),
        leaf,
        priority: 0,
        n_jobs: 0,
        events_per_job: 1,
        // The stream's declared work (`jobs.parquet` `cpu_time`): set to its jobs' mean once they
        // are read; each job's own work is its record's.
        cpu_work: 0.0,
        cores: 1,
        rt: ResourceType::Score.index() as u8,
        input_files: 0,
        input_bytes: 0,
        output_bytes: 0,
        replicas: Vec::new(),
        failure_probability: 0.0,
        max_attempt: 1,
        gpu_spec: None,
    }
}

/// The synthetic task of replay stream `k` (one per stream, never brokered): `n_jobs` records,
/// its outputs to nucleus `nucleus`, first job at `t`.
pub fn replay_task(k: u16, n_jobs: u32, nucleus: Option<u16>, t: SimTime) -> Task {
    Task {
        stream: k,
        task_no: 0,
        status: TaskStatus::Replay,
        nucleus,
        arrived: t,
        retry_at: t,
        priority: 0,
        n_jobs,
        ungenerated: 0,
        retries: Vec::new(),
        finished: 0,
        failed: 0,
        used_queues: Vec::new(),
        last_brokered: None,
    }
}

/// A task of stream `k` that will arrive at `t`.
pub fn new_task(k: u16, task_no: u32, t: SimTime, shape: &StreamShape) -> Task {
    Task {
        stream: k,
        task_no,
        status: TaskStatus::Registered,
        nucleus: None,
        arrived: t,
        retry_at: t,
        priority: shape.priority,
        n_jobs: shape.n_jobs,
        ungenerated: shape.n_jobs,
        retries: Vec::new(),
        finished: 0,
        failed: 0,
        used_queues: Vec::new(),
        last_brokered: None,
    }
}

/// One share group per gshare leaf (target: its percentage of the whole), and one job stream
/// per PanDA stream counting for its leaf.
pub fn entities_and_streams(st: &Statics, wms: WmsId) -> (ShareEntities, Vec<StreamInfo>) {
    let defs = st
        .leaves
        .iter()
        .map(|l| EntityDef {
            name: l.name.clone(),
            level: Level::Group,
            parent: None,
            target_share: l.percent / 100.0,
            wms,
            unit: ShareUnit::Cores,
        })
        .collect();
    let of_stream = st.shapes.iter().map(|s| JobEntities { group: usize::from(s.leaf), user: None }).collect();
    let streams = st
        .shapes
        .iter()
        .map(|s| StreamInfo {
            name: s.name.clone(),
            owner: s.owner.clone(),
            group: st.leaves.get(usize::from(s.leaf)).map(|l| l.name.clone()).unwrap_or_default(),
            user_priority: 0,
            cpu_time: s.cpu_work,
            failure_probability: s.failure_probability,
            wms,
            kind: if s.analysis { JobKind::Analysis } else { JobKind::Production },
            gpus: u32::from(s.gpu_spec.is_some()),
        })
        .collect();
    (ShareEntities { defs, of_stream }, streams)
}
