//! report.html of a real run in headless Chromium: it loads with no console message at all
//! (the page has no script, and its Content-Security-Policy turns any request for an outside
//! resource into a console error) and every chart of the directory is an `<svg>` in the DOM.
//!
//! Console messages are read from Chromium's own log (`--enable-logging=stderr`), where
//! each is a `…:CONSOLE…` line; a control page with a deliberate error proves they are seen.
//! Without Debian's `chromium` these tests say so and pass, unless
//! `PILOTSIM_REQUIRE_CHROMIUM=1`; `PILOTSIM_CHROMIUM=<path>` names another browser binary.
//! `PILOTSIM_REPORT_OUT=<dir>` keeps the report and its screenshot there.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

const FLAGS: [&str; 8] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];
const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];

/// Debian's Chromium (or `PILOTSIM_CHROMIUM`, if set), or `None` (after saying so) when it
/// is not installed and not required.
fn chromium() -> Option<PathBuf> {
    let candidates = match std::env::var_os("PILOTSIM_CHROMIUM") {
        Some(p) => vec![PathBuf::from(p)],
        None => vec![PathBuf::from("/usr/bin/chromium"), PathBuf::from("/usr/bin/chromium-browser")],
    };
    let found = candidates.into_iter().find(|p| p.is_file());
    if found.is_none() {
        let required = std::env::var("PILOTSIM_REQUIRE_CHROMIUM").is_ok_and(|v| v == "1");
        assert!(!required, "PILOTSIM_REQUIRE_CHROMIUM=1 but chromium is not installed (apt-get install chromium)");
        eprintln!("chromium is not installed: skipping the browser checks of report.html (apt-get install chromium)");
    }
    found
}

/// A fresh temporary directory.
fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pilotsim-it-report-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A real run directory (quickstart, seed 1) written by the library.
fn run_dir(name: &str) -> PathBuf {
    let dir = temp(name).join("run");
    let p = pilotsim::run::prepare(&pilotsim::scenario::quickstart(), &[]).unwrap();
    pilotsim::run::simulate(&p, 1, |_, _| {}).unwrap().write(&dir).unwrap();
    dir
}

/// What Chromium printed for one page.
struct Browsed {
    /// stdout: the serialised DOM for `--dump-dom`.
    stdout: String,
    /// Console messages (uncaught errors, CSP violations, console.* calls).
    console: Vec<String>,
}

/// Load `page` in headless Chromium with `action` (`--dump-dom`, `--screenshot=…`), a fresh
/// profile in `work`, and at most 90 s.
fn browse(chromium: &Path, work: &Path, page: &Path, action: &[&str]) -> Browsed {
    static RUNS: AtomicU32 = AtomicU32::new(0);
    let n = RUNS.fetch_add(1, Ordering::Relaxed);
    let profile = work.join(format!("chromium-profile-{n}"));
    let (out, err) = (work.join(format!("chromium-{n}.out")), work.join(format!("chromium-{n}.err")));
    let mut child = Command::new(chromium)
        .args(FLAGS)
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--enable-logging=stderr", "--v=0"])
        .args(action)
        .arg(format!("file://{}", page.canonicalize().unwrap().display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .process_group(0)
        .spawn()
        .expect("chromium starts");
    let deadline = Instant::now() + Duration::from_secs(90);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            // Chromium and the helpers it started, all in the process group it leads.
            let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).status();
            let _ = child.wait();
            panic!("chromium did not finish within 90 s on {}", page.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stderr = std::fs::read_to_string(&err).unwrap();
    assert!(status.success(), "chromium failed ({status}) on {}:\n{stderr}", page.display());
    let _ = std::fs::remove_dir_all(&profile);
    Browsed {
        stdout: std::fs::read_to_string(&out).unwrap(),
        console: stderr.lines().filter(|l| l.contains("CONSOLE") || l.contains("Uncaught")).map(String::from).collect(),
    }
}

/// The checks of a written report in Chromium: `charts` charts, and the `texts` in the DOM.
fn check_in_chromium(chromium: &Path, dir: &Path, report: &Path, charts: usize, texts: &[&str]) {
    let work = dir.parent().unwrap().join("browser");
    std::fs::create_dir_all(&work).unwrap();

    // The control pages first: a deliberate script error, and the real report with one
    // outside image added, must both show up as console messages.
    let bad = work.join("bad.html");
    std::fs::write(&bad, "<!DOCTYPE html><title>x</title><p>x</p><script>undefined_fn()</script>").unwrap();
    let seen = browse(chromium, &work, &bad, &["--dump-dom"]).console;
    assert!(seen.iter().any(|l| l.contains("Uncaught ReferenceError") && l.contains("undefined_fn")), "{seen:?}");
    let html = std::fs::read_to_string(report).unwrap();
    let outside = work.join("outside.html");
    let img = "<img src=\"https://example.invalid/x.png\" alt=\"\"></body>";
    std::fs::write(&outside, html.replacen("</body>", img, 1)).unwrap();
    let seen = browse(chromium, &work, &outside, &["--dump-dom"]).console;
    assert!(seen.iter().any(|l| l.contains("Content Security Policy") && l.contains("example.invalid")), "{seen:?}");

    // The report itself: no console message, every chart in the DOM.
    let loaded = browse(chromium, &work, report, &["--dump-dom"]);
    assert!(loaded.console.is_empty(), "console messages: {:#?}", loaded.console);
    let dom = &loaded.stdout;
    let svgs =
        std::fs::read_dir(dir).unwrap().filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "svg"));
    assert_eq!(svgs.count(), charts, "the run wrote its {charts} charts");
    assert_eq!(dom.matches("<svg").count(), charts, "every chart is an svg element in the DOM");
    assert_eq!(dom.matches("<figure>").count(), charts);
    assert_eq!(dom.matches("viewBox=\"0 0 1600 900\"").count(), charts);
    for t in texts {
        assert!(dom.contains(t), "{t} is in the DOM");
    }
    assert!(dom.contains("<footer>generated by pilotsim "));

    // A screenshot of the whole page: a real PNG of some size.
    let png = work.join("report.png");
    let shot = format!("--screenshot={}", png.display());
    let loaded = browse(chromium, &work, report, &[&shot, "--window-size=1280,4400", "--hide-scrollbars"]);
    assert!(loaded.console.is_empty(), "console messages: {:#?}", loaded.console);
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(bytes[..8], PNG_SIGNATURE);
    assert!(bytes.len() > 50_000, "a screenshot of tables and charts, not a blank page: {} bytes", bytes.len());
    if let Some(keep) = std::env::var_os("PILOTSIM_REPORT_OUT") {
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::copy(&png, Path::new(&keep).join("report.png")).unwrap();
        std::fs::copy(report, Path::new(&keep).join("report.html")).unwrap();
    }
}

