//! `scenario::dirac_cfg` — read DIRAC Configuration System `.cfg` text (seed 002's example;
//! reference `dirac.md` §2.1, §3.1) and turn its Registry groups and share corrections into
//! pilotsim scenario values ([`import`], [`to_ron_fragment`]).
//!
//! Syntax (as `diraccfg` `CFG.loadFromBuffer` reads it): `Name {`, or `Name` then `{` on a later
//! line, opens a section; `}` closes it; `key = value` sets an option (the value is the rest of the
//! line, braces included); `key += value` appends `", value"`; list values split on commas, items
//! trimmed, empties dropped (`List.fromChar`). Lines and columns are 1-based (columns in chars).
//! Differences from `diraccfg`: `#` starts a comment at the start of a line **or after
//! whitespace** (`diraccfg` keeps `value # note` as the value); `+=` on an unknown key acts as `=`
//! (`diraccfg` raises `KeyError`); a repeated option key keeps the last value in the first one's
//! place (as `CFG.setOption`), but a repeated section name, or an option and a section sharing a
//! name, is an error (`createNewSection` raises `KeyError`; `setOption` would silently replace the
//! section); names cannot contain whitespace or `/`, must be followed by `{` or `=`, and an option
//! cannot share a line with a brace (`diraccfg` glues such text into odd names instead).

use serde::{Deserialize, Serialize};

use crate::dirac::corrector::{CorrectorInstance, CorrectorVariant, ShareCorrections, TimeSlice};
use crate::dirac::priority::{DEFAULT_GROUP_SHARE, JOB_SHARING_CS};
use crate::engine::Period;
use CfgErrorKind::*;
use GlobalCorrectionKey as K;

/// A `.cfg` text that cannot be read or imported; displays as `line:col: message`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{line}:{col}: {kind}")]
pub struct CfgError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
    /// What went wrong.
    pub kind: CfgErrorKind,
}

/// What went wrong; every message says what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CfgErrorKind {
    /// A `}` with no open section.
    #[error("unexpected `}}`: no section is open (expected an option, a section or the end of the text)")]
    UnmatchedClose,
    /// The text ends inside section `path` (`A/B`), opened at the error's position.
    #[error("section `{path}` opened here is never closed (expected `}}` before the end of the text){hint}")]
    UnclosedSection { path: String, hint: String },
    /// A line that is neither an option nor a section (e.g. a name without `{` or `=`).
    #[error("{found}: expected {expected}")]
    Unexpected { found: String, expected: String },
    /// A section name used twice in a section, or a name used for an option and a section.
    #[error("`{name}` is already defined at line {first_line} (expected a unique section name)")]
    Duplicate { name: String, first_line: usize },
    /// An option value of the wrong type.
    #[error("option `{key} = {value}`: expected {expected}")]
    BadValue { key: String, value: String, expected: String },
    /// Valid syntax that pilotsim cannot import (unsupported corrector, conflicting sections).
    #[error("{0}")]
    Import(String),
}

impl CfgError {
    /// An error of `kind` at `line:col`.
    pub fn new(line: usize, col: usize, kind: CfgErrorKind) -> Self {
        Self { line, col, kind }
    }
}

/// One `key = value` option, at the position of its key (of the last `=` if redefined).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CfgOption {
    pub key: String,
    /// The raw value, trimmed; `+=` appends `", value"`.
    pub value: String,
    pub line: usize,
    pub col: usize,
}

impl CfgOption {
    /// The value as a list: split on commas, items trimmed, empty items dropped (`List.fromChar`).
    pub fn list(&self) -> Vec<String> {
        self.value.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
    }

    /// The value as a finite number; the error names the option's line:col.
    pub fn f64(&self) -> Result<f64, CfgError> {
        let bad = || BadValue { key: self.key.clone(), value: self.value.clone(), expected: "a finite number".into() };
        self.value.parse().ok().filter(|x: &f64| x.is_finite()).ok_or_else(|| CfgError::new(self.line, self.col, bad()))
    }

    /// The value as a [`Period`] (an agent's cycle: at least a second); the error names the
    /// option's line:col.
    pub fn period(&self) -> Result<Period, CfgError> {
        Period::new(self.f64()?).map_err(|_| {
            let expected = "a period of at least 1 s (a shorter one would fire its agent again and again)".into();
            CfgError::new(self.line, self.col, BadValue { key: self.key.clone(), value: self.value.clone(), expected })
        })
    }
}

