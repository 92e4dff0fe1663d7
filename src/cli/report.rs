//! `pilotsim report`: the HTML report of a run or sweep directory.

use super::Outcome;
use super::args::ReportArgs;
use super::out::outln;

/// Write `DIR/report.html` and print its path.
pub fn run(args: ReportArgs) -> anyhow::Result<Outcome> {
    let path = pilotsim::report::html::write(&args.dir)?;
    outln!("{}", path.display());
    Ok(Outcome::Success)
}
