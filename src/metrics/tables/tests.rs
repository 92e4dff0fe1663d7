//! The files a run writes read back (polars' reader) equal to the frames of the run's columns,
//! with the run's identity as key-value metadata and the same bytes at a rerun — for the DIRAC
//! quickstart and the PanDA quickstart (brokerage, transfers, the WMS's own columns) — and
//! their schemas are the documented ones (README "Outputs"), which notebooks rely on.

use std::path::Path;

use polars::prelude::*;

use super::{jobs, pilots, timeseries, transfers, wms_table};
use crate::metrics::columns::to_frame;

fn read(path: &Path) -> (DataFrame, Vec<(String, Option<String>)>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = ParquetReader::new(file);
    let kv = reader.get_metadata().unwrap().key_value_metadata().clone().unwrap_or_default();
    let kv = kv.into_iter().filter(|k| k.key != "ARROW:schema").map(|k| (k.key, k.value)).collect();
    (reader.finish().unwrap(), kv)
}

/// The names and types of a frame's columns, as `name:type`.
fn schema(df: &DataFrame) -> Vec<String> {
    df.columns().iter().map(|c| format!("{}:{}", c.name(), c.dtype())).collect()
}

fn check(loaded: &crate::scenario::Loaded, name: &str) -> Vec<(String, Vec<String>)> {
    let p = crate::run::prepare(loaded, &[]).unwrap();
    let mut finished = crate::run::simulate(&p, 1, |_, _| {}).unwrap();
    let dir = std::env::temp_dir().join(format!("pilotsim-tables-{name}-{}", std::process::id()));
    finished.write(&dir).unwrap();
    let first: Vec<Vec<u8>> = ["jobs", "pilots", "timeseries"]
        .iter()
        .map(|t| std::fs::read(dir.join(format!("{t}.parquet"))).unwrap())
        .collect();
    let run = finished.data();
    let meta: Vec<(String, Option<String>)> =
        run.meta.parquet_metadata().into_iter().map(|(k, v)| (k, Some(v))).collect();
    let mut expected = vec![
        ("jobs".to_string(), to_frame(&jobs(&run)).unwrap()),
        ("pilots".into(), to_frame(&pilots(&run)).unwrap()),
        ("timeseries".into(), to_frame(&timeseries(&run)).unwrap()),
    ];
    if run.network.transfer_count() > 0 {
        expected.push(("transfers".into(), to_frame(&transfers(&run)).unwrap()));
    }
    for t in &run.wms_tables {
        expected.push((t.name.clone(), to_frame(&wms_table(t)).unwrap()));
    }
    let mut schemas = Vec::new();
    for (table, want) in &expected {
        let (got, kv) = read(&dir.join(format!("{table}.parquet")));
        assert_eq!(got.schema(), want.schema(), "{name} {table}");
        assert!(got.height() > 0, "{name} {table}");
        assert!(got.equals_missing(want), "{name} {table}:\n{got}\n{want}");
        assert_eq!(kv, meta, "{name} {table}");
        schemas.push((table.clone(), schema(&got)));
    }
    // A second run of the same scenario and seed writes the same bytes.
    let mut again = crate::run::simulate(&p, 1, |_, _| {}).unwrap();
    again.write(&dir).unwrap();
    for (t, bytes) in ["jobs", "pilots", "timeseries"].iter().zip(&first) {
        assert_eq!(&std::fs::read(dir.join(format!("{t}.parquet"))).unwrap(), bytes, "{name} {t}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    schemas
}

fn of<'s>(schemas: &'s [(String, Vec<String>)], table: &str) -> Vec<&'s str> {
    schemas.iter().find(|(t, _)| t == table).map(|(_, s)| s.iter().map(String::as_str).collect()).unwrap()
}

#[test]
fn quickstart_files_read_back_as_their_frames() {
    let s = check(&crate::scenario::quickstart(), "quickstart");
    assert_eq!(
        of(&s, "timeseries"),
        [
            "time_s:f64",
            "entity:str",
            "level:str",
            "parent:str",
            "running:u32",
            "running_cores:u32",
            "waiting:u32",
            "share_unit:str",
            "target_share:f64",
            "running_share:f64",
            "deviation:f64",
            "achieved_share:f64",
            "achieved_core_share:f64",
            "achieved_cpu_share:f64",
            "pilots_waiting:u32",
            "pilots_running:u32",
            "pilots_aborted_total:u32",
            "pilots_refused_total:u32",
        ]
    );
    let jobs = of(&s, "jobs");
    for c in ["job_id:u32", "stream:str", "group:str", "submit_s:f64", "site:str", "ce:str", "task_queue_id:u32"] {
        assert!(jobs.contains(&c), "jobs.parquet has {c}: {jobs:?}");
    }
}

#[test]
fn panda_quickstart_files_read_back_as_their_frames() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/panda_quickstart.ron");
    let loaded = crate::scenario::load_file(&path).unwrap();
    let s = check(&loaded, "panda");
    assert!(s.iter().any(|(t, _)| t == "brokerage") && s.iter().any(|(t, _)| t == "transfers"), "{s:?}");
}
