//! Writing the outputs of one run into its directory (DESIGN.md, "Outputs of one run"):
//! `summary.json`, `timeseries.parquet`, `jobs.parquet`, `pilots.parquet` and the charts,
//! each written atomically; a PanDA run also gets `queue_waits`, `queue_lengths` and (when it
//! moved data) `link_backlog` charts, a run with pilot factories `factory_throughput`,
//! `factory_waits` and (with its `factory_cycles` table) `factory_standby`, a grid with GPUs
//! `gpu_timeseries.parquet` and `gpu_usage`.

use std::path::Path;

use anyhow::{Context, Result};

use super::charts::{self, EntityShare, Line, PilotsOverTime, Rendered, ShareConvergence, WaitTimes};
use super::panda_charts::{self, CountsOverTime, MAX_BOXES, QueueWaits, top_series};
use super::{factory_charts, gpu_charts};
use crate::metrics::recorder::Level;
use crate::metrics::summary::{self, Summary};
use crate::metrics::{ExtraValues, RunData, tables, write};

/// Write a rendered chart as `<stem>.png` and `<stem>.svg` in `dir`, atomically.
pub fn write_chart(dir: &Path, stem: &str, r: Rendered) -> Result<()> {
    write::atomic(&dir.join(format!("{stem}.png")), &r.png)?;
    write::atomic(&dir.join(format!("{stem}.svg")), r.svg.as_bytes())?;
    Ok(())
}

/// Below this part of the run's peak of running jobs, a sample's instantaneous shares are
/// ratios of a handful of jobs (the first pilots, the last jobs): the share chart leaves a gap
/// there rather than jump between 0 and 100 %.
pub const SHARE_MIN_RUNNING: f64 = 0.05;

/// The share-convergence chart of a run: running share of each group over time, with gaps
/// where fewer than [`SHARE_MIN_RUNNING`] of the peak's jobs ran.
pub fn share_chart(run: &RunData) -> ShareConvergence {
    let r = &*run.recorder;
    let groups: Vec<usize> = (0..r.entities.len()).filter(|&e| r.entities[e].level == Level::Group).collect();
    let running: Vec<u64> = r.samples.iter().map(|s| groups.iter().map(|&e| u64::from(s.running[e])).sum()).collect();
    let entities = groups
        .iter()
        .map(|&e| EntityShare {
            label: r.entities[e].name.clone(),
            target: r.entities[e].target_share,
            points: gapped(r.samples.iter().map(|s| (s.time.as_hours_f64(), s.share[e])), &running),
        })
        .collect();
    ShareConvergence {
        title: format!("Share convergence — {}", run.meta.label()),
        entities,
        warmup_hours: run.scenario.output.warmup_s / 3600.0,
        end_hours: run.meta.end.as_hours_f64(),
        // Each entity in its system's unit: DIRAC's groups count jobs, PanDA's gshares cores (its
        // targets are of HS06, cores × corepower: the same where every queue's corepower is equal).
        y_label: match (run.wms_names.iter().any(|w| w == "panda"), run.wms_names.iter().any(|w| w == "dirac")) {
            (true, true) => "running share (DIRAC: of jobs, PanDA: of cores; gshare targets are of HS06)".into(),
            (true, false) => "share of running cores (gshare targets are of HS06)".into(),
            _ => "share of running jobs".into(),
        },
    }
}

/// The share points with NaN (a gap) where the running jobs (`running`, one per point) were
/// fewer than [`SHARE_MIN_RUNNING`] of their peak.
fn gapped(points: impl Iterator<Item = (f64, f64)>, running: &[u64]) -> Vec<(f64, f64)> {
    let floor = running.iter().copied().max().unwrap_or(0) as f64 * SHARE_MIN_RUNNING;
    points.zip(running).map(|((t, share), &n)| (t, if (n as f64) < floor { f64::NAN } else { share })).collect()
}

