//! The effective scenario of a run: what the model ran, after `--set` and with the seed it ran
//! at, written as `scenario.ron` beside the run's outputs (DESIGN.md "Every run keeps its
//! effective scenario"), so that any figure can be traced to the settings that made it and
//! `pilotsim run DIR/scenario.ron` reruns it to the same digest.
//!
//! What the scenario read from other files is made self-contained: the groups and corrections
//! read from `dirac.cfg_file` are already in the scenario, so the file is dropped; a replay
//! file's path is made absolute (its records are read again when the file is loaded).

use std::path::Path;

use super::types::Scenario;

/// Where the run came from and how, for the file's header.
#[derive(Debug, Clone, Copy)]
pub struct Provenance<'a> {
    /// The scenario file (or the embedded quickstart).
    pub origin: &'a str,
    pub sha256: &'a str,
    /// The `--set` assignments, in order.
    pub overrides: &'a [String],
    pub seed: u64,
    pub digest: &'a str,
    pub version: &'a str,
}

/// The RON text of the effective scenario `s` of a run, with a header saying where it came from.
/// Relative replay paths are resolved against the directory of `p.origin`.
pub fn to_ron(s: &Scenario, p: &Provenance) -> Result<String, String> {
    let mut s = s.clone();
    s.seed = p.seed;
    if let Some(d) = s.dirac.as_mut() {
        d.cfg_file = None;
    }
    let base = Path::new(p.origin).parent().unwrap_or(Path::new("."));
    if let Some(pc) = s.panda.as_mut() {
        for r in &mut pc.replay {
            let path = base.join(&r.file);
            let abs = std::fs::canonicalize(&path).unwrap_or(path);
            r.file = abs.to_string_lossy().into_owned();
        }
    }
    let pretty = ron::ser::PrettyConfig::new().indentor("    ".to_string()).struct_names(false);
    let body = ron::ser::to_string_pretty(&s, pretty).map_err(|e| e.to_string())?;
    let mut head = format!(
        "// The effective scenario of a pilotsim {} run: {} (sha256 {}) at seed {}",
        p.version, p.origin, p.sha256, p.seed
    );
    if p.overrides.is_empty() {
        head += ", no --set.\n";
    } else {
        head += ", with\n";
        for o in p.overrides {
            head += &format!("//   --set {}\n", o.replace('\n', " "));
        }
    }
    head += &format!("// `pilotsim run` on this file reproduces digest {}.\n", p.digest);
    Ok(head + &body + "\n")
}
