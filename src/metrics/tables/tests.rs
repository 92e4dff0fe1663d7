//! The files a run writes read back (polars) equal to the frames of the polars path
//! ([`super::super::frames`]): same columns, order, types and values, and the run's identity
//! as key-value metadata — for the DIRAC quickstart and the PanDA quickstart (brokerage,
//! transfers, the WMS's own columns).

use std::path::Path;

use polars::prelude::*;

use crate::metrics::frames;

fn read(path: &Path) -> (DataFrame, Vec<(String, Option<String>)>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = ParquetReader::new(file);
    let kv = reader.get_metadata().unwrap().key_value_metadata().clone().unwrap_or_default();
    let kv = kv.into_iter().map(|k| (k.key, k.value)).collect();
    (reader.finish().unwrap(), kv)
}

fn check(loaded: &crate::scenario::Loaded, name: &str) {
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
        ("jobs".to_string(), frames::jobs(&run).unwrap()),
        ("pilots".into(), frames::pilots(&run).unwrap()),
        ("timeseries".into(), frames::timeseries(&run).unwrap()),
    ];
    if run.network.transfer_count() > 0 {
        expected.push(("transfers".into(), frames::transfers(&run).unwrap()));
    }
    for t in &run.wms_tables {
        expected.push((t.name.clone(), frames::wms_table(t).unwrap()));
    }
    for (table, want) in &expected {
        let (got, kv) = read(&dir.join(format!("{table}.parquet")));
        assert_eq!(got.schema(), want.schema(), "{name} {table}");
        assert!(got.height() > 0, "{name} {table}");
        assert!(got.equals_missing(want), "{name} {table}:\n{got}\n{want}");
        assert_eq!(kv, meta, "{name} {table}");
    }
    // A second run of the same scenario and seed writes the same bytes.
    let mut again = crate::run::simulate(&p, 1, |_, _| {}).unwrap();
    again.write(&dir).unwrap();
    for (t, bytes) in ["jobs", "pilots", "timeseries"].iter().zip(&first) {
        assert_eq!(&std::fs::read(dir.join(format!("{t}.parquet"))).unwrap(), bytes, "{name} {t}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn quickstart_files_read_back_as_the_polars_frames() {
    check(&crate::scenario::quickstart(), "quickstart");
}

#[test]
fn panda_quickstart_files_read_back_as_the_polars_frames() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/panda_quickstart.ron");
    let loaded = crate::scenario::load_file(&path).unwrap();
    let names: Vec<String> = {
        let p = crate::run::prepare(&loaded, &[]).unwrap();
        let mut f = crate::run::simulate(&p, 1, |_, _| {}).unwrap();
        f.data().wms_tables.iter().map(|t| t.name.clone()).collect()
    };
    assert!(names.iter().any(|n| n == "brokerage"), "{names:?}");
    check(&loaded, "panda");
}
