//! The terminal report of `pilotsim run`: the headline figures of a [`Summary`] as the
//! plain-text table printed after a run (the full figures are in `summary.json`).

use std::fmt::Write as _;
use std::path::Path;

use super::format::pct;
use super::summary::Summary;

fn hours(v: Option<f64>) -> String {
    v.map_or("—".into(), |x| format!("{:.2} h", x / 3600.0))
}

/// The report printed by `pilotsim run`: run identity and speed, job and pilot counts,
/// target against achieved shares per entity, waiting times per group and per user, and where the
/// outputs are (`dir`). `origin` says where the scenario came from. Ends with a newline.
pub fn terminal_report(s: &Summary, origin: &str, dir: &Path) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_report(&mut out, s, origin, dir);
    out
}

fn write_report(out: &mut String, s: &Summary, origin: &str, dir: &Path) -> std::fmt::Result {
    writeln!(out, "pilotsim {} — {} ({origin}), seed {}", s.pilotsim_version, s.scenario, s.seed)?;
    writeln!(
        out,
        "simulated {:.1} h: {} events in {:.2} s ({:.0} events/s), digest {}",
        s.simulated_hours, s.events, s.wall_seconds, s.events_per_second, s.digest
    )?;
    let j = &s.jobs;
    // The submitted jobs in no other count were cancelled (DIRAC) or closed (PanDA: a task
    // whose chunk was done by another job, a killed retry): shown, so that the counts add up.
    let cancelled = j.submitted.saturating_sub(j.done + j.failed + j.running_at_end + j.waiting_at_end);
    writeln!(
        out,
        "jobs:   {} submitted, {} done, {} failed, {cancelled} cancelled or closed, {} running and {} waiting at the end",
        j.submitted, j.done, j.failed, j.running_at_end, j.waiting_at_end
    )?;
    let p = &s.pilots;
    let refused =
        if p.refused > 0 { format!(" ({} more refused by full CE queues)", p.refused) } else { String::new() };
    writeln!(out, "pilots: {} submitted{refused}, {} running at the end", p.submitted, p.running_at_end)?;
    writeln!(
        out,
        "        {} ran a job, {} ran none ({} of them failed at start); {} never started \
         ({} aborted, {} still waiting); {} cancelled",
        p.used, p.empty, p.failed, p.never_started, p.aborted, p.waiting_at_end, p.cancelled
    )?;
    writeln!(
        out,
        "efficiency: {} of started pilots ran a job (pilot_efficiency), {} of submitted ones (submission_efficiency)",
        pct(s.pilot_efficiency),
        pct(s.submission_efficiency)
    )?;
    if let Some(g) = &s.gpus {
        let h = |v: Option<f64>| hours(v.map(|x| x * 3600.0));
        writeln!(
            out,
            "gpus:   {} GPUs, {} used by jobs, {} held by pilots; {} GPU jobs, {} waiting at the end, wait p50 {}, p95 {}",
            g.gpus,
            pct(g.utilisation),
            pct(g.held_fraction),
            g.jobs_submitted,
            g.jobs_waiting_at_end,
            h(g.wait_p50_h),
            h(g.wait_p95_h)
        )?;
    }
    writeln!(
        out,
        "\n{:<28} {:>7} {:>9} {:>9}   (shares of running time after {:.1} h warm-up: DIRAC in jobs, PanDA in cores)",
        "entity", "target", "achieved", "deviation", s.warmup_hours
    )?;
    for (name, e) in &s.entities {
        let indent = if e.level == "user" { "  " } else { "" };
        writeln!(
            out,
            "{:<28} {:>7} {:>9} {:>9}",
            format!("{indent}{name}"),
            pct(Some(e.target_share)),
            pct(e.achieved_share),
            pct(e.deviation)
        )?;
    }
    writeln!(out, "max group share deviation: {}", pct(s.max_share_deviation))?;
    writeln!(out, "\n{:<28} {:>8} {:>10} {:>10}", "waiting time", "jobs", "p50", "p95")?;
    for (g, w) in &s.wait_time_s {
        writeln!(out, "{g:<28} {:>8} {:>10} {:>10}", w.n, hours(w.p50), hours(w.p95))?;
    }
    if !s.users.is_empty() {
        writeln!(
            out,
            "\n{:<28} {:>8} {:>10} {:>10} {:>9} {:>7}   (share of the group's running time)",
            "user", "jobs", "p50", "p95", "achieved", "target"
        )?;
        for (name, u) in &s.users {
            writeln!(
                out,
                "{name:<28} {:>8} {:>10} {:>10} {:>9} {:>7}",
                u.wait_s.n,
                hours(u.wait_s.p50),
                hours(u.wait_s.p95),
                pct(u.achieved_share),
                pct(u.target_share)
            )?;
        }
    }
    if !s.warnings.is_empty() {
        writeln!(out)?;
        for w in &s.warnings {
            writeln!(out, "warning: {w}")?;
        }
    }
    writeln!(out, "\noutputs in {}/ (scenario.ron: the scenario as run)", dir.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_values_are_dashes() {
        assert_eq!(pct(None), "—");
        assert_eq!(pct(Some(0.1234)), "12.3%");
        assert_eq!(hours(Some(5400.0)), "1.50 h");
        assert_eq!(hours(None), "—");
    }

    /// Jobs cancelled (DIRAC) or closed (PanDA) are in `submitted` and in no other count: the
    /// report shows them, so that its counts add up (here 3 of them, added to a real summary).
    #[test]
    fn the_job_counts_add_up() {
        let p = crate::run::prepare(&crate::scenario::quickstart(), &["duration_s=14400".into()]).unwrap();
        let mut s = crate::run::simulate(&p, 42, |_, _| {}).unwrap().summary();
        s.jobs.submitted += 3;
        let j = &s.jobs;
        let report = terminal_report(&s, "test", Path::new("out"));
        let want = format!(
            "jobs:   {} submitted, {} done, {} failed, 3 cancelled or closed, {} running and {} waiting at the end\n",
            j.submitted, j.done, j.failed, j.running_at_end, j.waiting_at_end
        );
        assert!(report.contains(&want), "{report}");
    }
}
