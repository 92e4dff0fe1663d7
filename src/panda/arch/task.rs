//! The task side: parsing a task's `architecture` as `JediTaskSpec` does (reference §5 "Old
//! string format" and "JSON gpu_spec", JediTaskSpec.py L1267-1455; seed 004 "Checks for CPU
//! and/or GPU Hardware"), after the refiner's `reformat_architecture` (TaskRefinerBase.py
//! L106-107), since that is the form every broker reads.
//!
//! The string getters, exactly as the code's regexps cut the text:
//!
//! ```text
//! sw_platform   = text up to the first @ # &                    ^([^@#&]*)
//! base_platform = after the first @, up to # &  ("" → none)     @([^#&]*)
//! cpu specs     = after the first #, up to ^ @ &; one () pair stripped; split on |;
//!                 each arch[-vendor[-instr]], missing parts *    #([^\^@&]*)
//!                 no #: the first -field becomes the arch (see ArchVariant), none if the
//!                 text starts with ^ @ &
//! gpu spec      = after the first &, up to ^ @ #; split on :; vendor[-model] (model *),
//!                 then key<op>value with op in >= <= != == > < =; cuda→version,
//!                 uarch→microarchitecture (value only), driver→driver_version, vram, model
//!                 (!= → {pattern, excl: true}); = is written ==; unknown keys ignored
//! ```
//!
//! `reformat_architecture` then keeps `sw_platform`, `base_platform`, `cpu_specs` and
//! `gpu_spec` with every `"*"` value and every empty spec dropped, and reading the JSON re-adds
//! `vendor`/`instr`/`model` = `*`. So `#*` is no CPU requirement and `&*` no GPU requirement,
//! while `x86_64-el9-gcc13-opt` alone carries the CPU requirement `x86_64`. A JSON
//! architecture is read as is (unless it carries `encoded_platform`, which is reformatted).

use serde_json::Value;

use super::gpu::{GpuSpec, ModelReq, Pattern};
use super::refine::{Py, get, json_cpu, json_gpu, json_sw, reformat};
use super::version::Constraint;
use super::{ArchError, ArchVariant};

/// One alternative of the task's CPU requirement (`host_cpu_spec`), with its arch regexp
/// (`re.search("^" + arch + "$", ·)`, case-sensitive) compiled.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuSpec {
    /// `None` when the refined JSON has no `arch` (e.g. `#*-intel`: the `*` was dropped):
    /// PanDA's check then raises `KeyError` and skips the queue.
    pub arch: Option<String>,
    /// `*` = any.
    pub vendor: String,
    /// `*` = any.
    pub instr: String,
    pub(super) arch_re: Option<Pattern>,
}

/// How the architecture was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchForm {
    /// `sw_platform[@base_platform][#host_cpu_spec][&host_gpu_spec]`.
    String,
    /// A JSON dictionary.
    Json,
}

/// A task architecture as the brokers read it, with every regexp compiled once.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskArch {
    /// The text as given.
    pub text: String,
    pub form: ArchForm,
    /// The JSON PanDA stores after `reformat_architecture` (the text itself for JSON without
    /// `encoded_platform`).
    pub refined: String,
    /// `get_sw_platform()`: the cmtconfig, possibly a regexp; `""` when none.
    pub sw_platform: String,
    /// `get_base_platform()`; `Some("")` is possible in the JSON form (and then counts as a
    /// container request in production, `is not None`).
    pub base_platform: Option<String>,
    /// `get_host_cpu_spec()`: alternatives, OR-ed.
    pub cpu_specs: Option<Vec<CpuSpec>>,
    /// `get_host_gpu_spec()`.
    pub gpu_spec: Option<GpuSpec>,
    /// `cpu_pref.preferred_architecture_level` of the JSON form (x86-64-vN preference).
    pub preferred_architecture_level: Option<String>,
    /// Things PanDA silently ignores or can never satisfy (for an operator).
    pub warnings: Vec<String>,
    /// `re.match(cmt_config, cmt_config) is None`: the sw_platform is a regexp to resolve.
    pub(super) cmt_is_regexp: bool,
    /// `^sw_platform$` for `resolve_cmt_config`.
    pub(super) cmt_re: Option<Pattern>,
}

impl TaskArch {
    /// A task without an architecture (`architecture` NULL): no platform, no HW spec.
    pub fn none() -> TaskArch {
        TaskArch {
            text: String::new(),
            form: ArchForm::Json,
            refined: "{}".into(),
            sw_platform: String::new(),
            base_platform: None,
            cpu_specs: None,
            gpu_spec: None,
            preferred_architecture_level: None,
            warnings: Vec::new(),
            cmt_is_regexp: false,
            cmt_re: None,
        }
    }

