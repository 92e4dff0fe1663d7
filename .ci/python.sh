#!/usr/bin/env bash
# The Python package (python/): build it with maturin, run its tests and the notebook script.
#
# A venv (target/py-venv, or $PILOTSIM_VENV) gets maturin, pytest, polars, matplotlib, and
# pyarrow and DuckDB (the tests read a run's files with them too) from
# PyPI, then `pip install ./python`, which builds the extension in release through maturin.
# CARGO_TARGET_DIR is this repository's target/, so the release build of polars and pilotsim
# is shared with `cargo build --release` (the same workspace profiles and Cargo.lock).
# The tests compare with the CLI binary (target/debug/pilotsim, built here if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
export CARGO_TERM_COLOR=never
venv="${PILOTSIM_VENV:-$CARGO_TARGET_DIR/py-venv}"
export PATH="$venv/bin:$PATH"  # the build backend runs `maturin` from the PATH

echo "== python venv ($venv)"
python3 --version
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet maturin pytest polars matplotlib pyarrow duckdb

echo "== CLI binary for the comparisons"
[ -x "$CARGO_TARGET_DIR/debug/pilotsim" ] || cargo build --locked --bin pilotsim

echo "== pip install ./python (maturin, release)"
start=$(date +%s)
# maturin is in the venv already: no isolated build environment to download it into.
"$venv/bin/python" -m pip install --quiet --no-build-isolation --force-reinstall --no-deps ./python
echo "built and installed in $(( $(date +%s) - start )) s"

echo "== clippy (python crate)"
cargo clippy --locked -p pilotsim-python --all-targets -- -D warnings

echo "== pytest python/tests"
"$venv/bin/python" -m pytest -q python/tests

echo "== notebook docs/notebooks/extra_pilot_fraction.py"
"$venv/bin/python" docs/notebooks/extra_pilot_fraction.py "$CARGO_TARGET_DIR/notebooks/extra_pilot_fraction.png"
