//! End-to-end sweep on a real single-node Slurm cluster: `sweep --slurm --shards 2` submits a
//! job array, the shards are merged, and the merged outputs are byte-identical to the same
//! sweep run locally.
//!
//! The test does not start or stop the cluster: `.ci/run` does, with `.ci/slurm-up.sh` and
//! `.ci/slurm-down.sh` (recipe: shared/reference/slurm-local.md). Without a cluster the test
//! is skipped with a message, unless `PILOTSIM_REQUIRE_SLURM=1`, which makes that a failure.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use pilotsim::sweep::slurm;

fn pilotsim(args: &[OsString]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_pilotsim")).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "pilotsim {:?} failed ({}):\n{}{}",
        args,
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The quickstart at a path with a space; the sweeps cut it down with `sweep::SMALL`.
fn small_scenario(dir: &Path) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let path = dir.join("small quickstart.ron"); // a space, to exercise the script's quoting
    std::fs::copy(root.join("scenarios/quickstart.ron"), &path).unwrap();
    path
}

/// The job id in what `sweep --slurm` prints: the first word made only of digits (the whole
/// output when it prints the id alone, like `sbatch --parsable`).
fn job_id(stdout: &str) -> String {
    stdout
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()))
        .unwrap_or_else(|| panic!("no job id in the output of sweep --slurm: {stdout:?}"))
        .to_string()
}

#[test]
fn sweep_on_slurm_merges_to_the_local_sweep() {
    if !slurm::cluster_for_test("sweep_on_slurm_merges_to_the_local_sweep") {
        return;
    }
    // A space in every path: the sbatch script must quote them.
    let tmp = std::env::temp_dir().join(format!("pilotsim-it-slurm-{}", std::process::id())).join("with space");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let scenario = small_scenario(&tmp);
    let (on_slurm, merged, local) = (tmp.join("slurm"), tmp.join("merged"), tmp.join("local"));
    let sweep = |out: &Path, extra: &[&str]| {
        let mut args: Vec<OsString> = vec!["sweep".into(), scenario.clone().into()];
        for a in ["--vary", "dirac.director.extra_pilot_fraction=0,0.5", "--replicas", "2"].iter().chain(extra) {
            args.push(a.into());
        }
        for s in super::sweep::SMALL {
            args.extend(["--set".into(), s.into()]);
        }
        args.extend(["--out".into(), out.into()]);
        pilotsim(&args)
    };

    let submitted = sweep(&on_slurm, &["--slurm", "--shards", "2"]);
    let id = job_id(&String::from_utf8_lossy(&submitted.stdout));
    assert!(on_slurm.join("sweep.sbatch").exists());
    if let Err(e) = slurm::wait(&id, Duration::from_secs(600)) {
        let _ = slurm::cancel(&id);
        panic!("{e:#}");
    }
    for i in 0..2 {
        assert!(on_slurm.join(format!("slurm-{id}_{i}.out")).exists(), "log of task {i}");
    }

    let shards = [on_slurm.join("shard-0"), on_slurm.join("shard-1")];
    pilotsim(&[
        "merge".into(),
        "--out".into(),
        merged.clone().into(),
        shards[0].clone().into(),
        shards[1].clone().into(),
    ]);
    sweep(&local, &["--quiet"]);
    for f in ["sweep.parquet", "points.parquet", "points.json"] {
        let (a, b) = (std::fs::read(merged.join(f)).unwrap(), std::fs::read(local.join(f)).unwrap());
        assert!(a == b, "{f} differs between {} and {}", merged.display(), local.display());
    }
    std::fs::remove_dir_all(tmp.parent().unwrap()).unwrap();
}
