//! Writing the outputs of one run into its directory (DESIGN.md, "Outputs of one run"):
//! `summary.json`, `timeseries.parquet`, `jobs.parquet`, `pilots.parquet` and the charts,
//! each written atomically.

use std::path::Path;

use anyhow::{Context, Result};

use super::charts::{self, EntityShare, Line, PilotsOverTime, Rendered, ShareConvergence, WaitTimes};
use crate::metrics::recorder::Level;
use crate::metrics::summary::{self, Summary};
use crate::metrics::{RunData, frames, write};

/// Write a rendered chart as `<stem>.png` and `<stem>.svg` in `dir`, atomically.
pub fn write_chart(dir: &Path, stem: &str, r: Rendered) -> Result<()> {
    write::atomic(&dir.join(format!("{stem}.png")), &r.png)?;
    write::atomic(&dir.join(format!("{stem}.svg")), r.svg.as_bytes())?;
    Ok(())
}

/// The share-convergence chart of a run: running share of each group over time.
pub fn share_chart(run: &RunData) -> ShareConvergence {
    let r = &*run.recorder;
    let groups: Vec<usize> = (0..r.entities.len()).filter(|&e| r.entities[e].level == Level::Group).collect();
    let entities = groups
        .iter()
        .map(|&e| EntityShare {
            label: r.entities[e].name.clone(),
            target: r.entities[e].target_share,
            points: r.samples.iter().map(|s| (s.time.as_hours_f64(), s.share[e])).collect(),
        })
        .collect();
    ShareConvergence {
        title: format!("Share convergence — {}, seed {}", run.meta.scenario, run.meta.seed),
        entities,
        warmup_hours: run.scenario.output.warmup_s / 3600.0,
        end_hours: run.meta.end.as_hours_f64(),
        y_label: "share of running jobs".into(),
    }
}

fn pilots_chart(run: &RunData) -> PilotsOverTime {
    let s = &run.recorder.samples;
    let line = |label: &str, f: &dyn Fn(&crate::metrics::recorder::Sample) -> u32| Line {
        label: label.into(),
        points: s.iter().map(|x| (x.time.as_hours_f64(), f64::from(f(x)))).collect(),
    };
    let mut lines = vec![
        line("waiting", &|x| x.pilots.waiting),
        line("running", &|x| x.pilots.running),
        line("aborted (cumulative)", &|x| x.pilots.aborted),
    ];
    // The backlog against the CEs' caps, when every CE has one.
    let caps: Option<u64> = run.grid.ces.iter().map(|c| c.max_waiting_jobs.map(u64::from)).sum();
    if let (Some(cap), Some(first), Some(last)) = (caps, s.first(), s.last()) {
        lines.push(Line {
            label: "waiting cap (Σ MaxWaitingJobs)".into(),
            points: vec![(first.time.as_hours_f64(), cap as f64), (last.time.as_hours_f64(), cap as f64)],
        });
    }
    PilotsOverTime {
        title: format!("Pilots — {}, seed {}", run.meta.scenario, run.meta.seed),
        end_hours: run.meta.end.as_hours_f64(),
        lines,
    }
}

fn wait_chart(run: &RunData) -> WaitTimes {
    let mut groups: Vec<(String, Vec<f64>)> = Vec::new();
    for w in run.streams {
        if !groups.iter().any(|(g, _)| *g == w.group) {
            groups.push((w.group.clone(), Vec::new()));
        }
    }
    for j in run.jobs {
        if let Some(wait) = j.wait_s() {
            let g = &run.streams[j.stream as usize].group;
            groups.iter_mut().find(|(n, _)| n == g).expect("listed").1.push(wait);
        }
    }
    WaitTimes { title: format!("Waiting time to match — {}, seed {}", run.meta.scenario, run.meta.seed), groups }
}

/// Make a run directory ready for a new run, before anything else is written into it:
/// remove its `summary.json` (whose presence says the outputs beside it are complete, so a
/// run that fails half-way never leaves an old summary beside new tables) and the
/// temporaries a killed run left (see [`write::remove_stale_temporaries`]). Nothing to do if
/// `dir` does not exist.
pub fn begin_run(dir: &Path) -> Result<()> {
    let summary = dir.join("summary.json");
    match std::fs::remove_file(&summary) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("removing the old {}", summary.display()));
        }
        _ => {}
    }
    write::remove_stale_temporaries(dir).with_context(|| format!("cleaning {}", dir.display()))?;
    Ok(())
}

/// Write every output of a run into `dir` (created if needed) and return the summary.
/// [`begin_run`] first, `summary.json` last.
pub fn write_run(dir: &Path, run: &mut RunData) -> Result<Summary> {
    begin_run(dir)?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let summary = summary::build(run);
    let json = serde_json::to_string_pretty(&summary)? + "\n";
    let tables = [
        ("timeseries.parquet", frames::timeseries(run)),
        ("jobs.parquet", frames::jobs(run)),
        ("pilots.parquet", frames::pilots(run)),
    ];
    let mut parquet: Vec<(String, Vec<u8>)> = Vec::new();
    for (name, df) in tables {
        let mut df = df.with_context(|| format!("building {name}"))?;
        parquet.push((name.to_string(), frames::parquet_bytes(&mut df, &run.meta)?));
    }
    if run.network.transfer_count() > 0 {
        let mut df = frames::transfers(run).context("building transfers.parquet")?;
        parquet.push(("transfers.parquet".into(), frames::parquet_bytes(&mut df, &run.meta)?));
    }
    for t in &run.wms_tables {
        let name = format!("{}.parquet", t.name);
        let mut df = frames::wms_table(t).with_context(|| format!("building {name}"))?;
        parquet.push((name, frames::parquet_bytes(&mut df, &run.meta)?));
    }
    let share = charts::share_convergence(&share_chart(run))?;
    let pilots = charts::pilots_over_time(&pilots_chart(run))?;
    let waits = charts::wait_time_distribution(&wait_chart(run))?;
    // Everything is rendered: now write, summary last so its presence means a complete run.
    for (name, bytes) in &parquet {
        write::atomic(&dir.join(name), bytes).with_context(|| format!("writing {name}"))?;
    }
    write_chart(dir, "share_convergence", share)?;
    write_chart(dir, "pilots_over_time", pilots)?;
    write_chart(dir, "wait_times", waits)?;
    write::atomic(&dir.join("summary.json"), json.as_bytes())?;
    Ok(summary)
}
