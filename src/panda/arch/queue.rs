//! The queue side: `AtlasBrokerUtils.JsonSoftwareCheck.check` for one PQ (reference §5 "Queue
//! `architectures`", AtlasBrokerUtils.py L923-1127; seed 004 "Release/cache Availability Check
//! for releases=AUTO", "Checks for Fat Containers", "Checks for Releases, Caches, or
//! Nightlies"), `resolve_cmt_config` (L1130-1212) and the production broker's SW/HW filter
//! around them (reference §2 filter 11, AtlasProdJobBroker.py L763-869).
//!
//! Order of `check` for a PQ with `releases == ['AUTO']` and an `SW_TAGS` entry:
//!
//! 1. a list attribute of the PQ's `cpu` (`gpu`) entry contains `excl` and the task has no CPU
//!    (GPU) spec → skip;
//! 2. the task has a CPU or GPU spec and the PQ publishes no architectures → skip;
//! 3. CPU, alternatives OR-ed: arch `*` fails on an `excl` arch list; an explicit arch needs
//!    `any`, the exact value or a `^arch$` regexp match among the PQ's archs; vendor/instr `*`
//!    fail on an `excl` list, explicit ones need the PQ to list the attribute with `any` or the
//!    value;
//! 4. GPU, two stages: the PQ must have a `type: gpu` entry (CRIC capability gate), then
//!    [`match_gpu_spec`] against the PQ's worker-node GPUs (a GPU-capable PQ without worker-node
//!    data passes wildcard requests only);
//! 5. a request with only hardware passes; a container (`container_name`) passes by `any` or
//!    `/cvmfs` in `containers` (unless only tags), a tag's `container_name` or `sources`, or a
//!    `containers` prefix of the name or of its sources in the `ALL` queue's tags;
//!    `cmt_config_only` passes; otherwise the cvmfs / container / cmtconfig / tag rules
//!    ([`ArchVariant`] says how the tag fallback is reached).
//!
//! A PQ that is not AUTO (or has no `SW_TAGS` entry) is rejected when the task needs a
//! container or hardware, and otherwise left to the caller (`noAutoSite`). All skips here are
//! permanent for the cycle (PanDA's `criteria=-cache` / `-regexpcmtconfig`, not `siteSkippedTmp`).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::gpu::{GpuMismatch, GpuSpec, WnGpu, match_gpu_spec};
use super::task::{CpuSpec, TaskArch};
use super::{ArchError, ArchVariant};

/// A value of a queue architecture attribute. CRIC publishes lists of strings; a plain string
/// (the seed's `"version": "11.0.3"`) is read with Python's `in`, i.e. as a substring test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AttrValue {
    List(Vec<String>),
    Text(String),
}

impl AttrValue {
    /// Python `x in value`.
    pub fn contains(&self, x: &str) -> bool {
        match self {
            AttrValue::List(l) => l.iter().any(|v| v == x),
            AttrValue::Text(t) => t.contains(x),
        }
    }

    /// The regexp check iterates the value: list items, or the characters of a string.
    fn any_item(&self, mut f: impl FnMut(&str) -> bool) -> bool {
        match self {
            AttrValue::List(l) => l.iter().any(|v| f(v)),
            AttrValue::Text(t) => {
                let mut buf = [0u8; 4];
                t.chars().any(|c| f(c.encode_utf8(&mut buf)))
            }
        }
    }
}

impl fmt::Display for AttrValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrValue::List(l) => write!(f, "{l:?}"),
            AttrValue::Text(t) => write!(f, "{t:?}"),
        }
    }
}

/// One entry of a queue's `architectures` (CRIC via `SW_TAGS`): `type` (`cpu`/`gpu`) and
/// attribute lists (`arch`, `vendor`, `instr`, `model`, …), `excl` marking exclusive ones.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct QueueArch {
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(flatten)]
    pub attrs: BTreeMap<String, AttrValue>,
}

