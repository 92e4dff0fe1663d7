//! Replay of recorded PanDA jobs: each record of a `panda.replay` stream
//! (`scenario::panda::replay` reads and validates them) becomes one PanDA job whose brokerage
//! decision is already made, so that the model's queue times can be compared with the measured
//! ones (`summary.json` `wms.panda.replay`).
//!
//! - **Task**: one synthetic JEDI task per stream (status `replay`, never brokered; its
//!   `jediTaskID` follows every real task's), so that `explain` and the task counts see the jobs.
//! - **Creation**: at `start_s + (creationtime − the stream's earliest creationtime)`, in order of
//!   time, then stream, then file line, `defined` on the record's `computingsite` (or the stream's
//!   `queue`). `cancelled`/`closed` records are skipped (a load warning counts them).
//! - **Input**: read directly (`transfertype` `direct` or empty) → `activated` at once; otherwise
//!   `assigned` while `ninputdatafiles` files of `inputfilebytes` in all travel from `sourcesite`
//!   over its link to the PQ's site (the data path of `ddm`); a `sourcesite` that is not a
//!   grid site, or the PQ's own site, is local; a site without a link counts in `no_route`.
//! - **Run**: the recorded wall time on the recorded queue: `cpu_work` per core = wall time ×
//!   `cpu_power` of the PQ's first CE (in the site's order; a PQ whose CEs differ in power runs a
//!   job at its recorded length on that CE only). Wall time: [`JobRecord::wall_s`]. Cores:
//!   `corecount`. Memory is not recorded: the resource type is the non-HIMEM one (`ramCount`
//!   unset, as JEDI reads 0). Priority: [`JobRecord::priority`]. gshare: the stream's.
//! - **End**: `failed` records fail after their run, without retry (a PanDA retry is a record of
//!   its own); `finished` ones go through `transferring` to the stream's `nucleus` with
//!   `outputfilebytes`, or are `finished` at once when the stream names none.
//! - Harvester provisions pilots for them and the dispatcher hands them out like any activated
//!   job (gshare, priority, PandaID). copyArchive leaves them alone: a recorded job's fate is in
//!   its record (a reassigned PanDA job is a new record).
//!
//! Nothing here draws a random number.

use std::collections::BTreeMap;

use crate::engine::{SimDuration, SimTime};
use crate::ids::SiteId;
use crate::panda::timeouts::{JobStatus as PStatus, ProdSourceLabel};
use crate::scenario::Scenario;
use crate::scenario::panda::PandaConfig;
use crate::scenario::panda::replay::{JobRecord, Outcome};
use crate::wms::Ctx;
use crate::workload::{Job, JobStatus};

use super::db::Db;
use super::ddm::Ddm;
use super::setup::Statics;
use super::tables::{NO_DECISION, PJob, StatusTimes, Tables};
use super::view::prod::ResourceType;

/// The input a replayed job stages in before it is activated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageIn {
    /// The grid site of its `sourcesite`; `None` when that is not a grid site (read as local).
    pub from: Option<SiteId>,
    pub files: u32,
    pub bytes: u64,
}

/// One recorded job, resolved against the scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayJob {
    /// Index in `panda.replay`, and of its record in the stream's file.
    pub stream: u16,
    pub record: u32,
    /// The recorded PandaID.
    pub pandaid: u64,
    /// When its job is created.
    pub at: SimTime,
    /// Index in `panda.queues`.
    pub queue: u16,
    /// Recorded wall-clock run time, s.
    pub wall_s: f64,
    /// CPU work per core, HS06·s: `wall_s` × the PQ's first CE's `cpu_power`.
    pub cpu_work: f64,
    pub cores: u32,
    /// ATLAS resource type index (`ResourceType::index`).
    pub rt: u8,
    pub priority: i64,
    /// A `failed` record: the job fails after its run.
    pub fails: bool,
    /// `None`: the input is read directly.
    pub stage_in: Option<StageIn>,
    pub output_bytes: u64,
    /// The measured creation → start wait, s.
    pub recorded_queue_s: Option<f64>,
}

/// `cpu_power` of each PQ's first CE (1 for a PQ without CEs, which never runs a job).
pub fn queue_power(s: &Scenario, cfg: &PandaConfig) -> Vec<f64> {
    let powers: Vec<f64> = s.sites.iter().flat_map(|x| x.ces.iter().map(|c| c.cpu_power)).collect();
    cfg.queues
        .iter()
        .map(|q| super::view::harvester::queue_ces(s, q).first().and_then(|&c| powers.get(c).copied()).unwrap_or(1.0))
        .collect()
}

