//! The job dispatcher: a pilot of a PQ asks for a job (`getJob`) and gets the first activated
//! job of its PQ in PanDA's sorting criteria (`getSortingCriteria`, entity_module L807-826;
//! reference §7): with probability `SLOPPY_DISPATCH_RATIO` by age (PandaID), otherwise by the
//! gshare leaves sorted most under-pledged first (`Test` first), then `currentPriority`
//! descending, then PandaID. A job needs no more cores than the pilot has free (the pilot asks
//! with its core count). A job of a task with a GPU spec needs a free GPU of the pilot (one:
//! no PanDA field counts more) on a node whose GPUs match the spec (`check_task_architecture`,
//! reference §5 "Dispatch-time gate"). No job: the pilot exits, as a PanDA pilot does when
//! `getJob` is empty.
//! At a push PQ (Harvester `mapType` other than `NoJob`) a pilot asks nothing: it runs the job
//! its worker was made for and exits (`harvester`).

use std::collections::BTreeMap;

use crate::engine::dist;
use crate::engine::{RngStreams, SimRng, SimTime};
use crate::ids::JobId;
use crate::ids::PilotId;
use crate::panda::gshare::{self, DispatchOrder, Usage};
use crate::panda::timeouts::JobStatus as PStatus;
use crate::panda::timeouts::ProdSourceLabel;
use crate::wms::{Answer, Ctx, FetchRequest};
use crate::workload::JobKind;

use super::db::Db;
use super::setup::Statics;
use super::tables::Tables;

/// Jobs looked at per leaf for one that fits the pilot's free cores (PanDA's `getJob` query
/// takes the first row of the sorted selection that matches the pilot's resources).
const FIT_SCAN: usize = 200;

/// Analysis (`user`, and `panda`: analysis through the server) or production (`managed`, `test`,
/// the rest) for a startd pilot's request (seed 003 §2).
fn label_kind(label: ProdSourceLabel) -> JobKind {
    match label {
        ProdSourceLabel::User | ProdSourceLabel::Panda => JobKind::Analysis,
        _ => JobKind::Production,
    }
}

/// What a pilot's `getJob` request has room for: free cores, free GPUs, and its node's GPU kind
/// (CE index, inventory entry) once it runs on one.
#[derive(Debug, Clone, Copy)]
pub struct Room {
    pub cores: u32,
    pub gpus: u32,
    pub node: Option<(usize, usize)>,
}

impl Room {
    /// The room of running pilot `p`.
    fn of(ctx: &dyn Ctx, p: PilotId) -> Self {
        let grid = ctx.grid();
        let pilot = grid.pilot(p);
        let node = if grid.gpus.any() { grid.gpus.kind_of(p).map(|k| (pilot.ce as usize, k)) } else { None };
        Room { cores: pilot.free_cores, gpus: if node.is_some() { grid.gpus.free_of(p) } else { 0 }, node }
    }

    /// A Harvester push worker's request, made before the worker runs: any cores, the PQ's
    /// worker GPUs, no node reported yet.
    pub fn worker(gpus: u32) -> Self {
        Room { cores: u32::MAX, gpus, node: None }
    }
}

/// The first of `ids` (in order) that `fits`, among the first [`FIT_SCAN`]; a pilot on a GPU
/// node (`gpu_node`) skips the jobs `node_ok` turns away without counting them.
fn scan(
    ids: impl Iterator<Item = u32>,
    gpu_node: bool,
    node_ok: impl Fn(u32) -> bool,
    fits: impl Fn(u32) -> bool,
) -> Option<u32> {
    if gpu_node {
        ids.filter(|&i| node_ok(i)).take(FIT_SCAN).find(|&i| fits(i))
    } else {
        ids.take(FIT_SCAN).find(|&i| fits(i))
    }
}

/// The dispatcher's own state: the gshare leaves' dispatch order and its draws.
#[derive(Debug)]
pub struct Dispatcher {
    /// Dispatch order of the gshare leaves (indices) and when it was computed.
    leaf_rank: Vec<usize>,
    ranks_at: Option<SimTime>,
    /// The usage by leaf name the order is computed from, its values refreshed in place.
    usage: BTreeMap<String, Usage>,
    rng: SimRng,
}

impl Dispatcher {
    /// The dispatcher of `leaves` gshare leaves.
    pub fn new(leaves: usize, rngs: &RngStreams) -> Self {
        Dispatcher {
            leaf_rank: (0..leaves).collect(),
            ranks_at: None,
            usage: BTreeMap::new(),
            rng: rngs.stream("panda/dispatch"),
        }
    }

    /// The leaf dispatch order, recomputed every `agents.gshare_refresh_s` from the HS06 each
    /// leaf executes and queues (`__get_hs_leave_distribution`, every 10 s in PanDA).
    fn refresh_ranks(&mut self, st: &Statics, tables: &Tables, now: SimTime) {
        let period = st.cfg.agents.gshare_refresh_s.duration();
        if self.ranks_at.is_some_and(|t| now < t + period) {
            return;
        }
        self.ranks_at = Some(now);
        if self.usage.is_empty() {
            self.usage = st.leaves.iter().map(|l| (l.name.clone(), Usage::default())).collect();
        }
        // In leaf order, as a map collected from them: a repeated name keeps its last leaf's.
        for (i, l) in st.leaves.iter().enumerate() {
            if let Some(u) = self.usage.get_mut(&l.name) {
                *u = Usage { executing: tables.leaf_executing[i], queued: tables.leaf_queued[i] };
            }
        }
        let sorted = gshare::sorted_leaves(&st.cfg.gshares, &self.usage);
        let ranks = gshare::share_ranks(&sorted);
        let mut order: Vec<usize> = (0..st.leaves.len()).collect();
        order.sort_by_key(|&i| (gshare::share_rank(&ranks, &st.leaves[i].name), i));
        self.leaf_rank = order;
    }

