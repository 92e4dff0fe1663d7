//! `pilotsim compare`: two configurations side by side.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use pilotsim::compare::{self, outputs};
use pilotsim::run;
use pilotsim::scenario::{self, Loaded};

use super::Outcome;
use super::args::CompareArgs;
use super::out::{out, outln};
use super::progress::{runs_bar, show_runs};

/// One side given as a scenario: the loaded file, its overrides and its description.
struct Spec {
    loaded: Loaded,
    sets: Vec<String>,
    description: String,
}

/// Which of the three forms the arguments are.
enum Form {
    /// Two scenario files, or one scenario (or the quickstart) with `--a`/`--b` overrides.
    Scenarios { a: Box<Spec>, b: Box<Spec>, out: String },
    /// Two existing directories.
    Dirs(PathBuf, PathBuf),
}

/// `PATH=VALUE` overrides as a short description.
fn describe(name: &str, sets: &[String]) -> String {
    if sets.is_empty() { name.to_string() } else { format!("{name} {}", sets.join(" ")) }
}

fn form(args: &CompareArgs) -> Result<Form> {
    let overrides = !args.a.is_empty() || !args.b.is_empty();
    let with = |extra: &[String]| -> Vec<String> { args.sets.iter().chain(extra).cloned().collect() };
    match args.inputs.as_slice() {
        [a, b] if a.is_dir() || b.is_dir() => {
            if !(a.is_dir() && b.is_dir()) {
                bail!(
                    "{} and {}: give two scenario files or two run/sweep directories, not one of each",
                    a.display(),
                    b.display()
                );
            }
            if overrides || !args.sets.is_empty() {
                bail!("--a, --b and --set apply to scenarios; two directories are compared as they are");
            }
            Ok(Form::Dirs(a.clone(), b.clone()))
        }
        [a, b] => {
            if overrides {
                bail!(
                    "--a and --b override one scenario; with two scenario files, edit the files (or use --set for both)"
                );
            }
            let (la, lb) = (scenario::load_file(a)?, scenario::load_file(b)?);
            let out = format!("{}-vs-{}", la.scenario.name, lb.scenario.name);
            let (da, db) = (describe(&la.scenario.name, &args.sets), describe(&lb.scenario.name, &args.sets));
            let a = Box::new(Spec { loaded: la, sets: with(&[]), description: da });
            let b = Box::new(Spec { loaded: lb, sets: with(&[]), description: db });
            Ok(Form::Scenarios { a, b, out })
        }
        [one] if one.is_dir() => bail!("{}: a directory is compared with another directory: give two", one.display()),
        one => {
            if !overrides {
                bail!(
                    "one scenario is compared with itself under two sets of overrides: give --a PATH=VALUE and/or --b PATH=VALUE, or two scenarios or directories"
                );
            }
            let loaded = match one.first() {
                Some(path) => scenario::load_file(path)?,
                None => scenario::quickstart(),
            };
            let name = loaded.scenario.name.clone();
            let (sa, sb) = (with(&args.a), with(&args.b));
            let (da, db) = (describe(&name, &args.a), describe(&name, &args.b));
            let a = Box::new(Spec { loaded: loaded.clone(), sets: sa, description: da });
            let b = Box::new(Spec { loaded, sets: sb, description: db });
            Ok(Form::Scenarios { a, b, out: format!("{name}-compare") })
        }
    }
}

/// Run (or read) both sides, print the key metrics and write the review directory.
pub fn run(args: CompareArgs) -> Result<Outcome> {
    let (comparison, default_out) = match form(&args)? {
        Form::Dirs(a, b) => {
            let c = compare::Comparison::of(compare::read_dir(&a, "A")?, compare::read_dir(&b, "B")?)?;
            let name = |p: &Path| p.file_name().map_or("run".into(), |n| n.to_string_lossy().into_owned());
            (c, format!("{}-vs-{}", name(&a), name(&b)))
        }
        Form::Scenarios { a, b, out } => {
            let pa = run::prepare(&a.loaded, &a.sets).map_err(|e| e.context("A"))?;
            let pb = run::prepare(&b.loaded, &b.sets).map_err(|e| e.context("B"))?;
            let bar = runs_bar(args.quiet);
            let c = compare::run_scenarios(
                (&pa, &a.description),
                (&pb, &b.description),
                args.replicas,
                args.threads,
                |d, of| show_runs(&bar, d, of),
            )?;
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            (c, out)
        }
    };
    let dir = args.out.clone().unwrap_or_else(|| PathBuf::from("results").join(default_out));
    outputs::write_all(&dir, &comparison)?;
    if !args.quiet {
        outln!("A: {}\nB: {}", comparison.a.description, comparison.b.description);
        out!("{}", outputs::text_table(&comparison));
        outln!("wrote {}", dir.join(outputs::HTML_FILE).display());
    }
    Ok(Outcome::Success)
}
