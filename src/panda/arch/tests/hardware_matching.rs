//! The 16 tests of panda-server 1.0.4 `pandaserver/srvcore/tests/hardware_matching_tests.py`
//! (reference §5 "Unit tests", §9), one Rust test each, same assertions and numbers.

use super::*;

const ANY_GPU: &str = r#"{"vendor": "*", "model": "*"}"#;

fn any_with(key: &str, value: &str) -> GpuSpec {
    spec(&format!(r#"{{"vendor": "*", "model": "*", "{key}": {value}}}"#))
}

// --- TestCompareVersionString (5) ---

#[test]
fn compare_version_string_operators() {
    assert_eq!(compare_version_string("12.4", ">=12.0"), Some(true));
    assert_eq!(compare_version_string("11.8", ">=12.0"), Some(false));
    assert_eq!(compare_version_string("11.8", "<=12.0"), Some(true));
    assert_eq!(compare_version_string("12.4", ">12.0"), Some(true));
    assert_eq!(compare_version_string("12.0", ">12.0"), Some(false));
    assert_eq!(compare_version_string("11.8", "<12.0"), Some(true));
    assert_eq!(compare_version_string("12.0", "==12.0"), Some(true));
    assert_eq!(compare_version_string("12.4", "==12.0"), Some(false));
}

#[test]
fn compare_version_string_single_equal_is_equality() {
    assert_eq!(compare_version_string("12.0", "=12.0"), Some(true));
    assert_eq!(compare_version_string("12.4", "=12.0"), Some(false));
}

#[test]
fn compare_version_string_not_equal() {
    assert_eq!(compare_version_string("12.4", "!=12.0"), Some(true));
    assert_eq!(compare_version_string("12.0", "!=12.0"), Some(false));
}

#[test]
fn compare_version_string_multi_component_version() {
    assert_eq!(compare_version_string("575.57.08", ">=575.0"), Some(true));
    assert_eq!(compare_version_string("535.104.05", ">=575.0"), Some(false));
}

#[test]
fn compare_version_string_invalid_input() {
    assert_eq!(compare_version_string("12.0", "12.0"), None, "no operator");
    assert_eq!(compare_version_string("Ampere", ">=12.0"), None, "unparsable version");
    assert_eq!(compare_version_string("12.0", ">=Ampere"), None, "unparsable requirement");
}

// --- TestMatchGpuSpec (11) ---

#[test]
fn match_gpu_spec_wildcard_requirement() {
    let any = spec(ANY_GPU);
    assert!(ok(&any, &[a100()]));
    assert!(ok(&any, &[a100(), v100()]));
    assert!(ok(&any, &[]), "no GPU information is not a rejection for a wildcard requirement");
}

#[test]
fn match_gpu_spec_specific_requirement_without_gpus() {
    assert!(!ok(&spec(r#"{"vendor": "NVIDIA", "model": "*"}"#), &[]));
    assert!(!ok(&spec(r#"{"vendor": "*", "model": ".*A100.*"}"#), &[]));
    assert!(!ok(&any_with("vram", r#"">=40960""#), &[]));
    assert!(!ok(&any_with("microarchitecture", r#""Ampere""#), &[]));
    assert_eq!(
        match_gpu_spec(&any_with("vram", r#"">=40960""#), &[]),
        Err(GpuMismatch::NoGpuData { attr: GpuAttr::Vram })
    );
}

#[test]
fn match_gpu_spec_vendor() {
    assert!(ok(&spec(r#"{"vendor": "NVIDIA", "model": "*"}"#), &[a100()]));
    assert!(ok(&spec(r#"{"vendor": "nvidia", "model": "*"}"#), &[a100()]));
    assert!(!ok(&spec(r#"{"vendor": "AMD", "model": "*"}"#), &[a100()]));
    let amd = gpu(r#"{"vendor": "AMD", "model": "MI250"}"#);
    assert!(ok(&spec(r#"{"vendor": "NVIDIA", "model": "*"}"#), &[amd, a100()]), "any match");
}

#[test]
fn match_gpu_spec_model_inclusion() {
    assert!(ok(&spec(r#"{"vendor": "*", "model": ".*A100.*"}"#), &[a100()]));
    assert!(ok(&spec(r#"{"vendor": "*", "model": ".*a100.*"}"#), &[a100()]), "case-insensitive");
    assert!(!ok(&spec(r#"{"vendor": "*", "model": ".*A100.*"}"#), &[v100()]));
    assert!(ok(&spec(r#"{"vendor": "*", "model": ".*A100.*"}"#), &[v100(), a100()]), "any match");
}

#[test]
fn match_gpu_spec_model_exclusion() {
    let excl_p100 = spec(r#"{"vendor": "*", "model": {"pattern": ".*P100.*", "excl": true}}"#);
    assert!(ok(&excl_p100, &[a100()]));
    let p100 = gpu(r#"{"vendor": "NVIDIA", "model": "Tesla P100-PCIE-16GB", "vram": 40960, "architecture": "Ampere",
                       "framework_version": "12.4", "driver_version": "575.57.08"}"#);
    assert!(!ok(&excl_p100, std::slice::from_ref(&p100)));
    assert_eq!(
        match_gpu_spec(&excl_p100, &[a100(), p100]),
        Err(GpuMismatch::ModelExcluded { pattern: ".*P100.*".into(), gpu: 1 }),
        "excluded when any of the GPUs matches the pattern"
    );
}

#[test]
fn match_gpu_spec_vram() {
    assert!(ok(&any_with("vram", r#"">=40960""#), &[a100()]));
    assert!(!ok(&any_with("vram", r#"">=40960""#), &[v100()]));
    assert!(!ok(&any_with("vram", r#"">=40960""#), &[a100(), v100()]), "every GPU has to meet the minimum");
    assert!(ok(&any_with("vram", r#"">=16384""#), &[a100(), v100()]));
    assert!(ok(&any_with("vram", r#""==40960""#), &[a100()]));
}

#[test]
fn match_gpu_spec_microarchitecture() {
    assert!(ok(&any_with("microarchitecture", r#""Ampere""#), &[a100()]));
    assert!(!ok(&any_with("microarchitecture", r#""Ampere""#), &[v100()]));
    assert!(ok(&any_with("microarchitecture", r#"["Ampere", "Hopper"]"#), &[a100()]));
    assert!(!ok(&any_with("microarchitecture", r#"["Ampere", "Hopper"]"#), &[v100()]));
    assert!(ok(&any_with("microarchitecture", r#""Ampere""#), &[v100(), a100()]), "any match");
}

#[test]
fn match_gpu_spec_framework_version() {
    assert!(ok(&any_with("version", r#"">=12.0""#), &[a100(), v100()]));
    assert!(!ok(&any_with("version", r#"">=12.3""#), &[a100(), v100()]), "a single old GPU excludes the set");
    assert!(ok(&any_with("version", r#"">=12.3""#), &[a100()]));
}

#[test]
fn match_gpu_spec_driver_version() {
    assert!(ok(&any_with("driver_version", r#"">=575.0""#), &[a100()]));
    assert!(!ok(&any_with("driver_version", r#"">=575.0""#), &[v100()]));
    assert!(!ok(&any_with("driver_version", r#"">=575.0""#), &[a100(), v100()]), "all match");
}

#[test]
fn match_gpu_spec_missing_attributes_in_gpus() {
    let bare = gpu(r#"{"vendor": "NVIDIA", "model": "NVIDIA A100-SXM4-40GB"}"#);
    let bare = std::slice::from_ref(&bare);
    assert!(ok(&spec(r#"{"vendor": "NVIDIA", "model": ".*A100.*"}"#), bare));
    assert!(!ok(&any_with("vram", r#"">=40960""#), bare));
    assert!(!ok(&any_with("version", r#"">=12.0""#), bare));
    assert!(!ok(&any_with("driver_version", r#"">=575.0""#), bare));
    assert!(!ok(&any_with("microarchitecture", r#""Ampere""#), bare));
}

#[test]
fn match_gpu_spec_combined_constraints() {
    let s = spec(
        r#"{"vendor": "NVIDIA", "model": ".*A100.*", "vram": ">=40960", "microarchitecture": "Ampere",
            "version": ">=12.0", "driver_version": ">=575.0"}"#,
    );
    assert!(ok(&s, &[a100()]));
    assert!(!ok(&s, &[v100()]));
    assert!(!ok(&s, &[a100(), v100()]));
    assert_eq!(
        match_gpu_spec(&s, &[a100(), v100()]),
        Err(GpuMismatch::Requirement { attr: GpuAttr::Vram, requirement: ">=40960".into(), gpu: 1 }),
        "the first failing check in code order is vram, on the V100"
    );
}
