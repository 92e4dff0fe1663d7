//! Validation of the `panda` section, in the style of `scenario::validate`: every problem names
//! its field (`panda.queues[3].maxrss`) and says what was expected; nothing panics. Checked:
//! unique names (queues, nuclei, gshares over the whole tree, streams), every reference
//! (site, CE of that site, storage, gshare leaf, queue), numbers in range, the module parameters
//! (each module's own `validate`), `fairsharepolicy` and task architectures as PanDA parses
//! them (their parse warnings are [`warnings`]), Harvester's settings.

use std::collections::BTreeSet;

use super::PandaConfig;
use super::queue::{ACTIVITIES, CAPABILITIES};
use super::workload::DatasetConfig;
use crate::panda::arch::{ArchVariant, TaskArch};
use crate::panda::gshare::{ShareNode, leaves};
use crate::panda::harvester::config::MapType;
use crate::panda::job_broker::FairsharePolicy;
use crate::panda::{anal_broker, job_broker, timeouts};
use crate::scenario::types::Scenario;
use crate::scenario::validate::{Checker, Problem, list};

/// Names of every node of the share tree, with their paths, depth first.
fn share_nodes<'a>(nodes: &'a [ShareNode], path: &str, out: &mut Vec<(String, &'a ShareNode)>) {
    for (i, n) in nodes.iter().enumerate() {
        let p = format!("{path}[{i}]");
        out.push((p.clone(), n));
        share_nodes(&n.children, &format!("{p}.children"), out);
    }
}

fn datasets(c: &mut Checker, path: &str, inputs: &[DatasetConfig], storages: &BTreeSet<&str>) {
    for (k, d) in inputs.iter().enumerate() {
        let p = format!("{path}[{k}]");
        if d.name.trim().is_empty() {
            c.fail(format!("{p}.name"), "a dataset needs a name");
        }
        c.non_negative(&format!("{p}.size_gb"), d.size_gb);
        c.count(&format!("{p}.files"), d.files);
        for (r, rep) in d.replicas.iter().enumerate() {
            if !storages.contains(rep.storage.as_str()) {
                c.fail(
                    format!("{p}.replicas[{r}].storage"),
                    format!("unknown storage {:?} (known: {})", rep.storage, list(storages)),
                );
            }
            if !(rep.fraction > 0.0 && rep.fraction <= 1.0) {
                c.fail(
                    format!("{p}.replicas[{r}].fraction"),
                    format!("must be in (0, 1] (1 = complete), got {}", rep.fraction),
                );
            }
        }
    }
    if inputs.iter().filter(|d| d.master).count() > 1 {
        c.fail(
            path,
            "at most one input dataset can be the master (`master: true` is the default: set it false on the others)",
        );
    }
}

fn architecture(c: &mut Checker, path: &str, arch: &Option<String>, variant: ArchVariant) {
    if let Some(a) = arch
        && let Err(e) = TaskArch::parse_with(a, variant)
    {
        c.fail(path, format!("PanDA cannot read this architecture: {e}"));
    }
}

