//! The layers of `src/lib.rs` (DESIGN.md, "Layers") are facts: every `crate::X` a module
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
