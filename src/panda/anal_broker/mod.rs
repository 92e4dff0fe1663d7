//! `panda::anal_broker` — ATLAS analysis job brokerage (seed 004, "ATLAS Analysis Job
//! Brokerage"; reference `panda.md` §4, panda-server 1.0.4 `pandajedi/jedibrokerage/
//! AtlasAnalJobBroker.py`, with the site/task classification daemons).
//!
//! Three pure steps, as JEDI runs them for a user task's input chunk:
//!
//! 1. [`throttle()`] — the pre-brokerage throttles ([`throttle`] module): user or working-group
//!    caps on running/queued jobs and cores (queued at 2× the running cap), the class-based
//!    throttle of `User Analysis` (C > 90 %, B > 95 %, A with `USER_USAGE_THRESHOLD_A`), and the
//!    global disk quota. A throttled task gets `SC_WAITING` (1.0.4; not penalised by the
//!    pending timeout).
//! 2. [`classify_site`], [`classify_sites`], [`user_eval`], [`classify_task`] — what the
//!    `metric_collector` / `task_evaluator` daemons compute every few minutes ([`classify`]).
//! 3. [`broker()`] — candidates (`analysis` and unified PQs, include/exclude, pre-assigned
//!    `site`), the persistent filters in code order ([`filters`]), the temporary ones
//!    ([`stabilizer`]: `cap_rt`, overload, the Analysis Stabilizer, failures), the weights
//!    ([`weight`]: original `(R+1)/(Q+1)` and new `W_s·W_q`), the retry without data
//!    locality, the top 10, or `Pending { retry_after_s: 1200 }`.
//!
//! Every skipped PQ carries a [`SkipReason`] whose `Display` is the message PanDA logs after
//! `skip site=<PQ>`, and [`SkipReason::persistence`] says whether it is one of the seed's
//! persistent or temporary filters. Where 1.0.4 differs from the seed (reference ⚠ and what the
//! code shows beyond it), [`AnalBrokerVariant`] selects: `Seed` (default) or `PandaServer`; its
//! doc has the table. The basic weight can be chosen apart ([`BasicWeight`]).
//!
//! Inputs ([`input`]) are slices of plain structs indexed by PQ; checks owned by other modules
//! (zero share, SW/HW and GPU matching, DDM blacklist) arrive as their results. Not modelled:
//! unified PQs' pseudo-queues (a unified PQ stands for them), the DDM conversion of an unknown
//! pre-assigned site, remote-source lists (never filled in 1.0.4), the file lists of the
//! chosen candidates, and the simulated job split giving `N_j` (an input). The weighted site
//! pick of the job splitter (`InputChunk.getOneSiteCandidate`, reference §2) belongs to the
//! job-broker module and is not duplicated here.

pub mod broker;
pub mod classify;
pub mod filters;
pub mod input;
pub mod params;
pub mod reason;
pub mod stabilizer;
pub mod throttle;
pub mod weight;

pub use broker::{AnalBrokerage, Loop, Outcome, PENDING_RETRY_S, Weighed, broker};
pub use classify::{
    SiteClass, SiteClassParams, SiteClassification, SiteWaitStats, TaskProgress, classify_site, classify_sites,
    classify_task, user_eval,
};
pub use input::{
    AnalBrokerInput, AnalQueue, AnalTask, GshareUsers, QueueStats, QueueStatus, QueueType, Replica, ResourceTypeStats,
    SwCheck, UserQueueStats,
};
pub use params::{AnalBrokerParams, AnalBrokerVariant, BasicWeight, GDPCONFIG_KEYS, validate};
pub use reason::{Persistence, Skip, SkipReason};
pub use throttle::{
    JobCounts, Quota, ShareUsage, TaskClass, ThrottleInput, ThrottleReason, ThrottleStatus, UserEval, throttle,
};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_broker;
