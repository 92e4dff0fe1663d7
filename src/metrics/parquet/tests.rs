//! Round trips: every column type, with and without nulls, NaN, empty strings, empty tables,
//! many row groups and their statistics, the key-value metadata; a table written a row group
//! at a time has the bytes of the whole; bad tables and corrupt files are errors.

use std::borrow::Cow;
use std::io::Cursor;

use polars::prelude::{DataFrame, ParquetReader, SerReader};

use super::super::columns::{Column, Data, Values, to_frame};
use super::{read, write_groups_in, write_in};

/// A table of every type, `n` rows, nulls where `null(i)`.
fn table(n: usize, null: impl Fn(usize) -> bool) -> Vec<Column<'static>> {
    fn opt<T>(null: bool, v: T) -> Option<T> {
        if null { None } else { Some(v) }
    }
    let texts: Vec<String> = (0..n).map(|i| format!("t{}", (i * 7) % 13)).collect();
    let texts: &'static [String] = Box::leak(texts.into_boxed_slice());
    vec![
        Column::new("u32", Values::U32((0..n).map(|i| opt(null(i), (i as u32).wrapping_mul(3_000_017))).collect())),
        Column::new("u64", Values::U64((0..n).map(|i| opt(null(i), u64::MAX - i as u64)).collect())),
        Column::new(
            "f64",
            Values::F64((0..n).map(|i| opt(null(i), if i % 5 == 0 { f64::NAN } else { i as f64 * -0.25 })).collect()),
        ),
        Column::new("bool", Values::Bool((0..n).map(|i| opt(null(i), i % 3 == 0)).collect())),
        Column::new("str", Values::Str((0..n).map(|i| opt(null(i), texts[i].as_str())).collect())),
        Column::new(
            "coded",
            Values::Coded {
                texts: vec!["", "alpha", "β-γ", "long text of a skip message"],
                codes: (0..n).map(|i| opt(null(i), (i % 4) as u32)).collect::<Vec<_>>().into(),
            },
        ),
    ]
}

/// What reading a column back must give (the texts of a `Coded` column).
fn owned(v: &Values) -> Data {
    match v {
        Values::U32(v) => Data::U32(v.to_vec()),
        Values::U64(v) => Data::U64(v.to_vec()),
        Values::F64(v) => Data::F64(v.to_vec()),
        Values::Bool(v) => Data::Bool(v.to_vec()),
        Values::Str(v) => Data::Str(v.iter().map(|s| s.map(String::from)).collect()),
        Values::Coded { texts, codes } => {
            Data::Str(codes.iter().map(|c| c.map(|i| texts[i as usize].into())).collect())
        }
    }
}

fn polars_read(bytes: &[u8]) -> DataFrame {
    ParquetReader::new(Cursor::new(bytes)).finish().expect("polars reads the file")
}

/// Written twice the same bytes; read back (ours, in any column order, and polars' whole
/// frame) as written, NaN compared through `Debug`.
fn round_trip(n: usize, null: impl Fn(usize) -> bool, group_rows: usize) {
    let columns = table(n, null);
    let bytes = write_in(&columns, &[], group_rows).unwrap();
    assert!(write_in(&columns, &[], group_rows).unwrap() == bytes, "deterministic");
    let mut names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    let got = read(&bytes, &names).unwrap();
    let want: Vec<(String, Data)> = columns.iter().map(|c| (c.name.clone(), owned(&c.values))).collect();
    assert_eq!(format!("{:?}", got.columns), format!("{want:?}"), "{n} rows");
    assert_eq!(got.rows, n);
    names.reverse();
    assert_eq!(read(&bytes, &names).unwrap().names().collect::<Vec<_>>(), names);
    let frame = polars_read(&bytes);
    assert!(frame.equals_missing(&to_frame(&columns).unwrap()), "{n} rows:\n{frame}");
}

#[test]
fn every_type_round_trips_with_and_without_nulls() {
    for n in [1, 2, 8, 9, 30] {
        round_trip(n, |_| false, 7);
        round_trip(n, |i| i % 3 == 1, 7);
        round_trip(n, |_| true, 7);
        round_trip(n, |i| i % 3 == 1, super::GROUP_ROWS);
    }
    round_trip(300_000, |i| i % 1000 < 10 || i % 7 == 3, 100_000);
}

