//! Task brokerage inputs: the DDM endpoints, the nuclei and the task (reference `panda.md` §1,
//! `AtlasProdTaskBroker.py` `runImpl` L146-626).

use super::dynamic::ProdDynamic;
use super::job::{Chunk, JobQuery};
use super::statics::ProdView;
use crate::grid::config::StorageStatus;
use crate::grid::storage::StorageId;
use crate::panda::task_broker::{
    BrokerageInput, DatasetKind, DdmEndpoint, GIB, InputDataset, NucleusSpec, OutputDataset, Parent, Replica, TaskSpec,
    WanStatus,
};
use crate::scenario::panda::ProductionStream;
use crate::wms::panda::view::dynamic::Dynamic;

/// Which task of which moment is being brokered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TaskArgs {
    /// The task's number within its stream (0-based): appended to the stream's dataset names
    /// (`<prefix>.<task_no>`, names are used in PanDA's messages only).
    pub task_no: u32,
    /// Seconds since the task entered `assigning` (`frozenTime`); `None` when unset. After
    /// `DATA_LOCATION_CHECK_PERIOD` days the locality check is skipped.
    pub assigning_for_s: Option<f64>,
    /// `currentPriority` now (the stream's `priority` is `taskPriority`).
    pub current_priority: i64,
}

/// Everything `panda::task_broker::do_brokerage` reads except the caller's RW table.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskBrokerageView {
    pub task: TaskSpec,
    /// One per `panda.nuclei` entry, same index.
    pub nuclei: Vec<NucleusSpec>,
    /// One per storage, index = `StorageId`.
    pub endpoints: Vec<DdmEndpoint>,
}

impl TaskBrokerageView {
    /// The brokerage input with `prio_rw[n]` = `prioRW[currentPriority][n]` from the caller's
    /// `panda::task_broker::PrioRw` table (RW of the same work queue at ≥ the task's priority).
    pub fn input<'a>(&'a self, prio_rw: &'a [f64]) -> BrokerageInput<'a> {
        BrokerageInput { task: &self.task, nuclei: &self.nuclei, endpoints: &self.endpoints, prio_rw }
    }
}

/// The task's own RW (`calculateTaskWorldRW_JEDI`, entity_module L3535-3560) that
/// `panda::task_broker::record_assignment` adds to the chosen nucleus: `(nEvents −
/// nEventsUsed) × cpuTime`, `cpuTime` in HS06·s per event (`cpuTimeUnit` `HS06sPerEvent`, so
/// no ÷1000), 300 when the scenario's `cpu_time` is not a positive number (`cpuTime IS NULL`).
pub fn task_rw(stream: &ProductionStream, events_used: u64) -> f64 {
    let cpu = if stream.cpu_time.is_finite() && stream.cpu_time > 0.0 { stream.cpu_time } else { 300.0 };
    stream.n_events.saturating_sub(events_used) as f64 * cpu
}

fn wan(s: StorageStatus) -> WanStatus {
    match s {
        StorageStatus::On => WanStatus::On,
        StorageStatus::Off => WanStatus::Off,
        StorageStatus::Test => WanStatus::Test,
    }
}

impl ProdView {
    /// The space figures of storage `id` now, in GB of 1024³ bytes: `(usable, free, expired,
    /// total)`. `free = total − used`, `expired = min(expired_tb, used)`, `usable = free +
    /// expired` (min_free and unavailable are not modelled: 0). An endpoint without a capacity
    /// (or unknown to the snapshot) has no Rucio usage row: all 0, as PanDA reads NULL.
    pub(super) fn space_gb(&self, id: usize, d: &Dynamic) -> (f64, f64, f64, f64) {
        let expired = self.storages.get(id).map_or(0, |s| s.expired_bytes);
        let Some((total, used)) =
            StorageId::try_from(id).ok().and_then(|i| d.storages.get(i)).and_then(|e| e.total.map(|t| (t, e.used)))
        else {
            return (0.0, 0.0, 0.0, 0.0);
        };
        let free = total.saturating_sub(used) as f64 / GIB;
        let expired = expired.min(used) as f64 / GIB;
        (free + expired, free, expired, total as f64 / GIB)
    }

