//! Reading explain's columns from the run's Parquet tables: typed column readers (a missing or
//! mistyped column is an error naming it) and the rows of `brokerage.parquet`.

use std::path::Path;

use anyhow::{Context, Result};
use polars::prelude::*;

/// `columns` of the Parquet file at `path` (an error names the file).
pub(super) fn read_parquet(path: &Path, columns: &[&str]) -> Result<DataFrame> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let names = columns.iter().map(|c| c.to_string()).collect();
    let df = ParquetReader::new(file).with_columns(Some(names)).finish();
    anyhow::Context::with_context(df, || format!("reading {}", path.display()))
}

/// One row of `brokerage.parquet`.
#[derive(Debug, Clone)]
pub(super) struct Row {
    pub brokerage_id: u32,
    pub time_s: f64,
    pub kind: String,
    pub jedi_task_id: u32,
    pub candidate: String,
    pub verdict: String,
    pub stage: String,
    pub reason: String,
    pub temporary: bool,
    pub weight: Option<f64>,
    pub jobs: u32,
    pub pending: Option<String>,
}

/// Column `name` cast to `dtype`.
pub(super) fn column(df: &DataFrame, name: &str, dtype: &DataType) -> Result<Column> {
    let c = anyhow::Context::with_context(df.column(name), || format!("no column {name}"))?;
    anyhow::Context::with_context(c.cast(dtype), || format!("column {name} is not {dtype}"))
}

/// `recorded_pandaid` of each row; nulls when the run has no such column.
pub(super) fn recorded_pandaids(df: &DataFrame) -> Vec<Option<u64>> {
    match column(df, "recorded_pandaid", &DataType::UInt64).ok().and_then(|c| c.u64().ok().cloned()) {
        Some(c) => c.iter().collect(),
        None => vec![None; df.height()],
    }
}

pub(super) fn u32s(df: &DataFrame, name: &str) -> Result<Vec<Option<u32>>> {
    Ok(column(df, name, &DataType::UInt32)?.u32()?.iter().collect())
}

pub(super) fn f64s(df: &DataFrame, name: &str) -> Result<Vec<Option<f64>>> {
    Ok(column(df, name, &DataType::Float64)?.f64()?.iter().collect())
}

pub(super) fn strs(df: &DataFrame, name: &str) -> Result<Vec<Option<String>>> {
    Ok(column(df, name, &DataType::String)?.str()?.iter().map(|s| s.map(String::from)).collect())
}

pub(super) fn bools(df: &DataFrame, name: &str) -> Result<Vec<Option<bool>>> {
    Ok(column(df, name, &DataType::Boolean)?.bool()?.iter().collect())
}

/// The rows of `brokerage.parquet` (a row without `brokerage_id` is dropped).
pub(super) fn rows(df: &DataFrame) -> Result<Vec<Row>> {
    let ids = u32s(df, "brokerage_id")?;
    let time = f64s(df, "time_s")?;
    let kind = strs(df, "kind")?;
    let task = u32s(df, "jedi_task_id")?;
    let cand = strs(df, "candidate")?;
    let verdict = strs(df, "verdict")?;
    let stage = strs(df, "stage")?;
    let reason = strs(df, "reason")?;
    let temporary = bools(df, "temporary")?;
    let weight = f64s(df, "weight")?;
    let jobs = u32s(df, "jobs")?;
    let pending = strs(df, "pending")?;
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    Ok((0..ids.len())
        .filter_map(|i| {
            Some(Row {
                brokerage_id: ids[i]?,
                time_s: time[i].unwrap_or(f64::NAN),
                kind: text(&kind[i]),
                jedi_task_id: task[i].unwrap_or(0),
                candidate: text(&cand[i]),
                verdict: text(&verdict[i]),
                stage: text(&stage[i]),
                reason: text(&reason[i]),
                temporary: temporary[i].unwrap_or(false),
                weight: weight[i],
                jobs: jobs[i].unwrap_or(0),
                pending: pending[i].clone().filter(|p| !p.is_empty()),
            })
        })
        .collect())
}
