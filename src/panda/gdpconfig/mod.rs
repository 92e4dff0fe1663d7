//! `panda::gdpconfig` — PanDA's configuration table (`ATLAS_PANDA.CONFIG`, the "gdpconfig" of
//! panda-docs `advanced/gdpconfig.rst`) as one typed structure, and its importer
//! (reference `panda.md` §1–§7).
//!
//! PanDA reads a setting with `taskBuffer.getConfigValue(component, key, app, vo)`; a missing row
//! means the code's own default. Here every module that reads gdpconfig owns a settings struct
//! whose `Default` is those code defaults and which lists the keys it reads (`GDPCONFIG_KEYS`),
//! and [`GdpConfig`] is the list of them: what a scenario's `panda: (gdpconfig: …)` holds.
//!
//! [`import`] reads a dump of the table — a JSON array of rows as the table holds them
//! (`component`, `key`, `value`, `app`, `vo`, optionally `type` and `value_json`; values are
//! strings that hold numbers) — and applies each row to the field that reads it (the table in
//! [`keys`]). What PanDA does with a row is followed exactly where it decides the outcome:
//!
//! * lookup is by `(app, component, key)`; a row with `vo` null applies to every VO, a row of
//!   another VO is not read (`AND (vo=:vo or vo IS NULL)`, `DBProxy.getConfigValue`) — unless
//!   PanDA reads the key without a VO ([`keys::reads_vo`]), when no VO filter applies; when
//!   several rows qualify the one of the VO wins, then the VO-independent one (PanDA's
//!   `fetchone` leaves it to the database; a warning says so);
//! * with a `type` column the value converts as `getConfigValue` does: `str`/`string`, `int`/
//!   `integer`, `float`, `bool`/`boolean` (true iff the text is `true` in any case), `json`
//!   (from `value_json`); without it the text is read as a boolean, an integer, a float or a
//!   string, whichever the field accepts first;
//! * families of per-share keys (`DISK_THRESHOLD_<gshare>`, `NQUEUELIMIT_<share>`, …) fill a map
//!   keyed by the suffix, which the module's accessor consults before the plain key.
//!
//! Where PanDA would silently drop a bad row (`Wrong value/type pair` → the key reads as
//! missing, so the default applies) the importer stops with an error naming the row: an
//! operator importing a dump wants to know. Keys no module reads are warnings, listed.

mod keys;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::anal_broker::AnalBrokerParams;
use super::gshare::{DispatchSettings, ThrottleSettings};
use super::harvester::MeanrssParams;
use super::job_broker::JobBrokerParams;
use super::task_broker::TaskBrokerageParams;
use super::timeouts::TimeoutParams;
pub use keys::{KeySpec, Section, app_of, find_keys, keys};

/// Every gdpconfig setting pilotsim models, grouped by the module that reads it. The defaults
/// are panda-server 1.0.4's code defaults (reference, per section).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GdpConfig {
    /// `taskbrokerage` keys of production task brokerage (reference §1).
    pub task_brokerage: TaskBrokerageParams,
    /// `jobbroker` (and `core`) keys of production job brokerage, the network weight's among
    /// them (reference §2–§3).
    pub job_broker: JobBrokerParams,
    /// `anal_jobbroker`, `prio_mgr`, `analy_eval` (and some `jobbroker`) keys of analysis
    /// brokerage (reference §4).
    pub anal_broker: AnalBrokerParams,
    /// `watcher`, `job_timeout`, `rebroker`, `watchdog` keys of the timeout rules (reference §6).
    pub timeouts: TimeoutParams,
    /// `jobdispatch` keys of job dispatch (reference §7).
    pub dispatch: DispatchSettings,
    /// `prod_job_throttler` (and `core`) keys of JEDI's throttle (reference §7).
    pub throttle: ThrottleSettings,
    /// `meanrss/IGNORE_MEANRSS` of pilot streaming (reference §8).
    pub meanrss: MeanrssParams,
}

