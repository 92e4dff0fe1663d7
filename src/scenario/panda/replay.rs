//! Replay of PanDA job records: a CSV with the columns of
//! `data/panda_cgsim/jan_100_BNL.csv` (the `ATLAS_PANDA.JOBSARCHIVED` columns CGSim exports), read
//! when the scenario is loaded. Each record becomes one job submitted at its `creationtime`
//! (shifted so that the earliest record arrives at the stream's `start_s`) to its
//! `computingsite` (a `panda.queues[]` name, or the stream's `queue`); `wms::panda::replay` runs
//! them. What a record means for its job is here ([`JobRecord::outcome`], [`JobRecord::wall_s`],
//! [`JobRecord::priority`], [`JobRecord::reads_directly`]), so that validation and the simulation
//! read it the same way.
//!
//! Errors are `FILE:LINE: column: what was expected`. The header names the columns (any order;
//! unknown extra columns are ignored); every column of [`COLUMNS`] must be there. Empty cells are
//! `None` except in `pandaid`, `creationtime`, `computingsite` and `corecount`. Times are UTC
//! `YYYY-MM-DD HH:MM:SS`, stored as seconds since 1970-01-01. Quoted cells (`"a,b"`, `""` for a
//! quote) are read as RFC 4180 says.

use serde::{Deserialize, Serialize};

/// The columns of a job-record CSV.
pub const COLUMNS: &[&str] = &[
    "pandaid",
    "creationtime",
    "starttime",
    "endtime",
    "computingelement",
    "assignedpriority",
    "currentpriority",
    "jobstatus",
    "jobname",
    "cpuconsumptiontime",
    "computingsite",
    "cpuconversion",
    "job_walltime",
    "job_queuetime",
    "cpu_eff",
    "destinationdblock",
    "destinationse",
    "sourcesite",
    "transfertype",
    "corecount",
    "ninputdatafiles",
    "inputfilebytes",
    "noutputdatafiles",
    "outputfilebytes",
    "piloterrorcode",
    "exeerrorcode",
    "ddmerrorcode",
    "jobdispatchererrorcode",
    "taskbuffererrorcode",
    "pilottiming",
];

/// A stream of replayed job records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayStream {
    /// Stream name, unique among `tasks`, `analysis` and `replay`.
    pub name: String,
    /// The CSV file, relative to the scenario file.
    pub file: String,
    /// When the earliest record arrives, s (default 0).
    #[serde(default)]
    pub start_s: f64,
    /// Send every record to this queue instead of its `computingsite` (`None` default).
    #[serde(default)]
    pub queue: Option<String>,
    /// The gshare leaf the jobs count for (a leaf of `panda.gshares`). The records carry no
    /// gshare: it may be left out only when the share tree has a single leaf, which is then taken.
    #[serde(default)]
    pub gshare: Option<String>,
    /// Where the jobs' outputs (`outputfilebytes`) go: a `panda.nuclei[].site`, over the network,
    /// through `transferring`. `None` (default): a job is `finished` right after its run.
    #[serde(default)]
    pub nucleus: Option<String>,
    /// The records, read from `file` when the scenario is loaded (not written in the scenario).
    #[serde(skip)]
    pub records: Vec<JobRecord>,
}

/// One job record (a row of the CSV).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobRecord {
    /// Its line in the file (1-based; the header is line 1), for messages.
    pub line: usize,
    pub pandaid: u64,
    /// Seconds since 1970-01-01 UTC.
    pub creation_s: i64,
    pub start_s: Option<i64>,
    pub end_s: Option<i64>,
    pub computingelement: String,
    pub assignedpriority: Option<i64>,
    pub currentpriority: Option<i64>,
    pub jobstatus: String,
    pub jobname: String,
    /// CPU seconds consumed.
    pub cpuconsumptiontime: Option<f64>,
    pub computingsite: String,
    pub cpuconversion: Option<f64>,
    /// Seconds.
    pub job_walltime: Option<f64>,
    pub job_queuetime: Option<f64>,
    pub cpu_eff: Option<f64>,
    pub destinationdblock: String,
    pub destinationse: String,
    pub sourcesite: String,
    pub transfertype: String,
    pub corecount: u32,
    pub ninputdatafiles: Option<f64>,
    pub inputfilebytes: Option<f64>,
    pub noutputdatafiles: Option<f64>,
    pub outputfilebytes: Option<f64>,
    pub piloterrorcode: Option<i64>,
    pub exeerrorcode: Option<i64>,
    pub ddmerrorcode: Option<i64>,
    pub jobdispatchererrorcode: Option<i64>,
    pub taskbuffererrorcode: Option<i64>,
    /// The pilot's phase timings, s (`a|b|c…`).
    pub pilottiming: Vec<f64>,
}

