//! `panda::timeouts` — PanDA's job timeout rules and fast rebrokerage (seed 004 "Timeout Rules",
//! lines ~275-294; reference `panda.md` §6 and §9), checked against panda-server 1.0.4:
//! `pandaserver/daemons/scripts/copyArchive.py` (the timeout daemon, "L…" below without a file
//! name), `pandaserver/jobdispatcher/Watcher.py` (what a heartbeat timeout does to a job),
//! `DBProxy.killJob` (`job_complex_module.py` L803-1130: what a kill code does),
//! `lockJobsForReassign` (`job_standalone_module.py` L911-990), `datasetManager.py` L25-26 and
//! L634-790 (transferring jobs) and JEDI's `reactivatePendingTasks_JEDI`
//! (`task_complex_module.py` L4571-4690; the task `pending` timeout).
//!
//! The simulation calls [`check`] on every job in a timed status once per cycle of the daemon
//! that owns the rule ([`Daemon::period`]): copyArchive every 2400 s, datasetManager every 2400 s
//! ([`check_transferring`]), the JEDI watchdog every 300 s ([`check_task_pending`]). Per
//! (queue, gshare) it calls [`fast_rebrokerage`], per analysis job group
//! [`analysis_rebrokerage`]. Every answer says which rule fired and what PanDA does
//! ([`TimeoutAction`]: Watcher failure with its `jobDispatcherErrorCode`, or `killJob` with its
//! kill code, status, `jobSubStatus`, `taskBufferErrorCode` and diag); [`explain`] gives every
//! rule's verdict for one job (fired, not yet and when, skipped and why, not applicable).
//!
//! # The rules in copyArchive order (first match wins: a job is gone once a rule fired)
//!
//! `t < now − T` is strict everywhere (Oracle `<`), so a rule fires one tick *after*
//! `t + T` ([`RuleVerdict::NotYet::fires_after`]). HB = running, starting, stagein, stageout;
//! "analysis" = `prodSourceLabel` user or panda; `end` = `endTime` if set.
//!
//! | # | rule ([`TimeoutRule`]) | selection | T | action | lines |
//! |---|---|---|---|---|---|
//! | 1 | Anal Watcher | analysis, HB | `HEARTBEAT_TIMEOUT_analysis` (2 h) on `mod`, and `mod` or `end` < now − 60 min | Watcher fail | L291-312 |
//! | 2 | Trans Anal Watcher | analysis, transferring | same | Watcher fail | L314-332 |
//! | 3 | Sent Watcher | sent | 30 min on `mod` | fail 102 | L334-351 |
//! | 4 | Holding Anal/DDM Watcher | analysis, holding, `stateChangeTime ≠ mod`, no pending output report | 3 h on `mod` or `end` | Watcher fail | L353-387 |
//! | 5 | High prio Holding Watcher | holding, prio > 800 (seed ≥ 800) | 3 h on `mod` or `end` | Watcher fail | L389-414 |
//! | 6 | Holding Watcher | holding | `TIMEOUT_holding` (48 h) on `mod` or `end` | Watcher fail | L416-436 |
//! | 7 | General Watcher | HB, queue covered by a workflow | `HEARTBEAT_TIMEOUT_<workflow>` (production 2 h) on `mod` | Watcher fail; skipped at paused PQs | L438-486 |
//! | 8 | (seed only) transferring with `jobSubStatus` | transferring, sub-status set | the queue's workflow heartbeat | Watcher fail | seed |
//! | 9 | killJobs for Defined | jobsDefined4 (defined, assigned, pending, waiting) | 7 d on `creationTime` | kill 2 | L488-502 |
//! | 10 | killJobs for Active | activated | 7 d on `creationTime` | kill 2 | L504-519 |
//! | — | *fast rebrokerage* ([`fast_rebrokerage`]) | per (PQ, gshare) | — | kill 10 | L521-633 |
//! | 11 | inactive site | managed, JEDI, prio ≥ 800, not pmerge, `relocationFlag` set ≠ 2, activated/starting, PQ `laststart` < now − 2 h or offline/test | 4 h on `mod` or `stateChangeTime` | kill 51 | L635-714 |
//! | 12 | defined | defined, managed/test, JEDI | `TIMEOUT_defined` (4 h) on `mod` | kill 51 | L716-747 |
//! | 13 | stalled defined | defined, build (panda) or non-JEDI | `TIMEOUT_defined` on `creationTime` | kill 2 | L749-767 |
//! | 14 | long in defined table ("assigned") | jobsDefined4, managed, JEDI | 12 h on `mod` | kill 51 | L769-787 |
//! | 15 | long activated | activated, managed, reassignable, JEDI | 2 d on `mod` | kill 51; skipped with `disableReassign` | L789-828 |
//! | 16 | long starting | starting, managed, reassignable, JEDI | 48 h on `stateChangeTime` | kill 51; skipped with `disableReassign` | L830-861 |
//! | 17 | Anal Active | jobsActive4, label test/panda/user | 7 d on `mod` | kill 2 | L863-881 |
//! | 18 | Pending | pending | 1 h on `creationTime` | kill 4 | L883-904 |
//! | 19 | Waiting | waiting | 1 h on `creationTime` | kill 4 | L932-953 |
//! | — | *analysis rebrokerage* ([`analysis_rebrokerage`]) | user job groups | `ANALY_TIMEOUT` (12 h) | kill 51 | L1007-1198 |
//! | 20 | Running | any status in jobsActive4 | 21 d on `creationTime` | kill 2 | L1200-1231 |
//! | 21 | throttled | throttled | 7 d on `creationTime` | kill 2 | L1233-1249 |
//! | — | transferring ([`check_transferring`], datasetManager) | transferring, managed/test, outputs not all at the destination | `transtimehi` 2 d (prio ≥ 800) / `transtimelo` 6 d on `endTime` (else `startTime`) | fail 101 | datasetManager L700-735 |
//! | — | task pending ([`check_task_pending`], JEDI) | task `pending` for > 60 min (prio ≥ 950: 10 min, ≥ 900: 30 min) | `PENDING_TIMEOUT_<label>` h, else 7 d, on `frozenTime` | task → exhausted, else reactivated | task_complex_module L4571-4690 |
//!
//! What an action does (`killJob`): code 2 and 4 close the job (`jobSubStatus` toreassign,
//! `taskBufferErrorCode` 102, "expired in {status}. status unchanged since {stateChangeTime}"),
//! except a *running* job, which only gets `commandToPilot = tobekilled`; 51 closes it
//! (toreassign, 100, "reassigned by JEDI"); 10 closes it (130, "fast rebrokerage due to Nq/Nr
//! overshoot"). A Watcher failure sets `jobStatus = failed` and `jobDispatcherErrorCode` 102
//! (sent), 100 (lost heartbeat, no `endTime`), 103/104/105 (holding/transferring/other with an
//! `endTime`) or 101 (the pilot had reported an error: "job recovery failed").
//!
//! # Fast rebrokerage (L521-633)
//!
//! Per (PQ, gshare), `nq` = defined + assigned + activated + starting, `nr` = running, counted
//! without Resource work queues and without PQs in `HARVESTER_Slots`; `nq_total` per gshare:
//!
//! ```text
//! overshoot ⇔ nr·FAST_REBRO_THRESHOLD_NQNR_RATIO < nq            (default 3)
//!           ∧ nq > FAST_REBRO_THRESHOLD_NQUEUE_<gshare>          (unset or 0 → 10 and dry run)
//!           ∧ nq > nq_total · FAST_REBRO_THRESHOLD_NQUEUE_FRAC    (default 0.3)
//! excess    = ceil(min(nq − nr·ratio, nq − limit, nq − nq_total·frac))
//! reassigned: the lowest PandaIDs, excess − 1 of them (`rownum < :nRows`), kill code 10
//! ```
//!
//! # Variants ([`TimeoutVariant`]; reference §6 ⚠ and the differences found in the code)
//!
//! | | `Seed` (default) | `PandaServer` (1.0.4) |
//! |---|---|---|
//! | paused PQ | every timeout rule off | only the General Watcher (7) is skipped (`disable_reassign()` forgets to `return` on paused, SiteSpec.py L261-264) |
//! | `disableReassign` in catchall | every timeout rule off | only rules 11, 15, 16 are skipped |
//! | holding high priority | `currentPriority ≥ 800` | `currentPriority > 800` (L392) |
//! | transferring with `jobSubStatus` | `HEARTBEAT_TIMEOUT_<workflow>` (rule 8) | not selected by copyArchive (only analysis transferring, rule 2) |
//!
//! Both variants keep the code's rules the seed does not mention (analysis, stagein/stageout,
//! 7-day kills, the transferring timeouts of datasetManager, whose 2 and 6 days are the seed's
//! `transtimehi`/`transtimelo`).
//!
//! # Not modelled
//!
//! Event-service rules (ES jobs and ES merge 24 h, waiting ES merge 10 min, co-jumbo), the ES
//! merge retry of the inactive-site and long-activated rules, the invalid-pmerge check (needs
//! JEDI's file table), non-JEDI jobs beyond "no action", the `jobDispatcherErrorDiag`-already-set
//! case of the Watcher. Times are [`SimTime`] (ms); PanDA's dates are shown as `SimTime` in the
//! diags.

