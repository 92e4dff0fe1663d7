//! Validation of the `panda` section, in the style of `scenario::validate`: every problem names
//! its field (`panda.queues[3].maxrss`) and says what was expected; nothing panics. Checked:
//! unique names (queues, nuclei, gshares over the whole tree, streams), every reference
//! (site, CE of that site, storage, gshare leaf, queue), numbers in range, the module parameters
//! (each module's own `validate`), `fairsharepolicy` and task architectures as PanDA parses
//! them (their parse warnings are [`warnings`]), Harvester's settings.

use std::collections::BTreeSet;

use super::queue::{ACTIVITIES, CAPABILITIES};
use super::replay::Outcome;
use super::workload::DatasetConfig;
use super::{AnalysisStream, PandaConfig, PandaQueue, ProductionStream, ReplayStream};
use crate::panda::arch::{ArchVariant, TaskArch};
use crate::panda::gshare::{ShareNode, leaves};
use crate::panda::harvester::config::{ActivateWorkerFactor, MapType, SubmitterSettings};
use crate::panda::{anal_broker, job_broker, timeouts};
use crate::scenario::types::Scenario;
use crate::scenario::validate::{Checker, list};

mod warnings;
pub use warnings::warnings;

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
    // Agent periods are `Period`s: at least a second, refused when the scenario is read.
    check_modules(c, p);
    check_harvester(c, &p.harvester);
    let gshares = Gshares::check(c, p);
    let nuclei = check_nuclei(c, p, sites, storages);
    let queues = check_queues(c, s, p, sites, storages);
    check_workload_has_queues(c, p);
    let mut names = StreamNames::default();
    let arch = p.rules().arch;
    for (i, t) in p.tasks.iter().enumerate() {
        check_task(c, &format!("panda.tasks[{i}]"), t, &mut names, &gshares, storages, arch);
    }
    for (i, a) in p.analysis.iter().enumerate() {
        check_analysis(c, &format!("panda.analysis[{i}]"), a, &mut names, &gshares, storages, arch);
    }
    for (i, r) in p.replay.iter().enumerate() {
        let path = format!("panda.replay[{i}]");
        check_replay(c, &path, r, &mut names, &gshares, &queues, &nuclei);
        replay_records(c, &path, r, &queues);
    }
}

/// Module parameters: each module's own validation, and no variant written inside them (the
/// variant is filled from `panda.variant` and `panda.variants`).
fn check_modules(c: &mut Checker, p: &PandaConfig) {
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
}

/// Harvester's settings: threads and queues at least 1, loop periods above 0 s (a 0 s cycle
/// would fire for ever at one instant), a static `activateWorkerFactor` ≥ 0.
fn check_harvester(c: &mut Checker, h: &SubmitterSettings) {
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
    if let ActivateWorkerFactor::Static(x) = h.activate_worker_factor
        && !(x.is_finite() && x >= 0.0)
    {
        c.fail("panda.harvester.activateWorkerFactor", format!("must be a number ≥ 0 or Auto, got {x}"));
    }
}

/// The global shares' names: every node's, and the leaves', which tasks name.
struct Gshares<'a> {
    names: BTreeSet<&'a str>,
    leaves: BTreeSet<String>,
}

impl<'a> Gshares<'a> {
    /// Every node of the share tree with a name unique over the tree (PanDA keys shares by
    /// name) and a value ≥ 0. Returns the names.
    fn check(c: &mut Checker, p: &'a PandaConfig) -> Self {
        let mut nodes = Vec::new();
        share_nodes(&p.gshares, "panda.gshares", &mut nodes);
        let mut names = BTreeSet::new();
        for (path, n) in &nodes {
            if n.name.trim().is_empty() {
                c.fail(format!("{path}.name"), "a share needs a name");
            } else if !names.insert(n.name.as_str()) {
                c.fail(
                    format!("{path}.name"),
                    format!("duplicate share name {:?} (PanDA keys shares by name)", n.name),
                );
            }
            c.non_negative(&format!("{path}.value"), n.value);
        }
        Self { names, leaves: leaves(&p.gshares).into_iter().map(|l| l.name).collect() }
    }

    /// The leaves' names.
    fn leaf_set(&self) -> BTreeSet<&str> {
        self.leaves.iter().map(String::as_str).collect()
    }

    /// `g` (at `path`) names a leaf: tasks count for leaves only.
    fn check_leaf(&self, c: &mut Checker, path: String, g: &str) {
        let leaf_set = self.leaf_set();
        if !leaf_set.contains(g) {
            let what = if self.names.contains(g) {
                "is not a leaf of panda.gshares (tasks name leaves)"
            } else {
                "is not in panda.gshares"
            };
            c.fail(path, format!("gshare {g:?} {what} (leaves: {})", list(&leaf_set)));
        }
    }
}

/// Nuclei: each at a known site, one per site, with known storages. Returns their sites.
fn check_nuclei<'a>(
    c: &mut Checker,
    p: &'a PandaConfig,
    sites: &BTreeSet<&str>,
    storages: &BTreeSet<&str>,
) -> BTreeSet<&'a str> {
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
    nuclei
}

