//! `pilotsim import cric FILE...`: queue and network descriptions into a scenario fragment.
//! Three JSON forms, detected per file from its entries:
//!
//! | form | entries | gives |
//! |---|---|---|
//! | `site_info.json` (CGSim) | `QUEUE: {"RSE": {RSE: "TB"}, "GFLOPS": n}` | queues, a CE each, storages |
//! | `site_conn_info.json` | `"SRC:DST": {"closeness": {"latest": n}, "mbps": {"dashb": {"1h","1d","1w"}}, "files": {"queued": {ACTIVITY: {"latest": n}}}}` | `network` links |
//! | CRIC pandaqueue JSON | `QUEUE: {"atlas_site", "status", "type", "corecount", "maxrss", …}` | queue attributes |
//!
//! Mappings (pilotsim's decisions; the files do not say):
//!
//! * **queue → grid site**: CRIC `atlas_site` when a pandaqueue file gives it; else the
//!   link-matrix site equal to the queue name, or to the prefix before the first `_` of one of
//!   its RSEs (in the RSEs' name order); else the queue name itself. With the two CGSim files,
//!   the 150 queues land on 99 sites.
//! * **RSE → site**: the link-matrix site (or a queue's site) equal to the prefix before the
//!   first `_`; else the site of the first queue (by name) that lists it. An RSE is a tape when
//!   its name contains `TAPE` (Rucio's `*_DATATAPE`, `*_MCTAPE`); a size of 0 (every tape in
//!   `site_info.json`, and a few `VP_DISK` caches) means "not reported" and becomes an unlimited
//!   endpoint (`total_tb: None`).
//! * **GFLOPS → slots**: each queue gets one CE named after it, with
//!   `slots = max(1, round(GFLOPS / gflops_per_core))`; `gflops_per_core` defaults to
//!   [`DEFAULT_GFLOPS_PER_CORE`] (the 150 queues then hold 1.58 M cores, the order of the ATLAS
//!   grid). The queue's `corepower` stays PanDA's 10 HS06 per core.
//! * **bandwidth**: the largest of FTS's `dashb` 1 h / 1 d / 1 w averages (the link's capacity
//!   as observed, not the latest lull); a link without any Mbps gets [`DEFAULT_MBPS`].
//!   `queued_files` is the link's `Production Output` backlog (`files.queued["Production
//!   Output"].latest`), the activity PanDA's nucleus backlog and link check read (reference
//!   panda.md §1 filter 3, §2 network); a link that gives only `files.queued-total` has that
//!   taken instead (counted in a comment). Closeness −1 (CRIC's "blocked") and any value
//!   outside 0..=11 drop the link (counted in a comment). With queue files, only links between
//!   their sites are kept; a link matrix alone keeps every link (and lists no site).
//!
//! Unknown fields are warnings (one per field name); malformed JSON is `FILE:LINE:COL: message`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::panda::{PandaQueue, QueueKind};
use crate::grid::config::{Ce, Link, Site, Storage, StorageKind, StorageStatus};

mod links;
mod pandaqueue;
use pandaqueue::{QUEUE_FIELDS, apply_queue};

/// GFLOPS of one core assumed by the slot count (pilotsim's assumption; `--gflops-per-core`).
pub const DEFAULT_GFLOPS_PER_CORE: f64 = 1000.0;
/// The transfer activity whose queued files PanDA reads for a nucleus' backlog.
pub const PRODUCTION_OUTPUT: &str = "Production Output";
/// Bandwidth of a link FTS has no Mbps for (pilotsim's assumption; `--default-mbps`).
pub const DEFAULT_MBPS: f64 = 10.0;

/// Which form a file has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    SiteInfo,
    SiteConn,
    PandaQueues,
}

/// Import options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    pub gflops_per_core: f64,
    pub default_mbps: f64,
}

impl Default for Options {
    fn default() -> Self {
        Self { gflops_per_core: DEFAULT_GFLOPS_PER_CORE, default_mbps: DEFAULT_MBPS }
    }
}

/// A file that cannot be imported: `FILE:LINE:COL: message` (line and column 0 when the problem
/// is not at a position).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CricError {
    pub file: String,
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl std::fmt::Display for CricError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}:{}: {}", self.file, self.line, self.col, self.message)
        }
    }
}

