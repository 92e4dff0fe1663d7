//! Scenario files: RON with comments, parsed into typed structs, validated, overridable.
//!
//! - [`load_file`] / [`parse`]: syntax and type errors as `FILE:LINE:COL: message`.
//! - [`validate`]: semantic problems as `FILE: field.path: message`, including the
//!   [`limits`] that keep every run finite in time and memory.
//! - [`overrides::apply`]: `--set path=value` on any field.

pub mod cric;
mod cric_check;
pub mod dirac;
pub mod dirac_cfg;
mod dirac_check;
pub mod effective;
pub mod expect;
pub mod factory;
pub mod finite;
pub mod generate;
pub mod generate_atlas;
mod gpu_check;
pub mod input;
pub mod limits;
pub mod overrides;
pub mod own_grid;
pub mod panda;
pub mod reference;
pub mod types;
pub mod validate;

use std::fmt;
use std::path::Path;

use sha2::{Digest as _, Sha256};

pub use types::Scenario;
pub use validate::{Problem, validate, warnings};

/// The quickstart scenario, embedded so that `pilotsim run` works anywhere.
pub const QUICKSTART: &str = include_str!("../../scenarios/quickstart.ron");
/// The name `pilotsim run` shows for the embedded quickstart.
pub const QUICKSTART_ORIGIN: &str = "scenarios/quickstart.ron (embedded)";

/// A scenario that failed to load.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadError {
    /// The file could not be read.
    Io { file: String, message: String },
    /// RON syntax or type error at a position (1-based line and column).
    Syntax { file: String, line: usize, col: usize, message: String },
    /// Semantic problems found by [`validate`].
    Invalid { file: String, problems: Vec<Problem> },
    /// A job-record CSV of `panda.replay` that cannot be read.
    Replay { file: String, error: panda::replay::ReplayError },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io { file, message } => write!(f, "{file}: {message}"),
            LoadError::Syntax { file, line, col, message } => write!(f, "{file}:{line}:{col}: {message}"),
            LoadError::Replay { file, error } => write!(f, "{file}:{error}"),
            LoadError::Invalid { file, problems } => {
                for (i, p) in problems.iter().enumerate() {
                    if i > 0 {
                        writeln!(f)?;
                    }
                    write!(f, "{file}: {}: {}", p.path, p.message)?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// A parsed scenario with the text it came from and that text's SHA-256.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub scenario: Scenario,
    /// Where it came from (a path, or the embedded quickstart).
    pub origin: String,
    /// SHA-256 of the source text, hex.
    pub sha256: String,
}

/// SHA-256 of a text, as lowercase hex.
pub fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Parse RON text (syntax and types only; see [`validate`] for semantics). A value that does not
/// fit its field (a period under a second, a string for a number) names the field:
/// `FILE:LINE:COL: dirac.director.polling_time_s: a period must be …`.
pub fn parse(text: &str, origin: &str) -> Result<Scenario, LoadError> {
    let options = ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
    let syntax = |e: ron::error::SpannedError, path: Option<String>| LoadError::Syntax {
        file: origin.to_string(),
        line: e.span.start.line,
        col: e.span.start.col,
        message: match path {
            Some(path) => format!("{path}: {}", e.code),
            None => e.code.to_string(),
        },
    };
    let mut de = ron::Deserializer::from_str_with_options(text, &options).map_err(|e| syntax(e, None))?;
    let scenario: Scenario = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = field_path(e.path());
        syntax(de.span_error(e.into_inner()), path)
    })?;
    de.end().map_err(|e| syntax(de.span_error(e), None))?;
    Ok(scenario)
}

/// A field path as the other messages write it (`sites[0].ces[1].slots`); `None` at the root.
pub(crate) fn field_path(path: &serde_path_to_error::Path) -> Option<String> {
    let s = path.to_string();
    (s != "." && !s.is_empty()).then_some(s)
}

