//! `dirac::levels` — the waiting jobs of one task queue, by UserPriority level (seed 001;
//! reference `dirac.md` §1.4), and the spare buffers that let a TQ database create and delete
//! TQs without allocating.
//!
//! In a large grid most jobs create a TQ of their own and empty it when matched (measured:
//! 1.1 M TQ creations and deletions in the 10⁶-job week). Each TQ allocated a map node and a
//! deque and freed both; the emptied buffers now wait in a [`Spares`] for the next TQ, and a
//! job's insertion and removal went from 1 007 to 630 instructions (callgrind, 10⁶).

use std::collections::VecDeque;

use crate::ids::JobId;

/// The waiting jobs of one UserPriority level, in job-id order.
///
/// Jobs come in id order (at the back) and the Matcher takes one of the first
/// `jobs_per_level` (reference §1.4), so a sorted deque makes both ends cheap: a removal
/// shifts at most that many ids, where the `BTreeSet` it replaces walked and rebalanced nodes
/// on every match. It also holds 4 bytes per job.
#[derive(Debug, Clone, Default)]
pub struct LevelJobs(VecDeque<JobId>);

/// How many ids at the front [`LevelJobs::remove`] scans before it searches: a few cache
/// lines, at least the Matcher's `jobs_per_level` (10 in seed 2009, 50 in DIRAC 9).
const FRONT_SCAN: usize = 64;

impl LevelJobs {
    /// Add a job in id order; false if it was already there.
    pub fn insert(&mut self, job: JobId) -> bool {
        // The usual case, a new job at the back, without a search: a TQ with a backlog of a
        // million jobs made the binary search's cache misses 12 % of a 10⁷-job run.
        if self.0.back().is_none_or(|&last| last < job) {
            self.0.push_back(job);
            return true;
        }
        match self.0.binary_search(&job) {
            Ok(_) => false,
            Err(i) => {
                self.0.insert(i, job);
                true
            }
        }
    }

