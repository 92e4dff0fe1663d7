//! The layers of `src/lib.rs` (docs/architecture.md, "Layers") are facts: every `crate::X` a module
//! names, outside its tests, is a module of a lower layer. A module may not reach up.

use std::collections::BTreeMap;
use std::path::Path;

/// Bottom to top; a module may use those of lower layers (and its own).
const LAYERS: &[&[&str]] = &[
    &["engine"],
    &["ids"],
    &["grid", "workload"],
    &["dirac", "panda", "factory"],
    &["scenario"],
    &["metrics"],
    &["wms"],
    &["sim"],
    &["report"],
    &["run"],
    &["sweep"],
    &["compare"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// Modules of the neutral model, which no WMS vocabulary may reach.
const NEUTRAL: &[&str] = &["engine", "ids", "grid", "workload", "metrics"];
/// What the neutral modules must never name.
const WMS_VOCABULARY: &[&str] = &["dirac", "panda", "wms"];

/// The text of a source file without its tests (tests may use any layer): a
/// `#[cfg(test)] mod x;` declaration is dropped, an inline `#[cfg(test)] mod x { … }` (by
/// convention the end of the file) is cut off.
fn non_test_text(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            match lines.peek().map(|l| l.trim()) {
                Some(next) if next.starts_with("mod ") && next.ends_with(';') => {
                    lines.next();
                    continue;
                }
                Some(next) if next.starts_with("mod ") => break,
                _ => {}
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `crate::X` names in the text.
fn crate_refs(text: &str) -> Vec<String> {
    text.match_indices("crate::")
        .map(|(i, _)| {
            let rest = &text[i + "crate::".len()..];
            rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>()
        })
        .filter(|m| m.chars().next().is_some_and(|c| c.is_lowercase()))
        .collect()
}

fn visit(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            visit(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_module_uses_a_higher_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    visit(&src, &mut files);
    files.sort();
    let mut bad = Vec::new();
    let mut edges: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let top = rel.iter().next().unwrap().to_string_lossy().trim_end_matches(".rs").to_string();
        if matches!(top.as_str(), "lib" | "main" | "cli") || rel.file_name().is_some_and(|n| n == "tests.rs") {
            continue; // the crate root, the binary (top layer) and test files
        }
        let Some(own) = layer_of(&top) else {
            bad.push(format!("{}: module {top} is in no layer of LAYERS (add it)", rel.display()));
            continue;
        };
        let text = std::fs::read_to_string(f).unwrap();
        for m in crate_refs(&non_test_text(&text)) {
            if m == top || m == "VERSION" {
                continue;
            }
            if NEUTRAL.contains(&top.as_str()) && WMS_VOCABULARY.contains(&m.as_str()) {
                bad.push(format!("{}: the neutral {top} names crate::{m}", rel.display()));
            }
            match layer_of(&m) {
                Some(l) if l < own => edges.entry(top.clone()).or_default().push(m),
                Some(_) => bad.push(format!("{}: {top} uses crate::{m}, which is not below it", rel.display())),
                None => bad.push(format!("{}: crate::{m} is in no layer", rel.display())),
            }
        }
    }
    assert!(bad.is_empty(), "layer violations:\n{}", bad.join("\n"));
    // The test can fail: the grid is below the WMS and the simulation uses both.
    assert!(edges["sim"].iter().any(|m| m == "wms") && edges["wms"].iter().any(|m| m == "grid"));
}

#[test]
fn the_crate_root_lists_every_layer() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    for m in LAYERS.iter().flat_map(|l| l.iter()) {
        assert!(lib.contains(&format!("pub mod {m};")), "lib.rs declares {m}");
    }
}

/// The module path of a source file under `src/` (`wms/panda/mod.rs` → `wms::panda`).
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap_or_default();
    if last != "mod.rs" {
        parts.push(last.trim_end_matches(".rs").to_string());
    }
    parts
}

/// Whether `src/<path>` is a module (a file or a directory with `mod.rs`).
fn is_module(src: &Path, path: &[String]) -> bool {
    let dir = path.iter().fold(src.to_path_buf(), |p, s| p.join(s));
    dir.with_extension("rs").is_file() || dir.join("mod.rs").is_file()
}

/// The paths a text names from `start` (`super::…` chains and `crate::…`), each as the module it
/// starts from and its segments; a brace group gives one path per member.
fn named_paths(text: &str, own: &[String]) -> Vec<(Vec<String>, Vec<String>)> {
    fn ident(s: &str) -> (&str, &str) {
        let n = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
        s.split_at(n)
    }
    // Segments after a path's start, expanding one level of braces.
    fn segments(rest: &str) -> Vec<Vec<String>> {
        let mut segs = Vec::new();
        let mut r = rest;
        loop {
            if let Some(group) = r.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                return group[..end]
                    .split(',')
                    .map(str::trim)
                    .filter(|m| !m.is_empty() && *m != "self")
                    .map(|m| {
                        let mut v = segs.clone();
                        v.extend(m.split("::").map(|x| ident(x.trim()).0.to_string()).filter(|x| !x.is_empty()));
                        v
                    })
                    .collect();
            }
            let (id, after) = ident(r);
            if id.is_empty() {
                return vec![segs];
            }
            segs.push(id.to_string());
            match after.strip_prefix("::") {
                Some(next) => r = next,
                None => return vec![segs],
            }
        }
    }
    let mut out = Vec::new();
    for (i, _) in text.match_indices("super::") {
        if text[..i].ends_with("super::") || text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue; // the tail of a longer chain, or part of another word
        }
        let mut rest = &text[i..];
        let mut base = own.to_vec();
        while let Some(r) = rest.strip_prefix("super::") {
            base.pop();
            rest = r;
        }
        out.extend(segments(rest).into_iter().map(|s| (base.clone(), s)));
    }
    for (i, _) in text.match_indices("crate::") {
        out.extend(segments(&text[i + "crate::".len()..]).into_iter().map(|s| (Vec::new(), s)));
    }
    out
}

