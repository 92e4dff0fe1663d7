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
//!   600)`, `nQueueLimit = NQUEUELIMIT_<wq>_<rt>`, `_<MCORE|SCORE>*` or `_<wq>` (first non-zero,
//!   with the job counts of that level) or `4 × nJobsInBunch`; see [`throttle`].
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
    /// The nested gshares below this one (`GLOBAL_SHARES.PARENT` names this share), whose values
    /// share this one's percentage (reference panda.md §7); empty (default): a leaf, which tasks
    /// may name.
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
        let kids = children(&node.children, pct, total, usage);
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
    /// The walks of `nodes`, the children of a share of `pct`, sorted by their ratio.
    fn children(
        nodes: &[ShareNode],
        pct: f64,
        total: f64,
        usage: &BTreeMap<String, Usage>,
    ) -> Vec<(ShareStatus, Vec<ShareStatus>)> {
        let mut kids: Vec<(ShareStatus, Vec<ShareStatus>)> =
            nodes.iter().zip(normalised(nodes, pct)).map(|(c, p)| walk(c, p, total, usage)).collect();
        kids.sort_by(|a, b| a.0.ratio.total_cmp(&b.0.ratio));
        kids
    }
    // The roots are the children of a 100 % root, whose own line is not wanted.
    children(roots, 100.0, total, usage).into_iter().flat_map(|k| k.1).collect()
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
    /// How `sloppy_dispatch_ratio` is read: `Documented` (default, gdpconfig.rst), exactly that
    /// percent of dispatches by age, or `PandaServer`, as panda-server's `getSortingCriteria`
    /// does it (`randrange(100) <= ratio`: one percent more, and 0 read as 10).
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

/// The throttle gdpconfig keys (app `jedi`, component `prod_job_throttler` of
/// `AtlasProdJobThrottler`; `anal_job_throttler` reads the same keys for analysis; reference §7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ThrottleSettings {
    /// `THROTTLE_THRESHOLD`, max nQueued/nRunning; 2.0 when unset (JobThrottlerBase L243).
    pub throttle_threshold: f64,
    /// `THROTTLE_THRESHOLD_FOR_WORK_SHORTAGE`, used instead when `work_shortage`; unset → 2.0.
    pub throttle_threshold_for_work_shortage: Option<f64>,
    /// `WORK_SHORTAGE` (component `core`); false when unset.
    pub work_shortage: bool,
    /// `NQUEUELIMIT_<suffix>` by suffix (`<wq>_<rt>`, `<wq>_<MCORE|SCORE>*` or `<wq>`, see
    /// [`configured`]); absent or 0 → `4 × nJobsInBunch`.
    pub nqueuelimit: BTreeMap<String, u64>,
    /// `NRUNNINGCAP_<suffix>` (levels as `nqueuelimit`): running above it → skip; absent or 0 → no cap.
    pub nrunningcap: BTreeMap<String, u64>,
    /// `NQUEUECAP_<suffix>` (levels as `nqueuelimit`): queued+defined above it → skip; absent or 0 → no cap.
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

/// Job counts at one level of `__prepareJobStats`: running (+ standby), not-run (assigned,
/// activated, starting) and defined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LevelCounts {
    pub n_running: u64,
    pub n_not_run: u64,
    pub n_defined: u64,
}

/// The job counts of one gshare (work queue) × resource type (`__prepareJobStats`), as the world
/// counts them: the resource-type level in the flat fields, the MCORE/SCORE and global-share
/// levels beside (`None` = the same as the resource-type level, as in a world with one
/// resource type).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThrottleInput {
    /// Running (+starting) jobs of the resource type (`nRunning_rt`).
    pub n_running: u64,
    /// Not-yet-running jobs in the PanDA DB (assigned, activated, starting; `nNotRun_rt`).
    pub n_not_run: u64,
    /// Defined jobs (`nDefine_rt`).
    pub n_defined: u64,
    /// Waiting jobs (`nWaiting_rt`).
    pub n_waiting: u64,
    /// Counts over the resource types of the same MCORE/SCORE family (`_ms`).
    pub ms: Option<LevelCounts>,
    /// Counts over the whole global share (`_gs`).
    pub gs: Option<LevelCounts>,
    /// Total walltime of the queued jobs (s); `None` as PanDA's unknown (counts as enough).
    pub total_walltime: Option<f64>,
    /// A waiting task has higher priority than anything in the DB (`highPrioQueued`; always
    /// false for `prodSourceLabel` user).
    pub high_prio_queued: bool,
}

impl ThrottleInput {
    fn rt(&self) -> LevelCounts {
        LevelCounts { n_running: self.n_running, n_not_run: self.n_not_run, n_defined: self.n_defined }
    }

