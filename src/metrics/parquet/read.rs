//! A small Parquet reader for the files [`super::write`] writes, so that `pilotsim explain`
//! can read a run's tables back without polars (which is only a dev-dependency: the tests
//! prove with it that other readers read our files).
//!
//! What it reads is what the writer writes: a flat schema (a root and leaves) of OPTIONAL (or
//! REQUIRED) columns — u32 (INT32 unsigned), u64 (INT64 unsigned), f64 (DOUBLE), booleans
//! and strings (BYTE_ARRAY) — in data pages v1 with RLE/bit-packed definition levels, numbers
//! and booleans PLAIN, strings dictionary-encoded (or PLAIN), pages uncompressed or Snappy, any
//! number of row groups and pages. Columns are selected by name and come back as typed
//! vectors ([`Data`]). Anything else (another type, encoding, codec, nested schema, corrupt
//! or truncated bytes) is a [`ReadError`] saying what was unexpected, never a panic.

use std::path::Path;

use super::thrift_decode::{Struct, Value, decode_struct};
use super::{BOOLEAN, BYTE_ARRAY, DOUBLE, INT32, INT64, SNAPPY};

/// One column's values, one per row; `None` is null.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    U32(Vec<Option<u32>>),
    U64(Vec<Option<u64>>),
    F64(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
    Str(Vec<Option<String>>),
}

impl Data {
    pub fn len(&self) -> usize {
        match self {
            Data::U32(v) => v.len(),
            Data::U64(v) => v.len(),
            Data::F64(v) => v.len(),
            Data::Bool(v) => v.len(),
            Data::Str(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The type's name, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Data::U32(_) => "u32",
            Data::U64(_) => "u64",
            Data::F64(_) => "f64",
            Data::Bool(_) => "bool",
            Data::Str(_) => "string",
        }
    }

    /// Rows `keep` (indices, in order).
    pub fn take(&self, keep: &[usize]) -> Data {
        fn pick<T: Clone>(v: &[T], keep: &[usize]) -> Vec<T> {
            keep.iter().map(|&i| v[i].clone()).collect()
        }
        match self {
            Data::U32(v) => Data::U32(pick(v, keep)),
            Data::U64(v) => Data::U64(pick(v, keep)),
            Data::F64(v) => Data::F64(pick(v, keep)),
            Data::Bool(v) => Data::Bool(pick(v, keep)),
            Data::Str(v) => Data::Str(pick(v, keep)),
        }
    }
}

/// The selected columns of a file, in the order asked for, and its key-value metadata.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub rows: usize,
    pub columns: Vec<(String, Data)>,
    pub metadata: Vec<(String, String)>,
}

impl Table {
    pub fn column(&self, name: &str) -> Option<&Data> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, d)| d)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.columns.iter().map(|(n, _)| n.as_str())
    }

    /// The rows `keep` (indices, in order) of every column.
    pub fn take(&self, keep: &[usize]) -> Table {
        Table {
            rows: keep.len(),
            columns: self.columns.iter().map(|(n, d)| (n.clone(), d.take(keep))).collect(),
            metadata: self.metadata.clone(),
        }
    }
}

/// Why a file could not be read: the file (when read from one) and what was unexpected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{message}", path.as_ref().map(|p| format!("{p}: ")).unwrap_or_default())]
pub struct ReadError {
    pub path: Option<String>,
    pub message: String,
}

fn err(message: impl Into<String>) -> ReadError {
    ReadError { path: None, message: message.into() }
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
    let footer = Footer::parse(&bytes).map_err(at)?;
    let present: Vec<&str> = names.iter().copied().filter(|n| footer.leaves.iter().any(|l| l.name == *n)).collect();
    select(&bytes, footer, &present).map_err(at)
}

/// The columns `names` (each must exist) of a Parquet file's bytes.
pub fn read(bytes: &[u8], names: &[&str]) -> Result<Table, ReadError> {
    select(bytes, Footer::parse(bytes)?, names)
}

