//! `--set path=value`: override any scenario field from the command line.
//!
//! The scenario is turned into a JSON tree, the field at `path` is replaced, and the tree is
//! turned back into a [`Scenario`], so every type check and `deny_unknown_fields` still
//! applies. Path segments are struct fields, list indices (`sites.0`) or, for lists of named
//! things, names (`sites.LCG.CERN.cern` does not work because names contain dots, so name
//! lookups use `sites[LCG.CERN.cern]`). The value is JSON (`0.5`, `true`, `"text"`,
//! `{"Exponential": {"mean": 60}}`) or, if it is not valid JSON, a plain string.

use serde_json::Value;

use super::types::Scenario;

/// Split a path into segments: `a.b[name].0` → `a`, `b`, `[name]`, `0`.
fn segments(path: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(stripped) = rest.strip_prefix('[') {
            let end = stripped.find(']').ok_or_else(|| format!("unclosed '[' in {path:?}"))?;
            out.push(format!("[{}]", &stripped[..end]));
            rest = &stripped[end + 1..];
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            if end > 0 {
                out.push(rest[..end].to_string());
            }
            rest = &rest[end..];
        }
        rest = rest.strip_prefix('.').unwrap_or(rest);
    }
    if out.is_empty() {
        return Err("empty path".into());
    }
    Ok(out)
}

fn child<'a>(node: &'a mut Value, seg: &str, done: &str) -> Result<&'a mut Value, String> {
    match node {
        Value::Object(map) => {
            let known: Vec<String> = map.keys().cloned().collect();
            map.get_mut(seg).ok_or_else(|| format!("no field {seg:?} in {done} (fields: {})", known.join(", ")))
        }
        Value::Array(items) => {
            let n = items.len();
            if let Some(name) = seg.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
                items
                    .iter_mut()
                    .find(|it| it.get("name").and_then(Value::as_str) == Some(name))
                    .ok_or_else(|| format!("no element named {name:?} in {done}"))
            } else {
                let i: usize =
                    seg.parse().map_err(|_| format!("{done} is a list: use an index 0..{n} or [name], got {seg:?}"))?;
                items.get_mut(i).ok_or_else(|| format!("index {i} out of range in {done} ({n} elements)"))
            }
        }
        _ => Err(format!("{done} is a value, it has no field {seg:?}")),
    }
}

/// The value of the field at `path` (as `--set` addresses it), as JSON.
pub fn value_at(scenario: &Scenario, path: &str) -> Result<Value, String> {
    let mut tree = serde_json::to_value(scenario).map_err(|e| e.to_string())?;
    let mut node = &mut tree;
    let mut done = String::from("the scenario");
    for seg in segments(path.trim())? {
        node = child(node, &seg, &done)?;
        done = if done == "the scenario" { seg } else { format!("{done}.{seg}") };
    }
    Ok(node.take())
}

/// Apply `path=value` assignments, in order.
pub fn apply(scenario: &Scenario, assignments: &[String]) -> Result<Scenario, String> {
    if assignments.is_empty() {
        return Ok(scenario.clone());
    }
    let mut tree = serde_json::to_value(scenario).map_err(|e| e.to_string())?;
    for a in assignments {
        let (path, raw) = a.split_once('=').ok_or_else(|| format!("--set {a:?}: expected path=value"))?;
        let value: Value = serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()));
        let mut node = &mut tree;
        let mut done = String::from("the scenario");
        for seg in segments(path.trim()).map_err(|e| format!("--set {a:?}: {e}"))? {
            node = child(node, &seg, &done).map_err(|e| format!("--set {a:?}: {e}"))?;
            done = if done == "the scenario" { seg } else { format!("{done}.{seg}") };
        }
        *node = value;
    }
    let mut out: Scenario = serde_path_to_error::deserialize(tree).map_err(|e| match super::field_path(e.path()) {
        Some(path) => format!("--set: {path}: the value does not fit: {}", e.into_inner()),
        None => format!("--set: the value does not fit: {}", e.into_inner()),
    })?;
    // Job records of `panda.replay` are read from their files at load time, not written in the
    // scenario: carry them over to the streams whose file did not change.
    if let (Some(before), Some(after)) = (&scenario.panda, &mut out.panda) {
        for r in &mut after.replay {
            if r.records.is_empty()
                && let Some(old) = before.replay.iter().find(|o| o.name == r.name && o.file == r.file)
            {
                r.records = old.records.clone();
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::quickstart;
    use super::*;

    #[test]
    fn sets_nested_fields_by_index_and_name() {
        let q = quickstart().scenario;
        let site = q.sites[1].name.clone();
        let s = apply(
            &q,
            &[
                "dirac.director.extra_pilot_fraction=0.5".into(),
                "sites.0.ces.0.slots=7".into(),
                format!("sites[{site}].ces.0.cpu_power=3"),
                "name=renamed".into(),
                r#"sites.0.ces.0.pilot_wait={"Exponential":{"mean":60}}"#.into(),
            ],
        )
        .unwrap();
        assert_eq!(s.dirac.as_ref().unwrap().director.extra_pilot_fraction, 0.5);
        assert_eq!(s.sites[0].ces[0].slots, 7);
        assert_eq!(s.sites[1].ces[0].cpu_power, 3.0);
        assert_eq!(s.name, "renamed");
    }

    #[test]
    fn value_at_reads_what_set_writes() {
        let q = quickstart().scenario;
        assert!(value_at(&q, "sites.0.ces.0.slots").unwrap().is_u64());
        assert!(value_at(&q, "dirac.director.extra_pilot_fraction").unwrap().is_f64());
        assert!(value_at(&q, "sites.0.nope").unwrap_err().contains("no field \"nope\""));
    }

    #[test]
    fn unknown_paths_and_bad_values_are_clear_errors() {
        let q = quickstart().scenario;
        let e = apply(&q, &["dirac.director.extra_pilot_fractio=0.5".into()]).unwrap_err();
        assert!(e.contains("no field \"extra_pilot_fractio\"") && e.contains("extra_pilot_fraction"), "{e}");
        let e = apply(&q, &["sites.99.name=x".into()]).unwrap_err();
        assert!(e.contains("out of range"), "{e}");
        let e = apply(&q, &["sites.0.ces.0.slots=many".into()]).unwrap_err();
        assert!(e.contains("does not fit"), "{e}");
        assert!(apply(&q, &["novalue".into()]).is_err());
        assert!(apply(&q, &["sites[Nowhere].name=x".into()]).is_err());
    }
}
