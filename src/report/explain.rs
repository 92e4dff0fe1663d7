//! `pilotsim explain`: why did a PanDA job go where it went? Read from a run directory's
//! `jobs.parquet` (the job's life: PanDA status times, PQ, task, attempt, gshare, and the
//! `brokerage_id` of the decision that placed it) and `brokerage.parquet` (one row per
//! candidate of every brokerage decision: chosen, a weighed candidate, or skipped by a named
//! filter with PanDA's message).
//!
//! [`RunTables::open`] checks the directory (exists, is a finished run, is a PanDA run) and
//! reads both tables; [`RunTables::explain`] answers a [`Query`] with a plain
//! [`Explanation`] (serialisable as JSON), or [`NotFound`] when the job, task or queue is not
//! in the run. [`render_text`] prints an explanation for people; times as hours:minutes since
//! the start of the simulation and seconds.

mod columns;
mod model;
#[cfg(test)]
mod tests;
mod text;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::metrics::columns::Table;
use anyhow::{Context, Result, bail};

use columns::{Row, f64s, gpu_models, read_parquet, recorded_pandaids, rows, strs, u32s};
pub use model::*;
pub use text::{hours_minutes, render_text};

/// The two tables of a PanDA run, ready to answer queries.
pub struct RunTables {
    pub run: RunIdent,
    jobs: Table,
    brokerage: Table,
}

/// The `jobs.parquet` columns explain reads (the PanDA ones after `wms`).
const JOB_COLUMNS: [&str; 19] = [
    "job_id",
    "site",
    "ce",
    "pilot_id",
    "wms",
    "panda_status",
    "jedi_task_id",
    "computingsite",
    "gshare",
    "attempt_nr",
    "brokerage_id",
    "defined_s",
    "assigned_s",
    "activated_s",
    "starting_s",
    "running_s",
    "transferring_s",
    "final_s",
    "status",
];

/// The PanDA status of each `*_s` time column, in life order (`final` is replaced by the
/// job's final status).
const STATUS_TIMES: [(&str, &str); 7] = [
    ("defined", "defined_s"),
    ("assigned", "assigned_s"),
    ("activated", "activated_s"),
    ("starting", "starting_s"),
    ("running", "running_s"),
    ("transferring", "transferring_s"),
    ("final", "final_s"),
];

/// The `brokerage.parquet` columns.
const BROKERAGE_COLUMNS: [&str; 12] = [
    "brokerage_id",
    "time_s",
    "kind",
    "jedi_task_id",
    "candidate",
    "verdict",
    "stage",
    "reason",
    "temporary",
    "weight",
    "jobs",
    "pending",
];

