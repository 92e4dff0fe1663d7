//! CRIC's `fairsharepolicy` and the zero-share check (seed 004, "Zero Share": *type=evgen:100%,
//! type=simul:100%,type=any:0%* lets only evgen and simul jobs in; reference §2 filter 7,
//! `AtlasBrokerUtils.hasZeroShare` L365-472, `ProcessGroups.getProcessGroup`).
//!
//! The string is parsed once ([`FairsharePolicy::parse`]) and evaluated every cycle
//! ([`FairsharePolicy::evaluate`]), with the code's rules:
//!
//! * sub-policies are split on `,`, fields on `:`; the share is the **last** field (a term
//!   without `:` is its own share); fields starting `type=`, `group=`, `gshare=` give a pattern
//!   (text after the last `=`), a field starting `priority` gives a Python comparison (the field
//!   with every `priority` removed, evaluated as `<currentPriority><rest>`); later fields of one
//!   kind replace earlier ones, other fields are ignored;
//! * `type` is matched against the task's **process group** (`evgen`, `simul`, `reprocessing`,
//!   `test`, `mcore`, `group`, `deriv`, `pile`, `merge`, else `others`), `group` against
//!   `workingGroup` (missing → `""`), `gshare` against the gshare (only when the task has one);
//!   `any` matches everything; a pattern is `re.search("^" + p.replace("*", ".*") + "$")`;
//! * the first sub-policy whose conditions all hold decides: share `"0"` or `"0%"` → zero share
//!   (skip), anything else → accept; no matching sub-policy → accept; tasks of process group
//!   `test` are always accepted; merging jobs ignore priority conditions (`ignore_priority`);
//! * errors: an invalid regular expression aborts the whole check when it is *reached* (the
//!   code's `try` returns "no zero share"); an unparsable priority expression is logged and the
//!   sub-policy then applies as if the priority held (the code's inner `except` falls through).
//!
//! Parsing never fails: every oddity becomes a [`FairshareWarning`] and the policy keeps the
//! meaning PanDA gives it (e.g. an empty sub-policy from a trailing comma matches every task and
//! accepts it). Deviations of this Rust reading from Python's: patterns use the `regex` crate
//! (constructs it lacks — look-around, back-references — are invalid here, fine in Python) and
//! priority expressions accept chained comparisons of numbers only (other valid Python, e.g.
//! `priority>1 and 0`, is treated as unparsable).

use std::fmt;

use regex::Regex;

/// The process groups of `ProcessGroups.processGroups`, `(group, processing types)`; the first
/// entry is the default group.
pub const PROCESS_GROUPS: &[(&str, &[&str])] = &[
    ("others", &[]),
    ("evgen", &["evgen"]),
    ("simul", &["simul"]),
    ("reprocessing", &["reprocessing"]),
    ("test", &["prod_test", "validation", "ptest", "rc_test", "rc_test2", "rc_alrb"]),
    ("mcore", &["mcore"]),
    ("group", &["group"]),
    ("deriv", &["deriv"]),
    ("pile", &["pile"]),
    ("merge", &["merge"]),
];

/// `ProcessGroups.getProcessGroup(processingType)`: the group listing the type, else `others`.
pub fn process_group(processing_type: &str) -> &'static str {
    PROCESS_GROUPS.iter().find(|(_, types)| types.contains(&processing_type)).map_or("others", |(g, _)| g)
}

/// A `type=`/`group=`/`gshare=` value.
#[derive(Debug, Clone)]
pub enum NamePattern {
    /// `any`: no condition.
    Any,
    /// `^value$` with `*` → `.*`.
    Regex { source: String, re: Regex },
    /// Not a valid expression: reaching it aborts the check (→ accept).
    Invalid { source: String, error: String },
}

impl NamePattern {
    fn parse(value: &str) -> Self {
        if value == "any" {
            return NamePattern::Any;
        }
        let body = if value.contains('*') { value.replace('*', ".*") } else { value.to_string() };
        match Regex::new(&format!("^{body}$")) {
            Ok(re) => NamePattern::Regex { source: value.to_string(), re },
            Err(e) => NamePattern::Invalid { source: value.to_string(), error: e.to_string() },
        }
    }
}

/// A comparison operator of a priority condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Gt,
    Ge,
    Lt,
    Le,
    Eq,
    Ne,
}

