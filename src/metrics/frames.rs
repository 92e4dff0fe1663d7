//! The Parquet tables of a run as polars DataFrames: `jobs`, `pilots`, `timeseries`,
//! `transfers` and the WMSs' own, and Parquet bytes of a frame through polars' writer.
//!
//! A run's files are written by [`super::tables`] and our own writer ([`super::parquet`]),
//! compiled at our opt-level where polars is built unoptimised (writing the 2.1 M-job week's
//! outputs: 18.7 s through polars, 2.4 s now); these frames are the reference the tests
//! compare its files with (same columns, types, values).
//! [`to_parquet`] is how the sweep's small tables were written before our writer wrote them
//! too; the tests compare both. Test-only: polars is a dev-dependency.

use polars::prelude::*;

use super::{ExtraColumn, ExtraValues, RunData, RunMeta, ce_names};
use crate::engine::SimTime;

fn secs(t: Option<SimTime>) -> Option<f64> {
    t.map(SimTime::as_secs_f64)
}

fn col<T, P>(name: &str, values: T) -> Column
where
    Series: NamedFrom<T, P>,
    P: ?Sized,
{
    Column::new(name.into(), values)
}

/// The columns the WMSs add, after the neutral ones.
fn with_extras(mut cols: Vec<Column>, extras: &[ExtraColumn]) -> PolarsResult<DataFrame> {
    for x in extras {
        cols.push(match &x.values {
            ExtraValues::U32(v) => col(&x.name, v.as_slice()),
            ExtraValues::U64(v) => col(&x.name, v.as_slice()),
            ExtraValues::F64(v) => col(&x.name, v.as_slice()),
            ExtraValues::Bool(v) => col(&x.name, v.as_slice()),
            ExtraValues::Str(v) => col(&x.name, v.as_slice()),
            ExtraValues::Coded { texts, codes } => {
                col(&x.name, codes.iter().map(|c| c.map(|i| texts[i as usize].as_str())).collect::<Vec<_>>())
            }
        });
    }
    DataFrame::new_infer_height(cols)
}

/// One row per job: the neutral columns, then the WMSs' own (DIRAC: `task_queue_id`).
pub fn jobs(run: &RunData) -> PolarsResult<DataFrame> {
    let ces = ce_names(run.scenario);
    let w = run.streams;
    let j = run.jobs;
    let stream = |i: usize| &w[j[i].stream as usize];
    let ce = |i: usize| j[i].ce().map(|c| ces[c as usize]);
    let cols = vec![
        col("job_id", j.iter().map(|x| x.id).collect::<Vec<u32>>()),
        col("stream", (0..j.len()).map(|i| stream(i).name.clone()).collect::<Vec<_>>()),
        col("owner", (0..j.len()).map(|i| stream(i).owner.clone()).collect::<Vec<_>>()),
        col("group", (0..j.len()).map(|i| stream(i).group.clone()).collect::<Vec<_>>()),
        col("user_priority", (0..j.len()).map(|i| u32::from(stream(i).user_priority)).collect::<Vec<_>>()),
        col("cpu_time", (0..j.len()).map(|i| stream(i).cpu_time).collect::<Vec<_>>()),
        col("cpu_work", j.iter().map(|x| x.cpu_work).collect::<Vec<_>>()),
        col("submit_s", j.iter().map(|x| x.submitted.as_secs_f64()).collect::<Vec<_>>()),
        col("match_s", j.iter().map(|x| secs(x.matched())).collect::<Vec<_>>()),
        col("end_s", j.iter().map(|x| secs(x.ended())).collect::<Vec<_>>()),
        col("wait_s", j.iter().map(|x| x.wait_s()).collect::<Vec<_>>()),
        col("site", (0..j.len()).map(|i| ce(i).map(|c| c.1.to_string())).collect::<Vec<_>>()),
        col("ce", (0..j.len()).map(|i| ce(i).map(|c| c.0.to_string())).collect::<Vec<_>>()),
        col("pilot_id", j.iter().map(|x| x.pilot()).collect::<Vec<Option<u32>>>()),
        col("status", j.iter().map(|x| x.status.as_str()).collect::<Vec<_>>()),
        col("wms", j.iter().map(|x| run.wms_names[x.wms as usize].as_str()).collect::<Vec<_>>()),
    ];
    with_extras(cols, &run.job_columns)
}

/// A WMS's own table.
pub fn wms_table(t: &super::Table) -> PolarsResult<DataFrame> {
    with_extras(Vec::new(), &t.columns)
}

/// One row per transfer over the grid's links: `transfer_id`, `from_site`, `to_site`, `bytes`,
/// `status`, `submit_s`, `start_s` (it took a share of the link), `end_s` (done or cancelled).
pub fn transfers(run: &RunData) -> PolarsResult<DataFrame> {
    let net = run.network;
    let sites: Vec<&str> = run.scenario.sites.iter().map(|s| s.name.as_str()).collect();
    let n = net.transfer_count();
    let all: Vec<_> = (0..n).filter_map(|t| net.transfer(t as u32)).collect();
    let site = |l: u32, from: bool| {
        net.spec(l).map(|s| sites.get(if from { s.from } else { s.to } as usize).copied().unwrap_or("").to_string())
    };
    let cols = vec![
        col("transfer_id", (0..all.len() as u32).collect::<Vec<u32>>()),
        col("from_site", all.iter().map(|t| site(t.link, true)).collect::<Vec<_>>()),
        col("to_site", all.iter().map(|t| site(t.link, false)).collect::<Vec<_>>()),
        col("bytes", all.iter().map(|t| t.bytes).collect::<Vec<u64>>()),
        col("status", all.iter().map(|t| t.status.as_str()).collect::<Vec<_>>()),
        col("submit_s", all.iter().map(|t| t.submitted.as_secs_f64()).collect::<Vec<_>>()),
        col("start_s", all.iter().map(|t| secs(t.started)).collect::<Vec<_>>()),
        col("end_s", all.iter().map(|t| secs(t.ended)).collect::<Vec<_>>()),
    ];
    DataFrame::new_infer_height(cols)
}

