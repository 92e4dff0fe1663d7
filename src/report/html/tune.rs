//! The tune page: what `tune` looked for (`tune.json`), its choice and bracket, every value it
//! tried with the objective and the constrained metrics (mean ± 95 % CI), and its charts.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;

use super::{charts, esc, page, table};
use crate::metrics::format::{fmt_half, fmt_value};
use crate::metrics::points::TuneFile;

/// The whole page of a tune directory.
pub(super) fn page_html(dir: &Path, t: &TuneFile) -> Result<String> {
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<header><h1>Tuning <code>{}</code> <span class=\"sub\">{}</span></h1></header>",
        esc(&t.param),
        esc(&t.scenario)
    );
    let goal = if t.objective == t.param {
        format!("the {} value of the parameter", if t.goal == "minimize" { "smallest" } else { "largest" })
    } else {
        format!("{} <code>{}</code>", esc(&t.goal), esc(&t.objective))
    };
    let constraints: Vec<String> = t.constraints.iter().map(|c| format!("<code>{}</code>", esc(c))).collect();
    let _ = writeln!(
        b,
        "<section><h2>Search</h2>\n<p>Over [{}, {}]: {goal}, such that {} — each holding at the edge of its 95 % \
         confidence interval.</p>",
        t.low,
        t.high,
        if constraints.is_empty() { "no constraint".to_string() } else { constraints.join(" and ") }
    );
    let _ = writeln!(
        b,
        "<p>{}</p>",
        match (t.chosen, t.bracket) {
            (Some(c), Some((lo, hi))) => format!("<b>Chosen: {c:.4}</b>; the optimum lies in [{lo:.4}, {hi:.4}]."),
            (Some(c), None) => format!("<b>Chosen: {c:.4}</b>."),
            _ => "<b>No value tried satisfies every constraint.</b>".to_string(),
        }
    );
    let mut head = vec!["round".to_string(), esc(&t.param), "feasible".to_string()];
    head.extend(t.metrics.iter().map(|m| format!("<code>{}</code>", esc(m))));
    let rows: Vec<Vec<String>> = t
        .tried
        .iter()
        .map(|x| {
            let chosen = t.chosen == Some(x.value);
            let mut row = vec![
                x.round.to_string(),
                if chosen { format!("<b>{:.4}</b>", x.value) } else { format!("{:.4}", x.value) },
                if x.feasible { "yes" } else { "no" }.to_string(),
            ];
            row.extend(t.metrics.iter().map(|m| {
                x.metrics.get(m).map_or("—".into(), |s| match s.ci95 {
                    Some(h) if h.is_finite() => esc(&format!("{} {}", fmt_value(m, s.mean), fmt_half(m, h))),
                    _ => esc(&fmt_value(m, s.mean)),
                })
            }));
            row
        })
        .collect();
    let align: String = std::iter::repeat_n('r', head.len()).collect();
    b.push_str(&table(Some("Values tried"), &head, &align, &rows));
    b.push_str("</section>\n");
    let known = [(
        "tune.svg",
        "The first constrained (or the objective) metric against the parameter: mean with its 95 % band, constraints dashed, the choice marked.",
    )];
    b.push_str(&charts(dir, &known, &[], 1)?);
    Ok(page(&format!("pilotsim — tuning {} ({})", t.param, t.scenario), &b))
}
