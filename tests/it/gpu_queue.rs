//! The grid's GPU queue against a closed form: one CE with c GPUs, Poisson arrivals of
//! one-GPU pilots, exponential lengths, every pilot reaching the batch queue at once — an
//! M/M/c queue on the GPUs. Its mean wait must lie within the 95 % interval of Erlang C's
//! Wq = C(c, a) / (cμ − λ). The CE has far more cores than GPUs, so the GPUs alone decide.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use pilotsim::engine::distribution::Distribution;
use pilotsim::engine::{RngStreams, SimDuration, SimTime, dist};
use pilotsim::grid::config::{Ce, Site};
use pilotsim::grid::{Grid, GridEvent, PilotShape, PilotStatus, Transition};

/// Erlang C: the probability that an arrival waits in an M/M/c queue of offered load `a`.
fn erlang_c(c: u32, a: f64) -> f64 {
    let mut term = 1.0;
    let mut sum = 1.0; // k = 0
    for k in 1..c {
        term *= a / f64::from(k);
        sum += term;
    }
    let last = term * a / f64::from(c) * f64::from(c) / (f64::from(c) - a);
    last / (sum + last)
}

/// One replica: `n` pilots; returns the mean wait in hours of those after the first `warm`.
fn replica(seed: u64, gpus: u32, lambda_per_h: f64, mean_h: f64, n: usize, warm: usize) -> f64 {
    let mut ce: Ce = serde_json::from_str(&format!(
        r#"{{"name": "gpu-ce", "slots": 1000, "gpus": [{{"vendor": "nvidia", "model": "A100", "vram_mb": 40960, "gpus_per_node": {gpus}}}]}}"#
    ))
    .unwrap();
    ce.pilot_wait = Distribution::Fixed(0.0);
    let streams = RngStreams::new(seed);
    let mut g = Grid::new(&[Site { name: "S".into(), ces: vec![ce] }], &streams);
    let (mut arrivals, mut lengths) = (streams.stream("test/arrivals"), streams.stream("test/lengths"));
    // Events: (time, kind, pilot): kind 0 = reaches the batch queue, 1 = ends.
    let mut events: BinaryHeap<Reverse<(SimTime, u8, u32)>> = BinaryHeap::new();
    let mut t = SimTime::ZERO;
    for _ in 0..n {
        t += SimDuration::from_secs_f64(dist::exponential(&mut arrivals, 3600.0 / lambda_per_h));
        let (p, at, ev) = g.submit(t, 0, 0, PilotShape { cores: 1, gpus: 1, gpu_kinds: 0 }).unwrap();
        assert_eq!(ev, GridEvent::PilotReachesBatch(p));
        events.push(Reverse((at, 0, p)));
    }
    let mut out = Vec::new();
    let mut waits = vec![f64::NAN; n];
    let mut handled = 0u64;
    while let Some(Reverse((now, kind, p))) = events.pop() {
        handled += 1;
        out.clear();
        if kind == 0 {
            g.reaches_batch(now, p, &mut out);
        } else {
            g.end(now, p, PilotStatus::Done, &mut out);
        }
        for tr in &out {
            if let Transition::Started(q) = *tr {
                let pilot = g.pilot(q);
                waits[q as usize] = (now - pilot.submitted).as_secs_f64() / 3600.0;
                let run = SimDuration::from_secs_f64(dist::exponential(&mut lengths, mean_h * 3600.0));
                events.push(Reverse((now + run, 1, q)));
            }
        }
        assert!(g.gpus.busy[0][0] <= gpus, "busy GPUs beyond the inventory");
        // The whole check is a pass over every pilot: now and then, and at the end.
        if handled % 4096 == 0 || events.is_empty() {
            assert_eq!(g.check_invariants(), Vec::<String>::new());
        }
    }
    let kept = &waits[warm..];
    kept.iter().sum::<f64>() / kept.len() as f64
}

#[test]
fn the_gpu_queue_of_one_ce_waits_as_erlang_c_says() {
    // c = 4 GPUs, λ = 3 per hour, 1 h per job: a = 3, ρ = 0.75; C(4, 3) = 13.5 / 26.5.
    let (c, lambda, mean) = (4, 3.0, 1.0);
    let cq = erlang_c(c, lambda * mean);
    assert!((cq - 13.5 / 26.5).abs() < 1e-12, "{cq}");
    let wq = cq / (f64::from(c) / mean - lambda);
    let means: Vec<f64> = (0..20).map(|r| replica(100 + r, c, lambda, mean, 20000, 1000)).collect();
    let m = means.iter().sum::<f64>() / means.len() as f64;
    let sd = (means.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (means.len() - 1) as f64).sqrt();
    let half = 2.093 * sd / (means.len() as f64).sqrt(); // t(0.975, 19)
    eprintln!("mean wait {m:.4} h ± {half:.4} (Erlang C {wq:.4} h)");
    assert!((m - wq).abs() <= half, "simulated {m:.4} ± {half:.4} h, Erlang C {wq:.4} h");
}