/// PanDA queues: at least one, unique names, each queue's fields ([`check_queue`]). Returns
/// their names.
fn check_queues<'a>(
    c: &mut Checker,
    s: &Scenario,
    p: &'a PandaConfig,
    sites: &BTreeSet<&str>,
    storages: &BTreeSet<&str>,
) -> BTreeSet<&'a str> {
    if p.queues.is_empty() {
        c.fail("panda.queues", "the panda section needs at least one PanDA queue");
    }
    let queues = c.unique("panda.queues", "PanDA queue", p.queues.iter().map(|q| q.name.as_str()));
    for (i, q) in p.queues.iter().enumerate() {
        check_queue(c, &format!("panda.queues[{i}]"), q, s, sites, storages);
    }
    queues
}

/// One queue at `path`: a known site and CEs of that site, CRIC attributes in range, known
/// activities and storages, Harvester limits ≥ 0, a modelled `mapType`.
fn check_queue(
    c: &mut Checker,
    path: &str,
    q: &PandaQueue,
    s: &Scenario,
    sites: &BTreeSet<&str>,
    storages: &BTreeSet<&str>,
) {
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
    check_queue_limits(c, path, q);
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
    // Push with several jobs per worker or workers per job is not modelled (wms::panda::harvester).
    if matches!(q.harvester.map_type, MapType::MultiJobs | MapType::MultiWorkers) {
        c.fail(
            format!("{path}.harvester.mapType"),
            "ManyToOne and OneToMany are not modelled: use OneToOne (push, one job per worker) or NoJob (pull)",
        );
    }
}

/// A queue's CRIC limits: memory and time ranges the right way round, `maxinputsize`,
/// `maxdiskio` and `pledgedcpu` in their ranges (-1 has its own meaning in two of them).
fn check_queue_limits(c: &mut Checker, path: &str, q: &PandaQueue) {
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
}

/// Production tasks are brokered to a nucleus and run on production (or unified) queues;
/// analysis tasks run on analysis (or unified) queues: each kind of task needs its places.
fn check_workload_has_queues(c: &mut Checker, p: &PandaConfig) {
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
}

/// The stream names seen so far: unique over tasks, analysis and replay.
#[derive(Default)]
struct StreamNames(BTreeSet<String>);

impl StreamNames {
    /// Stream name `n` (at `path`) is not empty and not seen before.
    fn check(&mut self, c: &mut Checker, path: String, n: &str) {
        if n.trim().is_empty() {
            c.fail(path, "a stream needs a name");
        } else if !self.0.insert(n.to_string()) {
            c.fail(path, format!("duplicate stream name {n:?} (names are unique over tasks, analysis and replay)"));
        }
    }
}

/// One production task stream at `path`: its counts, inputs, event split (by files of a master
/// dataset, else by events), resources, gshare leaf and architecture.
fn check_task(
    c: &mut Checker,
    path: &str,
    t: &ProductionStream,
    names: &mut StreamNames,
    gshares: &Gshares,
    storages: &BTreeSet<&str>,
    arch: ArchVariant,
) {
    names.check(c, format!("{path}.name"), &t.name);
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
    gshares.check_leaf(c, format!("{path}.gshare"), &t.gshare);
    architecture(c, &format!("{path}.architecture"), &t.architecture, arch);
    c.probability(&format!("{path}.failure_probability"), t.failure_probability);
    c.count(&format!("{path}.max_attempt"), u64::from(t.max_attempt));
}

/// One analysis task stream at `path`: a user, its counts, inputs, resources, gshare leaf and
/// architecture.
fn check_analysis(
    c: &mut Checker,
    path: &str,
    a: &AnalysisStream,
    names: &mut StreamNames,
    gshares: &Gshares,
    storages: &BTreeSet<&str>,
    arch: ArchVariant,
) {
    names.check(c, format!("{path}.name"), &a.name);
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
    gshares.check_leaf(c, format!("{path}.gshare"), &a.gshare);
    architecture(c, &format!("{path}.architecture"), &a.architecture, arch);
    c.probability(&format!("{path}.failure_probability"), a.failure_probability);
    c.count(&format!("{path}.max_attempt"), u64::from(a.max_attempt));
}

/// One replay stream at `path` (its records apart, [`replay_records`]): a file, a known queue and
/// nucleus if it names them, the gshare leaf its jobs count for (needed unless there is one).
fn check_replay(
    c: &mut Checker,
    path: &str,
    r: &ReplayStream,
    names: &mut StreamNames,
    gshares: &Gshares,
    queues: &BTreeSet<&str>,
    nuclei: &BTreeSet<&str>,
) {
    names.check(c, format!("{path}.name"), &r.name);
    if r.file.trim().is_empty() {
        c.fail(format!("{path}.file"), "a replay stream needs a CSV file");
    }
    c.non_negative(&format!("{path}.start_s"), r.start_s);
    if let Some(q) = &r.queue
        && !queues.contains(q.as_str())
    {
        c.fail(format!("{path}.queue"), format!("unknown PanDA queue {q:?} (known: {})", list(queues)));
    }
    let leaf_set = gshares.leaf_set();
    match &r.gshare {
        Some(g) => gshares.check_leaf(c, format!("{path}.gshare"), g),
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
        c.fail(format!("{path}.nucleus"), format!("unknown nucleus {n:?} (nuclei: {})", list(nuclei)));
    }
}

/// Each record of replay stream `r` (at `path`): a known queue (unless the stream sets one), a
/// final `jobstatus`, a run time. One problem per kind: its first record, `FILE:LINE: column:`,
/// and how many more records have it.
fn replay_records(c: &mut Checker, path: &str, r: &ReplayStream, queues: &BTreeSet<&str>) {
    use super::replay::JOB_STATUSES;
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
