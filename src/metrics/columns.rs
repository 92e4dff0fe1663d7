//! A table's columns in memory, and their polars form.
//!
//! The run's tables are built straight from the simulation's vectors as [`Column`]s of typed
//! [`Values`] (`metrics::tables`): names repeated on many rows (a job's stream, site, CE) are
//! indices into their few texts ([`Values::Coded`]), never a string per row. [`to_frame`]
//! makes the polars `DataFrame` of them, which `metrics::parquet` writes and the Python
//! package hands to a notebook; [`Table`] and [`Data`] are columns read back by name, owned
//! and typed, for `explain` and the sweeps.
//!
//! Types (the Parquet types polars writes for them): u32 → UInt32 (INT32, unsigned), u64 →
//! UInt64 (INT64, unsigned), f64 → Float64 (DOUBLE), booleans → Boolean, texts → String
//! (BYTE_ARRAY, `STRING`). Every column is nullable (`None` is null).

use std::borrow::Cow;

use polars::prelude::{
    BooleanChunked, Column as PlColumn, DataFrame, DataType, Float64Chunked, IntoColumn, IntoSeries, NewChunkedArray,
    PolarsError, PolarsResult, Series, StringChunked, UInt32Chunked, UInt64Chunked,
};

/// The values of one column, one per row; `None` is null.
#[derive(Debug, Clone, PartialEq)]
pub enum Values<'a> {
    U32(Cow<'a, [Option<u32>]>),
    U64(Cow<'a, [Option<u64>]>),
    F64(Cow<'a, [Option<f64>]>),
    Bool(Cow<'a, [Option<bool>]>),
    Str(Vec<Option<&'a str>>),
    /// Strings as indices into `texts` (a column of few distinct texts and many rows, such as
    /// a job's CE): the same String column as the `Str` column of the same texts.
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

    /// The polars Series of these values, named `name`. A code past its texts is an error.
    pub fn to_series(&self, name: &str) -> PolarsResult<Series> {
        let name = name.into();
        Ok(match self {
            Values::U32(v) => UInt32Chunked::from_slice_options(name, v).into_series(),
            Values::U64(v) => UInt64Chunked::from_slice_options(name, v).into_series(),
            Values::F64(v) => Float64Chunked::from_slice_options(name, v).into_series(),
            Values::Bool(v) => BooleanChunked::from_slice_options(name, v).into_series(),
            Values::Str(v) => StringChunked::from_slice_options(name, v).into_series(),
            Values::Coded { texts, codes } => {
                let text = |c: &Option<u32>| -> PolarsResult<Option<&str>> {
                    c.map(|i| {
                        texts.get(i as usize).copied().ok_or_else(|| {
                            PolarsError::ComputeError(
                                format!("column {name}: code {i} is past its {} texts", texts.len()).into(),
                            )
                        })
                    })
                    .transpose()
                };
                let strings = codes.iter().map(text).collect::<PolarsResult<Vec<_>>>()?;
                StringChunked::from_slice_options(name, &strings).into_series()
            }
        })
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

/// The DataFrame of `columns` (all of one length; a ragged table is an error naming the
/// column).
pub fn to_frame(columns: &[Column]) -> PolarsResult<DataFrame> {
    let rows = columns.first().map_or(0, |c| c.values.len());
    if let Some(c) = columns.iter().find(|c| c.values.len() != rows) {
        return Err(PolarsError::ShapeMismatch(
            format!("column {} has {} rows, the table {rows}", c.name, c.values.len()).into(),
        ));
    }
    let cols = columns.iter().map(|c| Ok(c.values.to_series(&c.name)?.into_column())).collect::<PolarsResult<_>>()?;
    DataFrame::new(rows, cols)
}

/// One column's values, owned, one per row; `None` is null.
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

    /// The column's values as [`Values`] (numbers borrowed, strings as `&str`).
    pub fn values(&self) -> Values<'_> {
        match self {
            Data::U32(v) => Values::U32(Cow::Borrowed(v)),
            Data::U64(v) => Values::U64(Cow::Borrowed(v)),
            Data::F64(v) => Values::F64(Cow::Borrowed(v)),
            Data::Bool(v) => Values::Bool(Cow::Borrowed(v)),
            Data::Str(v) => Values::Str(v.iter().map(Option::as_deref).collect()),
        }
    }

    /// The values of a polars column of one of the five types (a Categorical one as its
    /// texts); another type is an error naming it.
    pub fn from_column(c: &PlColumn) -> PolarsResult<Data> {
        Ok(match c.dtype() {
            DataType::UInt32 => Data::U32(c.u32()?.iter().collect()),
            DataType::UInt64 => Data::U64(c.u64()?.iter().collect()),
            DataType::Float64 => Data::F64(c.f64()?.iter().collect()),
            DataType::Boolean => Data::Bool(c.bool()?.iter().collect()),
            DataType::String => Data::Str(c.str()?.iter().map(|s| s.map(String::from)).collect()),
            DataType::Categorical(..) | DataType::Enum(..) => {
                Data::Str(c.cast(&DataType::String)?.str()?.iter().map(|s| s.map(String::from)).collect())
            }
            other => {
                return Err(PolarsError::SchemaMismatch(
                    format!("column {}: type {other}, expected u32, u64, f64, bool or string", c.name()).into(),
                ));
            }
        })
    }
}

/// Selected columns of a file, in the order asked for, and its key-value metadata.
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
