"""The Python package against the command line: same digest, same tables, same messages.

The CLI binary is `$PILOTSIM_BIN`, else `target/release/pilotsim` or `target/debug/pilotsim`
of this repository (`cargo build` makes the latter; .ci/python.sh builds it first).
"""

import json
import os
import pathlib
import subprocess
import warnings

import polars as pl
import pytest

import pilotsim

ROOT = pathlib.Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "scenarios" / "quickstart.ron"
SHORT = {"duration_s": 14400}


def cli_binary() -> pathlib.Path:
    if os.environ.get("PILOTSIM_BIN"):
        return pathlib.Path(os.environ["PILOTSIM_BIN"])
    for profile in ("release", "debug"):
        target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
        p = target / profile / "pilotsim"
        if p.exists():
            return p
    pytest.fail("no pilotsim binary: run `cargo build` at the repository root or set PILOTSIM_BIN")


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """`pilotsim run --set duration_s=14400 scenarios/quickstart.ron` into a directory."""
    out = tmp_path_factory.mktemp("cli")
    subprocess.run(
        [str(cli_binary()), "run", "--quiet", "--set", "duration_s=14400", "--out", str(out), str(QUICKSTART)],
        check=True,
        cwd=ROOT,
    )
    return out


@pytest.fixture(scope="module")
def py_run():
    return pilotsim.run(str(QUICKSTART), set=SHORT)


def test_digest_equals_the_cli(cli_run, py_run):
    cli = json.loads((cli_run / "summary.json").read_text())
    assert py_run.digest == cli["digest"]
    assert py_run.summary["digest"] == cli["digest"]
    # The summary is summary.json, but for the wall-clock figures.
    for k in ("wall_seconds", "events_per_second"):
        cli.pop(k)
        py_run.summary.pop(k, None)
    assert py_run.summary == cli


def test_frames_are_the_cli_tables(cli_run, py_run):
    for name in ("jobs", "timeseries", "pilots"):
        file = pl.read_parquet(cli_run / f"{name}.parquet")
        frame = getattr(py_run, name)
        assert frame.schema == file.schema, name
        assert frame.height > 0, name
        assert frame.equals(file), name
    for name in ("transfers", "brokerage"):
        exists = (cli_run / f"{name}.parquet").exists()
        assert (getattr(py_run, name) is not None) == exists, name


def test_other_readers_read_the_cli_tables(cli_run):
    """pyarrow and DuckDB read the files polars wrote: rows, the run's identity as key-value
    metadata, and row-group statistics."""
    import duckdb
    import pyarrow.parquet as pq

    file = pq.ParquetFile(cli_run / "jobs.parquet")
    digest = json.loads((cli_run / "summary.json").read_text())["digest"]
    assert file.metadata.metadata[b"pilotsim.digest"].decode() == digest
    stats = file.metadata.row_group(0).column(0).statistics
    assert stats is not None and stats.has_min_max and stats.null_count == 0
    rows = pl.read_parquet(cli_run / "jobs.parquet").height
    assert file.metadata.num_rows == rows
    ((count,),) = duckdb.sql(f"select count(*) from '{cli_run / 'jobs.parquet'}'").fetchall()
    assert count == rows


def test_run_of_text_and_path_like_and_seed():
    text = QUICKSTART.read_text()
    a = pilotsim.run(text, set=SHORT, seed=7)
    b = pilotsim.run(QUICKSTART, set=SHORT, seed=7)
    assert a.digest == b.digest
    assert a.summary["seed"] == 7
    assert a.jobs.equals(b.jobs)


def test_out_writes_the_run_directory(tmp_path):
    r = pilotsim.run(QUICKSTART, set=SHORT, out=tmp_path / "run")
    written = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert written["digest"] == r.digest
    assert (tmp_path / "run" / "jobs.parquet").exists()


def test_set_values_become_the_cli_text():
    r = pilotsim.run(QUICKSTART, set={**SHORT, "dirac.director.extra_pilot_fraction": 0.5})
    assert r.summary["overrides"] == ["duration_s=14400", "dirac.director.extra_pilot_fraction=0.5"]


def test_bad_set_path_raises_value_error_naming_the_field():
    with pytest.raises(ValueError, match="dirac.director") as e:
        pilotsim.run(QUICKSTART, set={"dirac.director.no_such_field": 1})
    assert "no_such_field" in str(e.value)