    /// `ATLAS_PANDA.DDM_ENDPOINT` rows, one per storage (index = `StorageId`): name, `is_tape`
    /// (tape kind), `read_wan`/`write_wan` (the scenario's statuses: `ON`/`OFF`/`TEST`), and the
    /// space columns in GB of 1024³ bytes: `space_free` = total − used, `space_expired` =
    /// min(`expired_tb`, used), `space_usable` = free + expired, `space_total`; all 0 for an
    /// endpoint without a capacity (no Rucio usage row: NULL read as 0).
    pub fn endpoints(&self, d: &Dynamic) -> Vec<DdmEndpoint> {
        (0..self.storages.len())
            .map(|id| {
                let st = &self.storages[id];
                let (usable, free, expired, total) = self.space_gb(id, d);
                DdmEndpoint {
                    name: st.name.clone(),
                    is_tape: st.tape,
                    read_wan: wan(st.read_wan),
                    write_wan: wan(st.write_wan),
                    space_usable: usable,
                    space_free: free,
                    space_expired: expired,
                    space_total: total,
                }
            })
            .collect()
    }

    /// The `JediTaskSpec` of task `args.task_no` of production stream `stream` (`None` for an
    /// unknown stream). Fields:
    ///
    /// * `taskPriority` = the stream's `priority`; `currentPriority` = `args`;
    /// * `ioIntensity`, `t1Weight` (`TW=`), `fullChain` (`FU=`), `inputPreStaging` (`IS=1`) from
    ///   the stream; `workQueue.queue_name` = its gshare (global-share work queues are named
    ///   after the share, so `DISK_THRESHOLD_<gshare>` applies);
    /// * `frozen_for_s` = `args.assigning_for_s`;
    /// * inputs: each `DatasetConfig` as one dataset (`isMaster()` = `master`) with one replica
    ///   row per `ReplicaConfig` in scenario order: `total` = files, `tsize` = `size_gb × 10⁹`,
    ///   `found` = `⌊fraction × files⌋` (all for `fraction ≥ 1`), `asize` = the bytes of those
    ///   files;
    /// * outputs: one output dataset with the default token class 0 (`storageToken` unset);
    ///
    /// left at the defaults on purpose: `taskBrokerOnMaster` false (a task parameter the
    /// scenario does not have: every dataset is looked up), no preset `nucleus` (the WMS only
    /// brokers tasks without one), `parent` = itself (streams have no parent tasks).
    pub fn task_spec(&self, stream: usize, args: TaskArgs) -> Option<TaskSpec> {
        let st = self.streams.get(stream)?;
        let cfg = &st.cfg;
        let inputs = st
            .datasets
            .iter()
            .map(|ds| InputDataset {
                name: format!("{}.{}", ds.prefix, args.task_no),
                kind: DatasetKind::Regular,
                master: ds.master,
                constituents: vec![
                    ds.replicas
                        .iter()
                        .map(|r| Replica {
                            endpoint: r.storage,
                            total_files: ds.files,
                            total_bytes: ds.bytes,
                            found_files: r.found,
                            available_bytes: r.bytes,
                        })
                        .collect(),
                ],
            })
            .collect();
        Some(TaskSpec {
            task_priority: cfg.priority,
            current_priority: args.current_priority,
            io_intensity: cfg.io_intensity,
            t1_weight: cfg.t1_weight,
            full_chain: cfg.full_chain,
            input_pre_staging: cfg.input_pre_staging,
            task_broker_on_master: false,
            work_queue: cfg.gshare.clone(),
            nucleus: None,
            frozen_for_s: args.assigning_for_s,
            parent: Parent::Itself,
            inputs,
            outputs: vec![OutputDataset { storage_token: String::new(), token: 0, distributed: false }],
        })
    }

