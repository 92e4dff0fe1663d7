//! Semantic validation of a scenario: everything the types cannot say.
//!
//! Each problem names the field by its path (`sites[1].ces[0].slots`) and says what was
//! expected. Validation never panics and reports every problem, not just the first.

use std::collections::BTreeSet;

use super::dirac::DiracConfig;
use super::expect::parse_threshold;
use super::types::{Arrival, Distribution, Scenario};
use crate::dirac::corrector::CorrectorVariant;
use crate::grid::config::Ce;
use crate::grid::gpu::MAX_GPU_KINDS;
use crate::grid::network::{Network, NetworkError};

/// One semantic problem: the field path and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

#[derive(Default)]
pub(in crate::scenario) struct Checker {
    pub(in crate::scenario) problems: Vec<Problem>,
}

impl Checker {
    pub(in crate::scenario) fn fail(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem { path: path.into(), message: message.into() });
    }

    pub(in crate::scenario) fn positive(&mut self, path: &str, v: f64) {
        if !(v.is_finite() && v > 0.0) {
            self.fail(path, format!("must be a positive number, got {v}"));
        }
    }

    pub(in crate::scenario) fn non_negative(&mut self, path: &str, v: f64) {
        if !(v.is_finite() && v >= 0.0) {
            self.fail(path, format!("must be a number ≥ 0, got {v}"));
        }
    }

    pub(in crate::scenario) fn probability(&mut self, path: &str, v: f64) {
        if !(0.0..=1.0).contains(&v) {
            self.fail(path, format!("must be a probability in [0, 1], got {v}"));
        }
    }

    pub(in crate::scenario) fn count(&mut self, path: &str, v: u64) {
        if v == 0 {
            self.fail(path, "must be at least 1");
        }
    }

    pub(in crate::scenario) fn distribution(&mut self, path: &str, d: &Distribution) {
        match d {
            Distribution::Fixed(v) => self.non_negative(&format!("{path}.Fixed"), *v),
            Distribution::Exponential { mean } => self.positive(&format!("{path}.mean"), *mean),
            Distribution::LogNormal { median, sigma } => {
                self.positive(&format!("{path}.median"), *median);
                self.non_negative(&format!("{path}.sigma"), *sigma);
            }
            Distribution::Uniform { min, max } => {
                self.non_negative(&format!("{path}.min"), *min);
                if !(max.is_finite() && max >= min) {
                    self.fail(format!("{path}.max"), format!("must be ≥ min ({min}), got {max}"));
                }
            }
            Distribution::Empirical(values) => {
                if values.is_empty() {
                    self.fail(path, "an Empirical distribution needs at least one value");
                }
                if let Some(v) = values.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
                    self.fail(path, format!("Empirical values must be numbers ≥ 0, got {v}"));
                }
            }
        }
    }

    pub(in crate::scenario) fn arrival(&mut self, path: &str, a: &Arrival) {
        match a {
            Arrival::Burst { at_s } => self.non_negative(&format!("{path}.at_s"), *at_s),
            Arrival::Poisson { start_s, rate_per_hour } => {
                self.non_negative(&format!("{path}.start_s"), *start_s);
                self.positive(&format!("{path}.rate_per_hour"), *rate_per_hour);
            }
            Arrival::Spread { start_s, end_s } => {
                self.non_negative(&format!("{path}.start_s"), *start_s);
                if end_s.partial_cmp(start_s) != Some(std::cmp::Ordering::Greater) {
                    self.fail(format!("{path}.end_s"), format!("must be after start_s ({start_s}), got {end_s}"));
                }
            }
        }
    }

    pub(in crate::scenario) fn unique<'a>(
        &mut self,
        path: &str,
        what: &str,
        names: impl Iterator<Item = &'a str>,
    ) -> BTreeSet<&'a str> {
        let mut seen = BTreeSet::new();
        for (i, n) in names.enumerate() {
            if n.trim().is_empty() {
                self.fail(format!("{path}[{i}].name"), format!("{what} name must not be empty"));
            } else if !seen.insert(n) {
                self.fail(format!("{path}[{i}].name"), format!("duplicate {what} name {n:?}"));
            }
        }
        seen
    }

    pub(in crate::scenario) fn known(&mut self, path: &str, what: &str, values: &[String], known: &BTreeSet<&str>) {
        for (i, v) in values.iter().enumerate() {
            if !known.contains(v.as_str()) {
                self.fail(format!("{path}[{i}]"), format!("unknown {what} {v:?} (known: {})", list(known)));
            }
        }
    }
}

