//! Reading an input file (scenario, DIRAC cfg, replay CSV, CRIC and gdpconfig dumps, queue JSON)
//! with a size limit: a path that never ends (`/dev/zero`, a FIFO fed for ever) or a file far
//! beyond any real dump is refused after [`MAX_INPUT_BYTES`], never read until memory runs out.

use std::io::{self, Read};
use std::path::Path;

/// The largest input file pilotsim reads: 512 MiB. The ATLAS CRIC dumps are a few MB, a month of
/// one site's job records a few hundred MB.
pub const MAX_INPUT_BYTES: u64 = 512 * 1024 * 1024;

/// The text of the file at `path`, refused (`InvalidData`) beyond [`MAX_INPUT_BYTES`] or when it
/// is not UTF-8.
pub fn read_text(path: &Path) -> io::Result<String> {
    read_text_limited(path, MAX_INPUT_BYTES)
}

/// [`read_text`] with a limit of `max` bytes.
pub fn read_text_limited(path: &Path, max: u64) -> io::Result<String> {
    let mut text = String::new();
    std::fs::File::open(path)?.take(max + 1).read_to_string(&mut text)?;
    if text.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {} MiB, the most pilotsim reads from one input file", max / (1024 * 1024)),
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_refused_at_the_limit() {
        let e = read_text_limited(Path::new("/dev/zero"), 4 * 1024 * 1024).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("larger than 4 MiB"), "{e}");
        let cargo = read_text(&Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
        assert!(cargo.contains("[package]"));
    }
}
