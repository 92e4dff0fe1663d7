//! The GPU section of a run's report, from `summary.json` `gpus` (`metrics::gpus`): the grid's
//! GPUs, their use and the GPU jobs' waits, per site and model.

use super::{esc, int, pct, table, texts};
use crate::metrics::gpus::GpuSummary;

/// Hours with two decimals; `—` for none.
fn h(v: Option<f64>) -> String {
    v.map_or("—".into(), |x| format!("{x:.2}"))
}

/// The section's HTML, empty for a grid without GPUs.
pub(super) fn section(g: Option<&GpuSummary>) -> String {
    let Some(g) = g else { return String::new() };
    let mut rows: Vec<Vec<String>> = g
        .kinds
        .iter()
        .map(|k| {
            vec![
                esc(&k.site),
                esc(&k.model),
                int(u64::from(k.gpus)),
                pct(k.utilisation),
                pct(k.held_fraction),
                int(k.jobs_run),
                h(k.wait_p50_h),
                h(k.wait_p95_h),
            ]
        })
        .collect();
    rows.push(vec![
        "<b>all</b>".into(),
        String::new(),
        int(u64::from(g.gpus)),
        pct(g.utilisation),
        pct(g.held_fraction),
        int(g.jobs_started),
        h(g.wait_p50_h),
        h(g.wait_p95_h),
    ]);
    let head = texts(&[
        "site",
        "model",
        "GPUs",
        "used by jobs",
        "held by pilots",
        "GPU jobs run",
        "wait p50 [h]",
        "wait p95 [h]",
    ]);
    format!(
        "<section><h2>GPUs</h2>\n<p>GPU-hours used by jobs and held by pilots over each kind's GPUs × the run's length; waits from submission to match of the jobs that ran there. {} GPU jobs submitted, {} still waiting at the end.</p>\n{}</section>\n",
        int(g.jobs_submitted),
        int(g.jobs_waiting_at_end),
        table(None, &head, "llrrrrrr", &rows)
    )
}
