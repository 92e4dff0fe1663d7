//! PanDA's job and task tables: JEDI tasks, PanDA jobs with their status history, and the
//! per-queue counts brokerage and Harvester read. Every status change goes through
//! [`Tables::set_status`], which keeps the counts equal to a recount of the jobs (checked by
//! [`Tables::check`] after every test run). The chunk bookkeeping every agent that ends a job
//! shares is here too: JEDI regenerates a job's chunk while its task's `maxAttempt` allows
//! ([`Tables::retry_or_fail`], [`Tables::regenerate`]).

use std::cmp::Reverse;
use std::collections::BTreeSet;

use crate::engine::SimTime;
use crate::grid::network::TransferId;
use crate::ids::JobId;
use crate::panda::job_broker::JobCounts;
use crate::panda::timeouts::{JobStatus as PStatus, ProdSourceLabel};

/// A JEDI task's status, reduced to what the model distinguishes (`JediTaskSpec.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStatus {
    /// Not submitted yet (its arrival time is in the future).
    Registered,
    /// Waiting for task brokerage to choose a nucleus (production only).
    Assigning,
    /// Jobs are being generated and run.
    Running,
    /// Every job is final (finished, or failed after its last attempt).
    Done,
    /// The synthetic task of a replay stream: its jobs come from records, never brokered.
    Replay,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Registered => "registered",
            TaskStatus::Assigning => "assigning",
            TaskStatus::Running => "running",
            TaskStatus::Done => "done",
            TaskStatus::Replay => "replay",
        }
    }
}

/// A JEDI task (`jediTaskID` = index + 1).
#[derive(Debug, Clone)]
pub struct Task {
    /// The PanDA stream: `panda.tasks[k]` for `k < tasks.len()`, then `panda.analysis`.
    pub stream: u16,
    /// Its number within the stream.
    pub task_no: u32,
    pub status: TaskStatus,
    /// Index in `panda.nuclei` (production tasks, once brokered).
    pub nucleus: Option<u16>,
    pub arrived: SimTime,
    /// When brokerage may try again (pending tasks).
    pub retry_at: SimTime,
    /// `currentPriority`.
    pub priority: i64,
    /// Jobs (input chunks) the task splits into.
    pub n_jobs: u32,
    /// Chunks not yet generated (the next is `n_jobs - ungenerated`).
    pub ungenerated: u32,
    /// Chunks to generate again (their job failed or was reassigned): (attempt of the new job).
    pub retries: Vec<u8>,
    /// Chunks final: finished, or failed at their last attempt.
    pub finished: u32,
    pub failed: u32,
    /// PQs the task's jobs were brokered to (analysis: `getSitesUsedByTask_JEDI`).
    pub used_queues: Vec<usize>,
    /// The last brokerage that found candidates (analysis: `DATA_CHECK_TIMEOUT_USER`).
    pub last_brokered: Option<SimTime>,
}

impl Task {
    /// Jobs waiting to be generated (new chunks and retries).
    pub fn to_generate(&self) -> u32 {
        self.ungenerated + self.retries.len() as u32
    }

    /// Has jobs to generate and no brokerage wait left at `now`: the JobGenerator takes it.
    pub fn ready(&self, now: SimTime) -> bool {
        self.to_generate() > 0 && self.retry_at <= now
    }
}

/// Times of a PanDA job's statuses (PanDA's `creationTime`, `stateChangeTime`, and the
/// per-status times the job tables keep in `jobs.parquet`).
#[derive(Debug, Clone, Copy, Default)]
pub struct StatusTimes {
    pub defined: Option<SimTime>,
    pub assigned: Option<SimTime>,
    pub activated: Option<SimTime>,
    /// `sent` / `starting`: the pilot got the job (the model starts the payload at once).
    pub starting: Option<SimTime>,
    pub running: Option<SimTime>,
    /// The pilot reported the payload's end; the Adder has not processed it yet.
    pub holding: Option<SimTime>,
    pub transferring: Option<SimTime>,
    /// Final: finished, failed or closed.
    pub end: Option<SimTime>,
}

