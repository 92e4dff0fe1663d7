//! The examples in `--help` are real commands: each parses, names a shipped scenario, and
//! every field it sets, varies or tunes exists in that scenario and leaves it valid.

use std::path::Path;

use clap::{CommandFactory, Parser};

use super::{Cli, Command};
use pilotsim::scenario::{self, overrides};

/// Every example in the long help of every command: lines starting `pilotsim `, with the
/// indented continuation lines that follow joined to them.
fn examples() -> Vec<String> {
    let mut cli = Cli::command();
    let mut helps = vec![cli.render_long_help().to_string()];
    let names: Vec<String> = cli.get_subcommands().map(|c| c.get_name().to_string()).collect();
    for sub in cli.get_subcommands_mut() {
        helps.push(sub.render_long_help().to_string());
    }
    // `pilotsim COMMAND …`, not prose that starts with the program's name.
    let starts_example = |text: &str| {
        let mut w = text.split_whitespace();
        w.next() == Some("pilotsim") && w.next().is_some_and(|c| names.iter().any(|n| n == c))
    };
    let mut out: Vec<String> = Vec::new();
    for help in helps {
        let mut current: Option<(usize, String)> = None;
        for line in help.lines() {
            let indent = line.len() - line.trim_start().len();
            let text = line.trim();
            match &mut current {
                Some((i, cmd)) if indent > *i && text.starts_with("--") => {
                    cmd.push(' ');
                    cmd.push_str(text);
                    continue;
                }
                _ => {}
            }
            if let Some((_, cmd)) = current.take() {
                out.push(cmd);
            }
            let found = text.match_indices("pilotsim ").map(|(at, _)| at).find(|&at| starts_example(&text[at..]));
            if let Some(at) = found.filter(|&at| at == 0 || text[..at].ends_with(": ")) {
                current = Some((indent, text[at..].to_string()));
            }
        }
        out.extend(current.map(|(_, c)| c));
    }
    out
}

/// Words of a command line as a shell splits them (single quotes only, as the examples use).
fn words(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut word, mut quoted, mut any) = (String::new(), false, false);
    for c in cmd.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            c => word.push(c),
        }
    }
    if any || !word.is_empty() {
        out.push(word);
    }
    out
}

/// The scenario file and the overrides of each configuration a run, sweep, tune or compare
/// example makes (a varied or tuned field with its first value).
fn configurations(cmd: &Command) -> Option<(&Path, Vec<Vec<String>>)> {
    let first = |spec: &str| {
        let (path, values) = spec.split_once('=').expect("PATH=SPEC");
        let value = values.split([',', ':']).next().unwrap_or(values);
        format!("{path}={value}")
    };
    match cmd {
        Command::Run(a) => Some((a.scenario.as_deref()?, vec![a.sets.clone()])),
        Command::Sweep(a) => {
            Some((&a.scenario, vec![a.sets.iter().cloned().chain(a.vary.iter().map(|v| first(v))).collect()]))
        }
        Command::Tune(a) => Some((&a.scenario, vec![a.sets.iter().cloned().chain([first(&a.param)]).collect()])),
        Command::Compare(c) if c.inputs.len() == 1 => {
            let side = |x: &[String]| c.sets.iter().chain(x).cloned().collect();
            Some((&c.inputs[0], vec![side(&c.a), side(&c.b)]))
        }
        _ => None,
    }
}

#[test]
fn every_help_example_is_a_command_that_works_on_a_shipped_scenario() {
    let examples = examples();
    assert!(examples.len() >= 10, "{examples:#?}");
    for kind in ["panda", "factory", "dirac"] {
        assert!(examples.iter().any(|e| e.contains(kind)), "no example for {kind}: {examples:#?}");
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for example in &examples {
        let argv = words(example.split(" > ").next().unwrap_or(example));
        let cli = Cli::try_parse_from(&argv).unwrap_or_else(|e| panic!("{example}: {e}"));
        let Some((file, configurations)) = configurations(&cli.command) else { continue };
        let loaded = scenario::load_file(&root.join(file)).unwrap_or_else(|e| panic!("{example}: {e}"));
        for sets in configurations {
            let s = overrides::apply(&loaded.scenario, &sets).unwrap_or_else(|e| panic!("{example}: {e}"));
            assert_eq!(scenario::validate(&s), vec![], "{example}");
            checked += 1;
        }
    }
    assert!(checked >= 6, "{checked} scenario examples checked");
}
