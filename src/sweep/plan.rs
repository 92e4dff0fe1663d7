//! The plan of a sweep: which parameter values, which points, which runs and seeds.
//!
//! `--vary PATH=SPEC` takes a list (`0.1,0.2,0.5`; items are JSON or plain strings) or an
//! inclusive range (`0:1:0.1`). Several `--vary` make the full grid, the first varying
//! slowest. Each run's seed is derived from the scenario's seed, the point's assignments and
//! the replica number, so adding points or replicas never changes the seed of another run.

use anyhow::{Result, bail};
use serde_json::Value;

use crate::engine::rng::derive_seed;
pub use crate::metrics::points::Vary;

/// The most runs of one sweep (points × replicas): a million runs is weeks of computing even for
/// the quickstart, and the plan, the runs' summaries and the sweep table grow with it.
pub const MAX_RUNS: u128 = 1_000_000;

/// Round away binary noise of `lo + i·step` (0.30000000000000004 → 0.3).
fn tidy(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(12 - x.abs().log10().ceil() as i32);
    (x * scale).round() / scale
}

/// Parse `PATH=SPEC`.
pub fn parse_vary(arg: &str) -> Result<Vary> {
    let Some((path, spec)) = arg.split_once('=') else { bail!("--vary {arg:?}: expected PATH=SPEC") };
    let (path, spec) = (path.trim(), spec.trim());
    if path.is_empty() || spec.is_empty() {
        bail!("--vary {arg:?}: expected PATH=SPEC, e.g. dirac.director.extra_pilot_fraction=0:1:0.1");
    }
    let parts: Vec<&str> = spec.split(':').collect();
    let values = if parts.len() == 3 && !spec.contains(',') {
        let num = |s: &str, what: &str| -> Result<f64> {
            s.trim()
                .parse::<f64>()
                .map_err(|_| anyhow::anyhow!("--vary {arg:?}: the range {what} {s:?} is not a number"))
        };
        let (lo, hi, step) = (num(parts[0], "start")?, num(parts[1], "end")?, num(parts[2], "step")?);
        if !(step > 0.0 && hi >= lo && lo.is_finite() && hi.is_finite()) {
            bail!("--vary {arg:?}: a range is LOW:HIGH:STEP with LOW ≤ HIGH and STEP > 0");
        }
        let count = ((hi - lo) / step + 1e-9).floor() + 1.0;
        if count.is_nan() || count > 10_000.0 {
            bail!("--vary {arg:?}: {count} values is too many (at most 10000)");
        }
        let n = count as usize;
        (0..n).map(|i| Value::from(tidy(lo + i as f64 * step))).collect()
    } else {
        spec.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.to_string())))
            .collect::<Vec<_>>()
    };
    if values.is_empty() {
        bail!("--vary {arg:?}: no values");
    }
    Ok(Vary { path: path.to_string(), spec: spec.to_string(), values })
}

/// One point of the grid: a value for each varied parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub index: usize,
    /// (path, value), in `--vary` order.
    pub values: Vec<(String, Value)>,
}

impl Point {
    /// The `--set` assignments of this point.
    pub fn sets(&self) -> Vec<String> {
        self.values.iter().map(|(p, v)| format!("{p}={v}")).collect()
    }

    /// A canonical text of the assignments (keys the seeds).
    pub fn key(&self) -> String {
        self.sets().join(";")
    }
}

/// One run: a point and a replica.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    pub index: usize,
    pub point: usize,
    pub replica: u32,
    pub seed: u64,
}

impl RunSpec {
    /// The run's file stem, e.g. `p0003-r01`.
    pub fn id(&self) -> String {
        format!("p{:04}-r{:02}", self.point, self.replica)
    }
}

/// The whole grid.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub vary: Vec<Vary>,
    pub replicas: u32,
    pub points: Vec<Point>,
    pub runs: Vec<RunSpec>,
}

impl Plan {
    /// The full grid of `vary` (first varying slowest) × `replicas`, seeded from `master`.
    pub fn new(vary: Vec<Vary>, replicas: u32, master: u64) -> Result<Self> {
        if replicas == 0 {
            bail!("--replicas must be at least 1");
        }
        // A path varied twice would make a grid whose every point runs at the later `--vary`'s
        // value (the later assignment wins), under labels that say otherwise.
        let mut seen = std::collections::BTreeSet::new();
        for v in &vary {
            if !seen.insert(v.path.as_str()) {
                bail!("--vary {}: this path is varied twice; give all its values in one --vary", v.path);
            }
        }
        let n_points: u128 = vary.iter().map(|v| v.values.len() as u128).product();
        let n_runs = n_points * u128::from(replicas);
        if n_runs > MAX_RUNS {
            bail!(
                "{n_points} points × {replicas} replicas = {n_runs} runs, more than {MAX_RUNS}: vary fewer values or run fewer replicas \
                 (or split the study into several sweeps)"
            );
        }
        let mut points = vec![Point { index: 0, values: Vec::new() }];
        for v in &vary {
            points = points
                .into_iter()
                .flat_map(|p| {
                    v.values.iter().map(move |val| {
                        let mut values = p.values.clone();
                        values.push((v.path.clone(), val.clone()));
                        Point { index: 0, values }
                    })
                })
                .collect();
        }
        for (i, p) in points.iter_mut().enumerate() {
            p.index = i;
        }
        let runs = points
            .iter()
            .flat_map(|p| {
                (0..replicas).map(move |r| RunSpec {
                    index: p.index * replicas as usize + r as usize,
                    point: p.index,
                    replica: r,
                    seed: derive_seed(master, &format!("sweep/{}/replica/{r}", p.key())),
                })
            })
            .collect();
        Ok(Self { vary, replicas, points, runs })
    }