fn pilots_chart(run: &RunData) -> PilotsOverTime {
    let s = &run.recorder.samples;
    let line = |label: &str, f: &dyn Fn(&crate::metrics::recorder::Sample) -> u32| Line {
        label: label.into(),
        points: s.iter().map(|x| (x.time.as_hours_f64(), f64::from(f(x)))).collect(),
    };
    let mut lines = vec![
        line("waiting", &|x| x.pilots.waiting),
        line("running", &|x| x.pilots.running),
        line("aborted (cumulative)", &|x| x.pilots.aborted),
    ];
    // The backlog against the CEs' caps, when every CE has one.
    let caps: Option<u64> = run.grid.ces.iter().map(|c| c.max_waiting_jobs.map(u64::from)).sum();
    if let (Some(cap), Some(first), Some(last)) = (caps, s.first(), s.last()) {
        lines.push(Line {
            label: "waiting cap (Σ MaxWaitingJobs)".into(),
            points: vec![(first.time.as_hours_f64(), cap as f64), (last.time.as_hours_f64(), cap as f64)],
        });
    }
    PilotsOverTime { title: format!("Pilots — {}", run.meta.label()), end_hours: run.meta.end.as_hours_f64(), lines }
}

fn wait_chart(run: &RunData) -> WaitTimes {
    WaitTimes {
        title: format!("Waiting time to match — {}", run.meta.label()),
        groups: group_waits(run),
        styles: Vec::new(),
    }
}

/// Waits from submission to match (seconds) per share group, groups in stream order: what
/// the wait chart draws (and a comparison overlays).
pub fn group_waits(run: &RunData) -> Vec<(String, Vec<f64>)> {
    let mut groups: Vec<(String, Vec<f64>)> = Vec::new();
    for w in run.streams {
        if !groups.iter().any(|(g, _)| *g == w.group) {
            groups.push((w.group.clone(), Vec::new()));
        }
    }
    for j in run.jobs {
        if let Some(wait) = j.wait_s() {
            let g = &run.streams[j.stream as usize].group;
            groups.iter_mut().find(|(n, _)| n == g).expect("listed").1.push(wait);
        }
    }
    groups
}

/// Users in the per-user wait chart: those with most matched jobs (more lines would not read).
pub const MAX_USERS: usize = 8;

/// Wait from submission to match per user (`summary.json` `users`; the [`MAX_USERS`] with most
/// matched jobs); none when the run has no users.
fn user_wait_chart(run: &RunData) -> Option<WaitTimes> {
    let mut users = crate::metrics::users::waits(run);
    if users.is_empty() {
        return None;
    }
    let what = if users.len() > MAX_USERS {
        let n = users.len();
        users.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
        users.truncate(MAX_USERS);
        users.sort_by(|a, b| a.0.cmp(&b.0));
        format!("the {MAX_USERS} of {n} users with most jobs")
    } else {
        "per user".to_string()
    };
    Some(WaitTimes {
        title: format!("Waiting time to match, {what} — {}", run.meta.label()),
        groups: users,
        styles: Vec::new(),
    })
}

/// The PanDA columns of `jobs.parquet` (looked up by name), when the run has PanDA jobs.
struct PandaJobs<'a> {
    queue: &'a [Option<String>],
    times: Vec<(&'a str, &'a [Option<f64>])>,
}

impl<'a> PandaJobs<'a> {
    fn of(run: &'a RunData) -> Option<Self> {
        let queue = run.job_columns.iter().find(|c| c.name == "computingsite").and_then(|c| match &c.values {
            ExtraValues::Str(v) => Some(v.as_slice()),
            _ => None,
        })?;
        if queue.iter().all(Option::is_none) {
            return None;
        }
        let times = run
            .job_columns
            .iter()
            .filter_map(|c| match &c.values {
                ExtraValues::F64(v) if c.name.ends_with("_s") => Some((c.name.as_str(), v.as_slice())),
                _ => None,
            })
            .collect();
        Some(Self { queue, times })
    }

