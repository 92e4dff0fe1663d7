//! GPU requirements against worker-node GPUs: `match_gpu_spec` (reference §5,
//! `pandaserver/srvcore/hardware_matching.py` L60-128; seed 004 "Checks for CPU and/or GPU
//! Hardware", two-stage selection, stage 2).
//!
//! | attribute | task side | worker-node column | rule |
//! |---|---|---|---|
//! | `vendor` | regexp, `*` = any | `vendor` | **any** GPU matches (`re.match`, case-insensitive) |
//! | `model` | regexp, or `{pattern, excl}` | `model` | inclusion: any GPU matches; exclusion: reject if any matches |
//! | `microarchitecture` | string or list | `architecture` | any GPU's value is in the list (exact, case-sensitive) |
//! | `vram` | `<op>MB` | `vram` | **all** GPUs satisfy it (missing or 0 → fail) |
//! | `version` | `<op>version` (CUDA) | `framework_version` | all GPUs |
//! | `driver_version` | `<op>version` | `driver_version` | all GPUs |
//!
//! A non-wildcard requirement on an empty GPU list fails; `{vendor: *, model: *}` alone passes
//! (seed: a GPU-capable queue without worker-node data "is accepted for wildcard requests").

use std::fmt;

use regex::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};

use super::ArchError;
use super::version::{Constraint, Version};

/// A task-side regular expression with Python `re.match` semantics: anchored at the start
/// only, compiled once. `ignore_case` is true for GPU patterns (`re.IGNORECASE`), false for the
/// CPU architecture and cmtconfig regexps, which PanDA matches case-sensitively.
#[derive(Debug, Clone)]
pub struct Pattern {
    text: String,
    re: Regex,
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text && self.re.as_str() == other.re.as_str()
    }
}

impl Pattern {
    /// `re.match(text, ·, flags)`: the pattern is checked alone (so `a)(b` stays an error), then
    /// compiled as `\A(?:text)`. A pattern the `regex` crate cannot compile (look-around,
    /// back-references, ...) is an error naming it.
    pub fn re_match(text: &str, ignore_case: bool, what: &str) -> Result<Pattern, ArchError> {
        Self::build(text, &format!(r"\A(?:{text})"), ignore_case, what)
    }

    /// `re.search("^" + text + "$", ·)` as the CPU arch check and `resolve_cmt_config` build it:
    /// the text is pasted between the anchors without a group, so `a|b` reads `^a|b$` as in
    /// Python.
    pub fn anchored_search(text: &str, what: &str) -> Result<Pattern, ArchError> {
        Self::build(text, &format!("^{text}$"), false, what)
    }

    fn build(text: &str, full: &str, ignore_case: bool, what: &str) -> Result<Pattern, ArchError> {
        let err = |e: regex::Error| ArchError::Regex {
            what: what.to_string(),
            pattern: text.to_string(),
            reason: e.to_string(),
        };
        Regex::new(text).map_err(err)?;
        let re = RegexBuilder::new(full).case_insensitive(ignore_case).build().map_err(err)?;
        Ok(Pattern { text: text.to_string(), re })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn is_match(&self, s: &str) -> bool {
        self.re.is_match(s)
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// `gpu_spec.model`.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelReq {
    /// `*` (the default).
    Any,
    /// A plain regexp (`model=` / `model==` in the shorthand): some GPU must match.
    Include(Pattern),
    /// `{"pattern": …, "excl": true}` (`model!=` in the shorthand): no GPU may match.
    Exclude(Pattern),
}

/// A task's GPU requirement (`JediTaskSpec.get_host_gpu_spec`), with its regexps compiled.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuSpec {
    /// `None` = `*`.
    pub vendor: Option<Pattern>,
    pub model: ModelReq,
    /// MB, e.g. `>=40960`.
    pub vram: Option<Constraint>,
    /// Generations (`Ampere`, …): any GPU's `architecture` must be one of them, exactly.
    pub microarchitecture: Option<Vec<String>>,
    /// CUDA toolkit (`framework_version`).
    pub version: Option<Constraint>,
    /// Kernel driver (`driver_version`).
    pub driver_version: Option<Constraint>,
}

impl GpuSpec {
    /// `{vendor: *, model: *}`: any GPU, or none at all.
    pub fn any() -> GpuSpec {
        GpuSpec {
            vendor: None,
            model: ModelReq::Any,
            vram: None,
            microarchitecture: None,
            version: None,
            driver_version: None,
        }
    }

