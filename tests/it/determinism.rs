//! Same scenario and seed → identical digest and Parquet bytes; another seed → another digest.

use std::path::PathBuf;

use pilotsim::run;
use pilotsim::scenario;

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pilotsim-it-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn quickstart_is_reproducible_and_seed_sensitive() {
    let prepared = run::prepare(&scenario::quickstart(), &[]).unwrap();
    let dirs = [out_dir("a"), out_dir("b"), out_dir("c")];
    let seeds = [42, 42, 43];
    let mut summaries = Vec::new();
    for (dir, seed) in dirs.iter().zip(seeds) {
        let mut f = run::simulate(&prepared, seed, |_, _| {}).unwrap();
        summaries.push(f.write(dir).unwrap());
    }
    assert_eq!(summaries[0].digest, summaries[1].digest);
    assert_ne!(summaries[0].digest, summaries[2].digest);
    for file in
        ["jobs.parquet", "pilots.parquet", "timeseries.parquet", "share_convergence.svg", "share_convergence.png"]
    {
        let a = std::fs::read(dirs[0].join(file)).unwrap();
        let b = std::fs::read(dirs[1].join(file)).unwrap();
        assert!(a == b, "{file} differs between two runs with the same seed");
    }
    // summary.json is identical but for the two wall-clock fields.
    let strip = |d: &PathBuf| {
        let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("summary.json")).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("wall_seconds");
        v.as_object_mut().unwrap().remove("events_per_second");
        v
    };
    assert_eq!(strip(&dirs[0]), strip(&dirs[1]));

    // The run is sane: work got done, both groups ran, counts add up.
    let s = &summaries[0];
    assert!(s.jobs.done > 1000, "{:?}", s.jobs);
    assert_eq!(s.jobs.submitted, s.jobs.done + s.jobs.failed + s.jobs.running_at_end + s.jobs.waiting_at_end);
    let p = &s.pilots;
    assert!(p.used > 0 && p.aborted > 0, "{p:?}");
    for g in ["lhcb_prod", "lhcb_user"] {
        assert!(s.entities[g].achieved_share.unwrap() > 0.05, "{g}: {:?}", s.entities[g]);
    }
    for d in dirs {
        let _ = std::fs::remove_dir_all(d);
    }
}
