//! The text form of an [`Explanation`]: what `pilotsim explain` prints without `--json`.

use std::fmt::Write as _;

use super::{
    DecisionView, Explanation, JobExplanation, JobLife, NOTHING_PLACED, Outcome, QueueExplanation, QueueTally,
    QueueVerdict, Scope, TaskExplanation, placed_nothing,
};

/// Seconds since the start as `HH:MM` (hours may exceed 24).
pub fn hours_minutes(s: f64) -> String {
    if !s.is_finite() {
        return "--:--".into();
    }
    let m = (s.max(0.0) / 60.0).floor() as u64;
    format!("{:02}:{:02}", m / 60, m % 60)
}

/// Seconds with at most three decimals, trailing zeros dropped.
pub(super) fn secs(s: f64) -> String {
    let t = format!("{s:.3}");
    let t = t.trim_end_matches('0').trim_end_matches('.');
    format!("{t} s")
}

/// `HH:MM (S s)`.
fn when(s: f64) -> String {
    format!("{} ({})", hours_minutes(s), secs(s))
}

/// A weight with four significant digits (`5.5`, `0.05`, `1.1e-5`, `520`).
pub(super) fn weight(w: Option<f64>) -> String {
    match w {
        None => "—".into(),
        Some(0.0) => "0".into(),
        Some(w) if !w.is_finite() => format!("{w}"),
        Some(w) if !(1e-3..1e6).contains(&w.abs()) => {
            let t = format!("{w:.3e}");
            let (m, e) = t.split_once('e').unwrap_or((&t, "0"));
            let m = if m.contains('.') { m.trim_end_matches('0').trim_end_matches('.') } else { m };
            format!("{m}e{e}")
        }
        Some(w) => {
            let digits = w.abs().log10().floor() as i32;
            let decimals = (3 - digits).max(0) as usize;
            let t = format!("{w:.decimals$}");
            if t.contains('.') { t.trim_end_matches('0').trim_end_matches('.').to_string() } else { t }
        }
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// "job brokerage #7 of task 3".
fn decision_name(kind: &str, id: u32, task: u32) -> String {
    let what = match kind {
        "task" => "task brokerage",
        "job" => "job brokerage",
        "analysis" => "analysis brokerage",
        other => other,
    };
    format!("{what} #{id} of task {task}")
}

/// The verdict of `queue` in decision `d` as one sentence.
pub(super) fn sentence(queue: &str, v: &QueueVerdict, d: &DecisionView) -> String {
    let at = when(v.time_s);
    let name = decision_name(&v.kind, v.brokerage_id, v.jedi_task_id);
    let mut s = match &v.outcome {
        Outcome::Chosen { weight: w, jobs } => {
            format!(
                "{queue} was chosen at {at} with weight {} and got {} ({name})",
                weight(*w),
                plural(u64::from(*jobs), "job", "jobs")
            )
        }
        Outcome::Candidate { weight: w } if d.chosen.is_empty() => {
            format!(
                "{queue} was a candidate at {at} with weight {} but got no jobs: the decision {NOTHING_PLACED} ({name})",
                weight(*w)
            )
        }
        Outcome::Candidate { weight: w } => {
            let went: Vec<String> = d
                .chosen
                .iter()
                .map(|c| {
                    format!("{} (weight {}, {})", c.name, weight(c.weight), plural(u64::from(c.jobs), "job", "jobs"))
                })
                .collect();
            format!(
                "{queue} was a candidate at {at} with weight {} but got no jobs: the site picker drew {} ({name})",
                weight(*w),
                went.join(", ")
            )
        }
        Outcome::Skipped { stage, reason, temporary } => {
            let tmp = if *temporary { " (a temporary skip: retried next cycle)" } else { "" };
            format!("{queue} was skipped at {at} by {stage}: {reason}{tmp} ({name})")
        }
        Outcome::Absent => {
            format!("{queue} was not looked at by {name} at {at}: it was not among the PQs this brokerage considered")
        }
    };
    for e in &v.earlier_skips {
        let _ = write!(s, "; {} had skipped it first ({}), a later loop took it back", e.stage, e.reason);
    }
    if let (Some(p), false) = (&d.pending, matches!(v.outcome, Outcome::Chosen { .. })) {
        let _ = write!(s, "; the decision chose nothing: {p}");
    }
    s
}

/// The text `pilotsim explain` prints.
pub fn render_text(e: &Explanation) -> String {
    let mut b = String::new();
    match e {
        Explanation::Job(j) => job(&mut b, j),
        Explanation::Task(t) => task(&mut b, t),
        Explanation::Queue(q) => queue(&mut b, q),
    }
    b
}

fn life(b: &mut String, j: &JobLife, run: &super::RunIdent) {
    let attempt = j.attempt_nr.map_or(String::new(), |a| format!(", attempt {a}"));
    let gshare = j.gshare.as_ref().map_or(String::new(), |g| format!(", gshare {g}"));
    let _ = writeln!(
        b,
        "job {} — task {}{attempt}{gshare} ({}, seed {})",
        j.job_id, j.jedi_task_id, run.scenario, run.seed
    );
    let status = j.panda_status.as_deref().unwrap_or("unknown status");
    let mut ran = match (&j.ce, &j.site, j.pilot_id) {
        (Some(ce), Some(site), Some(p)) => format!("; ran on CE {ce} (site {site}), pilot {p}"),
        (Some(ce), _, _) => format!("; ran on CE {ce}"),
        _ => String::new(),
    };
    if let Some(m) = &j.gpu_model {
        ran.push_str(&format!(", GPU {m}"));
    }
    let _ = writeln!(b, "PQ {}, {status}{ran}", j.computingsite);
    let w = j.states.iter().map(|s| s.status.len()).max().unwrap_or(0);
    for s in &j.states {
        let _ = writeln!(b, "  {:<w$}  {}  ({})", s.status, hours_minutes(s.time_s), secs(s.time_s));
    }
}

/// The candidate lines of a decision, `mark` flagged as "this job".
fn candidates(b: &mut String, d: &DecisionView, mark: Option<&str>) {
    let names =
        d.chosen.iter().chain(&d.candidates).map(|c| c.name.len()).chain(d.skipped.iter().map(|s| s.name.len()));
    let w = names.max().unwrap_or(0);
    let ws: Vec<String> = d.chosen.iter().chain(&d.candidates).map(|c| weight(c.weight)).collect();
    let ww = ws.iter().map(String::len).max().unwrap_or(0);
    for (i, (c, wt)) in d.chosen.iter().chain(&d.candidates).zip(&ws).enumerate() {
        let verdict = if i < d.chosen.len() { "chosen   " } else { "candidate" };
        let jobs =
            if d.kind == "task" { String::new() } else { format!("  {}", plural(u64::from(c.jobs), "job", "jobs")) };
        let this = if mark == Some(c.name.as_str()) { "  <- this job" } else { "" };
        let _ = writeln!(b, "  {verdict}  {:<w$}  weight {wt:<ww$}{jobs}{this}", c.name);
    }
    for s in &d.skipped {
        let tmp = if s.temporary { " [temporary]" } else { "" };
        let later = if s.weighed_later { " [weighed in a later loop]" } else { "" };
        let _ = writeln!(b, "  skipped    {:<w$}  {}: {}{tmp}{later}", s.name, s.stage, s.reason);
    }
}

fn job(b: &mut String, e: &JobExplanation) {
    let j = &e.job;
    life(b, j, &e.run);
    b.push('\n');
    if let Some(id) = j.recorded_pandaid {
        let _ = writeln!(
            b,
            "Replayed from a job record (PandaID {id}): no brokerage placed it; it was created on its\n\
             recorded PQ {} at its recorded creation time.",
            j.computingsite
        );
        return;
    }
    match &e.placement {
        Some(d) => {
            let n = d.chosen.len() as u64;
            let _ = writeln!(
                b,
                "Placed by {} at {}: {} of the task to {}",
                decision_name(&d.kind, d.brokerage_id, d.jedi_task_id),
                when(d.time_s),
                plural(u64::from(d.jobs), "job", "jobs"),
                plural(n, "PQ", "PQs")
            );
            candidates(b, d, Some(&j.computingsite));
            if d.chosen.len() + d.candidates.len() > 1 {
                b.push_str(
                    "  (JEDI's site picker draws a PQ for each 25 jobs in proportion to these weights and lowers a\n   \
                     PQ's weight after each draw, so a PQ of lower weight can get jobs too.)\n",
                );
            }
        }
        None => {
            let id = j.brokerage_id.map_or("none".to_string(), |b| format!("#{b}"));
            let _ = writeln!(b, "Its brokerage decision ({id}) is not in brokerage.parquet.");
        }
    }
    let analysis = e.placement.as_ref().is_some_and(|d| d.kind == "analysis");
    if analysis {
        b.push_str("\nAn analysis job: analysis brokerage picks PQs directly, there is no task brokerage (nucleus).\n");
        return;
    }
    b.push('\n');
    if e.task_brokerage.is_empty() {
        let _ = writeln!(b, "Task {}: no task brokerage in brokerage.parquet.", j.jedi_task_id);
        return;
    }
    let _ = writeln!(b, "Task brokerage of task {} (to a nucleus):", j.jedi_task_id);
    for d in &e.task_brokerage {
        b.push_str("  ");
        task_decision(b, d);
    }
}

fn task_decision(b: &mut String, d: &DecisionView) {
    match (&d.pending, d.chosen.first()) {
        (Some(p), _) => {
            let _ = writeln!(b, "#{} at {}: pending — {p}", d.brokerage_id, when(d.time_s));
        }
        (None, Some(n)) => {
            let _ = writeln!(
                b,
                "#{} at {}: nucleus {} (weight {})",
                d.brokerage_id,
                when(d.time_s),
                n.name,
                weight(n.weight)
            );
        }
        (None, None) => {
            let _ = writeln!(b, "#{} at {}: no nucleus recorded", d.brokerage_id, when(d.time_s));
        }
    }
    if d.candidates.len() + d.skipped.len() > 0 {
        candidates(b, &DecisionView { chosen: Vec::new(), ..d.clone() }, None);
    }
}

/// One line per decision: jobs per PQ, candidates, skips grouped by filter.
fn decision_line(d: &DecisionView) -> String {
    let mut parts = Vec::new();
    match &d.pending {
        Some(p) => parts.push(format!("pending ({p})")),
        None if placed_nothing(d) => parts.push("placed no job, no pending reason (candidates at their cap)".into()),
        None => {
            let got: Vec<String> =
                d.chosen.iter().map(|c| format!("{} {} (w {})", c.name, c.jobs, weight(c.weight))).collect();
            parts.push(format!("{}: {}", plural(u64::from(d.jobs), "job", "jobs"), got.join(", ")));
        }
    }
    if !d.candidates.is_empty() {
        let c: Vec<String> = d.candidates.iter().map(|c| format!("{} (w {})", c.name, weight(c.weight))).collect();
        parts.push(format!("no jobs for {}", c.join(", ")));
    }
    let mut by_stage: Vec<(String, Vec<String>)> = Vec::new();
    for s in d.skipped.iter().filter(|s| !s.weighed_later) {
        match by_stage.iter_mut().find(|(st, _)| *st == s.stage) {
            Some((_, names)) => names.push(s.name.clone()),
            None => by_stage.push((s.stage.clone(), vec![s.name.clone()])),
        }
    }
    if !by_stage.is_empty() {
        let s: Vec<String> = by_stage.iter().map(|(st, names)| format!("{st} {}", names.join(", "))).collect();
        parts.push(format!("skipped by {}", s.join("; ")));
    }
    parts.join("; ")
}

fn tally_rows(b: &mut String, queues: &[QueueTally]) {
    let w = queues.iter().map(|q| q.queue.len()).max().unwrap_or(2).max(2);
    let _ = writeln!(
        b,
        "  {:<w$}  {:>6}  {:>6}  {:>9}  {:>7}  {:>13}  skipped by",
        "PQ", "jobs", "chosen", "candidate", "skipped", "not looked at"
    );
    for q in queues {
        let skipped: u32 = q.skipped.iter().map(|s| s.count).sum();
        let by: Vec<String> = q.skipped.iter().map(|s| format!("{} {}", s.stage, s.count)).collect();
        let line = format!(
            "  {:<w$}  {:>6}  {:>6}  {:>9}  {:>7}  {:>13}  {}",
            q.queue,
            q.jobs,
            q.chosen,
            q.candidate,
            skipped,
            q.absent,
            by.join(", ")
        );
        let _ = writeln!(b, "{}", line.trim_end());
    }
    let last: Vec<&QueueTally> = queues.iter().filter(|q| q.last_skip.is_some()).collect();
    if !last.is_empty() {
        b.push_str("  last skip of each PQ:\n");
        for q in last {
            if let Some(l) = &q.last_skip {
                let tmp = if l.temporary { " [temporary]" } else { "" };
                let _ = writeln!(
                    b,
                    "    {:<w$}  #{} at {} by {}: {}{tmp}",
                    q.queue,
                    l.brokerage_id,
                    when(l.time_s),
                    l.stage,
                    l.reason
                );
            }
        }
    }
}

fn task(b: &mut String, t: &TaskExplanation) {
    let gshare = t.gshare.as_ref().map_or(String::new(), |g| format!(", gshare {g}"));
    let _ = writeln!(b, "task {} — {}{gshare} ({}, seed {})", t.jedi_task_id, t.kind, t.run.scenario, t.run.seed);
    let n: u64 = t.jobs_by_status.values().sum();
    let by: Vec<String> = t.jobs_by_status.iter().map(|(s, c)| format!("{c} {s}")).collect();
    let by = if by.is_empty() { String::new() } else { format!(": {}", by.join(", ")) };
    let _ = writeln!(b, "{}{by}; {} (attempt > 1)", plural(n, "job", "jobs"), plural(t.retries, "retry", "retries"));
    if t.kind == "replay" {
        b.push_str(
            "\nThe task of a replay stream: its jobs are job records, created on their recorded PQs\n\
             without brokerage.\n",
        );
        return;
    }
    if t.kind != "analysis" {
        b.push('\n');
        let _ =
            writeln!(b, "Task brokerage (nucleus): {}", plural(t.task_brokerage.len() as u64, "decision", "decisions"));
        for d in &t.task_brokerage {
            b.push_str("  ");
            task_decision(b, d);
        }
    }
    let what = if t.kind == "analysis" { "Analysis brokerage" } else { "Job brokerage" };
    let placed = t.decisions.iter().filter(|d| d.jobs > 0).count() as u64;
    let pending = t.decisions.iter().filter(|d| d.pending.is_some()).count() as u64;
    let nothing = t.decisions.iter().filter(|d| placed_nothing(d)).count() as u64;
    let jobs: u64 = t.decisions.iter().map(|d| u64::from(d.jobs)).sum();
    let nothing =
        if nothing > 0 { format!(", {nothing} placed nothing without a pending reason") } else { String::new() };
    let _ = writeln!(
        b,
        "\n{what}: {}: {placed} placed {}, {pending} pending{nothing}",
        plural(t.decisions.len() as u64, "decision", "decisions"),
        plural(jobs, "job", "jobs"),
    );
    if !t.queues.is_empty() {
        tally_rows(b, &t.queues);
    }
    for g in &t.pending {
        let span = if g.cycles > 1 {
            format!("{} cycles from {} to {}", g.cycles, when(g.first_s), when(g.last_s))
        } else {
            format!("1 cycle at {}", when(g.first_s))
        };
        let what = if g.recorded { "Pending" } else { "Placed nothing" };
        let _ = writeln!(b, "\n{what} ({} brokerage): {span}: {}", g.kind, g.reason);
        for bl in &g.blocked_by {
            let c: Vec<String> = bl.candidates.iter().map(|c| format!("{} ({})", c.name, c.count)).collect();
            let _ = writeln!(b, "  {} skipped {}", bl.stage, c.join(", "));
        }
    }
    if !t.decisions.is_empty() {
        b.push_str("\nDecisions (runs of identical ones merged):\n");
        // Consecutive decisions with the same line are shown once, with their span.
        let mut runs: Vec<(String, String, String)> = Vec::new();
        let mut i = 0;
        while i < t.decisions.len() {
            let line = decision_line(&t.decisions[i]);
            let mut k = i + 1;
            while k < t.decisions.len() && decision_line(&t.decisions[k]) == line {
                k += 1;
            }
            let (a, z) = (&t.decisions[i], &t.decisions[k - 1]);
            if k - i == 1 {
                runs.push((format!("#{}", a.brokerage_id), when(a.time_s), line));
            } else {
                let ids = format!("#{}…#{}", a.brokerage_id, z.brokerage_id);
                runs.push((ids, format!("{}–{} ×{}", when(a.time_s), when(z.time_s), k - i), line));
            }
            i = k;
        }
        let w = runs.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
        let tw = runs.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
        for (ids, at, line) in runs {
            let _ = writeln!(b, "  {ids:<w$}  {at:<tw$}  {line}");
        }
    }
}

fn queue(b: &mut String, q: &QueueExplanation) {
    let t = &q.tally;
    let run = format!("({}, seed {})", q.run.scenario, q.run.seed);
    match &q.scope {
        Scope::Job { job } => {
            let attempt = job.attempt_nr.map_or(String::new(), |a| format!(", attempt {a}"));
            let _ = writeln!(
                b,
                "job {} — task {}{attempt}, at PQ {} {run}",
                job.job_id, job.jedi_task_id, job.computingsite
            );
            if q.verdicts.is_empty() {
                let _ = writeln!(b, "Its brokerage decision is not in brokerage.parquet.");
            }
            for v in &q.verdicts {
                let this = if job.computingsite == q.queue { ", this job among them" } else { "" };
                let _ = writeln!(b, "{}{this}.", v.sentence);
            }
            return;
        }
        Scope::Task { jedi_task_id } => {
            let _ = writeln!(
                b,
                "{} in the {} of task {jedi_task_id} {run}:",
                q.queue,
                plural(u64::from(t.decisions), "PQ brokerage", "PQ brokerages")
            );
        }
        Scope::Run => {
            let _ = writeln!(
                b,
                "{} in the {} of the run {run}:",
                q.queue,
                plural(u64::from(t.decisions), "PQ brokerage", "PQ brokerages")
            );
        }
    }
    let skipped: u32 = t.skipped.iter().map(|s| s.count).sum();
    let by: Vec<String> = t.skipped.iter().map(|s| format!("{} {}", s.stage, s.count)).collect();
    let by = if by.is_empty() { String::new() } else { format!(" ({})", by.join(", ")) };
    let _ = writeln!(
        b,
        "  chosen {} ({}), a candidate without jobs {}, skipped {}{by}, not looked at {}",
        plural(u64::from(t.chosen), "time", "times"),
        plural(t.jobs, "job", "jobs"),
        plural(u64::from(t.candidate), "time", "times"),
        plural(u64::from(skipped), "time", "times"),
        plural(u64::from(t.absent), "time", "times"),
    );
    if let Some(l) = &t.last_skip {
        let tmp = if l.temporary { " [temporary]" } else { "" };
        let _ =
            writeln!(b, "  last skipped at {} by {}: {}{tmp} (#{})", when(l.time_s), l.stage, l.reason, l.brokerage_id);
    }
    let of = if matches!(q.scope, Scope::Run) { "the run" } else { "the task" };
    let _ = writeln!(b, "  {} of {of} are at {}", plural(q.jobs_here, "job", "jobs"), q.queue);
    if !q.verdicts.is_empty() {
        b.push('\n');
        for v in &q.verdicts {
            let _ = writeln!(b, "{}.", v.sentence);
        }
    }
}