    /// The counts at the level a limit was configured at (`nNotRun_queuelimit` …): global share,
    /// MCORE/SCORE, else the resource type.
    fn at(&self, level: Option<ConfigLevel>) -> LevelCounts {
        match level {
            Some(ConfigLevel::GlobalShare) => self.gs.unwrap_or(self.rt()),
            Some(ConfigLevel::McoreScore) => self.ms.unwrap_or(self.rt()),
            _ => self.rt(),
        }
    }
}

/// What the throttle is evaluated for: the work queue (gshare) name as PanDA spells it in the
/// keys, and the resource type (`SCORE`, `MCORE_HIMEM`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThrottleKey<'a> {
    pub work_queue: &'a str,
    pub resource_type: &'a str,
}

/// The level at which `NQUEUELIMIT`/`NRUNNINGCAP`/`NQUEUECAP` was found (`__getConfiguration`,
/// `LEVEL_RT`/`LEVEL_MS`/`LEVEL_GS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigLevel {
    /// `<TAG>_<work queue>_<resource type>`.
    ResourceType,
    /// `<TAG>_<work queue>_<MCORE|SCORE>*` (literally with the `*`; `None*` for other types).
    McoreScore,
    /// `<TAG>_<work queue>`.
    GlobalShare,
}

/// `__getConfiguration` for one tag: the first non-zero value of the resource-type,
/// MCORE/SCORE and work-queue keys (`if value:` — 0 counts as unset). `map` is keyed by the
/// suffix after `<TAG>_`.
pub fn configured(map: &BTreeMap<String, u64>, key: &ThrottleKey) -> Option<(u64, ConfigLevel)> {
    let rt = key.resource_type;
    let ms = if rt.starts_with("MCORE") {
        "MCORE"
    } else if rt.starts_with("SCORE") {
        "SCORE"
    } else {
        "None"
    };
    let wq = key.work_queue;
    if map.is_empty() {
        return None; // the usual case: nothing configured, no key to build
    }
    let value = |k: &str, level| map.get(k).copied().filter(|&v| v != 0).map(|v| (v, level));
    value(&format!("{wq}_{rt}"), ConfigLevel::ResourceType)
        .or_else(|| value(&format!("{wq}_{ms}*"), ConfigLevel::McoreScore))
        .or_else(|| value(wq, ConfigLevel::GlobalShare))
}

/// Work queues evaluated at global-share level (`non_rt_wqs`): event service, whose MCORE tasks
/// make SCORE jobs.
pub const NON_RT_WORK_QUEUES: &[&str] = &["eventservice"];
/// Work queues whose bunch grows to fill the queue limit (`nPrestage`, L325-331).
pub const PRESTAGE_WORK_QUEUES: &[&str] = &["Heavy Ion", "Reprocessing default"];

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
///
/// `max_num_jobs` is what this call sets with `setMaxNumJobs`; `None` when it sets nothing (a
/// share with `throttled = false` returns before). PanDA's throttler object lives for a whole
/// JobGenerator cycle and `refresh()` runs only in its constructor, so in PanDA a call that
/// sets nothing leaves the previous call's `maxNumJobs` (and `minPriority`) in place; a
/// caller that wants that quirk carries the previous values over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ThrottleVerdict {
    /// Generate, at most `max_num_jobs`; `not_enough_queued` raises it (`notEnoughJobsQueued`).
    Pass { max_num_jobs: Option<i64>, not_enough_queued: bool },
    /// Generate only jobs of the waiting high-priority tasks (`setMinPriority`), at most
    /// `max_num_jobs` (set before the checks).
    PriorityFloor { reason: ThrottleReason, max_num_jobs: i64 },
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
    /// Where `NQUEUELIMIT` came from (`None`: the default `4 × nJobsInBunch`).
    pub queue_limit_level: Option<ConfigLevel>,
}

fn as_i64(v: u64) -> i64 {
    v.min(i64::MAX as u64) as i64
}

