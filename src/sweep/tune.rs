//! `pilotsim tune`: find the value of one parameter that optimises an objective subject to
//! constraints, on noisy simulation output.
//!
//! Search: round 1 sweeps `steps` evenly spaced values over `[low, high]` with `replicas`
//! replicas each; every later round sweeps `steps` new values strictly inside the bracket
//! around the best point so far (its nearest neighbours among all values tried). Noise is handled by
//! replicas and by judging constraints conservatively on the 95 % confidence interval: a
//! point is feasible only if `mean + ci95 ≤ X` for `metric <= X` (and `mean − ci95 ≥ X` for
//! `>=`). The objective is a metric's mean, or the parameter itself (`--minimize PATH` gives
//! the smallest feasible value, e.g. the smallest `extra_pilot_fraction` that keeps waiting
//! times down). Every round is a sweep in `OUT/round-N`, so tuning resumes like sweeps do.

use std::path::Path;

use anyhow::{Result, bail};
use serde_json::Value;

use super::outputs::{PointStat, PointSummary};
use super::plan::Vary;
use super::{SweepOptions, sweep};
use crate::scenario::Loaded;
use crate::scenario::expect::{Op, Threshold};

/// Minimise or maximise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Goal {
    Minimize,
    Maximize,
}

/// What to tune.
#[derive(Debug, Clone)]
pub struct TuneSpec {
    /// Scenario name (for titles).
    pub scenario: String,
    pub param: String,
    pub low: f64,
    pub high: f64,
    pub goal: Goal,
    /// A metric path, or the parameter path itself.
    pub objective: String,
    pub constraints: Vec<Threshold>,
    pub steps: usize,
    pub rounds: usize,
    /// The field holds an integer (`nqueued_sat_cap`, `slots`): values are rounded to whole
    /// numbers, a value is never run twice, and the search stops when no whole number is left
    /// inside the bracket.
    pub integer: bool,
}

/// One point tried.
#[derive(Debug, Clone, PartialEq)]
pub struct Tried {
    pub round: usize,
    pub value: f64,
    /// The objective's mean and CI half-width (the parameter itself has no spread).
    pub objective: (f64, f64),
    pub feasible: bool,
    pub metrics: std::collections::BTreeMap<String, PointStat>,
}

/// The result of a tuning.
#[derive(Debug, Clone, PartialEq)]
pub struct Tuned {
    pub best: Option<Tried>,
    pub tried: Vec<Tried>,
}

/// True if every constraint holds with the 95 % CI (see the module doc).
pub fn feasible(metrics: &std::collections::BTreeMap<String, PointStat>, constraints: &[Threshold]) -> bool {
    constraints.iter().all(|c| {
        let Some(s) = metrics.get(&c.metric) else { return false };
        let ci = s.ci95.unwrap_or(0.0);
        match c.op {
            Op::Le | Op::Lt => c.op.holds(s.mean + ci, c.value),
            Op::Ge | Op::Gt => c.op.holds(s.mean - ci, c.value),
        }
    })
}

fn values(lo: f64, hi: f64, steps: usize) -> Vec<f64> {
    let n = steps.max(2);
    (0..n).map(|i| lo + (hi - lo) * i as f64 / (n - 1) as f64).collect()
}

fn better(goal: Goal, a: f64, b: f64) -> bool {
    match goal {
        Goal::Minimize => a < b,
        Goal::Maximize => a > b,
    }
}

fn tried(spec: &TuneSpec, round: usize, p: &PointSummary) -> Option<Tried> {
    let value = p.values.get(&spec.param)?.as_f64()?;
    let objective = if spec.objective == spec.param {
        (value, 0.0)
    } else {
        let s = p.metrics.get(&spec.objective)?;
        (s.mean, s.ci95.unwrap_or(0.0))
    };
    Some(Tried {
        round,
        value,
        objective,
        feasible: feasible(&p.metrics, &spec.constraints),
        metrics: p.metrics.clone(),
    })
}

