//! One analysis brokerage cycle for a task's input chunk: candidate generation, the loops
//! with and without data locality, the temporary filters, the weights, the ordering and the
//! top 10 (seed 004, "ATLAS Analysis Job Brokerage"; reference §4, `AtlasAnalJobBroker.py`
//! L57-2405 and `AtlasBrokerUtils.skipProblematicSites` L518-542).
//!
//! Ordering (L2249-2285): PQs the task already uses first (input order), then the others by
//! weight descending, equal weights shuffled; problematic PQs dropped (except a pre-assigned
//! one); the first `maxNumSites` kept (10; all for distributed input; `max(#PQs with data,
//! nSitesPerJob)` for cloning); then `MIN_WEIGHT` and `use_only_local_data` checks. The code's
//! middle tier "PQs of the data-locality list" is dead in 1.0.4 (it tests a `SiteCandidate`
//! object against a set of names, never true) and is not reproduced.
//!
//! No candidate left: the task goes pending and is retried after 20 min (seed: "the task is
//! pending for 20 min"); a pre-assigned PQ failing its checks is fatal (`retFatal`).

use rand::Rng;

use super::filters::{self, Ctx, SiteList};
use super::input::AnalBrokerInput;
use super::params::{AnalBrokerParams, AnalBrokerVariant, BasicWeight};
use super::reason::{Skip, SkipReason};
use super::stabilizer;
use super::weight::{self, NewWeight};
use crate::engine::dist;

/// Seed 004: "If all queues are still skipped, the task is pending for 20 min."
pub const PENDING_RETRY_S: u64 = 1200;
/// `maxNumSites` (L2266).
pub const MAX_NUM_SITES: usize = 10;
/// `task_prio_cutoff_for_input_data_motion` (L492).
pub const PRIORITY_TO_IGNORE_DATA_LOCALITY: i64 = 2000;
/// A task above this priority always gets the loop without locality (L508).
pub const PRIORITY_FOR_SECOND_LOOP: i64 = 1000;

/// The two passes of the filter chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loop {
    WithDataLocality,
    WithoutDataLocality,
}

/// A weighed PQ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weighed {
    pub queue: usize,
    /// The final weight: basic weight × data factor.
    pub weight: f64,
    /// `nRunning` after bootstrapping.
    pub n_running: u64,
    pub original: f64,
    pub new: NewWeight,
    pub data_factor: f64,
}

/// What became of the task.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The site candidates of the chunk, in order (the job splitter draws among them).
    Selected(Vec<Weighed>),
    /// No candidate: `SC_FAILED`, the task is retried after `retry_after_s`.
    Pending { retry_after_s: u64 },
    /// The pre-assigned PQ did not pass (`SC_FATAL`).
    Fatal,
}

/// The result of [`broker()`], with the reasons of every skip.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalBrokerage {
    pub outcome: Outcome,
    /// Which loops ran, in order.
    pub loops: Vec<Loop>,
    /// Every skip, in the order PanDA decides them (a PQ may appear once per loop).
    pub skips: Vec<Skip>,
    /// Every PQ that reached the weights, in candidate order.
    pub weighed: Vec<Weighed>,
}

impl AnalBrokerage {
    /// Why `queue` was skipped (all reasons, every loop).
    pub fn reasons(&self, queue: usize) -> impl Iterator<Item = &Skip> {
        self.skips.iter().filter(move |s| s.queue == queue)
    }
}

/// The loops the task gets (L487-514; Seed: see [`AnalBrokerVariant`]), and whether the
/// suppression conditions hold (`to_ignore_data_loc`).
pub fn loops(p: &AnalBrokerParams, input: &AnalBrokerInput<'_>) -> (Vec<Loop>, bool) {
    let t = input.task;
    if t.n_datasets == 0 {
        return (vec![Loop::WithDataLocality], false);
    }
    let io_cut = p.io_intensity_cutoff_user.filter(|&c| c != 0.0);
    let io = t.io_intensity.filter(|&i| i != 0.0);
    let timeout = p.data_check_timeout_user.filter(|&h| h != 0.0);
    let ignore = t.task_priority >= PRIORITY_TO_IGNORE_DATA_LOCALITY
        || matches!((io_cut, io), (Some(c), Some(i)) if c >= i)
        || matches!((timeout, t.hours_since_last_success), (Some(h), Some(age)) if age > h);
    let v = match p.variant {
        AnalBrokerVariant::Seed if ignore => vec![Loop::WithoutDataLocality],
        AnalBrokerVariant::Seed => vec![Loop::WithDataLocality, Loop::WithoutDataLocality],
        AnalBrokerVariant::PandaServer => {
            let second = t.remote_source_available
                && (ignore
                    || t.task_priority > PRIORITY_FOR_SECOND_LOOP
                    || t.n_real_datasets > 1
                    || t.n_sites_per_job > 0);
            if second { vec![Loop::WithDataLocality, Loop::WithoutDataLocality] } else { vec![Loop::WithDataLocality] }
        }
    };
    (v, ignore)
}