/// What an import gives.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Fragment {
    pub sites: Vec<Site>,
    pub storages: Vec<Storage>,
    pub network: Vec<Link>,
    pub queues: Vec<PandaQueue>,
    /// Each file with the form it was read as.
    pub forms: Vec<(String, Form)>,
    /// Links dropped: closeness −1 or out of range; between sites not in the fragment.
    pub blocked_links: usize,
    pub foreign_links: usize,
    /// Links that had no Mbps and got the default.
    pub default_bandwidth_links: usize,
    /// Links with a backlog but no per-activity breakdown (`queued-total` taken as Production
    /// Output).
    pub total_only_links: usize,
    /// `FILE: warning` lines.
    pub warnings: Vec<String>,
}

fn err(file: &str, message: String) -> CricError {
    CricError { file: file.to_string(), line: 0, col: 0, message }
}

/// Which form an object has, from its entries (`None`: cannot tell).
pub fn detect(obj: &Map<String, Value>) -> Option<Form> {
    let (key, first) = obj.iter().next()?;
    let o = first.as_object()?;
    if o.contains_key("RSE") || o.contains_key("GFLOPS") {
        Some(Form::SiteInfo)
    } else if key.contains(':') && (o.contains_key("src") || o.contains_key("dst") || o.contains_key("closeness")) {
        Some(Form::SiteConn)
    } else {
        Some(Form::PandaQueues)
    }
}

/// A number, or a string holding one (CRIC and CGSim write both); null → None.
fn num(v: &Value) -> Result<Option<f64>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => Ok(n.as_f64()),
        Value::String(s) if s.trim().is_empty() => Ok(None),
        // Rust reads "inf" and "NaN" as numbers; the scenario refuses them (`scenario::finite`).
        Value::String(s) => match s.trim().parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(format!("expected a finite number, got {s:?}")),
        },
        other => Err(format!("expected a number, got {other}")),
    }
}

fn text(v: &Value) -> Result<Option<String>, String> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::Bool(b) => Ok(Some(b.to_string())),
        other => Err(format!("expected a string, got {other}")),
    }
}

fn parse_file(file: &str, text: &str) -> Result<Map<String, Value>, CricError> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(CricError { file: file.into(), line: 1, col: 1, message: "expected a JSON object".into() }),
        Err(e) => Err(CricError { file: file.into(), line: e.line(), col: e.column(), message: e.to_string() }),
    }
}

/// Import files (`(name, text)`), each of any of the three forms.
pub fn import(files: &[(String, String)], opt: Options) -> Result<Fragment, CricError> {
    let mut frag = Fragment::default();
    let parsed: Vec<(String, Map<String, Value>)> =
        files.iter().map(|(f, t)| parse_file(f, t).map(|m| (f.clone(), m))).collect::<Result<_, _>>()?;
    let entries = read_entries(&mut frag, &parsed)?;
    // Sites of the link matrix.
    let matrix: BTreeSet<&str> = entries.conn.iter().flat_map(|(s, d, _)| [s.as_str(), d.as_str()]).collect();
    import_queues(&mut frag, &entries, &matrix)?;
    let mut sites = queue_ces(&mut frag, &entries.site_info, opt);
    import_storages(&mut frag, &entries.site_info, &matrix, &mut sites);
    frag.sites = sites.into_iter().map(|(name, ces)| Site { name, ces }).collect();
    links::import_links(&mut frag, &entries.conn, opt);
    cpu_workers_without_gpu_nodes(&mut frag);
    super::cric_check::check(&frag, opt, &entries.rows)?;
    Ok(frag)
}

/// A queue's RSEs (their size in TB, `None` when not reported) and its GFLOPS, from
/// `site_info.json`.
type SiteInfo = (BTreeMap<String, Option<f64>>, f64);

/// The entries of every file, by form.
struct Entries<'a> {
    /// `site_info.json`: queue → its RSEs and GFLOPS.
    site_info: BTreeMap<String, SiteInfo>,
    /// `site_conn_info.json`: each link's source, destination and entry.
    conn: Vec<(String, String, &'a Map<String, Value>)>,
    /// CRIC pandaqueue JSON: queue → its file and entry.
    cric: BTreeMap<String, (&'a str, &'a Map<String, Value>)>,
    /// Each row (queue, RSE, `SRC:DST` link) and the file it came from, for the final check.
    rows: BTreeMap<String, String>,
}