/// Run the search; rounds go to `out/round-1`, `out/round-2`, …
pub fn tune(
    loaded: &Loaded,
    spec: &TuneSpec,
    opts: &SweepOptions,
    out: &Path,
    progress: impl Fn(usize, usize) + Sync,
) -> Result<Tuned> {
    if spec.low.partial_cmp(&spec.high) != Some(std::cmp::Ordering::Less) {
        bail!("--param: LOW must be below HIGH");
    }
    // A metric no run has (a typo) is bad input, said before any run, not "no feasible value".
    let known = super::names::catalogue(&crate::run::prepare(loaded, &opts.sets)?)?;
    let flag = if spec.goal == Goal::Minimize { "--minimize" } else { "--maximize" };
    let named = std::iter::once((flag, &spec.objective)).filter(|(_, m)| **m != spec.param);
    for (what, metric) in named.chain(spec.constraints.iter().map(|c| ("--target", &c.metric))) {
        super::names::plausible(metric, &known, what).map_err(anyhow::Error::msg)?;
    }
    let (mut lo, mut hi) = (spec.low, spec.high);
    let mut all: Vec<Tried> = Vec::new();
    let same = |a: f64, b: f64| (a - b).abs() <= 1e-12 * (spec.high - spec.low).abs().max(1.0);
    for round in 1..=spec.rounds.max(1) {
        // Round 1 spans [low, high]; later rounds put `steps` new values strictly inside the
        // bracket around the best point, so no value is run twice.
        let grid: Vec<f64> = if round == 1 {
            values(lo, hi, spec.steps)
        } else {
            let n = spec.steps.max(1);
            (1..=n).map(|i| lo + (hi - lo) * i as f64 / (n + 1) as f64).collect()
        };
        let grid = if spec.integer { whole_numbers(&grid, &all) } else { grid };
        if grid.is_empty() {
            break;
        }
        let vary = Vary {
            path: spec.param.clone(),
            spec: format!("{lo}:{hi} in {} steps", spec.steps),
            values: grid.iter().map(|&v| if spec.integer { Value::from(v as i64) } else { Value::from(v) }).collect(),
        };
        let dir = out.join(format!("round-{round}"));
        sweep(loaded, vec![vary], opts, &dir, &progress)?;
        let points: super::outputs::Points = serde_json::from_slice(&std::fs::read(dir.join("points.json"))?)?;
        all.extend(points.points.iter().filter_map(|p| tried(spec, round, p)));
        // Zoom into the neighbours, among every value tried, of the best point so far.
        let Some(best) = best_of(spec.goal, &all) else { break };
        (lo, hi) = neighbours(&all, best.value);
        if same(lo, hi) {
            break;
        }
    }
    Ok(Tuned { best: best_of(spec.goal, &all), tried: all })
}

/// `grid` rounded to whole numbers, without repeats and without the values already `tried`.
fn whole_numbers(grid: &[f64], tried: &[Tried]) -> Vec<f64> {
    let mut out: Vec<f64> = grid.iter().map(|v| v.round()).collect();
    out.dedup();
    out.retain(|v| !tried.iter().any(|t| t.value == *v));
    out
}

/// The best feasible point (ties: the smaller parameter value).
pub fn best_of(goal: Goal, tried: &[Tried]) -> Option<Tried> {
    tried
        .iter()
        .filter(|t| t.feasible)
        .fold(None, |best: Option<&Tried>, t| match best {
            None => Some(t),
            Some(b)
                if better(goal, t.objective.0, b.objective.0)
                    || (t.objective.0 == b.objective.0 && t.value < b.value) =>
            {
                Some(t)
            }
            Some(b) => Some(b),
        })
        .cloned()
}

/// The interval the optimum lies in. When the parameter itself is minimised (maximised), the
/// true threshold lies between the nearest infeasible value tried below (above) the chosen one
/// and the chosen one; otherwise between the chosen point's neighbours among the values tried.
pub fn bracket(spec: &TuneSpec, t: &Tuned) -> Option<(f64, f64)> {
    let best = t.best.as_ref()?.value;
    let (lo, hi) = neighbours(&t.tried, best);
    Some(match (spec.objective == spec.param, spec.goal) {
        (true, Goal::Minimize) => (lo, best),
        (true, Goal::Maximize) => (best, hi),
        (false, _) => (lo, hi),
    })
}

/// The nearest values tried below and above `v` (`v` itself where there is none).
fn neighbours(tried: &[Tried], v: f64) -> (f64, f64) {
    let below = tried.iter().map(|t| t.value).filter(|&x| x < v).fold(f64::NEG_INFINITY, f64::max);
    let above = tried.iter().map(|t| t.value).filter(|&x| x > v).fold(f64::INFINITY, f64::min);
    (if below.is_finite() { below } else { v }, if above.is_finite() { above } else { v })
}

