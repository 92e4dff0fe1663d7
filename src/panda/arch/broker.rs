//! The brokers around `check`: the request a task makes (`SwRequest`, from the production
//! broker's `transHome` reading, AtlasProdJobBroker.py L763-800, or the analysis broker's
//! standalone case), `resolve_cmt_config` (AtlasBrokerUtils.py L1130-1212), the SW/HW filter
//! with its regexp-cmtconfig and `releases == ['ANY']` rules (prod L800-869, analysis
//! L940-1060), the analysis architecture check of GPU queues (L846-866) and the dispatch-time
//! gate (`job_complex_module.check_task_architecture`, L2204-2230).

use super::gpu::{GpuMismatch, GpuSpec, WnGpu, match_gpu_spec};
use super::queue::{AttrValue, QueueSoftware, SwCheck, json_software_check, t};
use super::skip::SwSkip;
use super::task::{CpuSpec, TaskArch};
use super::{ArchError, ArchVariant};

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

/// `resolve_cmt_config(queue, cmt_config, base_platform, sw_map)` (AtlasBrokerUtils.py
/// L1177-1212): the first of the queue's cmtconfigs the task's sw_platform regexp matches
/// (`^…$`), with `@base_platform` appended; `None` if the sw_platform is listed as is or the
/// queue has no SW map entry.
///
/// When no cmtconfig matches, the variants differ. Seed 004 ("The regexp in sw_platform is
/// resolved to a relevant string in the cmtconfigs list of the queue") leaves it unresolved;
/// panda-server 1.0.4 then tries [`resolve_arch_in_cmt_config`] (called at L1204-1205), so
/// `(aarch64|x86_64)-el9-gcc15-opt` resolves to `x86_64-el9-gcc15-opt` on an `x86_64` queue.
pub fn resolve_cmt_config(q: &QueueSoftware, arch: &TaskArch, variant: ArchVariant) -> Option<String> {
    let re = arch.cmt_re.as_ref()?;
    if !q.in_sw_map || q.cmtconfigs.contains(&arch.sw_platform) {
        return None;
    }
    let found = match q.cmtconfigs.iter().find(|c| re.is_match(c)) {
        Some(c) => c.clone(),
        None if variant == ArchVariant::PandaServer => resolve_arch_in_cmt_config(q, &arch.sw_platform)?,
        None => return None,
    };
    Some(match arch.base_platform.as_deref().filter(|b| !b.is_empty()) {
        Some(b) => format!("{found}@{b}"),
        None => found,
    })
}

/// `get_queue_cpu_architectures` (AtlasBrokerUtils.py L1135-1146): the `arch` values of every
/// `type: cpu` entry of the queue's `architectures`, concatenated. A plain-string `arch` is
/// added character by character, as Python's `list += str` does.
pub fn queue_cpu_architectures(q: &QueueSoftware) -> Vec<String> {
    let mut out = Vec::new();
    for a in q.architectures.iter().filter(|a| a.kind.as_deref() == Some("cpu")) {
        match a.attrs.get("arch") {
            Some(AttrValue::List(l)) => out.extend(l.iter().cloned()),
            Some(AttrValue::Text(t)) => out.extend(t.chars().map(String::from)),
            None => {}
        }
    }
    out
}

/// The leading architecture alternation of a cmtconfig and the literal rest:
/// `(x86_64|aarch64)-el9-gcc15-opt` → (`[x86_64, aarch64]`, `-el9-gcc15-opt`). Only that shape
/// counts (panda-server's `ARCH_ALTERNATION_IN_CMT_CONFIG`, L1131): every alternative and the
/// non-empty rest made of ASCII letters, digits and `_ . + -`; as Python's `$`, one trailing
/// newline is allowed.
fn arch_alternation(cmt_config: &str) -> Option<(Vec<&str>, &str)> {
    let literal = |w: &str| {
        !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'-'))
    };
    let s = cmt_config.strip_suffix('\n').unwrap_or(cmt_config);
    let (alternatives, rest) = s.strip_prefix('(')?.split_once(')')?;
    let alternatives: Vec<&str> = alternatives.split('|').collect();
    (alternatives.iter().all(|a| literal(a)) && literal(rest)).then_some((alternatives, rest))
}

/// `resolve_arch_in_cmt_config` (AtlasBrokerUtils.py L1150-1174; panda-server 1.0.4 only): a
/// cmtconfig `(a|b|…)rest` becomes `a + rest` for the first alternative the queue's CPU
/// architectures list (any alternative when they list `any`); `None` for any other shape, a
/// queue without CPU architectures, or no listed alternative.
pub fn resolve_arch_in_cmt_config(q: &QueueSoftware, cmt_config: &str) -> Option<String> {
    let (alternatives, rest) = arch_alternation(cmt_config)?;
    let archs = queue_cpu_architectures(q);
    if archs.is_empty() {
        return None;
    }
    let listed = |a: &str| archs.iter().any(|x| x == "any" || x == a);
    alternatives.into_iter().find(|a| listed(a)).map(|a| format!("{a}{rest}"))
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
            let resolved_platform =
                if arch.sw_platform.is_empty() { None } else { resolve_cmt_config(q, arch, variant) };
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
