//! The differential test the two event queues share ([`super::EventQueue`], the radix heap, and
//! [`super::StagedQueue`], the heap behind its staged events): random pushes, pops and peeks
//! against a binary heap keyed by (time, insertion sequence), the order both promise.

use super::{EventQueue, RngStreams, SimRng, SimTime, StagedQueue, dist};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What the test drives.
pub(super) trait Queue {
    fn push(&mut self, at: SimTime, ev: u64);
    fn pop(&mut self) -> Option<(SimTime, u64)>;
    fn peek_time(&mut self) -> Option<SimTime>;
    fn len(&self) -> usize;
    fn last_popped(&self) -> SimTime;
}

macro_rules! queue {
    ($t:ty) => {
        impl Queue for $t {
            fn push(&mut self, at: SimTime, ev: u64) {
                <$t>::push(self, at, ev)
            }
            fn pop(&mut self) -> Option<(SimTime, u64)> {
                <$t>::pop(self)
            }
            fn peek_time(&mut self) -> Option<SimTime> {
                <$t>::peek_time(self)
            }
            fn len(&self) -> usize {
                <$t>::len(self)
            }
            fn last_popped(&self) -> SimTime {
                <$t>::last_popped(self)
            }
        }
    };
}
queue!(EventQueue<u64>);
queue!(StagedQueue<u64>);

/// The pending events in pop order, as (time, sequence).
pub(super) type Reference = BinaryHeap<Reverse<(u64, u64)>>;

/// 200 000 random operations on `q`, in alternating push-heavy and pop-heavy phases so that it
/// both grows and drains; a push lands `offset(rng, step)` ms after the last pop. Every pop and
/// every third step's peek must agree with the reference; `check` may look further after each
/// step. Then drains both. Returns how many events were pushed.
pub(super) fn against_binary_heap<Q: Queue>(
    q: &mut Q,
    stream: &str,
    offset: impl Fn(&mut SimRng, usize) -> u64,
    mut check: impl FnMut(&Q, usize, &Reference),
) -> u64 {
    let mut rng = RngStreams::new(7).stream(stream);
    let mut reference = Reference::new();
    let mut seq = 0u64;
    for step in 0..200_000 {
        assert_eq!(q.len(), reference.len());
        if step % 3 == 0 {
            // Not every step, so pops also run without a minimum cached by a peek.
            assert_eq!(q.peek_time(), reference.peek().map(|Reverse((t, _))| SimTime(*t)));
        }
        let push_share = if (step / 5_000) % 2 == 0 { 60 } else { 40 };
        if dist::index(&mut rng, 100) < push_share {
            let t = q.last_popped().0 + offset(&mut rng, step);
            q.push(SimTime(t), seq);
            reference.push(Reverse((t, seq)));
            seq += 1;
        } else {
            let want = reference.pop().map(|Reverse((t, s))| (SimTime(t), s));
            assert_eq!(q.pop(), want, "step {step}");
        }
        check(q, step, &reference);
    }
    while let Some(Reverse((t, s))) = reference.pop() {
        assert_eq!(q.pop(), Some((SimTime(t), s)));
    }
    assert_eq!((q.len(), q.pop()), (0, None));
    seq
}
