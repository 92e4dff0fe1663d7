//! `JediTaskSpec`'s architecture getters and `reformat_architecture` (JediTaskSpec.py
//! L1267-1455), over values that keep Python's dict order (parsed in document order, not
//! through `serde_json::Value`, whose objects sort their keys) so that the refined text is what
//! `json.dumps` writes (the GPU getter falls back to the string parser on that text when the
//! JSON has no `gpu_spec`). The grammar is in the [`super::task`] module doc.

use serde_json::Value;

use super::{ArchError, ArchVariant};

/// An ordered Python value of the refined architecture (dicts keep insertion order, as
/// `json.dumps` writes them).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Py {
    Str(String),
    Dict(Vec<(String, Py)>),
    List(Vec<Py>),
    Other(Value),
}

/// Parsed in document order (`serde_json::Value` sorts object keys); a repeated key keeps its
/// first position and its last value, as Python's `json.loads` dict.
impl<'de> serde::Deserialize<'de> for Py {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Py, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Py;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E>(self, b: bool) -> Result<Py, E> {
                Ok(Py::Other(Value::Bool(b)))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Py, E> {
                Ok(Py::Other(Value::from(n)))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Py, E> {
                Ok(Py::Other(Value::from(n)))
            }
            fn visit_f64<E>(self, x: f64) -> Result<Py, E> {
                Ok(Py::Other(Value::from(x)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Py, E> {
                Ok(Py::str(s))
            }
            fn visit_string<E>(self, s: String) -> Result<Py, E> {
                Ok(Py::Str(s))
            }
            fn visit_unit<E>(self) -> Result<Py, E> {
                Ok(Py::Other(Value::Null))
            }
            fn visit_none<E>(self) -> Result<Py, E> {
                Ok(Py::Other(Value::Null))
            }
            fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Py, D::Error> {
                serde::Deserialize::deserialize(d)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Py, A::Error> {
                let mut l = Vec::new();
                while let Some(v) = a.next_element()? {
                    l.push(v);
                }
                Ok(Py::List(l))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Py, A::Error> {
                let mut d: Vec<(String, Py)> = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, Py>()? {
                    match d.iter_mut().find(|(key, _)| *key == k) {
                        Some(slot) => slot.1 = v,
                        None => d.push((k, v)),
                    }
                }
                Ok(Py::Dict(d))
            }
        }
        d.deserialize_any(V)
    }
}

impl Py {
    fn str(s: &str) -> Py {
        Py::Str(s.to_string())
    }

    fn is_star(&self) -> bool {
        matches!(self, Py::Str(s) if s == "*")
    }

    /// Python truthiness.
    fn truthy(&self) -> bool {
        match self {
            Py::Str(s) => !s.is_empty(),
            Py::Dict(d) => !d.is_empty(),
            Py::List(l) => !l.is_empty(),
            Py::Other(Value::Null) | Py::Other(Value::Bool(false)) => false,
            Py::Other(Value::Number(n)) => n.as_f64() != Some(0.0),
            Py::Other(_) => true,
        }
    }

    /// `json.dumps` with its default separators and `ensure_ascii`.
    fn dump(&self, out: &mut String) {
        match self {
            Py::Str(s) => dump_str(s, out),
            Py::Dict(d) => {
                out.push('{');
                for (i, (k, v)) in d.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    dump_str(k, out);
                    out.push_str(": ");
                    v.dump(out);
                }
                out.push('}');
            }
            Py::List(l) => {
                out.push('[');
                for (i, v) in l.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.dump(out);
                }
                out.push(']');
            }
            Py::Other(v) => out.push_str(&v.to_string()),
        }
    }
}

fn dump_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

pub(super) fn get<'a>(d: &'a [(String, Py)], key: &str) -> Option<&'a Py> {
    d.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
}

pub(super) fn set_default(d: &mut Vec<(String, Py)>, key: &str) {
    if get(d, key).is_none() {
        d.push((key.to_string(), Py::str("*")));
    }
}

/// Text after the first `c`, up to any of `stops`; `None` without `c`.
fn after(text: &str, c: char, stops: &[char]) -> Option<String> {
    let rest = &text[text.find(c)? + c.len_utf8()..];
    Some(rest[..rest.find(stops).unwrap_or(rest.len())].to_string())
}

/// `get_sw_platform` of the string form.
pub(super) fn sw_platform_of(text: &str) -> &str {
    &text[..text.find(['@', '#', '&']).unwrap_or(text.len())]
}

/// `get_base_platform` of the string form (`""` → `None`).
pub(super) fn base_of(text: &str) -> Option<String> {
    after(text, '@', &['#', '&']).filter(|s| !s.is_empty())
}

/// `get_host_cpu_spec` of the string form, as `[{arch, vendor, instr}]` dicts.
pub(super) fn cpu_of(text: &str, variant: ArchVariant) -> Option<Vec<Py>> {
    let spec = |arch: &str, vendor: &str, instr: &str| {
        Py::Dict(vec![
            ("arch".into(), Py::str(arch)),
            ("vendor".into(), Py::str(vendor)),
            ("instr".into(), Py::str(instr)),
        ])
    };
    if text.is_empty() {
        return None;
    }
    let Some(specs) = after(text, '#', &['^', '@', '&']) else {
        if text.starts_with(['^', '@', '&']) {
            return None;
        }
        let source = match variant {
            ArchVariant::Seed => sw_platform_of(text),
            ArchVariant::PandaServer => text,
        };
        let arch = source.split('-').next().unwrap_or("");
        return (!arch.is_empty()).then(|| vec![spec(arch, "*", "*")]);
    };
    if specs.is_empty() {
        return None;
    }
    let specs = specs.strip_prefix('(').unwrap_or(&specs);
    let specs = specs.strip_suffix(')').unwrap_or(specs);
    Some(
        specs
            .split('|')
            .map(|s| {
                let padded = format!("{s}{}", "-*".repeat(2usize.saturating_sub(s.matches('-').count())));
                let mut items = padded.split('-');
                let (a, v, i) = (items.next(), items.next(), items.next());
                spec(a.unwrap_or(""), v.unwrap_or("*"), i.unwrap_or("*"))
            })
            .collect(),
    )
}

/// The shorthand keys of `get_host_gpu_spec`.
fn shorthand_key(key: &str) -> Option<&'static str> {
    Some(match key {
        "cuda" => "version",
        "uarch" => "microarchitecture",
        "driver" => "driver_version",
        "model" => "model",
        "vram" => "vram",
        _ => return None,
    })
}