mod actions;
mod inputs;
mod params;
mod rebrokerage;
mod rules;
mod tasks;

pub use actions::{
    DispatcherErrorCode, KillCode, RuleVerdict, SkipReason, TaskBufferErrorCode, TimeoutAction, TimeoutEffect,
    TimeoutRule, Touch,
};
pub use inputs::{
    HeartbeatCover, JobStatus, JobTimes, ProdSourceLabel, QueueStatus, QueueTimes, catchall_has_key,
    disable_reassign_from_catchall,
};
pub use params::{GDPCONFIG_KEYS, HeartbeatPlan, Thresholds, TimeoutParams, TimeoutVariant, validate};
pub use rebrokerage::{
    AnalRebroGroup, AnalRebroSkip, AnalRebroVerdict, FastRebroAction, FastRebroCheck, FastRebroStats, FastRebroVerdict,
    ShareQueueStats, StatsRow, aggregate_share_stats, analysis_rebrokerage, fast_rebro_check, fast_rebro_eligible,
    fast_rebrokerage,
};
pub use rules::{RULES, Stage, check, check_resolved, check_stage, check_until, explain, inactive_site_probe};
pub use tasks::{
    FinisherVerdict, PendingPass, TaskPending, TaskPendingVerdict, check_task_pending, check_transferring,
};

