//! The event queue with its next events staged: the radix heap ([`EventQueue`]) behind a short
//! buffer of the events that pop next, in pop order, so that the event loop can see a batch of
//! coming events at once and ask for their memory together.
//!
//! # Why a batch
//!
//! At 10⁷ jobs the job and pilot tables span gigabytes, and on this project's machine (a virtual
//! machine, 4 KiB pages) the first touch of a record is a TLB miss as well as a cache miss.
//! `perf` put two thirds of the event loop's own time at 10⁷ right after its three prefetches:
//! a prefetch stalls its event, however early it is issued, as if it could not retire before
//! its page walk is done; prefetches issued back to back overlap their walks. A loop over a 1 GiB table on this machine, one random line read per step
//! and 168 ns of arithmetic between (README, Performance): no prefetch 456 ns a step, one
//! prefetch a step for the next step 250, one a step eight steps ahead 275, eight at once every
//! eight steps 187.
//!
//! # Why the order is the heap's
//!
//! Pops come out ordered by (time, insertion sequence), as from [`EventQueue`]. Call the
//! *fence* the time of the last event taken from the heap (the heap's base): every event left
//! in the heap is at or after it, and those at it are younger than every event taken. `ahead`
//! holds events taken from the heap, in order, and events pushed before the fence, put in
//! order among them. A push at time `t`:
//! - `t` at or after the fence goes to the heap, which accepts it (its keys only need to be at
//!   or after its base) and puts it after everything taken, which is older or earlier;
//! - `t` before the fence precedes everything in the heap, so it goes into `ahead`, after every
//!   event at a time `<= t` (it is the youngest of all).
//!
//! Two bounds keep that cheap. An event is staged only if it is within [`HORIZON`] of the last
//! pop: a far event staged early (a timer days ahead, when the heap holds little else) would
//! set the fence days ahead and route every later push into `ahead`. And `ahead` takes at most
//! [`CAP`] events: a push before the fence that finds it full goes to `early`, a binary heap
//! keyed by (time, sequence), and so does every push before the fence while `early` holds any
//! event. Every event of `early` is then younger than the events pushed into `ahead`, and earlier
//! than the events staged from the heap (those are at or after the fence, which is later than
//! any `early` time), so a pop takes `early`'s first event when its time is strictly before
//! `ahead`'s first, else `ahead`'s.
//!
//! The differential test (`engine::queue_check`, driven by this module's tests) checks all of it
//! against a binary heap keyed by (time, sequence).

use super::{EventQueue, SimDuration, SimTime};
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

/// Events taken from the heap at a time: the batch whose memory the loop asks for together.
pub const BATCH: usize = 8;
/// How far after the last pop an event may be to be staged. The 10⁶-job week has 7.5 events a
/// simulated second, so the batches of every size from there up are full (with 2 s, 10⁶'s came
/// short and its event loop was 5–14 % slower than before batching, where 10 s is 6 % faster).
pub const HORIZON: SimDuration = SimDuration(10_000);
/// The most events `ahead` holds (a push before the fence shifts at most half of them).
pub const CAP: usize = 8 * BATCH;

/// [`EventQueue`] with the next events staged ([`StagedQueue::ahead`]); the same pops, in the
/// same order.
pub struct StagedQueue<E> {
    heap: EventQueue<E>,
    /// Events before every heap event, in pop order (see the module doc).
    ahead: VecDeque<(SimTime, E)>,
    /// Pushes before the fence that found `ahead` full, and those after them (rare).
    early: BinaryHeap<Early<E>>,
    /// Pushes into `early` so far: its tie-break among equal times.
    early_seq: u64,
    /// The time of the last popped event (0 before the first).
    last: SimTime,
    /// At most the time of the heap's next event (what it was when staging last stopped at
    /// it, or an earlier push), so that a stage with nothing in reach costs no look at the heap
    /// (0.9 % of the instructions at 10⁵ jobs, where most stages find nothing in reach).
    heap_next: SimTime,
    /// Events taken from the heap since [`StagedQueue::take_staged`] last cleared it.
    staged: usize,
}

