//! `pilotsim validate`: is each scenario file valid?

use pilotsim::scenario;

use super::Outcome;
use super::args::ValidateArgs;
use super::out::outln;

/// Print `FILE: ok` or the file's problem for each file; [`Outcome::No`] if any is
/// invalid (an unreadable file counts as invalid: it is one of the problems listed).
pub fn run(args: ValidateArgs) -> anyhow::Result<Outcome> {
    let mut bad = 0;
    for f in &args.files {
        match scenario::load_file(f) {
            Ok(loaded) => {
                // `expect` thresholds on metrics no run of the scenario has (typos).
                let unknown =
                    pilotsim::run::prepare(&loaded, &[]).and_then(|p| pilotsim::sweep::names::expect_problems(&p));
                match unknown {
                    Ok(problems) if !problems.is_empty() => {
                        bad += 1;
                        for (path, message) in problems {
                            outln!("{}: {path}: {message}", f.display());
                        }
                        continue;
                    }
                    Ok(_) => {}
                    Err(e) => {
                        bad += 1;
                        outln!("{}: {e:#}", f.display());
                        continue;
                    }
                }
                outln!("{}: ok", f.display());
                for w in scenario::warnings(&loaded.scenario) {
                    eprintln!("{}: warning: {}: {}", f.display(), w.path, w.message);
                }
            }
            Err(e) => {
                bad += 1;
                outln!("{e}");
            }
        }
    }
    if bad > 0 {
        eprintln!("{bad} of {} file(s) invalid", args.files.len());
        return Ok(Outcome::No);
    }
    Ok(Outcome::Success)
}