impl CmpOp {
    fn holds(self, a: f64, b: f64) -> bool {
        match self {
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
        }
    }
}

/// The `priority…` field, as Python would evaluate `<currentPriority><expr>`.
#[derive(Debug, Clone, PartialEq)]
pub enum PriorityCondition {
    /// Empty expression: `tmpStat = <currentPriority>`, true unless the priority is 0.
    Truthy,
    /// `p op1 a op2 b …` — Python's chained comparison `(p op1 a) and (a op2 b) …`.
    Chain(Vec<(CmpOp, f64)>),
    /// Not parsable: PanDA logs an error and the sub-policy applies regardless of priority.
    Invalid(String),
}

impl PriorityCondition {
    fn parse(expr: &str) -> Self {
        let mut rest = expr.trim();
        if rest.is_empty() {
            return PriorityCondition::Truthy;
        }
        let mut chain = Vec::new();
        while !rest.is_empty() {
            let ops = [
                ("==", CmpOp::Eq),
                ("!=", CmpOp::Ne),
                (">=", CmpOp::Ge),
                ("<=", CmpOp::Le),
                (">", CmpOp::Gt),
                ("<", CmpOp::Lt),
            ];
            let Some(&(tok, op)) = ops.iter().find(|(t, _)| rest.starts_with(t)) else {
                return PriorityCondition::Invalid(expr.to_string());
            };
            rest = rest[tok.len()..].trim_start();
            let end = rest.find(['=', '!', '<', '>']).unwrap_or(rest.len());
            let Some(n) = python_number(rest[..end].trim()) else {
                return PriorityCondition::Invalid(expr.to_string());
            };
            chain.push((op, n));
            rest = rest[end..].trim_start();
        }
        PriorityCondition::Chain(chain)
    }

    /// `Some(holds)`, or `None` when the expression cannot be evaluated.
    pub fn holds(&self, priority: i64) -> Option<bool> {
        match self {
            PriorityCondition::Truthy => Some(priority != 0),
            PriorityCondition::Invalid(_) => None,
            PriorityCondition::Chain(chain) => {
                let mut left = priority as f64;
                for &(op, right) in chain {
                    if !op.holds(left, right) {
                        return Some(false);
                    }
                    left = right;
                }
                Some(true)
            }
        }
    }
}

/// A Python int or float literal with an optional sign (`500`, `-1`, `5e2`, `1_000`, `.5`).
fn python_number(s: &str) -> Option<f64> {
    let (sign, digits) = match s.strip_prefix('-') {
        Some(d) => (-1.0, d.trim_start()),
        None => (1.0, s.strip_prefix('+').unwrap_or(s).trim_start()),
    };
    let ok_chars = digits.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '_' | '+' | '-'));
    let starts_ok = digits.starts_with(|c: char| c.is_ascii_digit() || c == '.');
    if !ok_chars || !starts_ok || digits.contains("__") || digits.ends_with('_') {
        return None;
    }
    // Python 3 rejects leading zeros in non-zero integer literals ("0500").
    let int_like = digits.chars().all(|c| c.is_ascii_digit() || c == '_');
    if int_like && digits.len() > 1 && digits.starts_with('0') && digits.chars().any(|c| c != '0' && c != '_') {
        return None;
    }
    digits.replace('_', "").parse::<f64>().ok().filter(|v| v.is_finite()).map(|v| sign * v)
}

/// One comma-separated sub-policy.
#[derive(Debug, Clone)]
pub struct ShareTerm {
    /// The sub-policy text as written.
    pub raw: String,
    pub processing_type: Option<NamePattern>,
    pub working_group: Option<NamePattern>,
    pub gshare: Option<NamePattern>,
    pub priority: Option<PriorityCondition>,
    /// The last `:` field; `0` and `0%` mean zero share.
    pub share: String,
}

impl ShareTerm {
    /// Whether the share is zero (`tmp_fair_share in ["0", "0%"]`, compared verbatim).
    pub fn is_zero(&self) -> bool {
        self.share == "0" || self.share == "0%"
    }
}

/// Something PanDA would ignore or trip over, found while parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FairshareWarning {
    /// Index of the sub-policy.
    pub term: usize,
    pub message: String,
}

impl fmt::Display for FairshareWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fairsharepolicy term {}: {}", self.term, self.message)
    }
}

