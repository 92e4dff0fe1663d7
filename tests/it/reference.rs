//! `docs/scenario-reference.md` is every field of a scenario file, generated from the serde
//! types (`scenario::reference::fields`) with each field's doc comment (every field needs one):
//! it fails when the types and the reference drift apart. Regenerate with
//! `PILOTSIM_UPDATE_REFERENCE=1 cargo test --test it reference`.

use std::collections::BTreeMap;
use std::path::Path;

use pilotsim::scenario::reference::{Field, fields};

/// The doc comments of struct fields and enum struct-variant fields under `src/`, by
/// (type or variant name, field name): the first paragraph, on one line.
fn field_docs(dir: &Path, out: &mut BTreeMap<(String, String), String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            field_docs(&p, out);
            continue;
        }
        if p.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let (mut owner, mut doc, mut paragraph_done) = (String::new(), String::new(), false);
        // The enum whose variants are being read, if any.
        let mut in_enum = String::new();
        // A `#[serde(rename = "...")]` between a doc comment and its field: the name serde reads.
        let mut rename: Option<String> = None;
        for line in text.lines() {
            let t = line.trim();
            if let Some(d) = t.strip_prefix("///") {
                let d = d.trim();
                if d.is_empty() {
                    paragraph_done = !doc.is_empty();
                } else if !paragraph_done {
                    if !doc.is_empty() {
                        doc.push(' ');
                    }
                    doc.push_str(d);
                }
                continue;
            }
            if t.starts_with("#[") {
                if let Some((_, rest)) = t.split_once("rename = \"") {
                    rename = rest.split('"').next().map(str::to_string);
                }
                continue;
            }
            let words: Vec<&str> = t.split(|c: char| c.is_whitespace() || c == '<' || c == '(').collect();
            if let Some(i) = words.iter().position(|w| *w == "struct" || *w == "enum") {
                owner = words.get(i + 1).unwrap_or(&"").to_string();
                in_enum = if words[i] == "enum" { owner.clone() } else { String::new() };
            } else if !in_enum.is_empty() && t.chars().next().is_some_and(char::is_uppercase) {
                // A variant: `Name,`, `Name(T),` or `Name {` (whose fields follow).
                let name: String = t.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !doc.is_empty() {
                    out.entry((in_enum.clone(), name.clone())).or_insert_with(|| doc.clone());
                }
                if t.ends_with('{') {
                    owner = name;
                }
            } else if let Some((name, _)) = t.strip_prefix("pub ").unwrap_or(t).split_once(':') {
                let name = name.trim_start_matches("pub(crate) ").trim_start_matches("pub(super) ");
                if !owner.is_empty() && !doc.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                    out.entry((owner.clone(), name.to_string())).or_insert_with(|| doc.clone());
                    if let Some(serde_name) = rename.take() {
                        out.entry((owner.clone(), serde_name)).or_insert_with(|| doc.clone());
                    }
                }
            }
            doc.clear();
            rename = None;
            paragraph_done = false;
        }
    }
}

/// `mapType` → `map_type` (serde's camelCase names of Harvester's settings).
fn snake(name: &str) -> String {
    let mut s = String::new();
    for c in name.chars() {
        if c.is_uppercase() {
            s.push('_');
            s.extend(c.to_lowercase());
        } else {
            s.push(c);
        }
    }
    s
}

fn describe(f: &Field, docs: &BTreeMap<(String, String), String>) -> Option<String> {
    let (owner, field) = f.source?;
    let key = |n: String| (owner.to_string(), n);
    docs.get(&key(field.to_string())).or_else(|| docs.get(&key(snake(field)))).cloned()
}

/// Rustdoc's intra-doc links (``[`Period`]``, ``[`x`](path)``) as plain code spans.
fn plain(doc: &str) -> String {
    let mut out = String::new();
    let mut rest = doc;
    while let Some(i) = rest.find("[`") {
        let Some(j) = rest[i..].find("`]").map(|j| i + j) else { break };
        out.push_str(&rest[..i]);
        out.push_str(&rest[i + 1..j + 1]);
        rest = &rest[j + 2..];
        // A link target in parentheses goes too.
        if rest.starts_with('(')
            && let Some(k) = rest.find(')')
        {
            rest = &rest[k + 1..];
        }
    }
    out.push_str(rest);
    out
}

fn markdown(fields: &[Field], docs: &BTreeMap<(String, String), String>) -> String {
    let mut out = String::from(
        "# Scenario reference\n\n\
         Every field of a scenario file, generated from pilotsim's scenario types (a test fails when\n\
         this page and the types drift apart). A path is written as `--set` takes it: `[]` is any\n\
         element of a list (`sites.0` or `sites[NAME]` with `--set`), `<key>` any key of a map, and an\n\
         enum's variant is named (`factory[].Startd.standby`). *Kind*: `optional` fields may be left out;\n\
         the defaults, units and sources are in each field's description. The\n\
         [quickstart, field by field](scenarios.md#the-quickstart-scenario-field-by-field) shows them in use.\n",
    );
    let mut section = "";
    for f in fields {
        let top = f.path.split(['.', '[']).next().unwrap_or("");
        if top != section {
            section = top;
            out.push_str(&format!("\n## `{top}`\n\n| field | kind | description |\n|---|---|---|\n"));
        }
        let doc = plain(&describe(f, docs).unwrap_or_default()).replace('|', "\\|");
        out.push_str(&format!("| `{}` | {} | {} |\n", f.path, f.kind.replace('|', "\\|"), doc));
    }
    out
}

#[test]
fn the_scenario_reference_is_generated_from_the_types() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fields = fields();
    let paths: Vec<&str> = fields.iter().map(|f| f.path.as_str()).collect();
    // The tree reaches every section and into enum variants and lists.
    for p in ["name", "sites[].ces[].slots", "dirac.director.extra_pilot_fraction", "factory[].Startd.standby"] {
        assert!(paths.contains(&p), "{p} not traced: {paths:#?}");
    }
    let mut docs = BTreeMap::new();
    field_docs(&root.join("src"), &mut docs);
    // Every field (a lowercase name) needs a doc comment; an enum variant's is shown when it
    // has one.
    let is_field = |f: &&Field| f.source.is_some_and(|(_, name)| !name.starts_with(char::is_uppercase));
    let missing: Vec<String> = fields
        .iter()
        .filter(is_field)
        .filter(|f| describe(f, &docs).is_none())
        .map(|f| format!("{} {:?}", f.path, f.source))
        .collect();
    assert!(missing.is_empty(), "fields without a doc comment: {missing:#?}");
    let text = markdown(&fields, &docs);
    let file = root.join("docs/scenario-reference.md");
    if std::env::var_os("PILOTSIM_UPDATE_REFERENCE").is_some() {
        std::fs::write(&file, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        committed == text,
        "docs/scenario-reference.md is not the reference of today's scenario types: \
         run PILOTSIM_UPDATE_REFERENCE=1 cargo test --test it reference"
    );
}