fn select(bytes: &[u8], footer: Footer, names: &[&str]) -> Result<Table, ReadError> {
    let mut columns = Vec::with_capacity(names.len());
    for &name in names {
        let i = footer.leaves.iter().position(|l| l.name == name).ok_or_else(|| err(format!("no column {name}")))?;
        let leaf = &footer.leaves[i];
        let mut data = leaf.kind.empty(footer.rows);
        for (g, group) in footer.groups.iter().enumerate() {
            let before = data.len();
            let chunk = group.columns.get(i).ok_or_else(|| err(format!("row group {g} has no column {i}")))?;
            super::read_chunk::chunk(bytes, leaf, chunk, &mut data)
                .map_err(|m| err(format!("column {name}, row group {g}: {m}")))?;
            if data.len() - before != group.rows {
                return Err(err(format!(
                    "column {name}, row group {g}: {} values for {} rows",
                    data.len() - before,
                    group.rows
                )));
            }
        }
        columns.push((name.to_string(), data));
    }
    Ok(Table { rows: footer.rows, columns, metadata: footer.metadata })
}

/// The value types this reader reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Kind {
    U32,
    U64,
    F64,
    Bool,
    Str,
}

impl Kind {
    fn empty(self, rows: usize) -> Data {
        let n = rows.min(1 << 24);
        match self {
            Kind::U32 => Data::U32(Vec::with_capacity(n)),
            Kind::U64 => Data::U64(Vec::with_capacity(n)),
            Kind::F64 => Data::F64(Vec::with_capacity(n)),
            Kind::Bool => Data::Bool(Vec::with_capacity(n)),
            Kind::Str => Data::Str(Vec::with_capacity(n)),
        }
    }
}

/// A column of the schema.
pub(super) struct Leaf {
    pub name: String,
    pub kind: Kind,
    pub optional: bool,
}

struct Group {
    rows: usize,
    columns: Vec<Struct>,
}

/// What the reader needs of `FileMetaData`.
struct Footer {
    rows: usize,
    leaves: Vec<Leaf>,
    groups: Vec<Group>,
    metadata: Vec<(String, String)>,
}

fn text(b: &[u8], what: &str) -> Result<String, ReadError> {
    String::from_utf8(b.to_vec()).map_err(|_| err(format!("{what} is not UTF-8")))
}

fn count(v: i64, what: &str) -> Result<usize, ReadError> {
    usize::try_from(v).map_err(|_| err(format!("{what} is negative ({v})")))
}