impl QueueArch {
    fn excl_list_attr(&self) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(_, v)| matches!(v, AttrValue::List(l) if l.iter().any(|x| x == "excl")))
            .map(|(k, _)| k.as_str())
    }
}

/// One release/cache tag of a queue (`tags` of `SW_TAGS`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SwTag {
    pub cmtconfig: String,
    pub container_name: Option<String>,
    pub project: String,
    pub release: String,
    pub sources: Vec<String>,
    pub tag: String,
}

fn auto() -> Vec<String> {
    vec!["AUTO".to_string()]
}

fn yes() -> bool {
    true
}

/// A PanDA queue's software description: its schedconfig `releases` and its `SW_TAGS` entry
/// as the seed shows it, plus its worker-node GPU rows (`MV_WORKER_NODE_GPU_SUMMARY`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSoftware {
    /// `siteSpec.releases`; default `["AUTO"]` (the queues the seed's check is about).
    #[serde(default = "auto")]
    pub releases: Vec<String>,
    /// Whether the PQ has an entry in the `SW_TAGS` map (default true).
    #[serde(default = "yes")]
    pub in_sw_map: bool,
    #[serde(default)]
    pub cmtconfigs: Vec<String>,
    #[serde(default)]
    pub containers: Vec<String>,
    #[serde(default)]
    pub cvmfs: Vec<String>,
    #[serde(default)]
    pub architectures: Vec<QueueArch>,
    #[serde(default)]
    pub tags: Vec<SwTag>,
    #[serde(default)]
    pub wn_gpus: Vec<WnGpu>,
}

impl Default for QueueSoftware {
    fn default() -> Self {
        QueueSoftware {
            releases: auto(),
            in_sw_map: true,
            cmtconfigs: Vec::new(),
            containers: Vec::new(),
            cvmfs: Vec::new(),
            architectures: Vec::new(),
            tags: Vec::new(),
            wn_gpus: Vec::new(),
        }
    }
}

impl QueueSoftware {
    /// `architecture_map[kind]`: the last entry of that type (the code builds a dict).
    pub fn arch_entry(&self, kind: &str) -> Option<&QueueArch> {
        self.architectures.iter().rev().find(|a| a.kind.as_deref() == Some(kind))
    }

    fn has_arch_map(&self) -> bool {
        self.architectures.iter().any(|a| a.kind.is_some())
    }

    fn is_auto(&self) -> bool {
        self.releases.len() == 1 && self.releases.first().is_some_and(|r| r == "AUTO")
    }

    fn is_any(&self) -> bool {
        self.releases.len() == 1 && self.releases.first().is_some_and(|r| r == "ANY")
    }

    fn container_any(&self) -> bool {
        self.containers.iter().any(|c| c == "any" || c == "/cvmfs")
    }
}

/// Python truthiness of an optional string.
fn t(s: Option<&str>) -> bool {
    s.is_some_and(|s| !s.is_empty())
}

/// The arguments of `JsonSoftwareCheck.check` for one task.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SwRequest<'a> {
    /// `atlas` (releases, caches) or `nightlies`.
    pub cvmfs_tag: Option<&'a str>,
    pub sw_project: Option<&'a str>,
    pub sw_version: Option<&'a str>,
    /// The task's sw_platform.
    pub cmt_config: Option<&'a str>,
    pub need_cvmfs: bool,
    /// Only the cmtconfig matters (standalone software).
    pub cmt_config_only: bool,
    /// The task has a base platform (runs in a container).
    pub need_container: bool,
    /// Fat container.
    pub container_name: Option<&'a str>,
    /// `onlyTagsForFC`.
    pub only_tags_fc: bool,
    pub cpu: Option<&'a [CpuSpec]>,
    pub gpu: Option<&'a GpuSpec>,
}

