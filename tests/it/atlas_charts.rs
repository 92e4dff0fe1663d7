//! The charts of the ATLAS week (`pilotsim generate atlas`, 150 PanDA queues, 20 000 jobs) as a
//! reviewer sees them: every queue box of the wait chart carries its name, the share chart is
//! drawn, and the report's PanDA counters keep long reasons inside their cells.

use std::path::PathBuf;
use std::process::Command;

fn pilotsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pilotsim"))
}

#[test]
fn the_atlas_week_charts_label_every_queue_and_its_report_wraps_long_counters() {
    let d = std::env::temp_dir().join(format!("pilotsim-atlas-charts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let scenario: PathBuf = d.join("atlas.ron");
    let g = pilotsim().args(["generate", "atlas", "--jobs", "2e4"]).output().unwrap();
    assert!(g.status.success());
    std::fs::write(&scenario, &g.stdout).unwrap();
    let out = d.join("run");
    let r = pilotsim().args(["run", "-q", "--out"]).arg(&out).arg(&scenario).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));

    // Queue waits: 16 boxes, each with a turned name under it (and the turned y description).
    let svg = std::fs::read_to_string(out.join("queue_waits.svg")).unwrap();
    let turned = svg.matches("transform=\"rotate(270").count();
    assert_eq!(turned, 17, "one turned label per box, plus the y description");
    let count = |name: &str| svg.matches(&format!("\n{name}\n")).count();
    for name in ["AGLT2", "CA-SFU-T2_TEST", "FZK-LCG2", "GoeGrid"] {
        assert!(count(name) >= 2, "{name}: in the legend and under its box");
    }
    // Beyond the legend's room ("+ 5 more"): under its box only.
    assert_eq!(count("TRIUMF-LCG2"), 1);

    // Share convergence: drawn, its lines starting after the first samples (a few jobs running,
    // left as a gap: `report::outputs::share_chart`).
    let share = std::fs::read_to_string(out.join("share_convergence.svg")).unwrap();
    assert!(share.contains("MC Simulation Full") && share.contains("<polyline"));

    // The report: PanDA's counters one per line.
    let rep = pilotsim().arg("report").arg(&out).output().unwrap();
    assert!(rep.status.success());
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("reassignJobs for JEDI at inactive site") && html.contains("<br>"));
    assert!(!html.contains("Pilot factories"), "no factory section without factories");
}
