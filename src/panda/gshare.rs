//! PanDA's global shares (reference `panda.md` §7; seed 004 names gshares only as a key of
//! gdpconfig parameters and of the job counts, so the real code is the model here).
//!
//! * **Normalisation** (`GlobalShares.Share.normalize`, GlobalShares.py L126-143): under a
//!   dummy root of 100, every child's value becomes `parent% × value / Σ sibling values`, so a
//!   leaf's percentage of the whole is the product of its ancestors' fractions × 100 and the
//!   leaves sum to 100 whatever the raw values sum to.
//! * **Targets** (`__get_hs_leave_distribution`, entity_module L59-123): `executing` is the
//!   HS06 of sent+running jobs, `queued` of activated ones; `pledged(leaf) = E × leaf% / 100`
//!   with `E` the executing total over *every* gshare in the statistics; inner nodes carry the
//!   sums of their children (`aggregate_hs_distribution`).
//! * **Order** (`sort_branch_by_current_hs_distribution`, L145-190): siblings by
//!   `executing / pledged` ascending (pledged 0 → 10⁶), depth first → the leaves, most
//!   under-pledged first.
//! * **Dispatch** (`getSortingCriteria`, entity_module L807-826): with probability
//!   `SLOPPY_DISPATCH_RATIO` % activated jobs go by age (PandaID), else by sorted-leaf rank
//!   (share `Test` rank 0, unknown shares last), then `currentPriority` desc, then PandaID.
//! * **Throttle** (`JobThrottlerBase.toBeThrottledBase`, L235-497): `threshold =
//!   THROTTLE_THRESHOLD` (2.0), `nJobsInBunch = clamp(int(nRun×threshold − nNotRun), 500,
//!   600)`, `nQueueLimit = NQUEUELIMIT_<share>` or `4 × nJobsInBunch`; see [`throttle`].
//!
//! Everything is pure and deterministic: inputs are slices and `BTreeMap`s, sorts are stable,
//! ties keep tree order (the order the shares are given in, as PanDA keeps DB order). Non-finite
//! or negative numbers are read as 0 (PanDA would crash or propagate NaN), so no input panics.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The under-pledge ratio PanDA gives a share with nothing pledged (GlobalShares.py L160).
pub const NO_PLEDGE_RATIO: f64 = 1.0e6;

/// The share PanDA dispatches first whatever its usage (entity_module, `getCriteriaForGlobalShares`).
pub const TEST_SHARE: &str = "Test";

/// A node of the share tree (`ATLAS_PANDA.GLOBAL_SHARES`: name, value, parent, throttled).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShareNode {
    /// Unique over the tree (PanDA keys every statistic by name).
    pub name: String,
    /// Raw value, a percentage of the parent; siblings need not sum to 100 (normalised).
    pub value: f64,
    /// `GLOBAL_SHARES.THROTTLED`: `false` exempts the share from the JEDI throttle (§7).
    #[serde(default = "yes")]
    pub throttled: bool,
    #[serde(default)]
    pub children: Vec<ShareNode>,
}

fn yes() -> bool {
    true
}

impl ShareNode {
    /// A leaf share.
    pub fn leaf(name: &str, value: f64) -> Self {
        Self { name: name.to_string(), value, throttled: true, children: Vec::new() }
    }

    /// An inner share.
    pub fn branch(name: &str, value: f64, children: Vec<ShareNode>) -> Self {
        Self { name: name.to_string(), value, throttled: true, children }
    }
}

/// A leaf with its normalised percentage of the whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Leaf {
    pub name: String,
    /// Percentage of all resources (leaves sum to 100 unless a level had only zero values).
    pub percent: f64,
    pub throttled: bool,
}

/// Negative, NaN and infinite values read as 0.
fn clean(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 { x } else { 0.0 }
}