/// How a loop ended.
enum LoopEnd {
    Ok { cands: Vec<usize>, data_weight: Vec<(usize, f64)>, union: bool },
    NoCandidates,
    PreassignedFailed,
}

/// Drops the PQs `f` rejects, recording why; `false` when nothing is left.
fn retain(cands: &mut Vec<usize>, skips: &mut Vec<Skip>, li: usize, f: impl Fn(usize) -> Option<SkipReason>) -> bool {
    cands.retain(|&q| match f(q) {
        Some(reason) => {
            skips.push(Skip { queue: q, loop_index: li, reason });
            false
        }
        None => true,
    });
    !cands.is_empty()
}

/// One pass of the chain (L526-1755). `problems` accumulates over loops, as in the code.
fn run_loop(
    ctx: &Ctx<'_>,
    li: usize,
    second_loop_exists: bool,
    to_ignore: bool,
    skips: &mut Vec<Skip>,
    problems: &mut [Vec<SkipReason>],
) -> LoopEnd {
    let (p, input, t) = (ctx.p, &ctx.input, ctx.input.task);
    let mut cands = filters::initial_candidates(input);
    let mut avoid_vp = t.is_merging || t.distributed_input;
    let (mut data_weight, mut union, mut without_vp) = (Vec::new(), false, Vec::new());
    if ctx.check_locality && t.n_datasets > 0 {
        let loc = filters::data_locality(ctx, &cands);
        let kept = loc.kept.clone();
        if !retain(&mut cands, skips, li, |q| (!kept.contains(&q)).then_some(SkipReason::NoInputData)) {
            return LoopEnd::NoCandidates;
        }
        data_weight = loc.kept.iter().copied().zip(loc.data_weight).collect();
        union = loc.union;
        avoid_vp |= union;
        without_vp = loc.without_vp;
    }
    for check in filters::CHAIN_BEFORE_VP {
        if !retain(&mut cands, skips, li, |q| check(ctx, q)) {
            return LoopEnd::NoCandidates;
        }
    }
    if !retain(&mut cands, skips, li, |q| filters::avoid_vp(ctx, q, avoid_vp)) {
        return LoopEnd::NoCandidates;
    }
    for check in filters::CHAIN_AFTER_VP {
        if !retain(&mut cands, skips, li, |q| check(ctx, q)) {
            return LoopEnd::NoCandidates;
        }
    }
    let (kept, ie_skips) = filters::include_exclude(ctx, &cands);
    skips.extend(ie_skips.into_iter().map(|(queue, reason)| Skip { queue, loop_index: li, reason }));
    cands = kept;
    if cands.is_empty() {
        return LoopEnd::NoCandidates;
    }
    if let Some(pre) = ctx.preassigned {
        if !cands.contains(&pre) {
            return LoopEnd::PreassignedFailed;
        }
        retain(&mut cands, skips, li, |q| (q != pre).then_some(SkipReason::NonPreassigned));
    }
    if cands.iter().any(|&q| !filters::is_hospital(ctx, q))
        && !retain(&mut cands, skips, li, |q| filters::is_hospital(ctx, q).then_some(SkipReason::Hospital))
    {
        return LoopEnd::NoCandidates;
    }
    if ctx.preassigned.is_none()
        && p.variant == AnalBrokerVariant::Seed
        && !retain(&mut cands, skips, li, |q| stabilizer::cap_rt(input.stats(q).resource_type))
    {
        return LoopEnd::NoCandidates;
    }
    if !t.is_merging {
        let grand = stabilizer::grand_ratio(input.gshare_queued_total, input.gshare_running_total);
        let non_vp = |q: usize| without_vp.contains(&q) || !ctx.check_locality || t.n_datasets == 0;
        let verdicts: Vec<(usize, Option<SkipReason>)> =
            cands.iter().map(|&q| (q, stabilizer::overload(p, &input.stats(q), grand, !non_vp(q)))).collect();
        for (q, v) in &verdicts {
            if let (Some(r @ SkipReason::OverloadedNoRunning { .. }), Some(list)) = (v, problems.get_mut(*q)) {
                list.push(*r);
            }
        }
        let ok: Vec<usize> = verdicts.iter().filter(|(_, v)| v.is_none()).map(|(q, _)| *q).collect();
        let fallback = ok.is_empty();
        for (q, v) in &verdicts {
            if let Some(r) = v {
                if !fallback || !non_vp(*q) {
                    skips.push(Skip { queue: *q, loop_index: li, reason: *r });
                }
            }
        }
        cands = if fallback { verdicts.iter().filter(|(q, _)| non_vp(*q)).map(|(q, _)| *q).collect() } else { ok };
        if cands.is_empty() {
            return LoopEnd::NoCandidates;
        }
        for &q in &cands {
            if let Some(list) = problems.get_mut(q) {
                list.extend(stabilizer::problems(p, &input.stats(q)));
            }
        }
    }
    if p.variant == AnalBrokerVariant::PandaServer
        && second_loop_exists
        && li == 0
        && to_ignore
        && cands.iter().all(|&q| problems.get(q).is_some_and(|l| !l.is_empty()))
    {
        skips.extend(cands.iter().map(|&queue| Skip { queue, loop_index: li, reason: SkipReason::TmpUserProblem }));
        return LoopEnd::NoCandidates;
    }
    LoopEnd::Ok { cands, data_weight, union }
}

