//! What the PanDA WMS adds to the outputs (`jobs.parquet` and `pilots.parquet` columns) and its
//! own invariants, checked after every test run.

use crate::engine::SimTime;
use crate::grid::Grid;
use crate::metrics::{ExtraColumn, ExtraValues};
use crate::panda::timeouts::JobStatus as PStatus;
use crate::workload::{Job, JobStatus};

use super::copy_archive::CopyArchiveCounters;
use super::db::Db;
use super::ddm::DataCounters;
use super::harvester::HarvesterCounters;
use super::replay::ReplayJob;
use super::setup::Statics;
use super::tables::TaskStatus;

/// What the outputs read of the PanDA WMS: the static facts, the shared state, the replayed
/// jobs and each agent's counters.
pub struct Parts<'a> {
    pub st: &'a Statics,
    pub db: &'a Db,
    pub replay: &'a [ReplayJob],
    pub data: &'a DataCounters,
    pub copy_archive: &'a CopyArchiveCounters,
    pub harvester: &'a HarvesterCounters,
}

fn secs(t: Option<SimTime>) -> Option<f64> {
    t.map(SimTime::as_secs_f64)
}

/// `jobs.parquet` columns of PanDA's jobs (null for others'): `panda_status`, `jedi_task_id`,
/// `computingsite` (the PQ), `gshare`, `attempt_nr`, `brokerage_id` (the decision in
/// `brokerage.parquet`; null for a replayed job, which no brokerage placed), `recorded_pandaid`
/// (a replayed job's PandaID in its records, to join them; null for JEDI's jobs), and the time of
/// each status (`defined_s` … `final_s`).
pub fn job_columns(w: &Parts, jobs: &[Job]) -> Vec<ExtraColumn> {
    let t = &w.db.tables;
    let of = |j: &Job| t.of_job(j.id).map(|i| &t.jobs[i as usize]);
    let str_col = |name: &str, f: &dyn Fn(&super::tables::PJob) -> String| ExtraColumn {
        name: name.into(),
        values: ExtraValues::Str(jobs.iter().map(|j| of(j).map(f)).collect()),
    };
    let u32_col = |name: &str, f: &dyn Fn(&super::tables::PJob) -> u32| ExtraColumn {
        name: name.into(),
        values: ExtraValues::U32(jobs.iter().map(|j| of(j).map(f)).collect()),
    };
    let time_col = |name: &str, f: &dyn Fn(&super::tables::PJob) -> Option<SimTime>| ExtraColumn {
        name: name.into(),
        values: ExtraValues::F64(jobs.iter().map(|j| of(j).and_then(|x| secs(f(x)))).collect()),
    };
    vec![
        str_col("panda_status", &|x| x.status.as_str().to_string()),
        u32_col("jedi_task_id", &|x| x.task + 1),
        str_col("computingsite", &|x| w.st.cfg.queues[x.queue as usize].name.clone()),
        str_col("gshare", &|x| w.st.leaves[x.leaf as usize].name.clone()),
        u32_col("attempt_nr", &|x| u32::from(x.attempt)),
        ExtraColumn {
            name: "brokerage_id".into(),
            values: ExtraValues::U32(
                jobs.iter().map(|j| of(j).map(|x| x.decision).filter(|&d| d != super::tables::NO_DECISION)).collect(),
            ),
        },
        ExtraColumn {
            name: "recorded_pandaid".into(),
            values: ExtraValues::U64(
                jobs.iter().map(|j| of(j).and_then(|x| x.record).map(|r| w.replay[r as usize].pandaid)).collect(),
            ),
        },
        time_col("defined_s", &|x| x.times.defined),
        time_col("assigned_s", &|x| x.times.assigned),
        time_col("activated_s", &|x| x.times.activated),
        time_col("starting_s", &|x| x.times.starting),
        time_col("running_s", &|x| x.times.running),
        time_col("holding_s", &|x| x.times.holding),
        time_col("transferring_s", &|x| x.times.transferring),
        time_col("final_s", &|x| x.times.end),
    ]
}

/// `pilots.parquet` column of PanDA's pilots: `computingsite`, the PQ Harvester submitted it for.
pub fn pilot_columns(w: &Parts, grid: &Grid) -> Vec<ExtraColumn> {
    let values = grid
        .pilots
        .iter()
        .map(|p| w.db.workers.queue_of(p.id).map(|q| w.st.cfg.queues[usize::from(q)].name.clone()))
        .collect();
    vec![ExtraColumn { name: "computingsite".into(), values: ExtraValues::Str(values) }]
}

