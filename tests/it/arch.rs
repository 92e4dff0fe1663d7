//! `pilotsim arch-check ARCH --queue QUEUE.json`: exit 0 accepted, 1 rejected (naming the
//! rule), 2 invalid input (a stray quote in ARCH, a broken QUEUE.json with its line:column).

use std::path::PathBuf;
use std::process::{Command, Output};

fn pilotsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pilotsim"))
}

fn tmp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pilotsim-arch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

const GPU_QUEUE: &str = r#"{"ANALY_GPU": {
  "releases": ["AUTO"],
  "cmtconfigs": ["x86_64-el9-gcc13-opt"],
  "containers": ["any"],
  "cvmfs": ["atlas"],
  "architectures": [{"type": "cpu", "arch": ["x86_64"]}, {"type": "gpu", "vendor": ["nvidia"]}],
  "tags": [],
  "wn_gpus": [{"vendor": "NVIDIA", "model": "NVIDIA A100-SXM4-40GB", "vram": 40960, "architecture": "Ampere",
               "framework_version": "12.4", "driver_version": "575.57.08", "gpus_per_host": 4}]
}}"#;

fn check(arch: &str, queue: &PathBuf, extra: &[&str]) -> (Option<i32>, String, String) {
    let Output { status, stdout, stderr } =
        pilotsim().args(["arch-check", arch, "--queue"]).arg(queue).args(extra).output().unwrap();
    (status.code(), String::from_utf8_lossy(&stdout).into_owned(), String::from_utf8_lossy(&stderr).into_owned())
}

#[test]
fn arch_check_exit_codes() {
    let queue = tmp("gpu.json", GPU_QUEUE);

    let (code, out, err) = check("#&nvidia:model=.*A100.*:vram>=40960:driver>=575.0", &queue, &[]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.starts_with("accepted") && out.contains("queue: ANALY_GPU"), "{out}");
    assert!(out.contains("wn_gpus[0] NVIDIA NVIDIA A100-SXM4-40GB") && out.contains(": matches"), "{out}");
    let (code, out, _) = check("x86_64-el9-gcc13-opt", &queue, &["--release", "Athena-24.0.1"]);
    assert_eq!(code, Some(0), "{out}");

    let (code, out, _) = check(r#"{"gpu_spec": {"vendor": "nvidia", "vram": ">=81920"}}"#, &queue, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.starts_with("rejected: gpu attributes (worker nodes) — worker-node GPU #0 does not satisfy vram >=81920"),
        "{out}"
    );
    assert!(out.contains("does not match (vram)"), "{out}");
    let (code, out, _) = check("#aarch64", &queue, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.starts_with("rejected: cpu — "), "{out}");

    let (code, _, err) = check(r#"'{"gpu_spec": {"vendor": "nvidia"}}'"#, &queue, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("stray quote '"), "{err}");
    let (code, _, err) = check("#&nvidia:model=(?=A100)", &queue, &[]);
    assert_eq!((code, err.contains("'(?=A100)'")), (Some(2), true), "{err}");
    // The seed's queue example has a comma before a closing brace: invalid JSON, located.
    let broken = tmp(
        "broken.json",
        "{\n  \"architectures\": [\n    {\"type\": \"gpu\", \"version\": \"11.0.3\",\n    }\n  ]\n}",
    );
    let (code, _, err) = check("#&nvidia", &broken, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(&format!("{}:4:5:", broken.display())), "{err}");
    let typo = tmp("typo.json", r#"{"architecture": []}"#);
    let (code, _, err) = check("#&nvidia", &typo, &[]);
    assert!(code == Some(2) && err.contains("architecture"), "{err}");
}