impl RunTables {
    /// Open a run directory: it must exist, hold a finished run (`summary.json`) and be a
    /// PanDA run (`brokerage.parquet`, the PanDA columns of `jobs.parquet`). Every failure is
    /// an error saying which of these it is.
    pub fn open(dir: &Path) -> Result<Self> {
        if !dir.is_dir() {
            bail!("{}: no such directory", dir.display());
        }
        let summary = dir.join("summary.json");
        if !summary.is_file() {
            bail!(
                "{}: not a run directory (no summary.json, which a run writes last: give the --out \
                 directory of a finished `pilotsim run`)",
                dir.display()
            );
        }
        let text = std::fs::read_to_string(&summary).with_context(|| format!("reading {}", summary.display()))?;
        let s: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("{}", summary.display()))?;
        let run = RunIdent {
            scenario: s["scenario"].as_str().unwrap_or("").to_string(),
            seed: s["seed"].as_u64().unwrap_or(0),
        };
        let brokerage = dir.join("brokerage.parquet");
        if !brokerage.is_file() || s["wms"]["panda"].is_null() {
            bail!(
                "{}: not a PanDA run (scenario {:?} ran no PanDA WMS: no brokerage.parquet and no wms.panda in \
                 summary.json); explain follows PanDA's brokerage decisions, which a DIRAC run does not make",
                dir.display(),
                run.scenario
            );
        }
        let jobs_path = dir.join("jobs.parquet");
        if !jobs_path.is_file() {
            bail!("{}: no jobs.parquet", dir.display());
        }
        // Replayed records' PandaIDs, in runs that have the column (it came with replay streams).
        let wanted: Vec<&str> = JOB_COLUMNS.iter().copied().chain(["recorded_pandaid", "gpu_model"]).collect();
        let jobs = read_parquet(&jobs_path, &wanted)?;
        let brokerage = read_parquet(&brokerage, &BROKERAGE_COLUMNS)?;
        Self::from_frames(run, jobs, brokerage)
    }

    /// From the two tables (at least the columns explain reads; extra ones are ignored).
    pub fn from_frames(run: RunIdent, jobs: Table, brokerage: Table) -> Result<Self> {
        for (table, df, cols) in [("jobs", &jobs, &JOB_COLUMNS[..]), ("brokerage", &brokerage, &BROKERAGE_COLUMNS[..])]
        {
            let have: BTreeSet<&str> = df.names().collect();
            let missing: Vec<&str> = cols.iter().copied().filter(|c| !have.contains(c)).collect();
            if !missing.is_empty() {
                bail!("{table}.parquet has no column {}: not a PanDA run of this pilotsim", missing.join(", "));
            }
        }
        Ok(Self { run, jobs, brokerage })
    }

    /// Answer `q`: `Ok(Err(NotFound))` when its job, task or queue is not in the run.
    pub fn explain(&self, q: &Query) -> Result<std::result::Result<Explanation, NotFound>> {
        match (q.job, q.task, &q.queue) {
            (Some(_), Some(_), _) => bail!("ask about a job or a task, not both"),
            (Some(id), None, None) => Ok(self.job(id)?.map(Explanation::Job)),
            (None, Some(id), None) => Ok(self.task(id)?.map(Explanation::Task)),
            (job, task, Some(queue)) => Ok(self.queue(job, task, queue)?.map(Explanation::Queue)),
            (None, None, None) => bail!("nothing to explain: give --job ID, --task ID or --queue NAME"),
        }
    }

    fn job(&self, id: u32) -> Result<std::result::Result<JobExplanation, NotFound>> {
        let life = match self.job_life(id)? {
            Ok(l) => l,
            Err(nf) => return Ok(Err(nf)),
        };
        let placement = match life.brokerage_id {
            Some(b) => self.decisions_where(|r| r.brokerage_id == Some(b))?.into_iter().next(),
            None => None,
        };
        let production = placement.as_ref().is_none_or(|d| d.kind != "analysis");
        let task_brokerage = if production {
            self.decisions_where(|r| r.task == Some(life.jedi_task_id) && r.kind == Some("task"))?
        } else {
            Vec::new()
        };
        Ok(Ok(JobExplanation { run: self.run.clone(), job: life, placement, task_brokerage }))
    }

    fn job_life(&self, id: u32) -> Result<std::result::Result<JobLife, NotFound>> {
        let ids = u32s(&self.jobs, "job_id")?;
        let Some(i) = ids.iter().position(|&x| x == Some(id)) else {
            let (lo, hi) = (ids.iter().flatten().min(), ids.iter().flatten().max());
            let range = match (lo, hi) {
                (Some(lo), Some(hi)) => format!("job ids go from {lo} to {hi}"),
                _ => "it has no jobs".to_string(),
            };
            return Ok(Err(NotFound { message: format!("job {id} is not in this run ({range})") }));
        };
        let row = self.jobs.take(&[i]);
        let s = |c: &str| -> Result<Option<String>> { Ok(strs(&row, c)?.pop().flatten()) };
        let u = |c: &str| -> Result<Option<u32>> { Ok(u32s(&row, c)?.pop().flatten()) };
        let (Some(site_q), Some(task)) = (s("computingsite")?, u("jedi_task_id")?) else {
            let wms = s("wms")?.unwrap_or_else(|| "another WMS".into());
            return Ok(Err(NotFound {
                message: format!("job {id} is not a PanDA job (its WMS is {wms}): explain follows PanDA's brokerage"),
            }));
        };
        let panda_status = s("panda_status")?;
        let mut states = Vec::new();
        for (status, col) in STATUS_TIMES {
            if let Some(t) = f64s(&row, col)?.pop().flatten() {
                let status =
                    if status == "final" { panda_status.clone().unwrap_or("final".into()) } else { status.into() };
                states.push(StateTime { status, time_s: t });
            }
        }
        Ok(Ok(JobLife {
            job_id: id,
            jedi_task_id: task,
            attempt_nr: u("attempt_nr")?,
            computingsite: site_q,
            gshare: s("gshare")?,
            panda_status,
            brokerage_id: u("brokerage_id")?,
            recorded_pandaid: recorded_pandaids(&row).pop().flatten(),
            site: s("site")?,
            ce: s("ce")?,
            pilot_id: u("pilot_id")?,
            gpu_model: gpu_models(&row).pop().flatten(),
            states,
        }))
    }

    fn task(&self, id: u32) -> Result<std::result::Result<TaskExplanation, NotFound>> {
        let all = self.decisions_where(|r| r.task == Some(id))?;
        let jobs = self.jobs_of_task(id)?;
        if all.is_empty() && jobs.is_empty() {
            return Ok(Err(NotFound { message: format!("task {id} is not in this run ({})", self.task_range()?) }));
        }
        let (task_brokerage, decisions): (Vec<_>, Vec<_>) = all.into_iter().partition(|d| d.kind == "task");
        let kind = if decisions.iter().any(|d| d.kind == "analysis") {
            "analysis"
        } else if !task_brokerage.is_empty() || !decisions.is_empty() {
            "production"
        } else if self.task_is_replay(id)? {
            "replay"
        } else {
            "unknown"
        };
        let mut jobs_by_status = BTreeMap::new();
        let mut retries = 0;
        for j in &jobs {
            *jobs_by_status.entry(j.panda_status.clone().unwrap_or_default()).or_insert(0) += 1;
            retries += u64::from(j.attempt_nr.unwrap_or(1) > 1);
        }
        let names: BTreeSet<&str> = decisions
            .iter()
            .flat_map(|d| d.chosen.iter().map(|w| w.name.as_str()).chain(d.candidates.iter().map(|w| w.name.as_str())))
            .chain(decisions.iter().flat_map(|d| d.skipped.iter().map(|s| s.name.as_str())))
            .collect();
        let mut queues: Vec<QueueTally> = names.iter().map(|q| tally(q, &decisions)).collect();
        queues.sort_by(|a, b| b.jobs.cmp(&a.jobs).then(b.chosen.cmp(&a.chosen)).then(a.queue.cmp(&b.queue)));
        let pending = pending_groups(task_brokerage.iter().chain(&decisions));
        Ok(Ok(TaskExplanation {
            run: self.run.clone(),
            jedi_task_id: id,
            kind: kind.into(),
            gshare: jobs.iter().find_map(|j| j.gshare.clone()),
            jobs_by_status,
            retries,
            task_brokerage,
            queues,
            pending,
            decisions,
        }))
    }

    fn queue(
        &self,
        job: Option<u32>,
        task: Option<u32>,
        queue: &str,
    ) -> Result<std::result::Result<QueueExplanation, NotFound>> {
        let known = self.known_queues()?;
        if !known.contains(queue) {
            let list: Vec<&str> = known.iter().map(String::as_str).collect();
            return Ok(Err(NotFound {
                message: format!("{queue} is not a PanDA queue of this run (its PQs: {})", list.join(", ")),
            }));
        }
        let pq = |r: &RowRef| matches!(r.kind, Some("job" | "analysis"));
        let (scope, decisions, jobs_here) = match (job, task) {
            (Some(id), _) => {
                let life = match self.job_life(id)? {
                    Ok(l) => l,
                    Err(nf) => return Ok(Err(nf)),
                };
                let decisions = match life.brokerage_id {
                    Some(b) => self.decisions_where(|r| r.brokerage_id == Some(b) && pq(r))?,
                    None => Vec::new(),
                };
                let here = u64::from(life.computingsite == queue);
                (Scope::Job { job: Box::new(life) }, decisions, here)
            }
            (None, Some(id)) => {
                let decisions = self.decisions_where(|r| r.task == Some(id) && pq(r))?;
                let jobs = self.jobs_of_task(id)?;
                if decisions.is_empty() && jobs.is_empty() {
                    return Ok(Err(NotFound {
                        message: format!("task {id} is not in this run ({})", self.task_range()?),
                    }));
                }
                let here = jobs.iter().filter(|j| j.computingsite.as_deref() == Some(queue)).count() as u64;
                (Scope::Task { jedi_task_id: id }, decisions, here)
            }
            (None, None) => {
                let decisions = self.decisions_where(pq)?;
                let here = strs(&self.jobs, "computingsite")?.iter().filter(|s| s.as_deref() == Some(queue)).count();
                (Scope::Run, decisions, here as u64)
            }
        };
        let tally = tally(queue, &decisions);
        let verdicts = match scope {
            Scope::Run => Vec::new(),
            _ => decisions.iter().map(|d| verdict(queue, d)).collect(),
        };
        Ok(Ok(QueueExplanation { run: self.run.clone(), queue: queue.to_string(), scope, verdicts, tally, jobs_here }))
    }

    /// Every PQ the run's jobs or PQ brokerages name.
    fn known_queues(&self) -> Result<BTreeSet<String>> {
        let mut out: BTreeSet<String> = strs(&self.jobs, "computingsite")?.into_iter().flatten().collect();
        let kinds = strs(&self.brokerage, "kind")?;
        for (k, c) in kinds.iter().zip(strs(&self.brokerage, "candidate")?) {
            if matches!(k.as_deref(), Some("job" | "analysis"))
                && let Some(c) = c
            {
                out.insert(c);
            }
        }
        Ok(out)
    }

    fn task_range(&self) -> Result<String> {
        let mut ids: Vec<u32> = u32s(&self.brokerage, "jedi_task_id")?.into_iter().flatten().collect();
        ids.extend(u32s(&self.jobs, "jedi_task_id")?.into_iter().flatten());
        Ok(match (ids.iter().min(), ids.iter().max()) {
            (Some(lo), Some(hi)) => format!("task ids go from {lo} to {hi}"),
            _ => "it has no PanDA tasks".into(),
        })
    }

    /// The PanDA status, attempt, PQ and gshare of every job of task `id`.
    /// Task `id`'s jobs are replayed records (the synthetic task of a `panda.replay` stream).
    fn task_is_replay(&self, id: u32) -> Result<bool> {
        let tasks = u32s(&self.jobs, "jedi_task_id")?;
        Ok(tasks.iter().zip(recorded_pandaids(&self.jobs)).any(|(&t, p)| t == Some(id) && p.is_some()))
    }

    fn jobs_of_task(&self, id: u32) -> Result<Vec<TaskJob>> {
        let keep: Vec<usize> = (u32s(&self.jobs, "jedi_task_id")?.iter().enumerate())
            .filter_map(|(i, &t)| (t == Some(id)).then_some(i))
            .collect();
        let df = self.jobs.take(&keep);
        let status = strs(&df, "panda_status")?;
        let attempt = u32s(&df, "attempt_nr")?;
        let site = strs(&df, "computingsite")?;
        let gshare = strs(&df, "gshare")?;
        Ok(status
            .into_iter()
            .zip(attempt)
            .zip(site)
            .zip(gshare)
            .map(|(((panda_status, attempt_nr), computingsite), gshare)| TaskJob {
                panda_status,
                attempt_nr,
                computingsite,
                gshare,
            })
            .collect())
    }

    /// The decisions with a row for which `keep` holds (all their rows), in time and id order.
    fn decisions_where(&self, keep: impl Fn(&RowRef) -> bool) -> Result<Vec<DecisionView>> {
        let b = &self.brokerage;
        let ids = u32s(b, "brokerage_id")?;
        let tasks = u32s(b, "jedi_task_id")?;
        let kinds = strs(b, "kind")?;
        let mut wanted = BTreeSet::new();
        for i in 0..ids.len() {
            let r = RowRef { brokerage_id: ids[i], task: tasks[i], kind: kinds[i].as_deref() };
            if keep(&r)
                && let Some(id) = ids[i]
            {
                wanted.insert(id);
            }
        }
        let keep: Vec<usize> = (ids.iter().enumerate())
            .filter_map(|(i, id)| id.is_some_and(|id| wanted.contains(&id)).then_some(i))
            .collect();
        let rows = rows(&b.take(&keep))?;
        let mut by_id: BTreeMap<u32, Vec<Row>> = BTreeMap::new();
        for r in rows {
            by_id.entry(r.brokerage_id).or_default().push(r);
        }
        let mut out: Vec<DecisionView> = by_id.values().map(|rs| decision_view(rs)).collect();
        out.sort_by(|a, b| a.time_s.total_cmp(&b.time_s).then(a.brokerage_id.cmp(&b.brokerage_id)));
        Ok(out)
    }
}