/// Parse and validate text whose relative paths (`dirac.cfg_file`) are relative to `base`;
/// semantic problems become [`LoadError::Invalid`].
pub fn load_str_in(text: &str, origin: &str, base: &Path) -> Result<Loaded, LoadError> {
    let mut scenario = parse(text, origin)?;
    let cfg_text = apply_cfg_file(&mut scenario, base)?;
    let replay_texts = read_replay_files(&mut scenario, base)?;
    let problems = validate(&scenario);
    if !problems.is_empty() {
        return Err(LoadError::Invalid { file: origin.to_string(), problems });
    }
    // The identity covers the cfg file (and replayed job records) too: changing them changes
    // the scenario. A scenario without them keeps the hash of its text alone.
    let sha256 = match (cfg_text, replay_texts.is_empty()) {
        (None, true) => sha256_hex(text),
        (cfg, _) => {
            let mut all = text.to_string();
            if let Some(cfg) = cfg {
                all += &format!("\n--- dirac.cfg_file ---\n{cfg}");
            }
            for (name, csv) in &replay_texts {
                all += &format!("\n--- panda.replay {name} ---\n{csv}");
            }
            sha256_hex(&all)
        }
    };
    Ok(Loaded { scenario, origin: origin.to_string(), sha256 })
}

/// [`load_str_in`] with paths relative to the current directory.
pub fn load_str(text: &str, origin: &str) -> Result<Loaded, LoadError> {
    load_str_in(text, origin, Path::new("."))
}

/// Read, parse and validate a scenario file.
pub fn load_file(path: &Path) -> Result<Loaded, LoadError> {
    let origin = path.display().to_string();
    let text = input::read_text(path).map_err(|e| LoadError::Io { file: origin.clone(), message: e.to_string() })?;
    load_str_in(&text, &origin, path.parent().unwrap_or(Path::new(".")))
}

/// Read `dirac.cfg_file` (DIRAC CS syntax) into the scenario: the Registry groups if the
/// scenario lists none, the ShareCorrections if the scenario leaves them at their defaults.
/// Returns the cfg text, if there was a file.
fn apply_cfg_file(s: &mut Scenario, base: &Path) -> Result<Option<String>, LoadError> {
    let Some(d) = s.dirac.as_mut() else { return Ok(None) };
    let Some(rel) = d.cfg_file.clone() else { return Ok(None) };
    let path = base.join(&rel);
    let file = path.display().to_string();
    let text = input::read_text(&path)
        .map_err(|e| LoadError::Io { file: file.clone(), message: format!("dirac.cfg_file: {e}") })?;
    let rules = d.rules();
    let import = dirac_cfg::import_with(&text, rules.corrector_variant, rules.int_job_share)
        .map_err(|e| LoadError::Syntax { file, line: e.line, col: e.col, message: e.kind.to_string() })?;
    if d.groups.is_empty() {
        d.groups = import.groups;
        d.cfg_warnings = import.warnings;
    }
    if let Some(sc) = import.share_corrections {
        if d.share_corrections == Default::default() {
            d.share_corrections = sc;
        }
    }
    Ok(Some(text))
}

/// Read the CSV of every `panda.replay` stream that has no records yet (all of them at load
/// time; after `--set`, those whose file it changed) into its records, paths relative to
/// `base`; a malformed file is `FILE:LINE: column: what was expected` ([`LoadError::Syntax`]
/// with column 0 shows no column number). Returns each file's path and text.
fn read_replay_files(s: &mut Scenario, base: &Path) -> Result<Vec<(String, String)>, LoadError> {
    let Some(p) = s.panda.as_mut() else { return Ok(Vec::new()) };
    let mut texts = Vec::new();
    for (i, r) in p.replay.iter_mut().enumerate() {
        if r.file.trim().is_empty() || !r.records.is_empty() {
            continue; // validation names an empty path; records already read are kept
        }
        let path = base.join(&r.file);
        let file = path.display().to_string();
        let text = input::read_text(&path)
            .map_err(|e| LoadError::Io { file: file.clone(), message: format!("panda.replay[{i}].file: {e}") })?;
        r.records = panda::replay::read_csv(&text).map_err(|e| LoadError::Replay { file: file.clone(), error: e })?;
        texts.push((r.file.clone(), text));
    }
    Ok(texts)
}