/// The normalised values of `nodes` under a parent of `parent_percent` (`Share.normalize`).
/// Siblings whose values sum to 0 all get 0 (PanDA raises `ZeroDivisionError` and keeps the
/// previous tree).
fn normalised(nodes: &[ShareNode], parent_percent: f64) -> Vec<f64> {
    let sum: f64 = nodes.iter().map(|n| clean(n.value)).sum();
    nodes.iter().map(|n| if sum > 0.0 { clean(parent_percent * clean(n.value) / sum) } else { 0.0 }).collect()
}

/// The leaves of the tree `roots` (the top-level shares, children of the dummy root of 100)
/// in depth-first tree order, each with its percentage of the whole (`normalize` then
/// `get_leaves`). An empty tree has no leaves.
pub fn leaves(roots: &[ShareNode]) -> Vec<Leaf> {
    fn walk(nodes: &[ShareNode], parent: f64, out: &mut Vec<Leaf>) {
        for (node, pct) in nodes.iter().zip(normalised(nodes, parent)) {
            if node.children.is_empty() {
                out.push(Leaf { name: node.name.clone(), percent: pct, throttled: node.throttled });
            } else {
                walk(&node.children, pct, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(roots, 100.0, &mut out);
    out
}

/// What a world counts per gshare (HS06, or jobs if every job weighs the same).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    /// Sent + running.
    pub executing: f64,
    /// Activated.
    pub queued: f64,
}

/// A share's line of the distribution (`getGShareStatus`: running, target, queuing).
#[derive(Debug, Clone, PartialEq)]
pub struct ShareStatus {
    pub name: String,
    /// Normalised percentage of the whole (for an inner share, the sum of its leaves').
    pub percent: f64,
    pub executing: f64,
    pub queued: f64,
    /// `E × percent / 100`, `E` the executing total of every entry of the usage map.
    pub pledged: f64,
    /// `executing / pledged`, or [`NO_PLEDGE_RATIO`] when pledged is 0.
    pub ratio: f64,
}

/// `executing / pledged` with PanDA's 10⁶ for nothing pledged.
pub fn under_pledge_ratio(executing: f64, pledged: f64) -> f64 {
    let (e, p) = (clean(executing), clean(pledged));
    if p > 0.0 { clean(e / p) } else { NO_PLEDGE_RATIO }
}

/// The leaves most under-pledged first (`sort_branch_by_current_hs_distribution` over the
/// distribution of `__get_hs_leave_distribution` + `aggregate_hs_distribution`).
///
/// `usage` is keyed by gshare name; leaves absent from it have nothing executing or queued,
/// and entries that are not leaves (jobs of an unknown share) still count in the executing
/// total `E`. At every level the children are ordered by their (aggregated) ratio,
/// ascending; equal ratios keep tree order (PanDA's insertion before the first *strictly*
/// greater ratio is a stable sort).
pub fn sorted_leaves(roots: &[ShareNode], usage: &BTreeMap<String, Usage>) -> Vec<ShareStatus> {
    let total: f64 = usage.values().map(|u| clean(u.executing)).sum();
    /// The subtree's leaves in sorted order and its aggregate line.
    fn walk(
        node: &ShareNode,
        pct: f64,
        total: f64,
        usage: &BTreeMap<String, Usage>,
    ) -> (ShareStatus, Vec<ShareStatus>) {
        if node.children.is_empty() {
            let u = usage.get(&node.name).copied().unwrap_or_default();
            let pledged = clean(total * pct / 100.0);
            let executing = clean(u.executing);
            let status = ShareStatus {
                name: node.name.clone(),
                percent: pct,
                executing,
                queued: clean(u.queued),
                pledged,
                ratio: under_pledge_ratio(executing, pledged),
            };
            return (status.clone(), vec![status]);
        }
        let mut kids: Vec<(ShareStatus, Vec<ShareStatus>)> =
            node.children.iter().zip(normalised(&node.children, pct)).map(|(c, p)| walk(c, p, total, usage)).collect();
        kids.sort_by(|a, b| a.0.ratio.total_cmp(&b.0.ratio));
        let sum = |f: fn(&ShareStatus) -> f64| kids.iter().map(|k| f(&k.0)).sum::<f64>();
        let (executing, pledged) = (sum(|s| s.executing), sum(|s| s.pledged));
        let status = ShareStatus {
            name: node.name.clone(),
            percent: sum(|s| s.percent),
            executing,
            queued: sum(|s| s.queued),
            pledged,
            ratio: under_pledge_ratio(executing, pledged),
        };
        (status, kids.into_iter().flat_map(|k| k.1).collect())
    }
    if roots.is_empty() {
        return Vec::new();
    }
    let root = ShareNode::branch("root", 100.0, roots.to_vec());
    walk(&root, 100.0, total, usage).1
}

/// How `SLOPPY_DISPATCH_RATIO` is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum SloppyRule {
    /// The documented meaning (gdpconfig.rst: "ratio (%) of jobs to dispatch without
    /// considering gshare"): by age iff `draw < ratio`, so exactly `ratio` %.
    #[default]
    Documented,
    /// panda-server as written: `randrange(100) <= ratio` (ratio + 1 %, 11 % by default) and
    /// a ratio of 0 read as unset, hence 10 (`if not sloppy_ratio`).
    PandaServer,
}

/// The `jobdispatch` gdpconfig keys of dispatch (reference §7).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DispatchSettings {
    /// `SLOPPY_DISPATCH_RATIO`, percent of dispatches by age; default 10 (entity_module L815).
    pub sloppy_dispatch_ratio: u32,
    pub sloppy_rule: SloppyRule,
}

impl Default for DispatchSettings {
    fn default() -> Self {
        Self { sloppy_dispatch_ratio: 10, sloppy_rule: SloppyRule::Documented }
    }
}

/// How one dispatch orders the activated jobs of a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DispatchOrder {
    /// `getCriteriaByAge`: PandaID ascending.
    Age,
    /// `getCriteriaForGlobalShares`: share rank, then priority desc, then PandaID.
    GlobalShares,
}