/// The fields of a brokerage row a selection looks at.
struct RowRef<'a> {
    brokerage_id: Option<u32>,
    task: Option<u32>,
    kind: Option<&'a str>,
}

/// What a task summary needs of a job.
struct TaskJob {
    panda_status: Option<String>,
    attempt_nr: Option<u32>,
    computingsite: Option<String>,
    gshare: Option<String>,
}

/// Highest weight first (no weight last), then by name.
fn by_weight(a: &Weighed, b: &Weighed) -> std::cmp::Ordering {
    let w = |x: &Weighed| x.weight.unwrap_or(f64::NEG_INFINITY);
    w(b).total_cmp(&w(a)).then(a.name.cmp(&b.name))
}

/// The rows of one decision as a [`DecisionView`].
fn decision_view(rows: &[Row]) -> DecisionView {
    let first = &rows[0];
    let weighed = |verdict: &str| -> Vec<Weighed> {
        let mut v: Vec<Weighed> = rows
            .iter()
            .filter(|r| r.verdict == verdict)
            .map(|r| Weighed { name: r.candidate.clone(), weight: r.weight, jobs: r.jobs })
            .collect();
        v.sort_by(by_weight);
        v
    };
    let skipped = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.verdict == "skipped")
        .map(|(i, r)| Skip {
            name: r.candidate.clone(),
            stage: r.stage.clone(),
            reason: r.reason.clone(),
            temporary: r.temporary,
            weighed_later: rows[i + 1..].iter().any(|o| o.candidate == r.candidate && o.verdict != "skipped"),
        })
        .collect();
    DecisionView {
        brokerage_id: first.brokerage_id,
        time_s: first.time_s,
        kind: first.kind.clone(),
        jedi_task_id: first.jedi_task_id,
        jobs: rows.iter().map(|r| r.jobs).sum(),
        pending: rows.iter().find_map(|r| r.pending.clone()),
        chosen: weighed("chosen"),
        candidates: weighed("candidate"),
        skipped,
    }
}