/// An event of `early`, ordered so that the binary heap's top is the smallest (time, seq).
struct Early<E> {
    key: Reverse<(SimTime, u64)>,
    ev: E,
}

impl<E> PartialEq for Early<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Early<E> {}
impl<E> PartialOrd for Early<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Early<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

impl<E> StagedQueue<E> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        StagedQueue {
            heap: EventQueue::new(),
            ahead: VecDeque::new(),
            early: BinaryHeap::new(),
            early_seq: 0,
            last: SimTime::ZERO,
            heap_next: SimTime::ZERO,
            staged: 0,
        }
    }

    /// Schedule `ev` at time `at`, after every event already pending at the same time.
    ///
    /// A time before [`StagedQueue::last_popped`] is a bug of the caller: a debug build
    /// panics; a release build schedules the event at `last_popped`, as [`EventQueue::push`].
    pub fn push(&mut self, at: SimTime, ev: E) {
        debug_assert!(at >= self.last, "event at {at} scheduled before the last popped time {}", self.last);
        self.push_clamped(at, ev);
    }

    /// [`Self::push`] without the debug check: a time in the past is scheduled at
    /// [`Self::last_popped`]. What `push` does in a release build; separate so that the
    /// clamping is tested in every build.
    fn push_clamped(&mut self, at: SimTime, ev: E) {
        let at = at.max(self.last);
        if at >= self.heap.last_popped() {
            self.heap.push(at, ev);
            self.heap_next = self.heap_next.min(at);
        } else if self.early.is_empty() && self.ahead.len() < CAP {
            // Most such pushes are at the current time, at or near the front: a scan from the
            // front finds their place in a predictable branch or two, where a binary search
            // over the staged events mispredicts about half of its own.
            match self.ahead.iter().position(|&(t, _)| t > at) {
                Some(0) => self.ahead.push_front((at, ev)),
                Some(i) => self.ahead.insert(i, (at, ev)),
                None => self.ahead.push_back((at, ev)),
            }
        } else {
            self.early.push(Early { key: Reverse((at, self.early_seq)), ev });
            self.early_seq += 1;
        }
    }

    /// Remove and return the earliest event (the oldest among equal times).
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if self.ahead.len() <= BATCH {
            self.stage();
        }
        let (t, ev) = if self.early_first() {
            let e = self.early.pop().expect("early_first");
            (e.key.0.0, e.ev)
        } else if let Some(next) = self.ahead.pop_front() {
            next
        } else {
            // Nothing staged: the heap's next event is beyond the horizon (or there is none).
            self.heap.pop()?
        };
        self.last = t;
        Some((t, ev))
    }

    /// The time of the next event, without removing it.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        if self.ahead.len() <= BATCH {
            self.stage();
        }
        match (self.ahead.front(), self.early.peek()) {
            (Some(&(a, _)), Some(e)) => Some(a.min(e.key.0.0)),
            (Some(&(a, _)), None) => Some(a),
            (None, Some(e)) => Some(e.key.0.0),
            (None, None) => self.heap.peek_time(),
        }
    }

    /// Whether the next pop comes from `early`: its first event is strictly earlier than
    /// `ahead`'s (at equal times `ahead`'s is older; see the module doc).
    fn early_first(&self) -> bool {
        match (self.early.peek(), self.ahead.front()) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(e), Some(&(a, _))) => e.key.0.0 < a,
        }
    }

    /// The staged events, next first (without the rare pushes that found them full): what the
    /// coming pops return unless earlier events are pushed meanwhile. A hint for prefetching.
    pub fn ahead(&self) -> impl ExactSizeIterator<Item = &E> {
        self.ahead.iter().map(|(_, e)| e)
    }

    /// How many events were taken from the heap since the last call (0 if none): they are the
    /// last ones of [`Self::ahead`]; the ones before them were staged a batch earlier, or pushed.
    pub fn take_staged(&mut self) -> usize {
        std::mem::take(&mut self.staged)
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len() + self.ahead.len() + self.early.len()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The time of the last popped event ([`SimTime::ZERO`] before the first pop): the
    /// current simulated time, and the earliest time a new event may be pushed at.
    pub fn last_popped(&self) -> SimTime {
        self.last
    }

    /// Take up to [`BATCH`] events within [`HORIZON`] of the last pop from the heap to the back
    /// of `ahead` (a later one is popped from the heap directly, when it is next).
    fn stage(&mut self) {
        let horizon = self.last + HORIZON;
        if self.heap_next > horizon {
            return;
        }
        for _ in 0..BATCH.min(CAP - self.ahead.len()) {
            match self.heap.peek_time() {
                Some(t) if t <= horizon => {
                    let next = self.heap.pop().expect("peeked");
                    self.ahead.push_back(next);
                    self.staged += 1;
                }
                next => {
                    self.heap_next = next.unwrap_or(SimTime(u64::MAX));
                    break;
                }
            }
        }
    }
}