/// A section: options and sub-sections in text order, at the position of its name (the root:
/// empty name, 0:0).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CfgSection {
    pub name: String,
    pub line: usize,
    pub col: usize,
    pub options: Vec<CfgOption>,
    pub sections: Vec<CfgSection>,
}

impl CfgSection {
    /// The sub-section at a `/`-separated path (empty levels ignored; `""` is `self`).
    pub fn section(&self, path: &str) -> Option<&CfgSection> {
        let mut levels = path.split('/').map(str::trim).filter(|p| !p.is_empty());
        levels.try_fold(self, |s, name| s.sections.iter().find(|c| c.name == name))
    }

    /// The option `key`, which may be a path (`Registry/Groups/g/JobShare`).
    pub fn option(&self, key: &str) -> Option<&CfgOption> {
        let (sec, key) = key.rsplit_once('/').map_or((Some(self), key), |(p, k)| (self.section(p), k));
        sec?.options.iter().find(|o| o.key == key.trim())
    }

    /// The value of option `key` (a name or a path).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.option(key).map(|o| o.value.as_str())
    }

    /// The value of option `key` as a list; empty if the option is absent.
    pub fn get_list(&self, key: &str) -> Vec<String> {
        self.option(key).map(CfgOption::list).unwrap_or_default()
    }

    /// The value of option `key` as a number: `Ok(None)` if absent, an error naming line:col if
    /// it is not a finite number.
    pub fn get_f64(&self, key: &str) -> Result<Option<f64>, CfgError> {
        self.option(key).map(CfgOption::f64).transpose()
    }

    /// The line of the section or option called `name`, if any.
    fn defined_at(&self, name: &str) -> Option<usize> {
        let sections = self.sections.iter().map(|s| (&s.name, s.line));
        sections.chain(self.options.iter().map(|o| (&o.key, o.line))).find(|(n, _)| *n == name).map(|(_, l)| l)
    }
}

type Res<T> = Result<T, CfgError>;

/// What may follow a name.
const NAME_NEXT: &str = "`{` on this or the next line (a section) or `=` (an option)";

/// The line without its comment: from a `#` at the start or after whitespace.
fn strip_comment(line: &str) -> &str {
    let start = |i: usize| line[..i].chars().next_back().is_none_or(char::is_whitespace);
    line.char_indices().find(|&(i, c)| c == '#' && start(i)).map_or(line, |(i, _)| &line[..i])
}

fn unexpected(line: usize, col: usize, found: impl Into<String>, expected: &str) -> CfgError {
    CfgError::new(line, col, Unexpected { found: found.into(), expected: expected.into() })
}

