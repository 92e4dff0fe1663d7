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
use crate::panda::job_broker::{SkipReason, Stage, TextKey};

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
    /// Job brokerage's texts found without formatting them: a stage's id by the stage, a
    /// reason's by its [`TextKey`].
    stage_ids: FxHashMap<Stage, u32>,
    reason_ids: FxHashMap<TextKey, u32>,
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
        self.push_skip(decision, candidate, stage, reason, temporary);
    }

    /// A PQ job brokerage skipped: as [`Self::skipped`] with the stage's `Debug` name, each
    /// text formatted only the first time its stage or [`TextKey`] is seen.
    pub fn job_skipped(&mut self, decision: u32, candidate: &str, stage: Stage, reason: &SkipReason, temporary: bool) {
        let candidate = self.strings.id(candidate);
        let stage = match self.stage_ids.get(&stage) {
            Some(&id) => id,
            None => {
                let id = self.format_id(format_args!("{stage:?}"));
                self.stage_ids.insert(stage, id);
                id
            }
        };
        let key = reason.text_key();
        let reason = match key.and_then(|k| self.reason_ids.get(&k)) {
            Some(&id) => id,
            None => {
                let id = self.format_id(format_args!("{reason}"));
                if let Some(k) = key {
                    self.reason_ids.insert(k, id);
                }
                id
            }
        };
        self.push_skip(decision, candidate, stage, reason, temporary);
    }

    fn push_skip(&mut self, decision: u32, candidate: u32, stage: u32, reason: u32, temporary: bool) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::panda::job_broker::QueueStatus;
    use proptest::prelude::*;

    fn cap(weight: f64, queued: u64, cutoff: u64, use_assigned: bool) -> SkipReason {
        SkipReason::Cap { weight, queued, cutoff, use_assigned }
    }

    /// `job_skipped` keeps the same rows and texts as `skipped` with the stage's `Debug` name.
    #[test]
    fn job_skipped_is_skipped_with_memos() {
        let reasons = [
            (Stage::Final, cap(0.041, 49, 20, true)),
            (Stage::Final, cap(0.041, 49, 20, true)),
            (Stage::Final, cap(0.041, 49, 20, false)),
            (Stage::Final, cap(0.1 + 0.2, 49, 20, true)),
            (Stage::Final, SkipReason::SeedCapActivated { weight: 0.5, activated_starting: 7, running: 3 }),
            (Stage::Status, SkipReason::Status(QueueStatus::Offline)),
            (Stage::Final, SkipReason::SeedCapQueued { weight: 0.5, queued: 7, running: 3, use_assigned: true }),
            (Stage::Status, SkipReason::Status(QueueStatus::Offline)),
            (Stage::Final, cap(0.041, 49, 20, true)),
            (Stage::Final, SkipReason::LowWeight { weight: 0.041 }),
            (Stage::Final, SkipReason::LowWeight { weight: 0.041 }),
        ];
        let (mut memo, mut plain) = (Records::default(), Records::default());
        for (i, (stage, reason)) in reasons.iter().enumerate() {
            let pq = if i % 2 == 0 { "PQ_A" } else { "PQ_B" };
            memo.job_skipped(0, pq, *stage, reason, i == 3);
            plain.skipped(0, pq, format_args!("{stage:?}"), reason, i == 3);
        }
        assert_eq!(memo.rows, plain.rows);
        assert_eq!(memo.strings.texts(), plain.strings.texts());
        assert_eq!(memo.strings.get(memo.rows[0].stage), "Final");
        assert_eq!(memo.rows[0].reason, memo.rows[8].reason);
        assert_ne!(memo.rows[0].reason, memo.rows[2].reason);
    }

    proptest! {
        /// Two final caps have the same key exactly when they have the same text (weights that
        /// are near, `0.1 + 0.2` and `0.3`, included).
        #[test]
        fn equal_keys_are_equal_texts(
            a in (0u8..4, 0u64..3, 19u64..21, any::<bool>()),
            b in (0u8..4, 0u64..3, 19u64..21, any::<bool>()),
        ) {
            let w = |i: u8| [0.25, 0.1 + 0.2, 0.3, -0.0][usize::from(i)];
            let (x, y) = (cap(w(a.0), a.1, a.2, a.3), cap(w(b.0), b.1, b.2, b.3));
            prop_assert_eq!(x.text_key() == y.text_key(), x.to_string() == y.to_string());
        }
    }
}