/// Analysis job brokerage of one input chunk (`AtlasAnalJobBroker.doBrokerage` after the
/// throttles of [`super::throttle()`]). `rng` shuffles PQs of equal weight.
pub fn broker<R: Rng + ?Sized>(params: &AnalBrokerParams, input: &AnalBrokerInput<'_>, rng: &mut R) -> AnalBrokerage {
    let p = params.sane();
    let t = input.task;
    let n_queues = input.queues.len();
    let preassigned = t.preassigned.filter(|&q| q < n_queues);
    let include = t.included_sites.as_ref().map(|l| SiteList::new(l));
    let exclude = SiteList::new(&t.excluded_sites);
    let (plan, to_ignore) = loops(&p, input);
    let (mut skips, mut problems) = (Vec::new(), vec![Vec::new(); n_queues]);
    let mut ran = Vec::new();
    let mut overall: Vec<usize> = Vec::new();
    let mut with_data: Option<usize> = None;
    let mut failure: Option<Outcome> = None;
    let mut last = (false, false, Vec::new());
    for (li, &lp) in plan.iter().enumerate() {
        ran.push(lp);
        let check_locality = lp == Loop::WithDataLocality;
        let ctx = Ctx {
            p: &p,
            input: *input,
            check_locality,
            preassigned,
            include: include.clone(),
            exclude: exclude.clone(),
        };
        match run_loop(&ctx, li, plan.len() > 1, to_ignore, &mut skips, &mut problems) {
            LoopEnd::NoCandidates => failure = Some(Outcome::Pending { retry_after_s: PENDING_RETRY_S }),
            LoopEnd::PreassignedFailed => failure = Some(Outcome::Fatal),
            LoopEnd::Ok { cands, data_weight, union } => {
                for q in cands.iter().copied() {
                    if !overall.contains(&q) {
                        overall.push(q);
                    }
                }
                with_data.get_or_insert(cands.len());
                last = (check_locality, union, data_weight);
                if overall.len() >= t.n_sites_per_job as usize {
                    failure = None;
                    break;
                }
            }
        }
    }
    let done = |outcome, weighed| AnalBrokerage { outcome, loops: ran.clone(), skips: skips.clone(), weighed };
    if let Some(f) = failure {
        return done(f, Vec::new());
    }
    let weighed = weigh(&p, input, &overall, &last);
    let li = ran.len().saturating_sub(1);
    let selected = select(&p, input, &weighed, &problems, preassigned, with_data.unwrap_or(0), li, &mut skips, rng);
    let outcome = if selected.is_empty() {
        Outcome::Pending { retry_after_s: PENDING_RETRY_S }
    } else {
        Outcome::Selected(selected)
    };
    AnalBrokerage { outcome, loops: ran, skips, weighed }
}