/// `re.match(r"(\w+)(>=|<=|!=|==|>|<|=)(.*)", part)`.
fn split_attr(part: &str) -> Option<(&str, &str, &str)> {
    let k = part.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(part.len());
    if k == 0 {
        return None;
    }
    let (key, rest) = part.split_at(k);
    let op = [">=", "<=", "!=", "==", ">", "<", "="].into_iter().find(|op| rest.starts_with(op))?;
    let val = &rest[op.len()..];
    Some((key, op, val.split('\n').next().unwrap_or("")))
}

/// `get_host_gpu_spec` of the string form (ordered dict), with warnings for what it ignores.
pub(super) fn gpu_of(text: &str, warnings: &mut Vec<String>) -> Option<Vec<(String, Py)>> {
    let spec = after(text, '&', &['^', '@', '#']).filter(|s| !s.is_empty())?;
    let mut parts = spec.split(':');
    let legacy = parts.next().unwrap_or("");
    let padded = format!("{legacy}{}", "-*".repeat(1usize.saturating_sub(legacy.matches('-').count())));
    let mut items = padded.split('-');
    let mut d = vec![
        ("vendor".to_string(), Py::str(items.next().unwrap_or(""))),
        ("model".to_string(), Py::str(items.next().unwrap_or("*"))),
    ];
    for part in parts {
        let Some((key, op, val)) = split_attr(part) else {
            warnings.push(format!("GPU attribute '{part}' is not key<op>value: PanDA ignores it"));
            continue;
        };
        let Some(mapped) = shorthand_key(key) else {
            warnings.push(format!(
                "GPU attribute key '{key}' is unknown (cuda, uarch, driver, model, vram): PanDA ignores it"
            ));
            continue;
        };
        let value = match mapped {
            "model" if op == "!=" => {
                Py::Dict(vec![("pattern".into(), Py::str(val)), ("excl".into(), Py::Other(Value::Bool(true)))])
            }
            "model" => Py::str(val),
            "microarchitecture" => {
                if op != "=" && op != "==" {
                    warnings.push(format!("uarch{op}{val}: PanDA keeps only the value, so this requires {val}"));
                }
                Py::str(val)
            }
            _ => Py::Str(format!("{}{val}", if op == "=" { "==" } else { op })),
        };
        match d.iter_mut().find(|(k, _)| k == mapped) {
            Some(slot) => slot.1 = value,
            None => d.push((mapped.to_string(), value)),
        }
    }
    Some(d)
}

