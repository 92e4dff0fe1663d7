//! The pilot-factory section of a run's report, from the `factory` list of `summary.json`
//! (`wms::factories::summary`): one row per factory with its head-node load, its throughput
//! beside the seed's closed form (or why the closed form does not describe the run), its pilot
//! efficiency and the waits of the jobs its pilots ran.

use serde_json::Value;

use super::{esc, int, table, texts};
use crate::wms::factories::summary::CLOSED_FORM_MAX_EMPTY;

/// A rate in jobs per hour with one decimal; `—` for none.
fn per_hour(v: &Value) -> String {
    v.as_f64().filter(|x| x.is_finite()).map_or("—".into(), |x| format!("{x:.1}"))
}

/// The closed form, or why it is not shown: its premise (a pilot always finds a job) failed.
fn closed_form(f: &Value) -> String {
    let empty = f["pilots_without_job_fraction"].as_f64();
    match (f["closed_form_applies"].as_bool(), empty) {
        (Some(false), Some(e)) => format!("n/a: {:.1} % of looks found no job", 100.0 * e),
        (Some(false), None) => "n/a: no pilot started".into(),
        _ => per_hour(&f["closed_form_jobs_per_hour"]),
    }
}

/// Hours with two decimals, from seconds; `—` for none.
fn wait(f: &Value, kind: &str, q: &str) -> String {
    f["wait_time_s"][kind][q].as_f64().map_or("—".into(), |s| format!("{:.2}", s / 3600.0))
}

/// The section's HTML, empty without factories.
pub(super) fn section(factories: &[Value]) -> String {
    if factories.is_empty() {
        return String::new();
    }
    let rows: Vec<Vec<String>> = factories
        .iter()
        .map(|f| {
            let n = |k: &str| f[k].as_u64().map_or("—".into(), int);
            let label = format!("{}@{}", f["kind"].as_str().unwrap_or("?"), f["site"].as_str().unwrap_or("?"));
            vec![
                esc(&label),
                n("nodes"),
                n("pilots_submitted"),
                n("pilots_refused"),
                n("jobs_done"),
                f["submissions_per_finished_job"].as_f64().map_or("—".into(), |x| format!("{x:.3}")),
                per_hour(&f["jobs_per_hour_second_half"]),
                closed_form(f),
                f["pilot_efficiency"].as_f64().map_or("—".into(), |x| format!("{:.1} %", 100.0 * x)),
                wait(f, "production", "p50"),
                wait(f, "analysis", "p50"),
                wait(f, "analysis", "p95"),
            ]
        })
        .collect();
    let head = texts(&[
        "factory",
        "nodes",
        "pilots submitted",
        "refused",
        "jobs done",
        "submissions per job",
        "jobs/h (second half)",
        "closed form (jobs/h)",
        "pilot efficiency",
        "prod. wait p50 (h)",
        "anal. wait p50 (h)",
        "anal. wait p95 (h)",
    ]);
    let mut b = String::from("<section><h2>Pilot factories</h2>\n");
    b.push_str(&table(None, &head, "lrrrrrrrrrrr", &rows));
    b.push_str(&format!(
        "<p class=\"note\">The closed form is the seed's throughput when every node is kept busy; it is \
         shown only where at most {:.0} % of the pilots' looks for a job found none.</p>\n</section>\n",
        100.0 * CLOSED_FORM_MAX_EMPTY
    ));
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_factory_row_shows_its_closed_form_only_where_its_premise_held() {
        let held = serde_json::json!({"kind": "Generic", "site": "GPF.BNL.us", "nodes": 100, "jobs_done": 3776,
            "jobs_per_hour_second_half": 39.33, "closed_form_jobs_per_hour": 39.46, "closed_form_applies": true,
            "pilots_without_job_fraction": 0.0, "wait_time_s": {"production": {"p50": 1800.0}}});
        let lacked = serde_json::json!({"kind": "Startd", "site": "BNL.us", "nodes": 400,
            "jobs_per_hour_second_half": 60.08, "closed_form_jobs_per_hour": 354.1, "closed_form_applies": false,
            "pilots_without_job_fraction": 0.956});
        let html = section(&[held, lacked]);
        assert!(html.contains("<h2>Pilot factories</h2>"));
        assert!(html.contains("GPF.BNL.us") && html.contains(">39.5<") && html.contains(">0.50<"), "{html}");
        assert!(html.contains("n/a: 95.6 % of looks found no job") && !html.contains("354.1"), "{html}");
        assert_eq!(section(&[]), "");
    }
}