/// `section_value` and `set_section` for every section, from one list.
macro_rules! sections {
    ($($variant:ident => $field:ident),* $(,)?) => {
        impl GdpConfig {
            /// The section `s` as a JSON object (the importer edits fields through serde).
            fn section_value(&self, s: Section) -> Value {
                let v = match s {
                    $(Section::$variant => serde_json::to_value(&self.$field),)*
                };
                v.unwrap_or(Value::Null)
            }

            /// Replaces section `s` with `v`; the error is serde's, e.g. "invalid type: …,
            /// expected u64".
            fn set_section(&mut self, s: Section, v: Value) -> Result<(), String> {
                let e = |e: serde_json::Error| e.to_string();
                match s {
                    $(Section::$variant => self.$field = serde_json::from_value(v).map_err(e)?,)*
                }
                Ok(())
            }
        }
    };
}

sections! {
    TaskBrokerage => task_brokerage,
    JobBroker => job_broker,
    AnalBroker => anal_broker,
    Timeouts => timeouts,
    Dispatch => dispatch,
    Throttle => throttle,
    Meanrss => meanrss,
}

/// One row of the dump, as the table holds it (`value` may also be a JSON number or boolean, as
/// some export tools write them).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Row {
    pub component: String,
    pub key: String,
    #[serde(default)]
    pub value: Option<Value>,
    #[serde(default)]
    pub value_json: Option<Value>,
    /// The `type` column: `str`, `int`, `float`, `bool`, `json` (optional in a dump).
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// `jedi` or `pandaserver` (the `app` column); a missing app is PanDA's default `pandaserver`.
    #[serde(default)]
    pub app: Option<String>,
    /// The `vo` column; null means every VO.
    #[serde(default)]
    pub vo: Option<String>,
    /// Columns of the table that do not affect the value (`descr`, `creation_time`, …).
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

/// A row that set a field.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// 1-based row number in the dump.
    pub row: usize,
    pub spec: &'static KeySpec,
    /// The suffix of a family key (`MC` of `DISK_THRESHOLD_MC`).
    pub suffix: Option<String>,
}

/// The result of [`import`].
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub config: GdpConfig,
    pub applied: Vec<Applied>,
    /// Rows not read, each with why (unknown key, other VO, other app, shadowed duplicate).
    pub warnings: Vec<String>,
}

/// Why a dump cannot be imported.
#[derive(Debug, Clone, PartialEq)]
pub enum ImportError {
    /// Not JSON, or not an array of row objects: serde_json's position.
    Syntax { line: usize, column: usize, message: String },
    /// A row with a bad shape or a value its field cannot take.
    Row { row: usize, text: String, message: String },
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Syntax { line, column, message } => write!(f, "{line}:{column}: {message}"),
            Self::Row { row, text, message } => write!(f, "row {row} {text}: {message}"),
        }
    }
}

impl std::error::Error for ImportError {}

