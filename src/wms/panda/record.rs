//! Every brokerage decision of a run, kept for `brokerage.parquet` and `pilotsim explain`:
//! one [`Decision`] per brokerage (a task to a nucleus, a bunch of a task's jobs to PQs, an
//! analysis bunch to PQs) and one [`Row`] per candidate it looked at: chosen, kept as a
//! candidate with its weight, or skipped by a named filter with PanDA's message.

use crate::engine::SimTime;

/// What was brokered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionKind {
    /// Production task brokerage to a nucleus (`panda::task_broker`).
    Task,
    /// Production job brokerage of a bunch of a task's jobs (`panda::job_broker`).
    Job,
    /// Analysis job brokerage (`panda::anal_broker`).
    Analysis,
}

impl DecisionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionKind::Task => "task",
            DecisionKind::Job => "job",
            DecisionKind::Analysis => "analysis",
        }
    }
}

/// How a candidate came out of a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Chosen (the nucleus; for job brokerage, a PQ that got jobs of this bunch).
    Chosen,
    /// Passed every filter and was weighed, not chosen this time.
    Candidate,
    /// Dropped by a filter.
    Skipped,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Chosen => "chosen",
            Verdict::Candidate => "candidate",
            Verdict::Skipped => "skipped",
        }
    }
}

/// One brokerage.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub time: SimTime,
    pub kind: DecisionKind,
    /// Index of the task (`jediTaskID` − 1).
    pub task: u32,
    /// Jobs it placed (job brokerage), 0 for task brokerage.
    pub jobs: u32,
    /// Pending: why nothing was chosen (PanDA's message).
    pub pending: Option<String>,
}

/// One candidate of a decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Index of its decision.
    pub decision: u32,
    /// Nucleus or PQ name.
    pub candidate: String,
    pub verdict: Verdict,
    /// The filter or stage that skipped it (empty otherwise).
    pub stage: String,
    /// PanDA's log message for the skip (empty otherwise).
    pub reason: String,
    /// A temporary skip (the PQ is retried next cycle).
    pub temporary: bool,
    /// Its brokerage weight, if it was weighed.
    pub weight: Option<f64>,
    /// Jobs it received (job brokerage).
    pub jobs: u32,
}

/// The decisions of a run.
#[derive(Debug, Clone, Default)]
pub struct Records {
    pub decisions: Vec<Decision>,
    pub rows: Vec<Row>,
}

impl Records {
    /// Start a decision; its index.
    pub fn decision(&mut self, time: SimTime, kind: DecisionKind, task: u32) -> u32 {
        self.decisions.push(Decision { time, kind, task, jobs: 0, pending: None });
        (self.decisions.len() - 1) as u32
    }

    /// A candidate that was skipped.
    pub fn skipped(&mut self, decision: u32, candidate: &str, stage: String, reason: String, temporary: bool) {
        self.rows.push(Row {
            decision,
            candidate: candidate.to_string(),
            verdict: Verdict::Skipped,
            stage,
            reason,
            temporary,
            weight: None,
            jobs: 0,
        });
    }

    /// A candidate that was weighed; its row index.
    pub fn weighed(&mut self, decision: u32, candidate: &str, weight: f64, chosen: bool) -> usize {
        self.rows.push(Row {
            decision,
            candidate: candidate.to_string(),
            verdict: if chosen { Verdict::Chosen } else { Verdict::Candidate },
            stage: String::new(),
            reason: String::new(),
            temporary: false,
            weight: Some(weight),
            jobs: 0,
        });
        self.rows.len() - 1
    }

    /// Rows of `brokerage.parquet`: one per candidate, and one for each decision that looked
    /// at none (so that its pending reason is in the table).
    pub fn table_rows(&self) -> usize {
        let mut with_rows = vec![false; self.decisions.len()];
        for row in &self.rows {
            with_rows[row.decision as usize] = true;
        }
        self.rows.len() + with_rows.iter().filter(|&&has| !has).count()
    }

    /// Row `r` received a job: it becomes chosen.
    pub fn gave_job(&mut self, r: usize) {
        let row = &mut self.rows[r];
        row.jobs += 1;
        row.verdict = Verdict::Chosen;
        let d = row.decision as usize;
        self.decisions[d].jobs += 1;
    }
}
