//! The self-contained HTML report of a run or sweep directory (`pilotsim report DIR`).
//!
//! [`render`] reads the directory and returns one HTML page: inline `<style>`, the
//! directory's `*.svg` charts inlined as `<svg>` elements, no scripts and no other
//! resources (a Content-Security-Policy forbids any), so it opens offline, prints and
//! projects well. [`write()`] stores it atomically as `DIR/report.html`. The same input files
//! always give the same bytes.
//!
//! A run directory has `summary.json` ([`Summary`]); a sweep directory has `points.json`
//! ([`crate::metrics::points::Points`], written by `sweep`); a tune directory `tune.json`
//! ([`crate::metrics::points::TuneFile`], written by `tune`).

mod factory;
mod gpu;
mod panda;
mod sweep;
#[cfg(test)]
mod tests;
mod tune;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::metrics::format::pct;
use crate::metrics::summary::Summary;
use crate::metrics::write;

/// File name of the report inside the directory.
pub const REPORT_FILE: &str = "report.html";

/// The charts of a run in the order they are shown, with their captions; any other
/// `*.svg` of the directory follows in sorted order, captioned by its file name.
const RUN_CHARTS: [(&str, &str); 8] = [
    (
        "share_convergence.svg",
        "Share convergence: running share of each group over time (DIRAC in jobs, PanDA in cores); targets dashed in the same colour, warm-up shaded.",
    ),
    ("pilots_over_time.svg", "Pilots over time: waiting, running and (cumulative) aborted pilots."),
    ("wait_times.svg", "Waiting time to match: distribution (ECDF) of the time from submission to match, per group."),
    (
        "user_wait_times.svg",
        "Waiting time to match per user (the users with most jobs): DIRAC's users of groups without JOB_SHARING, PanDA's analysis users.",
    ),
    (
        "factory_throughput.svg",
        "Pilot factories: jobs finished per hour in each factory's pilots; its closed form dashed in the same colour.",
    ),
    (
        "factory_waits.svg",
        "Pilot factories: distribution (ECDF) of the wait to start of the jobs each factory's pilots ran, per job kind.",
    ),
    (
        "gpu_usage.svg",
        "GPUs: used by jobs (solid) and held by pilots (dashed) per model over time; each model's inventory as a grey guide.",
    ),
    (
        "factory_standby.svg",
        "Pilot factories: standby startd pilots after each Generator cycle; the standby policy's target dashed.",
    ),
];

/// Render the report of a run or sweep directory.
///
/// Fails if `dir` has neither `summary.json` nor `points.json`, or if one of them (or a
/// chart) cannot be read.
pub fn render(dir: &Path) -> Result<String> {
    let summary = dir.join("summary.json");
    let points = dir.join("points.json");
    if summary.is_file() {
        let text = std::fs::read_to_string(&summary).with_context(|| format!("reading {}", summary.display()))?;
        let s: Summary = serde_json::from_str(&text).with_context(|| format!("{}", summary.display()))?;
        run_page(dir, &s)
    } else if points.is_file() {
        let text = std::fs::read_to_string(&points).with_context(|| format!("reading {}", points.display()))?;
        let p: crate::metrics::points::Points =
            serde_json::from_str(&text).with_context(|| format!("{}", points.display()))?;
        sweep::page_html(dir, &p)
    } else if dir.join("tune.json").is_file() {
        let path = dir.join("tune.json");
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let t: crate::metrics::points::TuneFile =
            serde_json::from_str(&text).with_context(|| format!("{}", path.display()))?;
        tune::page_html(dir, &t)
    } else {
        let why = if dir.is_dir() { "" } else { " (no such directory)" };
        bail!("{}: not a run (summary.json), sweep (points.json) or tune (tune.json) directory{why}", dir.display())
    }
}

