//! A deliberately small WMS that proves the boundary: it pushes each job, in submission
//! order, to the first CE with a free slot, one single-job pilot per job. No task queues, no
//! shares, no director: what the world does with pilots and jobs is all the world's own.
//! Used by the tests, and usable as an idealised baseline (no matching overhead).

use std::collections::{BTreeMap, VecDeque};

use crate::engine::{SimDuration, SimTime};
use crate::grid::{PilotShape, PilotStatus};
use crate::ids::{JobId, PilotId};
use crate::wms::{Answer, Ctx, PilotNews, Timer, Wms};
use crate::workload::{EntityDef, JobEntities, Level, ShareEntities, ShareUnit};

const PUSH_CYCLE: u16 = 100;

/// Push each waiting job to the first CE with a free slot, every `period`.
#[derive(Debug, Clone)]
pub struct PushWms {
    period: SimDuration,
    waiting: VecDeque<JobId>,
    /// The job each live pilot was sent for.
    assigned: BTreeMap<PilotId, JobId>,
}

impl PushWms {
    /// A push WMS cycling every `period`.
    pub fn new(period: SimDuration) -> Self {
        Self { period, waiting: VecDeque::new(), assigned: BTreeMap::new() }
    }

    /// One group entity per distinct group of the streams, with equal targets.
    pub fn entities(groups_of_streams: &[&str]) -> ShareEntities {
        let mut defs: Vec<EntityDef> = Vec::new();
        let of_stream = groups_of_streams
            .iter()
            .map(|g| {
                let group = defs.iter().position(|d| d.name == *g).unwrap_or_else(|| {
                    defs.push(EntityDef {
                        name: g.to_string(),
                        level: Level::Group,
                        parent: None,
                        target_share: 0.0,
                        wms: 0,
                        unit: ShareUnit::Jobs,
                    });
                    defs.len() - 1
                });
                JobEntities { group, user: None }
            })
            .collect();
        let n = defs.len() as f64;
        defs.iter_mut().for_each(|d| d.target_share = 1.0 / n);
        ShareEntities { defs, of_stream }
    }
}

impl Wms for PushWms {
    fn name(&self) -> &str {
        "push"
    }

    fn start(&mut self, ctx: &mut dyn Ctx) {
        ctx.set_timer(SimTime::ZERO, Timer { kind: PUSH_CYCLE, id: 0 });
    }

    fn job_submitted(&mut self, _ctx: &mut dyn Ctx, j: JobId) {
        self.waiting.push_back(j);
    }

    fn timer(&mut self, ctx: &mut dyn Ctx, _timer: Timer) {
        while let Some(&j) = self.waiting.front() {
            let grid = ctx.grid();
            let free = |c: usize| grid.state[c].busy + grid.state[c].waiting < grid.ce_slots[c];
            let Some(ce) = (0..grid.ces.len()).find(|&c| free(c)) else { break };
            match ctx.submit_pilot(ce as u32, PilotShape::default()) {
                Ok(p) => {
                    self.waiting.pop_front();
                    self.assigned.insert(p, j);
                }
                Err(_) => break, // the CE's counts say it is full: try again next cycle
            }
        }
        let next = ctx.now() + self.period;
        ctx.set_timer(next, Timer { kind: PUSH_CYCLE, id: 0 });
    }

    fn pilot_news(&mut self, _ctx: &mut dyn Ctx, p: PilotId, news: PilotNews) {
        // A pilot that never ran its job gives the job back, at the head of the queue.
        if let PilotNews::Ended(status) = news {
            if status != PilotStatus::Done {
                if let Some(j) = self.assigned.remove(&p) {
                    self.waiting.push_front(j);
                }
            }
        }
    }

    fn pilot_asks(&mut self, _ctx: &mut dyn Ctx, p: PilotId) -> Answer {
        match self.assigned.remove(&p) {
            Some(j) => Answer::Run(j),
            None => Answer::Exit,
        }
    }
}