/// The weights of the PQs that passed (L1841-2238).
fn weigh(
    p: &AnalBrokerParams,
    input: &AnalBrokerInput<'_>,
    cands: &[usize],
    last: &(bool, bool, Vec<(usize, f64)>),
) -> Vec<Weighed> {
    let t = input.task;
    let rows: Vec<_> = cands.iter().map(|&q| input.stats(q)).collect();
    let news = weight::new_weights(p, &t.gshare, t.task_class, t.n_jobs_to_submit, t.is_merging, &rows);
    let (check_locality, union, data_weight) = last;
    cands
        .iter()
        .zip(rows.iter().zip(news))
        .filter_map(|(&q, (s, new))| {
            let queue = input.queues.get(q)?;
            let n_running = weight::effective_running(queue, s);
            let original = weight::original_weight(n_running, s);
            let basic = match p.basic_weight() {
                BasicWeight::Original => original,
                BasicWeight::New => new.weight,
            };
            let data_factor = if *check_locality && !union {
                data_weight.iter().find(|(x, _)| *x == q).map_or(1.0, |d| d.1)
            } else {
                weight::data_factor_without_locality(t.total_input_bytes, s.local_disk_bytes)
            };
            Some(Weighed { queue: q, weight: basic * data_factor, n_running, original, new, data_factor })
        })
        .collect()
}

/// Ordering, problematic PQs, top `maxNumSites`, and the final checks (L2238-2405).
#[allow(clippy::too_many_arguments)]
fn select<R: Rng + ?Sized>(
    p: &AnalBrokerParams,
    input: &AnalBrokerInput<'_>,
    weighed: &[Weighed],
    problems: &[Vec<SkipReason>],
    preassigned: Option<usize>,
    n_with_data: usize,
    li: usize,
    skips: &mut Vec<Skip>,
    rng: &mut R,
) -> Vec<Weighed> {
    let t = input.task;
    let used = |w: &Weighed| input.stats(w.queue).used_by_task;
    let mut ordered: Vec<Weighed> = weighed.iter().copied().filter(used).collect();
    let mut rest: Vec<Weighed> = weighed.iter().copied().filter(|w| !used(w)).collect();
    rest.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    let mut start = 0;
    while start < rest.len() {
        let w = rest[start].weight;
        let end =
            rest[start..].iter().position(|x| x.weight.to_bits() != w.to_bits()).map_or(rest.len(), |n| start + n);
        dist::shuffle(rng, &mut rest[start..end]);
        start = end;
    }
    ordered.extend(rest);
    let max_sites = if t.distributed_input {
        usize::MAX
    } else if t.n_sites_per_job > 1 {
        n_with_data.max(t.n_sites_per_job as usize)
    } else {
        MAX_NUM_SITES
    };
    let mut good = Vec::new();
    for w in &ordered {
        let bad = problems.get(w.queue).filter(|l| !l.is_empty() && Some(w.queue) != preassigned);
        match bad {
            Some(list) => skips.extend(list.iter().map(|&reason| Skip { queue: w.queue, loop_index: li, reason })),
            None if good.len() < max_sites => good.push(*w),
            None => {
                skips.push(Skip { queue: w.queue, loop_index: li, reason: SkipReason::LowWeight { weight: w.weight } })
            }
        }
    }
    if let Some(pre) = preassigned {
        if !good.iter().any(|w| w.queue == pre) {
            good.extend(ordered.iter().copied().find(|w| w.queue == pre));
        }
    }
    let min_weight = p.min_weight(&t.prod_source_label, &t.gshare);
    let mut out = Vec::new();
    for w in good {
        let q = input.queues.get(w.queue);
        let reason = if preassigned.is_some_and(|pre| pre != w.queue) {
            Some(SkipReason::NonPreassigned)
        } else if min_weight > 0.0 && w.weight < min_weight {
            Some(SkipReason::BelowMinWeight { weight: w.weight, min_weight })
        } else if t.n_datasets > 0
            && !t.distributed_input
            && q.is_some_and(|x| x.use_only_local_data)
            && !input.stats(w.queue).has_all_input_files
        {
            Some(SkipReason::FileUnavailable)
        } else {
            None
        };
        match reason {
            Some(reason) => skips.push(Skip { queue: w.queue, loop_index: li, reason }),
            None => out.push(w),
        }
    }
    out
}