#[test]
fn report_of_a_run_renders_in_chromium_without_console_errors() {
    let Some(chromium) = chromium() else { return };
    let dir = run_dir("lib");
    let report = pilotsim::report::html::write(&dir).unwrap();
    assert_eq!(report, dir.join("report.html"));
    check_in_chromium(&chromium, &dir, &report, 4, &["<h2>Fairness</h2>", "lhcb_user/alice"]);
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}

#[test]
fn report_of_a_panda_run_renders_in_chromium_with_its_panda_section() {
    let Some(chromium) = chromium() else { return };
    let dir = temp("panda").join("run");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/panda_quickstart.ron");
    let p = pilotsim::run::prepare(&pilotsim::scenario::load_file(&path).unwrap(), &[]).unwrap();
    pilotsim::run::simulate(&p, 4, |_, _| {}).unwrap().write(&dir).unwrap();
    let report = pilotsim::report::html::write(&dir).unwrap();
    let texts = ["<h2>PanDA</h2>", "<caption>PanDA queues</caption>", "<td>BNL_SCORE</td>", "queue_waits.svg"];
    check_in_chromium(&chromium, &dir, &report, 7, &texts);
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}

#[test]
fn compare_html_renders_in_chromium_with_its_table_and_overlay_charts() {
    let Some(chromium) = chromium() else { return };
    let dir = temp("compare").join("compare");
    let q = pilotsim::scenario::quickstart();
    let side = |epf: &str| {
        let sets = ["duration_s=28800".to_string(), format!("dirac.director.extra_pilot_fraction={epf}")];
        pilotsim::run::prepare(&q, &sets).unwrap()
    };
    let (a, b) = (side("0.2"), side("0.5"));
    let c = pilotsim::compare::run_scenarios((&a, "epf 0.2"), (&b, "epf 0.5"), 2, None, |_, _| {}).unwrap();
    pilotsim::compare::outputs::write_all(&dir, &c).unwrap();
    let texts = ["<h2>Key metrics</h2>", "<code>pilots.submitted</code>", "beyond noise", "user_wait_times.svg"];
    check_in_chromium(&chromium, &dir, &dir.join("compare.html"), 4, &texts);
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}

#[test]
fn report_subcommand_writes_report_html_and_rejects_other_directories() {
    let pilotsim = || Command::new(env!("CARGO_BIN_EXE_pilotsim"));
    let dir = run_dir("cli");
    let out = pilotsim().arg("report").arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report = dir.join("report.html");
    assert!(String::from_utf8_lossy(&out.stdout).contains(&report.display().to_string()));
    assert_eq!(std::fs::read(&report).unwrap(), pilotsim::report::html::render(&dir).unwrap().into_bytes());

    let empty = dir.parent().unwrap().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = pilotsim().arg("report").arg(&empty).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "an error");
    let err = String::from_utf8_lossy(&out.stderr);
    let expected =
        format!("{}: not a run (summary.json), sweep (points.json) or tune (tune.json) directory", empty.display());
    assert!(err.contains(&expected), "{err}");

    if let Some(chromium) = chromium() {
        check_in_chromium(&chromium, &dir, &report, 4, &["<h2>Fairness</h2>", "lhcb_user/alice"]);
    }
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}
