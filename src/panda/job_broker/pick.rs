//! Choosing a PQ for each bunch of jobs among the brokerage's top candidates:
//! `InputChunk.getOneSiteCandidate` (pandaserver/taskbuffer/InputChunk.py L158-251, reference
//! §2 "Top-10 and how they are used"; `SiteCandidate.can_accept_jobs`, SiteCandidate.py L77-82).
//! `JobSplitter` calls it every `nSubChunks` jobs (25 by default, 2 for scouts). Usable by the
//! analysis broker too, whose candidates carry no queue counts or cap (`None`).
//!
//! 1. Any weight-0 candidate not yet bootstrapped and not in the NG list: a uniform choice,
//!    marked bootstrapped, weight unchanged.
//! 2. Otherwise a roulette over the candidates not NG, not (weight 0 and bootstrapped) and with
//!    `nRunningJobsCap > nQueuedJobs` (or no cap): `r = random() × Σw`, walk subtracting
//!    weights, first with `r ≤ 0`; if float rounding leaves none, a uniform choice.
//! 3. Diminishing weight: with queue counts known, `nQueuedJobs += nSubChunks`, `nAssignedJobs
//!    += nSubChunks` and `weight ×= (q_old + 1)/(q_new + 1)` — e.g. weight 0.25 with 10 queued
//!    and 25 new jobs becomes 0.25 · 11/36 = 0.07639 (reference §9). ⚠ quirk kept: the code
//!    multiplies the weight of its loop variable, which in the rounding fallback is the *last*
//!    eligible candidate, not the chosen one.
//!
//! Draws use [`uniform01`] from the caller's stream (Python's `random` cannot be replayed).

use rand::Rng;

use super::Candidate;
use crate::engine::dist::uniform01;

/// One entry of `inputChunk.siteCandidates`.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteCandidate {
    /// Index of the PQ in the caller's queue slice.
    pub queue: usize,
    pub weight: f64,
    /// `nQueuedJobs` (`None` for analysis).
    pub n_queued_jobs: Option<u64>,
    /// `nAssignedJobs` (`None` for analysis).
    pub n_assigned_jobs: Option<u64>,
    /// `nRunningJobsCap` (`None` = no cap: express tasks, analysis).
    pub n_running_jobs_cap: Option<u64>,
}

impl SiteCandidate {
    /// `can_accept_jobs`: no cap or no count → true; else `cap > queued`.
    pub fn can_accept_jobs(&self) -> bool {
        match (self.n_running_jobs_cap, self.n_queued_jobs) {
            (Some(cap), Some(q)) => cap > q,
            _ => true,
        }
    }

    fn usable_weight(&self) -> f64 {
        if self.weight.is_finite() && self.weight > 0.0 { self.weight } else { 0.0 }
    }
}

/// How a pick was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickKind {
    /// A weight-0 candidate being bootstrapped.
    Bootstrap,
    /// The roulette.
    Weighted,
    /// Rounding left the roulette without a winner: uniform choice.
    Fallback,
}

/// A chosen candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pick {
    /// Index into [`SitePicker::candidates`].
    pub index: usize,
    /// Index of the PQ in the caller's queue slice.
    pub queue: usize,
    pub kind: PickKind,
}

/// The candidates of one input chunk and which were bootstrapped.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SitePicker {
    /// In brokerage order (`addSiteCandidate` order).
    pub candidates: Vec<SiteCandidate>,
    bootstrapped: Vec<bool>,
}

fn choice<R: Rng + ?Sized>(rng: &mut R, n: usize) -> usize {
    ((uniform01(rng) * n as f64) as usize).min(n.saturating_sub(1))
}

impl SitePicker {
    pub fn new(candidates: Vec<SiteCandidate>) -> Self {
        let bootstrapped = vec![false; candidates.len()];
        Self { candidates, bootstrapped }
    }