    /// The nuclei for a task of stream `stream` at `current_priority`, one per `panda.nuclei`
    /// entry (same index; `None` for an unknown stream):
    ///
    /// * `name` = the nucleus' site; `state`, `role`, `bare_nucleus` from the scenario;
    /// * `queued_output_files` = `Network::queued_to(site)`: the files queued on every link into
    ///   the nucleus site (`getBackloggedNuclei` sums `Production Output_queued` over the matrix
    ///   rows with `dst` = the nucleus; the model's queue counts every transfer, background
    ///   included, and has one activity);
    /// * `full_rw` = `ProdDynamic::nucleus_rw[n]` (0 when missing);
    /// * `output_endpoints` / `input_endpoints` = `output_storages` (token class = position) /
    ///   `input_storages` as storage ids (an unknown name is an absent endpoint);
    /// * `can_run_jobs` = the job check ([`ProdView::job_check`]): some PQ at the nucleus' site
    ///   survives production job brokerage in hint mode.
    pub fn nuclei(
        &self,
        stream: usize,
        current_priority: i64,
        d: &Dynamic,
        p: &ProdDynamic,
    ) -> Option<Vec<NucleusSpec>> {
        let jobs = self.job_check(stream, current_priority, d, p)?;
        Some(
            self.nuclei
                .iter()
                .enumerate()
                .map(|(i, n)| NucleusSpec {
                    name: n.name.clone(),
                    state: n.state,
                    role: n.role,
                    bare_nucleus: n.bare,
                    queued_output_files: n.site.map_or(0, |s| d.network.queued_to(s)) as f64,
                    full_rw: p.nucleus_rw.get(i).copied().filter(|x| x.is_finite()).unwrap_or(0.0),
                    output_endpoints: n.output.clone(),
                    input_endpoints: n.input.clone(),
                    can_run_jobs: jobs.get(i).copied().unwrap_or(false),
                })
                .collect(),
        )
    }

    /// The job check of task brokerage (reference §1 filter 5, AtlasProdTaskBroker L397-432):
    /// per `panda.nuclei` entry, whether one of the production PQs at its site survives
    /// production job brokerage in hint mode — the filter chain up to the pilot check with the
    /// temporarily skipped PQs removed (AtlasProdJobBroker L1519-1540), no weights, no caps, no
    /// input-move cutoff (hint mode returns before them), no nucleus. The chunk is one job
    /// ([`Chunk::default`]): JEDI's task-brokerage chunk carries no files.
    pub fn job_check(&self, stream: usize, current_priority: i64, d: &Dynamic, p: &ProdDynamic) -> Option<Vec<bool>> {
        let q = JobQuery { stream, nucleus: None, current_priority, chunk: Chunk::default() };
        let task = self.broker_task(&q, d)?;
        let queues = &mut *self.job_check_queues.borrow_mut();
        self.fill_queues(&q, d, p, queues);
        let ok = super::job::hint_survivors(&task, queues, &self.job_params);
        Some(self.nuclei.iter().map(|n| n.pqs.iter().any(|&pos| ok.get(pos).copied().unwrap_or(false))).collect())
    }

    /// Everything task brokerage reads for task `args` of stream `stream` (`None` for an unknown
    /// stream): [`ProdView::task_spec`], [`ProdView::nuclei`], [`ProdView::endpoints`].
    pub fn task_brokerage(
        &self,
        stream: usize,
        args: TaskArgs,
        d: &Dynamic,
        p: &ProdDynamic,
    ) -> Option<TaskBrokerageView> {
        let (task, nuclei) = self.task_and_nuclei(stream, args, d, p)?;
        Some(TaskBrokerageView { task, nuclei, endpoints: self.endpoints(d) })
    }

    /// The task and nuclei of [`Self::task_brokerage`], without the endpoints: those depend on
    /// the snapshot `d` only, so a caller that brokers several tasks on one snapshot (the
    /// TaskBroker's cycle) builds them once with [`Self::endpoints`].
    pub fn task_and_nuclei(
        &self,
        stream: usize,
        args: TaskArgs,
        d: &Dynamic,
        p: &ProdDynamic,
    ) -> Option<(TaskSpec, Vec<NucleusSpec>)> {
        Some((self.task_spec(stream, args)?, self.nuclei(stream, args.current_priority, d, p)?))
    }

    /// [`task_rw`] of a task of stream `stream` with `events_used` events done (`None` for an
    /// unknown stream).
    pub fn task_rw(&self, stream: usize, events_used: u64) -> Option<f64> {
        self.streams.get(stream).map(|s| task_rw(&s.cfg, events_used))
    }
}
