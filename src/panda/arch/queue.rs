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

use super::ArchVariant;
use super::broker::SwRequest;
use super::gpu::{WnGpu, match_gpu_spec};
use super::skip::{CpuMismatch, SwSkip};
use super::task::CpuSpec;

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
    /// Platform the release is built for (e.g. `x86_64-slc6-gcc62-opt`), compared with the
    /// task's `sw_platform` (seed 004 "Checks for Releases, Caches, or Nightlies"); default
    /// empty.
    pub cmtconfig: String,
    /// Container the release ships as: a task whose `container_name` equals it passes the
    /// fat-container check (seed 004 "Checks for Fat Containers"); default none.
    pub container_name: Option<String>,
    /// Software project (e.g. `Athena`, `AthDerivation`), compared with the task's `sw_project`
    /// (seed 004); default empty.
    pub project: String,
    /// Release number (e.g. `21.0.38`), compared with the task's `sw_version` (seed 004);
    /// default empty.
    pub release: String,
    /// Container image paths the tag's container comes from: a task whose `container_name` is
    /// one of them passes the fat-container check (seed 004); default empty.
    pub sources: Vec<String>,
    /// The tag's full name (e.g. `VO-atlas-Athena-21.0.38-x86_64-slc6-gcc62-opt`, seed 004);
    /// informational, no check reads it; default empty.
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
    /// `cmtconfigs` of the `SW_TAGS` entry: platforms the PQ runs natively (e.g.
    /// `x86_64-el9-gcc13-opt`); a task's `sw_platform` must be listed (a regexp resolves to one
    /// of them) unless a container or a tag covers it (seed 004 "Checks for Releases, Caches, or
    /// Nightlies"); default empty.
    #[serde(default)]
    pub cmtconfigs: Vec<String>,
    /// `containers` of the `SW_TAGS` entry: `any` or `/cvmfs` accepts every container; other
    /// entries are prefixes a task's `container_name` must start with (seed 004 "Checks for Fat
    /// Containers"); default empty.
    #[serde(default)]
    pub containers: Vec<String>,
    /// `cvmfs` of the `SW_TAGS` entry: CVMFS repositories at the PQ (`atlas` for releases and
    /// caches, `nightlies`, or `any`); a release, cache or nightly needs its repository or `any`
    /// listed (seed 004); default empty.
    #[serde(default)]
    pub cvmfs: Vec<String>,
    /// `architectures` of the `SW_TAGS` entry (CRIC): one map per hardware type, `type` (`cpu` or
    /// `gpu`) and attribute lists (`arch`, `vendor`, `instr`, …; `excl` in a list accepts only
    /// tasks that ask for a listed value), checked against a task's CPU and GPU specs (seed 004
    /// "Checks for CPU and/or GPU Hardware", reference panda.md §5); default empty.
    #[serde(default)]
    pub architectures: Vec<QueueArch>,
    /// `tags` of the `SW_TAGS` entry: the releases and caches installed at the PQ; a task's
    /// platform, project and version must equal one tag's when the cvmfs, container and
    /// cmtconfig rules do not pass it (seed 004); default empty.
    #[serde(default)]
    pub tags: Vec<SwTag>,
    /// Worker-node GPU rows of the PQ (`MV_WORKER_NODE_GPU_SUMMARY`, reference panda.md §5), the
    /// GPUs a task's `gpu_spec` is matched against; empty (default): analysis brokerage takes one
    /// row per GPU kind of the PQ's CEs (`sites[].ces[].gpus`), production brokerage none.
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

    pub(super) fn is_any(&self) -> bool {
        self.releases.len() == 1 && self.releases.first().is_some_and(|r| r == "ANY")
    }

    fn container_any(&self) -> bool {
        self.containers.iter().any(|c| c == "any" || c == "/cvmfs")
    }
}

/// Python truthiness of an optional string.
pub(super) fn t(s: Option<&str>) -> bool {
    s.is_some_and(|s| !s.is_empty())
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
