//! `pilotsim._pilotsim`: the native half of the Python package `pilotsim` (python/pilotsim).
//!
//! Each function does what the command line does, through the same library functions
//! (`scenario::load_file`, `run::prepare`, `run::simulate`, `sweep::sweep`, …), so a run from
//! Python has the CLI's digest and an error the CLI's message. The Python layer turns the
//! user's arguments into the CLI's strings (`--set path=value`) and builds the DataFrames.
//!
//! Tables cross into Python as Arrow arrays, one [`ArrowColumn`] per column, through the
//! Arrow PyCapsule protocol (`__arrow_c_array__`): Python's `polars.Series(name, column)`
//! imports the buffers without a copy or a file, and the protocol does not depend on the
//! Python polars version (unlike handing over polars' own Rust objects).
//!
//! Nothing panics across the boundary: every error becomes a Python exception (bad input a
//! `ValueError`, an output that cannot be written an `OSError`, anything else a
//! `RuntimeError`), and a panic inside the simulation is caught and reported as a
//! `RuntimeError`. The GIL is released while runs simulate.

use std::ffi::CStr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use polars::prelude::{CompatLevel, DataFrame, Series};
use polars_arrow::ffi::{export_array_to_c, export_field_to_c};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use rayon::prelude::*;

use pilotsim::metrics::columns::{Column, Data, to_frame};
use pilotsim::metrics::tables;
use pilotsim::report::outputs;
use pilotsim::run as one_run;
use pilotsim::scenario::{self, Loaded};
use pilotsim::sweep::{self as many_runs, SweepOptions, plan, store};

/// The name under which a scenario given as text appears in messages.
const TEXT_ORIGIN: &str = "<scenario text>";

/// Why a call failed, mapped to a Python exception type; the message is the CLI's
/// (`{error:#}`: the error and its context, as `pilotsim` prints after `error: `).
enum Failure {
    /// The input: a scenario, a `--set`, a `--vary` (`ValueError`).
    Input(String),
    /// Writing the outputs (`OSError`).
    Output(String),
    /// Anything else: an invariant of the model, a panic (`RuntimeError`).
    Internal(String),
}

impl Failure {
    fn input(e: impl std::fmt::Display) -> Self {
        Failure::Input(format!("{e:#}"))
    }
    fn output(e: anyhow::Error) -> Self {
        Failure::Output(format!("{e:#}"))
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match f {
            Failure::Input(m) => PyValueError::new_err(m),
            Failure::Output(m) => PyOSError::new_err(m),
            Failure::Internal(m) => PyRuntimeError::new_err(m),
        }
    }
}

/// Run `f` without the GIL, turning a panic into [`Failure::Internal`].
fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, Failure> + Send) -> PyResult<T> {
    py.detach(|| match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)");
            Err(Failure::Internal(format!("internal error: pilotsim panicked: {what}")))
        }
    })
    .map_err(PyErr::from)
}

/// Load a scenario: `kind` is `"path"` (a file, as `pilotsim run FILE`), `"text"` (RON text,
/// relative paths from the current directory) or `"quickstart"` (the embedded one, as
/// `pilotsim run` without a file).
fn load(kind: &str, source: &str) -> Result<Loaded, Failure> {
    match kind {
        "path" => scenario::load_file(Path::new(source)).map_err(Failure::input),
        "text" => scenario::load_str(source, TEXT_ORIGIN).map_err(Failure::input),
        "quickstart" => Ok(scenario::quickstart()),
        other => Err(Failure::Input(format!("unknown scenario kind {other:?} (path, text or quickstart)"))),
    }
}

/// One column of a table, importable by any Arrow consumer through the Arrow PyCapsule
/// protocol. Holds the polars Series (its buffers are shared, not copied, on export), so it
/// can be exported any number of times.
#[pyclass(frozen, module = "pilotsim._pilotsim")]
struct ArrowColumn {
    series: Series,
}

const SCHEMA: &CStr = c"arrow_schema";
const ARRAY: &CStr = c"arrow_array";

#[pymethods]
impl ArrowColumn {
    /// The column's name.
    #[getter]
    fn name(&self) -> String {
        self.series.name().to_string()
    }

    fn __len__(&self) -> usize {
        self.series.len()
    }

