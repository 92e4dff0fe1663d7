//! What `pilotsim explain` answers: plain structs (serialised as its `--json`), filled by
//! [`super::RunTables::explain`] and rendered by [`super::render_text`].

use std::collections::BTreeMap;

use serde::Serialize;

/// What to explain: a job (`--job`), a task (`--task`), or, with `queue`, only that PQ's
/// rows of the job's or task's decisions (of every decision of the run when neither is given).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    pub job: Option<u32>,
    pub task: Option<u32>,
    pub queue: Option<String>,
}

/// The answer when the job, task or queue asked about is not in the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotFound {
    pub message: String,
}

/// Which run an explanation is about.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunIdent {
    pub scenario: String,
    pub seed: u64,
}

/// The answer to a [`Query`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "explains", rename_all = "snake_case")]
pub enum Explanation {
    Job(JobExplanation),
    Task(TaskExplanation),
    Queue(QueueExplanation),
}

/// A job and the decisions that sent it where it went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobExplanation {
    pub run: RunIdent,
    pub job: JobLife,
    /// The job (or analysis) brokerage that placed it.
    pub placement: Option<DecisionView>,
    /// Its task's task brokerage (nucleus), every attempt in time order; empty for analysis.
    pub task_brokerage: Vec<DecisionView>,
}

/// A job's life as `jobs.parquet` has it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobLife {
    pub job_id: u32,
    pub jedi_task_id: u32,
    pub attempt_nr: Option<u32>,
    /// The PQ (`computingsite`).
    pub computingsite: String,
    pub gshare: Option<String>,
    pub panda_status: Option<String>,
    pub brokerage_id: Option<u32>,
    /// A replayed record's PandaID (`panda.replay`): no brokerage placed the job.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded_pandaid: Option<u64>,
    /// Grid site, CE and pilot that ran it (none if it never started).
    pub site: Option<String>,
    pub ce: Option<String>,
    pub pilot_id: Option<u32>,
    /// The model of the GPU node it used (a job of a task with a GPU spec).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_model: Option<String>,
    /// The PanDA statuses it went through with their times, in order (`final` is named after
    /// its final status).
    pub states: Vec<StateTime>,
}

/// A status and when the job entered it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StateTime {
    pub status: String,
    pub time_s: f64,
}

/// One brokerage decision: who was chosen, weighed, skipped.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecisionView {
    pub brokerage_id: u32,
    pub time_s: f64,
    /// `task` (nucleus), `job` (production PQs) or `analysis`.
    pub kind: String,
    pub jedi_task_id: u32,
    /// Jobs it placed.
    pub jobs: u32,
    /// Why it chose nothing (PanDA's message), if so.
    pub pending: Option<String>,
    /// Chosen candidates (the nucleus; PQs that got jobs), by weight, highest first.
    pub chosen: Vec<Weighed>,
    /// Weighed but got nothing, by weight, highest first.
    pub candidates: Vec<Weighed>,
    /// Dropped by a filter, in PanDA's order.
    pub skipped: Vec<Skip>,
}

/// A weighed candidate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Weighed {
    pub name: String,
    pub weight: Option<f64>,
    pub jobs: u32,
}

/// A skipped candidate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skip {
    pub name: String,
    /// The filter (job brokerage: `CoreCount`, `Final`, …; analysis: the loop, `loop 0`).
    pub stage: String,
    /// PanDA's message.
    pub reason: String,
    /// Retried at the next cycle.
    pub temporary: bool,
    /// The same candidate was weighed later in this decision (analysis brokerage's later
    /// loops relax the first loop's filters).
    pub weighed_later: bool,
}

