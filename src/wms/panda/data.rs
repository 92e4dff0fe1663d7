//! Data on the network: a job's input files move to its PQ's site before it can be activated
//! (`assigned` while they travel), and its output moves to the task's nucleus after the payload
//! (`holding` until the Adder registers it, then `transferring`) before the job is `finished` (seed 004: "jobs are assigned to satellites …
//! input files are transferred … output is aggregated at the nucleus"). One transfer per input
//! file, so the links' queued-file counts are what `NQUEUED_SAT_CAP` and the network weight read.
//!
//! Storage: the output of a finished job takes space on the nucleus' default output endpoint
//! (never freed: the model has no deletion). A write that does not fit is refused by the
//! endpoint; the job still finishes and the refusal is counted (`output_refused`), since the
//! model has no DDM retries. Inputs are read from the replicas and not cached.
//!
//! Where the scenario has no link for a transfer, the data is taken as already there (counted
//! in `no_route`): a scenario that wants the network to matter lists its links.

use crate::engine::SimTime;
use crate::grid::network::{TransferError, TransferId};
use crate::ids::{JobId, SiteId};
use crate::panda::timeouts::JobStatus as PStatus;
use crate::wms::{Ctx, Timer};
use crate::workload::JobStatus;

use super::PandaWms;
use super::tables::TaskStatus;

/// What the data path did over a run (in `summary.json`'s PanDA section).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DataCounters {
    pub input_files_moved: u64,
    pub output_files_moved: u64,
    /// Transfers not made for want of a link.
    pub no_route: u64,
    /// Outputs the nucleus endpoint had no room for.
    pub output_refused: u64,
}

impl PandaWms {
    fn remember_transfer(&mut self, t: TransferId, i: u32) {
        let k = t as usize;
        if self.transfer_job.len() <= k {
            self.transfer_job.resize(k + 1, u32::MAX);
        }
        self.transfer_job[k] = i;
    }

    /// A new job `i` at its PQ: activated if its input is at the PQ's site, else assigned with
    /// its missing files on their way from the best replica reachable over a link.
    pub(super) fn stage_in(&mut self, ctx: &mut dyn Ctx, i: u32) {
        let now = ctx.now();
        let (q, task, files, bytes) = {
            let j = &self.tables.jobs[i as usize];
            (j.queue, j.task, j.input_files, j.input_bytes)
        };
        let cp = self.corepower(q);
        let k = usize::from(self.tables.tasks[task as usize].stream);
        let site = self.statics.queue_site[q as usize];
        let local = self.statics.local_fraction(k, site, ctx.storages());
        let missing = (f64::from(files) * (1.0 - local)).ceil().max(0.0) as u32;
        if missing == 0 {
            self.tables.set_status(i, PStatus::Activated, now, cp);
            return;
        }
        // The source: the replica with most of the dataset among those with a link to the site.
        let source: Option<SiteId> = {
            let storages = ctx.storages();
            let net = ctx.network();
            self.statics.shapes[k]
                .replicas
                .iter()
                .filter_map(|&(id, f)| Some((storages.get(id)?.site, f)))
                .filter(|&(s, _)| s != site && net.link(s, site).is_some())
                .fold(None, |best: Option<(SiteId, f64)>, (s, f)| match best {
                    Some((_, bf)) if bf >= f => best,
                    _ => Some((s, f)),
                })
                .map(|(s, _)| s)
        };
        let Some(from) = source else {
            self.data.no_route += 1;
            self.tables.set_status(i, PStatus::Activated, now, cp);
            return;
        };
        self.fetch_input(ctx, i, from, missing, bytes / u64::from(files.max(1)));
    }

    /// Job `i` waits `assigned` while `files` input files of `per_file` bytes travel from site
    /// `from` to its PQ's site, one transfer each; `activated` at once if none could start.
    pub(super) fn fetch_input(&mut self, ctx: &mut dyn Ctx, i: u32, from: SiteId, files: u32, per_file: u64) {
        let now = ctx.now();
        let q = self.tables.jobs[i as usize].queue;
        let (cp, site) = (self.corepower(q), self.statics.queue_site[q as usize]);
        self.tables.set_status(i, PStatus::Assigned, now, cp);
        let mut sent = 0;
        for _ in 0..files {
            match ctx.start_transfer(from, site, per_file) {
                Ok(t) => {
                    self.remember_transfer(t, i);
                    sent += 1;
                }
                Err(TransferError::NoRoute { .. }) => self.data.no_route += 1,
                Err(_) => {}
            }
        }
        self.data.input_files_moved += u64::from(sent);
        self.tables.jobs[i as usize].files_in_flight = sent;
        if sent == 0 {
            self.tables.set_status(i, PStatus::Activated, now, cp);
        }
    }

    /// One of its transfers arrived: an input file (the job is activated with its last one) or
    /// a job's output (the job is finished).
    pub(super) fn transfer_arrived(&mut self, ctx: &mut dyn Ctx, t: TransferId) {
        let Some(&i) = self.transfer_job.get(t as usize).filter(|&&i| i != u32::MAX) else { return };
        let now = ctx.now();
        let cp = self.corepower(self.tables.jobs[i as usize].queue);
        let j = &mut self.tables.jobs[i as usize];
        match j.status {
            PStatus::Assigned => {
                j.files_in_flight = j.files_in_flight.saturating_sub(1);
                if j.files_in_flight == 0 {
                    self.tables.set_status(i, PStatus::Activated, now, cp);
                }
            }
            PStatus::Transferring if j.output_transfer == Some(t) => self.finish(ctx, i),
            _ => {} // the job was closed meanwhile: the file is not used
        }
    }