    /// Nothing but wildcards: passes on a queue without worker-node GPU data.
    pub fn is_wildcard(&self) -> bool {
        *self == GpuSpec::any()
    }
}

impl fmt::Display for GpuSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "vendor={}", self.vendor.as_ref().map_or("*", |p| p.as_str()))?;
        match &self.model {
            ModelReq::Any => {}
            ModelReq::Include(p) => write!(f, " model={p}")?,
            ModelReq::Exclude(p) => write!(f, " model!={p}")?,
        }
        if let Some(v) = &self.vram {
            write!(f, " vram{v}")?;
        }
        if let Some(u) = &self.microarchitecture {
            write!(f, " microarchitecture={}", u.join("|"))?;
        }
        if let Some(v) = &self.version {
            write!(f, " cuda{v}")?;
        }
        if let Some(v) = &self.driver_version {
            write!(f, " driver{v}")?;
        }
        Ok(())
    }
}

/// One row of PanDA's worker-node GPU summary (`MV_WORKER_NODE_GPU_SUMMARY`, read by
/// `get_worker_node_gpu_map`, worker_module.py L1401-1434): what pilots reported for one host
/// configuration of the queue.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WnGpuRow {
    /// GPU vendor (e.g. `NVIDIA`), matched case-insensitively by a task's `gpu_spec.vendor`
    /// regexp; `None` (default): unknown, which fails any vendor requirement.
    pub vendor: Option<String>,
    /// GPU model (e.g. `NVIDIA A100-SXM4-40GB`), matched case-insensitively by a task's
    /// `gpu_spec.model` inclusion or exclusion regexp; `None` (default): unknown.
    pub model: Option<String>,
    /// MB.
    pub vram: Option<u64>,
    /// Microarchitecture generation (`Ampere`).
    pub architecture: Option<String>,
    /// `CUDA` etc. (informational).
    pub framework: Option<String>,
    /// CUDA toolkit version.
    pub framework_version: Option<String>,
    /// GPU kernel driver version (e.g. `575.57.08`), checked against a task's
    /// `gpu_spec.driver_version`; `None` (default): unknown, which fails a driver requirement.
    pub driver_version: Option<String>,
    /// GPUs per host of this configuration (informational: no check reads it); `None` (default)
    /// = not reported.
    pub gpus_per_host: Option<u64>,
    /// Hosts of this configuration (informational).
    pub host_count: Option<u64>,
}

/// A worker-node GPU row with its versions parsed once (on load), so matching many tasks
/// against it allocates nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "WnGpuRow", into = "WnGpuRow")]
pub struct WnGpu {
    row: WnGpuRow,
    framework_version: Option<Version>,
    driver_version: Option<Version>,
}

impl From<WnGpuRow> for WnGpu {
    fn from(row: WnGpuRow) -> Self {
        let parse = |v: &Option<String>| v.as_deref().filter(|s| !s.is_empty()).and_then(Version::parse);
        WnGpu { framework_version: parse(&row.framework_version), driver_version: parse(&row.driver_version), row }
    }
}

impl From<WnGpu> for WnGpuRow {
    fn from(g: WnGpu) -> Self {
        g.row
    }
}

impl WnGpu {
    pub fn row(&self) -> &WnGpuRow {
        &self.row
    }

    fn text(v: &Option<String>) -> Option<&str> {
        v.as_deref().filter(|s| !s.is_empty())
    }

    fn vendor_ok(&self, p: &Pattern) -> bool {
        Self::text(&self.row.vendor).is_some_and(|v| p.is_match(v))
    }

