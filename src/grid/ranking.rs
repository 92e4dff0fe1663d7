//! The middleware's choice of CE for a pilot (the gLite WMS ranking).
//!
//! DIRAC's 2009 director hands pilots to the gLite WMS with the list of CEs that can run them;
//! the WMS ranks the CEs, typically by estimated response time. We rank by free capacity:
//! slots minus busy slots and waiting pilots, highest first, ties broken at random. This is a
//! model of grid middleware, outside any WMS's own code; the random stream is the caller's.

use rand::Rng;

use super::CeState;
use crate::engine::dist;
use crate::ids::CeId;

/// Rank of a CE: free slots after the pilots already waiting there (may be negative).
pub fn rank(state: &CeState, slots: u32) -> i64 {
    i64::from(slots) - i64::from(state.busy) - i64::from(state.waiting)
}

/// Choose the best-ranked CE among `candidates` (indices into `states`/`slots`).
pub fn choose<R: Rng + ?Sized>(candidates: &[CeId], states: &[CeState], slots: &[u32], rng: &mut R) -> Option<CeId> {
    let rank_of = |c: CeId| rank(&states[c as usize], slots[c as usize]);
    let best = candidates.iter().map(|&c| rank_of(c)).max()?;
    let tied = || candidates.iter().copied().filter(move |&c| rank_of(c) == best);
    tied().nth(dist::index(rng, tied().count()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStreams;

    #[test]
    fn picks_the_freest_ce_and_breaks_ties_at_random() {
        let states = vec![
            CeState { busy: 10, waiting: 0, ..Default::default() },
            CeState { busy: 2, waiting: 3, ..Default::default() },
            CeState { busy: 0, waiting: 5, ..Default::default() },
        ];
        let slots = [10, 10, 10];
        let mut rng = RngStreams::new(1).stream("test/wms");
        assert_eq!(rank(&states[1], 10), 5);
        let mut seen = [0; 3];
        for _ in 0..1000 {
            seen[choose(&[0, 1, 2], &states, &slots, &mut rng).unwrap() as usize] += 1;
        }
        assert_eq!(seen[0], 0);
        assert!(seen[1] > 400 && seen[2] > 400, "{seen:?}");
        assert_eq!(choose(&[], &states, &slots, &mut rng), None);
    }
}