impl Footer {
    fn parse(bytes: &[u8]) -> Result<Footer, ReadError> {
        let n = bytes.len();
        if n < 12 || &bytes[..4] != b"PAR1" || &bytes[n - 4..] != b"PAR1" {
            return Err(err(format!("not a Parquet file (no PAR1 magic at both ends of its {n} bytes)")));
        }
        let len = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().expect("4 bytes")) as usize;
        if len > n - 12 {
            return Err(err(format!("footer of {len} bytes does not fit in a file of {n} bytes (truncated?)")));
        }
        let (meta, _) = decode_struct(&bytes[n - 8 - len..n - 8]).map_err(|m| err(format!("footer: {m}")))?;
        let rows = count(meta.need_int(3, "num_rows").map_err(err)?, "num_rows")?;
        let schema = meta.list(2).ok_or_else(|| err("footer has no schema"))?;
        let mut leaves = Vec::new();
        for (k, el) in schema.iter().enumerate() {
            let Value::Struct(el) = el else { return Err(err("schema element is not a struct")) };
            let name = text(el.binary(4).unwrap_or_default(), "a column name")?;
            let children = el.int(5).unwrap_or(0);
            if k == 0 {
                if children != schema.len() as i64 - 1 {
                    return Err(err(format!(
                        "nested schema: the root has {children} children for {} elements (only flat tables are read)",
                        schema.len() - 1
                    )));
                }
                continue;
            }
            if children != 0 {
                return Err(err(format!("column {name} is a group (only flat tables are read)")));
            }
            let optional = match el.int(3) {
                Some(0) => false,
                Some(1) => true,
                r => {
                    return Err(err(format!(
                        "column {name} has repetition {r:?} (only REQUIRED and OPTIONAL are read)"
                    )));
                }
            };
            let kind = leaf_kind(el).ok_or_else(|| {
                err(format!(
                    "column {name} has physical type {:?}, converted type {:?}: not a type this reader reads \
                     (u32, u64, f64, bool, string)",
                    el.int(1),
                    el.int(6)
                ))
            })?;
            leaves.push(Leaf { name, kind, optional });
        }
        let mut groups = Vec::new();
        for g in meta.list(4).unwrap_or_default() {
            let Value::Struct(g) = g else { return Err(err("row group is not a struct")) };
            let rows = count(g.need_int(3, "row group num_rows").map_err(err)?, "row group num_rows")?;
            let mut columns = Vec::new();
            for c in g.list(1).unwrap_or_default() {
                let Value::Struct(c) = c else { return Err(err("column chunk is not a struct")) };
                columns.push(c.strukt(3).cloned().ok_or_else(|| err("column chunk without its metadata"))?);
            }
            if columns.len() != leaves.len() {
                return Err(err(format!(
                    "a row group has {} column chunks for {} columns",
                    columns.len(),
                    leaves.len()
                )));
            }
            groups.push(Group { rows, columns });
        }
        let total: usize = groups.iter().map(|g| g.rows).sum();
        if total != rows {
            return Err(err(format!("row groups hold {total} rows, the footer says {rows}")));
        }
        let mut metadata = Vec::new();
        for kv in meta.list(5).unwrap_or_default() {
            if let Value::Struct(kv) = kv {
                let k = text(kv.binary(1).unwrap_or_default(), "a metadata key")?;
                let v = text(kv.binary(2).unwrap_or_default(), "a metadata value")?;
                metadata.push((k, v));
            }
        }
        Ok(Footer { rows, leaves, groups, metadata })
    }
}

/// The kind of a schema leaf: physical type, then the unsigned-integer annotation (converted
/// type `UINT_32`/`UINT_64` or logical type `INTEGER(bits, unsigned)`).
fn leaf_kind(el: &Struct) -> Option<Kind> {
    let unsigned = |bits: i64, converted: i64| {
        el.int(6) == Some(converted)
            || el
                .strukt(10)
                .and_then(|l| l.strukt(10))
                .is_some_and(|i| i.int(1) == Some(bits) && i.get(2) == Some(&Value::Bool(false)))
    };
    match el.int(1)? as i32 {
        INT32 if unsigned(32, 13) => Some(Kind::U32),
        INT64 if unsigned(64, 14) => Some(Kind::U64),
        DOUBLE => Some(Kind::F64),
        BOOLEAN => Some(Kind::Bool),
        BYTE_ARRAY => Some(Kind::Str),
        _ => None,
    }
}

/// A page body, decompressed with the chunk's codec.
pub(super) fn decompress(codec: i64, body: &[u8], size: usize) -> Result<Vec<u8>, String> {
    match codec {
        0 => Ok(body.to_vec()),
        c if c == i64::from(SNAPPY) => {
            match snap::raw::decompress_len(body) {
                Ok(n) if n == size => {}
                Ok(n) => return Err(format!("page decompresses to {n} bytes, its header says {size}")),
                Err(e) => return Err(format!("snappy: {e}")),
            }
            snap::raw::Decoder::new().decompress_vec(body).map_err(|e| format!("snappy: {e}"))
        }
        c => Err(format!(
            "compression codec {c} (only uncompressed and Snappy are read: a file of an older pilotsim? run it again)"
        )),
    }
}