/// Render the report of `dir` and write it atomically to `dir/report.html`; returns that path.
pub fn write(dir: &Path) -> Result<PathBuf> {
    let html = render(dir)?;
    let path = dir.join(REPORT_FILE);
    write::atomic(&path, html.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

fn run_page(dir: &Path, s: &Summary) -> Result<String> {
    let mut b = String::new();
    let _ = write!(
        b,
        "<header><h1>{} <span class=\"sub\">seed {}</span></h1>\n<p class=\"ident\"><span>run by pilotsim {}</span> \
         <span>scenario SHA-256 <code>{}</code></span> <span>digest <code>{}</code></span></p></header>\n",
        esc(&s.scenario),
        s.seed,
        esc(&s.pilotsim_version),
        esc(&s.scenario_sha256),
        esc(&s.digest)
    );
    b.push_str("<section><h2>Overview</h2>\n<div class=\"cards\">\n");
    let run_rows = [
        ("simulated time", format!("{:.1} h", s.simulated_hours)),
        ("warm-up", format!("{:.1} h", s.warmup_hours)),
        ("events", int(s.events)),
        ("events per second", int(s.events_per_second.round() as u64)),
        ("wall time", format!("{:.2} s", s.wall_seconds)),
    ];
    let j = &s.jobs;
    let job_rows = [
        ("submitted", int(j.submitted)),
        ("done", int(j.done)),
        ("failed", int(j.failed)),
        ("running at end", int(j.running_at_end)),
        ("waiting at end", int(j.waiting_at_end)),
    ];
    let p = &s.pilots;
    let pilot_rows = [
        ("submitted", int(p.submitted)),
        ("used (ran a job)", int(p.used)),
        ("empty (ran none)", int(p.empty)),
        ("aborted", int(p.aborted)),
        ("failed", int(p.failed)),
        ("cancelled", int(p.cancelled)),
        ("refused by full CE queues", int(p.refused)),
        ("waiting at end", int(p.waiting_at_end)),
        ("running at end", int(p.running_at_end)),
        ("pilot efficiency", pct(s.pilot_efficiency)),
    ];
    for (title, rows) in [("Run", &run_rows[..]), ("Jobs", &job_rows[..]), ("Pilots", &pilot_rows[..])] {
        let rows: Vec<Vec<String>> = rows.iter().map(|(k, v)| vec![esc(k), v.clone()]).collect();
        b.push_str(&table(Some(title), &[], "lr", &rows));
    }
    b.push_str("</div></section>\n");

    let _ = write!(
        b,
        "<section><h2>Fairness</h2>\n<p>Shares of running time (DIRAC's groups in jobs, PanDA's global shares in cores; \
         and of delivered CPU work) after the \
         {:.1} h warm-up. Max group share deviation {}, Jain index {}; {}</p>\n",
        s.warmup_hours,
        pct(s.max_share_deviation),
        s.jain_index.map_or("—".into(), |x| format!("{x:.3}")),
        match s.convergence_time_h {
            Some(t) =>
                format!("every group within ±{} of its target from {t:.1} h on.", pct(Some(s.convergence_tolerance))),
            None => format!("not every group settles within ±{} of its target.", pct(Some(s.convergence_tolerance))),
        }
    );
    let rows: Vec<Vec<String>> = s
        .entities
        .iter()
        .map(|(name, e)| {
            let cls = if e.level == "user" { " class=\"user\"" } else { "" };
            vec![
                format!("<span{cls}>{}</span>", esc(name)),
                esc(&e.level),
                pct(Some(e.target_share)),
                pct(e.achieved_share),
                pct(e.achieved_cpu_share),
                pct(e.deviation),
                pct(e.max_deviation),
                e.convergence_time_h.map_or("never".into(), |t| format!("{t:.1}")),
                hours(e.mean_wait_s),
            ]
        })
        .collect();
    let head = [
        "entity",
        "level",
        "target",
        "achieved (running)",
        "achieved (CPU)",
        "deviation",
        "max deviation",
        "converged after (h)",
        "mean wait (h)",
    ];
    b.push_str(&table(None, &texts(&head), "llrrrrrrr", &rows));
    b.push_str("</section>\n");

    b.push_str("<section><h2>Waiting time to match</h2>\n");
    let rows: Vec<Vec<String>> =
        s.wait_time_s.iter().map(|(g, w)| vec![esc(g), int(w.n), hours(w.mean), hours(w.p50), hours(w.p95)]).collect();
    let head = texts(&["group", "jobs matched", "mean (h)", "p50 (h)", "p95 (h)"]);
    b.push_str(&table(None, &head, "lrrrr", &rows));
    if !s.users.is_empty() {
        // Every user, so that one starving behind a benign group figure shows.
        let rows: Vec<Vec<String>> = s
            .users
            .iter()
            .map(|(name, u)| {
                let w = &u.wait_s;
                vec![
                    esc(name),
                    int(w.n),
                    hours(w.mean),
                    hours(w.p50),
                    hours(w.p95),
                    pct(u.achieved_share),
                    pct(u.target_share),
                ]
            })
            .collect();
        let head =
            texts(&["user", "jobs matched", "mean (h)", "p50 (h)", "p95 (h)", "share of group", "target in group"]);
        b.push_str(&table(Some("Users"), &head, "lrrrrrr", &rows));
    }
    b.push_str("</section>\n");

    // A PanDA run: its own section, with its charts (figures numbered in page order).
    let mut first_figure = 1;
    if let Some(p) = s.wms.get("panda") {
        let (section, next) = panda::section(dir, p, first_figure)?;
        b.push_str(&section);
        first_figure = next;
    }
    b.push_str(&factory::section(&s.factory));
    b.push_str(&gpu::section(s.gpus.as_ref()));
    let shown: Vec<&str> = panda::PANDA_CHARTS.iter().map(|(n, _)| *n).collect();
    b.push_str(&charts(dir, &RUN_CHARTS, &shown, first_figure)?);
    let title = format!("pilotsim — {}", crate::metrics::label(&s.scenario, s.seed, &s.overrides));
    Ok(page(&title, &b))
}

/// Escape text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Seconds as hours with two decimals; `—` for none.
fn hours(v: Option<f64>) -> String {
    v.map_or("—".into(), |x| format!("{:.2}", x / 3600.0))
}

/// An integer with narrow no-break spaces between groups of three digits.
fn int(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push('\u{202F}');
        }
        out.push(c);
    }
    out
}