#[test]
fn empty_tables_keep_their_columns_and_types() {
    let columns = table(0, |_| false);
    let bytes = write_in(&columns, &[], 7).unwrap();
    let got = polars_read(&bytes);
    assert_eq!(got.height(), 0);
    assert_eq!(got.schema(), to_frame(&columns).unwrap().schema());
}

#[test]
fn row_groups_carry_statistics() {
    let columns = table(30, |i| i == 3);
    let bytes = write_in(&columns, &[], 7).unwrap();
    let mut reader = ParquetReader::new(Cursor::new(&bytes[..]));
    let meta = reader.get_metadata().unwrap().clone();
    assert_eq!(meta.row_groups.len(), 5, "30 rows in groups of 7");
    for g in &meta.row_groups {
        for c in g.parquet_columns() {
            let s = c.statistics(&meta.footer_buf).expect("every column chunk has statistics").unwrap();
            assert!(s.null_count().is_some(), "{:?}", c.descriptor().path_in_schema);
        }
    }
}

#[test]
fn nan_and_empty_strings_survive_as_values() {
    let columns = vec![
        Column::new("x", Values::F64(Cow::Owned(vec![Some(f64::NAN), None, Some(-0.0), Some(f64::INFINITY)]))),
        Column::new("s", Values::Str(vec![Some(""), None, Some(""), Some("a")])),
    ];
    let t = read(&write_in(&columns, &[], 7).unwrap(), &["x", "s"]).unwrap();
    let Some(Data::F64(x)) = t.column("x") else { panic!("{t:?}") };
    assert!(x[0].unwrap().is_nan() && x[1].is_none());
    assert_eq!(x[2].unwrap().to_bits(), (-0.0f64).to_bits());
    assert_eq!(x[3], Some(f64::INFINITY));
    assert_eq!(t.column("s"), Some(&Data::Str(vec![Some("".into()), None, Some("".into()), Some("a".into())])));
}

#[test]
fn key_value_metadata_is_kept() {
    let meta = vec![("pilotsim.seed".to_string(), "42".to_string()), ("pilotsim.digest".into(), "ab".into())];
    let t = read(&write_in(&table(3, |_| false), &meta, 7).unwrap(), &["u32"]).unwrap();
    assert_eq!(t.metadata, meta);
}

#[test]
fn bad_tables_are_errors_not_panics() {
    let ragged = [Column::new("a", Values::U32(vec![Some(1)].into())), Column::new("b", Values::U32(vec![].into()))];
    let e = write_in(&ragged, &[], 7).unwrap_err().to_string();
    assert!(e.contains("column b has 0 rows, the table 1"), "{e}");
    let bad_code = [Column::new("c", Values::Coded { texts: vec!["x"], codes: vec![Some(0), Some(1)].into() })];
    let e = write_in(&bad_code, &[], 7).unwrap_err().to_string();
    assert!(e.contains("column c: code 1 is past its 1 texts"), "{e}");
}

#[test]
fn corrupt_and_truncated_files_are_errors() {
    let columns = table(40, |i| i % 5 == 2);
    let bytes = write_in(&columns, &[("k".into(), "v".into())], 16).unwrap();
    for cut in [0, 3, 4, 100, bytes.len() / 2, bytes.len() - 9, bytes.len() - 1] {
        assert!(read(&bytes[..cut], &["u32"]).is_err(), "cut at {cut} reads");
    }
    assert_eq!(read(&bytes, &["nope"]).unwrap_err().to_string(), "no column nope");
    assert!(read(b"PAR1 not a parquet file", &["u32"]).unwrap_err().to_string().starts_with("not a Parquet file"));
    let e = super::read_file(std::path::Path::new("/nonexistent/x.parquet"), &["a"]).unwrap_err();
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
    for (n, group_rows) in [(30, 7), (0, 7), (1000, 1000), (1001, 1000)] {
        let columns = table(n, |i| i % 4 == 2);
        let whole = write_in(&columns, &meta, group_rows).unwrap();
        let mut asked = Vec::new();
        let grouped = write_groups_in(n, &meta, group_rows, |lo, hi| {
            asked.push((lo, hi));
            let part: Vec<Column> =
                columns.iter().map(|c| Column::new(c.name.clone(), rows(&c.values, lo, hi))).collect();
            Ok(to_frame(&part)?)
        })
        .unwrap();
        assert!(grouped == whole, "{n} rows: the bytes differ");
        assert_eq!(
            asked.len(),
            n.div_ceil(group_rows).max(1),
            "{n} rows: one call per row group (or one for the schema)"
        );
    }
}