/// Check the `panda` section; `sites` and `storages` are the grid's names.
pub(in crate::scenario) fn check(
    c: &mut Checker,
    s: &Scenario,
    p: &PandaConfig,
    sites: &BTreeSet<&str>,
    storages: &BTreeSet<&str>,
) {
    let rules = p.rules();

    // Agent periods are `Period`s: at least a second, refused when the scenario is read.

    // Module parameters: their own validation, and no variant written inside them.
    let module_checks = [
        ("panda.gdpconfig.job_broker", job_broker::validate(&p.gdpconfig.job_broker)),
        ("panda.gdpconfig.anal_broker", anal_broker::validate(&p.gdpconfig.anal_broker)),
        ("panda.gdpconfig.timeouts", timeouts::validate(&p.gdpconfig.timeouts)),
    ];
    for (path, r) in module_checks {
        if let Err(e) = r {
            c.fail(path, e);
        }
    }
    let stray_variants = [
        ("panda.gdpconfig.job_broker.variant", p.gdpconfig.job_broker.variant != Default::default(), "job_broker"),
        ("panda.gdpconfig.anal_broker.variant", p.gdpconfig.anal_broker.variant != Default::default(), "anal_broker"),
        ("panda.gdpconfig.timeouts.variant", p.gdpconfig.timeouts.variant != Default::default(), "timeouts"),
    ];
    for (path, set, module) in stray_variants {
        if set {
            c.fail(
                path,
                format!(
                    "set the variant with `panda.variant` or `panda.variants.{module}` (this field is filled from them)"
                ),
            );
        }
    }
    let h = &p.harvester;
    c.count("panda.harvester.nThreads", u64::from(h.n_threads));
    c.count("panda.harvester.nQueues", u64::from(h.n_queues));
    for (field, v) in [
        ("lockInterval", h.lock_interval),
        ("queueLockInterval", h.queue_lock_interval),
        ("checkInterval", h.check_interval),
        ("sleepTime", h.sleep_time),
    ] {
        // Harvester's loop periods: a 0 s cycle would fire for ever at one instant (limits.rs).
        c.count(&format!("panda.harvester.{field}"), v);
    }
    if let crate::panda::harvester::config::ActivateWorkerFactor::Static(x) = h.activate_worker_factor
        && !(x.is_finite() && x >= 0.0)
    {
        c.fail("panda.harvester.activateWorkerFactor", format!("must be a number ≥ 0 or Auto, got {x}"));
    }

    // Global shares.
    let mut nodes = Vec::new();
    share_nodes(&p.gshares, "panda.gshares", &mut nodes);
    let mut seen = BTreeSet::new();
    for (path, n) in &nodes {
        if n.name.trim().is_empty() {
            c.fail(format!("{path}.name"), "a share needs a name");
        } else if !seen.insert(n.name.as_str()) {
            c.fail(format!("{path}.name"), format!("duplicate share name {:?} (PanDA keys shares by name)", n.name));
        }
        c.non_negative(&format!("{path}.value"), n.value);
    }
    let leaf_names: Vec<String> = leaves(&p.gshares).into_iter().map(|l| l.name).collect();
    let leaf_set: BTreeSet<&str> = leaf_names.iter().map(String::as_str).collect();
    let gshare = |c: &mut Checker, path: String, g: &str| {
        if !leaf_set.contains(g) {
            let what = if seen.contains(g) {
                "is not a leaf of panda.gshares (tasks name leaves)"
            } else {
                "is not in panda.gshares"
            };
            c.fail(path, format!("gshare {g:?} {what} (leaves: {})", list(&leaf_set)));
        }
    };

    // Nuclei.
    let mut nuclei = BTreeSet::new();
    for (i, n) in p.nuclei.iter().enumerate() {
        let path = format!("panda.nuclei[{i}]");
        if !sites.contains(n.site.as_str()) {
            c.fail(format!("{path}.site"), format!("unknown site {:?} (known: {})", n.site, list(sites)));
        } else if !nuclei.insert(n.site.as_str()) {
            c.fail(format!("{path}.site"), format!("site {:?} is already a nucleus", n.site));
        }
        c.known(&format!("{path}.output_storages"), "storage", &n.output_storages, storages);
        c.known(&format!("{path}.input_storages"), "storage", &n.input_storages, storages);
    }

    // Queues.
    if p.queues.is_empty() {
        c.fail("panda.queues", "the panda section needs at least one PanDA queue");
    }
    let queues = c.unique("panda.queues", "PanDA queue", p.queues.iter().map(|q| q.name.as_str()));
    for (i, q) in p.queues.iter().enumerate() {
        let path = format!("panda.queues[{i}]");
        match s.sites.iter().find(|x| x.name == q.site) {
            None => c.fail(format!("{path}.site"), format!("unknown site {:?} (known: {})", q.site, list(sites))),
            Some(site) => {
                let ces: BTreeSet<&str> = site.ces.iter().map(|ce| ce.name.as_str()).collect();
                for (k, ce) in q.ces.iter().enumerate() {
                    if !ces.contains(ce.as_str()) {
                        c.fail(
                            format!("{path}.ces[{k}]"),
                            format!("site {:?} has no CE {ce:?} (its CEs: {})", q.site, list(&ces)),
                        );
                    }
                }
            }
        }
        if let Some(cap) = &q.capability
            && !CAPABILITIES.contains(&cap.as_str())
        {
            c.fail(format!("{path}.capability"), format!("expected one of {}, got {cap:?}", CAPABILITIES.join(", ")));
        }
        c.positive(&format!("{path}.corepower"), q.corepower);
        if q.minrss > 0 && q.maxrss > 0 && q.minrss > q.maxrss {
            c.fail(format!("{path}.maxrss"), format!("must be ≥ minrss ({} MB), got {} MB", q.minrss, q.maxrss));
        }
        if q.mintime > 0 && q.maxtime > 0 && q.mintime > q.maxtime {
            c.fail(format!("{path}.maxtime"), format!("must be ≥ mintime ({} s), got {} s", q.mintime, q.maxtime));
        }
        if let Some(m) = q.maxinputsize
            && m < -1
        {
            c.fail(format!("{path}.maxinputsize"), format!("must be MB ≥ 0, or -1 (always direct I/O), got {m}"));
        }
        if let Some(d) = q.maxdiskio
            && !d.is_finite()
        {
            c.fail(format!("{path}.maxdiskio"), format!("must be a number of kB/s, got {d}"));
        }
        if let Some(x) = q.pledgedcpu
            && !(x.is_finite() && (x >= 0.0 || x == -1.0))
        {
            c.fail(format!("{path}.pledgedcpu"), format!("must be ≥ 0, or -1 (opportunistic), got {x}"));
        }
        for (activity, rses) in &q.astorages {
            if !ACTIVITIES.contains(&activity.as_str()) {
                c.fail(
                    format!("{path}.astorages[{activity:?}]"),
                    format!("unknown activity {activity:?} (known: {})", ACTIVITIES.join(", ")),
                );
            }
            c.known(&format!("{path}.astorages[{activity:?}]"), "storage", rses, storages);
        }
        for (field, v) in [
            ("maxWorkers", q.harvester.max_workers),
            ("nQueueLimitWorker", q.harvester.n_queue_limit_worker),
            ("maxNewWorkersPerCycle", q.harvester.max_new_workers_per_cycle),
        ] {
            if let Some(v) = v
                && v < 0
            {
                c.fail(format!("{path}.harvester.{field}"), format!("must be ≥ 0, got {v}"));
            }
        }
        // Push with several jobs per worker or workers per job is not modelled (wms::panda::pilots).
        if matches!(q.harvester.map_type, MapType::MultiJobs | MapType::MultiWorkers) {
            c.fail(
                format!("{path}.harvester.mapType"),
                "ManyToOne and OneToMany are not modelled: use OneToOne (push, one job per worker) or NoJob (pull)",
            );
        }
    }

    // Workload.
    let mut names = BTreeSet::new();
    let mut stream_name = |c: &mut Checker, path: String, n: &str| {
        if n.trim().is_empty() {
            c.fail(path, "a stream needs a name");
        } else if !names.insert(n.to_string()) {
            c.fail(path, format!("duplicate stream name {n:?} (names are unique over tasks, analysis and replay)"));
        }
    };
    if !p.tasks.is_empty() {
        if p.nuclei.is_empty() {
            c.fail("panda.nuclei", "production tasks are brokered to a nucleus: at least one is needed");
        }
        if !p.queues.iter().any(|q| q.kind.production()) {
            c.fail("panda.queues", "production tasks need a production or unified queue");
        }
    }
    if !p.analysis.is_empty() && !p.queues.iter().any(|q| q.kind.analysis()) {
        c.fail("panda.queues", "analysis tasks need an analysis or unified queue");
    }
    for (i, t) in p.tasks.iter().enumerate() {
        let path = format!("panda.tasks[{i}]");
        stream_name(c, format!("{path}.name"), &t.name);
        c.count(&format!("{path}.count"), u64::from(t.count));
        c.arrival(&format!("{path}.arrival"), &t.arrival);
        datasets(c, &format!("{path}.inputs"), &t.inputs, storages);
        c.count(&format!("{path}.n_events"), t.n_events);
        match t.n_events_per_job {
            Some(n) => c.count(&format!("{path}.n_events_per_job"), n),
            None if !t.inputs.iter().any(|d| d.master) => c.fail(
                format!("{path}.n_events_per_job"),
                "a task without a master input dataset is split by events: give n_events_per_job",
            ),
            None => {}
        }
        c.positive(&format!("{path}.cpu_time"), t.cpu_time);
        c.count(&format!("{path}.core_count"), u64::from(t.core_count));
        c.non_negative(&format!("{path}.ram_count"), t.ram_count);
        c.non_negative(&format!("{path}.out_disk_count"), t.out_disk_count);
        if let Some(io) = t.io_intensity {
            c.non_negative(&format!("{path}.io_intensity"), io);
        }
        gshare(c, format!("{path}.gshare"), &t.gshare);
        architecture(c, &format!("{path}.architecture"), &t.architecture, rules.arch);
        c.probability(&format!("{path}.failure_probability"), t.failure_probability);
        c.count(&format!("{path}.max_attempt"), u64::from(t.max_attempt));
    }
    for (i, a) in p.analysis.iter().enumerate() {
        let path = format!("panda.analysis[{i}]");
        stream_name(c, format!("{path}.name"), &a.name);
        if a.user.trim().is_empty() {
            c.fail(format!("{path}.user"), "an analysis task needs a user");
        }
        c.count(&format!("{path}.count"), u64::from(a.count));
        c.arrival(&format!("{path}.arrival"), &a.arrival);
        c.count(&format!("{path}.jobs_per_task"), u64::from(a.jobs_per_task));
        datasets(c, &format!("{path}.inputs"), &a.inputs, storages);
        if let Some(x) = a.cpu_time {
            c.positive(&format!("{path}.cpu_time"), x);
        }
        if let Some(n) = a.n_events_per_job {
            c.count(&format!("{path}.n_events_per_job"), n);
        }
        c.count(&format!("{path}.core_count"), u64::from(a.core_count));
        c.non_negative(&format!("{path}.ram_count"), a.ram_count);
        if let Some(io) = a.io_intensity {
            c.non_negative(&format!("{path}.io_intensity"), io);
        }
        gshare(c, format!("{path}.gshare"), &a.gshare);
        architecture(c, &format!("{path}.architecture"), &a.architecture, rules.arch);
        c.probability(&format!("{path}.failure_probability"), a.failure_probability);
        c.count(&format!("{path}.max_attempt"), u64::from(a.max_attempt));
    }
    for (i, r) in p.replay.iter().enumerate() {
        let path = format!("panda.replay[{i}]");
        stream_name(c, format!("{path}.name"), &r.name);
        if r.file.trim().is_empty() {
            c.fail(format!("{path}.file"), "a replay stream needs a CSV file");
        }
        c.non_negative(&format!("{path}.start_s"), r.start_s);
        if let Some(q) = &r.queue
            && !queues.contains(q.as_str())
        {
            c.fail(format!("{path}.queue"), format!("unknown PanDA queue {q:?} (known: {})", list(&queues)));
        }
        match &r.gshare {
            Some(g) => gshare(c, format!("{path}.gshare"), g),
            None if leaf_set.len() != 1 => c.fail(
                format!("{path}.gshare"),
                format!(
                    "job records carry no gshare: name the leaf their jobs count for (panda.gshares has {} leaves: {})",
                    leaf_set.len(),
                    list(&leaf_set)
                ),
            ),
            None => {}
        }
        if let Some(n) = &r.nucleus
            && !nuclei.contains(n.as_str())
        {
            c.fail(format!("{path}.nucleus"), format!("unknown nucleus {n:?} (nuclei: {})", list(&nuclei)));
        }
        replay_records(c, &path, r, &queues);
    }
}