    /// Remove a job; false if it was not there.
    pub fn remove(&mut self, job: JobId) -> bool {
        // The Matcher takes one of the first `jobs_per_level` jobs: look there first, in
        // the deque's first cache lines, before a binary search over the whole backlog.
        if let Some(i) = self.0.iter().take(FRONT_SCAN).position(|&x| x == job) {
            self.0.remove(i);
            return true;
        }
        match self.0.binary_search(&job) {
            Ok(i) => {
                self.0.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// The `i`-th job in id order.
    pub fn get(&self, i: usize) -> Option<JobId> {
        self.0.get(i).copied()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The ids it can hold without allocating.
    fn capacity(&self) -> usize {
        self.0.capacity()
    }
}

/// The levels of one TQ, ascending, each with its jobs: a sorted vector, not a map, because a
/// TQ has one level or a few (one level in every TQ of the scale weeks).
#[derive(Debug, Clone, Default)]
pub struct Levels(Vec<(u8, LevelJobs)>);

impl Levels {
    /// Number of levels with jobs.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The levels and their jobs, lowest level first.
    pub fn iter(&self) -> impl Iterator<Item = (u8, &LevelJobs)> {
        self.0.iter().map(|(level, jobs)| (*level, jobs))
    }

    /// The jobs of `level`, if it has any.
    pub fn get(&self, level: u8) -> Option<&LevelJobs> {
        self.find(level).ok().map(|i| &self.0[i].1)
    }

    fn find(&self, level: u8) -> Result<usize, usize> {
        self.0.binary_search_by_key(&level, |(l, _)| *l)
    }

    /// Add `job` at `level` (a new level takes a spare deque); false if it was there.
    pub(super) fn insert(&mut self, level: u8, job: JobId, spares: &mut Spares) -> bool {
        let i = match self.find(level) {
            Ok(i) => i,
            Err(i) => {
                self.0.insert(i, (level, spares.jobs.pop().unwrap_or_default()));
                i
            }
        };
        self.0[i].1.insert(job)
    }

    /// Remove `job` from `level`; a level left empty is removed and its deque kept as a spare.
    /// False if the job was not there.
    pub(super) fn remove(&mut self, level: u8, job: JobId, spares: &mut Spares) -> bool {
        let Ok(i) = self.find(level) else { return false };
        if !self.0[i].1.remove(job) {
            return false;
        }
        if self.0[i].1.is_empty() {
            let (_, jobs) = self.0.remove(i);
            spares.keep_jobs(jobs);
        }
        true
    }
}

/// Emptied buffers of deleted TQs and levels, reused by the next ones.
#[derive(Debug, Clone, Default)]
pub(super) struct Spares {
    jobs: Vec<LevelJobs>,
    levels: Vec<Levels>,
}

/// A spare deque is kept only if small: a level that held a backlog of a million jobs should
/// not hold 4 MB for a level of one job.
const SPARE_CAPACITY: usize = 256;

impl Spares {
    /// An empty level list for a new TQ.
    pub(super) fn levels(&mut self) -> Levels {
        self.levels.pop().unwrap_or_default()
    }

    /// The level list of a deleted (empty) TQ.
    pub(super) fn keep_levels(&mut self, levels: Levels) {
        debug_assert!(levels.is_empty(), "a deleted TQ has no jobs");
        if levels.0.capacity() <= SPARE_CAPACITY {
            self.levels.push(levels);
        }
    }

    fn keep_jobs(&mut self, jobs: LevelJobs) {
        debug_assert!(jobs.is_empty());
        if jobs.capacity() <= SPARE_CAPACITY {
            self.jobs.push(jobs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_keeps_its_jobs_in_id_order_whatever_the_insertion_order() {
        let mut level = LevelJobs::default();
        for job in [5, 9, 2, 7, 9] {
            level.insert(job);
        }
        let ids = |l: &LevelJobs| (0..l.len()).map(|i| l.get(i).unwrap()).collect::<Vec<_>>();
        assert_eq!(ids(&level), [2, 5, 7, 9], "sorted, the second 9 ignored");
        assert!(level.remove(5));
        assert!(!level.remove(5), "already removed");
        assert!(!level.remove(3), "never there");
        assert_eq!((level.get(0), level.get(2), level.get(3)), (Some(2), Some(9), None));
        assert_eq!(level.len(), 3);
    }

    #[test]
    fn a_long_level_removes_past_the_front_scan_and_inserts_in_the_middle() {
        // 1 000 even ids: the front scan covers the first 64, a binary search the rest.
        let mut level = LevelJobs::default();
        for job in (0..1000).map(|i| 2 * i) {
            assert!(level.insert(job));
        }
        assert!(level.remove(2 * 10), "inside the front scan");
        assert!(level.remove(2 * 500), "past it");
        assert!(!level.remove(2 * 500 + 1), "an odd id was never there");
        assert!(level.insert(1001), "between two ids, not at the back");
        assert!(!level.insert(1998), "already the last");
        let ids: Vec<u32> = (0..level.len()).map(|i| level.get(i).unwrap()).collect();
        let mut want: Vec<u32> = (0..1000).map(|i| 2 * i).filter(|&j| j != 20 && j != 1000).collect();
        want.push(1001);
        want.sort_unstable();
        assert_eq!(ids, want);
    }

    #[test]
    fn levels_stay_sorted_and_emptied_buffers_are_reused() {
        let mut spares = Spares::default();
        let mut levels = spares.levels();
        for (level, job) in [(5, 1), (1, 2), (5, 3), (10, 4), (1, 5)] {
            assert!(levels.insert(level, job, &mut spares));
        }
        assert!(!levels.insert(5, 3, &mut spares), "already there");
        let listed: Vec<(u8, usize)> = levels.iter().map(|(l, jobs)| (l, jobs.len())).collect();
        assert_eq!(listed, [(1, 2), (5, 2), (10, 1)]);
        assert_eq!(levels.get(5).and_then(|j| j.get(1)), Some(3));
        assert!(levels.get(2).is_none());
        assert!(!levels.remove(2, 1, &mut spares), "no such level");
        assert!(!levels.remove(5, 2, &mut spares), "not at that level");
        assert!(levels.remove(10, 4, &mut spares));
        assert_eq!((levels.len(), spares.jobs.len()), (2, 1), "the emptied level's deque is kept");
        assert!(levels.insert(7, 6, &mut spares));
        assert_eq!(spares.jobs.len(), 0, "and taken by the next new level");
        for (level, job) in [(1, 2), (1, 5), (5, 1), (5, 3), (7, 6)] {
            assert!(levels.remove(level, job, &mut spares));
        }
        assert!(levels.is_empty());
        spares.keep_levels(levels);
        assert_eq!((spares.levels.len(), spares.jobs.len()), (1, 3));
        let mut big = LevelJobs::default();
        (0..1000).for_each(|j| _ = big.insert(j));
        (0..1000).for_each(|j| _ = big.remove(j));
        spares.keep_jobs(big);
        assert_eq!(spares.jobs.len(), 3, "a large deque is not kept");
    }
}
