//! Times the simulation alone (no outputs): `cargo run --release --example simulate -- FILE [RUNS]`.
//! Prints each run's build seconds (`sim::build`: every job drawn and tabled) and event-loop
//! seconds (`sim::run_to_end`), and the medians, with the event count and digest, so two builds
//! can be compared on the same scenario (docs/performance.md, "Profiling").

use std::io::Write;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(file) = args.get(1) else {
        eprintln!("usage: simulate SCENARIO.ron [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(5);
    let loaded = match pilotsim::scenario::load_file(std::path::Path::new(file)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let s = &loaded.scenario;
    let (mut builds, mut loops) = (Vec::new(), Vec::new());
    // A closed pipe (`| head -1`) ends the output, not the process with a panic.
    let mut out = std::io::stdout().lock();
    for _ in 0..runs {
        let t = Instant::now();
        let mut w = pilotsim::sim::build(s, s.seed).expect("validated when loaded");
        let build = t.elapsed().as_secs_f64();
        let t = Instant::now();
        pilotsim::sim::run_to_end(&mut w, |_, _| {});
        let secs = t.elapsed().as_secs_f64();
        let (events, digest) = summary(&w);
        let _ = writeln!(out, "{secs:.4} s  {events} events  digest {digest}  (build {build:.4} s)");
        builds.push(build);
        loops.push(secs);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[runs / 2]
    };
    let _ = writeln!(out, "median {:.4} s over {runs} runs (build {:.4} s)", median(&mut loops), median(&mut builds));
}

fn summary(w: &pilotsim::sim::World) -> (u64, String) {
    (w.core.events, w.core.digest.hex())
}