def test_bad_set_value_raises_value_error_naming_the_field():
    with pytest.raises(ValueError, match="extra_pilot_fraction"):
        pilotsim.run(QUICKSTART, set={"dirac.director.extra_pilot_fraction": "lots"})


def test_missing_file_raises_value_error():
    with pytest.raises(ValueError, match="no_such_scenario.ron"):
        pilotsim.run("no_such_scenario.ron")


def test_sweep_two_values_two_replicas():
    runs, points = pilotsim.sweep(
        QUICKSTART,
        {"dirac.director.extra_pilot_fraction": [0.1, 0.5]},
        replicas=2,
        threads=2,
        set=SHORT,
        points=True,
    )
    assert runs.height == 4
    assert runs["run"].to_list() == ["p0000-r00", "p0000-r01", "p0001-r00", "p0001-r01"]
    assert runs["dirac.director.extra_pilot_fraction"].to_list() == [0.1, 0.1, 0.5, 0.5]
    assert "pilot_efficiency" in runs.columns
    assert points.height == 2
    assert "pilot_efficiency.mean" in points.columns


def test_sweep_table_is_sweep_parquet(tmp_path):
    vary = {"dirac.director.extra_pilot_fraction": [0.1, 0.5]}
    out = tmp_path / "sweep"
    runs = pilotsim.sweep(QUICKSTART, vary, replicas=1, set=SHORT, out=out)
    assert runs.equals(pl.read_parquet(out / "sweep.parquet"))
    # In memory, on one thread, the same table.
    assert pilotsim.sweep(QUICKSTART, vary, replicas=1, threads=1, set=SHORT).equals(runs)
    subprocess.run(
        [str(cli_binary()), "sweep", "--quiet", str(QUICKSTART), "--vary", "dirac.director.extra_pilot_fraction=0.1,0.5",
         "--replicas", "1", "--set", "duration_s=14400", "--out", str(tmp_path / "cli")],
        check=True,
        cwd=ROOT,
    )
    assert runs.equals(pl.read_parquet(tmp_path / "cli" / "sweep.parquet"))


def test_validate():
    assert pilotsim.validate(QUICKSTART) == []
    bad = QUICKSTART.read_text().replace('group: "lhcb_prod"', 'group: "nobody"', 1)
    problems = pilotsim.validate(bad)
    assert problems and any('unknown group "nobody"' in p for p in problems), problems
    assert all(p.startswith("<scenario text>: workload[") for p in problems), problems
    assert pilotsim.validate("Scenario(name: ")[0].startswith("<scenario text>:")


def test_validate_messages_equal_the_cli(tmp_path):
    bad = tmp_path / "bad.ron"
    bad.write_text(QUICKSTART.read_text().replace('group: "lhcb_prod"', 'group: "nobody"', 1))
    cli = subprocess.run([str(cli_binary()), "validate", str(bad)], capture_output=True, text=True, cwd=ROOT)
    assert cli.returncode == 1
    assert pilotsim.validate(str(bad)) == cli.stdout.splitlines()


def test_embedded_quickstart_without_a_scenario():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = pilotsim.run(set=SHORT)
    assert r.summary["scenario"] == "quickstart"


def test_gpu_timeseries_is_the_cli_table(tmp_path):
    """A grid with GPUs: `gpu_timeseries` equals `gpu_timeseries.parquet`, and no GPU busy
    beyond the inventory; a CPU-only run has none."""
    gpu = ROOT / "scenarios" / "gpu_grid.ron"
    subprocess.run(
        [str(cli_binary()), "run", "--quiet", "--set", "duration_s=21600", "--out", str(tmp_path), str(gpu)],
        check=True,
        cwd=ROOT,
    )
    r = pilotsim.run(str(gpu), set={"duration_s": 21600})
    on_disk = pl.read_parquet(tmp_path / "gpu_timeseries.parquet")
    assert r.gpu_timeseries.equals(on_disk)
    assert (r.gpu_timeseries["held"] <= r.gpu_timeseries["gpus"]).all()
    assert (r.gpu_timeseries["used"] <= r.gpu_timeseries["held"]).all()
    assert r.jobs.filter(pl.col("gpus") > 0)["gpu_model"].drop_nulls().len() > 0
    assert pilotsim.run(str(QUICKSTART), set=SHORT).gpu_timeseries is None
