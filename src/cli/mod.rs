//! The commands of the `pilotsim` binary: its arguments ([`args`]), one module per command,
//! each with a `run` function from its arguments to an [`Outcome`] (`sweep` also has
//! `merge`), and the progress bars they share ([`progress`]). The work itself is done by
//! the library; these modules only read arguments, call it and print (through [`out`], which
//! ends the process quietly when the reader has gone). `main` maps the
//! result to the exit code (see [`Outcome`]).

pub mod arch_check;
pub mod args;
pub mod check;
pub mod compare;
pub mod explain;
pub mod import;
pub mod new;
pub mod out;
pub mod progress;
pub mod report;
pub mod run;
pub mod sweep;
pub mod tune;
pub mod validate;

/// What a command found when it did not fail. With errors, the one exit-code policy of
/// `pilotsim` (as in ripgrep): 0 [`Outcome::Success`], 1 [`Outcome::No`], 2 an error (bad
/// input, I/O; `main` prints it as `error: …`, and clap's usage errors also exit 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The command did what was asked: exit 0.
    Success,
    /// The command worked and the answer is no (`validate` found an invalid scenario,
    /// `check` a failed threshold or baseline, `tune` no feasible value): exit 1. The
    /// command has printed why.
    No,
}