/// One PanDA job (`PandaID` = its world `JobId`).
#[derive(Debug, Clone)]
pub struct PJob {
    pub job: JobId,
    /// Index of its task.
    pub task: u32,
    /// Index in `panda.queues`.
    pub queue: u16,
    /// gshare leaf index.
    pub leaf: u16,
    pub status: PStatus,
    /// ATLAS resource type (`view::prod::ResourceType::index`: SCORE, SCORE_HIMEM, MCORE,
    /// MCORE_HIMEM).
    pub rt: u8,
    pub label: ProdSourceLabel,
    /// `attemptNr`, 1 for the first job of a chunk.
    pub attempt: u8,
    pub priority: i64,
    pub cores: u32,
    pub creation: SimTime,
    pub state_change: SimTime,
    pub times: StatusTimes,
    /// Input bytes and files of the job (its chunk of the master dataset).
    pub input_bytes: u64,
    pub input_files: u32,
    /// Input files still on the network to the job's site.
    pub files_in_flight: u32,
    pub output_bytes: u64,
    /// The output transfer to the nucleus, while transferring.
    pub output_transfer: Option<TransferId>,
    /// The brokerage decision that placed it (`record::Records::decisions` index), [`NO_DECISION`]
    /// for a replayed job (its record placed it).
    pub decision: u32,
    /// A replayed job: its index in the replayed jobs (`replay::replay_jobs`; `None` for
    /// JEDI's jobs).
    pub record: Option<u32>,
}

/// [`PJob::decision`] of a job no brokerage placed (a replayed record).
pub const NO_DECISION: u32 = u32::MAX;

/// Activated jobs of one PQ and leaf in dispatch order: (priority descending, PandaID, job index).
pub type DispatchSet = BTreeSet<(Reverse<i64>, JobId, u32)>;

/// The slot of a job in [`Tables::by_job`] when it is not PanDA's.
pub const NOT_MINE: u32 = u32::MAX;

/// PanDA's job and task tables (module doc).
#[derive(Debug)]
pub struct Tables {
    pub tasks: Vec<Task>,
    pub jobs: Vec<PJob>,
    /// PanDA job index by `ids::job_index` of the world job, [`NOT_MINE`] for others'.
    pub by_job: Vec<u32>,
    /// `counts[q]`, `leaf_counts[q][leaf]`: JobCounts of PQ `q`.
    pub counts: Vec<JobCounts>,
    pub leaf_counts: Vec<Vec<JobCounts>>,
    /// `rt_counts[q][leaf][rt]`: the same per resource type (`getJobStatisticsByResourceTypeSite`).
    pub rt_counts: Vec<Vec<[JobCounts; 4]>>,
    /// Activated jobs of each PQ by gshare leaf, in dispatch order within a leaf: priority
    /// descending, then PandaID ascending.
    pub activated: Vec<Vec<DispatchSet>>,
    /// Activated jobs of each PQ by age (PandaID) for the sloppy dispatch.
    pub activated_by_age: Vec<BTreeSet<(JobId, u32)>>,
    /// Executing (sent + starting + running) jobs per gshare leaf, in HS06 (cores × corepower).
    pub leaf_executing: Vec<f64>,
    /// Activated jobs per gshare leaf, in HS06.
    pub leaf_queued: Vec<f64>,
    /// JEDI's jobs not yet final (copyArchive prunes it); replayed jobs are not in it.
    pub live: Vec<u32>,
    /// Per job, copyArchive's memo: no timeout rule can fire on the job through this time while
    /// its status stays (`panda::timeouts::check_until`); a status change resets it to zero.
    pub quiet_until: Vec<SimTime>,
    /// `corepower` of each PQ (a job's HS06 is its cores × its PQ's).
    corepower: Vec<f64>,
    /// `maxAttempt` of each stream's tasks.
    max_attempt: Vec<u8>,
}