/// Parse `.cfg` text into its root section (syntax in the module doc). Never panics.
pub fn parse(text: &str) -> Result<CfgSection, CfgError> {
    let mut stack = vec![CfgSection::default()];
    let mut pending: Option<(String, usize, usize)> = None; // a name waiting for `{` on a later line
    let mut brace_value: Option<(String, usize, usize)> = None; // the last option whose value has `}`
    for (line, raw) in (1..).zip(text.split('\n')) {
        let chars: Vec<char> = strip_comment(raw).chars().collect();
        let Some(first) = chars.iter().position(|c| !c.is_whitespace()) else { continue };
        if let Some((name, l, c)) = pending.take_if(|_| chars[first] != '{') {
            return Err(unexpected(l, c, format!("`{name}` is not followed by `{{`"), NAME_NEXT));
        }
        let (mut name, mut at, mut name_done, mut brace_seen) = (String::new(), 0, false, false);
        for (j, &c) in chars.iter().enumerate().skip(first) {
            let col = j + 1;
            match c {
                _ if c.is_whitespace() => name_done = !name.is_empty(),
                '{' => {
                    let (n, l, cl) = match pending.take() {
                        _ if !name.is_empty() => (std::mem::take(&mut name), line, at),
                        Some(p) => p,
                        None => return Err(unexpected(line, col, "`{` without a name", "a section name before `{`")),
                    };
                    if let Some(first_line) = stack.last().and_then(|p| p.defined_at(&n)) {
                        return Err(CfgError::new(l, cl, Duplicate { name: n, first_line }));
                    }
                    stack.push(CfgSection { name: n, line: l, col: cl, ..CfgSection::default() });
                    (name_done, brace_seen) = (false, true);
                }
                '}' if !name.is_empty() => return Err(unexpected(line, at, format!("`{name}}}`"), NAME_NEXT)),
                '}' if stack.len() < 2 => return Err(CfgError::new(line, col, UnmatchedClose)),
                '}' => {
                    if let (Some(done), Some(parent)) = (stack.pop(), stack.last_mut()) {
                        parent.sections.push(done);
                    }
                    brace_seen = true;
                }
                '=' | '+' if c == '=' || chars.get(j + 1) == Some(&'=') => {
                    let op = if c == '+' { "+=" } else { "=" };
                    if name.is_empty() {
                        return Err(unexpected(line, col, format!("`{op}` without a key"), "a key before it"));
                    }
                    if brace_seen {
                        let found = format!("option `{name}` on a line with a brace");
                        return Err(unexpected(line, at, found, "each option on its own line"));
                    }
                    let value = chars[j + op.len()..].iter().collect::<String>().trim().to_string();
                    brace_value = value.contains('}').then(|| (name.clone(), line, at)).or(brace_value);
                    let Some(top) = stack.last_mut() else { break };
                    if let Some(s) = top.sections.iter().find(|s| s.name == name) {
                        return Err(CfgError::new(line, at, Duplicate { name, first_line: s.line }));
                    }
                    match top.options.iter_mut().find(|o| o.key == name) {
                        Some(o) if op == "+=" => o.value = format!("{}, {value}", o.value),
                        Some(o) => (o.value, o.line, o.col) = (value, line, at),
                        None => top.options.push(CfgOption { key: name, value, line, col: at }),
                    }
                    name = String::new();
                    break;
                }
                '/' => return Err(unexpected(line, col, "`/` in a name", "a name without `/` (it separates levels)")),
                _ if name_done => {
                    let expected = "`=` (an option) or `{` (a section); names cannot contain spaces";
                    return Err(unexpected(line, col, format!("`{c}` after `{name}`"), expected));
                }
                _ => {
                    at = if name.is_empty() { col } else { at };
                    name.push(c);
                }
            }
        }
        pending = (!name.is_empty()).then_some((name, line, at));
    }
    if let Some((name, line, col)) = pending {
        return Err(unexpected(line, col, format!("`{name}` is not followed by `{{`"), NAME_NEXT));
    }
    if let Some(top) = stack.last().filter(|_| stack.len() > 1) {
        let path = stack[1..].iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join("/");
        let hint = brace_value.map_or(String::new(), |(k, l, c)| format!(" (`{k}` at {l}:{c} has `}}` in its value)"));
        return Err(CfgError::new(top.line, top.col, UnclosedSection { path, hint }));
    }
    Ok(stack.pop().unwrap_or_default())
}

/// A Registry group: the scenario's own group type, so an import is a scenario fragment.
pub use crate::dirac::priority::GroupConfig as GroupDef;

/// Which global-cap option an instance gave (reference §3.1 ⚠: DIRAC 9 reads only
/// `MaxGlobalCorrection`; the seed and the docs say `MaxGlobalCorrectionFactor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlobalCorrectionKey {
    /// Neither: the default 5.
    Default,
    /// `MaxGlobalCorrectionFactor` only (the seed's name).
    Factor,
    /// `MaxGlobalCorrection` only (the name DIRAC 9 reads).
    Correction,
    /// Both; the variant decides which one is used.
    Both,
}

/// What [`import`] found in a `.cfg` text; (de)serialises as the scenario fragment
/// ([`to_ron_fragment`]) without `global_correction_keys` and `warnings`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiracCfgImport {
    /// `/Registry/Groups/*`, in text order.
    pub groups: Vec<GroupDef>,
    /// The `ShareCorrections` section, if there is one.
    pub share_corrections: Option<ShareCorrections>,
    /// One per `share_corrections.instances`, same order: which global-cap option was given.
    #[serde(skip)]
    pub global_correction_keys: Vec<GlobalCorrectionKey>,
    /// `line:col: message` for what DIRAC reads otherwise than a reader might expect: a
    /// property spelled `JOB_SHARING`, a `JobShare` that is not an integer.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// [`import_with`] for the seed: [`CorrectorVariant::Seed`], JobShares read as numbers.
pub fn import(text: &str) -> Result<DiracCfgImport, CfgError> {
    import_with(text, CorrectorVariant::Seed, false)
}

