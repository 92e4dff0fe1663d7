//! `compare.html`: one self-contained page (as `report.html`: inline style and SVGs, no
//! scripts, no network) with both sides, the key metrics' table and the overlay charts, built
//! from the files of a comparison's directory.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::outputs::{HEAD, HTML_FILE, JSON_FILE, PARQUET_FILE, row_cells};
use super::table::{Row, key_rows};
use crate::metrics::write;

/// The captions of the comparison's charts, in the order the page shows them.
const CHARTS: [(&str, &str); 7] = [
    (
        "share_convergence.svg",
        "Share convergence: each group's running share over time, the mean of the replicas with its 95 % confidence band; A solid, B dashed, targets as grey guides.",
    ),
    (
        "pilots_over_time.svg",
        "Running and waiting pilots over time, mean of the replicas with its 95 % band; A solid, B dashed.",
    ),
    (
        "wait_times.svg",
        "Waiting time to match per group (ECDF of all replicas' jobs); A solid, B dashed, p50 and p95 marked.",
    ),
    (
        "user_wait_times.svg",
        "Waiting time to match per user of the groups whose users share them (the users with most jobs); A solid, B dashed.",
    ),
    (
        "queue_waits.svg",
        "PanDA: wait from activated to running per PanDA queue (ECDF of all replicas' jobs, the queues with most started jobs); A solid, B dashed.",
    ),
    (
        "link_backlog.svg",
        "PanDA: files of the run's own transfers queued or in transfer per link (the links with the highest peaks), mean of the replicas with its 95 % band; A solid, B dashed.",
    ),
    (
        "factory_throughput.svg",
        "Pilot factories: jobs finished per hour in each factory's pilots, mean of the replicas with its 95 % band; A solid, B dashed.",
    ),
];

/// Write `dir/compare.html` from `dir/compare.json` and the charts beside it.
pub fn write(dir: &Path) -> Result<PathBuf> {
    use crate::report::html::{charts as figures, esc, page, table};
    let path = dir.join(JSON_FILE);
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).with_context(|| path.display().to_string())?;
    let rows: Vec<Row> =
        serde_json::from_value(v["rows"].clone()).with_context(|| format!("{}: rows", path.display()))?;
    let side = |k: &str| {
        let s = &v[k];
        let seeds = s["seeds"].as_array().map_or(0, Vec::len);
        format!(
            "<tr><th>{k}</th><td>{}</td><td>{}</td><td class=\"num\">{seeds}</td></tr>\n",
            esc(s["description"].as_str().unwrap_or("")),
            esc(s["scenario"].as_str().unwrap_or("")),
            k = k.to_uppercase()
        )
    };
    let paired = v["pairing"].as_str() == Some("paired");
    let mut body = String::from("<h1>Comparison</h1>\n");
    body.push_str("<div class=\"scroll\"><table>\n<thead><tr><th></th><th>configuration</th><th>scenario</th><th class=\"num\">replicas</th></tr></thead>\n<tbody>\n");
    body.push_str(&side("a"));
    body.push_str(&side("b"));
    body.push_str("</tbody></table></div>\n");
    let _ = writeln!(
        body,
        "<p>{}</p>",
        if paired {
            "Replica i of A and of B ran with the same seed (common random numbers): each interval is that of the mean paired difference."
        } else {
            "The two sides ran with different seeds: each interval is Welch's, for independent samples."
        }
    );
    let cells: Vec<Vec<String>> = key_rows(&rows)
        .into_iter()
        .map(|r| {
            let mut c: Vec<String> = row_cells(r).iter().map(|x| esc(x)).collect();
            c[0] = format!("<code>{}</code>", c[0]);
            if r.significant {
                c[5] = format!("<b>{}</b>", c[5]);
            }
            c
        })
        .collect();
    let head: Vec<String> = HEAD.iter().map(|h| esc(h)).collect();
    body.push_str("<section><h2>Key metrics</h2>\n");
    body.push_str(&table(None, &head, "lrrrrl", &cells));
    let _ = writeln!(
        body,
        "<p class=\"note\">All {} metrics either side reports, with standard deviations and counts: <code>{PARQUET_FILE}</code> and <code>{JSON_FILE}</code>.</p>\n</section>",
        rows.len()
    );
    body.push_str(&figures(dir, &CHARTS, &[], 1)?);
    let title = format!(
        "Comparison — A: {} · B: {}",
        v["a"]["description"].as_str().unwrap_or(""),
        v["b"]["description"].as_str().unwrap_or("")
    );
    let html = page(&title, &body);
    let out = dir.join(HTML_FILE);
    write::atomic(&out, html.as_bytes()).with_context(|| format!("writing {}", out.display()))?;
    Ok(out)
}