/// One row per pilot: the neutral columns, then the WMSs' own (DIRAC: `task_queue_id`,
/// `kind` generic/private, `match_requests`).
pub fn pilots(run: &RunData) -> PolarsResult<DataFrame> {
    let ces = ce_names(run.scenario);
    let p = &run.grid.pilots;
    let cols = vec![
        col("pilot_id", p.iter().map(|x| x.id).collect::<Vec<u32>>()),
        col("site", p.iter().map(|x| ces[x.ce as usize].1).collect::<Vec<_>>()),
        col("ce", p.iter().map(|x| ces[x.ce as usize].0).collect::<Vec<_>>()),
        col("wms", p.iter().map(|x| run.wms_names[x.wms as usize].as_str()).collect::<Vec<_>>()),
        col("cores", p.iter().map(|x| x.cores).collect::<Vec<u32>>()),
        col("submit_s", p.iter().map(|x| x.submitted.as_secs_f64()).collect::<Vec<_>>()),
        col("start_s", p.iter().map(|x| secs(x.started())).collect::<Vec<_>>()),
        col("end_s", p.iter().map(|x| secs(x.ended())).collect::<Vec<_>>()),
        col("status", p.iter().map(|x| x.status.as_str()).collect::<Vec<_>>()),
        col("jobs_run", p.iter().map(|x| x.jobs_run).collect::<Vec<u32>>()),
    ];
    with_extras(cols, &run.pilot_columns)
}

/// One row per sample and share entity.
pub fn timeseries(run: &RunData) -> PolarsResult<DataFrame> {
    let r = &*run.recorder;
    let n = r.samples.len() * r.entities.len();
    let (mut time, mut entity, mut level, mut parent) = (Vec::with_capacity(n), Vec::new(), Vec::new(), Vec::new());
    let (mut running, mut waiting, mut target, mut running_share, mut achieved) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut deviation, mut achieved_cpu) = (Vec::new(), Vec::new());
    let (mut running_cores, mut unit, mut achieved_cores) = (Vec::new(), Vec::new(), Vec::new());
    let (mut pw, mut pr, mut pa, mut pf) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for s in &r.samples {
        for (e, def) in r.entities.iter().enumerate() {
            time.push(s.time.as_secs_f64());
            entity.push(def.name.clone());
            level.push(def.level.as_str());
            parent.push(def.parent.map(|p| r.entities[p].name.clone()));
            running.push(s.running[e]);
            waiting.push(s.waiting[e]);
            running_cores.push(s.running_cores[e]);
            unit.push(def.unit.as_str());
            achieved_cores.push(s.achieved_cores[e].is_finite().then_some(s.achieved_cores[e]));
            target.push(def.target_share);
            let finite = |v: f64| v.is_finite().then_some(v);
            running_share.push(finite(s.share[e]));
            deviation.push(finite((s.share[e] - def.target_share).abs()));
            achieved.push(finite(s.achieved[e]));
            achieved_cpu.push(finite(s.achieved_cpu[e]));
            pw.push(s.pilots.waiting);
            pr.push(s.pilots.running);
            pa.push(s.pilots.aborted);
            pf.push(s.pilots.refused);
        }
    }
    DataFrame::new_infer_height(vec![
        col("time_s", time),
        col("entity", entity),
        col("level", level),
        col("parent", parent),
        col("running", running),
        col("running_cores", running_cores),
        col("waiting", waiting),
        col("share_unit", unit),
        col("target_share", target),
        col("running_share", running_share),
        col("deviation", deviation),
        col("achieved_share", achieved),
        col("achieved_core_share", achieved_cores),
        col("achieved_cpu_share", achieved_cpu),
        col("pilots_waiting", pw),
        col("pilots_running", pr),
        col("pilots_aborted_total", pa),
        col("pilots_refused_total", pf),
    ])
}

/// Parquet bytes of a frame with key-value metadata (the identity of what produced it).
/// Serial column encoding, so the bytes do not depend on the thread count.
pub fn to_parquet(df: &mut DataFrame, metadata: Vec<(String, String)>) -> PolarsResult<Vec<u8>> {
    let mut buf = Vec::new();
    ParquetWriter::new(&mut buf)
        .with_key_value_metadata(Some(KeyValueMetadata::from_static(metadata)))
        .set_parallel(false)
        .finish(df)?;
    Ok(buf)
}

/// Parquet bytes of a run's frame, with the run's identity as key-value metadata.
pub fn parquet_bytes(df: &mut DataFrame, meta: &RunMeta) -> PolarsResult<Vec<u8>> {
    to_parquet(df, meta.parquet_metadata())
}
