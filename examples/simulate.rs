//! Times the simulation alone (no outputs): `cargo run --release --example simulate -- FILE [RUNS]`.
//! Prints each run's event-loop seconds and the median, with the event count and digest, so
//! two builds can be compared on the same scenario (README "Performance").

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
    let mut times = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let w = pilotsim::sim::run(s, s.seed, |_, _| {}).expect("validated when loaded");
        let secs = t.elapsed().as_secs_f64();
        let (events, digest) = summary(&w);
        println!("{secs:.4} s  {events} events  digest {digest}");
        times.push(secs);
    }
    times.sort_by(f64::total_cmp);
    println!("median {:.4} s over {runs} runs", times[runs / 2]);
}

fn summary(w: &pilotsim::sim::World) -> (u64, String) {
    (w.core.events, w.core.digest.hex())
}
