//! Observing a run: the recorder the world calls ([`recorder`]), the summary with its
//! fairness metrics ([`summary`]), the tables' columns ([`tables`], [`columns`]), their Parquet
//! files ([`parquet`], through polars) and atomic file writes ([`write`]).

pub mod columns;
pub mod format;
pub mod gpus;
pub mod network_summary;
pub mod parquet;
pub mod points;
pub mod recorder;
pub mod summary;
pub mod summary_text;
pub mod tables;
pub mod users;
pub mod warnings;
pub mod write;

use crate::engine::SimTime;
use crate::grid::Grid;
use crate::scenario::Scenario;
use crate::workload::Job;

/// Identity of a run, recorded in every output.
#[derive(Debug, Clone, PartialEq)]
pub struct RunMeta {
    pub scenario: String,
    pub scenario_sha256: String,
    pub seed: u64,
    pub pilotsim_version: &'static str,
    /// Hash of the processed event sequence, hex.
    pub digest: String,
    pub events: u64,
    /// Wall-clock seconds of the event loop (the only non-deterministic figure).
    pub wall_seconds: f64,
    /// Simulated end time.
    pub end: SimTime,
    /// The scenario file it came from (or the embedded quickstart).
    pub origin: String,
    /// The `--set` assignments it ran with, in order.
    pub overrides: Vec<String>,
}

impl RunMeta {
    /// The run's identity as the key-value metadata of its Parquet files.
    pub fn parquet_metadata(&self) -> Vec<(String, String)> {
        vec![
            ("pilotsim.scenario".into(), self.scenario.clone()),
            ("pilotsim.scenario_sha256".into(), self.scenario_sha256.clone()),
            ("pilotsim.seed".into(), self.seed.to_string()),
            ("pilotsim.version".into(), self.pilotsim_version.to_string()),
            ("pilotsim.digest".into(), self.digest.clone()),
        ]
        .into_iter()
        .chain((!self.overrides.is_empty()).then(|| ("pilotsim.overrides".into(), self.overrides.join("\n"))))
        .collect()
    }

    /// The run as chart titles and report headings name it: `quickstart, seed 42`, and the
    /// `--set` assignments when there are any (a run with `extra_pilot_fraction=0.5` must not
    /// look like the baseline).
    pub fn label(&self) -> String {
        label(&self.scenario, self.seed, &self.overrides)
    }
}

/// `NAME, seed N[, PATH=VALUE…]`: the last part of every chart title. At most three assignments
/// are shown, each shortened to its last two path segments; the rest are counted.
pub fn label(scenario: &str, seed: u64, overrides: &[String]) -> String {
    let mut s = format!("{scenario}, seed {seed}");
    for o in overrides.iter().take(3) {
        let (path, value) = o.split_once('=').unwrap_or((o.as_str(), ""));
        let segs: Vec<&str> = path.split('.').collect();
        let short = segs[segs.len().saturating_sub(2)..].join(".");
        let value: String = value.chars().take(24).collect();
        s += &format!(", {short}={value}");
    }
    if overrides.len() > 3 {
        s += &format!(" (+{} more)", overrides.len() - 3);
    }
    s
}

/// The values of a column a WMS adds to `jobs.parquet` or `pilots.parquet`, one per row.
#[derive(Debug, Clone, PartialEq)]
pub enum ExtraValues {
    U32(Vec<Option<u32>>),
    U64(Vec<Option<u64>>),
    F64(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
    Str(Vec<Option<String>>),
    /// A string column of few distinct texts and many rows (PanDA's brokerage table): each row
    /// is an index into `texts`, so a text is kept once however many rows repeat it. Written
    /// exactly as the same `Str` column would be; columns may share their texts.
    Coded {
        texts: std::sync::Arc<[String]>,
        codes: Vec<Option<u32>>,
    },
}

/// A column a WMS adds to an output table (a DIRAC task-queue id, a pilot's kind).
#[derive(Debug, Clone, PartialEq)]
pub struct ExtraColumn {
    pub name: String,
    pub values: ExtraValues,
}

/// A table a WMS adds to the outputs (`<name>.parquet`), column by column.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// File stem: `brokerage` is written as `brokerage.parquet`.
    pub name: String,
    pub columns: Vec<ExtraColumn>,
}

/// What a finished run hands to the output writers.
pub struct RunData<'a> {
    pub meta: RunMeta,
    pub scenario: &'a Scenario,
    pub jobs: &'a [Job],
    pub grid: &'a Grid,
    pub recorder: &'a mut recorder::Recorder,
    /// The share entities each job stream counts for.
    pub entities_of_stream: &'a [recorder::JobEntities],
    /// Every job stream (`Job::stream` indexes it).
    pub streams: &'a [crate::workload::StreamInfo],
    /// The name of each WMS instance, by `ids::WmsId`.
    pub wms_names: Vec<String>,
    /// Columns the WMSs add to `jobs.parquet` and `pilots.parquet`.
    pub job_columns: Vec<ExtraColumn>,
    pub pilot_columns: Vec<ExtraColumn>,
    /// Tables of the WMSs' own (`brokerage`), each written as `<name>.parquet`.
    pub wms_tables: Vec<Table>,
    /// Each WMS's own section of `summary.json` (`"wms": {"panda": {…}}`).
    pub wms_summaries: std::collections::BTreeMap<String, serde_json::Value>,
    /// The pilot factories' sections of `summary.json` (`"factory": [...]`).
    pub factory_summaries: Vec<serde_json::Value>,
    /// The grid's links and transfers (`transfers.parquet` when any was made).
    pub network: &'a crate::grid::network::Network,
}

/// CE names and their site names, flattened in scenario order (CE index order).
pub fn ce_names(s: &Scenario) -> Vec<(&str, &str)> {
    s.sites.iter().flat_map(|site| site.ces.iter().map(move |ce| (ce.name.as_str(), site.name.as_str()))).collect()
}

/// Percentile with linear interpolation between closest ranks (numpy's default), of
/// sorted values; NaN for an empty slice.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

#[cfg(test)]
mod tests {
    use super::percentile;

    #[test]
    fn percentile_matches_numpy_linear() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 0.5), 2.5);
        assert!((percentile(&v, 0.95) - 3.85).abs() < 1e-12);
        assert_eq!(percentile(&[7.0], 0.95), 7.0);
        assert!(percentile(&[], 0.5).is_nan());
    }
}