impl<E> Default for StagedQueue<E> {
    /// Same as [`StagedQueue::new`].
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::dist;

    #[test]
    fn pushes_before_the_staged_events_keep_time_then_insertion_order() {
        let mut q = StagedQueue::new();
        for (i, t) in [10, 20, 20, 30, 40, 50, 60, 70, 80, 90, 100].into_iter().enumerate() {
            q.push(SimTime(t), i);
        }
        assert_eq!(q.pop(), Some((SimTime(10), 0)));
        assert_eq!((q.take_staged(), q.take_staged()), (BATCH, 0));
        // Staged: up to 70 (the fence); these go between staged events or to the heap.
        q.push(SimTime(20), 100); // after the two older events at 20
        q.push(SimTime(10), 101); // now, before them
        q.push(SimTime(70), 102); // at the fence: to the heap, after the staged event at 70
        q.push(SimTime(75), 103);
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(t, e)| (t.0, e)).collect();
        assert_eq!(
            got,
            [
                (10, 101),
                (20, 1),
                (20, 2),
                (20, 100),
                (30, 3),
                (40, 4),
                (50, 5),
                (60, 6),
                (70, 7),
                (70, 102),
                (75, 103),
                (80, 8),
                (90, 9),
                (100, 10)
            ]
        );
        assert!(q.is_empty());
        assert_eq!(q.last_popped(), SimTime(100));
    }

    #[test]
    fn a_full_ahead_sends_earlier_pushes_to_early_in_order() {
        let mut q = StagedQueue::new();
        for t in (1000..=1080).step_by(10) {
            q.push(SimTime(t), t as usize);
        }
        assert_eq!(q.pop(), Some((SimTime(1000), 1000)));
        // Staged 1010..=1070 (7 left, fence 1070); 57 pushes fit in `ahead`, 3 go to `early`.
        for id in 100..160 {
            q.push(SimTime(1005), id);
        }
        assert_eq!((q.ahead().len(), q.early.len()), (CAP, 3));
        q.push(SimTime(1001), 200); // `early` holds events: there too, though it is earliest
        q.push(SimTime(1001), 201);
        q.push(SimTime(1075), 300); // after the fence: the heap
        assert_eq!(q.len(), 8 + 60 + 3);
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(t, e)| (t.0, e)).collect();
        let mut want = vec![(1001, 200), (1001, 201)];
        want.extend((100..160).map(|id| (1005, id))); // `ahead`'s 57 first: they are older
        want.extend((1010..=1070).step_by(10).map(|t| (t, t as usize)));
        want.extend([(1075, 300), (1080, 1080)]);
        assert_eq!(got, want);
    }

    #[test]
    fn an_event_beyond_the_horizon_is_not_staged() {
        let mut q = StagedQueue::new();
        q.push(SimTime::ZERO, 'a');
        q.push(SimTime::ZERO + HORIZON + SimDuration(1), 'c');
        assert_eq!(q.pop(), Some((SimTime::ZERO, 'a')));
        assert_eq!(q.ahead().len(), 0, "the next event is beyond the horizon");
        q.push(SimTime(5), 'b'); // before it: the heap, whose base is still 0
        assert_eq!(q.peek_time(), Some(SimTime(5)));
        assert_eq!(q.pop(), Some((SimTime(5), 'b')));
        assert_eq!(q.pop(), Some((SimTime::ZERO + HORIZON + SimDuration(1), 'c')));
        assert_eq!((q.pop(), q.peek_time()), (None, None));
    }

    #[test]
    fn ahead_lists_the_next_pops() {
        let mut q = StagedQueue::new();
        for t in (0..40).rev() {
            q.push(SimTime(t), t);
        }
        assert_eq!(q.peek_time(), Some(SimTime(0)));
        let ahead: Vec<u64> = q.ahead().copied().collect();
        assert_eq!(ahead, (0..BATCH as u64).collect::<Vec<_>>());
        q.pop();
        // Down to BATCH - 1 staged before the pop: a second batch behind them.
        let ahead: Vec<u64> = q.ahead().copied().collect();
        assert_eq!(ahead, (1..2 * BATCH as u64).collect::<Vec<_>>());
        assert_eq!(q.len(), 39);
    }

    /// What `push` does with a time in the past in a release build, tested in every build
    /// (the test profile keeps debug assertions, where `push` panics instead).
    #[test]
    fn push_into_the_past_is_clamped() {
        let mut q = StagedQueue::new();
        for (t, e) in [(10, 'a'), (10, 'b'), (12, 'd')] {
            q.push(SimTime(t), e);
        }
        q.pop();
        q.push_clamped(SimTime(9), 'c'); // staged: before the fence (12), after 'b'
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(got, [(SimTime(10), 'b'), (SimTime(10), 'c'), (SimTime(12), 'd')]);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "before the last popped time")]
    fn push_into_the_past_panics_in_debug() {
        let mut q = StagedQueue::new();
        q.push(SimTime(10), ());
        q.pop();
        q.push(SimTime(9), ());
    }

    /// Random pushes, pops and peeks against a binary heap keyed by (time, sequence); many
    /// pushes land among the staged events (offsets of a few milliseconds), some overflow
    /// `ahead`, some are about the horizon. Every 101 steps, `ahead` must be the pop order
    /// without the events in `early`.
    #[test]
    fn matches_binary_heap() {
        let mut q = StagedQueue::new();
        let pushed = crate::engine::queue_check::against_binary_heap(
            &mut q,
            "test/staged",
            |rng, step| match dist::index(rng, 5) {
                0 => 0,
                1 => dist::index(rng, 4) as u64,
                2 => dist::index(rng, 30) as u64,
                3 if step % 2 == 0 => dist::index(rng, 30_000) as u64,
                3 => dist::index(rng, 1 << 20) as u64,
                _ => dist::index(rng, 1 << 40) as u64,
            },
            |q, step, reference| {
                if step % 101 == 0 {
                    let mut sorted: Vec<_> = reference.iter().map(|Reverse(p)| *p).collect();
                    sorted.sort_unstable();
                    let early: Vec<u64> = q.early.iter().map(|e| e.ev).collect();
                    let want: Vec<u64> =
                        sorted.iter().map(|&(_, s)| s).filter(|s| !early.contains(s)).take(q.ahead.len()).collect();
                    assert_eq!(q.ahead().copied().collect::<Vec<_>>(), want, "step {step}");
                }
            },
        );
        assert!(pushed > 90_000, "{pushed} pushes");
        assert!(q.early_seq > 1000, "the overflow path ran: {}", q.early_seq);
    }
}
