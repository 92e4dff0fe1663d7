//! Warnings for a run whose figures mean little: nothing was created or finished, every PanDA
//! task waited for a nucleus, most pilots found no job, a job stream or a PanDA queue never ran
//! anything. Each says what happened and, where the WMS logged one, why (PanDA's most frequent
//! pending reason). They are printed after the run and kept in `summary.json` (`warnings`); a
//! run with warnings still succeeds: the numbers are right, but they answer no question.

use super::RunData;
use super::summary::Summary;

/// Below this pilot efficiency (used / started pilots) most pilots were sent for nothing.
pub const LOW_PILOT_EFFICIENCY: f64 = 0.10;

/// PanDA's most frequent brokerage pending reason in its summary, with its count.
fn top_pending_reason(panda: &serde_json::Value) -> Option<(String, u64)> {
    top_reason(panda.pointer("/brokerage/pending_by_reason")?)
}

/// The most frequent reason of a `{reason: count}` object (ties: the first by name).
fn top_reason(reasons: &serde_json::Value) -> Option<(String, u64)> {
    reasons
        .as_object()?
        .iter()
        .filter_map(|(r, n)| Some((r.clone(), n.as_u64()?)))
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
}

/// The warnings of a finished run, in a fixed order.
pub fn of(run: &RunData, s: &Summary) -> Vec<String> {
    let mut w = Vec::new();
    let panda = s.wms.get("panda");
    let why = panda
        .and_then(top_pending_reason)
        .map(|(r, n)| format!("; PanDA's most frequent pending reason: \"{r}\" ({n} times)"))
        .unwrap_or_default();
    // DIRAC's jobs exist from the start, `Pending` until their arrival: created means submitted.
    if s.jobs.submitted == 0 {
        w.push(format!("no job was created{why}"));
    } else if s.jobs.done == 0 {
        w.push(format!("none of the {} jobs finished{why}", s.jobs.submitted));
    }
    if let Some(tasks) = panda.and_then(|p| p.get("tasks")).and_then(|t| t.as_object()) {
        // Tasks by JEDI status; `registered` ones have not arrived, `replay` ones are records.
        let n = |st: &str| tasks.get(st).and_then(|n| n.as_u64()).unwrap_or(0);
        let arrived: u64 = tasks
            .iter()
            .filter(|(st, _)| !matches!(st.as_str(), "registered" | "replay"))
            .filter_map(|(_, n)| n.as_u64())
            .sum();
        if arrived > 0 && n("assigning") == arrived {
            w.push(format!("every PanDA task that arrived ({arrived}) is still assigning: no nucleus took it{why}"));
        }
    }
    if let Some(e) = s.pilot_efficiency.filter(|&e| e < LOW_PILOT_EFFICIENCY) {
        w.push(format!(
            "pilot efficiency {:.1} % (under {:.0} %): {} of {} started pilots found no job",
            100.0 * e,
            100.0 * LOW_PILOT_EFFICIENCY,
            s.pilots.empty,
            s.pilots.empty + s.pilots.used
        ));
    }
    // Streams: jobs created and jobs that started, by stream.
    let mut created = vec![0u64; run.streams.len()];
    let mut ran = vec![0u64; run.streams.len()];
    for j in run.jobs.iter().filter(|j| j.status != crate::workload::JobStatus::Pending) {
        if let Some(k) = created.get_mut(j.stream as usize) {
            *k += 1;
            ran[j.stream as usize] += u64::from(j.matched().is_some());
        }
    }
    for (k, st) in run.streams.iter().enumerate() {
        let why = panda
            .and_then(|p| p.pointer("/brokerage/pending_by_stream")?.get(&st.name))
            .and_then(top_reason)
            .map(|(r, n)| format!("; PanDA's most frequent pending reason for it: \"{r}\" ({n} times)"))
            .unwrap_or_default();
        let unarrived = panda
            .and_then(|p| p.pointer("/tasks_not_arrived_by_stream")?.get(&st.name)?.as_u64())
            .filter(|&n| n > 0)
            .map(|n| format!(": its {n} tasks had not arrived by the end"))
            .unwrap_or_default();
        match (created[k], ran[k]) {
            (0, _) => w.push(format!("stream {:?} created no job{unarrived}{why}", st.name)),
            (n, 0) => w.push(format!("stream {:?}: none of its {n} jobs ran{why}", st.name)),
            _ => {}
        }
    }
    if let Some(queues) = panda.and_then(|p| p.get("queues")).and_then(|q| q.as_object()) {
        let idle: Vec<&str> = queues
            .iter()
            .filter(|(_, q)| q.get("jobs_started").and_then(|n| n.as_u64()) == Some(0))
            .map(|(name, _)| name.as_str())
            .collect();
        if let Some(first) = idle.first() {
            let listed = idle.iter().take(MAX_LISTED).map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ");
            let more =
                if idle.len() > MAX_LISTED { format!(" and {} more", idle.len() - MAX_LISTED) } else { String::new() };
            w.push(format!(
                "{} of {} PanDA queues ran no job: {listed}{more} (why: `pilotsim explain RUN_DIR --queue {first}`)",
                idle.len(),
                queues.len()
            ));
        }
    }
    w
}

/// Idle PanDA queues named in the warning; the rest are counted.
const MAX_LISTED: usize = 8;
