//! DDM, the data on the network: a job's input files move to its PQ's site before it can be
//! activated (`assigned` while they travel), and its output moves to the task's nucleus after
//! the payload (`transferring`, once the Adder registered it) before the job is `finished`
//! (seed 004: "jobs are assigned to satellites … input files are transferred … output is
//! aggregated at the nucleus"). One transfer per input
//! file, so the links' queued-file counts are what `NQUEUED_SAT_CAP` and the network weight read.
//!
//! Storage: the output of a finished job takes space on the nucleus' default output endpoint
//! (never freed: the model has no deletion). A write that does not fit is refused by the
//! endpoint; the job still finishes and the refusal is counted (`output_refused`), since the
//! model has no DDM retries. Inputs are read from the replicas and not cached.
//!
//! Where the scenario has no link for a transfer, the data is taken as already there (counted
//! in `no_route`): a scenario that wants the network to matter lists its links.

use crate::grid::network::{TransferError, TransferId};
use crate::ids::SiteId;
use crate::panda::timeouts::JobStatus as PStatus;
use crate::wms::Ctx;

use super::db::Db;
use super::setup::Statics;

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

/// The transfers PanDA asked for and what they did.
#[derive(Debug, Default)]
pub struct Ddm {
    /// The job each of its transfers carries, by `TransferId` (`u32::MAX` for none).
    transfer_job: Vec<u32>,
    pub counters: DataCounters,
}

impl Ddm {
    fn remember_transfer(&mut self, t: TransferId, i: u32) {
        let k = t as usize;
        if self.transfer_job.len() <= k {
            self.transfer_job.resize(k + 1, u32::MAX);
        }
        self.transfer_job[k] = i;
    }

    /// A new job `i` at its PQ: activated if its input is at the PQ's site, else assigned with
    /// its missing files on their way from the best replica reachable over a link.
    pub fn stage_in(&mut self, st: &Statics, db: &mut Db, ctx: &mut dyn Ctx, i: u32) {
        let now = ctx.now();
        let (q, task, files, bytes) = {
            let j = &db.tables.jobs[i as usize];
            (j.queue, j.task, j.input_files, j.input_bytes)
        };
        let k = usize::from(db.tables.tasks[task as usize].stream);
        let site = st.queue_site[q as usize];
        let local = st.local_fraction(k, site, ctx.storages());
        let missing = (f64::from(files) * (1.0 - local)).ceil().max(0.0) as u32;
        if missing == 0 {
            db.tables.set_status(i, PStatus::Activated, now);
            return;
        }
        // The source: the replica with most of the dataset among those with a link to the site.
        let source: Option<SiteId> = {
            let storages = ctx.storages();
            let net = ctx.network();
            st.shapes[k]
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
            self.counters.no_route += 1;
            db.tables.set_status(i, PStatus::Activated, now);
            return;
        };
        self.fetch_input(st, db, ctx, i, from, missing, bytes / u64::from(files.max(1)));
    }

    /// Job `i` waits `assigned` while `files` input files of `per_file` bytes travel from site
    /// `from` to its PQ's site, one transfer each; `activated` at once if none could start.
    #[allow(clippy::too_many_arguments)]
    pub fn fetch_input(
        &mut self,
        st: &Statics,
        db: &mut Db,
        ctx: &mut dyn Ctx,
        i: u32,
        from: SiteId,
        files: u32,
        per_file: u64,
    ) {
        let now = ctx.now();
        let site = st.queue_site[db.tables.jobs[i as usize].queue as usize];
        db.tables.set_status(i, PStatus::Assigned, now);
        let mut sent = 0;
        for _ in 0..files {
            match ctx.start_transfer(from, site, per_file) {
                Ok(t) => {
                    self.remember_transfer(t, i);
                    sent += 1;
                }
                Err(TransferError::NoRoute { .. }) => self.counters.no_route += 1,
                Err(_) => {}
            }
        }
        self.counters.input_files_moved += u64::from(sent);
        db.tables.jobs[i as usize].files_in_flight = sent;
        if sent == 0 {
            db.tables.set_status(i, PStatus::Activated, now);
        }
    }

    /// One of its transfers arrived: an input file (the job is activated with its last one) or
    /// a job's output (the job is finished).
    pub fn transfer_arrived(&mut self, st: &Statics, db: &mut Db, ctx: &mut dyn Ctx, t: TransferId) {
        let Some(&i) = self.transfer_job.get(t as usize).filter(|&&i| i != u32::MAX) else { return };
        let now = ctx.now();
        let j = &mut db.tables.jobs[i as usize];
        match j.status {
            PStatus::Assigned => {
                j.files_in_flight = j.files_in_flight.saturating_sub(1);
                if j.files_in_flight == 0 {
                    db.tables.set_status(i, PStatus::Activated, now);
                }
            }
            PStatus::Transferring if j.output_transfer == Some(t) => self.finish(st, db, ctx, i),
            _ => {} // the job was closed meanwhile: the file is not used
        }
    }

    /// Job `i`'s outputs, registered by the Adder (`transferring`), go to its task's nucleus;
    /// the job is finished at once when they are there already or cannot travel.
    pub fn send_output(&mut self, st: &Statics, db: &mut Db, ctx: &mut dyn Ctx, i: u32) {
        let (q, task, out) = {
            let x = &db.tables.jobs[i as usize];
            (x.queue, x.task, x.output_bytes)
        };
        let nucleus = db.tables.tasks[task as usize].nucleus;
        let to = nucleus.map(|n| st.nucleus_site[usize::from(n)]);
        let from = st.queue_site[q as usize];
        match to {
            Some(to) if to != from && out > 0 => match ctx.start_transfer(from, to, out) {
                Ok(t) => {
                    self.remember_transfer(t, i);
                    db.tables.jobs[i as usize].output_transfer = Some(t);
                    self.counters.output_files_moved += 1;
                }
                Err(_) => {
                    self.counters.no_route += 1;
                    self.finish(st, db, ctx, i);
                }
            },
            _ => self.finish(st, db, ctx, i),
        }
    }

    /// Job `i` is `finished`: its output is stored at the nucleus, its chunk is done.
    fn finish(&mut self, st: &Statics, db: &mut Db, ctx: &mut dyn Ctx, i: u32) {
        let (task, out) = {
            let x = &db.tables.jobs[i as usize];
            (x.task, x.output_bytes)
        };
        if let Some(n) = db.tables.tasks[task as usize].nucleus {
            if let Some(id) = st.nucleus_output[usize::from(n)] {
                if out > 0 && ctx.reserve_storage(id, out).is_err() {
                    self.counters.output_refused += 1;
                }
            }
        }
        db.tables.finish(i, ctx.now());
    }
}
