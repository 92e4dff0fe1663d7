//! A small Parquet writer for the run's tables, compiled with our crate (at its opt-level)
//! rather than through polars, which the release profile builds unoptimised to keep the first
//! build short: writing a 2.1 M-job run's outputs through polars took twice the simulation.
//!
//! It writes what the run's tables need and nothing more (Apache Parquet format 2.x,
//! `parquet.thrift`): flat schemas of OPTIONAL columns — u32 (INT32, `INTEGER(32, unsigned)`),
//! u64 (INT64, `INTEGER(64, unsigned)`), f64 (DOUBLE), booleans (BOOLEAN) and strings
//! (BYTE_ARRAY, `STRING`) — the same physical and logical types polars writes for those
//! dtypes, so `polars.read_parquet` and pyarrow give back the same frames. Strings are
//! dictionary-encoded, everything else PLAIN; every page is Snappy-compressed. Row groups of
//! [`Options::group_rows`] rows, pages of [`Options::page_rows`]. The file carries key-value
//! metadata (the run's identity). The bytes depend only on the columns, the metadata and the
//! options: no clock, no thread, no hash order reaches them.
//!
//! Modules: [`thrift`] (the compact protocol of headers and footer), [`hybrid`] (the
//! RLE / bit-packing hybrid of levels and dictionary indices), [`chunk`] (pages of one
//! column chunk); this file lays out the file and its footer (`FileMetaData`).
//!
//! Reading: [`read`] reads back the files this writer writes (columns selected by name,
//! typed vectors out; `pilotsim explain` reads a run's tables with it), with
//! [`thrift_decode`] (the compact protocol, decoding) and [`read_chunk`] (one column chunk's
//! pages). With the writer and the reader our own, polars is only a dev-dependency: the tests
//! use it to prove that another reader reads our files.

mod chunk;
mod hybrid;
pub mod read;
mod read_chunk;
mod thrift;
mod thrift_decode;

pub use read::{Data, ReadError, Table};

use std::borrow::Cow;