/// The columns of `tune.parquet`: round, the parameter, feasible, chosen, then `.mean` and
/// `.ci95` of each metric in `names`.
fn tune_columns(spec: &TuneSpec, t: &Tuned, names: &[String]) -> Vec<(String, crate::metrics::columns::Data)> {
    use crate::metrics::columns::Data;
    let mut cols = vec![
        ("round".to_string(), Data::U32(t.tried.iter().map(|x| Some(x.round as u32)).collect())),
        (spec.param.clone(), Data::F64(t.tried.iter().map(|x| Some(x.value)).collect())),
        ("feasible".into(), Data::Bool(t.tried.iter().map(|x| Some(x.feasible)).collect())),
        ("chosen".into(), Data::Bool(t.tried.iter().map(|x| Some(Some(x) == t.best.as_ref())).collect())),
    ];
    for n in names {
        cols.push((format!("{n}.mean"), Data::F64(t.tried.iter().map(|x| x.metrics.get(n).map(|s| s.mean)).collect())));
        cols.push((
            format!("{n}.ci95"),
            Data::F64(t.tried.iter().map(|x| x.metrics.get(n).and_then(|s| s.ci95)).collect()),
        ));
    }
    cols
}

/// `tune.parquet` (every point tried) and the charts: `tune.png/.svg`, the objective (or the
/// first constrained) metric against the parameter, and `tune_<metric>.png/.svg` for every other
/// constrained metric; constraints as dashed lines, the choice marked.
pub fn write_outputs(out: &Path, spec: &TuneSpec, t: &Tuned) -> Result<()> {
    let mut names: Vec<String> = spec.constraints.iter().map(|c| c.metric.clone()).collect();
    if spec.objective != spec.param && !names.contains(&spec.objective) {
        names.insert(0, spec.objective.clone());
    }
    let cols = tune_columns(spec, t, &names);
    let meta = vec![
        ("pilotsim.version".to_string(), crate::VERSION.to_string()),
        ("pilotsim.tuned".to_string(), spec.param.clone()),
    ];
    crate::metrics::write::atomic(&out.join("tune.parquet"), &crate::metrics::parquet::write_data(&cols, &meta)?)?;
    let file = tune_file(spec, t, &names);
    crate::metrics::write::atomic(&out.join("tune.json"), (serde_json::to_string_pretty(&file)? + "\n").as_bytes())?;
    let mut sorted: Vec<&Tried> = t.tried.iter().collect();
    sorted.sort_by(|a, b| a.value.total_cmp(&b.value));
    sorted.dedup_by(|a, b| a.value == b.value);
    // One chart per metric: the objective (or first constrained metric) as `tune`, every other
    // constrained metric as `tune_<metric>`, each with its own constraints drawn.
    for (i, metric) in names.iter().enumerate() {
        let stem = if i == 0 { "tune".to_string() } else { format!("tune_{}", super::outputs::stem(metric)) };
        crate::report::outputs::write_chart(
            out,
            &stem,
            crate::report::metric_vs_param(&chart(spec, t, &sorted, metric))?,
        )?;
    }
    Ok(())
}

/// `tune.json` (what `report` reads).
fn tune_file(spec: &TuneSpec, t: &Tuned, names: &[String]) -> crate::metrics::points::TuneFile {
    use crate::metrics::points::{TuneFile, TunePoint};
    TuneFile {
        scenario: spec.scenario.clone(),
        param: spec.param.clone(),
        low: spec.low,
        high: spec.high,
        goal: match spec.goal {
            Goal::Minimize => "minimize".into(),
            Goal::Maximize => "maximize".into(),
        },
        objective: spec.objective.clone(),
        constraints: spec.constraints.iter().map(|c| format!("{} {} {}", c.metric, c.op.as_str(), c.value)).collect(),
        metrics: names.to_vec(),
        chosen: t.best.as_ref().map(|b| b.value),
        bracket: bracket(spec, t),
        tried: t
            .tried
            .iter()
            .map(|x| TunePoint {
                round: x.round,
                value: x.value,
                feasible: x.feasible,
                metrics: names.iter().filter_map(|n| Some((n.clone(), x.metrics.get(n)?.clone()))).collect(),
            })
            .collect(),
    }
}

