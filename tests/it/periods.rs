//! Every period of the scenario schema is a `Period`: 0.4 ms set on any time field of any
//! shipped scenario is either refused with the field's path, or the field is one of the
//! durations listed below, which reschedule nothing.
//!
//! The fields are found by walking each shipped scenario as `--set` sees it, so a period added
//! later as a bare number (a `*_s` field that nothing refuses) fails here until it is made a
//! `Period` or listed as a duration with the reason.

use std::collections::BTreeSet;

use pilotsim::scenario::{self, overrides};
use serde_json::Value;

/// Time fields that are not periods: spans, offsets and durations that schedule one event
/// each, never a timer that fires again. Schema paths, indices as `*`.
const DURATIONS: &[&str] = &[
    "duration_s",                                               // the run's end
    "output.warmup_s",                                          // where the statistics start
    "workload.*.arrival.Poisson.start_s",                       // when a stream starts
    "workload.*.arrival.Spread.start_s",                        // (arrivals are counted and bounded by `count`)
    "workload.*.arrival.Spread.end_s",                          //
    "workload.*.arrival.Burst.at_s",                            //
    "sites.*.ces.*.max_walltime_s",                             // a pilot's wall-time limit: one event per pilot
    "dirac.director.lowest_cpu_boost_s",                        // a CPU-time boost, not a time step
    "dirac.job_agent.stop_margin_s",                            // wall time kept in reserve
    "dirac.task_queues.empty_tq_lifetime_s",                    // one deletion per emptied TQ
    "dirac.share_corrections.instances.*.slices.*.time_span_s", // a history window
    "factory.*.Generic.pilot_script_s",                         // tp: one step per pilot
    "factory.*.Generic.job_fetch_s",                            // tpw: one step per job
    "factory.*.Startd.pilot_script_s",                          //
    "factory.*.Startd.job_fetch_s",                             //
    "factory.*.Startd.standby.Adaptive.initial_queue_wait_s",   // the controller's first estimates
    "factory.*.Startd.standby.Adaptive.initial_lifetime_s",     //
    "factory.*.Startd.standby.Adaptive.rate_window_s",          // a smoothing constant, read at each cycle
    "panda.replay.*.start_s",                                   // when a replay starts
    "panda.tasks.*.arrival.Spread.start_s",                     // PanDA's task and analysis arrivals, as the
    "panda.tasks.*.arrival.Spread.end_s",                       // workload's
    "panda.tasks.*.arrival.Poisson.start_s",                    //
    "panda.tasks.*.arrival.Burst.at_s",                         //
    "panda.analysis.*.arrival.Spread.start_s",                  //
    "panda.analysis.*.arrival.Spread.end_s",                    //
    "panda.analysis.*.arrival.Poisson.start_s",                 //
    "panda.analysis.*.arrival.Burst.at_s",                      //
];

/// A `--set` path as messages write it: `factory.1.Startd` → `factory[1].Startd`.
fn message_path(path: &str) -> String {
    let mut out = String::new();
    for seg in path.split('.') {
        if seg.parse::<usize>().is_ok() {
            out += &format!("[{seg}]");
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out += seg;
        }
    }
    out
}

/// The schema path of a `--set` path: list indices become `*`.
fn schema(path: &str) -> String {
    path.split('.').map(|seg| if seg.parse::<usize>().is_ok() { "*" } else { seg }).collect::<Vec<_>>().join(".")
}

/// Every numeric leaf whose name is a time in seconds (`*_s`) or one of Harvester's cycles
/// (`lookupTime`), first instance of each schema path.
fn time_leaves(v: &Value, path: &str, seen: &mut BTreeSet<String>, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                time_leaves(child, &p, seen, out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                time_leaves(child, &format!("{path}.{i}"), seen, out);
            }
        }
        Value::Number(_) => {
            let name = path.rsplit('.').next().unwrap_or(path);
            if (name.ends_with("_s") || name == "lookupTime") && seen.insert(schema(path)) {
                out.push(path.to_string());
            }
        }
        _ => {}
    }
}

#[test]
fn a_period_under_a_second_is_refused_on_every_period_field_of_every_shipped_scenario() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut seen = BTreeSet::new();
    let (mut refused, mut wrong) = (Vec::new(), Vec::new());
    for file in files.iter().filter(|f| f.extension().is_some_and(|e| e == "ron")) {
        let loaded = scenario::load_file(file).unwrap();
        let tree = serde_json::to_value(&loaded.scenario).unwrap();
        let mut leaves = Vec::new();
        time_leaves(&tree, "", &mut seen, &mut leaves);
        for path in leaves {
            let set = format!("{path}=0.0004");
            let outcome = overrides::apply(&loaded.scenario, std::slice::from_ref(&set))
                .map(|s| scenario::validate(&s).into_iter().map(|p| format!("{}: {}", p.path, p.message)).collect());
            let messages: Vec<String> = match outcome {
                Ok(problems) => problems,
                Err(e) => vec![e],
            };
            let is_duration = DURATIONS.contains(&schema(&path).as_str());
            let names_field = messages.iter().any(|m| m.contains(&message_path(&path)) && m.contains("at least 1 s"));
            match (is_duration, names_field) {
                (false, true) => refused.push(path),
                (true, _) => {}
                (false, false) => wrong.push(format!("{}: {set} gave {messages:?}", file.display())),
            }
        }
    }
    assert!(wrong.is_empty(), "time fields neither refused at 0.4 ms nor listed as durations:\n{}", wrong.join("\n"));
    // The periods of every system: DIRAC's agents and JobAgent, PanDA's agents and Harvester, the
    // factories' cycles and the startd pilots' interval.
    for want in [
        "dirac.director.polling_time_s",
        "dirac.priority.recalculation_period_s",
        "dirac.share_corrections.update_history_period_s",
        "dirac.job_agent.polling_time_s",
        "panda.agents.task_brokerage_s",
        "panda.agents.job_generation_s",
        "panda.agents.copy_archive_s",
        "panda.agents.gshare_refresh_s",
        "panda.agents.adder_s",
        "panda.harvester.lookupTime",
        "factory.0.Generic.cycle_s",
        "factory.0.Startd.cycle_s",
        "factory.0.Startd.pilot_interval_s",
    ] {
        assert!(
            refused.iter().any(|p| schema(p) == schema(want)),
            "{want} not found or not refused; refused: {refused:?}"
        );
    }
}

#[test]
fn a_period_under_a_second_in_a_file_names_its_line_and_field() {
    let text = scenario::QUICKSTART.replacen("dirac: (", "dirac: (\n    director: (polling_time_s: 0.0004),", 1);
    assert_ne!(text, scenario::QUICKSTART, "the quickstart has a dirac section");
    let e = scenario::load_str(&text, "q.ron").unwrap_err().to_string();
    assert!(e.starts_with("q.ron:") && e.contains("dirac.director.polling_time_s: a period must be"), "{e}");
}