    /// Time column `name` (all null if absent).
    fn time(&self, name: &str, job: usize) -> Option<f64> {
        self.times.iter().find(|(n, _)| *n == name).and_then(|(_, v)| v.get(job).copied().flatten())
    }
}

fn panda_title(what: &str, run: &RunData) -> String {
    format!("{what} — {}", run.meta.label())
}

/// Waits from `activated` to `running` in seconds per PanDA queue, by queue name; empty for a
/// run without PanDA jobs.
pub fn queue_waits(run: &RunData) -> Vec<(String, Vec<f64>)> {
    PandaJobs::of(run).map_or_else(Vec::new, |p| waits_by_queue(&p))
}

fn waits_by_queue(p: &PandaJobs) -> Vec<(String, Vec<f64>)> {
    let mut by_queue: std::collections::BTreeMap<&str, Vec<f64>> = std::collections::BTreeMap::new();
    for (j, q) in p.queue.iter().enumerate() {
        let Some(q) = q else { continue };
        let waits = by_queue.entry(q.as_str()).or_default();
        if let (Some(a), Some(r)) = (p.time("activated_s", j), p.time("running_s", j)) {
            waits.push(r - a);
        }
    }
    by_queue.into_iter().map(|(q, w)| (q.to_string(), w)).collect()
}

/// Wait from `activated` to `running` per PQ (the [`MAX_BOXES`] PQs with most started jobs).
fn queue_wait_chart(run: &RunData, p: &PandaJobs) -> QueueWaits {
    let mut queues = waits_by_queue(p);
    let what = if queues.len() > MAX_BOXES {
        let n = queues.len();
        queues.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
        queues.truncate(MAX_BOXES);
        queues.sort_by(|a, b| a.0.cmp(&b.0));
        format!("Wait from activated to running, {MAX_BOXES} of {n} PQs (box p25–p75, whiskers p5–p95)")
    } else {
        "Wait from activated to running per PQ (box p25–p75, whiskers p5–p95)".to_string()
    };
    QueueWaits { title: panda_title(&what, run), queues }
}

/// Activated jobs per PQ over time: from `activated_s` until the job leaves (`starting_s`,
/// else `running_s`, else `final_s`; still activated at the end without any).
fn queue_length_chart(run: &RunData, p: &PandaJobs) -> CountsOverTime {
    let mut by_queue: std::collections::BTreeMap<&str, Vec<(f64, i64)>> = std::collections::BTreeMap::new();
    for (j, q) in p.queue.iter().enumerate() {
        let (Some(q), Some(a)) = (q, p.time("activated_s", j)) else { continue };
        let changes = by_queue.entry(q.as_str()).or_default();
        changes.push((a / 3600.0, 1));
        let left = ["starting_s", "running_s", "final_s"].iter().find_map(|c| p.time(c, j).filter(|t| *t >= a));
        if let Some(t) = left {
            changes.push((t / 3600.0, -1));
        }
    }
    let series = by_queue.into_iter().map(|(q, c)| (q.to_string(), c)).collect();
    let end = run.meta.end.as_hours_f64();
    CountsOverTime {
        title: panda_title("Activated jobs per PanDA queue", run),
        y_label: "activated jobs".into(),
        end_hours: end,
        lines: top_series(series, 0.0, end),
    }
}

/// Files of our transfers queued per link (from submission until done or cancelled).
fn link_backlog_chart(run: &RunData) -> CountsOverTime {
    let end = run.meta.end.as_hours_f64();
    CountsOverTime {
        title: panda_title("Files queued per link, our transfers only (constant background not shown)", run),
        y_label: "files queued or in transfer".into(),
        end_hours: end,
        lines: top_series(link_backlogs(run), 0.0, end),
    }
}

