# %% [markdown]
# # How many extra pilots should the DIRAC director send?
#
# The director submits pilots for the waiting jobs, plus `extraPilotFraction` more (and
# `extraPilots`) to cover pilots that abort, fail or wait long at their CE. More extra pilots
# mean shorter job waits, but more pilots that start and find no job (a lower pilot
# efficiency). This notebook runs the quickstart grid at two values of
# `dirac.director.extra_pilot_fraction` and compares both sides with polars.
#
# A percent-format script: open it in Jupyter (jupytext) or VS Code as a notebook, or run
# `python docs/notebooks/extra_pilot_fraction.py [CHART.png]`. Needs `pip install ./python
# matplotlib`.

# %%
import os
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt
import polars as pl

import pilotsim

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "quickstart.ron"
HOURS = float(os.environ.get("PILOTSIM_NOTEBOOK_HOURS", "6"))  # short: a few simulated hours
FRACTIONS = [0.0, 1.0]
CHART = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "results" / "notebooks" / "extra_pilot_fraction.png"

# %% [markdown]
# ## Two runs, same seed, one parameter changed

# %%
runs = {
    f: pilotsim.run(SCENARIO, set={"duration_s": HOURS * 3600, "dirac.director.extra_pilot_fraction": f})
    for f in FRACTIONS
}
for f, r in runs.items():
    print(f"extra_pilot_fraction={f}: {r.jobs.height} jobs, {r.pilots.height} pilots, digest {r.digest[:16]}…")

# %% [markdown]
# ## Pilot efficiency and job waits
#
# Pilot efficiency from the summary (pilots that ran a job / pilots that started) and
# recomputed from the `pilots` table; waits from the `jobs` table (jobs that started).

# %%
def pilot_figures(f: float, r: pilotsim.Run) -> pl.DataFrame:
    started = r.pilots.filter(pl.col("start_s").is_not_null())
    return pl.DataFrame(
        {
            "extra_pilot_fraction": [f],
            "pilots_submitted": [r.pilots.height],
            "pilots_started": [started.height],
            "pilots_used": [started.filter(pl.col("jobs_run") > 0).height],
            "pilot_efficiency": [r.summary["pilot_efficiency"]],
        }
    ).with_columns((pl.col("pilots_used") / pl.col("pilots_started")).alias("efficiency_from_table"))


pilots = pl.concat([pilot_figures(f, r) for f, r in runs.items()])
print(pilots)

# %%
waits = pl.concat(
    [r.jobs.filter(pl.col("wait_s").is_not_null()).with_columns(pl.lit(f).alias("extra_pilot_fraction")) for f, r in runs.items()]
)
wait_stats = (
    waits.group_by("extra_pilot_fraction", "group")
    .agg(
        pl.len().alias("jobs_started"),
        (pl.col("wait_s").mean() / 60).alias("mean_wait_min"),
        (pl.col("wait_s").quantile(0.5) / 60).alias("p50_wait_min"),
        (pl.col("wait_s").quantile(0.95) / 60).alias("p95_wait_min"),
    )
    .sort("extra_pilot_fraction", "group")
)
print(wait_stats)

# %% [markdown]
# ## Chart: pilot efficiency, and the distribution of job waits

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
left.bar([str(f) for f in pilots["extra_pilot_fraction"]], pilots["pilot_efficiency"], color=["#4878d0", "#ee854a"])
left.set_ylim(0, 1)
left.set_xlabel("dirac.director.extra_pilot_fraction")
left.set_ylabel("pilot efficiency (used / started)")
left.set_title("Pilot efficiency")
for f, color in zip(FRACTIONS, ["#4878d0", "#ee854a"]):
    w = waits.filter(pl.col("extra_pilot_fraction") == f)["wait_s"].sort() / 60
    right.plot(w, [(i + 1) / len(w) for i in range(len(w))], color=color, label=f"extra_pilot_fraction={f}")
right.set_xscale("symlog")
right.set_xlabel("job wait (minutes)")
right.set_ylabel("fraction of started jobs")
right.set_title("Job waits (CDF)")
right.legend(loc="lower right")
fig.suptitle(f"quickstart, first {HOURS:g} simulated hours")
fig.tight_layout()
CHART.parent.mkdir(parents=True, exist_ok=True)
fig.savefig(CHART, dpi=110)
print(f"wrote {CHART}")
