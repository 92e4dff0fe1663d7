//! Parquet files of the run's and the sweeps' tables, written and read through polars.
//!
//! Every file: Snappy pages (the codec pandas, pyarrow and Spark write by default), row groups
//! of [`GROUP_ROWS`] rows with their statistics (min, max, null count: readers skip row groups
//! a filter excludes), and the run's identity as key-value metadata. The bytes depend only on
//! the columns and the metadata: polars encodes the columns of a row group in parallel but lays
//! them out in order, and no clock, thread count or hash order reaches them, so a rerun, a
//! sweep on any number of threads and a sharded sweep merged give the same files.
//!
//! [`write_groups`] writes a table one row group at a time, so that only one row group's
//! columns are in memory (the jobs table of 10⁷ jobs would be ~1.5 GB of columns at once).
//! [`read`] reads columns back by name into [`Table`]s.

use std::io::Cursor;
use std::path::Path;

use polars::prelude::{
    DataFrame, KeyValueMetadata, ParquetCompression, ParquetReader, ParquetWriter, PolarsError, SerReader,
    StatisticsOptions,
};

use super::columns::{Column, Data, Table, to_frame};

/// Rows per row group: polars' default (512²). Its statistics let a reader skip a quarter of a
/// million jobs at a time; a 2.1·10⁶-job `jobs.parquet` has nine.
pub const GROUP_ROWS: usize = 512 * 512;

/// Why a table could not be written.
#[derive(Debug, thiserror::Error)]
#[error("writing Parquet: {0}")]
pub struct Error(#[from] PolarsError);

fn writer<'o>(
    out: &'o mut Vec<u8>,
    metadata: &[(String, String)],
    group_rows: usize,
) -> ParquetWriter<&'o mut Vec<u8>> {
    ParquetWriter::new(out)
        .with_compression(ParquetCompression::Snappy)
        .with_statistics(StatisticsOptions::default())
        .with_row_group_size(Some(group_rows))
        .with_key_value_metadata(Some(KeyValueMetadata::from_static(metadata.to_vec())))
}

/// The Parquet file of `columns` (all of one length), with key-value metadata.
pub fn write(columns: &[Column], metadata: &[(String, String)]) -> Result<Vec<u8>, Error> {
    write_in(columns, metadata, GROUP_ROWS)
}

fn write_in(columns: &[Column], metadata: &[(String, String)], group_rows: usize) -> Result<Vec<u8>, Error> {
    let df = to_frame(columns)?;
    write_groups_in(df.height(), metadata, group_rows, |lo, hi| Ok(df.slice(lo as i64, hi - lo)))
}

/// The Parquet file of a table of `rows` rows whose columns `columns_of(lo, hi)` builds for
/// rows `lo..hi`, one row group at a time. The bytes are those [`write`] makes of the whole
/// columns. With no rows, the schema is that of `columns_of(0, 0)`.
pub fn write_groups<'c, C: AsRef<[Column<'c>]>>(
    rows: usize,
    metadata: &[(String, String)],
    mut columns_of: impl FnMut(usize, usize) -> C,
) -> Result<Vec<u8>, Error> {
    write_groups_in(rows, metadata, GROUP_ROWS, |lo, hi| Ok(to_frame(columns_of(lo, hi).as_ref())?))
}

fn write_groups_in(
    rows: usize,
    metadata: &[(String, String)],
    group_rows: usize,
    mut frame_of: impl FnMut(usize, usize) -> Result<DataFrame, Error>,
) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    let first = frame_of(0, rows.min(group_rows))?;
    let mut batched = writer(&mut out, metadata, group_rows).batched(first.schema())?;
    let mut df = first;
    let mut lo = 0;
    loop {
        let hi = (lo + group_rows).min(rows);
        if df.height() != hi - lo {
            return Err(Error(PolarsError::ShapeMismatch(
                format!("rows {lo}..{hi}: the columns have {} rows", df.height()).into(),
            )));
        }
        // One chunk, one row group.
        batched.write_batch(&df)?;
        lo = hi;
        if lo >= rows {
            break;
        }
        df = frame_of(lo, (lo + group_rows).min(rows))?;
    }
    batched.finish()?;
    Ok(out)
}

/// The Parquet file of owned named columns (small tables such as the sweeps', built value by
/// value).
pub fn write_data(columns: &[(String, Data)], metadata: &[(String, String)]) -> Result<Vec<u8>, Error> {
    let cols: Vec<Column> = columns.iter().map(|(n, d)| Column::new(n.clone(), d.values())).collect();
    write(&cols, metadata)
}

/// Why a file could not be read: the file (when read from one) and what was unexpected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{message}", path.as_ref().map(|p| format!("{p}: ")).unwrap_or_default())]
pub struct ReadError {
    pub path: Option<String>,
    pub message: String,
}

fn err(message: impl std::fmt::Display) -> ReadError {
    ReadError { path: None, message: message.to_string() }
}

/// The columns `names` (each must exist) of a Parquet file's bytes, in the order asked for,
/// with the file's key-value metadata (polars' own `ARROW:schema` entry left out).
pub fn read(bytes: &[u8], names: &[&str]) -> Result<Table, ReadError> {
    let mut reader = ParquetReader::new(Cursor::new(bytes));
    let meta = reader.get_metadata().map_err(|e| err(format!("not a Parquet file: {e}")))?;
    let metadata = meta
        .key_value_metadata
        .iter()
        .flatten()
        .filter(|kv| kv.key != "ARROW:schema")
        .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
        .collect();
    let schema = reader.schema().map_err(err)?;
    if let Some(missing) = names.iter().find(|n| !schema.contains(n)) {
        return Err(err(format!("no column {missing}")));
    }
    let df = reader.with_columns(Some(names.iter().map(|n| n.to_string()).collect())).finish().map_err(err)?;
    let mut columns = Vec::with_capacity(names.len());
    for &name in names {
        let c = df.column(name).map_err(err)?;
        columns.push((name.to_string(), Data::from_column(c).map_err(err)?));
    }
    Ok(Table { rows: df.height(), columns, metadata })
}

/// The columns `names` of the Parquet file at `path` (see [`read`]).
pub fn read_file(path: &Path, names: &[&str]) -> Result<Table, ReadError> {
    let at = |e: ReadError| ReadError { path: Some(path.display().to_string()), ..e };
    let bytes = std::fs::read(path).map_err(|e| at(err(format!("cannot read: {e}"))))?;
    read(&bytes, names).map_err(at)
}

/// The columns among `names` that the file at `path` has (the others are left out: the
/// caller checks which it needs), in the order asked for.
pub fn read_file_present(path: &Path, names: &[&str]) -> Result<Table, ReadError> {
    let at = |e: ReadError| ReadError { path: Some(path.display().to_string()), ..e };
    let bytes = std::fs::read(path).map_err(|e| at(err(format!("cannot read: {e}"))))?;
    let schema = ParquetReader::new(Cursor::new(&bytes[..]))
        .schema()
        .map_err(|e| at(err(format!("not a Parquet file: {e}"))))?;
    let present: Vec<&str> = names.iter().copied().filter(|n| schema.contains(n)).collect();
    read(&bytes, &present).map_err(at)
}

#[cfg(test)]
mod tests;
