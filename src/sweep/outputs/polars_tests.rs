//! `sweep.parquet` and `points.parquet` as our writer writes them read back by polars equal
//! to the frames polars built and wrote before (the code that wrote them is kept here as the
//! oracle): same column names, order, types and values, nulls and NaN included; and our own
//! reader reads the same values.

use std::io::Cursor;

use polars::prelude::*;
use serde_json::json;

use super::*;
use crate::metrics::points::Vary;

fn manifest() -> Manifest {
    Manifest {
        scenario: "s.ron".into(),
        scenario_sha256: "ab".into(),
        pilotsim_version: "0.1.0".into(),
        master_seed: 42,
        replicas: 2,
        vary: vec![
            Vary { path: "a.x".into(), spec: "1,2.5".into(), values: vec![json!(1), json!(2.5)] },
            Vary { path: "b".into(), spec: "p,q".into(), values: vec![json!("p"), json!(true)] },
        ],
        runs: 4,
    }
}

fn runs() -> Vec<RunRecord> {
    (0..4)
        .map(|i| {
            let mut metrics = BTreeMap::from([("m.share".to_string(), i as f64 / 3.0)]);
            if i != 2 {
                metrics.insert("z".into(), if i == 1 { f64::NAN } else { -(i as f64) });
            }
            RunRecord {
                run: format!("p{}r{}", i / 2, i % 2),
                index: i,
                point: i / 2,
                replica: (i % 2) as u32,
                seed: u64::MAX - i as u64,
                values: BTreeMap::from([
                    ("a.x".to_string(), if i < 2 { json!(1) } else { json!(2.5) }),
                    ("b".to_string(), if i < 2 { json!("p") } else { json!(true) }),
                ]),
                metrics,
            }
        })
        .collect()
}

/// The frame of `cols` as the polars code built it.
fn polars_frame(cols: Vec<Column>) -> Vec<u8> {
    let mut df = DataFrame::new_infer_height(cols).unwrap();
    crate::metrics::frames::to_parquet(&mut df, vec![("k".into(), "v".into())]).unwrap()
}

fn polars_value_column(name: &str, values: Vec<Option<&Value>>) -> Column {
    if values.iter().all(|v| v.is_some_and(Value::is_number)) {
        Column::new(name.into(), values.iter().map(|v| v.and_then(Value::as_f64)).collect::<Vec<_>>())
    } else {
        let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
        Column::new(name.into(), values.iter().map(|v| v.map(text)).collect::<Vec<_>>())
    }
}

/// What the polars code wrote for `sweep.parquet`.
fn polars_runs(m: &Manifest, runs: &[RunRecord]) -> Vec<u8> {
    let mut cols = vec![
        Column::new("run".into(), runs.iter().map(|r| r.run.clone()).collect::<Vec<_>>()),
        Column::new("point".into(), runs.iter().map(|r| r.point as u32).collect::<Vec<_>>()),
        Column::new("replica".into(), runs.iter().map(|r| r.replica).collect::<Vec<_>>()),
        Column::new("seed".into(), runs.iter().map(|r| r.seed).collect::<Vec<_>>()),
    ];
    for v in &m.vary {
        cols.push(polars_value_column(&v.path, runs.iter().map(|r| r.values.get(&v.path)).collect()));
    }
    let names: BTreeSet<&String> = runs.iter().flat_map(|r| r.metrics.keys()).collect();
    for k in names {
        cols.push(Column::new(k.as_str().into(), runs.iter().map(|r| r.metrics.get(k).copied()).collect::<Vec<_>>()));
    }
    polars_frame(cols)
}

/// What the polars code wrote for `points.parquet`.
fn polars_points(p: &Points) -> Vec<u8> {
    let pts = &p.points;
    let mut cols = vec![Column::new("point".into(), pts.iter().map(|x| x.index as u32).collect::<Vec<_>>())];
    for v in &p.vary {
        cols.push(polars_value_column(&v.path, pts.iter().map(|x| x.values.get(&v.path)).collect()));
    }
    cols.push(Column::new(
        "replicas".into(),
        pts.iter().map(|x| x.metrics.values().map(|s| s.n).max().unwrap_or(0)).collect::<Vec<_>>(),
    ));
    let names: BTreeSet<&String> = pts.iter().flat_map(|x| x.metrics.keys()).collect();
    for k in names {
        let get = |f: &dyn Fn(&PointStat) -> Option<f64>| {
            pts.iter().map(|x| x.metrics.get(k).and_then(f)).collect::<Vec<_>>()
        };
        cols.push(Column::new(format!("{k}.mean").into(), get(&|s| Some(s.mean))));
        cols.push(Column::new(format!("{k}.std").into(), get(&|s| Some(s.std))));
        cols.push(Column::new(format!("{k}.ci95").into(), get(&|s| s.ci95)));
    }
    polars_frame(cols)
}

fn read(bytes: Vec<u8>) -> DataFrame {
    ParquetReader::new(Cursor::new(bytes)).finish().unwrap()
}

/// Ours and polars' files read by polars give the same frame; ours read by our reader give
/// the columns written.
fn same(ours: &[(String, Data)], theirs: Vec<u8>) {
    let bytes = write_data(ours, &[("k".into(), "v".into())]).unwrap();
    let names: Vec<&str> = ours.iter().map(|(n, _)| n.as_str()).collect();
    let back = crate::metrics::parquet::read::read(&bytes, &names).unwrap();
    assert_eq!(format!("{:?}", back.columns), format!("{ours:?}"));
    let (got, want) = (read(bytes), read(theirs));
    assert_eq!(got.schema(), want.schema());
    assert!(got.equals_missing(&want), "{got}\n{want}");
}

#[test]
fn sweep_tables_read_back_as_the_polars_ones() {
    let (m, runs) = (manifest(), runs());
    same(&runs_table(&m, &runs), polars_runs(&m, &runs));
    let points = summarise(&m, &runs);
    same(&points_table(&points), polars_points(&points));
    let none: Vec<RunRecord> = Vec::new();
    same(&runs_table(&m, &none), polars_runs(&m, &none));
}