/// Which field of JobCounts a status counts in (`None`: not counted).
fn slot(c: &mut JobCounts, s: PStatus) -> Option<&mut u64> {
    Some(match s {
        PStatus::Defined => &mut c.defined,
        PStatus::Assigned => &mut c.assigned,
        PStatus::Activated => &mut c.activated,
        PStatus::Sent | PStatus::Starting => &mut c.starting,
        PStatus::Running => &mut c.running,
        PStatus::Transferring => &mut c.transferring,
        _ => return None,
    })
}

/// Executing for the gshare distribution (reference §7: executing = sent + running).
fn executing(s: PStatus) -> bool {
    matches!(s, PStatus::Sent | PStatus::Starting | PStatus::Running)
}

impl Tables {
    /// Empty tables for PQs of `corepower`, `leaves` gshare leaves and streams whose tasks
    /// have `max_attempt`.
    pub fn new(corepower: Vec<f64>, leaves: usize, max_attempt: Vec<u8>) -> Self {
        let queues = corepower.len();
        Self {
            corepower,
            max_attempt,
            counts: vec![JobCounts::default(); queues],
            leaf_counts: vec![vec![JobCounts::default(); leaves]; queues],
            rt_counts: vec![vec![[JobCounts::default(); 4]; leaves]; queues],
            activated: vec![vec![BTreeSet::new(); leaves]; queues],
            activated_by_age: vec![BTreeSet::new(); queues],
            leaf_executing: vec![0.0; leaves],
            leaf_queued: vec![0.0; leaves],
            tasks: Vec::new(),
            jobs: Vec::new(),
            by_job: Vec::new(),
            live: Vec::new(),
            quiet_until: Vec::new(),
        }
    }

    /// The PanDA job of world job `j`, if it is PanDA's.
    pub fn of_job(&self, j: JobId) -> Option<u32> {
        let i = crate::ids::job_index(j);
        self.by_job.get(i).copied().filter(|&x| x != NOT_MINE)
    }

    /// Add a job (its status is counted).
    pub fn add(&mut self, job: PJob) -> u32 {
        let i = self.jobs.len() as u32;
        let wi = crate::ids::job_index(job.job);
        if self.by_job.len() <= wi {
            self.by_job.resize(wi + 1, NOT_MINE);
        }
        self.by_job[wi] = i;
        let status = job.status;
        self.jobs.push(job);
        self.quiet_until.push(SimTime::ZERO);
        self.count(i, status, true);
        i
    }

    fn count(&mut self, i: u32, s: PStatus, add: bool) {
        let j = &self.jobs[i as usize];
        let (q, leaf, prio, id, rt) = (j.queue as usize, j.leaf as usize, j.priority, j.job, usize::from(j.rt) & 3);
        let hs06 = f64::from(j.cores) * self.corepower[q];
        for c in [&mut self.counts[q], &mut self.leaf_counts[q][leaf], &mut self.rt_counts[q][leaf][rt]] {
            if let Some(n) = slot(c, s) {
                if add {
                    *n += 1;
                } else {
                    *n -= 1;
                }
            }
        }
        if s == PStatus::Activated {
            if add {
                self.activated[q][leaf].insert((Reverse(prio), id, i));
                self.activated_by_age[q].insert((id, i));
                self.leaf_queued[leaf] += hs06;
            } else {
                self.activated[q][leaf].remove(&(Reverse(prio), id, i));
                self.activated_by_age[q].remove(&(id, i));
                self.leaf_queued[leaf] -= hs06;
            }
        }
        if executing(s) {
            self.leaf_executing[leaf] += if add { hs06 } else { -hs06 };
        }
    }