pub(in crate::scenario) fn list(set: &BTreeSet<&str>) -> String {
    let v: Vec<&str> = set.iter().copied().take(12).collect();
    let more = if set.len() > 12 { ", …" } else { "" };
    format!("{}{more}", v.join(", "))
}

/// Every semantic problem of a scenario (empty if it is valid).
pub fn validate(s: &Scenario) -> Vec<Problem> {
    let mut problems = fields(s);
    problems.extend(super::gpu_check::problems(s));
    // Non-finite numbers the field checks above have not named already (a bound only compared
    // with another, an optional limit): none is ever accepted (`scenario::finite`).
    for path in super::finite::non_finite_paths(s) {
        if !problems.iter().any(|p| p.path == path) {
            problems.push(Problem { path, message: "must be a finite number (not inf or NaN)".into() });
        }
    }
    problems
}

/// A scenario name names its output directory (`results/<name>/`) and its baseline
/// (`<name>.json`): a name, never a path. The problem with `name`, if any.
pub fn name_problem(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        return Some("must not be empty (it names the output directory)".into());
    }
    if name.contains(['/', '\\']) || name == "." || name.contains("..") {
        return Some(format!("{name:?} is a path: a name has no '/', '\\' or '..' (it names the output directory)"));
    }
    if name.chars().any(char::is_control) {
        return Some(format!("{name:?} has a control character (it names the output directory)"));
    }
    None
}

/// Every check but the one of non-finite numbers ([`validate`]), in the order their problems
/// are listed: the scenario's own fields, the grid, the pilot factories, the WMS sections, the
/// expectations, then the limits of a run.
fn fields(s: &Scenario) -> Vec<Problem> {
    let mut c = Checker::default();
    check_name_and_output(&mut c, s);
    let grid = check_grid(&mut c, s);
    check_network(&mut c, s, &grid.sites);
    let storages = storages(&mut c, s, &grid.sites);
    super::factory::check(&mut c, s);
    if let Some(p) = &s.panda {
        super::panda::check::check(&mut c, s, p, &grid.sites, &storages);
    }
    match &s.dirac {
        Some(d) => super::dirac_check::check(&mut c, s, d, &grid),
        None if s.panda.is_some() => check_panda_only(&mut c, s),
        None => {
            c.fail("dirac", "no WMS section: a scenario needs `dirac: (groups: [...])` or `panda: (queues: [...])` (the pilot factory comes next)");
            // Checked as an empty `dirac: ()`, so that what it lacks (groups, pools) is named too.
            super::dirac_check::check(&mut c, s, &DiracConfig::default(), &grid);
        }
    }
    check_expect(&mut c, s);
    c.problems.extend(super::limits::problems(s)); // periods, sizes, memory: see limits.rs
    c.problems
}

/// The name (it names the output directory) and the run's span and sampling: a warm-up
/// shorter than the run, a convergence tolerance that is a fraction.
fn check_name_and_output(c: &mut Checker, s: &Scenario) {
    if let Some(m) = name_problem(&s.name) {
        c.fail("name", m);
    }
    c.positive("duration_s", s.duration_s);
    c.non_negative("output.warmup_s", s.output.warmup_s);
    if s.output.warmup_s >= s.duration_s {
        c.fail("output.warmup_s", format!("must be shorter than duration_s ({})", s.duration_s));
    }
    c.positive("output.sample_interval_s", s.output.sample_interval_s);
    c.probability("output.convergence_tolerance", s.output.convergence_tolerance);
}

/// The names of the grid that other sections refer to.
pub(in crate::scenario) struct GridNames<'a> {
    pub(in crate::scenario) sites: BTreeSet<&'a str>,
    pub(in crate::scenario) ces: BTreeSet<&'a str>,
    pub(in crate::scenario) platforms: BTreeSet<&'a str>,
}