    /// The Arrow PyCapsule protocol: `(schema capsule, array capsule)` of the C data
    /// interface. A requested schema is ignored (the protocol lets a producer do so): the
    /// column is always exported in its own type. Each capsule's destructor releases what
    /// the consumer did not take.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        // One chunk (the C interface exports one array); a Series of no chunks gets an empty one.
        let s = match self.series.n_chunks() {
            0 => Series::full_null(self.series.name().clone(), 0, self.series.dtype()),
            _ => self.series.rechunk(),
        };
        let field = s.field().to_arrow(CompatLevel::newest());
        let array = s.to_arrow(0, CompatLevel::newest());
        let schema = PyCapsule::new_with_value(py, export_field_to_c(&field), SCHEMA)?;
        let array = PyCapsule::new_with_value(py, export_array_to_c(array), ARRAY)?;
        Ok((schema, array))
    }

    fn __repr__(&self) -> String {
        format!("ArrowColumn({:?}, {}, {} rows)", self.series.name().as_str(), self.series.dtype(), self.series.len())
    }
}

/// A table's columns for Python.
type Table = (String, Vec<ArrowColumn>);

fn columns_of(name: &str, frame: DataFrame) -> Table {
    let cols =
        frame.columns().iter().map(|c| ArrowColumn { series: c.as_materialized_series().clone() }).collect::<Vec<_>>();
    (name.to_string(), cols)
}

fn table(name: &str, columns: &[Column]) -> Result<Table, Failure> {
    let frame = to_frame(columns).map_err(|e| Failure::Internal(format!("building the {name} table: {e}")))?;
    Ok(columns_of(name, frame))
}

fn data_table(name: &str, columns: &[(String, Data)]) -> Result<Table, Failure> {
    let cols: Vec<Column> = columns.iter().map(|(n, d)| Column::new(n.as_str(), d.values())).collect();
    table(name, &cols)
}

/// What `run` hands to Python: the summary as JSON (summary.json's content), the digest,
/// the scenario's warnings, and the tables (`jobs`, `pilots`, `timeseries`, `transfers` if the run
/// made any, `gpu_timeseries` if the grid has GPUs, then the WMSs' own such as `brokerage`).
type RunResult = (String, String, Vec<String>, Vec<Table>);

/// One run, as `pilotsim run [--seed S] [--set …] [--out DIR] [SCENARIO]`; the tables
/// straight from memory. With `out`, the usual directory is written too.
#[pyfunction]
#[pyo3(signature = (kind, source, sets, seed=None, out=None))]
fn run(
    py: Python<'_>,
    kind: &str,
    source: &str,
    sets: Vec<String>,
    seed: Option<u64>,
    out: Option<PathBuf>,
) -> PyResult<RunResult> {
    let kind = kind.to_string();
    let source = source.to_string();
    detached(py, move || {
        let loaded = load(&kind, &source)?;
        let prepared = one_run::prepare(&loaded, &sets).map_err(Failure::input)?;
        let warnings: Vec<String> = scenario::warnings(&prepared.scenario)
            .iter()
            .map(|w| format!("{}: warning: {}: {}", prepared.origin, w.path, w.message))
            .collect();
        let seed = seed.unwrap_or(prepared.scenario.seed);
        if let Some(dir) = &out {
            // As the CLI: an old summary goes before the run, so a run that fails leaves none.
            outputs::begin_run(dir).map_err(Failure::output)?;
        }
        let mut finished = one_run::simulate(&prepared, seed, |_, _| {}).map_err(|e| {
            let m = format!("{e:#}");
            if m.starts_with("internal error") { Failure::Internal(m) } else { Failure::Input(m) }
        })?;
        let summary = match &out {
            Some(dir) => finished.write(dir).map_err(Failure::output)?,
            None => finished.summary(),
        };
        let json = serde_json::to_string(&summary)
            .map_err(|e| Failure::Internal(format!("internal error: the summary does not serialise: {e}")))?;
        let digest = finished.meta.digest.clone();
        let data = finished.data();
        let mut tables = vec![
            table("jobs", &tables::jobs(&data))?,
            table("pilots", &tables::pilots(&data))?,
            table("timeseries", &tables::timeseries(&data))?,
        ];
        if data.network.transfer_count() > 0 {
            tables.push(table("transfers", &tables::transfers(&data))?);
        }
        if !data.recorder.gpu_samples.is_empty() {
            tables.push(table("gpu_timeseries", &pilotsim::metrics::gpus::timeseries(&data))?);
        }
        for t in &data.wms_tables {
            tables.push(table(&t.name, &tables::wms_table(t))?);
        }
        Ok((json, digest, warnings, tables))
    })
}

/// A parameter of a sweep: its path, and either the CLI's SPEC (`0:1:0.1`, `a,b`) or values
/// as JSON texts.
type VaryArg = (String, Option<String>, Vec<String>);