/// Parse `text`; extract `/Registry/Groups/*` ([`read_group`]) and
/// the `ShareCorrections` section, top-level (seed 002) or anywhere under `/Operations` (e.g.
/// `Defaults/JobScheduling`, `<VO>/<Setup>/JobScheduling`, the seed's `Scheduling/<setup>`), at most
/// one. `EnableSharesCorrection` (`y`/`yes`/`true`/`1`) is read in its parent, else in it; absent is
/// false (reference §2.3), so the seed example imports disabled. No `ShareCorrectorsToStart` starts
/// nothing (as in DIRAC); only `WMSHistory` is supported: its sub-sections are the instances
/// (`Group`, global cap, `UpdateHistoryPeriod`, which must agree), theirs the slices (reference
/// §3.1 defaults). Global cap: `Seed` takes `MaxGlobalCorrectionFactor`, else `MaxGlobalCorrection`,
/// else 5; `Dirac9` ignores the seed name, as the real code does (which also casts these values
/// with `int()`, so `Weight = 0.8` becomes the default there; pilotsim reads numbers).
/// `int_job_share`: read each `JobShare` as DIRAC 9 does (`PrioritySettings::int_job_share`).
pub fn import_with(text: &str, variant: CorrectorVariant, int_job_share: bool) -> Result<DiracCfgImport, CfgError> {
    let root = parse(text)?;
    let mut warnings = Vec::new();
    let mut groups = Vec::new();
    for g in root.section("Registry/Groups").map_or(&[][..], |s| &s.sections) {
        groups.push(read_group(g, int_job_share, &mut warnings)?);
    }
    let mut found: Vec<_> = root.sections.iter().filter(|s| s.name == "ShareCorrections").map(|s| (&root, s)).collect();
    let mut todo: Vec<&CfgSection> = root.sections.iter().filter(|s| s.name == "Operations").collect();
    while let Some(p) = todo.pop() {
        for s in &p.sections {
            if s.name == "ShareCorrections" { found.push((p, s)) } else { todo.push(s) }
        }
    }
    found.sort_by_key(|(_, s)| s.line);
    if let [(_, first), (_, second), ..] = found[..] {
        let message = format!("a second `ShareCorrections` section (the first is at line {}): keep one", first.line);
        return Err(CfgError::new(second.line, second.col, Import(message)));
    }
    let mut imp = DiracCfgImport { groups, share_corrections: None, global_correction_keys: Vec::new(), warnings };
    if let Some((parent, sc)) = found.first() {
        read_corrections(&mut imp, parent, sc, variant)?;
    }
    Ok(imp)
}

/// One Registry group, as DIRAC reads it (`Registry.getPropertiesForGroup`, `getGroupShares`,
/// reference §1.3, §2.1):
/// - `Properties`: the JobSharing property is DIRAC's `Properties.JOB_SHARING`, whose value is
///   `JobSharing`, and the group's list is searched for that exact string. `JobSharing` is
///   kept; `JOB_SHARING` (the constant's name, which the seeds use) or another spelling is
///   not that property: it is dropped, with a warning, so the scenario does not read it as one.
/// - `JobShare` (default 1000): `gConfig.getValue(path, 1000)` casts the text with `int()`.
///   With `int_job_share` (DIRAC 9) a text `int()` refuses (`0.5`, `2500.0`, `lots`) gives
///   1000, with a warning; without it the number is read as written (the seed), with a warning
///   when it is not an integer, and a text that is no number is an error.
fn read_group(g: &CfgSection, int_job_share: bool, warnings: &mut Vec<String>) -> Res<GroupDef> {
    let mut properties = Vec::new();
    for (o, p) in g.option("Properties").into_iter().flat_map(|o| o.list().into_iter().map(move |p| (o, p))) {
        if p != JOB_SHARING_CS && p.replace('_', "").eq_ignore_ascii_case(JOB_SHARING_CS) {
            warnings.push(format!(
                "{}:{}: group `{}`: `{p}` is not a DIRAC property (DIRAC's is `{JOB_SHARING_CS}`), so the group does not share its jobs; dropped",
                o.line, o.col, g.name
            ));
        } else {
            properties.push(p);
        }
    }
    let users = g.get_list("Users");
    let job_share = match g.option("JobShare") {
        None => DEFAULT_GROUP_SHARE,
        Some(o) => match python_int(&o.value) {
            Some(v) => v,
            None if int_job_share => {
                let why = "DIRAC 9 casts it with int(), which fails: the group gets the default 1000";
                warnings.push(format!("{}:{}: `JobShare = {}`: {why}", o.line, o.col, o.value));
                DEFAULT_GROUP_SHARE
            }
            None => {
                let v = o.f64()?;
                let why =
                    "not an integer: read as a number here; DIRAC 9 casts it with int(), which fails, and uses 1000";
                warnings.push(format!("{}:{}: `JobShare = {}`: {why}", o.line, o.col, o.value));
                v
            }
        },
    };
    // What the scenario would refuse (`dirac.groups[].job_share` ≥ 0) is refused here, at its
    // line, not printed into a fragment.
    if let Some(o) = g.option("JobShare").filter(|_| job_share < 0.0) {
        let bad = BadValue { key: o.key.clone(), value: o.value.clone(), expected: "a number ≥ 0".into() };
        return Err(CfgError::new(o.line, o.col, bad));
    }
    Ok(GroupDef { name: g.name.clone(), job_share, properties, users })
}