/// Sites: at least one, unique names, each with a CE; CE names unique over the grid, each CE's
/// fields ([`check_ce`]). Returns the grid's names.
fn check_grid<'a>(c: &mut Checker, s: &'a Scenario) -> GridNames<'a> {
    if s.sites.is_empty() {
        c.fail("sites", "a scenario needs at least one site");
    }
    let sites = c.unique("sites", "site", s.sites.iter().map(|x| x.name.as_str()));
    let mut ces = BTreeSet::new();
    let mut platforms = BTreeSet::new();
    for (i, site) in s.sites.iter().enumerate() {
        if site.ces.is_empty() {
            c.fail(format!("sites[{i}].ces"), format!("site {:?} has no CE", site.name));
        }
        for (j, ce) in site.ces.iter().enumerate() {
            let p = format!("sites[{i}].ces[{j}]");
            if !ces.insert(ce.name.as_str()) {
                c.fail(format!("{p}.name"), format!("duplicate CE name {:?}", ce.name));
            }
            platforms.insert(ce.platform.as_str());
            check_ce(c, &p, ce);
        }
    }
    GridNames { sites, ces, platforms }
}

/// One CE's numbers at `p`: slots, memory, walltime and CPU power, its delays and
/// probabilities, its job caps (0 would refuse every pilot) and GPU nodes.
fn check_ce(c: &mut Checker, p: &str, ce: &Ce) {
    c.count(&format!("{p}.slots"), u64::from(ce.slots));
    c.count(&format!("{p}.memory_per_core_mb"), u64::from(ce.memory_per_core_mb));
    c.positive(&format!("{p}.max_walltime_s"), ce.max_walltime_s);
    c.positive(&format!("{p}.cpu_power"), ce.cpu_power);
    c.distribution(&format!("{p}.pilot_wait"), &ce.pilot_wait);
    c.distribution(&format!("{p}.abort_delay"), &ce.abort_delay);
    c.probability(&format!("{p}.abort_probability"), ce.abort_probability);
    c.probability(&format!("{p}.stuck_probability"), ce.stuck_probability);
    c.probability(&format!("{p}.pilot_failure_probability"), ce.pilot_failure_probability);
    // A cap of 0 would refuse every pilot: leave the field out for no cap.
    for (field, cap) in [("max_waiting_jobs", ce.max_waiting_jobs), ("max_total_jobs", ce.max_total_jobs)] {
        if let Some(v) = cap {
            c.count(&format!("{p}.{field}"), u64::from(v));
        }
    }
    if ce.gpus.len() > MAX_GPU_KINDS {
        c.fail(format!("{p}.gpus"), format!("{} kinds of GPU node: a CE has at most {}", ce.gpus.len(), MAX_GPU_KINDS));
    }
    for (k, g) in ce.gpus.iter().enumerate() {
        c.count(&format!("{p}.gpus[{k}].gpus_per_node"), u64::from(g.gpus_per_node));
        c.count(&format!("{p}.gpus[{k}].vram_mb"), u64::from(g.vram_mb));
        c.count(&format!("{p}.gpus[{k}].nodes"), u64::from(g.nodes));
    }
}

/// Network links between known sites, with numbers in range; then what only building the
/// network finds (a second link between the same sites, too many links).
fn check_network(c: &mut Checker, s: &Scenario, sites: &BTreeSet<&str>) {
    for (i, l) in s.network.iter().enumerate() {
        let p = format!("network[{i}]");
        for (field, site) in [("from", &l.from), ("to", &l.to)] {
            if !sites.contains(site.as_str()) {
                c.fail(format!("{p}.{field}"), format!("unknown site {site:?}"));
            }
        }
        c.positive(&format!("{p}.bandwidth_mbps"), l.bandwidth_mbps);
        c.non_negative(&format!("{p}.latency_ms"), l.latency_ms);
        if l.closeness > 11 {
            c.fail(format!("{p}.closeness"), format!("must be 0..=11, got {}", l.closeness));
        }
        if l.max_active_transfers == Some(0) {
            c.fail(format!("{p}.max_active_transfers"), "must be at least 1 (or absent: FTS's 60)");
        }
    }
    if let Err(e @ (NetworkError::DuplicateLink { .. } | NetworkError::TooManyLinks)) =
        Network::from_sites(&s.sites, &s.network)
    {
        let msg = e.to_string();
        match msg.split_once(": ") {
            Some((path, m)) if path.starts_with("network[") => c.fail(path.to_string(), m.to_string()),
            _ => c.fail("network".to_string(), msg),
        }
    }
}