/// Inside `wms/`, a module never names an item of a module above it (its parent's own file, or
/// any ancestor's) other than the WMS boundary of `wms/mod.rs`: a parent composes its children,
/// and a child that reaches back into it makes the two one module in two files. PanDA's agents,
/// the factories and the views each own their types and code, and share state through sibling
/// modules.
#[test]
fn no_module_in_wms_reaches_up_into_an_ancestor() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    visit(&src.join("wms"), &mut files);
    files.sort();
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let name = rel.file_name().unwrap().to_string_lossy();
        if name == "tests.rs" || name == "testing.rs" || name.ends_with("_tests.rs") || rel.iter().any(|c| c == "tests")
        {
            continue;
        }
        let own = module_path(rel);
        let text = std::fs::read_to_string(f).unwrap();
        for (base, segs) in named_paths(&non_test_text(&text), &own) {
            // Walk the segments down the modules: the first that is not a module is an item of
            // the module reached so far.
            let mut module = base;
            for s in &segs {
                let mut next = module.clone();
                next.push(s.clone());
                if !is_module(&src, &next) {
                    let ancestor = module.len() < own.len() && own.starts_with(&module);
                    if ancestor && module != ["wms"] {
                        bad.push(format!(
                            "{}: names {}::{s}, an item of an ancestor",
                            rel.display(),
                            module.join("::")
                        ));
                    }
                    break;
                }
                module = next;
            }
        }
    }
    bad.dedup();
    assert!(bad.is_empty(), "upward imports inside wms/:\n{}", bad.join("\n"));
    // The test can fail: a path to an ancestor's item is found.
    let probe = named_paths("use super::{Factories, Mode};", &["wms".into(), "factories".into(), "x".into()]);
    assert_eq!(probe.len(), 2);
    assert_eq!(probe[0].0, ["wms", "factories"]);
}