/// A CSV that cannot be read: `line` is 1-based (the header is line 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayError {
    pub line: usize,
    /// The column, empty for errors of the whole line.
    pub column: String,
    pub message: String,
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.column.is_empty() {
            write!(f, "{}: {}", self.line, self.message)
        } else {
            write!(f, "{}: {}: {}", self.line, self.column, self.message)
        }
    }
}

/// Split one CSV line into cells (RFC 4180 quoting within the line).
fn split_line(line: &str) -> Result<Vec<String>, String> {
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut at_start = true;
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    cur.push('"');
                } else {
                    quoted = false;
                }
            } else {
                cur.push(c);
            }
        } else if c == '"' && at_start {
            quoted = true;
            at_start = false;
        } else if c == ',' {
            cells.push(std::mem::take(&mut cur));
            at_start = true;
        } else {
            cur.push(c);
            at_start = false;
        }
    }
    if quoted {
        return Err("a quoted cell is not closed on its line".into());
    }
    cells.push(cur);
    Ok(cells)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) as seconds since the epoch.
pub fn parse_time(s: &str) -> Option<i64> {
    let (date, time) = s.trim().split_once(' ')?;
    let d: Vec<&str> = date.split('-').collect();
    let t: Vec<&str> = time.split(':').collect();
    if d.len() != 3 || t.len() != 3 || d[0].len() != 4 {
        return None;
    }
    let num =
        |x: &str| -> Option<i64> { (!x.is_empty() && x.bytes().all(|b| b.is_ascii_digit())).then(|| x.parse().ok())? };
    let (y, mo, da) = (num(d[0])?, num(d[1])?, num(d[2])?);
    let (h, mi, se) = (num(t[0])?, num(t[1])?, num(t[2])?);
    let mdays = [
        31,
        if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&mo) || da < 1 || da > mdays[(mo - 1) as usize] || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    Some(days_from_civil(y, mo, da) * 86_400 + h * 3600 + mi * 60 + se)
}

struct Row<'a> {
    line: usize,
    cells: &'a [String],
    index: &'a [usize],
}

impl Row<'_> {
    fn cell(&self, k: usize) -> &str {
        self.cells[self.index[k]].trim()
    }

    fn err(&self, k: usize, message: String) -> ReplayError {
        ReplayError { line: self.line, column: COLUMNS[k].to_string(), message }
    }

    fn text(&self, k: usize) -> String {
        self.cell(k).to_string()
    }

    fn required_text(&self, k: usize) -> Result<String, ReplayError> {
        let v = self.cell(k);
        if v.is_empty() { Err(self.err(k, "expected a value, got an empty cell".into())) } else { Ok(v.to_string()) }
    }

    fn time(&self, k: usize) -> Result<Option<i64>, ReplayError> {
        let v = self.cell(k);
        if v.is_empty() {
            return Ok(None);
        }
        parse_time(v)
            .map(Some)
            .ok_or_else(|| self.err(k, format!("expected a UTC time YYYY-MM-DD HH:MM:SS, got {v:?}")))
    }

    fn float(&self, k: usize) -> Result<Option<f64>, ReplayError> {
        let v = self.cell(k);
        if v.is_empty() {
            return Ok(None);
        }
        match v.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(self.err(k, format!("expected a number, got {v:?}"))),
        }
    }

    fn int(&self, k: usize) -> Result<Option<i64>, ReplayError> {
        let v = self.cell(k);
        if v.is_empty() {
            return Ok(None);
        }
        // Integer columns are sometimes exported as floats (`10.0`): accept whole numbers.
        if let Ok(n) = v.parse::<i64>() {
            return Ok(Some(n));
        }
        match v.parse::<f64>() {
            Ok(x) if x.is_finite() && x.fract() == 0.0 && x.abs() < 9.0e15 => Ok(Some(x as i64)),
            _ => Err(self.err(k, format!("expected an integer, got {v:?}"))),
        }
    }
}