/// Python's `int()` of a CS value's text (already trimmed): an optional sign, then ASCII
/// digits with single `_` between them (`"2_500"` is 2500); `None` where `int()` raises
/// (`"0.5"`, `"2500.0"`, `"1e3"`, `""`).
fn python_int(text: &str) -> Option<f64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    let well_formed = digits.split('_').all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
    if !well_formed {
        return None;
    }
    let v: f64 = digits.replace('_', "").parse().ok()?;
    Some(if text.starts_with('-') { -v } else { v })
}

/// Read `ShareCorrections` section `sc`, child of `up`, into `imp` (see [`import_with`]).
fn read_corrections(imp: &mut DiracCfgImport, up: &CfgSection, sc: &CfgSection, v: CorrectorVariant) -> Res<()> {
    let flag = up.get("EnableSharesCorrection").or_else(|| sc.get("EnableSharesCorrection"));
    let enabled = flag.is_some_and(|f| ["y", "yes", "true", "1"].contains(&f.to_lowercase().as_str()));
    let out =
        imp.share_corrections.insert(ShareCorrections { enabled, variant: Some(v), ..ShareCorrections::default() });
    let mut wms = None;
    if let Some(start) = sc.option("ShareCorrectorsToStart") {
        let fail = |message: String| CfgError::new(start.line, start.col, Import(message));
        let types = start.list();
        if let Some(t) = types.iter().find(|t| *t != "WMSHistory") {
            return Err(fail(format!("corrector type `{t}` is not supported (expected only `WMSHistory`)")));
        }
        if !types.is_empty() {
            wms = Some(sc.section("WMSHistory").ok_or_else(|| fail("`WMSHistory` has no section".into()))?);
        }
    }
    let mut periods: Vec<&CfgOption> = sc.option("UpdateHistoryPeriod").into_iter().collect();
    for inst in wms.map_or(&[][..], |w| &w.sections) {
        let group = inst.get("Group").filter(|g| !g.is_empty()).map(String::from);
        if let Some(prev) = out.instances.iter().find(|i| i.group == group) {
            let what = group.as_deref().map_or("the groups".to_string(), |g| format!("the users of `{g}`"));
            let m = format!("`{}` corrects {what} like `{}`: DIRAC keeps one instance per group", inst.name, prev.name);
            return Err(CfgError::new(inst.line, inst.col, Import(m)));
        }
        let (factor, corr) = (inst.get_f64("MaxGlobalCorrectionFactor")?, inst.get_f64("MaxGlobalCorrection")?);
        let index = usize::from(factor.is_some()) + 2 * usize::from(corr.is_some());
        imp.global_correction_keys.push([K::Default, K::Factor, K::Correction, K::Both][index]);
        let seed_value = factor.filter(|_| v == CorrectorVariant::Seed);
        let max_global_correction = seed_value.or(corr).unwrap_or(CorrectorInstance::default().max_global_correction);
        periods.extend(inst.option("UpdateHistoryPeriod"));
        let mut slices = Vec::new();
        for s in &inst.sections {
            let (d, num) = (TimeSlice::default(), |k: &str, d: f64| s.get_f64(k).map(|v| v.unwrap_or(d)));
            let (time_span_s, weight) = (num("TimeSpan", d.time_span_s)?, num("Weight", d.weight)?);
            let max_correction = num("MaxCorrection", d.max_correction)?;
            slices.push(TimeSlice { name: s.name.clone(), time_span_s, weight, max_correction });
        }
        out.instances.push(CorrectorInstance { name: inst.name.clone(), group, max_global_correction, slices });
    }
    if let Some(first) = periods.first() {
        out.update_history_period_s = first.period()?;
        if let Some(o) = periods.iter().find(|o| o.period().ok() != Some(out.update_history_period_s)) {
            let m = format!("UpdateHistoryPeriod differs from the one at line {}: pilotsim has one", first.line);
            return Err(o.period().err().unwrap_or(CfgError::new(o.line, o.col, Import(m))));
        }
    }
    // What the scenario would refuse (a slice weight below 0, a cap below 1, no slice, …) is
    // refused here, at the option (or section) it came from.
    let instances: Vec<&CfgSection> = wms.map_or(Vec::new(), |w| w.sections.iter().collect());
    if let Some((path, message)) = crate::dirac::corrector::validate_share_corrections(out).into_iter().next() {
        let (line, col) = locate(&path, sc, &instances, periods.first().copied());
        let m = format!("{message} (the scenario's dirac.share_corrections.{path})");
        return Err(CfgError::new(line, col, Import(m)));
    }
    Ok(())
}

