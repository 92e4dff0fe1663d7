//! The Parquet tables of a run — `jobs`, `pilots`, `timeseries`, `transfers` and the WMSs'
//! own (`brokerage`) — as columns for [`super::parquet`], taken straight from the simulation's
//! vectors: names repeated on many rows (a job's stream, owner, group, site, CE, WMS) are
//! indices into their few texts, never a string per row.
//!
//! Times are seconds since the start (Float64, null when it did not happen), names are
//! strings, so `pandas.read_parquet` and `polars.read_parquet` give usable frames directly.
//! Each file carries the run's identity (scenario, hash, seed, version, digest) as Parquet
//! key-value metadata. [`super::columns::to_frame`] makes a polars DataFrame of any of them.

use std::borrow::Cow;
use std::ops::Range;

pub use super::columns::Column;
use super::columns::Values;
use super::parquet;
use super::{ExtraColumn, ExtraValues, RunData, RunMeta};
use crate::engine::SimTime;
use crate::workload::ShareUnit;

fn secs(t: Option<SimTime>) -> Option<f64> {
    t.map(SimTime::as_secs_f64)
}

fn u32s<'a>(v: impl Iterator<Item = Option<u32>>) -> Values<'a> {
    Values::U32(v.collect::<Vec<_>>().into())
}

fn f64s<'a>(v: impl Iterator<Item = Option<f64>>) -> Values<'a> {
    Values::F64(v.collect::<Vec<_>>().into())
}

/// A string column as indices (`None`: null) into `texts`.
fn coded<'a>(texts: Vec<&'a str>, codes: impl Iterator<Item = Option<u32>>) -> Values<'a> {
    Values::Coded { texts, codes: codes.collect::<Vec<_>>().into() }
}

/// The columns the WMSs add, after the neutral ones, borrowed: all their rows, or `rows`.
fn with_extras<'a>(
    mut cols: Vec<Column<'a>>,
    extras: &'a [ExtraColumn],
    rows: Option<Range<usize>>,
) -> Vec<Column<'a>> {
    // Rows past a (wrongly) short column are missing, which the writer reports as ragged.
    fn part<'v, T>(v: &'v [T], rows: &Option<Range<usize>>) -> &'v [T] {
        match rows {
            None => v,
            Some(r) => &v[r.start.min(v.len())..r.end.min(v.len())],
        }
    }
    for x in extras {
        let values = match &x.values {
            ExtraValues::U32(v) => Values::U32(Cow::Borrowed(part(v, &rows))),
            ExtraValues::U64(v) => Values::U64(Cow::Borrowed(part(v, &rows))),
            ExtraValues::F64(v) => Values::F64(Cow::Borrowed(part(v, &rows))),
            ExtraValues::Bool(v) => Values::Bool(Cow::Borrowed(part(v, &rows))),
            ExtraValues::Str(v) => Values::Str(part(v, &rows).iter().map(Option::as_deref).collect()),
            ExtraValues::Coded { texts, codes } => Values::Coded {
                texts: texts.iter().map(String::as_str).collect(),
                codes: Cow::Borrowed(part(codes, &rows)),
            },
        };
        cols.push(Column::new(x.name.as_str(), values));
    }
    cols
}

/// For each CE (in CE index order) its name, and the index of its site.
fn ces<'a>(run: &RunData<'a>) -> (Vec<&'a str>, Vec<u32>) {
    let s = run.scenario;
    s.sites.iter().enumerate().flat_map(|(i, site)| site.ces.iter().map(move |ce| (ce.name.as_str(), i as u32))).unzip()
}

fn site_names<'a>(run: &RunData<'a>) -> Vec<&'a str> {
    run.scenario.sites.iter().map(|s| s.name.as_str()).collect()
}

fn wms_names<'a>(run: &'a RunData) -> Vec<&'a str> {
    run.wms_names.iter().map(String::as_str).collect()
}

/// One row per job: the neutral columns, then the WMSs' own (DIRAC: `task_queue_id`).
pub fn jobs<'a>(run: &'a RunData) -> Vec<Column<'a>> {
    jobs_rows(run, 0..run.jobs.len())
}