fn vary_of((path, spec, values): VaryArg) -> Result<plan::Vary, Failure> {
    if let Some(spec) = spec {
        return plan::parse_vary(&format!("{path}={spec}")).map_err(Failure::input);
    }
    if values.is_empty() {
        return Err(Failure::Input(format!("vary {path:?}: no values")));
    }
    let values = values
        .iter()
        .map(|v| serde_json::from_str(v).map_err(|e| Failure::Input(format!("vary {path:?}: value {v}: {e}"))))
        .collect::<Result<Vec<serde_json::Value>, Failure>>()?;
    let spec = values.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",");
    Ok(plan::Vary { path, spec, values })
}

/// A sweep, as `pilotsim sweep SCENARIO --vary … --replicas N [--threads T] [--set …]
/// [--out DIR]`: the tables of `sweep.parquet` (one row per run) and `points.parquet` (one
/// row per point), built from the runs in memory. With `out`, the CLI's sweep itself runs
/// into `out` (every file, resuming finished runs) and the tables are built from its runs.
#[pyfunction]
#[pyo3(signature = (kind, source, vary, replicas, sets, threads=None, out=None))]
#[allow(clippy::too_many_arguments)] // one per argument of the Python call, plus the GIL token
fn sweep(
    py: Python<'_>,
    kind: &str,
    source: &str,
    vary: Vec<VaryArg>,
    replicas: u32,
    sets: Vec<String>,
    threads: Option<usize>,
    out: Option<PathBuf>,
) -> PyResult<(Table, Table)> {
    let kind = kind.to_string();
    let source = source.to_string();
    detached(py, move || {
        let loaded = load(&kind, &source)?;
        let vary = vary.into_iter().map(vary_of).collect::<Result<Vec<_>, _>>()?;
        let opts = SweepOptions { replicas, threads, shard: None, sets };
        let (plan, manifest, prepared) =
            many_runs::prepare_sweep(&loaded, vary.clone(), &opts).map_err(Failure::input)?;
        let runs = match &out {
            Some(dir) => {
                many_runs::sweep(&loaded, vary, &opts, dir, |_, _| {}).map_err(Failure::output)?;
                store::read_runs(dir).map_err(Failure::output)?
            }
            None => {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads.unwrap_or(0))
                    .build()
                    .map_err(|e| Failure::Internal(format!("starting the sweep's threads: {e}")))?;
                // As `sweep::sweep` does, without the files: each run's record, in plan order.
                let records = Mutex::new(Vec::with_capacity(plan.runs.len()));
                pool.install(|| {
                    plan.runs.iter().par_bridge().try_for_each(|r| -> anyhow::Result<()> {
                        let rec = many_runs::simulate_one(&plan, &prepared, r)?;
                        // Through the JSON text of a run file, as the CLI's sweep reads its runs
                        // back (`store::write_run`, `store::read_runs`): the same numbers to the
                        // last bit as `sweep.parquet`.
                        let rec: store::RunRecord = serde_json::from_str(&serde_json::to_string_pretty(&rec)?)?;
                        records.lock().map_err(|_| anyhow::anyhow!("a sweep thread panicked"))?.push(rec);
                        Ok(())
                    })
                })
                .map_err(|e| Failure::Internal(format!("{e:#}")))?;
                let mut runs = records.into_inner().map_err(|_| Failure::Internal("a sweep thread panicked".into()))?;
                runs.sort_by_key(|r| r.index);
                runs
            }
        };
        let points = many_runs::outputs::summarise(&manifest, &runs);
        Ok((
            data_table("sweep", &many_runs::outputs::runs_table(&manifest, &runs))?,
            data_table("points", &many_runs::outputs::points_table(&points))?,
        ))
    })
}

/// The problems of a scenario, as `pilotsim validate FILE` prints them (one line each; empty
/// when it is valid): load errors, validation problems, `expect` thresholds on unknown metrics.
#[pyfunction]
fn validate(py: Python<'_>, kind: &str, source: &str) -> PyResult<Vec<String>> {
    let kind = kind.to_string();
    let source = source.to_string();
    detached(py, move || {
        let loaded = match load(&kind, &source) {
            Ok(l) => l,
            Err(Failure::Input(m)) => return Ok(m.lines().map(String::from).collect()),
            Err(other) => return Err(other),
        };
        let origin = loaded.origin.clone();
        match one_run::prepare(&loaded, &[]).and_then(|p| many_runs::names::expect_problems(&p)) {
            Ok(problems) => {
                Ok(problems.into_iter().map(|(path, message)| format!("{origin}: {path}: {message}")).collect())
            }
            Err(e) => Ok(vec![format!("{origin}: {e:#}")]),
        }
    })
}

/// The pilotsim version of the native module.
#[pyfunction]
fn version() -> &'static str {
    pilotsim::VERSION
}

/// The native module; its functions are wrapped by the `pilotsim` package.
#[pymodule]
fn _pilotsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ArrowColumn>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