/// The order of one dispatch given `draw`, a uniform integer in `0..100` the caller takes
/// from its stream (PanDA's `random.randrange(100)`).
pub fn dispatch_order(settings: &DispatchSettings, draw: u32) -> DispatchOrder {
    let by_age = match settings.sloppy_rule {
        SloppyRule::Documented => draw < settings.sloppy_dispatch_ratio,
        SloppyRule::PandaServer => {
            let ratio = if settings.sloppy_dispatch_ratio == 0 { 10 } else { settings.sloppy_dispatch_ratio };
            draw <= ratio
        }
    };
    if by_age { DispatchOrder::Age } else { DispatchOrder::GlobalShares }
}

/// Dispatch ranks by gshare name from [`sorted_leaves`]: the position, `Test` 0.
pub fn share_ranks(sorted: &[ShareStatus]) -> BTreeMap<String, usize> {
    let mut ranks = BTreeMap::new();
    for (i, s) in sorted.iter().enumerate() {
        let rank = if s.name == TEST_SHARE { 0 } else { i };
        ranks.entry(s.name.clone()).or_insert(rank);
    }
    ranks
}

/// The rank of a job's gshare: its entry, or `ranks.len()` for a share that is no leaf
/// (`ELSE len(sorted_leaves)`, e.g. `Undefined`).
pub fn share_rank(ranks: &BTreeMap<String, usize>, gshare: &str) -> usize {
    ranks.get(gshare).copied().unwrap_or(ranks.len())
}

/// An activated job as dispatch sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    pub panda_id: u64,
    pub current_priority: i64,
    /// From [`share_rank`].
    pub share_rank: usize,
}

/// Sorts `jobs` best first in `order`. Keys are total (PandaIDs are unique), so the result
/// depends on the set of jobs only.
pub fn sort_candidates(jobs: &mut [Candidate], order: DispatchOrder) {
    match order {
        DispatchOrder::Age => jobs.sort_by_key(|j| j.panda_id),
        DispatchOrder::GlobalShares => {
            jobs.sort_by_key(|j| (j.share_rank, std::cmp::Reverse(j.current_priority), j.panda_id))
        }
    }
}