/// `jobs.parquet`, one row group's columns at a time ([`parquet::write_groups`]).
pub fn jobs_parquet(run: &RunData, meta: &RunMeta) -> Result<Vec<u8>, parquet::Error> {
    parquet::write_groups(run.jobs.len(), &meta.parquet_metadata(), |lo, hi| jobs_rows(run, lo..hi))
}

/// The columns of `jobs` for the jobs `rows` (by index).
fn jobs_rows<'a>(run: &'a RunData, rows: Range<usize>) -> Vec<Column<'a>> {
    let (ce_names, ce_site) = ces(run);
    let w = run.streams;
    let j = &run.jobs[rows.clone()];
    let stream = || j.iter().map(|x| Some(x.stream));
    let site = j.iter().map(|x| x.ce().and_then(|c| ce_site.get(c as usize).copied()));
    let mut cols = vec![
        Column::new("job_id", u32s(j.iter().map(|x| Some(x.id)))),
        Column::new("stream", coded(w.iter().map(|s| s.name.as_str()).collect(), stream())),
        Column::new("owner", coded(w.iter().map(|s| s.owner.as_str()).collect(), stream())),
        Column::new("group", coded(w.iter().map(|s| s.group.as_str()).collect(), stream())),
        Column::new(
            "user_priority",
            u32s(j.iter().map(|x| w.get(x.stream as usize).map(|s| u32::from(s.user_priority)))),
        ),
        Column::new("cpu_time", f64s(j.iter().map(|x| w.get(x.stream as usize).map(|s| s.cpu_time)))),
        Column::new("cpu_work", f64s(j.iter().map(|x| Some(x.cpu_work)))),
        Column::new("submit_s", f64s(j.iter().map(|x| Some(x.submitted.as_secs_f64())))),
        Column::new("match_s", f64s(j.iter().map(|x| secs(x.matched())))),
        Column::new("end_s", f64s(j.iter().map(|x| secs(x.ended())))),
        Column::new("wait_s", f64s(j.iter().map(|x| x.wait_s()))),
        Column::new("site", coded(site_names(run), site)),
        Column::new("ce", coded(ce_names, j.iter().map(|x| x.ce()))),
        Column::new("pilot_id", u32s(j.iter().map(|x| x.pilot()))),
        Column::new("status", Values::Str(j.iter().map(|x| Some(x.status.as_str())).collect())),
        Column::new("wms", coded(wms_names(run), j.iter().map(|x| Some(u32::from(x.wms))))),
    ];
    cols.extend(super::gpus::job_columns(run, rows.clone()));
    with_extras(cols, &run.job_columns, Some(rows))
}

/// A WMS's own table.
pub fn wms_table(t: &super::Table) -> Vec<Column<'_>> {
    with_extras(Vec::new(), &t.columns, None)
}

/// One row per transfer over the grid's links: `transfer_id`, `from_site`, `to_site`, `bytes`,
/// `status`, `submit_s`, `start_s` (it took a share of the link), `end_s` (done or cancelled).
pub fn transfers<'a>(run: &'a RunData) -> Vec<Column<'a>> {
    let net = run.network;
    let sites = site_names(run);
    let all: Vec<_> = (0..net.transfer_count()).filter_map(|t| net.transfer(t as u32)).collect();
    let site = |l: u32, from: bool| {
        net.spec(l).map(|s| sites.get(if from { s.from } else { s.to } as usize).copied().unwrap_or(""))
    };
    vec![
        Column::new("transfer_id", u32s((0..all.len() as u32).map(Some))),
        Column::new("from_site", Values::Str(all.iter().map(|t| site(t.link, true)).collect())),
        Column::new("to_site", Values::Str(all.iter().map(|t| site(t.link, false)).collect())),
        Column::new("bytes", Values::U64(all.iter().map(|t| Some(t.bytes)).collect::<Vec<_>>().into())),
        Column::new("status", Values::Str(all.iter().map(|t| Some(t.status.as_str())).collect())),
        Column::new("submit_s", f64s(all.iter().map(|t| Some(t.submitted.as_secs_f64())))),
        Column::new("start_s", f64s(all.iter().map(|t| secs(t.started)))),
        Column::new("end_s", f64s(all.iter().map(|t| secs(t.ended)))),
    ]
}

