//! `sweep.parquet` and `points.parquet` read back by polars: one row per run (or point), the
//! columns the README documents in order — ids, the varied values (numbers as Float64, any
//! other value as its text), then each metric (a point's as `.mean`, `.std`, `.ci95`) — nulls
//! where a run has no value, NaN kept.

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

fn read(table: &[(String, Data)]) -> DataFrame {
    let bytes = write_data(table, &[("k".into(), "v".into())]).unwrap();
    ParquetReader::new(Cursor::new(bytes)).finish().unwrap()
}

fn schema(df: &DataFrame) -> Vec<String> {
    df.columns().iter().map(|c| format!("{}:{}", c.name(), c.dtype())).collect()
}

#[test]
fn the_sweep_table_has_a_row_per_run_and_a_column_per_value_and_metric() {
    let df = read(&runs_table(&manifest(), &runs()));
    assert_eq!(
        schema(&df),
        ["run:str", "point:u32", "replica:u32", "seed:u64", "a.x:f64", "b:str", "m.share:f64", "z:f64"]
    );
    let b: Vec<Option<&str>> = df.column("b").unwrap().str().unwrap().iter().collect();
    assert_eq!(b, [Some("p"), Some("p"), Some("true"), Some("true")]);
    let z: Vec<Option<f64>> = df.column("z").unwrap().f64().unwrap().iter().collect();
    assert!(z[0] == Some(-0.0) && z[1].unwrap().is_nan() && z[2].is_none() && z[3] == Some(-3.0), "{z:?}");
    let seed: Vec<Option<u64>> = df.column("seed").unwrap().u64().unwrap().iter().collect();
    assert_eq!(seed[3], Some(u64::MAX - 3));
    let none = read(&runs_table(&manifest(), &[]));
    assert_eq!((none.height(), schema(&none)[..4].to_vec()), (0, schema(&df)[..4].to_vec()));
}

#[test]
fn the_points_table_has_a_row_per_point_and_mean_std_ci95_per_metric() {
    let df = read(&points_table(&summarise(&manifest(), &runs())));
    let names = schema(&df);
    assert_eq!(names[..4], ["point:u32", "a.x:f64", "b:str", "replicas:u32"]);
    assert_eq!(names[4..7], ["m.share.mean:f64", "m.share.std:f64", "m.share.ci95:f64"]);
    let mean: Vec<Option<f64>> = df.column("m.share.mean").unwrap().f64().unwrap().iter().collect();
    let want = [0.5 / 3.0, 2.5 / 3.0];
    assert!(mean.iter().zip(want).all(|(m, w)| (m.unwrap() - w).abs() < 1e-15), "{mean:?}");
}
