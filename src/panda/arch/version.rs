//! Version constraints of GPU requirements: `compare_version_string` (reference §5,
//! `pandaserver/srvcore/hardware_matching.py` L17-57) over PEP 440 versions as
//! `packaging.version` parses and orders them.
//!
//! PanDA compares `vram` (MB, an integer printed with `str`), `version` (CUDA toolkit) and
//! `driver_version` the same way: the requirement is `<op><version>` with `op` the leading run of
//! `= > < !` characters (`=` is read as `==`), both sides go through `version.parse`, and an
//! unknown operator, a missing operator or an unparsable side gives `None`, which every caller
//! reads as "not satisfied". So the comparison is on version tuples, not numbers:
//! `575.57.08 >= 575.0` (release `(575, 57, 8)` against `(575,)`), `12.0 == 12`, and
//! `40960 >= 40960.0`.

use std::cmp::Ordering;
use std::fmt;

/// A comparison operator of a requirement (`hardware_matching.compare_version_string`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Ge,
    Le,
    Gt,
    Lt,
}

impl Op {
    /// PanDA's operator strings; `=` is `==` (seed 004: "`=` is treated as `==`").
    fn from_str(s: &str) -> Option<Op> {
        Some(match s {
            "==" | "=" => Op::Eq,
            "!=" => Op::Ne,
            ">=" => Op::Ge,
            "<=" => Op::Le,
            ">" => Op::Gt,
            "<" => Op::Lt,
            _ => return None,
        })
    }

    fn holds(self, o: Ordering) -> bool {
        match self {
            Op::Eq => o == Ordering::Equal,
            Op::Ne => o != Ordering::Equal,
            Op::Ge => o != Ordering::Less,
            Op::Le => o != Ordering::Greater,
            Op::Gt => o == Ordering::Greater,
            Op::Lt => o == Ordering::Less,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Ge => ">=",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Lt => "<",
        })
    }
}

/// One part of a local version label (`+ubuntu.1`): numbers sort above strings.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LocalPart {
    Str(String),
    Num(u64),
}

impl Ord for LocalPart {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (LocalPart::Num(a), LocalPart::Num(b)) => a.cmp(b),
            (LocalPart::Str(a), LocalPart::Str(b)) => a.cmp(b),
            (LocalPart::Str(_), LocalPart::Num(_)) => Ordering::Less,
            (LocalPart::Num(_), LocalPart::Str(_)) => Ordering::Greater,
        }
    }
}

impl PartialOrd for LocalPart {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A PEP 440 version, ordered as `packaging.version.Version` (`_cmpkey`): epoch, release
/// without trailing zeros, pre-release (a < b < rc; a dev release without pre/post sorts
/// before every pre-release), post-release, dev-release, local label. Numbers above `u64::MAX`
/// are treated as unparsable (Python would accept them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    epoch: u64,
    release: Vec<u64>,
    /// `(0 = a | 1 = b | 2 = rc, n)`.
    pre: Option<(u8, u64)>,
    post: Option<u64>,
    dev: Option<u64>,
    local: Option<Vec<LocalPart>>,
}

/// Position in `-inf < value < +inf` keys of `_cmpkey`.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Key<T> {
    NegInf,
    Val(T),
    Inf,
}

impl Version {
    /// A bare integer release, as `version.parse(str(n))` gives for a VRAM value.
    pub fn from_u64(n: u64) -> Version {
        Version { epoch: 0, release: vec![n], pre: None, post: None, dev: None, local: None }
    }

    /// `packaging.version.parse`: `None` where it raises `InvalidVersion`. Surrounding
    /// whitespace is ignored, letters are case-insensitive, a leading `v` is allowed.
    pub fn parse(s: &str) -> Option<Version> {
        let lower = s.trim().to_ascii_lowercase();
        let mut c = Cursor { s: lower.as_bytes(), i: 0 };
        c.eat(b'v');
        let mut epoch = 0;
        let save = c.i;
        if let Some(n) = c.number() {
            if c.eat(b'!') {
                epoch = n;
            } else {
                c.i = save;
            }
        } else if c.i != save {
            return None; // digits that overflow u64
        }
        let mut release = vec![c.number()?];
        loop {
            let save = c.i;
            if c.eat(b'.') {
                if let Some(n) = c.number() {
                    release.push(n);
                    continue;
                }
            }
            c.i = save;
            break;
        }
        let pre = c.pre();
        let post = c.post();
        let dev = c.dev();
        let local = if c.eat(b'+') { Some(c.local()?) } else { None };
        if c.i != c.s.len() {
            return None;
        }
        Some(Version { epoch, release, pre, post, dev, local })
    }

    fn trimmed_release(&self) -> &[u64] {
        let end = self.release.iter().rposition(|&x| x != 0).map_or(0, |i| i + 1);
        self.release.get(..end).unwrap_or(&[])
    }

    fn pre_key(&self) -> Key<(u8, u64)> {
        match (self.pre, self.post, self.dev) {
            (None, None, Some(_)) => Key::NegInf,
            (None, _, _) => Key::Inf,
            (Some(p), _, _) => Key::Val(p),
        }
    }
}

impl Ord for Version {
    fn cmp(&self, o: &Self) -> Ordering {
        let post = |v: &Version| v.post.map_or(Key::NegInf, Key::Val);
        let dev = |v: &Version| v.dev.map_or(Key::Inf, Key::Val);
        self.epoch
            .cmp(&o.epoch)
            .then_with(|| self.trimmed_release().cmp(o.trimmed_release()))
            .then_with(|| self.pre_key().cmp(&o.pre_key()))
            .then_with(|| post(self).cmp(&post(o)))
            .then_with(|| dev(self).cmp(&dev(o)))
            .then_with(|| match (&self.local, &o.local) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Less,
                (Some(_), None) => Ordering::Greater,
                (Some(a), Some(b)) => a.cmp(b),
            })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A byte cursor over the lower-cased version text.
struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn eat_word(&mut self, w: &str) -> bool {
        if self.s.get(self.i..).is_some_and(|rest| rest.starts_with(w.as_bytes())) {
            self.i += w.len();
            true
        } else {
            false
        }
    }