    /// The runs of shard `i` of `n` (run index ≡ i mod n).
    pub fn shard(&self, i: u32, n: u32) -> Vec<&RunSpec> {
        self.runs.iter().filter(|r| r.index % n as usize == i as usize).collect()
    }
}

/// Parse `I/N` of `--shard`.
pub fn parse_shard(s: &str) -> Result<(u32, u32)> {
    let parsed = s.split_once('/').and_then(|(i, n)| Some((i.trim().parse().ok()?, n.trim().parse().ok()?)));
    match parsed {
        Some((i, n)) if n > 0 && i < n => Ok((i, n)),
        _ => bail!("--shard {s:?}: expected I/N with 0 ≤ I < N, e.g. 0/4"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_and_replicas_beyond_a_million_runs_are_refused_before_anything_is_built() {
        let hundred = |path: &str| parse_vary(&format!("{path}=0:99:1")).unwrap();
        let e = Plan::new(vec![hundred("a"), hundred("b"), hundred("c"), hundred("d")], 1, 0).unwrap_err().to_string();
        assert!(e.starts_with("100000000 points × 1 replicas = 100000000 runs, more than 1000000"), "{e}");
        let e = Plan::new(vec![parse_vary("a=1,2").unwrap()], u32::MAX, 0).unwrap_err().to_string();
        assert!(e.contains("8589934590 runs"), "{e}");
        assert_eq!(Plan::new(vec![hundred("a"), hundred("b")], 100, 0).unwrap().runs.len(), 1_000_000);
    }

    #[test]
    fn ranges_and_lists() {
        let v = parse_vary("a.b=0:1:0.1").unwrap();
        assert_eq!(v.values.len(), 11);
        assert_eq!(v.values[3], Value::from(0.3));
        assert_eq!(v.values[10], Value::from(1.0));
        let v = parse_vary("x=0.1, 0.2,0.5").unwrap();
        assert_eq!(v.values, vec![Value::from(0.1), Value::from(0.2), Value::from(0.5)]);
        let v = parse_vary("m=RandomPriority,CpuThenRandomPriority").unwrap();
        assert_eq!(v.values[0], Value::String("RandomPriority".into()));
        assert_eq!(parse_vary("n=2:10:4").unwrap().values, vec![Value::from(2.0), Value::from(6.0), Value::from(10.0)]);
        for bad in ["nopath", "=1", "a=1:0:0.1", "a=0:1:0", "a=x:1:0.1", "a=", "a=0:1e300:1e-300"] {
            assert!(parse_vary(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn grid_order_seeds_and_shards() {
        let a = parse_vary("a=1,2").unwrap();
        let b = parse_vary("b=10,20,30").unwrap();
        let plan = Plan::new(vec![a.clone(), b.clone()], 2, 7).unwrap();
        assert_eq!(plan.points.len(), 6);
        assert_eq!(plan.points[1].sets(), vec!["a=1", "b=20"]);
        assert_eq!(plan.runs.len(), 12);
        assert_eq!(plan.runs[3].id(), "p0001-r01");
        // A run's seed depends on its point and replica, not on the rest of the grid.
        let bigger = Plan::new(vec![parse_vary("a=1,2,3").unwrap(), b], 3, 7).unwrap();
        let find = |p: &Plan, key: &str, r: u32| {
            let pt = p.points.iter().find(|x| x.key() == key).unwrap().index;
            p.runs.iter().find(|x| x.point == pt && x.replica == r).unwrap().seed
        };
        assert_eq!(find(&plan, "a=2;b=30", 1), find(&bigger, "a=2;b=30", 1));
        let all: usize = (0..4).map(|i| plan.shard(i, 4).len()).sum();
        assert_eq!(all, 12);
        assert_eq!(parse_shard("1/4").unwrap(), (1, 4));
        assert!(parse_shard("4/4").is_err() && parse_shard("x").is_err() && parse_shard("0/0").is_err());
    }

    #[test]
    fn a_path_varied_twice_is_refused() {
        let twice = vec![parse_vary("a=1,2").unwrap(), parse_vary("b=3").unwrap(), parse_vary(" a =5,6").unwrap()];
        let e = Plan::new(twice, 1, 7).unwrap_err().to_string();
        assert!(e.contains("--vary a: this path is varied twice"), "{e}");
    }
}
