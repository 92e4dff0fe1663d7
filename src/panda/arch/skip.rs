//! Why a queue fails the SW/HW check: one variant per rule of `JsonSoftwareCheck.check` and of
//! the brokers around it, each `Display`ing what PanDA checked (the brokers log only
//! `skip site=… due to missing SW cache=… or irrelevant HW … criteria=-cache` and
//! `… due to unresolved regexp in cmtconfig=… criteria=-regexpcmtconfig`; here the rule is
//! named). All are permanent skips for the cycle, never PanDA's temporary `siteSkippedTmp`.

use std::fmt;

use super::gpu::GpuMismatch;

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