/// How `queue` came out of decision `d`, with the skips a later loop overrode.
fn outcome(queue: &str, d: &DecisionView) -> (Outcome, Vec<Skip>) {
    let earlier: Vec<Skip> = d.skipped.iter().filter(|s| s.name == queue && s.weighed_later).cloned().collect();
    if let Some(w) = d.chosen.iter().find(|w| w.name == queue) {
        return (Outcome::Chosen { weight: w.weight, jobs: w.jobs }, earlier);
    }
    if let Some(w) = d.candidates.iter().find(|w| w.name == queue) {
        return (Outcome::Candidate { weight: w.weight }, earlier);
    }
    match d.skipped.iter().find(|s| s.name == queue && !s.weighed_later) {
        Some(s) => {
            let o = Outcome::Skipped { stage: s.stage.clone(), reason: s.reason.clone(), temporary: s.temporary };
            (o, Vec::new())
        }
        None => (Outcome::Absent, Vec::new()),
    }
}

fn verdict(queue: &str, d: &DecisionView) -> QueueVerdict {
    let (outcome, earlier_skips) = outcome(queue, d);
    let mut v = QueueVerdict {
        brokerage_id: d.brokerage_id,
        time_s: d.time_s,
        kind: d.kind.clone(),
        jedi_task_id: d.jedi_task_id,
        outcome,
        earlier_skips,
        sentence: String::new(),
    };
    v.sentence = text::sentence(queue, &v, d);
    v
}

