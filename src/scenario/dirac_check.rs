//! Validation of the `dirac` section and of its workload, in the style of
//! [`validate`](super::validate): the Registry groups, the share corrections, the TaskQueueDB,
//! Matcher, director and JobAgent options, and each job stream, which must name a known group
//! and a CE some pilot could take its jobs at.

use std::collections::{BTreeMap, BTreeSet};

use super::dirac::{CeResource, DiracConfig};
use super::types::Scenario;
use super::validate::{Checker, GridNames, list};
use crate::dirac::corrector;
use crate::dirac::matcher::{self, PilotIdentity};
use crate::dirac::priority::{JOB_SHARING, JOB_SHARING_CS, is_job_sharing_property};
use crate::dirac::taskqueue::TqDefinition;
use crate::workload::JobStream;

/// Check the `dirac` section `d` and the scenario's `workload` against it and the grid.
pub(super) fn check(c: &mut Checker, s: &Scenario, d: &DiracConfig, grid: &GridNames) {
    let groups = check_groups(c, d);
    check_share_corrections(c, d, &groups);
    check_task_queues_and_matcher(c, d);
    let pools = check_director(c, d, &grid.ces);
    check_job_agent(c, d);
    check_workload(c, s, d, grid, &groups, &pools);
}

/// Registry groups: at least one, unique names, JobShares ≥ 0 and not all 0 (no group would
/// get a pilot), JobSharing spelled as DIRAC spells it. Returns the group names.
fn check_groups<'a>(c: &mut Checker, d: &'a DiracConfig) -> BTreeSet<&'a str> {
    if d.groups.is_empty() {
        c.fail("dirac.groups", "at least one group is needed");
    }
    let groups = c.unique("dirac.groups", "group", d.groups.iter().map(|g| g.name.as_str()));
    for (i, g) in d.groups.iter().enumerate() {
        c.non_negative(&format!("dirac.groups[{i}].job_share"), g.job_share);
        for (k, prop) in g.properties.iter().enumerate() {
            let loose = |p: &str| p.replace('_', "").eq_ignore_ascii_case("JOBSHARING");
            if loose(prop) && !is_job_sharing_property(prop) {
                c.fail(
                    format!("dirac.groups[{i}].properties[{k}]"),
                    format!("write DIRAC's {JOB_SHARING_CS:?} (or the seeds' {JOB_SHARING:?}), got {prop:?}"),
                );
            }
        }
    }
    if !d.groups.is_empty() && d.groups.iter().all(|g| g.job_share == 0.0) {
        c.fail("dirac.groups", "every JobShare is 0: no group could ever be given a pilot");
    }
    groups
}

/// Share corrections: the corrector's own checks, each in-group instance on a known group
/// without JOB_SHARING (seed 002: its share is not split among users), and an instance when
/// they are enabled.
fn check_share_corrections(c: &mut Checker, d: &DiracConfig, groups: &BTreeSet<&str>) {
    let sc = &d.share_corrections;
    for (path, msg) in corrector::validate_share_corrections(sc) {
        c.fail(format!("dirac.share_corrections.{path}"), msg);
    }
    for (i, inst) in sc.instances.iter().enumerate() {
        let p = format!("dirac.share_corrections.instances[{i}]");
        if let Some(g) = &inst.group {
            match d.groups.iter().find(|x| &x.name == g) {
                None => c.fail(format!("{p}.group"), format!("unknown group {g:?} (known: {})", list(groups))),
                Some(x) if x.job_sharing() => c.fail(
                    format!("{p}.group"),
                    format!("group {g:?} has JOB_SHARING: its share is not split among users, so a per-user corrector is meaningless (seed 002)"),
                ),
                Some(_) => {}
            }
        }
    }
    if sc.enabled && sc.instances.is_empty() {
        c.fail(
            "dirac.share_corrections.instances",
            "EnableSharesCorrection is on but no corrector instance is defined",
        );
    }
}

/// The resolved TaskQueueDB and Matcher options: a usable list of CPU segments, a job per level
/// at least.
fn check_task_queues_and_matcher(c: &mut Checker, d: &DiracConfig) {
    let rules = d.rules();
    for msg in rules.cpu_segments.problems() {
        c.fail("dirac.task_queues.cpu_segments", msg);
    }
    c.count("dirac.matcher.jobs_per_level", u64::from(rules.matching.jobs_per_level));
}

