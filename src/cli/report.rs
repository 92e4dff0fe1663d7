//! `pilotsim report`: the HTML report of a run or sweep directory.

use super::Outcome;
use super::args::ReportArgs;

/// Write `DIR/report.html` and print its path.
pub fn run(args: ReportArgs) -> anyhow::Result<Outcome> {
    let path = pilotsim::report::html::write(&args.dir)?;
    println!("{}", path.display());
    Ok(Outcome::Success)
}