fn col(name: &str) -> usize {
    COLUMNS.iter().position(|c| *c == name).expect("a known column")
}

/// Read a job-record CSV.
pub fn read_csv(text: &str) -> Result<Vec<JobRecord>, ReplayError> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let (width, index) = read_header(lines.next())?;
    let mut out = Vec::new();
    for (i, l) in lines {
        let line = i + 1;
        let cells = split_line(l).map_err(|m| ReplayError { line, column: String::new(), message: m })?;
        if cells.len() != width {
            return Err(ReplayError {
                line,
                column: String::new(),
                message: format!("expected {width} cells as in the header, got {}", cells.len()),
            });
        }
        out.push(Row { line, cells: &cells, index: &index }.record()?);
    }
    Ok(out)
}

/// The header, the first line that is not blank (a UTF-8 byte-order mark ignored): it must name
/// every column of [`COLUMNS`]. Returns how many cells each line has, and the cell of each
/// column.
fn read_header(first: Option<(usize, &str)>) -> Result<(usize, Vec<usize>), ReplayError> {
    let Some((h, header)) = first else {
        return Err(ReplayError {
            line: 1,
            column: String::new(),
            message: "empty file: expected a header line".into(),
        });
    };
    let header_line = h + 1;
    let names = split_line(header.trim_start_matches('\u{feff}')).map_err(|m| ReplayError {
        line: header_line,
        column: String::new(),
        message: m,
    })?;
    let mut index = Vec::with_capacity(COLUMNS.len());
    for c in COLUMNS {
        match names.iter().position(|n| n.trim() == *c) {
            Some(i) => index.push(i),
            None => {
                return Err(ReplayError {
                    line: header_line,
                    column: c.to_string(),
                    message: "expected this column in the header".into(),
                });
            }
        }
    }
    Ok((names.len(), index))
}

impl Row<'_> {
    /// The record of this line: a job id, a creation time and cores in their columns, every
    /// other cell read by its column's type, and an end not before the start. The first cell
    /// that cannot be read is the error.
    fn record(&self) -> Result<JobRecord, ReplayError> {
        let pandaid = match self.int(col("pandaid"))? {
            Some(n) if n >= 0 => n as u64,
            _ => {
                return Err(
                    self.err(col("pandaid"), format!("expected a job id ≥ 0, got {:?}", self.cell(col("pandaid"))))
                );
            }
        };
        let creation_s = self
            .time(col("creationtime"))?
            .ok_or_else(|| self.err(col("creationtime"), "expected a UTC time, got an empty cell".into()))?;
        let corecount = match self.int(col("corecount"))? {
            Some(n) if (1..=i64::from(u32::MAX)).contains(&n) => n as u32,
            _ => {
                return Err(
                    self.err(col("corecount"), format!("expected cores ≥ 1, got {:?}", self.cell(col("corecount"))))
                );
            }
        };
        let pilottiming = self.pilottiming()?;
        let rec = JobRecord {
            line: self.line,
            pandaid,
            creation_s,
            start_s: self.time(col("starttime"))?,
            end_s: self.time(col("endtime"))?,
            computingelement: self.text(col("computingelement")),
            assignedpriority: self.int(col("assignedpriority"))?,
            currentpriority: self.int(col("currentpriority"))?,
            jobstatus: self.text(col("jobstatus")),
            jobname: self.text(col("jobname")),
            cpuconsumptiontime: self.float(col("cpuconsumptiontime"))?,
            computingsite: self.required_text(col("computingsite"))?,
            cpuconversion: self.float(col("cpuconversion"))?,
            job_walltime: self.float(col("job_walltime"))?,
            job_queuetime: self.float(col("job_queuetime"))?,
            cpu_eff: self.float(col("cpu_eff"))?,
            destinationdblock: self.text(col("destinationdblock")),
            destinationse: self.text(col("destinationse")),
            sourcesite: self.text(col("sourcesite")),
            transfertype: self.text(col("transfertype")),
            corecount,
            ninputdatafiles: self.float(col("ninputdatafiles"))?,
            inputfilebytes: self.float(col("inputfilebytes"))?,
            noutputdatafiles: self.float(col("noutputdatafiles"))?,
            outputfilebytes: self.float(col("outputfilebytes"))?,
            piloterrorcode: self.int(col("piloterrorcode"))?,
            exeerrorcode: self.int(col("exeerrorcode"))?,
            ddmerrorcode: self.int(col("ddmerrorcode"))?,
            jobdispatchererrorcode: self.int(col("jobdispatchererrorcode"))?,
            taskbuffererrorcode: self.int(col("taskbuffererrorcode"))?,
            pilottiming,
        };
        if let (Some(s), Some(e)) = (rec.start_s, rec.end_s)
            && e < s
        {
            return Err(self.err(col("endtime"), "expected a time not before starttime".into()));
        }
        Ok(rec)
    }

    /// `pilottiming`: numbers separated by `|`; none for an empty cell.
    fn pilottiming(&self) -> Result<Vec<f64>, ReplayError> {
        let timing = self.cell(col("pilottiming"));
        let mut pilottiming = Vec::new();
        if !timing.is_empty() {
            for part in timing.split('|') {
                match part.trim().parse::<f64>() {
                    Ok(x) if x.is_finite() => pilottiming.push(x),
                    _ => {
                        return Err(
                            self.err(col("pilottiming"), format!("expected numbers separated by '|', got {timing:?}"))
                        );
                    }
                }
            }
        }
        Ok(pilottiming)
    }
}