    /// Parse with the seed's reading ([`ArchVariant::Seed`]).
    pub fn parse(text: &str) -> Result<TaskArch, ArchError> {
        Self::parse_with(text, ArchVariant::Seed)
    }

    /// The value of an ART test header line `# art-architecture: VALUE`, parsed; a line
    /// without that key is a [`ArchError::NotArtHeader`].
    pub fn parse_art_header(line: &str) -> Result<TaskArch, ArchError> {
        let value = line
            .trim_start()
            .strip_prefix('#')
            .map(str::trim_start)
            .and_then(|l| l.strip_prefix("art-architecture:"))
            .ok_or_else(|| ArchError::NotArtHeader(line.to_string()))?;
        Self::parse(value.trim())
    }

    /// Parse as the refiner stores and the brokers read it; see the module doc.
    pub fn parse_with(text: &str, variant: ArchVariant) -> Result<TaskArch, ArchError> {
        stray_quote(text)?;
        let mut warnings = Vec::new();
        let json = match serde_json::from_str::<Py>(text) {
            Ok(Py::Dict(d)) => Some(d),
            _ => None,
        };
        let form = if json.is_some() { ArchForm::Json } else { ArchForm::String };
        let (dict, refined) = match json {
            Some(d) if get(&d, "encoded_platform").is_none() => (d, text.to_string()),
            Some(d) => {
                let enc = match get(&d, "encoded_platform") {
                    Some(Py::Str(s)) => Some(s.clone()),
                    Some(Py::Other(Value::Null)) | None => None,
                    Some(_) => return Err(ArchError::field("encoded_platform", "a string")),
                };
                reformat(Some(&d), text, enc.as_deref(), variant, &mut warnings)?
            }
            None => reformat(None, text, None, variant, &mut warnings)?,
        };
        let sw_platform = json_sw(&dict)?;
        let base_platform = match get(&dict, "base_platform") {
            None | Some(Py::Other(Value::Null)) => None,
            Some(Py::Str(s)) => Some(s.clone()),
            Some(_) => return Err(ArchError::field("base_platform", "a string")),
        };
        let cpu = json_cpu(&dict, &refined, None, variant)?;
        let gpu = json_gpu(&dict, &refined, &mut warnings)?;
        let preferred_architecture_level = match get(&dict, "cpu_pref") {
            Some(Py::Dict(p)) => match get(p, "preferred_architecture_level") {
                Some(Py::Str(s)) => Some(s.clone()),
                Some(Py::Other(v)) if !v.is_null() => Some(v.to_string()),
                _ => None,
            },
            _ => None,
        };
        let cpu_specs = match cpu {
            Some(specs) if !specs.is_empty() => Some(specs.iter().map(typed_cpu).collect::<Result<Vec<_>, _>>()?),
            _ => None,
        };
        let gpu_spec = gpu.map(|g| typed_gpu(&g, &mut warnings)).transpose()?;
        let (cmt_is_regexp, cmt_re) = if sw_platform.is_empty() {
            (false, None)
        } else {
            let selfmatch = Pattern::re_match(&sw_platform, false, "sw_platform")?;
            (!selfmatch.is_match(&sw_platform), Some(Pattern::anchored_search(&sw_platform, "sw_platform")?))
        };
        let mut seen = std::collections::BTreeSet::new();
        warnings.retain(|w| seen.insert(w.clone()));
        Ok(TaskArch {
            text: text.to_string(),
            form,
            refined,
            sw_platform,
            base_platform,
            cpu_specs,
            gpu_spec,
            preferred_architecture_level,
            warnings,
            cmt_is_regexp,
            cmt_re,
        })
    }

    /// Whether the sw_platform is a regexp that must resolve to one of a queue's cmtconfigs.
    pub fn sw_platform_is_regexp(&self) -> bool {
        self.cmt_is_regexp
    }
}

/// The seed's Warning: ART passes `# art-architecture:` literally, so a quoted value reaches
/// prun with its quotes and JSON parsing silently fails. Here that is an error.
fn stray_quote(text: &str) -> Result<(), ArchError> {
    let t = text.trim();
    let first = t.chars().next();
    let last = t.chars().last();
    let quote = match (first, last) {
        (Some(q @ ('\'' | '"')), _) => (q, text.len() - text.trim_start().len()),
        (_, Some('\'')) => ('\'', text.trim_end().len() - 1),
        _ => return Ok(()),
    };
    let inner = t.trim_matches(|c| c == '\'' || c == '"');
    let json_inside = serde_json::from_str::<Value>(inner).is_ok_and(|v| v.is_object());
    Err(ArchError::StrayQuote { quote: quote.0, at: quote.1, json_inside })
}