/// Where the value at `path` of the imported share corrections (`instances[1].slices[0].weight`)
/// was written in `ShareCorrections` section `sc`: its option, else its section.
fn locate(path: &str, sc: &CfgSection, instances: &[&CfgSection], period: Option<&CfgOption>) -> (usize, usize) {
    let at = |o: Option<&CfgOption>, s: &CfgSection| o.map_or((s.line, s.col), |o| (o.line, o.col));
    let index = |seg: &str, name: &str| seg.strip_prefix(name)?.strip_prefix('[')?.strip_suffix(']')?.parse().ok();
    let mut segs = path.split('.');
    let Some(inst) = segs.next().and_then(|s| index(s, "instances")).and_then(|i: usize| instances.get(i)) else {
        return at(period, sc);
    };
    match (segs.next(), segs.next()) {
        (Some("max_global_correction"), _) => {
            at(inst.option("MaxGlobalCorrectionFactor").or(inst.option("MaxGlobalCorrection")), inst)
        }
        (Some("group"), _) => at(inst.option("Group"), inst),
        (Some(s), field) => match index(s, "slices").and_then(|k: usize| inst.sections.get(k)) {
            Some(slice) => {
                let key = match field {
                    Some("time_span_s") => "TimeSpan",
                    Some("weight") => "Weight",
                    Some("max_correction") => "MaxCorrection",
                    _ => "",
                };
                at(slice.option(key), slice)
            }
            None => at(None, inst),
        },
        (None, _) => at(None, inst),
    }
}

/// The RON for pilotsim's scenario: `groups: [...]` then `share_corrections: (...)` (or `None`),
/// each ending with a comma. Numbers print with a decimal point or an exponent; strings use Rust
/// escapes, which RON reads back.
pub fn to_ron_fragment(import: &DiracCfgImport) -> String {
    let strs = |v: &[String]| format!("[{}]", v.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", "));
    let mut s = String::from("groups: [\n");
    for g in &import.groups {
        let (n, j, p, u) = (&g.name, g.job_share, strs(&g.properties), strs(&g.users));
        s += &format!("    (name: {n:?}, job_share: {j:?}, properties: {p}, users: {u}),\n");
    }
    s += "],\n";
    // A scenario's `share_corrections` is not optional: without the section it keeps its default.
    let Some(sc) = &import.share_corrections else {
        return s + "// no ShareCorrections section: share corrections stay off (DIRAC's default)\n";
    };
    let (e, p) = (sc.enabled, sc.update_history_period_s.as_secs_f64());
    let v = sc.variant.map_or(String::new(), |v| format!("variant: {v:?}, "));
    s += &format!("share_corrections: (enabled: {e}, {v}update_history_period_s: {p:?}, instances: [\n");
    for i in &sc.instances {
        let (n, m) = (&i.name, i.max_global_correction);
        let g = i.group.as_ref().map_or("None".into(), |g| format!("Some({g:?})"));
        s += &format!("    (name: {n:?}, group: {g}, max_global_correction: {m:?}, slices: [\n");
        for t in &i.slices {
            let (n, t, w, m) = (&t.name, t.time_span_s, t.weight, t.max_correction);
            s += &format!("        (name: {n:?}, time_span_s: {t:?}, weight: {w:?}, max_correction: {m:?}),\n");
        }
        s += "    ]),\n";
    }
    s + "]),\n"
}

#[cfg(test)]
#[path = "dirac_cfg_tests.rs"]
mod tests;