/// The `jedi` throttle gdpconfig keys (component `jobthrottle`, reference §7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ThrottleSettings {
    /// `THROTTLE_THRESHOLD`, max nQueued/nRunning; 2.0 when unset (JobThrottlerBase L243).
    pub throttle_threshold: f64,
    /// `THROTTLE_THRESHOLD_FOR_WORK_SHORTAGE`, used instead when `work_shortage`; unset → 2.0.
    pub throttle_threshold_for_work_shortage: Option<f64>,
    /// `WORK_SHORTAGE` (component `core`); false when unset.
    pub work_shortage: bool,
    /// `NQUEUELIMIT_<share>` by share name; absent → `4 × nJobsInBunch`.
    pub nqueuelimit: BTreeMap<String, u64>,
    /// `NRUNNINGCAP_<share>`: running above it → skip; absent or 0 → no cap.
    pub nrunningcap: BTreeMap<String, u64>,
    /// `NQUEUECAP_<share>`: queued+defined above it → skip; absent or 0 → no cap.
    pub nqueuecap: BTreeMap<String, u64>,
}

impl Default for ThrottleSettings {
    fn default() -> Self {
        Self {
            throttle_threshold: 2.0,
            throttle_threshold_for_work_shortage: None,
            work_shortage: false,
            nqueuelimit: BTreeMap::new(),
            nrunningcap: BTreeMap::new(),
            nqueuecap: BTreeMap::new(),
        }
    }
}

/// Constants of `toBeThrottledBase` (L239-251); `max_num_jobs` divides by nParallel 2 or,
/// with a queue cap, nParallelCap 5.
pub const N_JOBS_IN_BUNCH_MIN: i64 = 500;
pub const N_JOBS_IN_BUNCH_MAX: i64 = 600;
pub const N_BUNCH: i64 = 4;
pub const N_WAITING_LIMIT: u64 = 4;
pub const N_WAITING_BUNCH_LIMIT: i64 = 2;
/// Seconds of walltime queued below which an idle share is not throttled (50·10⁶).
pub const MIN_TOTAL_WALLTIME: f64 = 50.0e6;

/// The job counts of one gshare × resource type (`__prepareJobStats`), as the world counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThrottleInput {
    /// Running (+starting) jobs.
    pub n_running: u64,
    /// Not-yet-running jobs in the PanDA DB (assigned, activated, …).
    pub n_not_run: u64,
    /// Defined jobs.
    pub n_defined: u64,
    /// Waiting jobs.
    pub n_waiting: u64,
    /// Total walltime of the queued jobs (s); `None` as PanDA's unknown (counts as enough).
    pub total_walltime: Option<f64>,
    /// A waiting task has higher priority than anything in the DB (`highPrioQueued`).
    pub high_prio_queued: bool,
}

/// Why generation is limited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThrottleReason {
    NothingRunning,
    QueueRatio,
    TooManyDefined,
    TooManyWaiting,
    RunningCap,
    QueueCap,
}

/// The throttle's verdict for a gshare (`retUnThrottled` / `retMergeUnThr` + min priority).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ThrottleVerdict {
    /// Generate, at most `max_num_jobs`; `not_enough_queued` raises it (`notEnoughJobsQueued`).
    Pass { max_num_jobs: i64, not_enough_queued: bool },
    /// Generate only jobs of the waiting high-priority tasks (`setMinPriority`).
    PriorityFloor(ThrottleReason),
    /// No generation this cycle.
    Skip(ThrottleReason),
}

/// The outcome with the derived limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThrottleDecision {
    pub verdict: ThrottleVerdict,
    pub threshold: f64,
    pub n_jobs_in_bunch: i64,
    pub n_queue_limit: i64,
}