/// A PanDA-only scenario has no DIRAC job streams: its workload is written under `panda`.
fn check_panda_only(c: &mut Checker, s: &Scenario) {
    if !s.workload.is_empty() {
        c.fail(
            "workload",
            "these job streams are DIRAC's and the scenario has no `dirac` section: a PanDA-only scenario writes its workload under panda.tasks, panda.analysis and panda.replay",
        );
    }
}

/// What `pilotsim check` reads: thresholds it can parse, at least one replica.
fn check_expect(c: &mut Checker, s: &Scenario) {
    for (i, t) in s.expect.thresholds.iter().enumerate() {
        if let Err(e) = parse_threshold(t) {
            c.fail(format!("expect.thresholds[{i}]"), e);
        }
    }
    c.count("expect.replicas", u64::from(s.expect.replicas));
}

/// The top-level storage endpoints: unique names, known sites, sizes that add up. Returns the
/// set of their names.
fn storages<'a>(c: &mut Checker, s: &'a Scenario, sites: &BTreeSet<&str>) -> BTreeSet<&'a str> {
    let names = c.unique("storages", "storage", s.storages.iter().map(|x| x.name.as_str()));
    for (i, st) in s.storages.iter().enumerate() {
        let p = format!("storages[{i}]");
        if !sites.contains(st.site.as_str()) {
            c.fail(format!("{p}.site"), format!("unknown site {:?} (known: {})", st.site, list(sites)));
        }
        if let Some(t) = st.total_tb {
            c.non_negative(&format!("{p}.total_tb"), t);
            if st.used_tb.is_finite() && t.is_finite() && st.used_tb > t {
                c.fail(format!("{p}.used_tb"), format!("{} TB used of {t} TB total", st.used_tb));
            }
        }
        c.non_negative(&format!("{p}.used_tb"), st.used_tb);
        c.non_negative(&format!("{p}.expired_tb"), st.expired_tb);
        if st.expired_tb.is_finite() && st.used_tb.is_finite() && st.expired_tb > st.used_tb {
            c.fail(
                format!("{p}.expired_tb"),
                format!(
                    "expired data is part of the used space: {} TB expired of {} TB used",
                    st.expired_tb, st.used_tb
                ),
            );
        }
    }
    names
}

