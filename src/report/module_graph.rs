//! The modules of `report` form an acyclic graph: [`super::style`] at the bottom, the
//! drawing primitives above it, the frame above those and the charts on top. This test
//! reads the sources and fails if a `super::X` or `crate::report::X` path closes a cycle
//! (as `frame` ↔ `charts` and `frame` ↔ `legend` once did).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The sibling modules `source` refers to through `super::` or `crate::report::`
/// (comment lines ignored; `use super::{a::X, b::Y}` counts `a` and `b`).
fn references(source: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let code: String = source.lines().filter(|l| !l.trim_start().starts_with("//")).map(|l| format!("{l}\n")).collect();
    let mut out = BTreeSet::new();
    for prefix in ["super::", "crate::report::"] {
        for (at, _) in code.match_indices(prefix) {
            let rest = &code[at + prefix.len()..];
            let names: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group[..group.find('}').unwrap_or(group.len())].split(',').collect(),
                None => vec![rest],
            };
            for name in names {
                let name = name.trim_start();
                let end = name.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(name.len());
                if modules.contains(&name[..end]) {
                    out.insert(name[..end].to_string());
                }
            }
        }
    }
    out
}

/// A cycle of the graph, if there is one (depth-first search).
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|n| n == node) {
            let mut found = path[i..].to_vec();
            found.push(node.to_string());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn report_modules_have_no_import_cycle() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/report");
    let mod_rs = std::fs::read_to_string(dir.join("mod.rs")).unwrap();
    // The modules declared in mod.rs, except the test-only ones.
    let mut test_only = false;
    let mut modules = BTreeSet::new();
    for line in mod_rs.lines().map(str::trim) {
        if line.starts_with("#[cfg(test)]") {
            test_only = true;
            continue;
        }
        let declared = line.strip_prefix("pub ").unwrap_or(line).strip_prefix("mod ").and_then(|m| m.strip_suffix(';'));
        if let Some(name) = declared.filter(|_| !test_only) {
            modules.insert(name.to_string());
        }
        test_only = false;
    }
    assert!(modules.len() > 8 && modules.contains("style") && modules.contains("frame"), "{modules:?}");
    let graph: BTreeMap<String, BTreeSet<String>> = modules
        .iter()
        .map(|m| {
            let source = std::fs::read_to_string(dir.join(format!("{m}.rs"))).unwrap();
            let mut deps = references(&source, &modules);
            deps.remove(m);
            (m.clone(), deps)
        })
        .collect();
    assert!(graph["frame"].contains("canvas") && graph["charts"].contains("frame"), "edges are found: {graph:?}");
    assert!(graph["style"].is_empty(), "style depends on no other module: {:?}", graph["style"]);
    assert_eq!(cycle(&graph), None, "import cycle in src/report; the edges are {graph:#?}");
}

#[test]
fn the_cycle_finder_finds_cycles_and_grouped_imports() {
    let modules: BTreeSet<String> = ["a", "b", "c"].map(String::from).into();
    let refs = references("// use super::c::X;\nuse super::{a::X,\n b::Y};\nuse crate::report::c;\n", &modules);
    assert_eq!(refs, ["a", "b", "c"].map(String::from).into());
    let edge = |from: &str, to: &[&str]| (from.to_string(), to.iter().map(|s| s.to_string()).collect());
    let acyclic: BTreeMap<String, BTreeSet<String>> =
        [edge("a", &["b", "c"]), edge("b", &["c"]), edge("c", &[])].into();
    assert_eq!(cycle(&acyclic), None);
    let cyclic: BTreeMap<String, BTreeSet<String>> = [edge("a", &["b"]), edge("b", &["c"]), edge("c", &["a"])].into();
    assert_eq!(cycle(&cyclic), Some(["a", "b", "c", "a"].map(String::from).to_vec()));
}