/// The PanDA job table agrees with the world's: every PanDA job is in a status its world job
/// allows (queued ⇔ Waiting, starting/running ⇔ Running — starting with a push worker not yet
/// started ⇔ Waiting —, holding ⇔ Done or Failed (its payload ended and the Adder has not run
/// yet), transferring/finished ⇔ Done, failed ⇔ Failed or Done (transfer timeout), or Cancelled
/// if it never ran (its push worker ended), closed ⇔ Cancelled), the kept counts equal a
/// recount, no task has more final chunks than jobs, and replayed jobs end as their records did.
pub fn check_invariants(w: &Parts, jobs: &[Job]) -> Vec<String> {
    let mut bad = w.db.tables.check();
    bad.extend(super::replay::check_invariants(&w.db.tables, w.replay, jobs));
    for (i, x) in (0u32..).zip(&w.db.tables.jobs) {
        let world = jobs[crate::ids::job_index(x.job)].status;
        let ok = match x.status {
            PStatus::Defined | PStatus::Assigned | PStatus::Activated => world == JobStatus::Waiting,
            // A push worker's job waits in the world until its pilot starts (`harvester`).
            PStatus::Sent | PStatus::Starting if w.db.workers.worker_of(i).is_some() => world == JobStatus::Waiting,
            PStatus::Sent | PStatus::Starting | PStatus::Running => world == JobStatus::Running,
            // The pilot's final report put it in `holding`; the Adder's next cycle decides.
            PStatus::Holding => matches!(world, JobStatus::Done | JobStatus::Failed),
            PStatus::Transferring | PStatus::Finished => world == JobStatus::Done,
            // Failed without running: its push worker ended first (`harvester`).
            PStatus::Failed if x.times.running.is_none() => world == JobStatus::Cancelled,
            PStatus::Failed => matches!(world, JobStatus::Failed | JobStatus::Done),
            PStatus::Closed => world == JobStatus::Cancelled,
            _ => false,
        };
        if !ok {
            bad.push(format!("PanDA job {} is {} but the world has it {}", x.job, x.status.as_str(), world.as_str()));
        }
    }
    for (i, t) in w.db.tables.tasks.iter().enumerate() {
        if t.finished + t.failed > t.n_jobs {
            bad.push(format!("task {} has {} final chunks of {}", i + 1, t.finished + t.failed, t.n_jobs));
        }
    }
    bad
}

/// `brokerage.parquet`: one row per candidate of every brokerage decision (module `record`):
/// `brokerage_id`, `time_s`, `kind` (task/job/analysis), `jedi_task_id`, `candidate` (nucleus or
/// PQ), `verdict` (chosen/candidate/skipped, `none` for a decision without candidates), `stage`
/// (the filter), `reason` (PanDA's message), `temporary`, `weight`, `jobs` (jobs it received),
/// `pending` (why the decision chose nothing).
pub fn brokerage_table(w: &Parts) -> crate::metrics::Table {
    use super::record::{DecisionKind, Row, Verdict};
    let r = &w.db.record;
    let text = |i: u32| r.strings.get(i);
    // A decision that looked at no candidate (a throttled analysis task, a task-level error)
    // still gets one row, with an empty candidate, so that its pending reason is in the table.
    let mut placeholders: Vec<Row> = Vec::new();
    let mut with_rows = vec![false; r.decisions.len()];
    for row in &r.rows {
        with_rows[row.decision as usize] = true;
    }
    for (d, has) in with_rows.iter().enumerate() {
        if !has {
            placeholders.push(Row {
                decision: d as u32,
                candidate: 0,
                stage: 0,
                reason: 0,
                jobs: 0,
                weight: 0.0,
                weighed: false,
                temporary: false,
                verdict: Verdict::Skipped,
            });
        }
    }
    let mut rows: Vec<&Row> = r.rows.iter().chain(&placeholders).collect();
    rows.sort_by_key(|x| x.decision); // stable: a decision's rows keep their order
    let dec = |row: &Row| &r.decisions[row.decision as usize];
    // The string columns are codes into the record's texts, or into a short list of their own.
    let texts: std::sync::Arc<[String]> = r.strings.texts().into();
    let coded = |f: &dyn Fn(&Row) -> Option<u32>| ExtraValues::Coded {
        texts: texts.clone(),
        codes: rows.iter().map(|x| f(x)).collect(),
    };
    let own = |list: &[&str], f: &dyn Fn(&Row) -> u32| ExtraValues::Coded {
        texts: list.iter().map(|t| t.to_string()).collect::<Vec<_>>().into(),
        codes: rows.iter().map(|x| Some(f(x))).collect(),
    };
    let col = |name: &str, values| ExtraColumn { name: name.into(), values };
    const KINDS: [DecisionKind; 3] = [DecisionKind::Task, DecisionKind::Job, DecisionKind::Analysis];
    const VERDICTS: [&str; 4] = ["chosen", "candidate", "skipped", "none"];
    let kind = |x: &Row| KINDS.iter().position(|&k| k == dec(x).kind).unwrap_or(0) as u32;
    let verdict = |x: &Row| {
        let v = if text(x.candidate).is_empty() { "none" } else { x.verdict.as_str() };
        VERDICTS.iter().position(|&s| s == v).unwrap_or(0) as u32
    };
    let columns = vec![
        col("brokerage_id", ExtraValues::U32(rows.iter().map(|x| Some(x.decision)).collect())),
        col("time_s", ExtraValues::F64(rows.iter().map(|x| Some(dec(x).time.as_secs_f64())).collect())),
        col("kind", own(&KINDS.map(DecisionKind::as_str), &kind)),
        col("jedi_task_id", ExtraValues::U32(rows.iter().map(|x| Some(dec(x).task + 1)).collect())),
        col("candidate", coded(&|x| Some(x.candidate))),
        col("verdict", own(&VERDICTS, &verdict)),
        col("stage", coded(&|x| Some(x.stage))),
        col("reason", coded(&|x| Some(x.reason))),
        col("temporary", ExtraValues::Bool(rows.iter().map(|x| Some(x.temporary)).collect())),
        col("weight", ExtraValues::F64(rows.iter().map(|x| x.weight()).collect())),
        col("jobs", ExtraValues::U32(rows.iter().map(|x| Some(x.jobs)).collect())),
        col("pending", coded(&|x| dec(x).pending)),
    ];
    crate::metrics::Table { name: "brokerage".into(), columns }
}