    /// `getJob` for pilot `p`; at a push PQ, the job its worker was made for (`harvester`), once.
    pub fn dispatch(&mut self, st: &Statics, db: &mut Db, ctx: &mut dyn Ctx, p: PilotId) -> Answer {
        let Some(q) = db.workers.queue_of(p) else {
            return Answer::Exit;
        };
        if st.push[usize::from(q)] {
            return match db.workers.unbind(p) {
                Some(i) if db.tables.jobs[i as usize].status == PStatus::Starting => {
                    db.start_payload(ctx, i);
                    Answer::Run(db.tables.jobs[i as usize].job)
                }
                _ => Answer::Exit,
            };
        }
        let room = Room::of(ctx, p);
        match self.get_job(st, db, ctx, q, room, None) {
            Some(j) => Answer::Run(j),
            None => Answer::Exit,
        }
    }

    /// `getJob` for a pilot factory's pilot (seed 003) at queue `req.queue`: the same query, and
    /// for a startd pilot keeping a VM for analysis only `prodSourceLabel = user` jobs (only
    /// `managed` ones for production).
    pub fn fetch_for_factory(
        &mut self,
        st: &Statics,
        db: &mut Db,
        ctx: &mut dyn Ctx,
        req: &FetchRequest,
    ) -> Option<JobId> {
        let q = st.cfg.queues.iter().position(|x| Some(x.name.as_str()) == req.queue)?;
        let room = Room { cores: req.cores, ..Room::of(ctx, req.pilot) };
        self.get_job(st, db, ctx, q as u16, room, req.only)
    }

    /// The first activated job of PQ `q` in the sorting criteria that fits the pilot's `room` (and
    /// is of kind `only`, if given): it becomes `running` there now.
    fn get_job(
        &mut self,
        st: &Statics,
        db: &mut Db,
        ctx: &mut dyn Ctx,
        q: u16,
        room: Room,
        only: Option<JobKind>,
    ) -> Option<JobId> {
        let now = ctx.now();
        db.site.gets.add(q as usize, now);
        let i = self.pick_job(st, &db.tables, now, q, room, only)?;
        db.tables.set_status(i, PStatus::Sent, now);
        db.tables.set_status(i, PStatus::Starting, now);
        db.start_payload(ctx, i);
        Some(db.tables.jobs[i as usize].job)
    }

    /// The job (index) `getJob` would give at PQ `q` now to a request with this room (and kind
    /// `only`), left `activated`: one draw of the dispatch order.
    pub fn pick_job(
        &mut self,
        st: &Statics,
        tables: &Tables,
        now: SimTime,
        q: u16,
        room: Room,
        only: Option<JobKind>,
    ) -> Option<u32> {
        self.refresh_ranks(st, tables, now);
        let draw = dist::index(&mut self.rng, 100) as u32;
        let order = gshare::dispatch_order(&st.cfg.gdpconfig.dispatch, draw);
        let (jobs, tasks, shapes) = (&tables.jobs, &tables.tasks, &st.shapes);
        let node_accepts = &st.node_accepts;
        // Without a GPU stream (most scenarios) a job's task is never read here.
        let gpu_streams = st.gpu_streams;
        let fits = |i: u32| {
            let job = &jobs[i as usize];
            if job.cores > room.cores || only.is_some_and(|k| label_kind(job.label) != k) {
                return false;
            }
            // A GPU job needs one free GPU of the pilot.
            !gpu_streams || room.gpus >= 1 || shapes[usize::from(tasks[job.task as usize].stream)].gpu_spec.is_none()
        };
        // `check_task_architecture`: the GPUs the pilot reports for its node (none before a
        // push worker runs: accepted) satisfy the task's GPU spec. PanDA applies it to the
        // rows its query returns and goes on to the next: jobs it turns away do not count in
        // the scan (at a mixed A100/H100 queue, a backlog of H100-only jobs must not hide the
        // A100 jobs behind it).
        let node_ok = |i: u32| {
            let k = usize::from(tasks[jobs[i as usize].task as usize].stream);
            shapes[k].gpu_spec.is_none()
                || room.node.is_none_or(|(c, kind)| node_accepts[k].get(c).is_some_and(|m| m & (1 << kind) != 0))
        };
        let qi = q as usize;
        let gpu_node = room.node.is_some();
        match order {
            DispatchOrder::Age => scan(tables.activated_by_age[qi].iter().map(|&(_, i)| i), gpu_node, node_ok, fits),
            DispatchOrder::GlobalShares => self
                .leaf_rank
                .iter()
                .find_map(|&leaf| scan(tables.activated[qi][leaf].iter().map(|&(_, _, i)| i), gpu_node, node_ok, fits)),
        }
    }
}