/// Bytes or files of a record's cell (absent, negative or not finite: 0).
fn amount(x: Option<f64>) -> f64 {
    x.filter(|v| v.is_finite() && *v > 0.0).map_or(0.0, f64::round)
}

/// The job of record `rec` (number `record` of stream `stream`) created at `at` on PQ `queue`
/// whose first CE has `cpu_power`; `site` maps a site name to its grid id. `None` for a record
/// that is not replayed (skipped, or invalid: validation reports those).
#[allow(clippy::too_many_arguments)]
pub fn job_of_record(
    rec: &JobRecord,
    stream: u16,
    record: u32,
    at: SimTime,
    queue: u16,
    cpu_power: f64,
    site: &dyn Fn(&str) -> Option<SiteId>,
) -> Option<ReplayJob> {
    let fails = match rec.outcome()? {
        Outcome::Finished => false,
        Outcome::Failed => true,
        Outcome::Skipped => return None,
    };
    let wall_s = rec.wall_s()?;
    let cores = rec.corecount.max(1);
    let (files, bytes) = (amount(rec.ninputdatafiles), amount(rec.inputfilebytes));
    let stage_in = (!rec.reads_directly() && files >= 1.0).then(|| StageIn {
        from: site(rec.sourcesite.trim()),
        files: files.min(f64::from(u32::MAX)) as u32,
        bytes: bytes as u64,
    });
    Some(ReplayJob {
        stream,
        record,
        pandaid: rec.pandaid,
        at,
        queue,
        wall_s,
        cpu_work: wall_s * cpu_power,
        cores,
        rt: ResourceType::of(cores, 0.0).index() as u8,
        priority: rec.priority(),
        fails,
        stage_in,
        output_bytes: amount(rec.outputfilebytes) as u64,
        recorded_queue_s: rec.queue_time_s(),
    })
}

/// Every replayed job of the scenario in creation order: by time, then stream, then file order.
pub fn replay_jobs(s: &Scenario, cfg: &PandaConfig) -> Vec<ReplayJob> {
    let power = queue_power(s, cfg);
    let queue = |name: &str| cfg.queues.iter().position(|q| q.name == name);
    let site = |name: &str| s.sites.iter().position(|x| x.name == name).map(|i| i as SiteId);
    let mut out = Vec::new();
    for (k, r) in cfg.replay.iter().enumerate() {
        let replayed = |x: &&JobRecord| matches!(x.outcome(), Some(Outcome::Finished | Outcome::Failed));
        let Some(first) = r.records.iter().filter(replayed).map(|x| x.creation_s).min() else { continue };
        for (n, rec) in r.records.iter().enumerate() {
            let Some(q) = queue(r.queue.as_deref().unwrap_or(&rec.computingsite)) else { continue };
            let at = SimTime::ZERO + SimDuration::from_secs_f64(r.start_s + (rec.creation_s - first) as f64);
            if let Some(j) = job_of_record(rec, k as u16, n as u32, at, q as u16, power[q], &site) {
                out.push(j);
            }
        }
    }
    out.sort_by_key(|j| (j.at, j.stream, j.record));
    out
}

/// Replayed job `r` (`rj`) of the synthetic task `task` is created: `defined` on its PQ, then
/// activated or staged in.
#[allow(clippy::too_many_arguments)]
pub fn arrived(st: &Statics, db: &mut Db, ddm: &mut Ddm, ctx: &mut dyn Ctx, rj: &ReplayJob, r: u32, task: u32) {
    let now = ctx.now();
    let k = st.first_replay + usize::from(rj.stream);
    let job = ctx.create_job(st.first_stream + k as u32, rj.cpu_work, rj.cores);
    if rj.fails {
        ctx.set_failing(job);
    }
    let i = db.tables.add(PJob {
        job,
        task,
        queue: rj.queue,
        leaf: st.shapes[k].leaf,
        status: PStatus::Defined,
        rt: rj.rt,
        label: ProdSourceLabel::User,
        attempt: 1,
        priority: rj.priority,
        cores: rj.cores,
        creation: now,
        state_change: now,
        times: StatusTimes { defined: Some(now), ..StatusTimes::default() },
        input_bytes: rj.stage_in.map_or(0, |s| s.bytes),
        input_files: rj.stage_in.map_or(0, |s| s.files),
        files_in_flight: 0,
        output_bytes: rj.output_bytes,
        output_transfer: None,
        decision: NO_DECISION,
        record: Some(r),
    });
    let site = st.queue_site[rj.queue as usize];
    match rj.stage_in {
        Some(StageIn { from: Some(from), files, bytes }) if from != site => {
            if ctx.network().link(from, site).is_some() {
                ddm.fetch_input(st, db, ctx, i, from, files, bytes / u64::from(files.max(1)));
            } else {
                ddm.counters.no_route += 1;
                db.tables.set_status(i, PStatus::Activated, now);
            }
        }
        _ => db.tables.set_status(i, PStatus::Activated, now),
    }
}