/// `transHome` of a production task read as the production broker does (L763-800): a 3-digit
/// release, or anything that is neither `rel_N` nor a `YYYY-MM-DDTHHMM` nightly, is
/// `Project-Version` on cvmfs `atlas`; otherwise a nightly (`nightlies`, no project/version).
fn production_release(trans_home: &str) -> Result<(&'static str, Option<&str>, Option<&str>), ArchError> {
    let th = trans_home.strip_suffix('\n').unwrap_or(trans_home);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let three = th.rsplit_once('-').is_some_and(|(_, v)| {
        let p: Vec<&str> = v.split('.').collect();
        p.len() == 3 && p.iter().all(|x| digits(x))
    });
    let rel = trans_home.match_indices("rel_").any(|(i, _)| {
        let rest = &trans_home[i + 4..];
        let n = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        n > 0 && (rest[n..].is_empty() || rest[n..].starts_with('\n'))
    });
    let nightly = th.len() >= 15 && {
        let tail = &th.as_bytes()[th.len() - 15..];
        tail.iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            10 => *b == b'T',
            _ => b.is_ascii_digit(),
        })
    };
    if three || (!rel && !nightly) {
        let mut parts = trans_home.split('-');
        let project = parts.next();
        let version = parts.next().ok_or_else(|| ArchError::TransHome(trans_home.to_string()))?;
        Ok(("atlas", project, Some(version)))
    } else {
        Ok(("nightlies", None, None))
    }
}

impl<'a> SwRequest<'a> {
    /// The production broker's request (L763-800) for a task with `transHome`.
    pub fn production(
        arch: &'a TaskArch,
        trans_home: &'a str,
        container_name: Option<&'a str>,
        only_tags_fc: bool,
    ) -> Result<SwRequest<'a>, ArchError> {
        let (cvmfs, project, version) = production_release(trans_home)?;
        Ok(SwRequest {
            cvmfs_tag: Some(cvmfs),
            sw_project: project,
            sw_version: version,
            cmt_config: Some(arch.sw_platform.as_str()),
            need_cvmfs: false,
            cmt_config_only: false,
            need_container: arch.base_platform.is_some(),
            container_name,
            only_tags_fc,
            cpu: arch.cpu_specs.as_deref(),
            gpu: arch.gpu_spec.as_ref(),
        })
    }

    /// The analysis broker's request for standalone software (no `transHome`, no `transUses`):
    /// only the cmtconfig and the hardware matter.
    pub fn standalone(arch: &'a TaskArch, container_name: Option<&'a str>, only_tags_fc: bool) -> SwRequest<'a> {
        SwRequest {
            cmt_config: Some(arch.sw_platform.as_str()),
            cmt_config_only: true,
            container_name,
            only_tags_fc,
            cpu: arch.cpu_specs.as_deref(),
            gpu: arch.gpu_spec.as_ref(),
            ..SwRequest::default()
        }
    }
}

/// Why one CPU alternative of the task does not fit the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuMismatch {
    /// The queue has no `type: cpu` entry.
    NoCpuEntry,
    /// The task spec lacks `arch` (PanDA raises `KeyError`: the whole queue is skipped).
    TaskArchMissing,
    /// The queue's cpu entry lacks `arch` (`KeyError` likewise).
    QueueArchMissing,
    /// The task leaves `attr` open (`*`) and the queue lists it as exclusive.
    Exclusive { attr: &'static str, offered: String },
    /// The task asks for `value` and the queue does not publish `attr`.
    NotPublished { attr: &'static str, value: String },
    /// The task asks for `value` and the queue offers neither `any` nor it.
    NotOffered { attr: &'static str, value: String, offered: String },
}

impl fmt::Display for CpuMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpuMismatch::NoCpuEntry => write!(f, "the queue publishes no cpu architecture"),
            CpuMismatch::TaskArchMissing => {
                write!(f, "the task's cpu spec has no arch (PanDA raises KeyError and skips the queue)")
            }
            CpuMismatch::QueueArchMissing => {
                write!(f, "the queue's cpu entry has no arch list (PanDA raises KeyError and skips the queue)")
            }
            CpuMismatch::Exclusive { attr, offered } => write!(
                f,
                "the queue accepts only tasks that specify cpu {attr} ({attr}: {offered} has 'excl') and the task leaves it open"
            ),
            CpuMismatch::NotPublished { attr, value } => {
                write!(f, "the task asks for cpu {attr} '{value}' and the queue publishes no {attr}")
            }
            CpuMismatch::NotOffered { attr, value, offered } => {
                write!(f, "the task asks for cpu {attr} '{value}' and the queue offers {attr}: {offered}")
            }
        }
    }
}