/// `reformat_architecture`: the refined dict and its `json.dumps` text.
pub(super) fn reformat(
    json: Option<&[(String, Py)]>,
    raw: &str,
    enc: Option<&str>,
    variant: ArchVariant,
    warnings: &mut Vec<String>,
) -> Result<(Vec<(String, Py)>, String), ArchError> {
    let mut new = Vec::new();
    let sw = match json {
        Some(d) => json_sw(d)?,
        None => sw_platform_of(raw).to_string(),
    };
    if !sw.is_empty() {
        new.push(("sw_platform".to_string(), Py::Str(sw)));
    }
    let base = match json.and_then(|d| get(d, "base_platform")) {
        Some(Py::Str(s)) => Some(s.clone()),
        Some(Py::Other(Value::Null)) | None => {
            if json.is_some() && enc.is_none() {
                None
            } else {
                base_of(enc.filter(|e| !e.is_empty()).unwrap_or(raw))
            }
        }
        Some(_) => return Err(ArchError::field("base_platform", "a string")),
    };
    if let Some(b) = base.filter(|b| !b.is_empty()) {
        new.push(("base_platform".to_string(), Py::Str(b)));
    }
    let cpu = match json {
        Some(d) => json_cpu(d, raw, enc, variant)?,
        None => cpu_of(raw, variant),
    };
    let cpu: Vec<Py> = cpu
        .unwrap_or_default()
        .into_iter()
        .filter_map(|s| match s {
            Py::Dict(d) => {
                let d: Vec<_> = d.into_iter().filter(|(_, v)| !v.is_star()).collect();
                (!d.is_empty()).then_some(Py::Dict(d))
            }
            _ => None,
        })
        .collect();
    if !cpu.is_empty() {
        new.push(("cpu_specs".to_string(), Py::List(cpu)));
    }
    let gpu = match json {
        Some(d) => json_gpu(d, raw, warnings)?,
        None => gpu_of(raw, warnings),
    };
    if let Some(g) = gpu {
        let g: Vec<_> = g.into_iter().filter(|(_, v)| !v.is_star()).collect();
        if !g.is_empty() {
            new.push(("gpu_spec".to_string(), Py::Dict(g)));
        }
    }
    let mut text = String::new();
    Py::Dict(new.clone()).dump(&mut text);
    Ok((new, text))
}

/// `get_sw_platform` of the JSON form.
pub(super) fn json_sw(d: &[(String, Py)]) -> Result<String, ArchError> {
    match get(d, "sw_platform") {
        None | Some(Py::Other(Value::Null)) => Ok(String::new()),
        Some(Py::Str(s)) => Ok(s.clone()),
        Some(_) => Err(ArchError::field("sw_platform", "a string")),
    }
}

/// `get_host_cpu_spec` of the JSON form: `cpu_specs` with `vendor`/`instr` defaulted, or with
/// `encoded_platform` and no specs, the string form of the encoded platform (or of the text).
pub(super) fn json_cpu(
    d: &[(String, Py)],
    raw: &str,
    enc: Option<&str>,
    variant: ArchVariant,
) -> Result<Option<Vec<Py>>, ArchError> {
    let specs = get(d, "cpu_specs");
    if !specs.is_some_and(Py::truthy) && enc.is_none() {
        return Ok(None);
    }
    match specs {
        Some(Py::List(l)) => l
            .iter()
            .map(|s| match s {
                Py::Dict(e) => {
                    let mut e = e.clone();
                    set_default(&mut e, "vendor");
                    set_default(&mut e, "instr");
                    Ok(Py::Dict(e))
                }
                _ => Err(ArchError::field("cpu_specs[]", "an object {arch, vendor, instr}")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(p) if p.truthy() => Err(ArchError::field("cpu_specs", "a list of objects")),
        _ => Ok(cpu_of(enc.filter(|e| !e.is_empty()).unwrap_or(raw), variant)),
    }
}

/// `get_host_gpu_spec` of the JSON form: `gpu_spec` with `vendor`/`model` defaulted; without a
/// `gpu_spec` object the code falls back to the string parser on the text.
pub(super) fn json_gpu(
    d: &[(String, Py)],
    raw: &str,
    warnings: &mut Vec<String>,
) -> Result<Option<Vec<(String, Py)>>, ArchError> {
    match get(d, "gpu_spec") {
        Some(Py::Dict(g)) => {
            let mut g = g.clone();
            set_default(&mut g, "vendor");
            set_default(&mut g, "model");
            Ok(Some(g))
        }
        other => {
            if other.is_some_and(|p| !matches!(p, Py::Other(Value::Null))) {
                warnings.push("gpu_spec is not an object: PanDA ignores it".into());
            }
            Ok(gpu_of(raw, warnings))
        }
    }
}