/// Percentiles of `v` (sorted here), `None` when empty.
fn pct(v: &mut [f64], ps: &[(&str, f64)]) -> serde_json::Value {
    v.sort_by(f64::total_cmp);
    let m: BTreeMap<&str, Option<f64>> = ps
        .iter()
        .map(|&(name, p)| {
            let y = crate::metrics::percentile(v, p);
            (name, y.is_finite().then_some(y))
        })
        .collect();
    serde_json::json!(m)
}

/// `summary.json` `wms.panda.replay`, per stream: records, skipped, jobs replayed and how they
/// ended, and recorded vs simulated `job_queuetime` (creation → start, as the records measure it;
/// p50, p95) and wall time (p50). The simulated activated → running wait is given too: it differs
/// from the queue time by the stage-in.
pub fn summary(cfg: &PandaConfig, tables: &Tables, replay: &[ReplayJob], jobs: &[Job]) -> serde_json::Value {
    const P50_95: &[(&str, f64)] = &[("p50", 0.5), ("p95", 0.95)];
    const P50: &[(&str, f64)] = &[("p50", 0.5)];
    let mut out = serde_json::Map::new();
    for (k, r) in cfg.replay.iter().enumerate() {
        let mine: Vec<&ReplayJob> = replay.iter().filter(|j| usize::from(j.stream) == k).collect();
        let skipped = r.records.iter().filter(|x| x.outcome() == Some(Outcome::Skipped)).count();
        let (mut rec_q, mut rec_w): (Vec<f64>, Vec<f64>) =
            (mine.iter().filter_map(|j| j.recorded_queue_s).collect(), mine.iter().map(|j| j.wall_s).collect());
        let (mut sim_q, mut sim_a, mut sim_w) = (Vec::new(), Vec::new(), Vec::new());
        let mut status: BTreeMap<&str, u64> = BTreeMap::new();
        for x in tables.jobs.iter().filter(|x| x.record.is_some_and(|i| usize::from(replay[i as usize].stream) == k)) {
            *status.entry(x.status.as_str()).or_default() += 1;
            if let (Some(d), Some(run)) = (x.times.defined, x.times.running) {
                sim_q.push((run - d).as_secs_f64());
            }
            if let (Some(a), Some(run)) = (x.times.activated, x.times.running) {
                sim_a.push((run - a).as_secs_f64());
            }
            let wj = &jobs[crate::ids::job_index(x.job)];
            if let (Some(m), Some(e)) = (wj.matched(), wj.ended()) {
                sim_w.push((e - m).as_secs_f64());
            }
        }
        out.insert(
            r.name.clone(),
            serde_json::json!({
                "records": r.records.len(),
                "skipped": skipped,
                "replayed": mine.len(),
                "created": status.values().sum::<u64>(),
                "started": sim_q.len(),
                "jobs": status,
                "job_queuetime_s": {"recorded": pct(&mut rec_q, P50_95), "simulated": pct(&mut sim_q, P50_95)},
                "activated_to_running_s": pct(&mut sim_a, P50_95),
                "walltime_s": {"recorded": pct(&mut rec_w, P50), "simulated": pct(&mut sim_w, P50)},
            }),
        );
    }
    serde_json::Value::Object(out)
}