    /// The site candidates of a production brokerage result (weight, queued, assigned, cap).
    pub fn from_candidates(cands: &[Candidate]) -> Self {
        Self::new(
            cands
                .iter()
                .map(|c| SiteCandidate {
                    queue: c.queue,
                    weight: c.weight,
                    n_queued_jobs: Some(c.n_queued_jobs),
                    n_assigned_jobs: Some(c.terms.n_assigned),
                    n_running_jobs_cap: c.n_running_jobs_cap,
                })
                .collect(),
        )
    }

    /// Whether candidate `index` has been bootstrapped.
    pub fn is_bootstrapped(&self, index: usize) -> bool {
        self.bootstrapped.get(index).copied().unwrap_or(false)
    }

    /// `getOneSiteCandidate(nSubChunks, ngSites)`: `ng_queues` are queue indices to avoid.
    /// `None` when no candidate is eligible.
    pub fn get_one_site_candidate<R: Rng + ?Sized>(
        &mut self,
        n_sub_chunks: u64,
        ng_queues: &[usize],
        rng: &mut R,
    ) -> Option<Pick> {
        let ng = |c: &SiteCandidate| ng_queues.contains(&c.queue);
        let boot = |i: usize| self.bootstrapped.get(i).copied().unwrap_or(false);
        let fresh_zero = |i: usize, c: &SiteCandidate| c.weight == 0.0 && !boot(i) && !ng(c);
        let n_fresh = self.candidates.iter().enumerate().filter(|&(i, c)| fresh_zero(i, c)).count();
        if n_fresh > 0 {
            let k = choice(rng, n_fresh);
            let index = self.candidates.iter().enumerate().filter(|&(i, c)| fresh_zero(i, c)).nth(k)?.0;
            if let Some(b) = self.bootstrapped.get_mut(index) {
                *b = true;
            }
            return Some(Pick { index, queue: self.candidates.get(index)?.queue, kind: PickKind::Bootstrap });
        }
        let eligible = |i: usize, c: &SiteCandidate| !ng(c) && (c.weight != 0.0 || !boot(i)) && c.can_accept_jobs();
        let mut total = 0.0;
        let mut n_ok = 0;
        let mut last = None;
        for (i, c) in self.candidates.iter().enumerate() {
            if eligible(i, c) {
                total += c.usable_weight();
                n_ok += 1;
                last = Some(i);
            }
        }
        let last = last?;
        let mut r = uniform01(rng) * total;
        let mut chosen = None;
        for (i, c) in self.candidates.iter().enumerate() {
            if eligible(i, c) {
                r -= c.usable_weight();
                if r <= 0.0 {
                    chosen = Some((i, PickKind::Weighted));
                    break;
                }
            }
        }
        // Fallback: uniform choice; the decay then hits the loop variable, i.e. the last one.
        let (index, kind, decayed) = match chosen {
            Some((i, kind)) => (i, kind, i),
            None => {
                let k = choice(rng, n_ok);
                let i = self.candidates.iter().enumerate().filter(|&(i, c)| eligible(i, c)).nth(k)?.0;
                (i, PickKind::Fallback, last)
            }
        };
        let cand = self.candidates.get_mut(index)?;
        let queue = cand.queue;
        if let (Some(q), Some(a)) = (cand.n_queued_jobs, cand.n_assigned_jobs) {
            let new_q = q.saturating_add(n_sub_chunks);
            cand.n_queued_jobs = Some(new_q);
            cand.n_assigned_jobs = Some(a.saturating_add(n_sub_chunks));
            let factor = (q as f64 + 1.0) / (new_q as f64 + 1.0);
            if let Some(d) = self.candidates.get_mut(decayed) {
                d.weight *= factor;
            }
        }
        Some(Pick { index, queue, kind })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStreams;

    fn cand(queue: usize, weight: f64, queued: u64, cap: Option<u64>) -> SiteCandidate {
        SiteCandidate { queue, weight, n_queued_jobs: Some(queued), n_assigned_jobs: Some(0), n_running_jobs_cap: cap }
    }

    /// Reference §9: weight 0.25, nQueued 10 → after a 25-job pick 0.25·11/36 = 0.07639.
    #[test]
    fn site_pick_decay_reference_vector() {
        let mut rng = RngStreams::new(1).stream("test/pick");
        let mut p = SitePicker::new(vec![cand(7, 0.25, 10, None)]);
        let pick = p.get_one_site_candidate(25, &[], &mut rng).expect("one candidate");
        assert_eq!((pick.index, pick.queue, pick.kind), (0, 7, PickKind::Weighted));
        let c = &p.candidates[0];
        assert!((c.weight - 0.25 * 11.0 / 36.0).abs() < 1e-15);
        assert!((c.weight - 0.07639).abs() < 5e-6);
        assert_eq!((c.n_queued_jobs, c.n_assigned_jobs), (Some(35), Some(25)));
        // A second pick: 35 → 60 queued, weight × 36/61.
        p.get_one_site_candidate(25, &[], &mut rng).unwrap();
        assert!((p.candidates[0].weight - 0.25 * 11.0 / 36.0 * 36.0 / 61.0).abs() < 1e-15);
    }

    #[test]
    fn bootstrap_first_then_roulette_and_caps() {
        let mut rng = RngStreams::new(2).stream("test/boot");
        let mut p = SitePicker::new(vec![cand(0, 1.0, 0, Some(20)), cand(1, 0.0, 0, Some(20)), cand(2, 0.0, 0, None)]);
        let a = p.get_one_site_candidate(25, &[], &mut rng).unwrap();
        let b = p.get_one_site_candidate(25, &[], &mut rng).unwrap();
        assert_eq!((a.kind, b.kind), (PickKind::Bootstrap, PickKind::Bootstrap));
        assert_ne!(a.index, b.index);
        assert!(p.is_bootstrapped(1) && p.is_bootstrapped(2));
        // Bootstrap picks change no counts; bootstrapped weight-0 PQs are out of the roulette.
        assert_eq!(p.candidates[1].n_queued_jobs, Some(0));
        let c = p.get_one_site_candidate(25, &[], &mut rng).unwrap();
        assert_eq!((c.index, c.kind), (0, PickKind::Weighted));
        // Now 25 queued ≥ cap 20: nobody can accept.
        assert_eq!(p.get_one_site_candidate(25, &[], &mut rng), None);
        // NG list excludes; an uncapped PQ (cap None) always accepts.
        let mut p = SitePicker::new(vec![cand(0, 1.0, 100, None), cand(1, 1.0, 0, None)]);
        for _ in 0..20 {
            assert_eq!(p.get_one_site_candidate(1, &[1], &mut rng).unwrap().queue, 0);
        }
        assert_eq!(p.get_one_site_candidate(1, &[0, 1], &mut rng), None);
        assert_eq!(SitePicker::default().get_one_site_candidate(1, &[], &mut rng), None);
    }

    #[test]
    fn roulette_is_proportional_to_weight() {
        let mut rng = RngStreams::new(3).stream("test/roulette");
        let mut hits = [0u32; 2];
        for _ in 0..20_000 {
            // n_sub_chunks 0 leaves weights unchanged.
            let mut p = SitePicker::new(vec![cand(0, 1.0, 0, None), cand(1, 3.0, 0, None)]);
            hits[p.get_one_site_candidate(0, &[], &mut rng).unwrap().index] += 1;
        }
        let share = f64::from(hits[1]) / 20_000.0;
        assert!((share - 0.75).abs() < 0.015, "{share}");
    }

    #[test]
    fn analysis_candidates_without_counts_never_decay() {
        let mut rng = RngStreams::new(4).stream("test/anal");
        let c = SiteCandidate {
            queue: 3,
            weight: 0.5,
            n_queued_jobs: None,
            n_assigned_jobs: None,
            n_running_jobs_cap: None,
        };
        let mut p = SitePicker::new(vec![c]);
        p.get_one_site_candidate(25, &[], &mut rng).unwrap();
        assert_eq!(p.candidates[0].weight, 0.5);
        // NaN or negative weights count as 0 and never panic.
        let mut p = SitePicker::new(vec![cand(0, f64::NAN, 0, None), cand(1, -1.0, 0, None)]);
        assert!(p.get_one_site_candidate(5, &[], &mut rng).is_some());
    }
}