/// `toBeThrottledBase` for one work queue × resource type (L235-497). With `_ql` the counts at
/// the level `NQUEUELIMIT` was configured at ([`configured`]) and `base` the resource-type
/// counts (global-share counts for [`NON_RT_WORK_QUEUES`]), the first of these that holds
/// limits generation —
/// base nRun = 0 ∧ nQueued_ql > limit (∧ walltime > 50·10⁶ s unless non-rt);
/// base nQueued/nRun > threshold ∧ nQueued_ql > limit (∧ walltime …);
/// nDefined_ql > limit; nWaiting_rt > max(4·nRun_rt, 2·nJobsInBunch);
/// nRunning at `NRUNNINGCAP`'s level > it (always a skip); nQueued at `NQUEUECAP`'s level > it.
/// A limit is a skip unless `high_prio_queued`, then a priority floor. Shares with
/// `throttled = false` always pass. `nQueueLimit / 20` is Python's true division in the code;
/// here it is floored (a job count).
pub fn throttle(
    settings: &ThrottleSettings,
    key: &ThrottleKey,
    throttled: bool,
    input: &ThrottleInput,
) -> ThrottleDecision {
    let chosen = if settings.work_shortage {
        settings.throttle_threshold_for_work_shortage.unwrap_or(2.0)
    } else {
        settings.throttle_threshold
    };
    let threshold = if chosen.is_finite() && chosen >= 0.0 { chosen } else { 2.0 };
    let non_rt = NON_RT_WORK_QUEUES.contains(&key.work_queue);
    let rt = input.rt();
    let base = if non_rt { input.at(Some(ConfigLevel::GlobalShare)) } else { rt };
    let queued = |c: LevelCounts| c.n_not_run.saturating_add(c.n_defined);
    let remaining = base.n_running as f64 * threshold - base.n_not_run as f64;
    // `int()` truncates toward 0; `as` saturates, and the clamp bounds it anyway.
    let mut n_jobs_in_bunch = (remaining.trunc() as i64).clamp(N_JOBS_IN_BUNCH_MIN, N_JOBS_IN_BUNCH_MAX);
    let queue_limit = configured(&settings.nqueuelimit, key);
    let running_cap = configured(&settings.nrunningcap, key);
    let queue_cap = configured(&settings.nqueuecap, key);
    let n_queue_limit = queue_limit.map_or(n_jobs_in_bunch * N_BUNCH, |(v, _)| as_i64(v));
    let ql = input.at(queue_limit.map(|q| q.1));
    let queued_ql = queued(ql) as i128;
    if PRESTAGE_WORK_QUEUES.contains(&key.work_queue) && (n_queue_limit as i128) > queued_ql {
        let room = n_queue_limit as i128 - queued_ql;
        if room > n_jobs_in_bunch as i128 {
            n_jobs_in_bunch = room.min(N_JOBS_IN_BUNCH_MAX as i128) as i64;
        }
    }
    let max_num_jobs = match queue_cap {
        Some((cap, _)) => as_i64(cap / 5),
        None => n_jobs_in_bunch / 2,
    };
    let decision = |verdict| ThrottleDecision {
        verdict,
        threshold,
        n_jobs_in_bunch,
        n_queue_limit,
        queue_limit_level: queue_limit.map(|q| q.1),
    };
    if !throttled {
        // `PASS unthrottled since GS_throttled is False` returns before `setMaxNumJobs`.
        return decision(ThrottleVerdict::Pass { max_num_jobs: None, not_enough_queued: false });
    }
    let queued_over = queued_ql > n_queue_limit as i128;
    let walltime_enough = non_rt || input.total_walltime.is_none_or(|w| w > MIN_TOTAL_WALLTIME);
    let waiting_limit = (input.n_running.saturating_mul(N_WAITING_LIMIT) as i128)
        .max((n_jobs_in_bunch * N_WAITING_BUNCH_LIMIT) as i128);
    let reason = if base.n_running == 0 && queued_over && walltime_enough {
        Some(ThrottleReason::NothingRunning)
    } else if base.n_running != 0
        && queued(base) as f64 / base.n_running as f64 > threshold
        && queued_over
        && walltime_enough
    {
        Some(ThrottleReason::QueueRatio)
    } else if ql.n_defined as i128 > n_queue_limit as i128 {
        Some(ThrottleReason::TooManyDefined)
    } else if input.n_waiting as i128 > waiting_limit {
        Some(ThrottleReason::TooManyWaiting)
    } else if running_cap.is_some_and(|(c, level)| input.at(Some(level)).n_running > c) {
        return decision(ThrottleVerdict::Skip(ThrottleReason::RunningCap));
    } else if queue_cap.is_some_and(|(c, level)| queued(input.at(Some(level))) > c) {
        Some(ThrottleReason::QueueCap)
    } else {
        None
    };
    match reason {
        Some(reason) if input.high_prio_queued => decision(ThrottleVerdict::PriorityFloor { reason, max_num_jobs }),
        Some(r) => decision(ThrottleVerdict::Skip(r)),
        None => {
            let not_enough = (queued_ql as f64) < n_queue_limit as f64 * 0.9 || queued(base) < base.n_running;
            let max_num_jobs = if not_enough { max_num_jobs.max(n_queue_limit / 20) } else { max_num_jobs };
            decision(ThrottleVerdict::Pass { max_num_jobs: Some(max_num_jobs), not_enough_queued: not_enough })
        }
    }
}

#[cfg(test)]
mod tests;