/// Plain texts escaped, for [`table`] heads.
fn texts(t: &[&str]) -> Vec<String> {
    t.iter().map(|s| esc(s)).collect()
}

/// A table (in a horizontally scrolling box on narrow screens); `head` and `cells` are HTML
/// fragments (no header row if `head` is empty), `align` has one `l` or `r` per column.
pub fn table(caption: Option<&str>, head: &[String], align: &str, cells: &[Vec<String>]) -> String {
    let cls = |i: usize| if align.as_bytes().get(i) == Some(&b'r') { " class=\"num\"" } else { "" };
    let mut t = String::from("<div class=\"scroll\"><table>\n");
    if let Some(c) = caption {
        let _ = writeln!(t, "<caption>{}</caption>", esc(c));
    }
    if !head.is_empty() {
        t.push_str("<thead><tr>");
        for (i, h) in head.iter().enumerate() {
            let _ = write!(t, "<th{}>{h}</th>", cls(i));
        }
        t.push_str("</tr></thead>\n");
    }
    t.push_str("<tbody>\n");
    for row in cells {
        t.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            let _ = write!(t, "<td{}>{c}</td>", cls(i));
        }
        t.push_str("</tr>\n");
    }
    t.push_str("</tbody></table></div>\n");
    t
}

/// Every `*.svg` of `dir` but those in `skip` (shown elsewhere) as captioned figures numbered
/// from `first`: those named in `known` first, in that order and with their captions, then the
/// others sorted by name.
pub fn charts(dir: &Path, known: &[(&str, &str)], skip: &[&str], first: usize) -> Result<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("listing {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".svg") && !n.starts_with('.') && !skip.contains(&n.as_str()))
        .collect();
    names.sort();
    let mut order: Vec<(String, String)> = known
        .iter()
        .filter(|(n, _)| names.iter().any(|m| m == n))
        .map(|(n, c)| ((*n).to_string(), (*c).to_string()))
        .collect();
    order.extend(names.iter().filter(|n| !known.iter().any(|(k, _)| k == n)).map(|n| (n.clone(), String::new())));
    if order.is_empty() {
        return Ok(String::new());
    }
    let mut b = String::from("<section class=\"charts\"><h2>Charts</h2>\n");
    for (i, (name, caption)) in order.iter().enumerate() {
        b.push_str(&figure(dir, name, caption, first + i)?);
    }
    b.push_str("</section>\n");
    Ok(b)
}