/// Why a queue is skipped by the SW/HW check.
#[derive(Debug, Clone, PartialEq)]
pub enum SwSkip {
    /// The queue is not AUTO (or has no SW_TAGS entry) and the task needs a container or HW.
    NotAuto { releases: Vec<String> },
    /// Neither AUTO nor ANY (production/analysis wrapper).
    NoRelease { releases: Vec<String> },
    /// The queue's `type` entry has `excl` in `attr` and the task has no spec of that type.
    ExclusiveHardware { kind: &'static str, attr: String },
    /// The task has a CPU/GPU spec and the queue publishes no architectures.
    NoArchitectures,
    /// No CPU alternative fits (one reason per alternative tried, in order).
    Cpu(Vec<CpuMismatch>),
    /// Stage 1 of GPU selection: no `type: gpu` entry in CRIC.
    NotGpuCapable,
    /// Stage 2: worker-node GPU data does not satisfy the requirement.
    Gpu(GpuMismatch),
    /// The fat container is not available.
    Container { name: String, only_tags: bool },
    /// Nightlies need the cvmfs tag.
    Cvmfs { tag: String },
    /// cvmfs is there but no `any`//cvmfs container and no usable cmtconfig.
    ContainerOrCmtConfig { cmt_config: String, need_container: bool },
    /// Tag fallback for a task with a base platform, and `any` is not in `containers`.
    TagNeedsAnyContainer,
    /// No tag with the task's cmtconfig, project and release.
    NoTag { cmt_config: String, project: String, release: String, cvmfs_ok: bool },
    /// The sw_platform regexp matches none of the queue's cmtconfigs.
    UnresolvedRegexp { cmt_config: String },
    /// Analysis: GPU queues need a task architecture.
    ArchitectureRequired,
    /// Analysis: the sw_platform is not available at the GPU queue.
    ArchitectureUnavailable { sw_platform: String, cause: Box<SwSkip> },
}

impl SwSkip {
    /// PanDA's `criteria=` tag of the log line.
    pub fn criteria(&self) -> &'static str {
        match self {
            SwSkip::UnresolvedRegexp { .. } => "-regexpcmtconfig",
            SwSkip::ArchitectureRequired | SwSkip::ArchitectureUnavailable { .. } => "-architecture",
            _ => "-cache",
        }
    }

    /// A short name of the rule, for an operator.
    pub fn rule(&self) -> &'static str {
        match self {
            SwSkip::NotAuto { .. } | SwSkip::NoRelease { .. } => "releases",
            SwSkip::ExclusiveHardware { .. } => "exclusive hardware",
            SwSkip::NoArchitectures => "no architectures",
            SwSkip::Cpu(_) => "cpu",
            SwSkip::NotGpuCapable => "gpu capability (CRIC)",
            SwSkip::Gpu(_) => "gpu attributes (worker nodes)",
            SwSkip::Container { .. } => "fat container",
            SwSkip::Cvmfs { .. } => "cvmfs",
            SwSkip::ContainerOrCmtConfig { .. } => "container/cmtconfig",
            SwSkip::TagNeedsAnyContainer | SwSkip::NoTag { .. } => "release tag",
            SwSkip::UnresolvedRegexp { .. } => "regexp cmtconfig",
            SwSkip::ArchitectureRequired | SwSkip::ArchitectureUnavailable { .. } => "architecture",
        }
    }
}

