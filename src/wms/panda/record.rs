//! Every brokerage decision of a run, kept for `brokerage.parquet` and `pilotsim explain`:
//! one [`Decision`] per brokerage (a task to a nucleus, a bunch of a task's jobs to PQs, an
//! analysis bunch to PQs) and one [`Row`] per candidate it looked at: chosen, kept as a
//! candidate with its weight, or skipped by a named filter with PanDA's message.
//!
//! A week of the ATLAS grid makes millions of rows, most of them the same PQ skipped for the
//! same reason, so a row keeps its texts (candidate, stage, reason, pending) as numbers into one
//! table of distinct strings ([`Strings`]): 32 bytes a row instead of ~100 plus three heap
//! strings, and a skip's message is formatted into a reused buffer, allocated only the first
//! time it is seen.

use rustc_hash::FxHashMap;
use std::fmt::{self, Write};

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

/// The distinct texts of the records, each kept once and named by its index. Id 0 is the
/// empty string. The map only finds a text's id; the texts are read by index, in the order
/// they were first seen, so nothing in the outputs depends on the map's order.
#[derive(Debug, Clone)]
pub struct Strings {
    list: Vec<Box<str>>,
    /// FxHash: the texts are short and many, SipHash's resistance to chosen keys buys nothing.
    ids: FxHashMap<Box<str>, u32>,
}

impl Default for Strings {
    fn default() -> Self {
        let mut s = Self { list: Vec::new(), ids: FxHashMap::default() };
        s.id("");
        s
    }
}

impl Strings {
    /// The id of `text`, added if new.
    pub fn id(&mut self, text: &str) -> u32 {
        if let Some(&i) = self.ids.get(text) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(text.into());
        self.ids.insert(text.into(), i);
        i
    }

    /// The text of id `i`.
    pub fn get(&self, i: u32) -> &str {
        &self.list[i as usize]
    }

    /// Every text, by id (for a coded output column).
    pub fn texts(&self) -> Vec<String> {
        self.list.iter().map(|t| t.to_string()).collect()
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
    /// Pending: why nothing was chosen (PanDA's message), as an id in [`Records::strings`].
    pub pending: Option<u32>,
}

/// One candidate of a decision (texts are ids in [`Records::strings`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    /// Index of its decision.
    pub decision: u32,
    /// Nucleus or PQ name.
    pub candidate: u32,
    /// The filter or stage that skipped it (0, empty, otherwise).
    pub stage: u32,
    /// PanDA's log message for the skip (0, empty, otherwise).
    pub reason: u32,
    /// Jobs it received (job brokerage).
    pub jobs: u32,
    /// Its brokerage weight, if `weighed`.
    pub weight: f64,
    pub weighed: bool,
    /// A temporary skip (the PQ is retried next cycle).
    pub temporary: bool,
    pub verdict: Verdict,
}

// The point of the compact row: keep it at 32 bytes.
const _: () = assert!(std::mem::size_of::<Row>() == 32);

impl Row {
    /// Its weight, if it was weighed.
    pub fn weight(&self) -> Option<f64> {
        self.weighed.then_some(self.weight)
    }
}

/// The decisions of a run.
#[derive(Debug, Clone, Default)]
pub struct Records {
    pub decisions: Vec<Decision>,
    pub rows: Vec<Row>,
    pub strings: Strings,
    /// Formatting buffer of stages and reasons (no allocation per row).
    scratch: String,
}

impl Records {
    /// Start a decision; its index.
    pub fn decision(&mut self, time: SimTime, kind: DecisionKind, task: u32) -> u32 {
        self.decisions.push(Decision { time, kind, task, jobs: 0, pending: None });
        (self.decisions.len() - 1) as u32
    }

    /// Decision `d` chose nothing, for `reason`.
    pub fn set_pending(&mut self, d: u32, reason: &str) {
        let id = self.strings.id(reason);
        self.decisions[d as usize].pending = Some(id);
    }

    /// The pending reason of a decision.
    pub fn pending(&self, d: &Decision) -> Option<&str> {
        d.pending.map(|i| self.strings.get(i))
    }

    /// The id of a formatted text.
    fn format_id(&mut self, text: fmt::Arguments) -> u32 {
        self.scratch.clear();
        let _ = self.scratch.write_fmt(text);
        self.strings.id(&self.scratch)
    }

    /// A candidate that was skipped at `stage` for `reason`.
    pub fn skipped(
        &mut self,
        decision: u32,
        candidate: &str,
        stage: fmt::Arguments,
        reason: &dyn fmt::Display,
        temporary: bool,
    ) {
        let candidate = self.strings.id(candidate);
        let stage = self.format_id(stage);
        let reason = self.format_id(format_args!("{reason}"));
        self.rows.push(Row {
            decision,
            candidate,
            stage,
            reason,
            jobs: 0,
            weight: 0.0,
            weighed: false,
            temporary,
            verdict: Verdict::Skipped,
        });
    }

    /// A candidate that was weighed; its row index.
    pub fn weighed(&mut self, decision: u32, candidate: &str, weight: f64, chosen: bool) -> usize {
        let candidate = self.strings.id(candidate);
        self.rows.push(Row {
            decision,
            candidate,
            stage: 0,
            reason: 0,
            jobs: 0,
            weight,
            weighed: true,
            temporary: false,
            verdict: if chosen { Verdict::Chosen } else { Verdict::Candidate },
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

/// A job brokerage decision's outcome for the JobGenerator's split: the decision, its
/// candidates' PQs (`to_queue[c]` is candidate `c`'s PQ, `rows[c]` its row here) and the picker
/// that chooses among them per `nSubChunks` jobs.
pub struct Placement {
    pub decision: u32,
    pub picker: crate::panda::job_broker::SitePicker,
    pub to_queue: Vec<usize>,
    pub rows: Vec<usize>,
}