/// Each record of replay stream `r` (at `path`): a known queue (unless the stream sets one), a
/// final `jobstatus`, a run time. One problem per kind: its first record, `FILE:LINE: column:`,
/// and how many more records have it.
fn replay_records(c: &mut Checker, path: &str, r: &super::ReplayStream, queues: &BTreeSet<&str>) {
    use super::replay::{JOB_STATUSES, Outcome};
    let mut first: [Option<(usize, String)>; 3] = [None, None, None];
    let mut more = [0usize; 3];
    let mut note = |kind: usize, line: usize, message: String| match &first[kind] {
        None => first[kind] = Some((line, message)),
        Some(_) => more[kind] += 1,
    };
    for rec in &r.records {
        if r.queue.is_none() && !queues.contains(rec.computingsite.as_str()) {
            note(
                0,
                rec.line,
                format!(
                    "computingsite: {:?} is not a PanDA queue of the scenario (known: {}); set `queue` to send every record to one",
                    rec.computingsite,
                    list(queues)
                ),
            );
        }
        match rec.outcome() {
            None => note(
                1,
                rec.line,
                format!("jobstatus: expected a final status ({}), got {:?}", JOB_STATUSES.join(", "), rec.jobstatus),
            ),
            Some(Outcome::Skipped) => {}
            Some(_) if rec.wall_s().is_none() => note(
                2,
                rec.line,
                "job_walltime: no run time recorded: expected job_walltime, or starttime and endtime, or cpuconsumptiontime and cpu_eff > 0".into(),
            ),
            Some(_) => {}
        }
    }
    for (f, n) in first.into_iter().zip(more) {
        if let Some((line, message)) = f {
            let and = if n > 0 { format!(" (and {n} more records)") } else { String::new() };
            c.fail(format!("{path}.file"), format!("{}:{line}: {message}{and}", r.file));
        }
    }
}

