//! What panda-server knows of Harvester's workers (its `Harvester_Workers`,
//! `Harvester_Rel_Jobs_Workers` and `Harvester_Worker_Stats` tables, reference §8): each
//! worker's PQ, the job a push worker was made for, and the workers queued and running per PQ.
//! Harvester writes it (its workers and their counts); the dispatcher reads a pilot's PQ and
//! unbinds a push worker's job as it runs it, copyArchive unbinds the worker of a job it closes
//! (and kills it), brokerage reads the counts (`ups_load_worker_stats`).

use std::collections::BTreeMap;

use crate::ids::PilotId;
use crate::panda::harvester::config::WorkerCounts;
use crate::wms::PilotNews;

/// A PQ's Harvester workers: queued (submitted, waiting in the batch system) and running.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Workers {
    pub queued: u64,
    pub running: u64,
}

impl Workers {
    /// A worker's news: started (queued → running), or ended (from running if it had
    /// `started`, else from queued).
    pub fn hear(&mut self, news: PilotNews, started: bool) {
        match news {
            PilotNews::Started => {
                self.queued -= 1;
                self.running += 1;
            }
            PilotNews::Ended(_) if started => self.running -= 1,
            PilotNews::Ended(_) => self.queued -= 1,
        }
    }
}

/// No PQ: another WMS's pilot (`WorkerTable::pilot_queue`).
const NO_QUEUE: u16 = u16::MAX;
/// No job bound to a worker (`WorkerTable::pilot_job`).
const NO_JOB: u32 = u32::MAX;

/// The workers' table (module doc).
#[derive(Debug, Clone)]
pub struct WorkerTable {
    /// The PQ of each worker, by `PilotId` ([`NO_QUEUE`]: another WMS's pilot).
    pilot_queue: Vec<u16>,
    /// Push mode: the job (index) each worker was made for until its pilot runs it, by
    /// `PilotId` ([`NO_JOB`]: none), and the worker of each such job.
    pilot_job: Vec<u32>,
    job_worker: BTreeMap<u32, PilotId>,
    /// Workers per PQ.
    per_queue: Vec<Workers>,
    /// Cores of a worker of each PQ (the PQ's pilot size), for the core counts.
    queue_cores: Vec<u64>,
}

impl WorkerTable {
    /// No worker yet at PQs whose workers have `queue_cores` cores each.
    pub fn new(queue_cores: Vec<u64>) -> Self {
        WorkerTable {
            pilot_queue: Vec::new(),
            pilot_job: Vec::new(),
            job_worker: BTreeMap::new(),
            per_queue: vec![Workers::default(); queue_cores.len()],
            queue_cores,
        }
    }

    /// Worker `p` was submitted for PQ `q` (queued).
    pub fn register(&mut self, p: PilotId, q: u16) {
        let k = p as usize;
        if self.pilot_queue.len() <= k {
            self.pilot_queue.resize(k + 1, NO_QUEUE);
            self.pilot_job.resize(k + 1, NO_JOB);
        }
        self.pilot_queue[k] = q;
        self.per_queue[usize::from(q)].queued += 1;
    }

    /// A worker of PQ `q` started or ended ([`Workers::hear`]).
    pub fn news(&mut self, q: u16, news: PilotNews, started: bool) {
        self.per_queue[usize::from(q)].hear(news, started);
    }

    /// The workers of PQ `q`.
    pub fn of_queue(&self, q: usize) -> Workers {
        self.per_queue[q]
    }

    /// The PQ of worker `p`; `None` for a pilot Harvester did not submit.
    pub fn queue_of(&self, p: PilotId) -> Option<u16> {
        self.pilot_queue.get(p as usize).copied().filter(|&q| q != NO_QUEUE)
    }

    /// Push mode: worker `p` carries job `i`.
    pub fn bind(&mut self, p: PilotId, i: u32) {
        self.pilot_job[p as usize] = i;
        self.job_worker.insert(i, p);
    }

    /// The job bound to worker `p`, unbound.
    pub fn unbind(&mut self, p: PilotId) -> Option<u32> {
        let slot = self.pilot_job.get_mut(p as usize)?;
        let i = std::mem::replace(slot, NO_JOB);
        (i != NO_JOB).then(|| {
            self.job_worker.remove(&i);
            i
        })
    }

    /// The worker job `i` is bound to, if any.
    pub fn worker_of(&self, i: u32) -> Option<PilotId> {
        self.job_worker.get(&i).copied()
    }

    /// Queued and running workers per PQ as brokerage and `get_worker_limits` read them, with
    /// cores at the PQ's pilot size.
    pub fn counts(&self) -> (Vec<WorkerCounts>, Vec<WorkerCounts>) {
        let (mut queued, mut running) = (Vec::new(), Vec::new());
        self.fill_counts(&mut queued, &mut running);
        (queued, running)
    }

    /// [`Self::counts`] into `queued` and `running` (cleared first), reusing their buffers.
    pub fn fill_counts(&self, queued: &mut Vec<WorkerCounts>, running: &mut Vec<WorkerCounts>) {
        let c = |n: u64, cores: u64| WorkerCounts { n, core: n * cores, mem: 0 };
        queued.clear();
        queued.extend(self.per_queue.iter().zip(&self.queue_cores).map(|(w, &cores)| c(w.queued, cores)));
        running.clear();
        running.extend(self.per_queue.iter().zip(&self.queue_cores).map(|(w, &cores)| c(w.running, cores)));
    }
}