/// The chart of `metric` against the parameter over the values `sorted` tried.
fn chart(spec: &TuneSpec, t: &Tuned, sorted: &[&Tried], metric: &str) -> crate::report::MetricVsParam {
    let points = sorted
        .iter()
        .filter_map(|x| {
            let s = x.metrics.get(metric)?;
            let ci = s.ci95.unwrap_or(0.0);
            Some(crate::report::BandPoint { x: x.value, mean: s.mean, lo: s.mean - ci, hi: s.mean + ci })
        })
        .collect();
    crate::report::MetricVsParam {
        title: format!("Tuning {} — {metric}, {}", spec.param.rsplit('.').next().unwrap_or(&spec.param), spec.scenario),
        x_label: spec.param.clone(),
        y_label: metric.to_string(),
        series: vec![crate::report::BandSeries { label: String::new(), points }],
        thresholds: spec
            .constraints
            .iter()
            .filter(|c| c.metric == metric)
            .map(|c| (c.value, format!("constraint {} {}", c.op.as_str(), c.value)))
            .collect(),
        marker: t.best.as_ref().map(|b| (b.value, format!("chosen {:.3}", b.value))),
        percent: super::outputs::is_fraction(metric),
    }
}

/// Parse `--param PATH=LOW:HIGH` into the path and the range.
pub fn parse_param(param: &str) -> Result<(String, f64, f64)> {
    let (path, range) =
        param.split_once('=').ok_or_else(|| anyhow::anyhow!("--param {param:?}: expected PATH=LOW:HIGH"))?;
    let (low, high) = range
        .split_once(':')
        .and_then(|(a, b)| Some((a.trim().parse::<f64>().ok()?, b.trim().parse::<f64>().ok()?)))
        .ok_or_else(|| anyhow::anyhow!("--param {param:?}: expected PATH=LOW:HIGH with numbers"))?;
    Ok((path.trim().to_string(), low, high))
}

/// The table `pilotsim tune` prints: one row per value tried, with its round, whether it is
/// feasible, the objective and every constrained metric (mean ± 95 % CI).
pub fn table(spec: &TuneSpec, t: &Tuned) -> String {
    let mut out = format!(
        "{:<6} {:>12} {:>9}  objective (mean ± 95 % CI) and constraints\n",
        "round",
        spec.param.rsplit('.').next().unwrap_or(""),
        "feasible"
    );
    for t in &t.tried {
        let cons: Vec<String> = spec
            .constraints
            .iter()
            .map(|c| {
                t.metrics.get(&c.metric).map_or(format!("{} missing", c.metric), |s| {
                    format!("{} {:.4} ± {:.4}", c.metric, s.mean, s.ci95.unwrap_or(0.0))
                })
            })
            .collect();
        out += &format!(
            "{:<6} {:>12.4} {:>9}  {:.4} ± {:.4}; {}\n",
            t.round,
            t.value,
            if t.feasible { "yes" } else { "no" },
            t.objective.0,
            t.objective.1,
            cons.join("; ")
        );
    }
    out
}