impl fmt::Display for SwSkip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SwSkip::NotAuto { releases } => write!(
                f,
                "releases={releases:?} without AUTO: only AUTO queues with SW_TAGS serve a container or a CPU/GPU spec"
            ),
            SwSkip::NoRelease { releases } => write!(f, "releases={releases:?} is neither AUTO nor ANY"),
            SwSkip::ExclusiveHardware { kind, attr } => write!(
                f,
                "the queue accepts only tasks with a {kind} spec ('excl' in its {kind} {attr}) and the task has none"
            ),
            SwSkip::NoArchitectures => {
                write!(f, "the task requests CPU/GPU hardware and the queue publishes no architectures")
            }
            SwSkip::Cpu(m) => {
                write!(f, "no cpu alternative fits: ")?;
                for (i, x) in m.iter().enumerate() {
                    write!(f, "{}{x}", if i > 0 { "; " } else { "" })?;
                }
                Ok(())
            }
            SwSkip::NotGpuCapable => {
                write!(f, "the queue is not GPU-capable: no type=gpu entry in its CRIC architectures")
            }
            SwSkip::Gpu(m) => write!(f, "{m}"),
            SwSkip::Container { name, only_tags } => write!(
                f,
                "container_name={name} is not available (containers, tags{})",
                if *only_tags { ", only tags" } else { ", ALL sources" }
            ),
            SwSkip::Cvmfs { tag } => write!(f, "cvmfs has neither any nor {tag}"),
            SwSkip::ContainerOrCmtConfig { cmt_config, need_container } => write!(
                f,
                "no any or /cvmfs in containers, and sw_platform={cmt_config} {}",
                if *need_container { "runs on a base platform (container)" } else { "is not in cmtconfigs" }
            ),
            SwSkip::TagNeedsAnyContainer => {
                write!(f, "the task has a base platform and any is not in containers, so tags cannot be used")
            }
            SwSkip::NoTag { cmt_config, project, release, cvmfs_ok } => write!(
                f,
                "{}no tag with cmtconfig={cmt_config} project={project} release={release}",
                if *cvmfs_ok { "" } else { "cvmfs is missing and " }
            ),
            SwSkip::UnresolvedRegexp { cmt_config } => {
                write!(f, "due to unresolved regexp in cmtconfig={cmt_config} criteria=-regexpcmtconfig")
            }
            SwSkip::ArchitectureRequired => write!(f, "since architecture is required for GPU queues"),
            SwSkip::ArchitectureUnavailable { sw_platform, cause } => {
                write!(f, "since architecture={sw_platform} is unavailable ({cause})")
            }
        }
    }
}

/// Outcome of `check` for one queue.
#[derive(Debug, Clone, PartialEq)]
pub enum SwCheck {
    /// In `okSite`.
    Pass,
    /// In `noAutoSite`: not AUTO, and the task needs no container or hardware.
    NoAuto,
    Skip(SwSkip),
}

/// One CPU alternative against the queue's cpu entry (`Err(true, _)`: the code raises, which
/// skips the whole queue).
fn cpu_alternative(spec: &CpuSpec, q: &QueueSoftware, variant: ArchVariant) -> Result<(), (bool, CpuMismatch)> {
    let Some(cpu) = q.arch_entry("cpu") else {
        return Err((false, CpuMismatch::NoCpuEntry));
    };
    let Some(arch) = spec.arch.as_deref() else {
        return Err((true, CpuMismatch::TaskArchMissing));
    };
    let Some(offered) = cpu.attrs.get("arch") else {
        return Err((true, CpuMismatch::QueueArchMissing));
    };
    let blank_ok = |v: &AttrValue| {
        variant == ArchVariant::Seed && matches!(v, AttrValue::List(l) if l.iter().any(String::is_empty))
    };
    if arch == "*" {
        if offered.contains("excl") {
            return Err((false, CpuMismatch::Exclusive { attr: "arch", offered: offered.to_string() }));
        }
    } else if !offered.contains("any")
        && !offered.contains(arch)
        && !blank_ok(offered)
        && !spec.arch_re.as_ref().is_some_and(|re| offered.any_item(|i| re.is_match(i)))
    {
        return Err((
            false,
            CpuMismatch::NotOffered { attr: "arch", value: arch.into(), offered: offered.to_string() },
        ));
    }
    for (attr, value) in [("vendor", &spec.vendor), ("instr", &spec.instr)] {
        let listed = cpu.attrs.get(attr);
        if value == "*" {
            if let Some(l) = listed.filter(|l| l.contains("excl")) {
                return Err((false, CpuMismatch::Exclusive { attr, offered: l.to_string() }));
            }
        } else {
            let Some(l) = listed else {
                return Err((false, CpuMismatch::NotPublished { attr, value: value.clone() }));
            };
            if !l.contains("any") && !l.contains(value) && !blank_ok(l) {
                return Err((false, CpuMismatch::NotOffered { attr, value: value.clone(), offered: l.to_string() }));
            }
        }
    }
    Ok(())
}