/// `toBeThrottledBase` for one gshare at resource-type level (L235-497): with
/// `nQueued = nNotRun + nDefined`, the first of these that holds limits generation —
/// nRun = 0 ∧ nQueued > limit ∧ walltime > 50·10⁶ s; nQueued/nRun > threshold ∧ nQueued >
/// limit ∧ walltime > 50·10⁶ s; nDefined > limit; nWaiting > max(4·nRun, 2·nJobsInBunch);
/// nRun > NRUNNINGCAP (always a skip); nQueued > NQUEUECAP. A limit is a skip unless
/// `high_prio_queued`, then a priority floor. Shares with `throttled = false` always pass.
/// Not modelled: the `non_rt_wqs` (gshare-level) variant, `_rt`/`_MCORE` key levels, the
/// reprocessing prestage bunch.
pub fn throttle(settings: &ThrottleSettings, share: &str, throttled: bool, input: &ThrottleInput) -> ThrottleDecision {
    let chosen = if settings.work_shortage {
        settings.throttle_threshold_for_work_shortage.unwrap_or(2.0)
    } else {
        settings.throttle_threshold
    };
    let threshold = if chosen.is_finite() && chosen >= 0.0 { chosen } else { 2.0 };
    let (n_run, n_queued) = (input.n_running, input.n_not_run.saturating_add(input.n_defined));
    let remaining = n_run as f64 * threshold - input.n_not_run as f64;
    // `int()` truncates toward 0; `as` saturates, and the clamp bounds it anyway.
    let n_jobs_in_bunch = (remaining.trunc() as i64).clamp(N_JOBS_IN_BUNCH_MIN, N_JOBS_IN_BUNCH_MAX);
    let n_queue_limit =
        settings.nqueuelimit.get(share).map_or(n_jobs_in_bunch * N_BUNCH, |&l| l.min(i64::MAX as u64) as i64);
    let max_num_jobs = match settings.nqueuecap.get(share) {
        Some(&cap) => (cap / 5).min(i64::MAX as u64) as i64,
        _ => n_jobs_in_bunch / 2,
    };
    let decision = |verdict| ThrottleDecision { verdict, threshold, n_jobs_in_bunch, n_queue_limit };
    if !throttled {
        return decision(ThrottleVerdict::Pass { max_num_jobs, not_enough_queued: false });
    }
    let queued_over = n_queued as i128 > n_queue_limit as i128;
    let walltime_enough = input.total_walltime.is_none_or(|w| w > MIN_TOTAL_WALLTIME);
    let waiting_limit =
        (n_run.saturating_mul(N_WAITING_LIMIT) as i128).max((n_jobs_in_bunch * N_WAITING_BUNCH_LIMIT) as i128);
    let cap = |m: &BTreeMap<String, u64>| m.get(share).copied().filter(|&c| c > 0);
    let reason = if n_run == 0 && queued_over && walltime_enough {
        Some(ThrottleReason::NothingRunning)
    } else if n_run != 0 && n_queued as f64 / n_run as f64 > threshold && queued_over && walltime_enough {
        Some(ThrottleReason::QueueRatio)
    } else if input.n_defined as i128 > n_queue_limit as i128 {
        Some(ThrottleReason::TooManyDefined)
    } else if input.n_waiting as i128 > waiting_limit {
        Some(ThrottleReason::TooManyWaiting)
    } else if cap(&settings.nrunningcap).is_some_and(|c| n_run > c) {
        return decision(ThrottleVerdict::Skip(ThrottleReason::RunningCap));
    } else if cap(&settings.nqueuecap).is_some_and(|c| n_queued > c) {
        Some(ThrottleReason::QueueCap)
    } else {
        None
    };
    match reason {
        Some(r) if input.high_prio_queued => decision(ThrottleVerdict::PriorityFloor(r)),
        Some(r) => decision(ThrottleVerdict::Skip(r)),
        None => {
            let not_enough = (n_queued as f64) < n_queue_limit as f64 * 0.9 || n_queued < n_run;
            let max_num_jobs = if not_enough { max_num_jobs.max(n_queue_limit / 20) } else { max_num_jobs };
            decision(ThrottleVerdict::Pass { max_num_jobs, not_enough_queued: not_enough })
        }
    }
}

#[cfg(test)]
mod tests;