/// One row per pilot: the neutral columns, then the WMSs' own (DIRAC: `task_queue_id`,
/// `kind` generic/private, `match_requests`).
pub fn pilots<'a>(run: &'a RunData) -> Vec<Column<'a>> {
    let (ce_names, ce_site) = ces(run);
    let p = &run.grid.pilots;
    let mut cols = vec![
        Column::new("pilot_id", u32s(p.iter().map(|x| Some(x.id)))),
        Column::new("site", coded(site_names(run), p.iter().map(|x| ce_site.get(x.ce as usize).copied()))),
        Column::new("ce", coded(ce_names, p.iter().map(|x| Some(x.ce)))),
        Column::new("wms", coded(wms_names(run), p.iter().map(|x| Some(u32::from(x.wms))))),
        Column::new("cores", u32s(p.iter().map(|x| Some(x.cores)))),
        Column::new("submit_s", f64s(p.iter().map(|x| Some(x.submitted.as_secs_f64())))),
        Column::new("start_s", f64s(p.iter().map(|x| secs(x.started())))),
        Column::new("end_s", f64s(p.iter().map(|x| secs(x.ended())))),
        Column::new("status", Values::Str(p.iter().map(|x| Some(x.status.as_str())).collect())),
        Column::new("jobs_run", u32s(p.iter().map(|x| Some(x.jobs_run)))),
    ];
    cols.extend(super::gpus::pilot_columns(run));
    with_extras(cols, &run.pilot_columns, None)
}

/// One row per sample and share entity.
pub fn timeseries<'a>(run: &'a RunData) -> Vec<Column<'a>> {
    let r = &*run.recorder;
    let entities = &r.entities;
    let rows = || r.samples.iter().flat_map(|s| (0..entities.len()).map(move |e| (s, e)));
    let names: Vec<&str> = entities.iter().map(|d| d.name.as_str()).collect();
    let finite = |v: f64| v.is_finite().then_some(v);
    vec![
        Column::new("time_s", f64s(rows().map(|(s, _)| Some(s.time.as_secs_f64())))),
        Column::new("entity", coded(names.clone(), rows().map(|(_, e)| Some(e as u32)))),
        Column::new(
            "level",
            coded(entities.iter().map(|d| d.level.as_str()).collect(), rows().map(|(_, e)| Some(e as u32))),
        ),
        Column::new("parent", coded(names, rows().map(|(_, e)| entities[e].parent.map(|p| p as u32)))),
        Column::new("running", u32s(rows().map(|(s, e)| Some(s.running[e])))),
        Column::new("running_cores", u32s(rows().map(|(s, e)| Some(s.running_cores[e])))),
        Column::new("waiting", u32s(rows().map(|(s, e)| Some(s.waiting[e])))),
        Column::new(
            "share_unit",
            coded(vec!["jobs", "cores"], rows().map(|(_, e)| Some(u32::from(entities[e].unit == ShareUnit::Cores)))),
        ),
        Column::new("target_share", f64s(rows().map(|(_, e)| Some(entities[e].target_share)))),
        Column::new("running_share", f64s(rows().map(|(s, e)| finite(s.share[e])))),
        Column::new("deviation", f64s(rows().map(|(s, e)| finite((s.share[e] - entities[e].target_share).abs())))),
        Column::new("achieved_share", f64s(rows().map(|(s, e)| finite(s.achieved[e])))),
        Column::new("achieved_core_share", f64s(rows().map(|(s, e)| finite(s.achieved_cores[e])))),
        Column::new("achieved_cpu_share", f64s(rows().map(|(s, e)| finite(s.achieved_cpu[e])))),
        Column::new("pilots_waiting", u32s(rows().map(|(s, _)| Some(s.pilots.waiting)))),
        Column::new("pilots_running", u32s(rows().map(|(s, _)| Some(s.pilots.running)))),
        Column::new("pilots_aborted_total", u32s(rows().map(|(s, _)| Some(s.pilots.aborted)))),
        Column::new("pilots_refused_total", u32s(rows().map(|(s, _)| Some(s.pilots.refused)))),
    ]
}

/// Parquet bytes of a run's table, with the run's identity as key-value metadata.
pub fn parquet_bytes(columns: &[Column], meta: &RunMeta) -> Result<Vec<u8>, parquet::Error> {
    parquet::write(columns, &meta.parquet_metadata())
}

#[cfg(test)]
mod tests;