/// The hardware part of `check` (steps 1-4 of the module doc).
fn hardware(q: &QueueSoftware, req: &SwRequest, variant: ArchVariant) -> Result<(), SwSkip> {
    for (kind, has_spec) in [("cpu", req.cpu.is_some()), ("gpu", req.gpu.is_some())] {
        if let Some(attr) = q.arch_entry(kind).and_then(QueueArch::excl_list_attr) {
            if !has_spec {
                let kind = if kind == "cpu" { "cpu" } else { "gpu" };
                return Err(SwSkip::ExclusiveHardware { kind, attr: attr.to_string() });
            }
        }
    }
    if req.cpu.is_none() && req.gpu.is_none() {
        return Ok(());
    }
    if !q.has_arch_map() {
        return Err(SwSkip::NoArchitectures);
    }
    if let Some(specs) = req.cpu {
        let mut why = Vec::new();
        let mut ok = false;
        for spec in specs {
            match cpu_alternative(spec, q, variant) {
                Ok(()) => {
                    ok = true;
                    break;
                }
                Err((raised, m)) => {
                    why.push(m);
                    if raised {
                        break;
                    }
                }
            }
        }
        if !ok {
            return Err(SwSkip::Cpu(why));
        }
    }
    if let Some(gpu) = req.gpu {
        if q.arch_entry("gpu").is_none() {
            return Err(SwSkip::NotGpuCapable);
        }
        match_gpu_spec(gpu, &q.wn_gpus).map_err(SwSkip::Gpu)?;
    }
    Ok(())
}

/// The fat-container rules (seed "Checks for Fat Containers"; code L1060-1095).
fn container_ok(q: &QueueSoftware, name: &str, only_tags: bool, all: Option<&QueueSoftware>) -> bool {
    if !only_tags && q.container_any() {
        return true;
    }
    if q.tags.iter().any(|t| t.container_name.as_deref().is_some_and(|c| !c.is_empty() && c == name)) {
        return true;
    }
    if q.tags.iter().any(|t| t.sources.iter().any(|s| s == name)) {
        return true;
    }
    if only_tags {
        return false;
    }
    let all_sources = || {
        all.into_iter()
            .flat_map(|a| a.tags.iter())
            .filter(|t| t.container_name.as_deref() == Some(name))
            .flat_map(|t| t.sources.iter())
    };
    q.containers
        .iter()
        .any(|prefix| name.starts_with(prefix.as_str()) || all_sources().any(|s| s.starts_with(prefix.as_str())))
}

