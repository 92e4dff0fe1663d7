//! The `expect` block of a scenario: thresholds on summary metrics that `pilotsim check`
//! verifies, written as `"metric <= value"`.

use serde::{Deserialize, Serialize};

/// Thresholds and the number of replicas they are checked over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Expectations {
    /// Replicas (seeds derived from the master seed) whose mean is compared (default 5).
    pub replicas: u32,
    /// Thresholds such as `"pilot_efficiency >= 0.8"` or `"wait_time_s.lhcb_user.p95 <= 7200"`.
    pub thresholds: Vec<String>,
}

impl Default for Expectations {
    fn default() -> Self {
        Self { replicas: 5, thresholds: Vec::new() }
    }
}

/// A comparison operator of a threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Le,
    Ge,
    Lt,
    Gt,
}

impl Op {
    /// True if `got op want` holds.
    pub fn holds(self, got: f64, want: f64) -> bool {
        match self {
            Op::Le => got <= want,
            Op::Ge => got >= want,
            Op::Lt => got < want,
            Op::Gt => got > want,
        }
    }

    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Le => "<=",
            Op::Ge => ">=",
            Op::Lt => "<",
            Op::Gt => ">",
        }
    }
}

/// A parsed threshold: a dotted metric path, an operator and a value.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    pub metric: String,
    pub op: Op,
    pub value: f64,
}

/// Parse `"metric op value"`. The metric is a dotted path of `summary.json`; its segments may
/// contain spaces (a gshare leaf's name) but none may be empty.
pub fn parse_threshold(text: &str) -> Result<Threshold, String> {
    for (token, op) in [("<=", Op::Le), (">=", Op::Ge), ("<", Op::Lt), (">", Op::Gt)] {
        if let Some((lhs, rhs)) = text.split_once(token) {
            let metric = lhs.trim();
            // Inner spaces are part of the path: gshare leaves are named "MC Simulation Full".
            if metric.is_empty() || metric.split('.').any(|seg| seg.trim().is_empty()) {
                return Err(format!("expected `metric {token} value`, got {text:?}"));
            }
            let value: f64 =
                rhs.trim().parse().map_err(|_| format!("expected a number after `{token}` in {text:?}"))?;
            return Ok(Threshold { metric: metric.to_string(), op, value });
        }
    }
    Err(format!("expected `metric <= value` or `metric >= value`, got {text:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_thresholds() {
        let t = parse_threshold(" pilot_efficiency >= 0.8").unwrap();
        assert_eq!((t.metric.as_str(), t.op, t.value), ("pilot_efficiency", Op::Ge, 0.8));
        let t = parse_threshold("wait_time_s.lhcb_user.p95<=7200").unwrap();
        assert_eq!(t.op, Op::Le);
        assert!(parse_threshold("x = 3").is_err());
        let t = parse_threshold("wait_time_s.MC Simulation Full.p95 <= 3").unwrap();
        assert_eq!(t.metric, "wait_time_s.MC Simulation Full.p95");
        assert!(parse_threshold(" <= 3").is_err());
        assert!(parse_threshold("a..b <= 3").is_err(), "an empty segment");
        assert!(parse_threshold("x <= three").is_err());
        assert!(Op::Le.holds(1.0, 1.0) && !Op::Lt.holds(1.0, 1.0));
    }
}