/// The values of one column, one per row; `None` is null.
#[derive(Debug, Clone, PartialEq)]
pub enum Values<'a> {
    U32(Cow<'a, [Option<u32>]>),
    U64(Cow<'a, [Option<u64>]>),
    F64(Cow<'a, [Option<f64>]>),
    Bool(Cow<'a, [Option<bool>]>),
    Str(Vec<Option<&'a str>>),
    /// Strings as indices into `texts` (a column of few distinct texts and many rows, such as
    /// a job's CE): written exactly as the `Str` column of the same texts.
    Coded {
        texts: Vec<&'a str>,
        codes: Cow<'a, [Option<u32>]>,
    },
}

impl Values<'_> {
    pub fn len(&self) -> usize {
        match self {
            Values::U32(v) => v.len(),
            Values::U64(v) => v.len(),
            Values::F64(v) => v.len(),
            Values::Bool(v) => v.len(),
            Values::Str(v) => v.len(),
            Values::Coded { codes, .. } => codes.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Physical type, converted type and logical type (`Type`, `ConvertedType`,
    /// `LogicalType` of `parquet.thrift`).
    fn types(&self) -> (i32, Option<i32>, Logical) {
        match self {
            Values::U32(_) => (INT32, Some(13), Logical::Integer(32)),
            Values::U64(_) => (INT64, Some(14), Logical::Integer(64)),
            Values::F64(_) => (DOUBLE, None, Logical::None),
            Values::Bool(_) => (BOOLEAN, None, Logical::None),
            Values::Str(_) | Values::Coded { .. } => (BYTE_ARRAY, Some(0), Logical::String),
        }
    }
}

/// A named column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column<'a> {
    pub name: String,
    pub values: Values<'a>,
}

impl<'a> Column<'a> {
    pub fn new(name: impl Into<String>, values: Values<'a>) -> Self {
        Self { name: name.into(), values }
    }
}

/// Physical types (`Type`).
const BOOLEAN: i32 = 0;
const INT32: i32 = 1;
const INT64: i32 = 2;
const DOUBLE: i32 = 5;
const BYTE_ARRAY: i32 = 6;
/// `CompressionCodec.SNAPPY`: Parquet's usual codec (the default of pandas, pyarrow and Spark),
/// pure Rust through the `snap` crate. zstd compressed our tables ~15 % smaller, but its C
/// library took 42 s of CPU in the first build, a quarter of all the dependencies (issue 13).
const SNAPPY: i32 = 1;

enum Logical {
    None,
    String,
    /// Unsigned integer of this many bits.
    Integer(i8),
}

/// Why a table could not be encoded.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("column {name} has {len} rows, the table {rows}")]
    Ragged { name: String, len: usize, rows: usize },
    #[error("a string column's code {code} is past its {texts} texts")]
    CodeOutOfRange { code: u32, texts: usize },
    #[error("a Parquet page of {0} bytes is larger than the format allows")]
    PageTooLarge(usize),
    #[error("snappy: {0}")]
    Compress(snap::Error),
}

/// How the table is cut and compressed.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Rows per row group (readers can read row groups in parallel).
    pub group_rows: usize,
    /// Rows per data page.
    pub page_rows: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self { group_rows: 1 << 20, page_rows: 1 << 16 }
    }
}

/// The Parquet file of `columns` (all of one length), with key-value metadata.
pub fn write(columns: &[Column], metadata: &[(String, String)], options: Options) -> Result<Vec<u8>, Error> {
    let rows = columns.first().map_or(0, |c| c.values.len());
    if let Some(c) = columns.iter().find(|c| c.values.len() != rows) {
        return Err(Error::Ragged { name: c.name.clone(), len: c.values.len(), rows });
    }
    write_with(rows, metadata, options, |lo, _| Ok((columns, lo)))
}

/// The Parquet file of a table of `rows` rows whose columns `columns_of(lo, hi)` builds for
/// rows `lo..hi`, one row group at a time, so that only one row group's columns are in memory
/// (the jobs table of 10⁷ jobs: ~1.5 GB of columns at once, issue 13 item 4). The bytes are
/// those [`write`] makes of the whole columns: every chunk depends only on its rows.
pub fn write_groups<'c, C: AsRef<[Column<'c>]>>(
    rows: usize,
    metadata: &[(String, String)],
    options: Options,
    mut columns_of: impl FnMut(usize, usize) -> C,
) -> Result<Vec<u8>, Error> {
    write_with(rows, metadata, options, |lo, hi| {
        let columns = columns_of(lo, hi);
        if let Some(c) = columns.as_ref().iter().find(|c| c.values.len() != hi - lo) {
            return Err(Error::Ragged { name: c.name.clone(), len: c.values.len(), rows: hi - lo });
        }
        Ok((columns, 0))
    })
}

/// The row-group loop of both writers: `group(lo, hi)` gives columns holding rows `lo..hi` of
/// the table and where row `lo` is in them (the whole columns and `lo`, or one group's and 0).
/// The schema is the first group's (asked for rows `0..0` when there are no rows).
fn write_with<'c, C: AsRef<[Column<'c>]>>(
    rows: usize,
    metadata: &[(String, String)],
    options: Options,
    mut group: impl FnMut(usize, usize) -> Result<(C, usize), Error>,
) -> Result<Vec<u8>, Error> {
    let mut out = b"PAR1".to_vec();
    let mut groups = Vec::new();
    let mut schema = None;
    {
        let mut pages = chunk::Pages::new(&mut out);
        let mut lo = 0;
        while lo < rows {
            let hi = (lo + options.group_rows.max(1)).min(rows);
            let (columns, at) = group(lo, hi)?;
            let columns = columns.as_ref();
            let mut chunks = Vec::with_capacity(columns.len());
            for c in columns {
                chunks.push(chunk::write(&mut pages, &c.values, at, at + hi - lo, options.page_rows)?);
            }
            groups.push((hi - lo, chunks));
            schema.get_or_insert_with(|| schema_of(columns));
            lo = hi;
        }
    }
    let schema = match schema {
        Some(s) => s,
        None => schema_of(group(0, 0)?.0.as_ref()),
    };
    // The footer, its length and the closing magic.
    let footer_at = out.len();
    footer(&mut out, &schema, rows, &groups, metadata);
    let len = (out.len() - footer_at) as u32;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(b"PAR1");
    Ok(out)
}

impl Values<'_> {
    /// No values, of the same Parquet types (a column's place in the schema).
    fn empty_like(&self) -> Values<'static> {
        match self {
            Values::U32(_) => Values::U32(Cow::Owned(Vec::new())),
            Values::U64(_) => Values::U64(Cow::Owned(Vec::new())),
            Values::F64(_) => Values::F64(Cow::Owned(Vec::new())),
            Values::Bool(_) => Values::Bool(Cow::Owned(Vec::new())),
            Values::Str(_) | Values::Coded { .. } => Values::Str(Vec::new()),
        }
    }
}