/// `dir/name` (an SVG) inlined as figure `number` with its caption, or a note if it is not one.
fn figure(dir: &Path, name: &str, caption: &str, number: usize) -> Result<String> {
    let path = dir.join(name);
    let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    let caption = if caption.is_empty() { String::new() } else { format!("{} ", esc(caption)) };
    Ok(match std::str::from_utf8(&bytes).ok().and_then(inline_svg) {
        Some(svg) => format!(
            "<figure>\n{svg}\n<figcaption><b>Figure {number}.</b> {caption}<span class=\"file\">{}</span></figcaption>\n\
             </figure>\n",
            esc(name)
        ),
        None => format!("<p class=\"note\">{}: not an SVG image, left out.</p>\n", esc(name)),
    })
}

/// The `<svg>…</svg>` element of an SVG file, ready to inline in HTML: the XML declaration,
/// doctype and comments before it are dropped, and a root with `width`/`height` but no
/// `viewBox` gets `viewBox="0 0 width height"` so it scales. `None` if there is no root
/// `<svg>` element.
fn inline_svg(text: &str) -> Option<String> {
    let mut rest = text.trim_start_matches('\u{FEFF}').trim_start();
    loop {
        let skip_to = if rest.starts_with("<?") {
            rest.find("?>").map(|i| i + 2)
        } else if rest.starts_with("<!--") {
            rest.find("-->").map(|i| i + 3)
        } else if rest.starts_with("<!") {
            rest.find('>').map(|i| i + 1)
        } else {
            break;
        };
        rest = rest[skip_to?..].trim_start();
    }
    let after = rest.strip_prefix("<svg")?;
    if !after.starts_with(|c: char| c.is_ascii_whitespace() || c == '>' || c == '/') {
        return None;
    }
    let end = rest.rfind("</svg>")? + "</svg>".len();
    let tag_end = tag_end(rest)?;
    let attrs = attributes(&rest[4..tag_end]);
    let get = |name: &str| attrs.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());
    let mut out = String::from("<svg");
    if get("viewBox").is_none()
        && let (Some(w), Some(h)) = (get("width").and_then(length_px), get("height").and_then(length_px))
    {
        let _ = write!(out, " viewBox=\"0 0 {w} {h}\"");
    }
    out.push_str(&rest[4..end]);
    Some(out)
}

/// Index of the `>` closing the start tag at the beginning of `s` (quotes respected).
fn tag_end(s: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return Some(i),
            _ => {}
        }
    }
    None
}

/// The `name="value"` attributes of a start tag's inside.
fn attributes(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(eq) = rest.find('=') {
        let name = rest[..eq].trim().rsplit(|c: char| c.is_ascii_whitespace()).next().unwrap_or("").to_string();
        let value = rest[eq + 1..].trim_start();
        let Some(q) = value.chars().next().filter(|c| *c == '"' || *c == '\'') else { break };
        let Some(close) = value[1..].find(q) else { break };
        out.push((name, value[1..1 + close].to_string()));
        rest = &value[close + 2..];
    }
    out
}

/// A length in CSS pixels: a plain number, `px` or `pt`; `None` for relative units.
fn length_px(v: &str) -> Option<f64> {
    let v = v.trim();
    let (num, scale) = match v.strip_suffix("px") {
        Some(n) => (n, 1.0),
        None => v.strip_suffix("pt").map_or((v, 1.0), |n| (n, 4.0 / 3.0)),
    };
    num.trim().parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0).map(|x| x * scale)
}

const STYLE: &str = include_str!("html/style.css");

/// The whole page around `body`.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"pilotsim {v}\">\n<title>{t}</title>\n<style>\n{STYLE}</style>\n</head>\n\
         <body>\n<div class=\"page\">\n<main>\n{body}</main>\n<footer>generated by pilotsim {v}</footer>\n</div>\n</body>\n</html>\n",
        v = esc(crate::VERSION),
        t = esc(title),
    )
}
