//! Tests of `panda::arch`: the 16 unit tests of panda-server's `hardware_matching_tests.py`
//! ([`hardware_matching`]), the architecture parses and seed examples ([`parse`]), the queue
//! side with `excl`, the two-stage GPU selection and the release checks ([`queue`]), and
//! property tests that no input panics ([`props`]).

mod hardware_matching;
mod parse;
mod props;
mod queue;

use super::*;

/// The `gpu_spec` of a JSON architecture `{"gpu_spec": <json>}`.
pub(super) fn spec(json: &str) -> GpuSpec {
    let arch = TaskArch::parse(&format!(r#"{{"gpu_spec": {json}}}"#)).expect("valid gpu_spec");
    arch.gpu_spec.expect("a gpu_spec")
}

/// A worker-node GPU row from JSON.
pub(super) fn gpu(json: &str) -> WnGpu {
    serde_json::from_str(json).expect("valid worker-node GPU row")
}

/// `hardware_matching_tests.py`'s A100.
pub(super) fn a100() -> WnGpu {
    gpu(r#"{"vendor": "NVIDIA", "model": "NVIDIA A100-SXM4-40GB", "vram": 40960, "architecture": "Ampere",
            "framework_version": "12.4", "driver_version": "575.57.08"}"#)
}

/// `hardware_matching_tests.py`'s V100.
pub(super) fn v100() -> WnGpu {
    gpu(r#"{"vendor": "NVIDIA", "model": "Tesla V100-SXM2-16GB", "vram": 16384, "architecture": "Volta",
            "framework_version": "12.2", "driver_version": "535.104.05"}"#)
}

pub(super) fn ok(spec: &GpuSpec, gpus: &[WnGpu]) -> bool {
    match_gpu_spec(spec, gpus).is_ok()
}