/// The schema of `columns`: their names and types, without their values.
fn schema_of(columns: &[Column]) -> Vec<Column<'static>> {
    columns.iter().map(|c| Column::new(c.name.clone(), c.values.empty_like())).collect()
}

impl Data {
    /// The column's values as the writer takes them (numbers borrowed, strings as `&str`).
    pub fn values(&self) -> Values<'_> {
        match self {
            Data::U32(v) => Values::U32(Cow::Borrowed(v)),
            Data::U64(v) => Values::U64(Cow::Borrowed(v)),
            Data::F64(v) => Values::F64(Cow::Borrowed(v)),
            Data::Bool(v) => Values::Bool(Cow::Borrowed(v)),
            Data::Str(v) => Values::Str(v.iter().map(Option::as_deref).collect()),
        }
    }
}

/// The Parquet file of owned named columns (small tables such as the sweeps', built value by
/// value), with default [`Options`].
pub fn write_data(columns: &[(String, Data)], metadata: &[(String, String)]) -> Result<Vec<u8>, Error> {
    let cols: Vec<Column> = columns.iter().map(|(n, d)| Column::new(n.clone(), d.values())).collect();
    write(&cols, metadata, Options::default())
}

/// `FileMetaData`: version, schema, rows, row groups, key-value metadata, created_by.
fn footer(
    out: &mut Vec<u8>,
    columns: &[Column],
    rows: usize,
    groups: &[(usize, Vec<chunk::Chunk>)],
    metadata: &[(String, String)],
) {
    let mut w = thrift::Writer::new(out);
    w.begin();
    w.i32(1, 1);
    w.list(2, thrift::STRUCT, columns.len() + 1);
    // The root of the schema tree, then one leaf per column.
    w.begin();
    w.binary(4, b"root");
    w.i32(5, columns.len() as i32);
    w.end();
    for c in columns {
        let (physical, converted, logical) = c.values.types();
        w.begin();
        w.i32(1, physical);
        w.i32(3, 1); // OPTIONAL
        w.binary(4, c.name.as_bytes());
        if let Some(converted) = converted {
            w.i32(6, converted);
        }
        match logical {
            Logical::None => {}
            Logical::String => {
                w.field_struct(10);
                w.field_struct(1);
                w.end();
                w.end();
            }
            Logical::Integer(bits) => {
                w.field_struct(10);
                w.field_struct(10);
                w.i8(1, bits);
                w.bool(2, false);
                w.end();
                w.end();
            }
        }
        w.end();
    }
    w.i64(3, rows as i64);
    w.list(4, thrift::STRUCT, groups.len());
    for (ordinal, (group_rows, chunks)) in groups.iter().enumerate() {
        w.begin();
        w.list(1, thrift::STRUCT, chunks.len());
        for (c, k) in columns.iter().zip(chunks) {
            let first = k.dictionary_page_offset.unwrap_or(k.data_page_offset);
            w.begin(); // ColumnChunk
            w.i64(2, first);
            w.field_struct(3); // ColumnMetaData
            w.i32(1, c.values.types().0);
            w.list(2, thrift::LIST_I32, k.encodings.len());
            k.encodings.iter().for_each(|&e| w.elem_i32(e));
            w.list(3, thrift::LIST_BINARY, 1);
            w.elem_binary(c.name.as_bytes());
            w.i32(4, SNAPPY);
            w.i64(5, k.num_values);
            w.i64(6, k.uncompressed);
            w.i64(7, k.compressed);
            w.i64(9, k.data_page_offset);
            if let Some(d) = k.dictionary_page_offset {
                w.i64(11, d);
            }
            w.end();
            w.end();
        }
        w.i64(2, chunks.iter().map(|k| k.uncompressed).sum());
        w.i64(3, *group_rows as i64);
        let first = chunks.first().map_or(0, |k| k.dictionary_page_offset.unwrap_or(k.data_page_offset));
        w.i64(5, first);
        w.i64(6, chunks.iter().map(|k| k.compressed).sum());
        if let Ok(ordinal) = i16::try_from(ordinal) {
            w.i16(7, ordinal);
        }
        w.end();
    }
    w.list(5, thrift::STRUCT, metadata.len());
    for (k, v) in metadata {
        w.begin();
        w.binary(1, k.as_bytes());
        w.binary(2, v.as_bytes());
        w.end();
    }
    w.binary(6, concat!("pilotsim version ", env!("CARGO_PKG_VERSION")).as_bytes());
    w.end();
}

#[cfg(test)]
mod tests;