/// Per link (`SRC→DST`), the changes of the files of this run's transfers queued or in
/// transfer on it: `(hours, +1)` at each submission, `(hours, −1)` at each end; links in id order.
pub fn link_backlogs(run: &RunData) -> Vec<(String, Vec<(f64, i64)>)> {
    let net = run.network;
    let sites: Vec<&str> = run.scenario.sites.iter().map(|s| s.name.as_str()).collect();
    let mut by_link: std::collections::BTreeMap<u32, Vec<(f64, i64)>> = std::collections::BTreeMap::new();
    for t in (0..net.transfer_count()).filter_map(|t| net.transfer(t as u32)) {
        let changes = by_link.entry(t.link).or_default();
        changes.push((t.submitted.as_hours_f64(), 1));
        if let Some(e) = t.ended {
            changes.push((e.as_hours_f64(), -1));
        }
    }
    let name = |l: u32| match net.spec(l) {
        Some(s) => {
            let site = |i: u32| sites.get(i as usize).copied().unwrap_or("?");
            format!("{}→{}", site(s.from), site(s.to))
        }
        None => format!("link {l}"),
    };
    by_link.into_iter().map(|(l, c)| (name(l), c)).collect()
}

/// The PanDA charts of a run (file stem and chart): queue waits and lengths when it has PanDA
/// jobs, the link backlog when it made transfers; none for a DIRAC run.
pub fn panda_charts(run: &RunData) -> Result<Vec<(&'static str, Rendered)>> {
    let mut out = Vec::new();
    if let Some(p) = PandaJobs::of(run) {
        out.push(("queue_waits", panda_charts::queue_waits(&queue_wait_chart(run, &p))?));
        out.push(("queue_lengths", panda_charts::counts_over_time(&queue_length_chart(run, &p))?));
    }
    if run.network.transfer_count() > 0 {
        out.push(("link_backlog", panda_charts::counts_over_time(&link_backlog_chart(run))?));
    }
    Ok(out)
}

/// Every Parquet table of a run, encoded: (file name, bytes).
fn encode_tables(run: &RunData) -> Result<Vec<(String, Vec<u8>)>> {
    let meta = &run.meta;
    let mut parquet: Vec<(String, Vec<u8>)> = Vec::new();
    let encode = |name: &str, columns: Vec<tables::Column>| -> Result<(String, Vec<u8>)> {
        let bytes = tables::parquet_bytes(&columns, meta).with_context(|| format!("encoding {name}"))?;
        Ok((name.to_string(), bytes))
    };
    parquet.push(encode("timeseries.parquet", tables::timeseries(run))?);
    // The largest table, built one row group at a time.
    parquet.push(("jobs.parquet".into(), tables::jobs_parquet(run, meta).context("encoding jobs.parquet")?));
    parquet.push(encode("pilots.parquet", tables::pilots(run))?);
    if run.network.transfer_count() > 0 {
        parquet.push(encode("transfers.parquet", tables::transfers(run))?);
    }
    if !run.recorder.gpu_samples.is_empty() {
        parquet.push(encode("gpu_timeseries.parquet", crate::metrics::gpus::timeseries(run))?);
    }
    for t in &run.wms_tables {
        parquet.push(encode(&format!("{}.parquet", t.name), tables::wms_table(t))?);
    }
    Ok(parquet)
}