use crate::engine::time::{SimDuration, SimTime};
pub(crate) use crate::panda::pyfmt::py_float;
use std::fmt;

/// The PanDA daemons that own the rules, with how often they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Daemon {
    /// `pandaserver/daemons/scripts/copyArchive.py`: every rule of [`check`], fast and analysis
    /// rebrokerage.
    CopyArchive,
    /// `datasetManager.py`: the Finisher's transferring timeout ([`check_transferring`]).
    DatasetManager,
    /// JEDI's `WatchDog` (`pre_action` then `doAction`): the task pending timeout.
    JediWatchDog,
}

/// copyArchive's period: `"copyArchive": {"enable": true, "period": 2400, "sync": true}`
/// (templates/panda_server.cfg.rpmnew.template L321-322).
pub const COPY_ARCHIVE_PERIOD: SimDuration = SimDuration::from_secs(2400);
/// datasetManager's period: `"period": 2400` (same template, L323-324).
pub const DATASET_MANAGER_PERIOD: SimDuration = SimDuration::from_secs(2400);
/// JEDI watchdog `loopCycle = 300` s (templates/panda_jedi.cfg.rpmnew.template `[watchdog]`).
pub const JEDI_WATCHDOG_LOOP_CYCLE: SimDuration = SimDuration::from_secs(300);

impl Daemon {
    /// How often the daemon runs (its cycle; PanDA adds a random sleep of up to one cycle to the
    /// JEDI watchdog, which the simulation may draw itself).
    pub const fn period(self) -> SimDuration {
        match self {
            Daemon::CopyArchive => COPY_ARCHIVE_PERIOD,
            Daemon::DatasetManager => DATASET_MANAGER_PERIOD,
            Daemon::JediWatchDog => JEDI_WATCHDOG_LOOP_CYCLE,
        }
    }
}

impl fmt::Display for Daemon {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Daemon::CopyArchive => "copyArchive",
            Daemon::DatasetManager => "datasetManager",
            Daemon::JediWatchDog => "WatchDog",
        })
    }
}

/// `t < now − d` as Oracle compares dates, without going below time zero: `t + d < now`.
pub(crate) fn older(t: SimTime, now: SimTime, d: SimDuration) -> bool {
    t + d < now
}

/// Whole hours as a duration.
pub(crate) const fn hours(h: u64) -> SimDuration {
    SimDuration::from_secs(h.saturating_mul(3600))
}

/// Hours read from gdpconfig (may be fractional) as a duration; NaN and negatives give 0.
pub(crate) fn hours_f64(h: f64) -> SimDuration {
    SimDuration::from_secs_f64(h * 3600.0)
}

#[cfg(test)]
mod tests;
