//! Standard output of the command line: every command writes its answer through [`out!`]
//! and [`outln!`], never `print!`/`println!`, which panic when the reader has gone
//! (`pilotsim run | head -1`: the write fails with `EPIPE`, as Rust ignores `SIGPIPE`).
//!
//! A closed standard output means nobody wants the rest of the answer: the process exits
//! at once with status 0 and says nothing, as `ripgrep` and the Unix tools do. Another
//! write error (a full disk behind a redirection) is an error, exit 2. Both happen here
//! rather than through the commands' `Result`s because some answers are printed from
//! callbacks while the library works (`pilotsim check` prints a row per scenario).

use std::fmt;
use std::io::{self, Write};

/// Write to standard output and flush (so that a failure shows here, not at exit); see the
/// module doc for what happens when that fails.
pub fn write(args: fmt::Arguments) {
    let mut out = io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        if e.kind() == io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to standard output: {e}");
        std::process::exit(2);
    }
}

/// `print!` through [`write`].
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::out::write(format_args!($($arg)*)) };
}

/// `println!` through [`write`].
macro_rules! outln {
    ($($arg:tt)*) => { $crate::cli::out::write(format_args!("{}\n", format_args!($($arg)*))) };
}

pub(crate) use {out, outln};
