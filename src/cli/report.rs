//! `pilotsim report`: the HTML report of a run, sweep or comparison directory.

use super::Outcome;
use super::args::ReportArgs;
use super::out::outln;

/// Write `DIR/report.html` (a comparison's directory: `DIR/compare.html` again, from its
/// files) and print its path.
pub fn run(args: ReportArgs) -> anyhow::Result<Outcome> {
    let path = if args.dir.join(pilotsim::compare::outputs::JSON_FILE).is_file() {
        pilotsim::compare::html::write(&args.dir)?
    } else {
        pilotsim::report::html::write(&args.dir)?
    };
    outln!("{}", path.display());
    Ok(Outcome::Success)
}
