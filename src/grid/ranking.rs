//! The middleware's choice of CE for a pilot (the gLite WMS ranking).
//!
//! DIRAC's 2009 director hands pilots to the gLite WMS with the list of CEs that can run them;
//! the WMS ranks the CEs, typically by estimated response time. We rank by free capacity:
//! slots minus busy slots and waiting pilots, highest first, ties broken at random. This is a
//! model of grid middleware, outside any WMS's own code; the random stream is the caller's.

use rand::Rng;

use super::CeState;
use crate::engine::dist;

/// Rank of a CE: free slots after the pilots already waiting there (may be negative).
pub fn rank(state: &CeState, slots: u32) -> i64 {
    i64::from(slots) - i64::from(state.busy) - i64::from(state.waiting)
}

/// Choose the best-ranked candidate: given each candidate's [`rank`], the index of one drawn
/// uniformly among those of the highest rank (one draw, ties in candidate order); `None`
/// without candidates. The ranks are the caller's, so that a director submitting many
/// pilots to one candidate list updates only the rank of the CE it submitted to, instead of
/// reading every CE's state again for each pilot (issue 13: at 10⁷ jobs, 500 CEs).
pub fn choose<R: Rng + ?Sized>(ranks: &[i64], rng: &mut R) -> Option<usize> {
    let best = *ranks.iter().max()?;
    let tied = || ranks.iter().enumerate().filter(move |&(_, &r)| r == best).map(|(i, _)| i);
    tied().nth(dist::index(rng, tied().count()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStreams;

    #[test]
    fn picks_the_freest_ce_and_breaks_ties_at_random() {
        let states = [
            CeState { busy: 10, waiting: 0, ..Default::default() },
            CeState { busy: 2, waiting: 3, ..Default::default() },
            CeState { busy: 0, waiting: 5, ..Default::default() },
        ];
        let slots = [10, 10, 10];
        let mut rng = RngStreams::new(1).stream("test/wms");
        assert_eq!(rank(&states[1], 10), 5);
        let ranks: Vec<i64> = states.iter().zip(slots).map(|(s, n)| rank(s, n)).collect();
        assert_eq!(ranks, [0, 5, 5]);
        let mut seen = [0; 3];
        for _ in 0..1000 {
            seen[choose(&ranks, &mut rng).unwrap()] += 1;
        }
        assert_eq!(seen[0], 0);
        assert!(seen[1] > 400 && seen[2] > 400, "{seen:?}");
        assert_eq!(choose(&[], &mut rng), None);
    }
}
