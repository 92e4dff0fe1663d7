//! Harvester: every `lookupTime` (60 s), per PQ, `define_num_workers` decides how many workers
//! (pilots) to submit and the HTCondor submitter's CE weighting spreads them over the PQ's CEs
//! (reference §8, `view::harvester`). The workers are pilots on the grid's CEs, through the same
//! batch state machine as DIRAC's; their counts (queued = submitted + waiting in the batch
//! system, running) are kept per PQ and per CE from the pilots' news.
//!
//! The CE weighting's six-hour throughput history (`get_worker_ce_backend_throughput`) is not
//! kept: every CE has the same throughput term, so the weights follow the CEs' queued and
//! running workers only.

use crate::grid::PilotShape;
use crate::ids::PilotId;
use crate::wms::{Ctx, PilotNews};

use super::PandaWms;
use super::view::ce_choice::CeWorkerStats;
use super::view::harvester::HarvesterDynamic;

/// What a pull-mode PQ's Harvester decision depends on that changes: activated jobs, queued
/// workers (and cores), running workers (and cores).
pub type IdleKey = (u64, u64, u64, u64, u64);

/// What Harvester did over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HarvesterCounters {
    pub cycles: u64,
    /// Workers submitted (pilots the CEs accepted).
    pub submitted: u64,
    /// Workers a CE refused (its queue limits).
    pub refused: u64,
    /// Workers decided but not placed (no CE with weight).
    pub unplaced: u64,
}

impl PandaWms {
    /// One Harvester cycle over every PQ, in scenario order.
    pub(super) fn harvester_cycle(&mut self, ctx: &mut dyn Ctx) {
        self.harvester.cycles += 1;
        let nq = self.cfg.queues.len();
        let (queued, running) = self.worker_counts();
        let mut plans = Vec::new();
        {
            let d = super::snapshot(&self.tables, &self.last_start, ctx, &queued, &running);
            let h = HarvesterDynamic::default();
            for q in 0..nq {
                if self.factory_queue[q] {
                    continue; // a pilot factory submits there, not Harvester
                }
                // define_num_workers is a pure function of the PQ's state: a pull-mode PQ whose
                // counts are those of its last cycle that decided nothing decides nothing again.
                let key = (self.tables.counts[q].activated, queued[q].n, queued[q].core, running[q].n, running[q].core);
                let pull = self.harvest_view.queues.get(q).is_some_and(|hq| !hq.slave);
                if pull && self.harvest_idle[q] == Some(key) {
                    continue;
                }
                let Some(state) = self.harvest_view.queue_state(q, &d, &h) else { continue };
                let Ok(decision) = self.harvest_view.decide(q, &state) else { continue };
                if decision.total() == 0 {
                    self.harvest_idle[q] = pull.then_some(key);
                    continue;
                }
                self.harvest_idle[q] = None;
                let stats: Vec<CeWorkerStats> = self.ce_workers[q]
                    .iter()
                    .map(|w| CeWorkerStats { submitted: w.queued, running: w.running, ..Default::default() })
                    .collect();
                plans.push((q, self.harvest_view.pilot_plan(q, &decision, &stats, &mut self.rng_harvester)));
            }
        }
        for (q, plan) in plans {
            self.harvester.unplaced += plan.unplaced;
            for b in &plan.batches {
                let ce_idx = self.harvest_view.queues[q].ces.iter().position(|&c| c == b.ce).unwrap_or(0);
                for _ in 0..b.count {
                    match ctx.submit_pilot(b.ce as u32, PilotShape { cores: b.cores.max(1) }) {
                        Ok(p) => {
                            self.own_pilot(p, q as u16, ce_idx as u16);
                            self.harvester.submitted += 1;
                        }
                        Err(_) => {
                            self.harvester.refused += 1;
                            break;
                        }
                    }
                }
            }
        }
    }

    fn own_pilot(&mut self, p: PilotId, q: u16, ce_idx: u16) {
        let k = p as usize;
        if self.pilot_queue.len() <= k {
            self.pilot_queue.resize(k + 1, u16::MAX);
            self.pilot_ce.resize(k + 1, 0);
        }
        self.pilot_queue[k] = q;
        self.pilot_ce[k] = ce_idx;
        self.workers[q as usize].queued += 1;
        self.ce_workers[q as usize][ce_idx as usize].queued += 1;
    }

    /// Keep the worker counts from a pilot's news: started (queued → running), ended (from
    /// running if it had started, else from queued).
    pub(super) fn pilot_news_of(&mut self, ctx: &mut dyn Ctx, p: PilotId, news: PilotNews) {
        let Some(&q) = self.pilot_queue.get(p as usize).filter(|&&q| q != u16::MAX) else { return };
        let c = self.pilot_ce[p as usize] as usize;
        let started = ctx.grid().pilot(p).started().is_some();
        let (w, cw) = (&mut self.workers[q as usize], &mut self.ce_workers[q as usize][c]);
        for x in [w, cw] {
            match news {
                PilotNews::Started => {
                    x.queued -= 1;
                    x.running += 1;
                }
                PilotNews::Ended(_) if started => x.running -= 1,
                PilotNews::Ended(_) => x.queued -= 1,
            }
        }
    }
}