/// How `queue` fared in `decisions`.
fn tally(queue: &str, decisions: &[DecisionView]) -> QueueTally {
    let mut t = QueueTally {
        queue: queue.to_string(),
        decisions: decisions.len() as u32,
        chosen: 0,
        jobs: 0,
        candidate: 0,
        skipped: Vec::new(),
        absent: 0,
        last_skip: None,
    };
    let mut stages: BTreeMap<String, u32> = BTreeMap::new();
    for d in decisions {
        match outcome(queue, d).0 {
            Outcome::Chosen { jobs, .. } => {
                t.chosen += 1;
                t.jobs += u64::from(jobs);
            }
            Outcome::Candidate { .. } => t.candidate += 1,
            Outcome::Skipped { stage, reason, temporary } => {
                *stages.entry(stage.clone()).or_default() += 1;
                let later = t.last_skip.as_ref().is_none_or(|l| d.time_s >= l.time_s);
                if later {
                    t.last_skip =
                        Some(LastSkip { brokerage_id: d.brokerage_id, time_s: d.time_s, stage, reason, temporary });
                }
            }
            Outcome::Absent => t.absent += 1,
        }
    }
    t.skipped = stages.into_iter().map(|(stage, count)| StageCount { stage, count }).collect();
    t.skipped.sort_by(|a, b| b.count.cmp(&a.count).then(a.stage.cmp(&b.stage)));
    t
}