/// `{n, mean, p50, p95}` of some durations, s (null statistics when there are none).
fn duration_stats(v: Vec<f64>) -> serde_json::Value {
    serde_json::to_value(crate::metrics::summary::WaitStats::of(v)).unwrap_or_default()
}

/// Per gshare leaf, what a physicist waits for: a task's turnaround (arrival → its last job
/// final; the tasks done only, so read it with `tasks_open`) and a finished job's turnaround
/// (`creationTime` → finished, output at the nucleus included). Unlike the world's wait time
/// (job creation → start), these include the time a task waits for brokerage and the time its
/// outputs queue on the links, the two costs `NQUEUED_SAT_CAP` trades against each other.
fn turnarounds(w: &Parts) -> std::collections::BTreeMap<String, serde_json::Value> {
    let t = &w.db.tables;
    let leaves = &w.st.leaves;
    let n = leaves.len();
    let (mut task_times, mut open, mut job_times) = (vec![Vec::new(); n], vec![0u64; n], vec![Vec::new(); n]);
    // A task's end is its last final job's end: collect it per task first.
    let mut task_end: Vec<Option<SimTime>> = vec![None; t.tasks.len()];
    for j in &t.jobs {
        let Some(end) = j.times.end else { continue };
        let e = &mut task_end[j.task as usize];
        *e = Some(e.map_or(end, |x| x.max(end)));
        if j.status == PStatus::Finished {
            if let Some(v) = job_times.get_mut(usize::from(j.leaf)) {
                v.push((end - j.creation).as_secs_f64());
            }
        }
    }
    for (task, end) in t.tasks.iter().zip(&task_end) {
        // A replay stream's synthetic task spans its records, not a task's life.
        if usize::from(task.stream) >= w.st.first_replay {
            continue;
        }
        let Some(leaf) = w.st.shapes.get(usize::from(task.stream)).map(|s| usize::from(s.leaf)) else { continue };
        match (task.status, end) {
            (TaskStatus::Done, Some(end)) => task_times[leaf].push((*end - task.arrived).as_secs_f64()),
            (TaskStatus::Done, None) => task_times[leaf].push(0.0),
            (TaskStatus::Registered | TaskStatus::Replay, _) => {} // not arrived yet
            _ => open[leaf] += 1,
        }
    }
    leaves
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let v = serde_json::json!({
                "tasks_done": task_times[i].len(),
                "tasks_open": open[i],
                "task_turnaround_s": duration_stats(std::mem::take(&mut task_times[i])),
                "job_turnaround_s": duration_stats(std::mem::take(&mut job_times[i])),
            });
            (l.name.clone(), v)
        })
        .collect()
}

