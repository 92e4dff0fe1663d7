//! The `pilotsim` command line: parse, run one command, map its result to the exit code.
//!
//! Exit codes, one policy for every command (as in ripgrep): 0 success; 1 the command
//! worked and the answer is no ([`cli::Outcome::No`]: an invalid scenario in `validate`, a
//! failed `check`, no feasible value in `tune`); 2 an error (bad input, I/O), printed as
//! `error: …` (clap's own usage errors also exit 2).

mod cli;

use std::process::ExitCode;

use clap::Parser;

use cli::Outcome;
use cli::args::{Cli, Command};

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Run(args) => cli::run::run(args),
        Command::Validate(args) => cli::validate::run(args),
        Command::Check(args) => cli::check::run(args),
        Command::Sweep(args) => cli::sweep::run(args),
        Command::Tune(args) => cli::tune::run(args),
        Command::Compare(args) => cli::compare::run(args),
        Command::Merge(args) => cli::sweep::merge(args),
        Command::Report(args) => cli::report::run(args),
        Command::Explain(args) => cli::explain::run(args),
        Command::New(args) => cli::new::run(args),
        Command::Import(import) => cli::import::run(import),
        Command::Generate(generate) => cli::import::generate(generate),
        Command::ArchCheck(args) => cli::arch_check::run(args),
    };
    match result {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::No) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