/// A replayed job ends as its record did: a failed record never finishes, and a finished one
/// fails only when the batch system cut its run at the pilot's walltime (the world has it
/// Failed; nothing else fails a replayed job, which copyArchive leaves alone).
pub fn check_invariants(tables: &Tables, replay: &[ReplayJob], jobs: &[Job]) -> Vec<String> {
    let mut bad = Vec::new();
    for x in &tables.jobs {
        let Some(r) = x.record else { continue };
        let rj = &replay[r as usize];
        let world = jobs[crate::ids::job_index(x.job)].status;
        let wrong = match x.status {
            PStatus::Finished | PStatus::Transferring => rj.fails,
            PStatus::Failed => !rj.fails && world != JobStatus::Failed,
            PStatus::Closed | PStatus::Cancelled => true,
            _ => false,
        };
        if wrong {
            let record = if rj.fails { "failed" } else { "finished" };
            bad.push(format!(
                "replayed job {} (PandaID {}) is {} but its record {record}",
                x.job,
                rj.pandaid,
                x.status.as_str()
            ));
        }
    }
    bad
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::panda::replay::{parse_time, read_csv};

    fn root() -> std::path::PathBuf {
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }

    fn records() -> Vec<JobRecord> {
        read_csv(&std::fs::read_to_string(root().join("data/panda_cgsim/jan_100_BNL.csv")).unwrap()).unwrap()
    }

    fn no_site(_: &str) -> Option<SiteId> {
        None
    }

    #[test]
    fn the_first_bnl_record_becomes_a_306_s_single_core_job() {
        let r = &records()[0];
        let at = SimTime::from_secs(100);
        let j = job_of_record(r, 0, 0, at, 2, 10.0, &no_site).unwrap();
        assert_eq!((j.pandaid, j.at, j.queue, j.cores), (6_486_070_333, at, 2, 1));
        assert_eq!((j.wall_s, j.cpu_work), (306.0, 3060.0), "306 s on a CE of cpu_power 10");
        assert_eq!((j.rt, j.priority, j.fails), (ResourceType::Score.index() as u8, 729, false));
        assert_eq!((j.stage_in, j.output_bytes, j.recorded_queue_s), (None, 278_821, Some(844.0)));
    }

    #[test]
    fn eight_cores_failures_skips_and_stage_in_come_from_the_record() {
        let recs = records();
        // Record 4: 8 cores, 225 106 s of wall time (job_walltime 1 800 848 core-seconds).
        let j = job_of_record(&recs[3], 0, 3, SimTime::ZERO, 0, 12.5, &no_site).unwrap();
        assert_eq!((j.cores, j.wall_s, j.cpu_work), (8, 225_106.0, 225_106.0 * 12.5));
        assert_eq!(j.rt, ResourceType::Mcore.index() as u8);
        let mut r = recs[0].clone();
        r.jobstatus = "failed".into();
        assert!(job_of_record(&r, 0, 0, SimTime::ZERO, 0, 10.0, &no_site).unwrap().fails);
        r.jobstatus = "cancelled".into();
        assert_eq!(job_of_record(&r, 0, 0, SimTime::ZERO, 0, 10.0, &no_site), None, "skipped");
        // Staged in: 10 files, 36 362 410 102 bytes, from a grid site or (unknown) as local.
        r.jobstatus = "finished".into();
        (r.transfertype, r.sourcesite) = ("copy".into(), "AGLT2".into());
        let site = |n: &str| (n == "AGLT2").then_some(1);
        let s = job_of_record(&r, 0, 0, SimTime::ZERO, 0, 10.0, &site).unwrap().stage_in;
        assert_eq!(s, Some(StageIn { from: Some(1), files: 10, bytes: 36_362_410_102 }));
        r.sourcesite = "CERN-PROD".into();
        let s = job_of_record(&r, 0, 0, SimTime::ZERO, 0, 10.0, &site).unwrap().stage_in;
        assert_eq!(s.and_then(|s| s.from), None);
    }

    #[test]
    fn a_stream_replays_in_creation_order_from_its_start() {
        let mut s = crate::scenario::load_file(&root().join("tests/data/panda_example.ron")).unwrap().scenario;
        let p = s.panda.as_mut().unwrap();
        p.replay[0].start_s = 3600.0;
        let jobs = replay_jobs(&s, s.panda.as_ref().unwrap());
        assert_eq!(jobs.len(), 100);
        assert!(jobs.windows(2).all(|w| w[0].at <= w[1].at), "creation order");
        // The earliest record (2024-12-31 13:12:48) at start_s; the first row 20 days later.
        assert_eq!(jobs[0].at, SimTime::from_secs(3600));
        let first = jobs.iter().find(|j| j.record == 0).unwrap();
        let offset = parse_time("2025-01-20 18:10:40").unwrap() - parse_time("2024-12-31 13:12:48").unwrap();
        assert_eq!(first.at, SimTime::from_secs(3600 + offset as u64));
        // Queue BNL (every CE of the site; the first has cpu_power 10).
        assert!(jobs.iter().all(|j| j.queue == 0));
        assert_eq!(first.cpu_work, 3060.0);
    }
}