/// A parsed `fairsharepolicy`.
#[derive(Debug, Clone, Default)]
pub struct FairsharePolicy {
    /// The string as CRIC gives it.
    pub raw: String,
    /// Empty when `raw` is empty (no policy: every task accepted).
    pub terms: Vec<ShareTerm>,
}

/// The task attributes the zero-share check reads.
#[derive(Debug, Clone, Copy)]
pub struct ShareTask<'a> {
    /// `taskSpec.processingType` (mapped to its process group).
    pub processing_type: &'a str,
    /// `taskSpec.workingGroup`.
    pub working_group: Option<&'a str>,
    /// `taskSpec.gshare`.
    pub gshare: Option<&'a str>,
    /// `taskSpec.currentPriority`.
    pub current_priority: i64,
    /// `inputChunk.isMerging`: priority conditions are ignored.
    pub is_merging: bool,
}

/// How the check ended (the reason behind [`FairsharePolicy::has_zero_share`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShareDecision {
    /// Empty policy.
    NoPolicy,
    /// Process group `test`: never suppressed.
    TestTask,
    /// Sub-policy `term` matched; `zero` = its share is 0.
    Matched { term: usize, zero: bool },
    /// No sub-policy matched.
    NoMatch,
    /// Sub-policy `term` has an invalid pattern and was reached: PanDA's `try` gives up → accept.
    Aborted { term: usize },
}

impl FairsharePolicy {
    /// Parses a CRIC `fairsharepolicy`; never fails (see the module doc for what is warned).
    pub fn parse(raw: &str) -> (Self, Vec<FairshareWarning>) {
        let mut warnings = Vec::new();
        if raw.is_empty() {
            return (Self::default(), warnings);
        }
        let mut terms = Vec::new();
        for (i, policy) in raw.split(',').enumerate() {
            let mut warn = |m: String| warnings.push(FairshareWarning { term: i, message: m });
            let fields: Vec<&str> = policy.split(':').collect();
            let share = fields.last().copied().unwrap_or("").to_string();
            let (mut ptype, mut group, mut gshare, mut prio) = (None, None, None, None);
            for (j, field) in fields.iter().enumerate() {
                let last_value = || field.rsplit('=').next().unwrap_or("");
                if field.starts_with("type=") {
                    ptype = Some(NamePattern::parse(last_value()));
                } else if field.starts_with("group=") {
                    group = Some(NamePattern::parse(last_value()));
                } else if field.starts_with("gshare=") {
                    gshare = Some(NamePattern::parse(last_value()));
                } else if field.starts_with("priority") {
                    let cond = PriorityCondition::parse(&field.replace("priority", ""));
                    if let PriorityCondition::Invalid(e) = &cond {
                        warn(format!(
                            "priority expression '{e}' cannot be evaluated: PanDA logs an error and applies the share regardless of priority"
                        ));
                    }
                    prio = Some(cond);
                } else if j + 1 < fields.len() {
                    warn(format!("field '{field}' is ignored"));
                }
            }
            for p in [&ptype, &group, &gshare].into_iter().flatten() {
                if let NamePattern::Invalid { source, error } = p {
                    warn(format!(
                        "pattern '{source}' is invalid ({error}): reaching it ends the check with no zero share"
                    ));
                }
            }
            if policy.is_empty() {
                warn("empty sub-policy: it matches every task and accepts it".to_string());
            } else if fields.len() == 1 {
                warn(format!("no ':' in '{policy}': the whole text is the share, never zero"));
            }
            terms.push(ShareTerm {
                raw: policy.to_string(),
                processing_type: ptype,
                working_group: group,
                gshare,
                priority: prio,
                share,
            });
        }
        (Self { raw: raw.to_string(), terms }, warnings)
    }

    /// The check of `hasZeroShare`, in the code's order; no allocation.
    pub fn evaluate(&self, task: &ShareTask<'_>) -> ShareDecision {
        if self.terms.is_empty() {
            return ShareDecision::NoPolicy;
        }
        let group = process_group(task.processing_type);
        if group == "test" {
            return ShareDecision::TestTask;
        }
        for (i, term) in self.terms.iter().enumerate() {
            let checks = [
                (&term.processing_type, Some(group)),
                (&term.working_group, Some(task.working_group.unwrap_or(""))),
                (&term.gshare, task.gshare),
            ];
            let mut matched = true;
            for (pattern, value) in checks {
                let (Some(pattern), Some(value)) = (pattern, value) else { continue };
                match pattern {
                    NamePattern::Any => {}
                    NamePattern::Invalid { .. } => return ShareDecision::Aborted { term: i },
                    NamePattern::Regex { re, .. } => {
                        if !re.is_match(value) {
                            matched = false;
                            break;
                        }
                    }
                }
            }
            if !matched {
                continue;
            }
            if let (Some(cond), false) = (&term.priority, task.is_merging) {
                if cond.holds(task.current_priority) == Some(false) {
                    continue;
                }
            }
            return ShareDecision::Matched { term: i, zero: term.is_zero() };
        }
        ShareDecision::NoMatch
    }