/// Each file's form (noted in `frag.forms`) and its entries: objects with a name, a
/// `site_info.json` entry read ([`read_site_info`]), a link keyed `SRC:DST`.
fn read_entries<'a>(frag: &mut Fragment, parsed: &'a [(String, Map<String, Value>)]) -> Result<Entries<'a>, CricError> {
    let mut e = Entries { site_info: BTreeMap::new(), conn: Vec::new(), cric: BTreeMap::new(), rows: BTreeMap::new() };
    for (file, m) in parsed {
        let form = detect(m).ok_or_else(|| {
            err(
                file,
                "cannot tell the form: expected site_info.json, site_conn_info.json or CRIC pandaqueue JSON entries"
                    .into(),
            )
        })?;
        frag.forms.push((file.clone(), form));
        for (key, v) in m {
            let o = v.as_object().ok_or_else(|| err(file, format!("{key}: expected an object")))?;
            if key.trim().is_empty() {
                return Err(err(file, "an entry with an empty name: the scenario needs a name".into()));
            }
            e.rows.entry(key.clone()).or_insert_with(|| file.clone());
            match form {
                Form::SiteInfo => {
                    let info = read_site_info(frag, file, key, o, &mut e.rows)?;
                    e.site_info.insert(key.clone(), info);
                }
                Form::SiteConn => {
                    let (src, dst) = key
                        .split_once(':')
                        .filter(|(s, d)| !s.trim().is_empty() && !d.trim().is_empty())
                        .ok_or_else(|| err(file, format!("{key:?}: expected a \"SRC:DST\" key")))?;
                    e.conn.push((src.to_string(), dst.to_string(), o));
                }
                Form::PandaQueues => {
                    e.cric.insert(key.clone(), (file.as_str(), o));
                }
            }
        }
    }
    Ok(e)
}

/// One `site_info.json` entry, queue `key` of `file`: its RSEs (each a row of the file; a size of
/// 0 is "not reported") and GFLOPS; other fields are warned about.
fn read_site_info(
    frag: &mut Fragment,
    file: &str,
    key: &str,
    o: &Map<String, Value>,
    rows: &mut BTreeMap<String, String>,
) -> Result<SiteInfo, CricError> {
    let mut rses = BTreeMap::new();
    let mut gflops = 0.0;
    for (k, x) in o {
        match k.as_str() {
            "RSE" => {
                let r = x.as_object().ok_or_else(|| err(file, format!("{key}.RSE: expected an object")))?;
                for (rse, tb) in r {
                    if rse.trim().is_empty() {
                        return Err(err(file, format!("{key}.RSE: an RSE with an empty name")));
                    }
                    rows.entry(rse.clone()).or_insert_with(|| file.to_string());
                    let tb = num(tb).map_err(|e| err(file, format!("{key}.RSE.{rse}: {e}")))?;
                    rses.insert(rse.clone(), tb.filter(|t| *t > 0.0));
                }
            }
            "GFLOPS" => gflops = num(x).map_err(|e| err(file, format!("{key}.GFLOPS: {e}")))?.unwrap_or(0.0),
            other => frag.warnings.push(format!("{file}: {key}: unknown field {other:?} ignored")),
        }
    }
    Ok((rses, gflops))
}