/// TaskqueueDirector options in range, and submit pools of known CEs with at least one default
/// pool. Returns the pool names.
fn check_director<'a>(c: &mut Checker, d: &'a DiracConfig, ce_names: &BTreeSet<&str>) -> BTreeSet<&'a str> {
    let dir = &d.director;
    c.positive("dirac.director.pilots_per_iteration", dir.pilots_per_iteration);
    c.non_negative("dirac.director.lowest_cpu_boost_s", dir.lowest_cpu_boost_s);
    c.non_negative("dirac.director.extra_pilot_fraction", dir.extra_pilot_fraction);
    c.positive("dirac.director.max_pilot_waiting_hours", dir.max_pilot_waiting_hours);
    c.probability("dirac.director.private_pilot_fraction", dir.private_pilot_fraction);
    c.count("dirac.director.max_jobs_in_fill_mode", u64::from(dir.max_jobs_in_fill_mode));
    let pools =
        c.unique("dirac.director.submit_pools", "submit pool", dir.submit_pools.iter().map(|p| p.name.as_str()));
    for (i, pool) in dir.submit_pools.iter().enumerate() {
        c.known(&format!("dirac.director.submit_pools[{i}].ces"), "CE", &pool.ces, ce_names);
    }
    if dir.default_submit_pools.is_empty() {
        c.fail("dirac.director.default_submit_pools", "at least one default submit pool is needed");
    }
    c.known("dirac.director.default_submit_pools", "submit pool", &dir.default_submit_pools, &pools);
    pools
}

/// JobAgent and PilotStatusAgent times: margins ≥ 0, a stalled pilot given up after some time.
fn check_job_agent(c: &mut Checker, d: &DiracConfig) {
    let ja = &d.job_agent;
    c.non_negative("dirac.job_agent.minimum_time_left", ja.minimum_time_left);
    c.non_negative("dirac.job_agent.stop_margin_s", ja.stop_margin_s);
    c.positive("dirac.pilot_status.pilot_stalled_days", d.pilot_status.pilot_stalled_days);
}

/// The job streams: at least one, unique names, each stream's fields ([`check_stream`]); while
/// nothing else is wrong, each stream must be one some CE can run ([`stream_can_run_somewhere`]).
fn check_workload(
    c: &mut Checker,
    s: &Scenario,
    d: &DiracConfig,
    grid: &GridNames,
    groups: &BTreeSet<&str>,
    pools: &BTreeSet<&str>,
) {
    if s.workload.is_empty() {
        c.fail("workload", "at least one job stream is needed");
    }
    c.unique("workload", "job stream", s.workload.iter().map(|w| w.name.as_str()));
    let matching = StreamMatcher::new(s, d);
    for (i, w) in s.workload.iter().enumerate() {
        let p = format!("workload[{i}]");
        check_stream(c, &p, w, d, grid, groups, pools);
        if c.problems.is_empty() && !stream_can_run_somewhere(s, d, &matching, i) {
            c.fail(
                p.clone(),
                format!(
                    "no CE can run stream {:?}: check its sites, platforms, CEs, tags and CPU time (segment {} s) against every CE's CPU capacity",
                    w.name,
                    d.rules().cpu_segments.fit(w.cpu_time)
                ),
            );
        }
    }
}

/// One stream's fields at `p`: a known group (and a user of it, when the group lists users),
/// numbers in range, known sites, CEs, platforms and submit pools, pilot type "private" only.
fn check_stream(
    c: &mut Checker,
    p: &str,
    w: &JobStream,
    d: &DiracConfig,
    grid: &GridNames,
    groups: &BTreeSet<&str>,
    pools: &BTreeSet<&str>,
) {
    match d.groups.iter().find(|g| g.name == w.group) {
        None => c.fail(format!("{p}.group"), format!("unknown group {:?} (known: {})", w.group, list(groups))),
        Some(g) if !g.users.is_empty() && !g.users.contains(&w.owner) => c.fail(
            format!("{p}.owner"),
            format!("user {:?} is not in group {:?} (users: {})", w.owner, g.name, g.users.join(", ")),
        ),
        Some(_) => {}
    }
    c.count(&format!("{p}.count"), u64::from(w.count));
    c.arrival(&format!("{p}.arrival"), &w.arrival);
    c.distribution(&format!("{p}.cpu_work"), &w.cpu_work);
    c.positive(&format!("{p}.cpu_time"), w.cpu_time);
    if w.user_priority > 10 {
        c.fail(format!("{p}.user_priority"), format!("must be 0..=10 (JDL Priority), got {}", w.user_priority));
    }
    c.known(&format!("{p}.sites"), "site", &w.sites, &grid.sites);
    c.known(&format!("{p}.banned_sites"), "site", &w.banned_sites, &grid.sites);
    c.known(&format!("{p}.grid_ces"), "CE", &w.grid_ces, &grid.ces);
    c.known(&format!("{p}.platforms"), "platform", &w.platforms, &grid.platforms);
    c.known(&format!("{p}.submit_pools"), "submit pool", &w.submit_pools, pools);
    for (k, t) in w.pilot_types.iter().enumerate() {
        if t.to_lowercase() != "private" {
            c.fail(
                format!("{p}.pilot_types[{k}]"),
                format!("the only pilot type is \"private\" (seed 000), got {t:?}"),
            );
        }
    }
    c.probability(&format!("{p}.failure_probability"), w.failure_probability);
}