    /// `hasZeroShare`: true = the PQ must be skipped for this task.
    pub fn has_zero_share(&self, task: &ShareTask<'_>) -> bool {
        matches!(self.evaluate(task), ShareDecision::Matched { zero: true, .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn task(ptype: &str, prio: i64) -> ShareTask<'_> {
        ShareTask {
            processing_type: ptype,
            working_group: None,
            gshare: None,
            current_priority: prio,
            is_merging: false,
        }
    }

    fn zero(policy: &str, t: &ShareTask<'_>) -> bool {
        FairsharePolicy::parse(policy).0.has_zero_share(t)
    }

    /// Seed 004: `type=evgen:100%,type=simul:100%,type=any:0%` — only evgen and simul jobs.
    #[test]
    fn seed_example_only_evgen_and_simul() {
        let p = "type=evgen:100%,type=simul:100%,type=any:0%";
        let (policy, warnings) = FairsharePolicy::parse(p);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(policy.terms.len(), 3);
        assert!(!policy.has_zero_share(&task("evgen", 500)));
        assert!(!policy.has_zero_share(&task("simul", 500)));
        for other in ["pile", "reprocessing", "deriv", "merge", "mcore", "fancy_new_type"] {
            assert!(policy.has_zero_share(&task(other, 500)), "{other}");
        }
        assert_eq!(policy.evaluate(&task("pile", 1)), ShareDecision::Matched { term: 2, zero: true });
        assert_eq!(policy.evaluate(&task("simul", 1)), ShareDecision::Matched { term: 1, zero: false });
        // Process group `test` is never suppressed.
        assert_eq!(policy.evaluate(&task("validation", 1)), ShareDecision::TestTask);
        assert_eq!(policy.evaluate(&task("rc_alrb", 1)), ShareDecision::TestTask);
    }

    /// Reference §9: `priority>500:0,type=simul:100%,type=any:0%` rejects simul@600, accepts
    /// simul@400 (computed with the real `hasZeroShare`).
    #[test]
    fn reference_zero_share_vector() {
        let p = "priority>500:0,type=simul:100%,type=any:0%";
        assert!(zero(p, &task("simul", 600)));
        assert!(!zero(p, &task("simul", 400)));
        assert!(!zero(p, &task("simul", 500)), "strict >");
        assert!(zero(p, &task("evgen", 400)), "falls to type=any:0%");
        // Merging ignores the priority term, which then matches everyone → zero.
        let merge = ShareTask { is_merging: true, ..task("simul", 400) };
        assert!(zero(p, &merge));
        // Seed example form `priority>500:0` alone.
        assert!(zero("priority>500:0", &task("evgen", 501)));
        assert!(!zero("priority>500:0", &task("evgen", 500)));
    }

    #[test]
    fn priority_expressions_as_python_evaluates_them() {
        let cases = [
            ("priority>=500:0", 500, true),
            ("priority<=500:0", 501, false),
            ("priority==5:0", 5, true),
            ("priority!=5:0", 5, false),
            ("priority<300:0%", 299, true),
            // Python's chain `p > 400 < 800` is `p > 400 and 400 < 800`: not a range.
            ("priority>400<800:0", 600, true),
            ("priority>400<800:0", 900, true),
            ("priority<800>400:0", 900, false),
            ("priority > 5e2:0", 600, true),
            ("priority>-1:0", 0, true),
            ("priority:0", 7, true), // `tmpStat = 7` is truthy
            ("priority:0", 0, false),
        ];
        for (p, prio, z) in cases {
            assert_eq!(zero(p, &task("evgen", prio)), z, "{p} @ {prio}");
        }
        // Unparsable → logged, the share applies regardless (inner except falls through).
        let (policy, w) = FairsharePolicy::parse("priority=500:0,type=any:100%");
        assert_eq!(w.len(), 1);
        assert!(policy.has_zero_share(&task("evgen", 1)));
        assert_eq!(python_number("0500"), None);
        assert_eq!(python_number("1_000"), Some(1000.0));
        assert_eq!(python_number(".5"), Some(0.5));
        assert_eq!(python_number("abc"), None);
    }

    #[test]
    fn group_gshare_wildcards_and_order() {
        let p = "gshare=Express:100%,gshare=any:0%";
        let mut t = task("evgen", 1);
        t.gshare = Some("Express");
        assert!(!zero(p, &t));
        t.gshare = Some("MC Simulation");
        assert!(zero(p, &t));
        // gshare terms are skipped for a task without gshare: `gshare=Express` then matches.
        t.gshare = None;
        assert!(!zero(p, &t));
        // `*` → `.*`, anchored at both ends; `group` reads the working group ("" if none).
        let g = "group=AP_*:0%,type=any:100%";
        let mut t = task("evgen", 1);
        assert!(!zero(g, &t));
        t.working_group = Some("AP_Higgs");
        assert!(zero(g, &t));
        t.working_group = Some("XAP_Higgs");
        assert!(!zero(g, &t));
        // Alternation keeps Python's precedence inside ^…$.
        assert!(zero("group=(AP_Higgs|AP_Susy):0%", &ShareTask { working_group: Some("AP_Susy"), ..task("x", 1) }));
        // First match decides even when a later term would say zero.
        assert!(!zero("type=any:50%,type=evgen:0%", &task("evgen", 1)));
    }

    #[test]
    fn malformed_policies_follow_the_code() {
        // Invalid regex reached → check aborted → no zero share, even though a later term says 0.
        let (p, w) = FairsharePolicy::parse("type=(evgen:0%,type=any:0%");
        assert_eq!(w.len(), 1);
        assert_eq!(p.evaluate(&task("simul", 1)), ShareDecision::Aborted { term: 0 });
        assert!(!p.has_zero_share(&task("simul", 1)));
        // Not reached when an earlier term decides.
        assert!(zero("type=simul:0%,type=(:0%", &task("simul", 1)));
        // Trailing comma: an empty term that matches everything and accepts.
        let (p, w) = FairsharePolicy::parse("type=evgen:100%,");
        assert_eq!(w.len(), 1);
        assert_eq!(p.evaluate(&task("simul", 1)), ShareDecision::Matched { term: 1, zero: false });
        // No ':' → the share is the whole text, never zero; unknown fields are ignored.
        assert!(!zero("type=any", &task("simul", 1)));
        let (p, w) = FairsharePolicy::parse("cloud=US:type=any:0%");
        assert_eq!(w.len(), 1);
        assert!(p.has_zero_share(&task("simul", 1)));
        // `0` and `0%` only; `0.0` or ` 0%` are not zero.
        assert!(!zero("type=any:0.0", &task("simul", 1)));
        assert!(!zero("type=any: 0%", &task("simul", 1)));
        // Empty string = no policy.
        assert_eq!(FairsharePolicy::parse("").0.evaluate(&task("simul", 1)), ShareDecision::NoPolicy);
        // Value after the last '=' (type=a=simul → simul).
        assert!(zero("type=a=simul:0", &task("simul", 1)));
    }

    proptest! {
        #[test]
        fn no_policy_string_panics(s in ".{0,80}", ptype in "[a-z_]{0,8}", prio in any::<i64>(), merging in any::<bool>()) {
            let (p, _) = FairsharePolicy::parse(&s);
            let t = ShareTask { processing_type: &ptype, working_group: Some("AP_x"), gshare: Some("G"), current_priority: prio, is_merging: merging };
            let _ = p.has_zero_share(&t);
        }

        #[test]
        fn no_structured_policy_panics(
            s in "((type|group|gshare)=[a-z*()|\\[\\]\\\\.]{0,6}|priority[<>=! 0-9.e_+-]{0,8}|[0-9]{0,3}%?)(:[a-z0-9%<>=*]{0,5}){0,3}(,[a-z=:0-9%*()]{0,10}){0,3}",
            prio in -2000i64..3000,
        ) {
            let (p, w) = FairsharePolicy::parse(&s);
            prop_assert!(w.iter().all(|w| w.term < p.terms.len()));
            let _ = p.evaluate(&task("simul", prio));
        }
    }
}