    /// Move job `i` to `status` at `now`, keeping every count.
    pub fn set_status(&mut self, i: u32, status: PStatus, now: SimTime) {
        let old = self.jobs[i as usize].status;
        if old == status {
            return;
        }
        self.count(i, old, false);
        let j = &mut self.jobs[i as usize];
        j.status = status;
        j.state_change = now;
        self.quiet_until[i as usize] = SimTime::ZERO;
        let t = &mut j.times;
        match status {
            PStatus::Defined => t.defined = Some(now),
            PStatus::Assigned => t.assigned = Some(now),
            PStatus::Activated => t.activated = Some(now),
            PStatus::Sent | PStatus::Starting => t.starting = Some(now),
            PStatus::Running => t.running = Some(now),
            PStatus::Holding => t.holding = Some(now),
            PStatus::Transferring => t.transferring = Some(now),
            PStatus::Finished | PStatus::Failed | PStatus::Closed | PStatus::Cancelled => t.end = Some(now),
            _ => {}
        }
        self.count(i, status, true);
    }

    /// Job `i` failed or was closed: JEDI regenerates its chunk while attempts remain.
    pub fn retry_or_fail(&mut self, i: u32) {
        let (task, attempt) = {
            let x = &self.jobs[i as usize];
            (x.task, x.attempt)
        };
        let t = &mut self.tasks[task as usize];
        if attempt < self.max_attempt[usize::from(t.stream)] {
            t.retries.push(attempt + 1);
        } else {
            t.failed += 1;
            self.task_maybe_done(task);
        }
    }

    /// JEDI regenerates the chunk of a reassigned job (attempt + 1, no attempt consumed).
    pub fn regenerate(&mut self, i: u32) {
        let j = &self.jobs[i as usize];
        let (task, attempt) = (j.task, j.attempt);
        self.tasks[task as usize].retries.push(attempt.saturating_add(1));
    }

    /// Job `i` is `finished` at `now`: its chunk is done.
    pub fn finish(&mut self, i: u32, now: SimTime) {
        self.set_status(i, PStatus::Finished, now);
        let j = &mut self.jobs[i as usize];
        j.output_transfer = None;
        let task = j.task;
        self.tasks[task as usize].finished += 1;
        self.task_maybe_done(task);
    }

    /// A task whose chunks are all final is done.
    fn task_maybe_done(&mut self, task: u32) {
        let t = &mut self.tasks[task as usize];
        if t.finished + t.failed >= t.n_jobs && t.status != TaskStatus::Done {
            t.status = TaskStatus::Done;
        }
    }

    /// The counts recomputed from the jobs, compared with the kept ones; a description of each
    /// difference.
    pub fn check(&self) -> Vec<String> {
        let mut bad = Vec::new();
        let mut counts = vec![JobCounts::default(); self.counts.len()];
        let mut leaf = self.leaf_counts.iter().map(|v| vec![JobCounts::default(); v.len()]).collect::<Vec<_>>();
        let mut rts = self.rt_counts.iter().map(|v| vec![[JobCounts::default(); 4]; v.len()]).collect::<Vec<_>>();
        let mut activated = vec![0usize; self.counts.len()];
        for j in &self.jobs {
            let (q, l) = (j.queue as usize, j.leaf as usize);
            for c in [&mut counts[q], &mut leaf[q][l], &mut rts[q][l][usize::from(j.rt) & 3]] {
                if let Some(n) = slot(c, j.status) {
                    *n += 1;
                }
            }
            if j.status == PStatus::Activated {
                activated[j.queue as usize] += 1;
            }
        }
        for q in 0..counts.len() {
            if counts[q] != self.counts[q] || leaf[q] != self.leaf_counts[q] || rts[q] != self.rt_counts[q] {
                bad.push(format!("queue {q}: kept job counts {:?} but recounted {:?}", self.counts[q], counts[q]));
            }
            let listed: usize = self.activated[q].iter().map(BTreeSet::len).sum();
            if listed != activated[q] || self.activated_by_age[q].len() != activated[q] {
                bad.push(format!("queue {q}: {} activated jobs but {listed} listed for dispatch", activated[q]));
            }
        }
        bad
    }
}