/// Every decision of a task, summarised.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskExplanation {
    pub run: RunIdent,
    pub jedi_task_id: u32,
    /// `production` (task brokerage then job brokerage) or `analysis`; `unknown` without decisions.
    pub kind: String,
    pub gshare: Option<String>,
    /// Its jobs in `jobs.parquet` (every attempt) by PanDA status.
    pub jobs_by_status: BTreeMap<String, u64>,
    /// Jobs with `attempt_nr` > 1 (regenerated after a failure or a reassignment).
    pub retries: u64,
    /// Task brokerage (nucleus) decisions, in time order.
    pub task_brokerage: Vec<DecisionView>,
    /// Per PQ over the task's job (or analysis) brokerages, most jobs first.
    pub queues: Vec<QueueTally>,
    /// Decisions that chose nothing, grouped by kind and reason.
    pub pending: Vec<PendingGroup>,
    /// Every job (or analysis) brokerage of the task, in time order.
    pub decisions: Vec<DecisionView>,
}

/// How one PQ fared in a set of decisions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueueTally {
    pub queue: String,
    /// Decisions in the set.
    pub decisions: u32,
    /// Decisions that chose it, and the jobs they gave it.
    pub chosen: u32,
    pub jobs: u64,
    /// Decisions that weighed it and gave it nothing.
    pub candidate: u32,
    /// Decisions that skipped it, per filter (`weighed_later` skips not counted).
    pub skipped: Vec<StageCount>,
    /// Decisions that did not look at it at all.
    pub absent: u32,
    /// The latest skip, for the message.
    pub last_skip: Option<LastSkip>,
}

/// A filter and how often it skipped a PQ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageCount {
    pub stage: String,
    pub count: u32,
}

/// The latest time a PQ was skipped, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LastSkip {
    pub brokerage_id: u32,
    pub time_s: f64,
    pub stage: String,
    pub reason: String,
    pub temporary: bool,
}

/// Pending decisions with one reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PendingGroup {
    pub kind: String,
    pub reason: String,
    /// False for decisions that weighed candidates but placed no job and recorded no pending
    /// reason ([`NOTHING_PLACED`] is then the reason).
    pub recorded: bool,
    pub cycles: u32,
    pub first_s: f64,
    pub last_s: f64,
    /// What the candidates were skipped by in these cycles: filter, then the candidates.
    pub blocked_by: Vec<Blocker>,
}

/// A filter that skipped candidates of pending decisions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Blocker {
    pub stage: String,
    /// The candidates it skipped, each with in how many of the cycles.
    pub candidates: Vec<NameCount>,
}

/// A candidate and a count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NameCount {
    pub name: String,
    pub count: u32,
}

/// Only one PQ's rows: why (not) this queue?
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueueExplanation {
    pub run: RunIdent,
    pub queue: String,
    /// What the rows are of: a job's placing decision, a task's decisions, or the whole run.
    pub scope: Scope,
    /// One verdict per decision in scope (none for the whole run: see `tally`).
    pub verdicts: Vec<QueueVerdict>,
    pub tally: QueueTally,
    /// Jobs of the run (or task) whose PQ it is.
    pub jobs_here: u64,
}

/// The decisions a [`QueueExplanation`] looked at.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "of", rename_all = "snake_case")]
pub enum Scope {
    Job { job: Box<JobLife> },
    Task { jedi_task_id: u32 },
    Run,
}

/// One PQ in one decision.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueueVerdict {
    pub brokerage_id: u32,
    pub time_s: f64,
    pub kind: String,
    pub jedi_task_id: u32,
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Skips of an earlier loop of the same decision that a later loop overrode.
    pub earlier_skips: Vec<Skip>,
    /// The verdict in one sentence ("MWT2 was skipped at 03:10 (11400 s) by CoreCount: …").
    pub sentence: String,
}

/// How a PQ came out of a decision.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Outcome {
    Chosen {
        weight: Option<f64>,
        jobs: u32,
    },
    Candidate {
        weight: Option<f64>,
    },
    Skipped {
        stage: String,
        reason: String,
        temporary: bool,
    },
    /// The decision did not look at this PQ.
    Absent,
}