    fn sep(&mut self) -> bool {
        matches!(self.peek(), Some(b'-' | b'_' | b'.')) && {
            self.i += 1;
            true
        }
    }

    /// Digits as a number; `None` (cursor moved) when they overflow, `None` (cursor kept)
    /// when there are none.
    fn number(&mut self) -> Option<u64> {
        let start = self.i;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.i += 1;
        }
        if self.i == start {
            return None;
        }
        std::str::from_utf8(self.s.get(start..self.i)?).ok()?.parse().ok()
    }

    /// `[-_.]?(alpha|a|beta|b|preview|pre|c|rc)[-_.]?[0-9]*`
    fn pre(&mut self) -> Option<(u8, u64)> {
        let save = self.i;
        self.sep();
        const LABELS: [(&str, u8); 8] =
            [("alpha", 0), ("beta", 1), ("preview", 2), ("pre", 2), ("rc", 2), ("a", 0), ("b", 1), ("c", 2)];
        let Some(&(_, letter)) = LABELS.iter().find(|(w, _)| self.eat_word(w)) else {
            self.i = save;
            return None;
        };
        self.sep();
        Some((letter, self.number().unwrap_or(0)))
    }

    /// `-N` or `[-_.]?(post|rev|r)[-_.]?[0-9]*`
    fn post(&mut self) -> Option<u64> {
        let save = self.i;
        if self.eat(b'-') {
            if let Some(n) = self.number() {
                return Some(n);
            }
            self.i = save;
        }
        self.sep();
        if !(self.eat_word("post") || self.eat_word("rev") || self.eat_word("r")) {
            self.i = save;
            return None;
        }
        self.sep();
        Some(self.number().unwrap_or(0))
    }

    /// `[-_.]?dev[-_.]?[0-9]*`
    fn dev(&mut self) -> Option<u64> {
        let save = self.i;
        self.sep();
        if !self.eat_word("dev") {
            self.i = save;
            return None;
        }
        self.sep();
        Some(self.number().unwrap_or(0))
    }

    /// `[a-z0-9]+([-_.][a-z0-9]+)*`
    fn local(&mut self) -> Option<Vec<LocalPart>> {
        let mut parts = Vec::new();
        loop {
            let start = self.i;
            while self.peek().is_some_and(|b| b.is_ascii_alphanumeric()) {
                self.i += 1;
            }
            let part = std::str::from_utf8(self.s.get(start..self.i)?).ok()?;
            if part.is_empty() {
                return None;
            }
            parts.push(if part.bytes().all(|b| b.is_ascii_digit()) {
                LocalPart::Num(part.parse().ok()?)
            } else {
                LocalPart::Str(part.to_string())
            });
            if !self.sep() {
                return Some(parts);
            }
        }
    }
}

/// A requirement such as `>=12.0`, parsed once. `op`/`version` are `None` when PanDA's
/// `compare_version_string` would return `None` for every value (no operator, unknown operator
/// such as `=>`, unparsable version): such a requirement is never satisfied.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    /// The requirement as given, e.g. `>=40960` (shorthand `=` already written as `==`).
    pub raw: String,
    parsed: Option<(Op, Version)>,
}

impl Constraint {
    /// Parse as `compare_version_string` reads its second argument: `re.match(r"([=><!]+)(.+)")`,
    /// the operator stripped, `=` → `==`, the rest stripped and parsed.
    pub fn parse(raw: &str) -> Constraint {
        let parsed = split_op(raw).and_then(|(op, rest)| Some((Op::from_str(op)?, Version::parse(rest)?)));
        Constraint { raw: raw.to_string(), parsed }
    }

    /// Whether PanDA can ever evaluate it (a warning for the operator when not).
    pub fn is_valid(&self) -> bool {
        self.parsed.is_some()
    }

    /// `compare_version_string(value, raw)` read as a boolean (`None` → false).
    pub fn holds_for(&self, value: &Version) -> bool {
        self.parsed.as_ref().is_some_and(|(op, v)| op.holds(value.cmp(v)))
    }

    /// For an integer value (VRAM in MB): `version.parse(str(n))`.
    pub fn holds_for_u64(&self, n: u64) -> bool {
        self.holds_for(&Version::from_u64(n))
    }
}

impl fmt::Display for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

/// `re.match(r"([=><!]+)(.+)", s)`: the operator run and the rest up to the first newline;
/// `None` when there is no operator or nothing after it (backtracking into the operator run
/// would leave an operator character as the version, which never parses).
fn split_op(s: &str) -> Option<(&str, &str)> {
    let n = s.find(|c: char| !matches!(c, '=' | '>' | '<' | '!')).unwrap_or(s.len());
    if n == 0 {
        return None;
    }
    let (op, rest) = s.split_at(n);
    let rest = rest.split('\n').next().unwrap_or("");
    if rest.is_empty() { None } else { Some((op, rest)) }
}

/// `hardware_matching.compare_version_string(version_string, comparison_string)`: `Some(bool)`
/// or `None` for an invalid comparison (no/unknown operator, unparsable version).
pub fn compare_version_string(version: &str, comparison: &str) -> Option<bool> {
    let (op, rest) = split_op(comparison)?;
    let op = Op::from_str(op)?;
    let (a, b) = (Version::parse(version)?, Version::parse(rest)?);
    Some(op.holds(a.cmp(&b)))
}
