//! Round trips through polars' Parquet reader: every column type, with and without nulls,
//! NaN, empty strings, empty tables, many pages and row groups, and the key-value metadata;
//! our own reader ([`super::read`]) reads the same files back, and corrupt ones are errors.

use std::borrow::Cow;
use std::io::Cursor;

use polars::prelude::*;

use super::{Column as PqColumn, Data, Error, Options, Values, write};

fn read(bytes: Vec<u8>) -> DataFrame {
    ParquetReader::new(Cursor::new(bytes)).finish().expect("polars reads the file")
}

/// A table of every type, `n` rows, nulls where `null(i)`.
fn table(n: usize, null: impl Fn(usize) -> bool) -> (Vec<PqColumn<'static>>, Vec<String>) {
    fn opt<T>(null: bool, v: T) -> Option<T> {
        if null { None } else { Some(v) }
    }
    let texts: Vec<String> = (0..n).map(|i| format!("t{}", (i * 7) % 13)).collect();
    let texts: &'static [String] = Box::leak(texts.into_boxed_slice());
    let pool = vec!["", "alpha", "β-γ", "long text of a skip message"];
    let columns = vec![
        PqColumn::new("u32", Values::U32((0..n).map(|i| opt(null(i), (i as u32).wrapping_mul(3_000_017))).collect())),
        PqColumn::new("u64", Values::U64((0..n).map(|i| opt(null(i), u64::MAX - i as u64)).collect())),
        PqColumn::new(
            "f64",
            Values::F64((0..n).map(|i| opt(null(i), if i % 5 == 0 { f64::NAN } else { i as f64 * -0.25 })).collect()),
        ),
        PqColumn::new("bool", Values::Bool((0..n).map(|i| opt(null(i), i % 3 == 0)).collect())),
        PqColumn::new("str", Values::Str((0..n).map(|i| opt(null(i), texts[i].as_str())).collect())),
        PqColumn::new(
            "coded",
            Values::Coded {
                texts: pool,
                codes: (0..n).map(|i| opt(null(i), (i % 4) as u32)).collect::<Vec<_>>().into(),
            },
        ),
    ];
    let names = columns.iter().map(|c| c.name.clone()).collect();
    (columns, names)
}

/// Our reader reads every column back as written (strings of a `Coded` column as texts), in
/// any order asked, with the metadata; NaN compared as a value (through `Debug`).
fn ours(bytes: &[u8], columns: &[PqColumn], meta: &[(String, String)]) {
    let want: Vec<(String, Data)> = columns
        .iter()
        .map(|c| {
            let d = match &c.values {
                Values::U32(v) => Data::U32(v.to_vec()),
                Values::U64(v) => Data::U64(v.to_vec()),
                Values::F64(v) => Data::F64(v.to_vec()),
                Values::Bool(v) => Data::Bool(v.to_vec()),
                Values::Str(v) => Data::Str(v.iter().map(|s| s.map(String::from)).collect()),
                Values::Coded { texts, codes } => {
                    Data::Str(codes.iter().map(|c| c.map(|i| texts[i as usize].to_string())).collect())
                }
            };
            (c.name.clone(), d)
        })
        .collect();
    let mut names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    let got = super::read::read(bytes, &names).expect("our reader reads the file");
    assert_eq!(format!("{:?}", got.columns), format!("{want:?}"));
    assert_eq!(got.rows, columns.first().map_or(0, |c| c.values.len()));
    assert_eq!(got.metadata, meta);
    names.reverse();
    let got = super::read::read(bytes, &names).unwrap();
    assert_eq!(got.names().collect::<Vec<_>>(), names);
}