/// `JsonSoftwareCheck.check` for one queue. `all` is the `ALL` pseudo-queue of the SW map,
/// whose tags resolve container names to sources.
pub fn json_software_check(
    q: &QueueSoftware,
    req: &SwRequest,
    all: Option<&QueueSoftware>,
    variant: ArchVariant,
) -> SwCheck {
    if !(q.is_auto() && q.in_sw_map) {
        if req.container_name.is_some() || req.cpu.is_some() || req.gpu.is_some() {
            return SwCheck::Skip(SwSkip::NotAuto { releases: q.releases.clone() });
        }
        return SwCheck::NoAuto;
    }
    if let Err(why) = hardware(q, req, variant) {
        return SwCheck::Skip(why);
    }
    let any_sw =
        t(req.cvmfs_tag) || t(req.cmt_config) || t(req.sw_project) || t(req.sw_version) || t(req.container_name);
    if !any_sw && (req.cpu.is_some() || req.gpu.is_some()) {
        return SwCheck::Pass;
    }
    if let Some(name) = req.container_name.filter(|n| !n.is_empty()) {
        return if container_ok(q, name, req.only_tags_fc, all) {
            SwCheck::Pass
        } else {
            SwCheck::Skip(SwSkip::Container { name: name.to_string(), only_tags: req.only_tags_fc })
        };
    }
    if req.cmt_config_only {
        return SwCheck::Pass;
    }
    let cvmfs_ok = q.cvmfs.iter().any(|c| c == "any" || req.cvmfs_tag == Some(c.as_str()));
    let cmt_listed = req.cmt_config.is_some_and(|c| q.cmtconfigs.iter().any(|x| x == c));
    let cmt_ok = match variant {
        ArchVariant::Seed => cmt_listed,
        ArchVariant::PandaServer => !req.need_container && cmt_listed,
    };
    if cvmfs_ok && (q.container_any() || cmt_ok) {
        return SwCheck::Pass;
    }
    let show = |s: Option<&str>| s.unwrap_or("None").to_string();
    if (cvmfs_ok && variant == ArchVariant::PandaServer) || req.need_cvmfs {
        return SwCheck::Skip(if cvmfs_ok {
            SwSkip::ContainerOrCmtConfig { cmt_config: show(req.cmt_config), need_container: req.need_container }
        } else {
            SwSkip::Cvmfs { tag: show(req.cvmfs_tag) }
        });
    }
    if req.need_container && !q.containers.iter().any(|c| c == "any") {
        return SwCheck::Skip(SwSkip::TagNeedsAnyContainer);
    }
    let tag_ok = q.tags.iter().any(|tag| {
        req.cmt_config == Some(tag.cmtconfig.as_str())
            && req.sw_project == Some(tag.project.as_str())
            && req.sw_version == Some(tag.release.as_str())
    });
    if tag_ok {
        SwCheck::Pass
    } else {
        SwCheck::Skip(SwSkip::NoTag {
            cmt_config: show(req.cmt_config),
            project: show(req.sw_project),
            release: show(req.sw_version),
            cvmfs_ok,
        })
    }
}

/// `resolve_cmt_config(queue, cmt_config, base_platform, sw_map)`: the first of the queue's
/// cmtconfigs the task's sw_platform regexp matches (`^…$`), with `@base_platform` appended;
/// `None` if the sw_platform is listed as is, matches nothing, or the queue has no SW map entry.
pub fn resolve_cmt_config(q: &QueueSoftware, arch: &TaskArch) -> Option<String> {
    let re = arch.cmt_re.as_ref()?;
    if !q.in_sw_map || q.cmtconfigs.iter().any(|c| *c == arch.sw_platform) {
        return None;
    }
    let found = q.cmtconfigs.iter().find(|c| re.is_match(c))?;
    Some(match arch.base_platform.as_deref().filter(|b| !b.is_empty()) {
        Some(b) => format!("{found}@{b}"),
        None => found.clone(),
    })
}

/// How a queue passes the broker's SW/HW filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SwPass {
    /// The task has no `transHome`: production skips the check.
    NotChecked,
    /// Passed `JsonSoftwareCheck`; the resolved platform when the sw_platform is a regexp.
    Auto { resolved_platform: Option<String> },
    /// `releases == ['ANY']`, allowed because the task needs no hardware (nor only-tags container).
    Any,
}