    fn model_matches(&self, p: &Pattern) -> bool {
        Self::text(&self.row.model).is_some_and(|m| p.is_match(m))
    }

    fn vram_ok(&self, c: &Constraint) -> bool {
        self.row.vram.is_some_and(|v| v != 0 && c.holds_for_u64(v))
    }

    fn uarch_ok(&self, wanted: &[String]) -> bool {
        self.row.architecture.as_ref().is_some_and(|a| wanted.iter().any(|w| w == a))
    }

    fn version_ok(&self, c: &Constraint) -> bool {
        self.framework_version.as_ref().is_some_and(|v| c.holds_for(v))
    }

    fn driver_ok(&self, c: &Constraint) -> bool {
        self.driver_version.as_ref().is_some_and(|v| c.holds_for(v))
    }
}

impl fmt::Display for WnGpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.row;
        let s = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
        write!(f, "{} {}", s(&r.vendor), s(&r.model))?;
        write!(f, " (vram {}", r.vram.map_or("?".into(), |v| v.to_string()))?;
        write!(f, ", {}, cuda {}, driver {})", s(&r.architecture), s(&r.framework_version), s(&r.driver_version))
    }
}

/// A GPU attribute of the requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuAttr {
    Vendor,
    Model,
    Vram,
    Microarchitecture,
    Version,
    DriverVersion,
}

impl fmt::Display for GpuAttr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GpuAttr::Vendor => "vendor",
            GpuAttr::Model => "model",
            GpuAttr::Vram => "vram",
            GpuAttr::Microarchitecture => "microarchitecture",
            GpuAttr::Version => "version",
            GpuAttr::DriverVersion => "driver_version",
        })
    }
}

/// Why `match_gpu_spec` returns false: the first failing check, in the code's order
/// (vendor, model, vram, microarchitecture, version, driver_version).
#[derive(Debug, Clone, PartialEq)]
pub enum GpuMismatch {
    /// A specific requirement and no worker-node GPU data for the queue.
    NoGpuData { attr: GpuAttr },
    /// No GPU's vendor matches.
    Vendor { pattern: String },
    /// No GPU's model matches the inclusion pattern.
    ModelMissing { pattern: String },
    /// GPU `gpu` (index in the list) matches the excluded pattern.
    ModelExcluded { pattern: String, gpu: usize },
    /// No GPU is of one of the generations.
    Microarchitecture { wanted: Vec<String> },
    /// GPU `gpu` does not satisfy a minimum-requirement attribute (or does not report it).
    Requirement { attr: GpuAttr, requirement: String, gpu: usize },
}

impl fmt::Display for GpuMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuMismatch::NoGpuData { attr } => write!(
                f,
                "no worker-node GPU data for the queue, so only wildcard requests are accepted, and {attr} is specific"
            ),
            GpuMismatch::Vendor { pattern } => write!(f, "no worker-node GPU has a vendor matching '{pattern}'"),
            GpuMismatch::ModelMissing { pattern } => write!(f, "no worker-node GPU has a model matching '{pattern}'"),
            GpuMismatch::ModelExcluded { pattern, gpu } => {
                write!(f, "worker-node GPU #{gpu} has a model matching the excluded '{pattern}'")
            }
            GpuMismatch::Microarchitecture { wanted } => {
                write!(f, "no worker-node GPU has a microarchitecture in {wanted:?}")
            }
            GpuMismatch::Requirement { attr, requirement, gpu } => write!(
                f,
                "worker-node GPU #{gpu} does not satisfy {attr} {requirement} (every GPU of the queue must, so that no job lands on a non-compliant node)"
            ),
        }
    }
}