/// The frame polars builds from the same values, the oracle.
fn expected(columns: &[PqColumn]) -> DataFrame {
    let cols: Vec<Column> = columns
        .iter()
        .map(|c| {
            let name = c.name.as_str().into();
            match &c.values {
                Values::U32(v) => Column::new(name, v.as_ref()),
                Values::U64(v) => Column::new(name, v.as_ref()),
                Values::F64(v) => Column::new(name, v.as_ref()),
                Values::Bool(v) => Column::new(name, v.as_ref()),
                Values::Str(v) => Column::new(name, v.as_slice()),
                Values::Coded { texts, codes } => {
                    Column::new(name, codes.iter().map(|c| c.map(|i| texts[i as usize])).collect::<Vec<Option<&str>>>())
                }
            }
        })
        .collect();
    DataFrame::new_infer_height(cols).unwrap()
}

fn round_trip(n: usize, null: impl Fn(usize) -> bool, options: Options) {
    let (columns, _) = table(n, null);
    let bytes = write(&columns, &[], options).unwrap();
    assert_eq!(write(&columns, &[], options).unwrap(), bytes, "deterministic");
    ours(&bytes, &columns, &[]);
    let got = read(bytes);
    let want = expected(&columns);
    assert_eq!(got.schema(), want.schema(), "{n} rows");
    // equals_missing: null == null, and NaN compared by value.
    assert!(got.equals_missing(&want), "{n} rows:\n{got}\n{want}");
}

#[test]
fn every_type_round_trips_with_and_without_nulls() {
    let small = Options { group_rows: 7, page_rows: 3 };
    for n in [1, 2, 8, 9, 30] {
        round_trip(n, |_| false, small);
        round_trip(n, |i| i % 3 == 1, small);
        round_trip(n, |_| true, small);
        round_trip(n, |i| i % 3 == 1, Options::default());
    }
}

#[test]
fn large_columns_span_pages_and_row_groups() {
    round_trip(300_000, |i| i % 1000 < 10 || i % 7 == 3, Options { group_rows: 100_000, ..Options::default() });
    round_trip(70_000, |_| false, Options::default());
}