/// A queue of every name in `site_info.json` or the CRIC pandaqueue JSON, at its site
/// ([`queue_site`]), with CRIC's attributes, one CE named after it and, without CRIC
/// `astorages`, its disk RSEs; CRIC fields pilotsim does not know are warned about once each.
fn import_queues(frag: &mut Fragment, entries: &Entries, matrix: &BTreeSet<&str>) -> Result<(), CricError> {
    let names: BTreeSet<&String> = entries.site_info.keys().chain(entries.cric.keys()).collect();
    let mut unknown: BTreeMap<(String, String), usize> = BTreeMap::new();
    for name in names {
        let rses = entries.site_info.get(name).map(|(r, _)| r);
        let cric = entries.cric.get(name);
        let mut q =
            PandaQueue::new(name, &queue_site(name, rses, cric.map(|(_, o)| *o), matrix), QueueKind::Production);
        if name.starts_with("ANALY_") {
            q.kind = QueueKind::Analysis; // ATLAS's naming convention, overridden by CRIC `type`
        }
        if let Some((file, o)) = cric {
            for f in apply_queue(&mut q, o).map_err(|e| err(file, format!("{name}.{e}")))? {
                *unknown.entry((file.to_string(), f)).or_default() += 1;
            }
        }
        q.ces = vec![name.clone()];
        // CRIC's astorages of a queue are its RSEs: the disk ones read and write (LAN), as
        // PanDA's Configurator relates a PQ to its endpoints (tapes are not a PQ's storage).
        if q.astorages.is_empty() {
            let disks: Vec<String> =
                rses.into_iter().flat_map(|r| r.keys()).filter(|k| !k.contains("TAPE")).cloned().collect();
            if !disks.is_empty() {
                q.astorages.insert("read_lan".into(), disks.clone());
                q.astorages.insert("write_lan".into(), disks);
            }
        }
        frag.queues.push(q);
    }
    for ((file, field), n) in unknown {
        if !QUEUE_FIELDS.contains(&field.as_str()) {
            frag.warnings.push(format!("{file}: unknown field {field:?} ignored ({n} queue(s))"));
        }
    }
    Ok(())
}

/// Queue `name`'s grid site (module doc, "queue → grid site"): CRIC's `atlas_site` (or `site`);
/// else the link-matrix site named as the queue, or as the prefix of one of its RSEs; else the
/// queue name.
fn queue_site(
    name: &str,
    rses: Option<&BTreeMap<String, Option<f64>>>,
    cric: Option<&Map<String, Value>>,
    matrix: &BTreeSet<&str>,
) -> String {
    let atlas_site = cric
        .and_then(|o| o.get("atlas_site").or_else(|| o.get("site")))
        .and_then(|v| text(v).ok().flatten())
        .filter(|s| !s.is_empty());
    atlas_site.unwrap_or_else(|| {
        if matrix.contains(name) {
            return name.to_string();
        }
        rses.and_then(|r| r.keys().map(|k| k.split('_').next().unwrap_or(k)).find(|p| matrix.contains(p)))
            .map_or_else(|| name.to_string(), str::to_string)
    })
}

/// Each site's CEs, one per queue (module doc, "GFLOPS → slots"), at the queue's corepower.
fn queue_ces(frag: &mut Fragment, site_info: &BTreeMap<String, SiteInfo>, opt: Options) -> BTreeMap<String, Vec<Ce>> {
    let mut sites: BTreeMap<String, Vec<Ce>> = BTreeMap::new();
    for q in &frag.queues {
        let gflops = site_info.get(&q.name).map_or(0.0, |(_, g)| *g);
        let slots = if gflops > 0.0 && opt.gflops_per_core > 0.0 {
            (gflops / opt.gflops_per_core).round().clamp(1.0, f64::from(u32::MAX)) as u32
        } else {
            frag.warnings.push(format!("{}: no GFLOPS (site_info.json): its CE gets 1 slot", q.name));
            1
        };
        // CPU power per core = the PQ's corepower (HS06 per core, PanDA's 10 when CRIC has none):
        // PanDA's job CPU times are HS06·s.
        let ce: Ce = ron::from_str(&format!("(name: {:?}, slots: {slots}, cpu_power: {:?})", q.name, q.corepower))
            .expect("a CE with defaults");
        sites.entry(q.site.clone()).or_default().push(ce);
    }
    sites
}

/// Every RSE a storage endpoint at its site (module doc, "RSE → site"; a tape when its name
/// says `TAPE`); a site that only has storage gets a 1-slot CE, with a warning.
fn import_storages(
    frag: &mut Fragment,
    site_info: &BTreeMap<String, SiteInfo>,
    matrix: &BTreeSet<&str>,
    sites: &mut BTreeMap<String, Vec<Ce>>,
) {
    let mut rse_site: BTreeMap<String, (String, Option<f64>)> = BTreeMap::new();
    for q in &frag.queues {
        if let Some((rses, _)) = site_info.get(&q.name) {
            for (rse, tb) in rses {
                let prefix = rse.split('_').next().unwrap_or(rse);
                let site = if matrix.contains(prefix) || sites.contains_key(prefix) { prefix } else { q.site.as_str() };
                rse_site.entry(rse.clone()).or_insert_with(|| (site.to_string(), *tb));
            }
        }
    }
    for (rse, (site, tb)) in rse_site {
        sites.entry(site.clone()).or_insert_with(|| {
            frag.warnings.push(format!("{rse}: its site {site:?} has no queue: the site gets a 1-slot CE"));
            vec![ron::from_str(&format!("(name: {:?}, slots: 1)", format!("{site}-CE"))).expect("a CE")]
        });
        let tape = rse.contains("TAPE");
        frag.storages.push(Storage {
            name: rse,
            site,
            kind: if tape { StorageKind::Tape } else { StorageKind::Disk },
            total_tb: tb,
            used_tb: 0.0,
            expired_tb: 0.0,
            read_lan: StorageStatus::On,
            write_lan: StorageStatus::On,
            read_wan: StorageStatus::On,
            write_wan: StorageStatus::On,
        });
    }
}