fn text_field<'a>(d: &'a [(String, Py)], key: &str, field: &str) -> Result<Option<&'a str>, ArchError> {
    match get(d, key) {
        None => Ok(None),
        Some(Py::Str(s)) => Ok(Some(s)),
        Some(_) => Err(ArchError::field(field, "a string")),
    }
}

fn typed_cpu(p: &Py) -> Result<CpuSpec, ArchError> {
    let Py::Dict(d) = p else {
        return Err(ArchError::field("cpu_specs[]", "an object"));
    };
    let arch = text_field(d, "arch", "cpu_specs[].arch")?.map(str::to_string);
    let vendor = text_field(d, "vendor", "cpu_specs[].vendor")?.unwrap_or("*").to_string();
    let instr = text_field(d, "instr", "cpu_specs[].instr")?.unwrap_or("*").to_string();
    let arch_re = match arch.as_deref() {
        Some(a) if a != "*" => Some(Pattern::anchored_search(a, "cpu arch")?),
        _ => None,
    };
    Ok(CpuSpec { arch, vendor, instr, arch_re })
}

fn constraint(d: &[(String, Py)], key: &str, warnings: &mut Vec<String>) -> Result<Option<Constraint>, ArchError> {
    let field = format!("gpu_spec.{key}");
    let Some(raw) = text_field(d, key, &field)? else {
        return Ok(None);
    };
    let c = Constraint::parse(raw);
    if !c.is_valid() {
        warnings.push(format!(
            "{field} '{raw}' is not <op><version> with op in ==, =, >=, <=, >, <, !=: PanDA's compare_version_string returns None, so no GPU satisfies it"
        ));
    }
    Ok(Some(c))
}

/// The typed, compiled GPU requirement of a `gpu_spec` dict (vendor/model defaulted).
fn typed_gpu(d: &[(String, Py)], warnings: &mut Vec<String>) -> Result<GpuSpec, ArchError> {
    const KNOWN: [&str; 6] = ["vendor", "model", "vram", "microarchitecture", "version", "driver_version"];
    for (k, _) in d {
        if !KNOWN.contains(&k.as_str()) {
            let hint = if k == "pattern" || k == "excl" {
                " (seed Note: pattern and excl must be nested inside model as a dictionary)"
            } else {
                ""
            };
            warnings.push(format!("gpu_spec key '{k}' is not used by PanDA and has no effect{hint}"));
        }
    }
    let vendor = match text_field(d, "vendor", "gpu_spec.vendor")? {
        None | Some("*") => None,
        Some(v) => Some(Pattern::re_match(v, true, "gpu vendor")?),
    };
    let model = match get(d, "model") {
        None => ModelReq::Any,
        Some(Py::Str(s)) if s == "*" => ModelReq::Any,
        Some(Py::Str(s)) => ModelReq::Include(Pattern::re_match(s, true, "gpu model")?),
        Some(Py::Dict(m)) => {
            let pattern = text_field(m, "pattern", "gpu_spec.model.pattern")?
                .ok_or_else(|| ArchError::field("gpu_spec.model.pattern", "present when model is an object"))?;
            let excl = match get(m, "excl") {
                None => false,
                Some(Py::Other(Value::Bool(b))) => *b,
                Some(Py::Other(Value::Number(n))) if n.as_f64() == Some(1.0) => true,
                Some(Py::Other(Value::Number(n))) if n.as_f64() == Some(0.0) => false,
                Some(_) => return Err(ArchError::field("gpu_spec.model.excl", "true or false")),
            };
            let p = Pattern::re_match(pattern, true, "gpu model")?;
            if excl { ModelReq::Exclude(p) } else { ModelReq::Include(p) }
        }
        Some(_) => return Err(ArchError::field("gpu_spec.model", "a regexp string or {pattern, excl}")),
    };
    let microarchitecture = match get(d, "microarchitecture") {
        None => None,
        Some(Py::Str(s)) => Some(vec![s.clone()]),
        Some(Py::List(l)) => Some(
            l.iter()
                .map(|x| match x {
                    Py::Str(s) => Ok(s.clone()),
                    _ => Err(ArchError::field("gpu_spec.microarchitecture[]", "a string")),
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(_) => return Err(ArchError::field("gpu_spec.microarchitecture", "a string or a list of strings")),
    };
    Ok(GpuSpec {
        vendor,
        model,
        vram: constraint(d, "vram", warnings)?,
        microarchitecture,
        version: constraint(d, "version", warnings)?,
        driver_version: constraint(d, "driver_version", warnings)?,
    })
}
