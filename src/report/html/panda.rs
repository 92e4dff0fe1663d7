//! The PanDA section of a run's report, from the `wms.panda` section of `summary.json`: tasks
//! and jobs by status, one row per PanDA queue, the counters of brokerage, the data path,
//! copyArchive and Harvester, and the PanDA charts.

use std::path::Path;

use anyhow::Result;
use serde_json::Value;

use super::{esc, figure, int, table, texts};

/// The PanDA charts in the order shown, with their captions.
pub(super) const PANDA_CHARTS: [(&str, &str); 3] = [
    (
        "queue_waits.svg",
        "Wait from activated to running per PanDA queue: box from p25 to p75 with the median, whiskers to p5 and p95.",
    ),
    ("queue_lengths.svg", "Activated jobs per PanDA queue over time (the 8 largest by peak; the others summed)."),
    (
        "link_backlog.svg",
        "Files of this run's transfers queued or in transfer per network link (the links' constant background \
         files are not shown).",
    ),
];

/// A count, or `—` for none.
fn n(v: &Value) -> String {
    v.as_u64().map_or_else(|| v.as_f64().map_or("—".into(), |x| format!("{x}")), int)
}

/// Minutes with one decimal, from seconds; `—` for none.
fn minutes(v: &Value) -> String {
    v.as_f64().map_or("—".into(), |s| format!("{:.1}", s / 60.0))
}

/// `key: value` rows of a counter object, keys as words. A nested object gives one line per
/// entry (`k n`), and one more level `k: k2 n` (PanDA's pending reasons per stream), so that
/// long reasons wrap in their cell instead of running out of it.
fn counter_rows(v: &Value) -> Vec<Vec<String>> {
    let Some(o) = v.as_object() else { return Vec::new() };
    o.iter()
        .map(|(k, v)| {
            let value = match v.as_object() {
                Some(inner) if inner.is_empty() => "—".to_string(),
                Some(inner) => inner
                    .iter()
                    .flat_map(|(k, v)| match v.as_object() {
                        Some(deeper) => {
                            deeper.iter().map(|(k2, v)| format!("{}: {} {}", esc(k), esc(k2), n(v))).collect()
                        }
                        None => vec![format!("{} {}", esc(k), n(v))],
                    })
                    .collect::<Vec<_>>()
                    .join("<br>"),
                None => n(v),
            };
            vec![esc(&k.replace('_', " ")), value]
        })
        .collect()
}

/// The section, its figures numbered from `first`; returns it and the next figure number.
pub(super) fn section(dir: &Path, p: &Value, first: usize) -> Result<(String, usize)> {
    let mut b = String::from("<section><h2>PanDA</h2>\n");
    b.push_str(
        "<p>Jobs by PanDA status at the end of the run, tasks by JEDI status; per PanDA queue the jobs that \
         started, their wait from activated to running, what was left at the end and Harvester's workers. \
         <code>pilotsim explain DIR --job ID</code> tells why a job went where it went.</p>\n",
    );
    b.push_str("<div class=\"cards\">\n");
    for (title, key) in [("Tasks", "tasks"), ("Jobs", "jobs")] {
        let rows: Vec<Vec<String>> =
            p[key].as_object().map(|o| o.iter().map(|(k, v)| vec![esc(k), n(v)]).collect()).unwrap_or_default();
        b.push_str(&table(Some(title), &[], "lr", &rows));
    }
    b.push_str("</div>\n");

    let rows: Vec<Vec<String>> = p["queues"]
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(name, q)| {
                    let w = &q["wait_activated_to_running_s"];
                    let e = &q["at_end"];
                    vec![
                        esc(name),
                        n(&q["jobs_started"]),
                        minutes(&w["p50"]),
                        minutes(&w["p95"]),
                        n(&e["defined"]),
                        n(&e["assigned"]),
                        n(&e["activated"]),
                        n(&e["running"]),
                        n(&e["transferring"]),
                        n(&q["workers_at_end"]["queued"]),
                        n(&q["workers_at_end"]["running"]),
                    ]
                })
                .collect()
        })
        .unwrap_or_default();
    let head = texts(&[
        "PanDA queue",
        "jobs started",
        "wait p50 (min)",
        "wait p95 (min)",
        "defined at end",
        "assigned at end",
        "activated at end",
        "running at end",
        "transferring at end",
        "workers queued",
        "workers running",
    ]);
    b.push_str(&table(Some("PanDA queues"), &head, "lrrrrrrrrrr", &rows));

    b.push_str("<div class=\"cards\">\n");
    for (title, key) in
        [("Brokerage", "brokerage"), ("Data", "data"), ("copyArchive", "copy_archive"), ("Harvester", "harvester")]
    {
        b.push_str(&table(Some(title), &[], "lr", &counter_rows(&p[key])));
    }
    b.push_str("</div>\n");

    let mut number = first;
    for (name, caption) in PANDA_CHARTS {
        if dir.join(name).is_file() {
            b.push_str(&figure(dir, name, caption, number)?);
            number += 1;
        }
    }
    b.push_str("</section>\n");
    Ok((b, number))
}
