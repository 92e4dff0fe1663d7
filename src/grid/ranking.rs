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

/// The [`rank`]s of a candidate list that a director submits many pilots to, and the choice
/// among them: [`Ranks::choose`] draws one candidate uniformly among those of the highest rank
/// (one draw, ties in candidate order). The ranks are the caller's, so that a director updates
/// only the rank of the CE it submitted to instead of reading every CE's state again for each
/// pilot. The candidates at the highest rank are kept as a sorted list of indices, so that a
/// draw reads one of them instead of walking the ranks up to the chosen one, as the plain rule
/// (the tests' `choose`) does; the ranks are walked again only when the last candidate of the
/// highest rank leaves it. At 10⁷ jobs a cycle draws about 160 times over 500 CEs (measured:
/// the walks were 2 300 instructions per draw, 4 % of the whole week).
#[derive(Debug, Clone, Default)]
pub struct Ranks {
    ranks: Vec<i64>,
    /// The highest rank.
    best: i64,
    /// The indices of the candidates at `best`, ascending (candidate order).
    tied: Vec<u32>,
}

impl Ranks {
    /// Start again with these ranks, in candidate order, keeping the buffers: a director
    /// cycle ranks the candidates of its submissions (tens per cycle) into one `Ranks`.
    pub fn reset(&mut self, ranks: impl IntoIterator<Item = i64>) {
        self.ranks.clear();
        self.ranks.extend(ranks);
        self.recount();
    }

    /// The highest rank and the candidates at it, in one walk over the ranks (0 and none
    /// without candidates).
    fn recount(&mut self) {
        self.tied.clear();
        self.best = i64::MIN;
        for (i, &rank) in self.ranks.iter().enumerate() {
            if rank > self.best {
                self.best = rank;
                self.tied.clear();
            }
            if rank == self.best {
                self.tied.push(i as u32);
            }
        }
        if self.ranks.is_empty() {
            self.best = 0;
        }
    }

    /// The index of one candidate drawn uniformly among those of the highest rank (one draw,
    /// ties in candidate order); `None` without candidates.
    pub fn choose<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Option<usize> {
        if self.ranks.is_empty() {
            return None;
        }
        let k = dist::index(rng, self.tied.len());
        Some(self.tied[k] as usize)
    }

    /// Candidate `i` has rank `rank` now.
    pub fn set(&mut self, i: usize, rank: i64) {
        let old = std::mem::replace(&mut self.ranks[i], rank);
        if rank > self.best {
            self.best = rank;
            self.tied.clear();
            self.tied.push(i as u32);
        } else if rank == self.best && old != self.best {
            let at = self.tied.binary_search(&(i as u32)).unwrap_err();
            self.tied.insert(at, i as u32);
        } else if old == self.best && rank != self.best {
            self.leave_best(i);
        }
    }

    /// Candidate `i` leaves the list (the later ones move down by one).
    pub fn remove(&mut self, i: usize) {
        let old = self.ranks.remove(i);
        if old == self.best && self.leave_best(i) {
            return; // counted afresh over the ranks as they are now
        }
        let later = self.tied.partition_point(|&t| (t as usize) < i);
        for t in &mut self.tied[later..] {
            *t -= 1;
        }
    }

    /// Candidate `i` no longer has the highest rank; true if it was the last one there and
    /// the highest rank was counted again.
    fn leave_best(&mut self, i: usize) -> bool {
        let at = self.tied.binary_search(&(i as u32)).expect("a candidate at the highest rank is listed");
        self.tied.remove(at);
        let last = self.tied.is_empty();
        if last {
            self.recount();
        }
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStreams;

    fn ranks_of(ranks: Vec<i64>) -> Ranks {
        let mut r = Ranks::default();
        r.reset(ranks);
        r
    }

    /// The rule in its plainest form, the reference for [`Ranks`]: the highest rank, the
    /// number of candidates at it, one draw among them.
    fn choose<R: Rng + ?Sized>(ranks: &[i64], rng: &mut R) -> Option<usize> {
        let best = *ranks.iter().max()?;
        let tied = || ranks.iter().enumerate().filter(move |&(_, &r)| r == best).map(|(i, _)| i);
        tied().nth(dist::index(rng, tied().count()))
    }

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
        let mut kept = ranks_of(ranks);
        let mut seen = [0; 3];
        for _ in 0..1000 {
            seen[kept.choose(&mut rng).unwrap()] += 1;
        }
        assert_eq!(seen[0], 0);
        assert!(seen[1] > 400 && seen[2] > 400, "{seen:?}");
        assert_eq!(ranks_of(vec![]).choose(&mut rng), None);
    }

    #[test]
    fn kept_ranks_draw_as_choose_does_over_every_update() {
        // A random list, random updates and removals: the kept maximum and count always
        // give the draw and the choice that `choose` makes on the same ranks.
        let mut rng = RngStreams::new(3).stream("test/ranks");
        for round in 0..200 {
            let n = 1 + dist::index(&mut rng, 30);
            let mut plain: Vec<i64> = (0..n).map(|_| dist::index(&mut rng, 5) as i64 - 2).collect();
            let mut kept = ranks_of(plain.clone());
            while !plain.is_empty() {
                let (mut a, mut b) = (rng.clone(), rng.clone());
                assert_eq!(kept.choose(&mut a), choose(&plain, &mut b), "round {round}");
                rng = a;
                let i = dist::index(&mut rng, plain.len());
                if dist::index(&mut rng, 4) == 0 {
                    plain.remove(i);
                    kept.remove(i);
                } else {
                    let r = dist::index(&mut rng, 7) as i64 - 3;
                    plain[i] = r;
                    kept.set(i, r);
                }
            }
            assert_eq!(kept.choose(&mut rng), None);
        }
    }
}
