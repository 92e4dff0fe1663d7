//! Progress bars on stderr, shown only when stderr is a terminal (so pipes and logs stay
//! clean) and not `--quiet`.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar over the runs of a sweep or tuning, fed by [`show_runs`].
pub fn runs_bar(quiet: bool) -> Option<ProgressBar> {
    (!quiet && std::io::stderr().is_terminal()).then(|| {
        let b = ProgressBar::new(0);
        b.set_style(
            ProgressStyle::with_template("runs {pos}/{len} [{bar:40}] {elapsed} eta {eta}")
                .expect("valid")
                .progress_chars("=> "),
        );
        b
    })
}

/// Show `done` of `of` runs on a [`runs_bar`] (the total can grow between calls).
pub fn show_runs(bar: &Option<ProgressBar>, done: usize, of: usize) {
    if let Some(b) = bar {
        b.set_length(of as u64);
        b.set_position(done as u64);
    }
}

/// A bar over the simulated hours of one run, `end_hours` long.
pub fn progress_bar(quiet: bool, end_hours: u64) -> Option<ProgressBar> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(end_hours.max(1));
    bar.set_style(
        ProgressStyle::with_template("{spinner} simulated {pos}/{len} h [{bar:40}] {elapsed} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    Some(bar)
}

/// A plain bar over `files` files (of `pilotsim check`), its message the current file.
pub fn files_bar(files: usize) -> Option<ProgressBar> {
    std::io::stderr().is_terminal().then(|| ProgressBar::new(files as u64))
}