/// What `pilotsim tune` concludes after the [`table`]: the chosen value with the bracket the
/// optimum lies in, the objective there, and where the outputs are (`out`); `None` if no
/// value tried satisfies every constraint.
pub fn conclusion(spec: &TuneSpec, t: &Tuned, out: &Path) -> Option<String> {
    let (Some(b), Some((lo, hi))) = (&t.best, bracket(spec, t)) else { return None };
    let mut text = format!("\nchosen {} = {:.4} (the optimum lies in [{lo:.4}, {hi:.4}])\n", spec.param, b.value);
    if spec.objective != spec.param {
        text += &format!("{} = {:.4} ± {:.4} (95 % CI)\n", spec.objective, b.objective.0, b.objective.1);
    }
    text += &format!(
        "outputs in {}/ (tune.parquet, tune.json, tune*.png, round-*/; `pilotsim report` for a page)\n",
        out.display()
    );
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn stat(mean: f64, ci: f64) -> PointStat {
        PointStat { mean, std: 0.0, ci95: Some(ci), n: 5 }
    }

    #[test]
    fn feasibility_is_judged_on_the_confidence_interval() {
        let m: BTreeMap<String, PointStat> =
            [("w".to_string(), stat(7000.0, 300.0)), ("e".to_string(), stat(0.85, 0.04))].into();
        let le = |v| Threshold { metric: "w".into(), op: Op::Le, value: v };
        let ge = |v| Threshold { metric: "e".into(), op: Op::Ge, value: v };
        assert!(feasible(&m, &[le(7300.0), ge(0.80)]));
        assert!(!feasible(&m, &[le(7200.0)]), "mean ok, but not with its CI");
        assert!(!feasible(&m, &[ge(0.82)]));
        assert!(!feasible(&m, &[Threshold { metric: "missing".into(), op: Op::Le, value: 1.0 }]));
    }

    #[test]
    fn best_is_the_feasible_optimum() {
        let t =
            |value, obj, feasible| Tried { round: 1, value, objective: (obj, 0.0), feasible, metrics: BTreeMap::new() };
        let tried = vec![t(0.0, 0.0, false), t(0.25, 0.25, true), t(0.5, 0.5, true)];
        assert_eq!(best_of(Goal::Minimize, &tried).unwrap().value, 0.25);
        assert_eq!(best_of(Goal::Maximize, &tried).unwrap().value, 0.5);
        assert_eq!(best_of(Goal::Minimize, &tried[..1]), None);
        assert_eq!(values(0.0, 1.0, 5), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    }

    #[test]
    fn integer_parameters_are_whole_and_never_repeated() {
        let t = |value| Tried { round: 1, value, objective: (0.0, 0.0), feasible: true, metrics: BTreeMap::new() };
        // Round 2 inside [10, 208] with 6 steps: 38.29, 66.57, … rounded; 10 and 208 were run.
        let inside: Vec<f64> = (1..=6).map(|i| 10.0 + 198.0 * i as f64 / 7.0).collect();
        assert_eq!(whole_numbers(&inside, &[t(10.0), t(208.0)]), vec![38.0, 67.0, 95.0, 123.0, 151.0, 180.0]);
        // A bracket of [4, 6] has one whole number inside, and [4, 5] none.
        assert_eq!(whole_numbers(&[4.5, 4.75, 5.0, 5.25, 5.5], &[t(4.0), t(6.0)]), vec![5.0]);
        assert_eq!(whole_numbers(&[4.25, 4.5, 4.75], &[t(4.0), t(5.0)]), Vec::<f64>::new());
    }

    #[test]
    fn param_table_and_conclusion() {
        assert_eq!(parse_param("a.b = 0:1.5").unwrap(), ("a.b".to_string(), 0.0, 1.5));
        assert!(parse_param("a.b").is_err());
        assert!(parse_param("a.b=0:x").is_err());
        let spec = TuneSpec {
            scenario: "s".into(),
            param: "a.b".into(),
            low: 0.0,
            high: 1.0,
            goal: Goal::Minimize,
            objective: "a.b".into(),
            constraints: vec![Threshold { metric: "w".into(), op: Op::Le, value: 1.0 }],
            steps: 3,
            rounds: 1,
            integer: false,
        };
        let t = |value, feasible| Tried {
            round: 1,
            value,
            objective: (value, 0.0),
            feasible,
            metrics: [("w".to_string(), stat(0.5, 0.1))].into(),
        };
        let mut tuned = Tuned { best: None, tried: vec![t(0.0, false), t(0.5, true), t(1.0, true)] };
        assert_eq!(conclusion(&spec, &tuned, Path::new("out")), None);
        tuned.best = best_of(spec.goal, &tuned.tried);
        let table = table(&spec, &tuned);
        assert_eq!(table.lines().count(), 4, "{table}");
        assert!(table.starts_with("round             b  feasible  objective"), "{table}");
        assert!(table.contains("     0.5000       yes  0.5000 ± 0.0000; w 0.5000 ± 0.1000"), "{table}");
        assert_eq!(
            conclusion(&spec, &tuned, Path::new("out")).unwrap(),
            "\nchosen a.b = 0.5000 (the optimum lies in [0.0000, 0.5000])\noutputs in out/ (tune.parquet, tune.json, \
             tune*.png, round-*/; `pilotsim report` for a page)\n"
        );
    }
}