#[test]
fn empty_tables_keep_their_columns_and_types() {
    let (columns, names) = table(0, |_| false);
    let got = read(write(&columns, &[], Options::default()).unwrap());
    assert_eq!(got.height(), 0);
    let got_names: Vec<&str> = got.get_column_names().into_iter().map(|s| s.as_str()).collect();
    assert_eq!(got_names, names.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(got.schema(), expected(&columns).schema());
}

#[test]
fn nan_and_empty_strings_survive_as_values() {
    let columns = vec![
        PqColumn::new("x", Values::F64(Cow::Owned(vec![Some(f64::NAN), None, Some(-0.0), Some(f64::INFINITY)]))),
        PqColumn::new("s", Values::Str(vec![Some(""), None, Some(""), Some("a")])),
    ];
    let bytes = write(&columns, &[], Options::default()).unwrap();
    ours(&bytes, &columns, &[]);
    let got = read(bytes);
    let x = got.column("x").unwrap().f64().unwrap();
    let x: Vec<Option<f64>> = (0..4).map(|i| x.get(i)).collect();
    assert!(x[0].unwrap().is_nan() && x[1].is_none());
    assert_eq!(x[2].unwrap().to_bits(), (-0.0f64).to_bits());
    assert_eq!(x[3], Some(f64::INFINITY));
    let s = got.column("s").unwrap().str().unwrap();
    let s: Vec<Option<&str>> = (0..4).map(|i| s.get(i)).collect();
    assert_eq!(s, [Some(""), None, Some(""), Some("a")]);
}

#[test]
fn key_value_metadata_is_kept() {
    let (columns, _) = table(3, |_| false);
    let meta = vec![("pilotsim.seed".to_string(), "42".to_string()), ("pilotsim.digest".into(), "ab".into())];
    let bytes = write(&columns, &meta, Options::default()).unwrap();
    ours(&bytes, &columns, &meta);
    let mut reader = ParquetReader::new(Cursor::new(bytes));
    let kv = reader.get_metadata().unwrap().key_value_metadata().clone().unwrap();
    let kv: Vec<(String, Option<String>)> = kv.into_iter().map(|k| (k.key, k.value)).collect();
    assert_eq!(kv, [("pilotsim.seed".into(), Some("42".into())), ("pilotsim.digest".into(), Some("ab".into()))]);
}

#[test]
fn bad_tables_are_errors_not_panics() {
    let ragged =
        [PqColumn::new("a", Values::U32(vec![Some(1)].into())), PqColumn::new("b", Values::U32(vec![].into()))];
    assert!(matches!(write(&ragged, &[], Options::default()), Err(Error::Ragged { .. })));
    let bad_code = [PqColumn::new("c", Values::Coded { texts: vec!["x"], codes: vec![Some(0), Some(1)].into() })];
    assert!(matches!(write(&bad_code, &[], Options::default()), Err(Error::CodeOutOfRange { code: 1, texts: 1 })));
}

/// The error of reading `bytes`' column `c`, which must not be a panic.
fn read_err(bytes: &[u8], c: &str) -> Option<String> {
    std::panic::catch_unwind(|| super::read::read(bytes, &[c]).err().map(|e| e.to_string()))
        .unwrap_or_else(|_| panic!("reader panicked"))
}

#[test]
fn corrupt_and_truncated_files_are_errors_not_panics() {
    let (columns, names) = table(40, |i| i % 5 == 2);
    let small = Options { group_rows: 16, page_rows: 6 };
    let bytes = write(&columns, &[("k".into(), "v".into())], small).unwrap();
    for cut in (0..bytes.len()).step_by(7) {
        for c in &names {
            assert!(read_err(&bytes[..cut], c).is_some(), "cut at {cut} reads");
        }
    }
    // Flipped bytes: an error or (where the byte is a value) other values, never a panic.
    for at in 0..bytes.len() {
        let mut b = bytes.clone();
        b[at] ^= 0x5A;
        for c in &names {
            let _ = read_err(&b, c);
        }
    }
    assert_eq!(read_err(&bytes, "nope").unwrap(), "no column nope");
    assert!(read_err(b"PAR1 not a parquet file", "u32").unwrap().contains("magic"));
    let e = super::read::read_file(std::path::Path::new("/nonexistent/x.parquet"), &["a"]).unwrap_err();
    assert!(e.to_string().starts_with("/nonexistent/x.parquet: cannot read"), "{e}");
}

/// Rows `lo..hi` of a column's values, borrowed.
fn rows<'a>(v: &'a Values, lo: usize, hi: usize) -> Values<'a> {
    match v {
        Values::U32(x) => Values::U32(Cow::Borrowed(&x[lo..hi])),
        Values::U64(x) => Values::U64(Cow::Borrowed(&x[lo..hi])),
        Values::F64(x) => Values::F64(Cow::Borrowed(&x[lo..hi])),
        Values::Bool(x) => Values::Bool(Cow::Borrowed(&x[lo..hi])),
        Values::Str(x) => Values::Str(x[lo..hi].to_vec()),
        Values::Coded { texts, codes } => Values::Coded { texts: texts.clone(), codes: Cow::Borrowed(&codes[lo..hi]) },
    }
}

#[test]
fn a_table_written_a_row_group_at_a_time_has_the_same_bytes() {
    let meta = vec![("k".to_string(), "v".to_string())];
    for (n, options) in [
        (30, Options { group_rows: 7, page_rows: 3 }),
        (0, Options::default()),
        (1000, Options { group_rows: 1000, page_rows: 64 }),
    ] {
        let (columns, _) = table(n, |i| i % 4 == 2);
        let whole = write(&columns, &meta, options).unwrap();
        let mut asked = Vec::new();
        let grouped = super::write_groups(n, &meta, options, |lo, hi| {
            asked.push((lo, hi));
            columns.iter().map(|c| PqColumn::new(c.name.clone(), rows(&c.values, lo, hi))).collect::<Vec<_>>()
        })
        .unwrap();
        assert_eq!(grouped, whole, "{n} rows");
        let groups = n.div_ceil(options.group_rows).max(1);
        assert_eq!(asked.len(), groups, "{n} rows: one call per row group (or one for the schema)");
    }
}