/// Reads a dump of `ATLAS_PANDA.CONFIG` (a JSON array of rows) for `vo` and applies it to the
/// defaults. See the module doc for the rules.
pub fn import(text: &str, vo: &str) -> Result<Imported, ImportError> {
    let raw: Vec<Value> = serde_json::from_str(text).map_err(|e| ImportError::Syntax {
        line: e.line(),
        column: e.column(),
        message: format!("{e}; expected a JSON array of rows {{\"component\", \"key\", \"value\", \"app\", \"vo\"}}"),
    })?;
    let mut rows = Vec::with_capacity(raw.len());
    for (i, v) in raw.into_iter().enumerate() {
        let text = compact(&v);
        let row: Row =
            serde_json::from_value(v).map_err(|e| ImportError::Row { row: i + 1, text, message: format!("{e}") })?;
        rows.push(row);
    }

    let mut warnings = Vec::new();
    // (app, component, key) → the row PanDA would read: of `vo` first, then VO-independent, then
    // (for a key read without a VO) any other VO; the first such row in the dump.
    let rank = |r: &Row| match r.vo.as_deref() {
        Some(v) if v == vo => 0,
        None | Some("") => 1,
        Some(_) => 2,
    };
    let mut chosen: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for (i, row) in rows.iter().enumerate() {
        let app = row.app.as_deref().unwrap_or("pandaserver");
        if rank(row) == 2 && keys::reads_vo(&row.component, &row.key) {
            let other = row.vo.as_deref().unwrap_or_default();
            warnings.push(format!(
                "row {}: {}/{} is for VO {other:?}, not {vo:?}: not read",
                i + 1,
                row.component,
                row.key
            ));
            continue;
        }
        let id = (app.to_string(), row.component.clone(), row.key.clone());
        match chosen.get(&id).copied() {
            None => {
                chosen.insert(id, i);
            }
            Some(j) => {
                let (keep, drop) = if rank(row) < rank(&rows[j]) { (i, j) } else { (j, i) };
                chosen.insert(id, keep);
                warnings.push(format!(
                    "row {}: {}/{} (app {app}) is also in row {}: row {} is used",
                    drop + 1,
                    row.component,
                    row.key,
                    keep + 1,
                    keep + 1
                ));
            }
        }
    }

    let mut config = GdpConfig::default();
    let mut applied = Vec::new();
    for (_, &i) in chosen.iter() {
        let row = &rows[i];
        let app = row.app.as_deref().unwrap_or("pandaserver");
        let specs = find_keys(&row.component, &row.key);
        if specs.is_empty() {
            warnings.push(format!(
                "row {}: {}/{} is not a key pilotsim models: ignored",
                i + 1,
                row.component,
                row.key
            ));
            continue;
        }
        for (spec, suffix) in specs {
            if spec.app != app {
                warnings.push(format!(
                    "row {}: {}/{} has app {app:?}, but PanDA reads it with app {:?}: not read",
                    i + 1,
                    row.component,
                    row.key,
                    spec.app
                ));
                continue;
            }
            let row_err = |message: String| ImportError::Row { row: i + 1, text: describe(row), message };
            let mut first_error = None;
            let mut ok = false;
            for candidate in candidates(row).map_err(row_err)? {
                match apply(&mut config, spec, suffix, candidate) {
                    Ok(()) => {
                        ok = true;
                        break;
                    }
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
            }
            if !ok {
                let e = first_error.unwrap_or_default();
                return Err(row_err(format!(
                    "{e} (field {}.{}; PanDA would ignore this row and use the default)",
                    spec.section.name(),
                    spec.field
                )));
            }
            applied.push(Applied { row: i + 1, spec, suffix: suffix.map(str::to_string) });
        }
    }
    applied.sort_by_key(|a| a.row);
    refuse_what_the_scenario_refuses(&config, &applied, &rows)?;
    Ok(Imported { config, applied, warnings })
}

/// The module checks a scenario runs on `panda.gdpconfig` (`scenario::panda::check`): a value
/// they refuse (a negative timeout, a ratio out of range) is refused here with its row, not
/// printed into a fragment the scenario then refuses. The row is the one that set the field
/// the message names, else the last one that set a field of that section.
fn refuse_what_the_scenario_refuses(config: &GdpConfig, applied: &[Applied], rows: &[Row]) -> Result<(), ImportError> {
    let checks = [
        (Section::JobBroker, super::job_broker::validate(&config.job_broker)),
        (Section::AnalBroker, super::anal_broker::validate(&config.anal_broker)),
        (Section::Timeouts, super::timeouts::validate(&config.timeouts)),
    ];
    for (section, result) in checks {
        let Err(message) = result else { continue };
        let of_section: Vec<&Applied> = applied.iter().filter(|a| a.spec.section == section).collect();
        let names = |a: &&&Applied| {
            let key = format!("{}{}", a.spec.key, a.suffix.as_deref().unwrap_or(""));
            message.contains(&key) || message.contains(&a.spec.field)
        };
        let Some(a) = of_section.iter().find(names).or(of_section.last()) else { continue };
        let row = &rows[a.row - 1];
        return Err(ImportError::Row {
            row: a.row,
            text: describe(row),
            message: format!("{message} (the scenario refuses it: panda.gdpconfig.{})", section.name()),
        });
    }
    Ok(())
}

/// Sets the field of `spec` (the map entry `suffix` of a family) to `value` in `config`.
fn apply(config: &mut GdpConfig, spec: &KeySpec, suffix: Option<&str>, value: Value) -> Result<(), String> {
    let mut section = config.section_value(spec.section);
    let Some(obj) = section.as_object_mut() else { return Err("internal: section is not an object".into()) };
    if !obj.contains_key(&spec.field) {
        return Err(format!("internal: {} has no field {}", spec.section.name(), spec.field));
    }
    match suffix {
        None => {
            obj.insert(spec.field.clone(), value);
        }
        Some(s) => {
            let map = obj.entry(spec.field.clone()).or_insert_with(|| Value::Object(Default::default()));
            let Some(map) = map.as_object_mut() else { return Err("internal: family field is not a map".into()) };
            map.insert(s.to_string(), value);
        }
    }
    config.set_section(spec.section, section)
}

/// The values to try for a row, in order: with a `type` column the one PanDA's
/// `getConfigValue` converts to; without it the boolean/integer/float reading of the text, then
/// the text itself.
fn candidates(row: &Row) -> Result<Vec<Value>, String> {
    let text = match &row.value {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Null) | None => None,
        Some(v) => Some(v.to_string()),
    };
    if let Some(kind) = &row.kind {
        let need = || text.clone().ok_or_else(|| format!("no value for type {kind:?}"));
        let v = match kind.to_ascii_lowercase().as_str() {
            "str" | "string" => Value::String(need()?),
            "int" | "integer" => {
                let t = need()?;
                let n: i64 = t.trim().parse().map_err(|_| format!("{t:?} is not an integer (type {kind:?})"))?;
                Value::from(n)
            }
            "float" => {
                let t = need()?;
                let x: f64 = t.trim().parse().map_err(|_| format!("{t:?} is not a number (type {kind:?})"))?;
                if !x.is_finite() {
                    return Err(format!("{t:?} is not a finite number"));
                }
                Value::from(x)
            }
            "bool" | "boolean" => Value::Bool(need()?.eq_ignore_ascii_case("true")),
            "json" => match &row.value_json {
                Some(Value::String(s)) => serde_json::from_str(s).map_err(|e| format!("value_json: {e}"))?,
                Some(v) => v.clone(),
                None => return Err("type \"json\" but no value_json".into()),
            },
            other => return Err(format!("unknown type {other:?}; expected str, int, float, bool or json")),
        };
        return Ok(vec![v]);
    }
    let Some(t) = text else { return Err("no value".into()) };
    let mut out = Vec::with_capacity(2);
    let s = t.trim();
    if s.eq_ignore_ascii_case("true") {
        out.push(Value::Bool(true));
    } else if s.eq_ignore_ascii_case("false") {
        out.push(Value::Bool(false));
    } else if let Ok(n) = s.parse::<i64>() {
        out.push(Value::from(n));
    } else if let Ok(x) = s.parse::<f64>()
        && x.is_finite()
    {
        out.push(Value::from(x));
    }
    out.push(Value::String(t));
    Ok(out)
}