/// `hardware_matching.match_gpu_spec(spec, gpus)` with the reason of a `False`.
pub fn match_gpu_spec(spec: &GpuSpec, gpus: &[WnGpu]) -> Result<(), GpuMismatch> {
    let empty = |attr| if gpus.is_empty() { Err(GpuMismatch::NoGpuData { attr }) } else { Ok(()) };
    let all = |attr: GpuAttr, c: &Constraint, ok: &dyn Fn(&WnGpu, &Constraint) -> bool| {
        empty(attr)?;
        match gpus.iter().position(|g| !ok(g, c)) {
            Some(gpu) => Err(GpuMismatch::Requirement { attr, requirement: c.raw.clone(), gpu }),
            None => Ok(()),
        }
    };
    if let Some(p) = &spec.vendor {
        empty(GpuAttr::Vendor)?;
        if !gpus.iter().any(|g| g.vendor_ok(p)) {
            return Err(GpuMismatch::Vendor { pattern: p.text.clone() });
        }
    }
    match &spec.model {
        ModelReq::Any => {}
        ModelReq::Include(p) => {
            empty(GpuAttr::Model)?;
            if !gpus.iter().any(|g| g.model_matches(p)) {
                return Err(GpuMismatch::ModelMissing { pattern: p.text.clone() });
            }
        }
        ModelReq::Exclude(p) => {
            empty(GpuAttr::Model)?;
            if let Some(gpu) = gpus.iter().position(|g| g.model_matches(p)) {
                return Err(GpuMismatch::ModelExcluded { pattern: p.text.clone(), gpu });
            }
        }
    }
    if let Some(c) = &spec.vram {
        all(GpuAttr::Vram, c, &|g, c| g.vram_ok(c))?;
    }
    if let Some(w) = &spec.microarchitecture {
        empty(GpuAttr::Microarchitecture)?;
        if !gpus.iter().any(|g| g.uarch_ok(w)) {
            return Err(GpuMismatch::Microarchitecture { wanted: w.clone() });
        }
    }
    if let Some(c) = &spec.version {
        all(GpuAttr::Version, c, &|g, c| g.version_ok(c))?;
    }
    if let Some(c) = &spec.driver_version {
        all(GpuAttr::DriverVersion, c, &|g, c| g.driver_ok(c))?;
    }
    Ok(())
}

/// How one worker-node GPU fares against each attribute of a requirement (`None` = the
/// requirement does not constrain it), for explaining a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuVerdict {
    pub index: usize,
    /// `(attribute, satisfied)` for every constrained attribute.
    pub checks: Vec<(GpuAttr, bool)>,
}

impl GpuVerdict {
    /// The GPU satisfies every constrained attribute on its own.
    pub fn fits(&self) -> bool {
        self.checks.iter().all(|(_, ok)| *ok)
    }

    /// The attributes it fails.
    pub fn failed(&self) -> impl Iterator<Item = GpuAttr> + '_ {
        self.checks.iter().filter(|(_, ok)| !ok).map(|(a, _)| *a)
    }
}

/// Per-GPU view of `spec` (for `pilotsim arch-check`): which GPUs would match on their own.
/// (The queue decision is [`match_gpu_spec`]: any-match attributes need one fitting GPU,
/// all-match ones every GPU.)
pub fn gpu_verdicts(spec: &GpuSpec, gpus: &[WnGpu]) -> Vec<GpuVerdict> {
    gpus.iter()
        .enumerate()
        .map(|(index, g)| {
            let mut checks = Vec::new();
            if let Some(p) = &spec.vendor {
                checks.push((GpuAttr::Vendor, g.vendor_ok(p)));
            }
            match &spec.model {
                ModelReq::Any => {}
                ModelReq::Include(p) => checks.push((GpuAttr::Model, g.model_matches(p))),
                ModelReq::Exclude(p) => checks.push((GpuAttr::Model, !g.model_matches(p))),
            }
            if let Some(c) = &spec.vram {
                checks.push((GpuAttr::Vram, g.vram_ok(c)));
            }
            if let Some(w) = &spec.microarchitecture {
                checks.push((GpuAttr::Microarchitecture, g.uarch_ok(w)));
            }
            if let Some(c) = &spec.version {
                checks.push((GpuAttr::Version, g.version_ok(c)));
            }
            if let Some(c) = &spec.driver_version {
                checks.push((GpuAttr::DriverVersion, g.driver_ok(c)));
            }
            GpuVerdict { index, checks }
        })
        .collect()
}
