//! Atomic file writes: write to a hidden temporary name in the same directory, then rename,
//! so an interrupted run never leaves a truncated file that looks complete.
//!
//! The rename is atomic whatever happens to the process (Ctrl-C, a kill, a panic elsewhere).
//! The file is not synced to disk before it: outputs are reproducible from the scenario and
//! seed, and on the project's virtual machine a 1 000-job replay's whole run took 0.88× as
//! long with its syncs made no-ops, while a one-thread quickstart sweep spent 0.42 s of its
//! 2.52 s waiting (wall less CPU time) with them. After a power loss a file may be empty or
//! missing; a resumed sweep runs again a run whose file is empty.

use std::fs;
use std::io::Write;
use std::path::Path;

/// Write `bytes` to `path` atomically, through the temporary `.NAME.tmp-PID` beside it.
pub fn atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| std::io::Error::other(format!("{} has no file name", path.display())))?;
    let tmp = dir.join(format!(".{}{TMP}{}", name.to_string_lossy(), std::process::id()));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// What separates a temporary's name from the id of the process writing it.
const TMP: &str = ".tmp-";

/// True for the name of a temporary that [`atomic`] leaves when its process is killed
/// (`.NAME.tmp-PID`) and that is not this process's own.
fn is_stale_temporary(name: &str) -> bool {
    let Some((stem, pid)) = name.rsplit_once(TMP) else { return false };
    name.starts_with('.')
        && stem.len() > 1
        && !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && pid != std::process::id().to_string()
}

/// Remove from `dir` the temporaries of [`atomic`] that a killed process left (nothing if
/// `dir` does not exist); returns how many. Two processes never write into one output
/// directory at once, so another process's temporary is an orphan.
pub fn remove_stale_temporaries(dir: &Path) -> std::io::Result<usize> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry?;
        if entry.file_name().to_str().is_some_and(is_stale_temporary) && entry.file_type()?.is_file() {
            fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces_leaving_no_temporary() {
        let dir = std::env::temp_dir().join(format!("pilotsim-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.json");
        atomic(&p, b"one").unwrap();
        atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(atomic(&dir.join("missing/x"), b"x").is_err());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn stale_temporaries_are_removed_and_nothing_else() {
        let dir = std::env::temp_dir().join(format!("pilotsim-stale-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let own = format!(".b.json.tmp-{}", std::process::id());
        for name in [".jobs.parquet.tmp-99999", ".a.json.tmp-1", "keep.tmp-12", ".keep.tmp-", ".keep.tmp-12x", &own] {
            fs::write(dir.join(name), b"x").unwrap();
        }
        assert_eq!(remove_stale_temporaries(&dir).unwrap(), 2);
        let mut names: Vec<_> =
            fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        assert_eq!(names, [own.as_str(), ".keep.tmp-", ".keep.tmp-12x", "keep.tmp-12"]);
        assert_eq!(remove_stale_temporaries(&dir.join("missing")).unwrap(), 0);
        fs::remove_dir_all(&dir).unwrap();
    }
}
