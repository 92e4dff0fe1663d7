//! What `pilotsim import cric` must not print: a fragment the scenario would then refuse. The
//! fragment is validated as the scenario validates it (inside a minimal scenario), and the
//! first problem of its own parts (`sites`, `storages`, `network`, `panda.queues`) is refused
//! with the row it came from: the queue, RSE or `SRC:DST` link, and its file.

use std::collections::BTreeMap;

use super::cric::{CricError, Fragment, Options, to_ron_fragment};

/// `Err` with the row of the first value of `frag` the scenario would refuse; `rows` maps each
/// row name (queue, RSE, `SRC:DST`) to its file.
pub(super) fn check(frag: &Fragment, opt: Options, rows: &BTreeMap<String, String>) -> Result<(), CricError> {
    // A link matrix alone lists no site: the scenario's `sites` is then empty.
    let sites = if frag.sites.is_empty() { "sites: [], " } else { "" };
    let text = format!("Scenario(name: \"import\", duration_s: 86400, {sites}{})", to_ron_fragment(frag, opt));
    let scenario = match super::parse(&text, "import") {
        Ok(s) => s,
        // What the fragment cannot even spell (a value RON cannot read back).
        Err(e) => return Err(CricError { file: "import".into(), line: 0, col: 0, message: e.to_string() }),
    };
    // Without sites, every link's ends are unknown to the scenario: not the fragment's fault
    // (its bandwidths and closeness are kept in range when read).
    let own: &[&str] = if frag.sites.is_empty() {
        &["storages[", "panda.queues["]
    } else {
        &["sites[", "storages[", "network[", "panda.queues["]
    };
    let Some(p) = super::validate(&scenario).into_iter().find(|p| own.iter().any(|o| p.path.starts_with(o))) else {
        return Ok(());
    };
    let index = |prefix: &str| -> Option<usize> { p.path.strip_prefix(prefix)?.split(']').next()?.parse().ok() };
    let (row, field_at) = if let Some(i) = index("panda.queues[") {
        (frag.queues.get(i).map(|q| q.name.clone()), format!("panda.queues[{i}]"))
    } else if let Some(i) = index("storages[") {
        (frag.storages.get(i).map(|s| s.name.clone()), format!("storages[{i}]"))
    } else if let Some(i) = index("network[") {
        (frag.network.get(i).map(|l| format!("{}:{}", l.from, l.to)), format!("network[{i}]"))
    } else {
        // A site's CE is named after its queue.
        let i = index("sites[");
        let ce = p.path.split("ces[").nth(1).and_then(|r| r.split(']').next()?.parse::<usize>().ok());
        let name =
            i.and_then(|i| frag.sites.get(i)).and_then(|s| ce.and_then(|c| s.ces.get(c)).map(|c| c.name.clone()));
        (name, format!("sites[{}]", i.unwrap_or(0)))
    };
    let row = row.unwrap_or_default();
    let field = p.path.strip_prefix(&field_at).unwrap_or(&p.path).trim_start_matches('.');
    let file = rows.get(&row).cloned().unwrap_or_else(|| "import".into());
    let message = format!("{row}: {field}: {} (the scenario would refuse it as {})", p.message, p.path);
    Err(CricError { file, line: 0, col: 0, message })
}