/// A `resource_type: gpu` queue at a site whose CEs declare no GPU node (the dumps carry no GPU
/// inventory: CGSim's site_info gives cores only) would have every GPU worker refused: it is
/// imported with CPU workers, and a warning says how to give it GPUs.
fn cpu_workers_without_gpu_nodes(frag: &mut Fragment) {
    for q in frag.queues.iter_mut().filter(|q| q.worker_gpus() > 0) {
        let site = frag.sites.iter().find(|s| s.name == q.site);
        if site.is_some_and(|s| s.ces.iter().any(|c| !c.gpus.is_empty())) {
            continue;
        }
        q.resource_type = None;
        frag.warnings.push(format!(
            "{}: resource_type \"gpu\", but its site declares no GPU node (the dumps give no GPU inventory): imported with CPU workers; give its CEs `gpus` and set `resource_type: Some(\"gpu\")` for one-GPU Harvester workers",
            q.name
        ));
    }
}

pub(crate) fn pretty<T: serde::Serialize>(v: &T) -> String {
    let cfg = ron::ser::PrettyConfig::new().indentor("    ".to_string()).struct_names(false);
    ron::ser::to_string_pretty(v, cfg).unwrap_or_else(|e| format!("/* {e} */"))
}

/// Comment lines (each `// …\n`): every file with its form, then what the import made of them.
pub fn header(f: &Fragment, opt: Options) -> String {
    let mut s = String::new();
    for (file, form) in &f.forms {
        s += &format!("// {file}: {form:?}\n");
    }
    let slots: u64 = f.sites.iter().flat_map(|x| &x.ces).map(|c| u64::from(c.slots)).sum();
    s += &format!(
        "// {} queues on {} sites ({slots} slots at {} GFLOPS per core), {} storages, {} links ({} dropped as blocked, {} between other sites, {} at the default {} Mbps)\n",
        f.queues.len(),
        f.sites.len(),
        if opt.gflops_per_core >= 100.0 {
            format!("{:.0}", opt.gflops_per_core)
        } else {
            opt.gflops_per_core.to_string()
        },
        f.storages.len(),
        f.network.len(),
        f.blocked_links,
        f.foreign_links,
        f.default_bandwidth_links,
        opt.default_mbps
    );
    let backlog = f.network.iter().map(|l| l.queued_files).fold(0, u64::saturating_add);
    if backlog > 0 {
        s += &format!(
            "// link backlogs (queued_files): {backlog} Production Output files in all, a constant background{}\n",
            if f.total_only_links > 0 {
                format!(" ({} links gave only queued-total, taken as Production Output)", f.total_only_links)
            } else {
                String::new()
            }
        );
    }
    s
}

/// The scenario fragment: comment lines with the forms and counts, then `sites`, `storages`,
/// `network` and `panda: (queues: [...])` fields to paste into a scenario (an empty part is
/// left out). Parses back inside `Scenario(name: …, duration_s: …, <fragment> )` (tested).
pub fn to_ron_fragment(f: &Fragment, opt: Options) -> String {
    let mut s = header(f, opt);
    if !f.sites.is_empty() {
        s += &format!("sites: {},\n", pretty(&f.sites));
    }
    if !f.storages.is_empty() {
        s += &format!("storages: {},\n", pretty(&f.storages));
    }
    if !f.network.is_empty() {
        s += &format!("network: {},\n", pretty(&f.network));
    }
    if !f.queues.is_empty() {
        s += &format!("panda: (queues: {}),\n", pretty(&f.queues));
    }
    s
}
