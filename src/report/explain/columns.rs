//! Reading explain's columns from the run's Parquet tables: typed column readers (a missing or
//! mistyped column is an error naming it) and the rows of `brokerage.parquet`.

use std::path::Path;

use anyhow::{Result, anyhow, bail};

use crate::metrics::columns::{Data, Table};
use crate::metrics::parquet::read_file_present;

/// `columns` of the Parquet file at `path` that it has (explain checks which are missing and
/// says so); an error names the file and what could not be read.
pub(super) fn read_parquet(path: &Path, columns: &[&str]) -> Result<Table> {
    Ok(read_file_present(path, columns)?)
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

/// Column `name` (an error if the table has none).
pub(super) fn column<'t>(df: &'t Table, name: &str) -> Result<&'t Data> {
    df.column(name).ok_or_else(|| anyhow!("no column {name}"))
}

/// `recorded_pandaid` of each row; nulls when the run has no such column.
pub(super) fn recorded_pandaids(df: &Table) -> Vec<Option<u64>> {
    match df.column("recorded_pandaid") {
        Some(Data::U64(v)) => v.clone(),
        Some(Data::U32(v)) => v.iter().map(|x| x.map(u64::from)).collect(),
        _ => vec![None; df.rows],
    }
}

/// The `gpu_model` column (the GPU node's model of a job that used GPUs), where the run has it
/// (it came with GPUs); none for every row otherwise.
pub(super) fn gpu_models(df: &Table) -> Vec<Option<String>> {
    match df.column("gpu_model") {
        Some(Data::Str(v)) => v.clone(),
        _ => vec![None; df.rows],
    }
}

fn mistyped(name: &str, d: &Data, want: &str) -> anyhow::Error {
    anyhow!("column {name} is {}, not {want}", d.type_name())
}

pub(super) fn u32s(df: &Table, name: &str) -> Result<Vec<Option<u32>>> {
    match column(df, name)? {
        Data::U32(v) => Ok(v.clone()),
        // As a cast would: a value that does not fit is null.
        Data::U64(v) => Ok(v.iter().map(|x| x.and_then(|x| u32::try_from(x).ok())).collect()),
        d => Err(mistyped(name, d, "u32")),
    }
}

pub(super) fn f64s(df: &Table, name: &str) -> Result<Vec<Option<f64>>> {
    match column(df, name)? {
        Data::F64(v) => Ok(v.clone()),
        Data::U32(v) => Ok(v.iter().map(|x| x.map(f64::from)).collect()),
        Data::U64(v) => Ok(v.iter().map(|x| x.map(|x| x as f64)).collect()),
        d => Err(mistyped(name, d, "f64")),
    }
}

pub(super) fn strs(df: &Table, name: &str) -> Result<Vec<Option<String>>> {
    match column(df, name)? {
        Data::Str(v) => Ok(v.clone()),
        d => Err(mistyped(name, d, "string")),
    }
}

pub(super) fn bools(df: &Table, name: &str) -> Result<Vec<Option<bool>>> {
    match column(df, name)? {
        Data::Bool(v) => Ok(v.clone()),
        d => bail!("column {name} is {}, not bool", d.type_name()),
    }
}

/// The rows of `brokerage.parquet` (a row without `brokerage_id` is dropped).
pub(super) fn rows(df: &Table) -> Result<Vec<Row>> {
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