/// Things that are valid but probably not what the author meant, each with its field path.
/// `validate` and `run` print them; they never stop a run.
pub fn warnings(s: &Scenario) -> Vec<Problem> {
    let mut out = Vec::new();
    if let Some(p) = &s.panda {
        out.extend(super::panda::check::warnings(s, p));
    }
    out.extend(super::factory::warnings(s));
    out.extend(super::gpu_check::warnings(s));
    let Some(d) = &s.dirac else { return out };
    let sc = &d.share_corrections;
    if sc.enabled && d.rules().corrector_variant == CorrectorVariant::Dirac9 {
        for (i, inst) in sc.instances.iter().enumerate() {
            if let Some(g) = &inst.group {
                out.push(Problem {
                    path: format!("dirac.share_corrections.instances[{i}].group"),
                    message: format!(
                        "the in-group corrector of {g:?} does nothing under DIRAC 9 (its history is keyed by DN, task-queue owners by user name; reference dirac.md §3.3): set `variant: Seed` to apply it"
                    ),
                });
            }
        }
    }
    let int_job_share = d.rules().int_job_share;
    for (i, g) in d.groups.iter().enumerate().filter(|(_, g)| g.effective_job_share(int_job_share) != g.job_share) {
        out.push(Problem {
            path: format!("dirac.groups[{i}].job_share"),
            message: format!(
                "DIRAC 9 reads JobShare with int(), which fails on {}: the group gets the default 1000 (reference dirac.md §2.1; `dirac.priority.int_job_share: Some(false)` reads the number)",
                g.job_share
            ),
        });
    }
    for w in &d.cfg_warnings {
        out.push(Problem { path: "dirac.cfg_file".into(), message: w.clone() });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{QUICKSTART, parse};
    use super::*;

    fn quick() -> Scenario {
        parse(QUICKSTART, "q").unwrap()
    }

    fn problems_of(f: impl Fn(&mut Scenario)) -> Vec<Problem> {
        let mut s = quick();
        f(&mut s);
        validate(&s)
    }

    fn has(problems: &[Problem], path: &str) -> bool {
        problems.iter().any(|p| p.path == path)
    }

    #[test]
    fn quickstart_has_no_problem() {
        assert_eq!(validate(&quick()), vec![]);
    }

    #[test]
    fn each_kind_of_problem_is_reported_with_its_path() {
        assert!(has(&problems_of(|s| s.duration_s = -1.0), "duration_s"));
        assert!(has(&problems_of(|s| s.sites[0].ces[0].slots = 0), "sites[0].ces[0].slots"));
        assert!(has(&problems_of(|s| s.sites[0].ces[0].abort_probability = 1.5), "sites[0].ces[0].abort_probability"));
        assert!(has(
            &problems_of(|s| s.sites[0].ces[0].pilot_wait = Distribution::Empirical(vec![])),
            "sites[0].ces[0].pilot_wait"
        ));
        assert!(has(&problems_of(|s| s.workload[0].group = "nobody".into()), "workload[0].group"));
        assert!(has(&problems_of(|s| s.workload[0].sites = vec!["Nowhere".into()]), "workload[0].sites[0]"));
        assert!(has(&problems_of(|s| s.workload[0].count = 0), "workload[0].count"));
        assert!(has(&problems_of(|s| s.workload[0].user_priority = 11), "workload[0].user_priority"));
        assert!(has(
            &problems_of(|s| s.dirac_mut().director.private_pilot_fraction = -0.1),
            "dirac.director.private_pilot_fraction"
        ));
        assert!(has(&problems_of(|s| s.dirac_mut().groups.iter_mut().for_each(|g| g.job_share = 0.0)), "dirac.groups"));
        assert!(has(&problems_of(|s| s.sites[1].name = s.sites[0].name.clone()), "sites[1].name"));
        assert!(has(&problems_of(|s| s.expect.thresholds = vec!["x ~ 3".into()]), "expect.thresholds[0]"));
        assert!(has(&problems_of(|s| s.network[0].max_active_transfers = Some(0)), "network[0].max_active_transfers"));
        assert!(problems_of(|s| s.network[0].max_active_transfers = Some(1)).is_empty());
        assert!(has(
            &problems_of(|s| s.dirac_mut().director.default_submit_pools = vec!["SAM".into()]),
            "dirac.director.default_submit_pools[0]"
        ));
    }

    #[test]
    fn a_stream_no_ce_can_run_is_reported() {
        let p = problems_of(|s| {
            for site in &mut s.sites {
                for ce in &mut site.ces {
                    ce.max_walltime_s = 600.0;
                }
            }
        });
        assert!(p.iter().any(|p| p.path.starts_with("workload[") && p.message.contains("no CE can run")), "{p:?}");
    }

    /// The verdict is the Matcher's: a TQ's CPU time is its segment in whole seconds (1000.6 s
    /// is 1001 s), which a pilot with 1000.8 s left does not match, and one with 1001 s does.
    #[test]
    fn a_stream_is_refused_exactly_when_the_matcher_would_never_match_it() {
        let with_cpu_left = |left: f64| {
            problems_of(|s| {
                s.dirac_mut().task_queues.cpu_segments =
                    Some(crate::dirac::taskqueue::CpuSegments::Custom(vec![1000.6]));
                let margin = s.dirac_mut().job_agent.stop_margin_s;
                for w in &mut s.workload {
                    w.cpu_time = 500.0;
                }
                for ce in s.sites.iter_mut().flat_map(|site| &mut site.ces) {
                    ce.cpu_power = 1.0;
                    ce.max_walltime_s = margin + left;
                }
            })
        };
        let refused = |p: &[Problem]| p.iter().any(|p| p.message.contains("no CE can run"));
        assert!(refused(&with_cpu_left(1000.8)), "{:?}", with_cpu_left(1000.8));
        assert!(!refused(&with_cpu_left(1001.0)), "{:?}", with_cpu_left(1001.0));
    }

    #[test]
    fn both_spellings_of_job_sharing_are_valid_and_others_are_named() {
        let with = |p: &str| problems_of(|s| s.dirac_mut().groups[0].properties = vec![p.to_string()]);
        assert!(with("JOB_SHARING").is_empty() && with("JobSharing").is_empty());
        let bad = with("Job_Sharing");
        assert!(has(&bad, "dirac.groups[0].properties[0]"), "{bad:?}");
        assert!(bad[0].message.contains("JobSharing"), "{}", bad[0].message);
    }

    #[test]
    fn an_in_group_corrector_under_dirac9_is_a_warning() {
        let mut s = quick();
        let d = s.dirac_mut();
        d.share_corrections = ron::from_str(
            "(enabled: true, instances: [(name: \"g\", group: Some(\"lhcb_user\"), slices: [(name: \"w\")])])",
        )
        .unwrap();
        assert!(validate(&s).is_empty());
        assert!(warnings(&s).is_empty(), "the seed's corrector applies it");
        s.dirac_mut().preset = crate::dirac::preset::Preset::Dirac9;
        let w = warnings(&s);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].path, "dirac.share_corrections.instances[0].group");
        assert!(w[0].message.contains("does nothing under DIRAC 9"), "{}", w[0].message);
    }

    #[test]
    fn the_preset_sets_every_option_and_a_written_option_wins() {
        use crate::dirac::matcher::TqOrdering;
        use crate::dirac::priority::EntityRecalculationShares;
        use crate::dirac::taskqueue::{CpuSegments, EmptyTqDeletion};
        let mut s = quick();
        let seed = s.dirac_mut().rules();
        assert_eq!(
            (seed.cpu_segments.clone(), seed.matching.ordering),
            (CpuSegments::Seed2009, TqOrdering::CpuThenRandomPriority)
        );
        assert_eq!((seed.matching.jobs_per_level, seed.max_jobs_in_tq), (10, 0));
        assert_eq!((seed.empty_tq_deletion, seed.int_job_share), (EmptyTqDeletion::AtOnce, false));
        assert!(!seed.sum_identical_definitions);
        assert_eq!(seed.entity_recalculation_shares, EntityRecalculationShares::Configured);
        let d = s.dirac_mut();
        d.preset = crate::dirac::preset::Preset::Dirac9;
        let r = d.rules();
        assert_eq!((r.cpu_segments.clone(), r.matching.ordering), (CpuSegments::Dirac9, TqOrdering::RandomPriority));
        assert_eq!((r.matching.jobs_per_level, r.max_jobs_in_tq), (50, 5000));
        assert_eq!((r.empty_tq_deletion, r.int_job_share), (EmptyTqDeletion::OrphanCleaning, true));
        assert!(r.sum_identical_definitions);
        assert_eq!(r.entity_recalculation_shares, EntityRecalculationShares::ProcessDefault);
        assert_eq!(r.user_priority_weighting, crate::dirac::priority::UserPriorityWeighting::Average);
        assert_eq!(r.corrector_variant, CorrectorVariant::Dirac9);
        d.matcher.ordering = Some(TqOrdering::CpuThenRandomPriority);
        d.task_queues.max_jobs_in_tq = Some(0);
        let r = d.rules();
        assert_eq!(
            (r.matching.ordering, r.max_jobs_in_tq, r.matching.jobs_per_level),
            (TqOrdering::CpuThenRandomPriority, 0, 50)
        );
    }
}