/// What a record's `jobstatus` makes of its replayed job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// `finished`: the job succeeds.
    Finished,
    /// `failed`: the job runs, then fails; it is not retried (a PanDA retry is a record of its own).
    Failed,
    /// `cancelled` or `closed`: the job never ran to an end of its own; the record is skipped.
    Skipped,
}

/// The `jobstatus` values a replayed record may have (the final statuses of `JOBSARCHIVED`).
pub const JOB_STATUSES: &[&str] = &["finished", "failed", "cancelled", "closed"];

impl JobRecord {
    /// What its `jobstatus` makes of it; `None` for a status that is not final ([`JOB_STATUSES`]).
    pub fn outcome(&self) -> Option<Outcome> {
        match self.jobstatus.as_str() {
            "finished" => Some(Outcome::Finished),
            "failed" => Some(Outcome::Failed),
            "cancelled" | "closed" => Some(Outcome::Skipped),
            _ => None,
        }
    }

    /// The job's wall-clock run time, s: the first of `job_walltime / corecount`, `endtime −
    /// starttime`, `cpuconsumptiontime / cpu_eff / corecount` that is there (and not negative).
    ///
    /// `job_walltime` is core-seconds in these records: on `jan_100_BNL.csv` it equals
    /// `(endtime − starttime) × corecount` on every row (the 8-core rows show 8× the span), and
    /// `cpu_eff = cpuconsumptiontime / job_walltime`, so both are divided by the cores.
    pub fn wall_s(&self) -> Option<f64> {
        let cores = f64::from(self.corecount.max(1));
        let ok = |x: f64| (x.is_finite() && x >= 0.0).then_some(x);
        self.job_walltime
            .and_then(ok)
            .map(|w| w / cores)
            .or_else(|| Some((self.end_s? - self.start_s?) as f64).and_then(ok))
            .or_else(|| {
                let (cpu, eff) = (self.cpuconsumptiontime?, self.cpu_eff?);
                (eff > 0.0).then(|| cpu / eff / cores).and_then(ok)
            })
    }

    /// `currentPriority`, else `assignedPriority`, else 0.
    pub fn priority(&self) -> i64 {
        self.currentpriority.or(self.assignedpriority).unwrap_or(0)
    }

    /// The job reads its input directly (`transfertype` `direct`, or none recorded): no stage-in.
    pub fn reads_directly(&self) -> bool {
        let t = self.transfertype.trim();
        t.is_empty() || t.eq_ignore_ascii_case("direct")
    }

    /// The measured wait from creation to start, s: `job_queuetime`, else `starttime −
    /// creationtime` (on `jan_100_BNL.csv` the two agree on every row).
    pub fn queue_time_s(&self) -> Option<f64> {
        self.job_queuetime.or_else(|| self.start_s.map(|s| (s - self.creation_s) as f64))
    }
}
