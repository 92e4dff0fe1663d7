//! The `points.json` schema of a sweep: one entry per point with the replica statistics of
//! every metric. Written by `sweep`, read by `report`; defined once here, below both.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One varied parameter and its values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vary {
    pub path: String,
    /// The SPEC as given.
    pub spec: String,
    pub values: Vec<Value>,
}

/// A metric at one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointStat {
    pub mean: f64,
    pub std: f64,
    pub ci95: Option<f64>,
    pub n: u32,
}

/// One point of `points.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointSummary {
    pub index: usize,
    pub values: BTreeMap<String, Value>,
    pub metrics: BTreeMap<String, PointStat>,
}

/// `points.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Points {
    pub scenario: String,
    pub scenario_sha256: String,
    pub pilotsim_version: String,
    pub replicas: u32,
    pub vary: Vec<Vary>,
    pub points: Vec<PointSummary>,
}

/// `tune.json`: what `tune` looked for and every value it tried. Written by `tune`, read by
/// `report`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneFile {
    pub scenario: String,
    /// The tuned field's path.
    pub param: String,
    pub low: f64,
    pub high: f64,
    /// `minimize` or `maximize`.
    pub goal: String,
    /// A metric path, or the parameter itself.
    pub objective: String,
    /// Each constraint as written (`pilot_efficiency >= 0.8`).
    pub constraints: Vec<String>,
    /// The metrics of each value tried: the objective (unless it is the parameter) and the
    /// constrained ones, in that order.
    pub metrics: Vec<String>,
    /// The value chosen and the bracket the optimum lies in; none when no value is feasible.
    pub chosen: Option<f64>,
    pub bracket: Option<(f64, f64)>,
    pub tried: Vec<TunePoint>,
}

/// One value `tune` tried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TunePoint {
    pub round: usize,
    pub value: f64,
    pub feasible: bool,
    /// [`TuneFile::metrics`]' statistics, by name.
    pub metrics: BTreeMap<String, PointStat>,
}

/// The metrics charted for every sweep: efficiency, fairness, and each group's wait p95.
pub fn key_metrics(p: &Points) -> Vec<String> {
    let mut out: Vec<String> = ["pilot_efficiency", "max_share_deviation", "jain_index"].map(String::from).to_vec();
    let names: BTreeSet<&String> = p.points.iter().flat_map(|x| x.metrics.keys()).collect();
    out.extend(names.into_iter().filter(|k| k.starts_with("wait_time_s.") && k.ends_with(".p95")).cloned());
    out
}