/// PanDA's section of `summary.json`: tasks, jobs by PanDA status, per-PQ waits (activated →
/// running), and what brokerage, the data path, copyArchive and Harvester did; with replay
/// streams, `replay`: per stream, recorded vs simulated queue and wall times (`replay::summary`).
pub fn summary(w: &Parts, jobs: &[Job]) -> serde_json::Value {
    use std::collections::BTreeMap;
    let t = &w.db.tables;
    let mut by_status: BTreeMap<&str, u64> = BTreeMap::new();
    for j in &t.jobs {
        *by_status.entry(j.status.as_str()).or_default() += 1;
    }
    let mut tasks: BTreeMap<&str, u64> = BTreeMap::new();
    // Tasks that had not arrived by the end, per stream name (why a stream created no job).
    let mut unarrived: BTreeMap<&str, u64> = BTreeMap::new();
    for x in &t.tasks {
        *tasks.entry(x.status.as_str()).or_default() += 1;
        if x.status == TaskStatus::Registered
            && let Some(shape) = w.st.shapes.get(usize::from(x.stream))
        {
            *unarrived.entry(shape.name.as_str()).or_default() += 1;
        }
    }
    let mut waits: Vec<Vec<f64>> = vec![Vec::new(); w.st.cfg.queues.len()];
    for j in &t.jobs {
        if let (Some(a), Some(r)) = (j.times.activated, j.times.running) {
            waits[j.queue as usize].push((r - a).as_secs_f64());
        }
    }
    let queues: BTreeMap<String, serde_json::Value> = w
        .st
        .cfg
        .queues
        .iter()
        .zip(waits)
        .enumerate()
        .map(|(q, (pq, mut v))| {
            v.sort_by(f64::total_cmp);
            let p = |x: f64| {
                let y = crate::metrics::percentile(&v, x);
                y.is_finite().then_some(y)
            };
            let c = t.counts[q];
            (
                pq.name.clone(),
                serde_json::json!({
                    "jobs_started": v.len(),
                    "wait_activated_to_running_s": {"p50": p(0.5), "p95": p(0.95)},
                    "at_end": {"defined": c.defined, "assigned": c.assigned, "activated": c.activated,
                               "running": c.running + c.starting, "transferring": c.transferring},
                    "workers_at_end": {"queued": w.db.workers.of_queue(q).queued, "running": w.db.workers.of_queue(q).running},
                }),
            )
        })
        .collect();
    let gshares = turnarounds(w);
    let pending = w.db.record.decisions.iter().filter(|d| d.pending.is_some()).count();
    // Why decisions chose nothing, by message with its numbers masked (`#`), per kind.
    // The same per stream (by the stream's name), for the warnings of a stream that never ran.
    let mut why: BTreeMap<String, u64> = BTreeMap::new();
    let mut why_by_stream: BTreeMap<&str, BTreeMap<String, u64>> = BTreeMap::new();
    for d in &w.db.record.decisions {
        if let Some(r) = w.db.record.pending(d) {
            let masked: String = r.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).collect();
            let reason = format!("{}: {masked}", d.kind.as_str());
            let stream = t.tasks.get(d.task as usize).and_then(|task| w.st.shapes.get(usize::from(task.stream)));
            if let Some(shape) = stream {
                *why_by_stream.entry(shape.name.as_str()).or_default().entry(reason.clone()).or_default() += 1;
            }
            *why.entry(reason).or_default() += 1;
        }
    }
    let mut out = serde_json::json!({
        "tasks": tasks,
        "tasks_not_arrived_by_stream": unarrived,
        "jobs": by_status,
        "gshares": gshares,
        "queues": queues,
        "brokerage": {"decisions": w.db.record.decisions.len(), "pending": pending, "pending_by_reason": why,
                      "pending_by_stream": why_by_stream},
        "data": {"input_files_moved": w.data.input_files_moved, "output_files_moved": w.data.output_files_moved,
                 "no_route": w.data.no_route, "output_refused": w.data.output_refused},
        "copy_archive": {"cycles": w.copy_archive.cycles, "reassigned": w.copy_archive.reassigned,
                         "fast_rebrokered": w.copy_archive.fast_rebrokered, "killed": w.copy_archive.killed,
                         "transfer_timeouts": w.copy_archive.transfer_timeouts, "kill_commands": w.copy_archive.kill_commands,
                         "by_rule": w.copy_archive.by_rule},
        "harvester": {"cycles": w.harvester.cycles, "submitted": w.harvester.submitted,
                      "refused": w.harvester.refused, "unplaced": w.harvester.unplaced,
                      "no_job": w.harvester.no_job, "lost_jobs": w.harvester.lost_jobs},
    });
    if !w.st.cfg.replay.is_empty() {
        out["replay"] = super::replay::summary(&w.st.cfg, &w.db.tables, w.replay, jobs);
    }
    out
}
