//! The classic hold model: `n` pending events; each operation pops the earliest and pushes
//! it back at its time plus an exponential increment (mean 1000 ms). Compares the engine's
//! radix heap with a `std` binary heap keyed by `(time, sequence)` on the same workload, so
//! the ratio is measured in one run. Run with `cargo bench --bench event_queue`.

use divan::Bencher;
use divan::counter::ItemsCount;
use pilotsim::engine::{EventQueue, RngStreams, SimDuration, SimRng, SimTime, dist};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Hold operations per measured iteration.
const OPS: usize = 100_000;
/// Pending events.
const SIZES: [usize; 3] = [1_000, 100_000, 1_000_000];

fn main() {
    divan::main();
}

/// A fixed-seed generator, the same for both queues.
fn rng() -> SimRng {
    RngStreams::new(1).stream("bench/hold")
}

/// The next increment: exponential with mean 1000 ms, rounded to whole milliseconds.
#[inline]
fn increment(rng: &mut SimRng) -> SimDuration {
    SimDuration::from_secs_f64(dist::exponential(rng, 1.0))
}

#[divan::bench(args = SIZES, sample_count = 30, sample_size = 1)]
fn radix_heap(bencher: Bencher, n: usize) {
    let mut rng = rng();
    let mut queue = EventQueue::new();
    for id in 0..n as u64 {
        queue.push(SimTime::ZERO + increment(&mut rng), id);
    }
    bencher.counter(ItemsCount::new(OPS)).bench_local(|| {
        for _ in 0..OPS {
            let (t, id) = queue.pop().expect("n > 0");
            queue.push(t + increment(&mut rng), id);
        }
    });
}

#[divan::bench(args = SIZES, sample_count = 30, sample_size = 1)]
fn binary_heap(bencher: Bencher, n: usize) {
    let mut rng = rng();
    let mut heap = BinaryHeap::with_capacity(n);
    let mut seq = 0u64;
    for _ in 0..n {
        heap.push(Reverse(((SimTime::ZERO + increment(&mut rng)).as_millis(), seq)));
        seq += 1;
    }
    bencher.counter(ItemsCount::new(OPS)).bench_local(|| {
        for _ in 0..OPS {
            let Reverse((t, _)) = heap.pop().expect("n > 0");
            heap.push(Reverse(((SimTime(t) + increment(&mut rng)).as_millis(), seq)));
            seq += 1;
        }
    });
}
