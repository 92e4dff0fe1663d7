//! Where a PanDA run spends its time, per agent (for `examples/scale` and profiling): the wall
//! time of each agent's callbacks, read from the machine's clock only when asked
//! ([`AgentTimes::enabled`]), never by a decision.

use std::time::{Duration, Instant};

/// PanDA's agents, as their time is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// Task arrivals and the TaskBroker.
    TaskBroker,
    /// The JobGenerator: throttle, job and analysis brokerage, split, a new job's stage-in.
    JobGenerator,
    /// `getJob` and a push worker's start.
    Dispatcher,
    /// Harvester's cycles and its workers' news.
    Harvester,
    CopyArchive,
    /// The pilots' final `updateJob` and the Adder's cycles.
    Adder,
    /// Transfers arriving (input activation, output registration).
    Transfers,
    /// Replayed records arriving.
    Replay,
}

impl Agent {
    pub const ALL: [Agent; 8] = [
        Agent::TaskBroker,
        Agent::JobGenerator,
        Agent::Dispatcher,
        Agent::Harvester,
        Agent::CopyArchive,
        Agent::Adder,
        Agent::Transfers,
        Agent::Replay,
    ];

    /// Its name in `examples/scale`'s output.
    pub fn name(self) -> &'static str {
        match self {
            Agent::TaskBroker => "task_broker",
            Agent::JobGenerator => "job_generator",
            Agent::Dispatcher => "dispatcher",
            Agent::Harvester => "harvester",
            Agent::CopyArchive => "copy_archive",
            Agent::Adder => "adder",
            Agent::Transfers => "transfers",
            Agent::Replay => "replay",
        }
    }
}

/// The time spent per agent.
#[derive(Debug, Clone, Default)]
pub struct AgentTimes {
    /// Read the clock around each callback (off by default: two clock reads per event).
    pub enabled: bool,
    spent: [Duration; Agent::ALL.len()],
}

impl AgentTimes {
    /// The start of a timed callback (`None` when off).
    pub fn start(&self) -> Option<Instant> {
        self.enabled.then(Instant::now)
    }

    /// A callback of `agent` that started at `t0` returned.
    pub fn stop(&mut self, agent: Agent, t0: Option<Instant>) {
        if let Some(t0) = t0 {
            self.spent[agent as usize] += t0.elapsed();
        }
    }

    /// The time spent by each agent, in [`Agent::ALL`] order.
    pub fn spent(&self) -> impl Iterator<Item = (Agent, Duration)> + '_ {
        Agent::ALL.iter().map(|&a| (a, self.spent[a as usize]))
    }
}