/// Which broker wraps the check (they differ in the `ANY` rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Broker {
    /// `AtlasProdJobBroker`: ANY queues also refuse only-tags fat containers.
    Production,
    /// `AtlasAnalJobBroker`.
    Analysis,
}

/// The SW/HW filter of a broker around `check` (prod L763-869, analysis L940-1060):
/// passed queues must resolve a regexp sw_platform; otherwise `releases == ['ANY']` queues pass
/// a task without CPU/GPU spec; everything else is skipped (`criteria=-cache`).
pub fn sw_filter(
    q: &QueueSoftware,
    arch: &TaskArch,
    req: &SwRequest,
    broker: Broker,
    all: Option<&QueueSoftware>,
    variant: ArchVariant,
) -> Result<SwPass, SwSkip> {
    let why = match json_software_check(q, req, all, variant) {
        SwCheck::Pass => {
            let resolved_platform = if arch.sw_platform.is_empty() { None } else { resolve_cmt_config(q, arch) };
            if !arch.sw_platform_is_regexp() || resolved_platform.is_some() {
                return Ok(SwPass::Auto { resolved_platform });
            }
            return Err(SwSkip::UnresolvedRegexp { cmt_config: arch.sw_platform.clone() });
        }
        SwCheck::NoAuto => SwSkip::NoRelease { releases: q.releases.clone() },
        SwCheck::Skip(why) => why,
    };
    let only_tags_container = broker == Broker::Production && t(req.container_name) && req.only_tags_fc;
    if !only_tags_container && req.cpu.is_none() && req.gpu.is_none() && q.is_any() {
        return Ok(SwPass::Any);
    }
    Err(why)
}

/// The production broker's filter 11 for a task (`transHome` `None` → not checked).
pub fn production_sw_check(
    q: &QueueSoftware,
    arch: &TaskArch,
    trans_home: Option<&str>,
    container_name: Option<&str>,
    only_tags_fc: bool,
    all: Option<&QueueSoftware>,
    variant: ArchVariant,
) -> Result<Result<SwPass, SwSkip>, ArchError> {
    let Some(th) = trans_home else {
        return Ok(Ok(SwPass::NotChecked));
    };
    let req = SwRequest::production(arch, th, container_name, only_tags_fc)?;
    Ok(sw_filter(q, arch, &req, Broker::Production, all, variant))
}

/// The analysis broker's architecture check for GPU queues (L846-866): a GPU queue (not for
/// HPO tasks) needs a task sw_platform that `check` accepts with `cmt_config_only` and no HW.
pub fn analysis_gpu_queue_check(
    q: &QueueSoftware,
    is_gpu_queue: bool,
    hpo_workflow: bool,
    arch: &TaskArch,
    variant: ArchVariant,
) -> Result<(), SwSkip> {
    if !is_gpu_queue || hpo_workflow {
        return Ok(());
    }
    if arch.sw_platform.is_empty() {
        return Err(SwSkip::ArchitectureRequired);
    }
    let req = SwRequest { cmt_config: Some(&arch.sw_platform), cmt_config_only: true, ..SwRequest::default() };
    let cause = match json_software_check(q, &req, None, variant) {
        SwCheck::Pass => return Ok(()),
        SwCheck::NoAuto => SwSkip::NoRelease { releases: q.releases.clone() },
        SwCheck::Skip(why) => why,
    };
    Err(SwSkip::ArchitectureUnavailable { sw_platform: arch.sw_platform.clone(), cause: Box::new(cause) })
}

/// The dispatch-time gate (`job_complex_module.check_task_architecture`, L2204-2230): the GPUs
/// a pilot reports for its node must satisfy the task's GPU spec; no GPU requirement or no
/// reported GPUs → accepted.
pub fn check_task_architecture(arch: &TaskArch, node_gpus: &[WnGpu]) -> Result<(), GpuMismatch> {
    match &arch.gpu_spec {
        Some(spec) if !node_gpus.is_empty() => match_gpu_spec(spec, node_gpus),
        _ => Ok(()),
    }
}