/// `component/key = value` for messages.
fn describe(row: &Row) -> String {
    let v = row.value.as_ref().map_or("null".to_string(), compact);
    format!("({}/{} = {v})", row.component, row.key)
}

fn compact(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 200 { s.chars().take(200).collect::<String>() + "…" } else { s }
}

/// The scenario fragment of an import: a comment per applied row, then `gdpconfig: (...)` in
/// RON, to paste under `panda:`. It parses back to the same [`GdpConfig`] (tested).
pub fn to_ron_fragment(imported: &Imported) -> Result<String, String> {
    let mut s = String::new();
    s += &format!("// gdpconfig: {} rows applied\n", imported.applied.len());
    for a in &imported.applied {
        let key = match &a.suffix {
            Some(x) => format!("{}{x}", a.spec.key),
            None => a.spec.key.to_string(),
        };
        let field = match &a.suffix {
            Some(x) => format!("{}.{}[{x:?}]", a.spec.section.name(), a.spec.field),
            None => format!("{}.{}", a.spec.section.name(), a.spec.field),
        };
        s += &format!("//   row {}: {}/{key} -> {field}\n", a.row, a.spec.component);
    }
    let pretty = ron::ser::PrettyConfig::new().indentor("    ".to_string());
    let body = ron::ser::to_string_pretty(&imported.config, pretty).map_err(|e| e.to_string())?;
    s += "gdpconfig: ";
    s += &body;
    s += ",\n";
    Ok(s)
}
