//! `panda::arch` — task architectures and whether a queue can run them: the CPU/GPU hardware
//! check and the release/cache/container availability check of PanDA's brokers (seed 004,
//! "Release/cache Availability Check for releases=AUTO", "Checks for CPU and/or GPU Hardware",
//! "Checks for Fat Containers", "Checks for Releases, Caches, or Nightlies"; reference
//! `panda.md` §5 and the §9 vectors; panda-server 1.0.4 `JediTaskSpec.py` L1267-1455,
//! `AtlasBrokerUtils.py` L923-1212, `srvcore/hardware_matching.py` L17-128).
//!
//! * [`TaskArch`] ([`task`]): the architecture in every form the seed shows — the old string
//!   `sw_platform[@base_platform][#host_cpu_spec][&host_gpu_spec]` (CPU regexps such as
//!   `#(x86_64|aarch64)`, the GPU shorthand `#&nvidia:model=.*A100.*:vram>=40960:cuda>=12.0:
//!   driver>=575.0` with `model!=` as exclusion and `=` as `==`) and the JSON form (`cpu_specs`,
//!   `gpu_spec` with `model` a regexp or `{pattern, excl}`, operator strings for `vram`,
//!   `version`, `driver_version`, `microarchitecture` a string or a list), read after the
//!   refiner's `reformat_architecture` as the brokers read it. Every regexp is compiled once,
//!   at parse time; one the `regex` crate cannot compile (look-around, back-references) is an
//!   [`ArchError::Regex`] naming it. A value wrapped in quotes (the seed's ART Warning) is an
//!   [`ArchError::StrayQuote`] instead of a silent miss.
//! * [`match_gpu_spec`] ([`gpu`]) and [`compare_version_string`] ([`version`]): GPU attributes
//!   against worker-node GPU data; versions compared as PEP 440 tuples (`packaging.version`).
//! * [`json_software_check`] ([`queue`]): one queue's `architectures` (with `excl`), the
//!   two-stage GPU selection (CRIC capability gate, then worker-node attributes), and the
//!   cvmfs / container / cmtconfig / tag rules; the reasons of a skip in [`skip`].
//! * [`sw_filter`], [`production_sw_check`], [`resolve_cmt_config`] ([`broker`]): the brokers'
//!   SW/HW filter around it (regexp cmtconfig, `releases == ['ANY']`).
//!
//! Regexps follow Python `re.match`: anchored at the start only. GPU vendor and model patterns
//! are case-insensitive (the code passes `re.IGNORECASE` when matching them against the
//! worker-node values); the CPU arch (`re.search("^" + arch + "$", …)`) and the cmtconfig
//! regexps are case-sensitive, as in the code. `microarchitecture` is an exact, case-sensitive
//! list membership.
//!
//! Where the seed and panda-server 1.0.4 differ, [`ArchVariant`] chooses:
//!
//! | | `Seed` (default) | `PandaServer` (1.0.4 code) |
//! |---|---|---|
//! | queue `"arch": [""]` and task `#x86_64` (reference §5 ⚠, §9 vector) | accepted: `""` leaves the attribute open (also for `vendor`, `instr`) | rejected |
//! | CPU arch implied when there is no `#` | first `-` field of `sw_platform` | first `-` field of the whole string (`x86_64@el9` → `x86_64@el9`) |
//! | release tags as fallback | whenever "cvmfs and (any//cvmfs container or cmtconfig listed)" fails | only when the cvmfs tag is missing (`elif`) |
//! | cmtconfig listed, task with a base platform | passes | needs `any` or `/cvmfs` in `containers` |
//! | regexp sw_platform matching none of the queue's cmtconfigs | unresolved (the queue is skipped, `-regexpcmtconfig`) | a leading `(a\|b)` alternation takes the first alternative the queue's CPU `arch` lists (or any, with `any`): `(aarch64\|x86_64)-el9-gcc15-opt` → `x86_64-el9-gcc15-opt` |
//!
//! The two rows before the last are not marked in the reference: they come from reading the
//! code's `check` (L1096-1120) against the seed's "Checks for Releases, Caches, or Nightlies".
//! The last row is the seed's "The regexp in sw_platform is resolved to a relevant string in
//! the cmtconfigs list of the queue" against `resolve_arch_in_cmt_config` (AtlasBrokerUtils.py
//! L1150-1174), which panda-server 1.0.4 tries when no cmtconfig matches.
//! Everything else follows the code where the seed is silent (e.g. the implied CPU spec of a
//! plain `x86_64-el9-gcc13-opt`, which makes queues without `architectures` reject it).

pub mod broker;
pub mod gpu;
pub mod queue;
mod refine;
pub mod skip;
pub mod task;
pub mod version;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use broker::{
    Broker, SwPass, SwRequest, analysis_gpu_queue_check, check_task_architecture, production_sw_check,
    queue_cpu_architectures, resolve_arch_in_cmt_config, resolve_cmt_config, sw_filter,
};
pub use gpu::{
    GpuAttr, GpuMismatch, GpuSpec, GpuVerdict, ModelReq, Pattern, WnGpu, WnGpuRow, gpu_verdicts, match_gpu_spec,
};
pub use queue::{AttrValue, QueueArch, QueueSoftware, SwCheck, SwTag, json_software_check};
pub use skip::{CpuMismatch, SwSkip};
pub use task::{ArchForm, CpuSpec, TaskArch};
pub use version::{Constraint, Op, Version, compare_version_string};

/// Seed 004 or panda-server 1.0.4 where they differ (table in the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ArchVariant {
    /// The seed page's rules.
    #[default]
    Seed,
    /// The code of panda-server 1.0.4.
    PandaServer,
}

/// Settings of the architecture checks. No gdpconfig key is read by this code
/// (`JsonSoftwareCheck` and `hardware_matching` take no configuration), so only the variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ArchParams {
    pub variant: ArchVariant,
}

/// The (component, key) pairs of gdpconfig that [`ArchParams`] reads: none.
pub const GDPCONFIG_KEYS: &[(&str, &str)] = &[];

/// Why an architecture (or a request derived from it) cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchError {
    /// The seed's Warning: a quoted value (an ART header passes it literally).
    #[error("{}", stray_quote_message(*quote, *at, *json_inside))]
    StrayQuote { quote: char, at: usize, json_inside: bool },
    /// A pattern that does not compile.
    #[error("{what} pattern '{pattern}' is not a regular expression pilotsim can compile: {reason}")]
    Regex { what: String, pattern: String, reason: String },
    /// A JSON field of the wrong type.
    #[error("{field} must be {expected}")]
    Field { field: String, expected: &'static str },
    /// A production `transHome` without `-` (PanDA raises `IndexError`).
    #[error("transHome '{0}' is not Project-Version (e.g. Athena-24.0.1)")]
    TransHome(String),
    /// [`TaskArch::parse_art_header`] on another line.
    #[error("not an art-architecture header ('# art-architecture: VALUE'): {0:?}")]
    NotArtHeader(String),
}

impl ArchError {
    pub(crate) fn field(field: &str, expected: &'static str) -> ArchError {
        ArchError::Field { field: field.to_string(), expected }
    }
}

fn stray_quote_message(quote: char, at: usize, json_inside: bool) -> String {
    let what = if json_inside { "JSON wrapped in quotes" } else { "a quoted value" };
    format!(
        "stray quote {quote} at byte {at} of the architecture: {what}; ART passes the art-architecture header literally \
         (only a shell strips quotes), so PanDA would silently fail to parse it and the test would appear missing — \
         remove the quotes"
    )
}