/// After `--set`, read the files a scenario of `origin` names and that `--set` changed (a
/// `panda.replay` stream's `file`): read and checked like those of the scenario file, relative
/// to its directory, so that a missing or malformed file is an error, never a stream of no
/// jobs. Returns each file read, with its text.
pub fn read_set_files(s: &mut Scenario, origin: &str) -> Result<Vec<(String, String)>, LoadError> {
    read_replay_files(s, Path::new(origin).parent().unwrap_or(Path::new(".")))
}

/// The embedded quickstart scenario.
pub fn quickstart() -> Loaded {
    load_str(QUICKSTART, QUICKSTART_ORIGIN).expect("the embedded quickstart is valid (tested)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quickstart_is_valid() {
        let q = quickstart();
        assert_eq!(q.scenario.name, "quickstart");
        assert_eq!(q.sha256.len(), 64);
    }

    #[test]
    fn a_scenario_reads_groups_and_corrections_from_a_dirac_cfg_file() {
        let dir = std::env::temp_dir().join(format!("pilotsim-cfgfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("dirac.cfg"),
            "Registry\n{\n  Groups\n  {\n    lhcb_prod\n    {\n      JobShare = 3000\n      Properties = JobSharing\n      Users = prodmgr\n    }\n    lhcb_user\n    {\n      JobShare = 1000\n      Properties = JOB_SHARING\n      Users = alice, bob, carol\n    }\n  }\n}\nOperations\n{\n  Defaults\n  {\n    JobScheduling\n    {\n      EnableSharesCorrection = True\n      ShareCorrections\n      {\n        ShareCorrectorsToStart = WMSHistory\n        WMSHistory\n        {\n          GroupsInstance\n          {\n            MaxGlobalCorrectionFactor = 3\n            HourSlice\n            {\n              TimeSpan = 3600\n              Weight = 20\n              MaxCorrection = 5\n            }\n          }\n        }\n      }\n    }\n  }\n}\n",
        )
        .unwrap();
        // The quickstart with its groups taken out and the cfg file referenced instead.
        let start = QUICKSTART.find("        groups: [").unwrap();
        let end = QUICKSTART[start..].find("        ],\n").unwrap() + start + "        ],\n".len();
        let text = format!("{}        cfg_file: \"dirac.cfg\",\n{}", &QUICKSTART[..start], &QUICKSTART[end..]);
        let path = dir.join("s.ron");
        std::fs::write(&path, &text).unwrap();
        let loaded = load_file(&path).unwrap();
        let d = loaded.scenario.dirac.as_ref().unwrap();
        assert_eq!(d.groups.len(), 2);
        assert_eq!((d.groups[0].job_share, d.groups[0].job_sharing()), (3000.0, true));
        // `JOB_SHARING` is not DIRAC's property: lhcb_user does not get it, and a warning says so.
        assert!(!d.groups[1].job_sharing());
        let w = warnings(&loaded.scenario);
        assert!(
            w.iter().any(|p| p.path == "dirac.cfg_file" && p.message.starts_with("14:7: group `lhcb_user`")),
            "{w:?}"
        );
        assert!(d.share_corrections.enabled);
        assert_eq!(d.share_corrections.instances[0].max_global_correction, 3.0);
        assert_ne!(loaded.sha256, sha256_hex(&text), "the cfg text is part of the identity");
        // An error in the cfg file names the cfg file and its line.
        std::fs::write(dir.join("dirac.cfg"), "Registry\n{\n  Groups\n  {\n").unwrap();
        let e = load_file(&path).unwrap_err().to_string();
        assert!(e.contains("dirac.cfg:") && e.contains("Registry"), "{e}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn syntax_errors_have_line_and_column() {
        let text = "Scenario(\n  name: \"x\",\n  duration_s: 10,\n  bogus: 3,\n)";
        match parse(text, "f.ron") {
            Err(LoadError::Syntax { line, col, message, .. }) => {
                assert_eq!(line, 4, "{message}");
                assert!(col >= 3, "{col}");
                assert!(message.contains("bogus"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let e = parse("(name: \"x\", duration_s: ", "g.ron").unwrap_err();
        assert!(e.to_string().starts_with("g.ron:1:"), "{e}");
    }
}