/// Valid but suspicious: nuclei task brokerage always skips (`nuclei`), parse warnings of `fairsharepolicy` and architectures, a dataset without
/// any replica, pull queues Harvester would submit nothing to; replay records that are skipped
/// (cancelled, closed), that need more cores than their queue's pilots, or that stage in from a
/// site the scenario does not have.
pub fn warnings(s: &Scenario, p: &PandaConfig) -> Vec<Problem> {
    let mut out = super::nuclei::warnings(s, p);
    let mut warn = |path: String, message: String| out.push(Problem { path, message });
    let arch = p.rules().arch;
    for (i, r) in p.replay.iter().enumerate() {
        let skipped = r.records.iter().filter(|x| x.outcome() == Some(super::replay::Outcome::Skipped)).count();
        if skipped > 0 {
            warn(
                format!("panda.replay[{i}].file"),
                format!(
                    "{skipped} records are cancelled or closed: skipped (their jobs never ran to an end of their own)"
                ),
            );
        }
        // A job needs a pilot with its cores free: more cores than the PQ's pilots have never runs.
        let too_big: Vec<(&super::JobRecord, &super::PandaQueue)> = r
            .records
            .iter()
            .filter(|x| x.outcome() != Some(super::replay::Outcome::Skipped))
            .filter_map(|x| Some((x, p.queue(r.queue.as_deref().unwrap_or(&x.computingsite))?)))
            .filter(|(x, q)| x.corecount > q.cores())
            .collect();
        if let Some((x, q)) = too_big.first() {
            warn(
                format!("panda.replay[{i}].file"),
                format!(
                    "{} records need more cores than their queue's pilots have ({}:{}: corecount {} on {:?}, corecount {}): their jobs never run",
                    too_big.len(),
                    r.file,
                    x.line,
                    x.corecount,
                    q.name,
                    q.cores()
                ),
            );
        }
        // Staged-in records whose sourcesite is not a grid site read their input as if local.
        let away: Vec<&super::JobRecord> = r
            .records
            .iter()
            .filter(|x| !x.reads_directly() && !x.sourcesite.is_empty())
            .filter(|x| !s.sites.iter().any(|site| site.name == x.sourcesite))
            .collect();
        if let Some(x) = away.first() {
            warn(
                format!("panda.replay[{i}].file"),
                format!(
                    "{} records stage in from a sourcesite that is not a site of the scenario ({}:{}: {:?}): their input is taken as already at the queue",
                    away.len(),
                    r.file,
                    x.line,
                    x.sourcesite
                ),
            );
        }
    }
    for (i, q) in p.queues.iter().enumerate() {
        let (_, ws) = FairsharePolicy::parse(&q.fairsharepolicy);
        for w in ws {
            warn(format!("panda.queues[{i}].fairsharepolicy"), w.to_string());
        }
        let h = q.harvester.sanitized();
        if h.map_type == MapType::NoJob && h.max_workers == Some(0) {
            warn(
                format!("panda.queues[{i}].harvester.maxWorkers"),
                "maxWorkers is 0 (Harvester's default): a pull queue gets no worker (\"no worker to submit!\")".into(),
            );
        }
    }
    let mut arch_warnings = |path: String, a: &Option<String>| {
        if let Some(Ok(t)) = a.as_deref().map(|a| TaskArch::parse_with(a, arch)) {
            for w in t.warnings {
                warn(path.clone(), w);
            }
        }
    };
    for (i, t) in p.tasks.iter().enumerate() {
        arch_warnings(format!("panda.tasks[{i}].architecture"), &t.architecture);
    }
    for (i, a) in p.analysis.iter().enumerate() {
        arch_warnings(format!("panda.analysis[{i}].architecture"), &a.architecture);
    }
    for (i, t) in p.tasks.iter().enumerate() {
        for (k, d) in t.inputs.iter().enumerate() {
            if d.replicas.is_empty() {
                out.push(Problem {
                    path: format!("panda.tasks[{i}].inputs[{k}].replicas"),
                    message: "no replica anywhere: task brokerage will fail every such task (no complete replica readable over WAN)".into(),
                });
            }
        }
    }
    out
}
