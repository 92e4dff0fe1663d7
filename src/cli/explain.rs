//! `pilotsim explain`: why did a PanDA job go where it went ([`pilotsim::report::explain`])?

use pilotsim::report::explain::{Query, RunTables, render_text};

use super::Outcome;
use super::args::ExplainArgs;
use super::out::{out, outln};

/// Print the explanation (text or JSON); [`Outcome::No`] when the job, task or queue is not in
/// the run; a directory that is not a PanDA run is an error (exit 2).
pub fn run(args: ExplainArgs) -> anyhow::Result<Outcome> {
    let tables = RunTables::open(&args.run_dir)?;
    let query = Query { job: args.job, task: args.task, queue: args.queue };
    match tables.explain(&query)? {
        Ok(e) if args.json => outln!("{}", serde_json::to_string_pretty(&e)?),
        Ok(e) => out!("{}", render_text(&e)),
        Err(missing) => {
            if args.json {
                let v = serde_json::json!({"found": false, "message": missing.message});
                outln!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                outln!("{}", missing.message);
            }
            return Ok(Outcome::No);
        }
    }
    Ok(Outcome::Success)
}