/// True if the Matcher would give a job of stream `i` to a fresh pilot at some CE, with the CPU
/// time its JobAgent has left there: the Matcher's own comparison with the TQ's CPU time (its
/// segment, in whole seconds as the TaskQueueDB keeps it). Validation refuses the streams no CE
/// of the grid could ever match; a stream whose only matching CEs no pilot reaches (outside
/// every submit pool it gets pilots from) is not caught here.
fn stream_can_run_somewhere(s: &Scenario, d: &DiracConfig, matching: &StreamMatcher, i: usize) -> bool {
    let ja = &d.job_agent;
    let ces = s.sites.iter().flat_map(|site| &site.ces);
    ces.enumerate().any(|(c, ce)| matching.takes_with(i, c, ja.cpu_time_left(ce.max_walltime_s, 0.0, ce.cpu_power)))
}

/// The Matcher's own filter ([`matcher::tq_matches`]) between a scenario's job streams and its
/// CEs: each stream's task-queue definition and each CE's resource description, built once with
/// the names interned.
pub(super) struct StreamMatcher {
    /// Per stream, its TQ definition without its pilot types (see [`StreamMatcher::takes`]).
    defs: Vec<TqDefinition>,
    /// Per CE, in site order then CE order (the CE ids of a run).
    ces: Vec<CeResource>,
    /// The interned pilot type "private".
    private_type: u32,
    /// The interned Setup.
    setup: u32,
}

impl StreamMatcher {
    /// The definitions of `s`'s streams and the descriptions of its CEs under `dirac` section `d`.
    pub(super) fn new(s: &Scenario, d: &DiracConfig) -> Self {
        let mut names: BTreeMap<String, u32> = BTreeMap::new();
        let mut id = |name: &str| {
            let next = names.len() as u32;
            *names.entry(name.to_string()).or_insert(next)
        };
        let private_type = id("private");
        let setup = id(&format!("setup:{}", d.setup));
        let mut ces = Vec::new();
        for site in &s.sites {
            for ce in &site.ces {
                ces.push(CeResource::of(site, ce, &mut id));
            }
        }
        let defs = s
            .workload
            .iter()
            .map(|w| TqDefinition { pilot_types: Vec::new(), ..d.tq_definition(w, &mut id) })
            .collect();
        Self { defs, ces, private_type, setup }
    }

    /// Whether the Matcher gives a job of stream `i` to a pilot at CE `c` (its index over every
    /// site's CEs), CPU time apart: the pilot offers unlimited CPU time, callers compare it.
    ///
    /// The pilot is the stream owner's private one, for which the owner and group filters pass,
    /// as the director's list-match presents it: validation asks whether any pilot could take
    /// the jobs. The stream's pilot types are left to [`check_stream`] (the only one is
    /// "private", which that pilot presents): the GPU checks ask this of streams whose fields
    /// may be refused too.
    pub(super) fn takes(&self, i: usize, c: usize) -> bool {
        self.takes_with(i, c, f64::INFINITY)
    }

    /// [`StreamMatcher::takes`] for a pilot with `cpu_time_left` seconds of CPU time.
    pub(super) fn takes_with(&self, i: usize, c: usize, cpu_time_left: f64) -> bool {
        let def = &self.defs[i];
        let identity = PilotIdentity::Private { owner: def.owner, group: def.group };
        let r = self.ces[c].resource(identity, self.private_type, self.setup, cpu_time_left);
        matcher::tq_matches(def, &r, |_| true)
    }
}