    /// The payload of world job `j` ended (the world says Done or Failed). The pilot's final
    /// report puts the job in `holding` (panda-server's `updateJob`), where it waits for the
    /// Adder's next cycle, on the grid of `panda.agents.adder_s` from the start.
    pub(super) fn payload_ended(&mut self, ctx: &mut dyn Ctx, j: JobId) {
        let Some(i) = self.tables.of_job(j) else { return };
        let now = ctx.now();
        let cp = self.corepower(self.tables.jobs[i as usize].queue);
        self.tables.set_status(i, PStatus::Holding, now, cp);
        // A cycle with nothing to hold changes nothing, so only the cycles that find a holding
        // job are run: the first job to hold sets the next tick strictly after now (a cycle
        // takes every holding job, so a non-empty list always has its cycle set).
        if self.holding.is_empty() {
            let period = self.cfg.agents.adder_s.duration().as_millis();
            let next = SimTime::from_millis((now.as_millis() / period + 1).saturating_mul(period));
            ctx.set_timer(next, Timer { kind: super::ADDER, id: 0 });
        }
        self.holding.push(i);
    }

    /// The Adder's cycle (`add_main`): each `holding` job, in the order its pilot reported, is
    /// made `failed` (JEDI then retries its chunk) or, its outputs registered, `transferring`
    /// towards the task's nucleus or `finished`.
    pub(super) fn adder_cycle(&mut self, ctx: &mut dyn Ctx) {
        for i in std::mem::take(&mut self.holding) {
            if self.tables.jobs[i as usize].status == PStatus::Holding {
                self.add(ctx, i);
            }
        }
    }

    /// The Adder's verdict on holding job `i`.
    fn add(&mut self, ctx: &mut dyn Ctx, i: u32) {
        let j = self.tables.jobs[i as usize].job;
        let now = ctx.now();
        let (q, task, out) = {
            let x = &self.tables.jobs[i as usize];
            (x.queue, x.task, x.output_bytes)
        };
        let cp = self.corepower(q);
        let ok = ctx.jobs()[crate::ids::job_index(j)].status == JobStatus::Done;
        if !ok {
            self.tables.set_status(i, PStatus::Failed, now, cp);
            self.retry_or_fail(i);
            return;
        }
        self.tables.set_status(i, PStatus::Transferring, now, cp);
        let nucleus = self.tables.tasks[task as usize].nucleus;
        let to = nucleus.map(|n| self.statics.nucleus_site[usize::from(n)]);
        let from = self.statics.queue_site[q as usize];
        match to {
            Some(to) if to != from && out > 0 => match ctx.start_transfer(from, to, out) {
                Ok(t) => {
                    self.remember_transfer(t, i);
                    self.tables.jobs[i as usize].output_transfer = Some(t);
                    self.data.output_files_moved += 1;
                }
                Err(_) => {
                    self.data.no_route += 1;
                    self.finish(ctx, i);
                }
            },
            _ => self.finish(ctx, i),
        }
    }

    /// Job `i` is `finished`: its output is stored at the nucleus, its chunk is done.
    fn finish(&mut self, ctx: &mut dyn Ctx, i: u32) {
        let now = ctx.now();
        let (q, task, out) = {
            let x = &self.tables.jobs[i as usize];
            (x.queue, x.task, x.output_bytes)
        };
        if let Some(n) = self.tables.tasks[task as usize].nucleus {
            if let Some(id) = self.statics.nucleus_output[usize::from(n)] {
                if out > 0 && ctx.reserve_storage(id, out).is_err() {
                    self.data.output_refused += 1;
                }
            }
        }
        let cp = self.corepower(q);
        self.tables.set_status(i, PStatus::Finished, now, cp);
        self.tables.jobs[i as usize].output_transfer = None;
        let t = &mut self.tables.tasks[task as usize];
        t.finished += 1;
        self.task_maybe_done(task);
    }

    /// Job `i` failed or was closed: JEDI regenerates its chunk while attempts remain.
    pub(super) fn retry_or_fail(&mut self, i: u32) {
        let (task, attempt) = {
            let x = &self.tables.jobs[i as usize];
            (x.task, x.attempt)
        };
        let max = self.statics.shapes[usize::from(self.tables.tasks[task as usize].stream)].max_attempt;
        let t = &mut self.tables.tasks[task as usize];
        if attempt < max {
            t.retries.push(attempt + 1);
        } else {
            t.failed += 1;
            self.task_maybe_done(task);
        }
    }

    /// A task whose chunks are all final is done; its work leaves its nucleus' RW.
    fn task_maybe_done(&mut self, task: u32) {
        let t = &mut self.tables.tasks[task as usize];
        if t.finished + t.failed >= t.n_jobs && t.status != TaskStatus::Done {
            t.status = TaskStatus::Done;
        }
    }
}