/// Every chart of a run, rendered: (file stem, chart), in the order they are written. Each
/// chart is rendered on its own (in parallel when threads are free); the order is fixed.
fn render_charts(run: &RunData) -> Result<Vec<(&'static str, Rendered)>> {
    type Charts = Result<Vec<(&'static str, Rendered)>>;
    fn one<E>(stem: &'static str, r: std::result::Result<Rendered, E>) -> Charts
    where
        anyhow::Error: From<E>,
    {
        Ok(vec![(stem, r?)])
    }
    let renderers: [&(dyn Fn(&RunData) -> Charts + Sync); 7] = [
        &|r| one("share_convergence", charts::share_convergence(&share_chart(r))),
        &|r| one("pilots_over_time", charts::pilots_over_time(&pilots_chart(r))),
        &|r| one("wait_times", charts::wait_time_distribution(&wait_chart(r))),
        &|r| match user_wait_chart(r) {
            Some(c) => one("user_wait_times", charts::wait_time_distribution(&c)),
            None => Ok(vec![]),
        },
        &panda_charts,
        &|r| Ok(factory_charts::factory_charts(r)?),
        &|r| match gpu_charts::gpu_usage_input(r) {
            Some(c) => one("gpu_usage", gpu_charts::gpu_usage(&c)),
            None => Ok(vec![]),
        },
    ];
    use rayon::prelude::*;
    let rendered: Vec<Charts> = renderers.par_iter().map(|render| render(run)).collect();
    let mut out = Vec::new();
    for charts in rendered {
        out.extend(charts?);
    }
    Ok(out)
}

/// Make a run directory ready for a new run, before anything else is written into it:
/// remove its `summary.json` (whose presence says the outputs beside it are complete, so a
/// run that fails half-way never leaves an old summary beside new tables), its `report.html`
/// (`pilotsim report` writes it from the outputs; an old one would show the previous run
/// beside the new outputs) and the temporaries a killed run left (see
/// [`write::remove_stale_temporaries`]). Nothing to do if `dir` does not exist.
pub fn begin_run(dir: &Path) -> Result<()> {
    for name in ["summary.json", "report.html"] {
        let old = dir.join(name);
        match std::fs::remove_file(&old) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing the old {}", old.display()));
            }
            _ => {}
        }
    }
    write::remove_stale_temporaries(dir).with_context(|| format!("cleaning {}", dir.display()))?;
    Ok(())
}

/// Write every output of a run into `dir` (created if needed) and return the summary.
/// [`begin_run`] first, `summary.json` last.
pub fn write_run(dir: &Path, run: &mut RunData) -> Result<Summary> {
    begin_run(dir)?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let summary = summary::build(run);
    let json = serde_json::to_string_pretty(&summary)? + "\n";
    // The tables and the charts are independent: the tables are encoded (each as soon as its
    // columns are built, so one table's columns at a time) while the charts are rendered, each
    // chart a task of its own on rayon's threads.
    let run: &RunData = run;
    let (parquet, charts) = rayon::join(|| encode_tables(run), || render_charts(run));
    let (parquet, charts) = (parquet?, charts?);
    // Everything is rendered: now write, summary last so its presence means a complete run.
    for (name, bytes) in &parquet {
        write::atomic(&dir.join(name), bytes).with_context(|| format!("writing {name}"))?;
    }
    for (stem, chart) in charts {
        write_chart(dir, stem, chart)?;
    }
    let meta = &run.meta;
    let provenance = crate::scenario::effective::Provenance {
        origin: &meta.origin,
        sha256: &meta.scenario_sha256,
        overrides: &meta.overrides,
        seed: meta.seed,
        digest: &meta.digest,
        version: meta.pilotsim_version,
    };
    let effective = crate::scenario::effective::to_ron(run.scenario, &provenance)
        .map_err(|e| anyhow::anyhow!("writing scenario.ron: {e}"))?;
    write::atomic(&dir.join("scenario.ron"), effective.as_bytes())?;
    write::atomic(&dir.join("summary.json"), json.as_bytes())?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_samples_of_a_handful_of_running_jobs_are_gaps() {
        // Peak 400 running: the floor is 20. One job at the start (share 100 %) and 19 at the
        // end are gaps; 20 and more are drawn.
        let points = [(0.0, 1.0), (1.0, 0.8), (2.0, 0.75), (3.0, 0.0)];
        let g = gapped(points.into_iter(), &[1, 400, 20, 19]);
        assert!(g[0].1.is_nan() && g[3].1.is_nan(), "{g:?}");
        assert_eq!((g[1], g[2]), ((1.0, 0.8), (2.0, 0.75)));
        assert_eq!(gapped([(0.0, 0.5)].into_iter(), &[0]), [(0.0, 0.5)], "nothing ever ran: untouched");
    }
}