/// The reason given to a PQ brokerage that weighed candidates but placed no job without
/// recording a pending reason: JEDI's site picker found no candidate it could draw, which for
/// production means each was at its running-jobs cap (`nRunningJobsCap ≤ nQueuedJobs`).
pub const NOTHING_PLACED: &str = "placed no job and recorded no pending reason: the site picker could draw no \
                                  candidate (each at its running-jobs cap, nRunningJobsCap <= nQueuedJobs)";

/// Whether a PQ brokerage placed nothing without saying why (see [`NOTHING_PLACED`]).
pub fn placed_nothing(d: &DecisionView) -> bool {
    d.kind != "task" && d.pending.is_none() && d.jobs == 0
}

/// Pending decisions (and those that placed nothing) grouped by (kind, reason), in order of
/// first occurrence.
fn pending_groups<'a>(decisions: impl Iterator<Item = &'a DecisionView>) -> Vec<PendingGroup> {
    let mut groups: Vec<PendingGroup> = Vec::new();
    let mut blockers: Vec<BTreeMap<String, BTreeMap<String, u32>>> = Vec::new();
    let mut all: Vec<&DecisionView> = decisions.filter(|d| d.pending.is_some() || placed_nothing(d)).collect();
    all.sort_by(|a, b| a.time_s.total_cmp(&b.time_s).then(a.brokerage_id.cmp(&b.brokerage_id)));
    for d in all {
        let reason = d.pending.clone().unwrap_or_else(|| NOTHING_PLACED.to_string());
        let i = match groups.iter().position(|g| g.kind == d.kind && g.reason == reason) {
            Some(i) => i,
            None => {
                groups.push(PendingGroup {
                    kind: d.kind.clone(),
                    recorded: d.pending.is_some(),
                    reason,
                    cycles: 0,
                    first_s: d.time_s,
                    last_s: d.time_s,
                    blocked_by: Vec::new(),
                });
                blockers.push(BTreeMap::new());
                groups.len() - 1
            }
        };
        let g = &mut groups[i];
        g.cycles += 1;
        g.last_s = d.time_s;
        let seen: BTreeSet<(&str, &str)> =
            d.skipped.iter().filter(|s| !s.weighed_later).map(|s| (s.stage.as_str(), s.name.as_str())).collect();
        for (stage, name) in seen {
            *blockers[i].entry(stage.to_string()).or_default().entry(name.to_string()).or_default() += 1;
        }
    }
    for (g, b) in groups.iter_mut().zip(blockers) {
        g.blocked_by = b
            .into_iter()
            .map(|(stage, names)| {
                let mut candidates: Vec<NameCount> =
                    names.into_iter().map(|(name, count)| NameCount { name, count }).collect();
                candidates.sort_by(|a, b| b.count.cmp(&a.count).then(a.name.cmp(&b.name)));
                Blocker { stage, candidates }
            })
            .collect();
    }
    groups
}
