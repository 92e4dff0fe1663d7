//! `dirac::matcher` — which task queue and which job a pilot's JobAgent gets (seed 001,
//! "Resource matching"; reference `dirac.md` §1.3–§1.4, §2.6).
//!
//! 1. Filter the TQs whose requirements the resource satisfies ([`tq_matches`]).
//! 2. Order them: the seed takes the highest CPU time first, then the smallest
//!    `RAND()/Priority`; DIRAC since 2009-04 uses `RAND()/Priority` only.
//! 3. Inside the chosen TQ, draw a UserPriority level with the same `RAND()/RealPriority`
//!    rule over jobs, take the first N jobs of that level by job id (10 in the seed, 50 in v9)
//!    and pick one at random.
//!
//! `ORDER BY RAND()/p` takes the row with the smallest `U/p`. That is **not** sampling in
//! proportion to `p` (reference §2.6): for two TQs `Pr(first) = 1 − p2/(2·p1)`. We draw
//! exactly that `argmin`. For the level of n jobs at one priority, the minimum of n uniforms
//! is Beta(1, n), drawn with one uniform ([`crate::engine::dist::min_of_uniforms`]).

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::taskqueue::{JobId, TaskQueue, TaskQueueDb, TqDefinition, TqId, owner_key, real_priority};
use crate::engine::dist;

/// How matching TQs are ordered (reference §1.3, "History of the ordering").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum TqOrdering {
    /// Seed 001: highest CPU time first, then smallest `RAND()/Priority`.
    #[default]
    CpuThenRandomPriority,
    /// DIRAC since 2009-04-14: smallest `RAND()/Priority` only.
    RandomPriority,
}

/// Matcher settings of a scenario (`dirac.matcher`); an option left out takes the value of
/// `dirac.preset` (see `dirac::preset`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct MatcherSettings {
    /// TQ ordering: the seed's CPU-first order, or v9's RAND()/Priority only.
    pub ordering: Option<TqOrdering>,
    /// How many of the oldest jobs of the drawn level the random pick is among: 10 in the
    /// seed (and until 2012-08), 50 in v9 (reference §1.4).
    pub jobs_per_level: Option<u32>,
}

/// How the Matcher orders TQs and picks a job: the resolved [`MatcherSettings`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchRules {
    pub ordering: TqOrdering,
    pub jobs_per_level: u32,
}

impl Default for MatchRules {
    /// The seed's rules.
    fn default() -> Self {
        Self { ordering: TqOrdering::CpuThenRandomPriority, jobs_per_level: 10 }
    }
}

/// The pilot identity a JobAgent presents (seed 000: generic or private pilots).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PilotIdentity {
    /// Runs any non-"private" TQ of any user or group.
    Generic,
    /// Runs only its owner's TQs in its group (the group's TQs if the group has JOB_SHARING);
    /// presents PilotType "private".
    Private { owner: u32, group: u32 },
}

/// The resource description a JobAgent sends to the Matcher (seed 001; reference §5).
#[derive(Debug, Clone, Copy)]
pub struct Resource<'a> {
    pub identity: PilotIdentity,
    /// The interned id of the pilot type "private" (what a private pilot presents).
    pub private_type: u32,
    pub setup: u32,
    pub site: u32,
    pub grid_ce: u32,
    pub platform: u32,
    /// Tags the resource offers, sorted.
    pub tags: &'a [u32],
    /// `RequiredTag`: tags a TQ must carry to be matched here, sorted (reference §1.3 item 5).
    pub required_tags: &'a [u32],
    /// CPU work left in the pilot (normalised seconds).
    pub cpu_time: f64,
    /// `JobType` values the resource accepts, sorted; empty: any (a pilot's JobAgent sends none;
    /// a pilot factory's startd pilot asking for one kind of job sends that kind's types).
    pub job_types: &'a [u32],
}

/// True if the TQ's requirements accept this resource: every filter of seed 001.
///
/// `job_sharing(group)` tells whether a group has the JOB_SHARING property.
pub fn tq_matches(def: &TqDefinition, r: &Resource, job_sharing: impl Fn(u32) -> bool) -> bool {
    let accepts = |list: &[u32], v: u32| list.is_empty() || list.binary_search(&v).is_ok();
    // Owner group (and DN unless the group has JOB_SHARING) for private pilots; pilot type.
    if !identity_accepts(def.owner, def.group, r.identity, job_sharing) {
        return false;
    }
    let resource_type = match r.identity {
        PilotIdentity::Generic => None,
        PilotIdentity::Private { .. } => Some(r.private_type),
    };
    let pilot_type_ok =
        def.pilot_types.is_empty() || resource_type.is_some_and(|t| def.pilot_types.binary_search(&t).is_ok());
    pilot_type_ok
        && def.setup == r.setup
        && def.cpu_time as f64 <= r.cpu_time
        && accepts(&def.sites, r.site)
        && def.banned_sites.binary_search(&r.site).is_err()
        && accepts(&def.grid_ces, r.grid_ce)
        && accepts(&def.platforms, r.platform)
        && def.tags.iter().all(|t| r.tags.binary_search(t).is_ok())
        && r.required_tags.iter().all(|t| def.tags.binary_search(t).is_ok())
        // Reference §1.3 item 4: skipped when the resource gives none.
        && (r.job_types.is_empty() || job_types_accept(&def.job_types, r.job_types))
}

/// The identity filter: a generic pilot takes any owner's TQ; a private one only its owner's
/// in its group, or any of its group's if the group has JOB_SHARING.
#[inline]
fn identity_accepts(owner: u32, group: u32, identity: PilotIdentity, job_sharing: impl Fn(u32) -> bool) -> bool {
    match identity {
        PilotIdentity::Generic => true,
        PilotIdentity::Private { owner: o, group: g } => group == g && (owner == o || job_sharing(g)),
    }
}

/// [`tq_matches`] for a TQ, reading its definition only when it has a requirement on the
/// resource's place or kind ([`has_lists`](super::taskqueue::TqHead::has_lists)) or the resource
/// names job types: otherwise every list filter passes and what is left is in the TQ's own
/// [`TqHead`](super::taskqueue::TqHead).
#[inline]
pub fn tq_accepts(tq: &TaskQueue, r: &Resource, job_sharing: impl Fn(u32) -> bool) -> bool {
    let h = &tq.head;
    if h.has_lists {
        return tq_matches(&tq.def, r, job_sharing);
    }
    // No lists: the TQ has no tags, so a resource that requires one takes none of it.
    r.required_tags.is_empty()
        && identity_accepts(h.owner, h.group, r.identity, job_sharing)
        && h.setup == r.setup
        && h.cpu_time as f64 <= r.cpu_time
        && (r.job_types.is_empty() || job_types_accept(&tq.def.job_types, r.job_types))
}

/// Reference §1.3 item 4: a TQ without a `JobType` restriction, or sharing a value with the
/// resource's (which names some).
fn job_types_accept(tq_types: &[u32], resource_types: &[u32]) -> bool {
    tq_types.is_empty() || tq_types.iter().any(|t| resource_types.binary_search(t).is_ok())
}

/// Choose a TQ among the matching candidates (in TQ-id order), in the configured ordering.
/// `candidates` is walked once or twice (the longest CPU time, then the draws), so it should
/// be cheap to walk: [`request_job`] hands it the accepted TQs it kept on the stack.
pub fn select_task_queue<'a, R: Rng + ?Sized>(
    candidates: impl Iterator<Item = &'a TaskQueue> + Clone,
    ordering: TqOrdering,
    rng: &mut R,
) -> Option<&'a TaskQueue> {
    let top = match ordering {
        TqOrdering::RandomPriority => 0,
        TqOrdering::CpuThenRandomPriority => candidates.clone().map(|t| t.head.cpu_time).max()?,
    };
    argmin_rand(rng, candidates.filter(move |t| t.head.cpu_time >= top), |t| t.priority)
}

/// The item with the smallest `U_i / w_i` (one uniform per item, in order): the SQL
/// `ORDER BY RAND()/w ASC LIMIT 1` (reference §2.6).
pub fn argmin_rand<T, R: Rng + ?Sized>(
    rng: &mut R,
    items: impl Iterator<Item = T>,
    weight: impl Fn(&T) -> f64,
) -> Option<T> {
    let mut best: Option<(T, f64)> = None;
    for item in items {
        let key = dist::uniform01(rng) / weight(&item);
        if best.as_ref().is_none_or(|(_, b)| key < *b) {
            best = Some((item, key));
        }
    }
    best.map(|(item, _)| item)
}

/// Choose a job inside a TQ: a UserPriority level by `RAND()/RealPriority` over its jobs
/// (one Beta(1, n) draw per level), then one of the first `jobs_per_level` job ids of that
/// level, uniformly (seed 001; reference §1.4).
///
/// A TQ whose jobs all have one UserPriority (the usual case) still draws its level's key,
/// so that the stream moves on as DIRAC's `RAND()` does, but does not compute it: a lone
/// level cannot lose. That skips a `log1p` and an `expm1` per match (measured: 4 % of the
/// 10⁷-job week); `select_job_as_defined` is the rule it is checked against.
pub fn select_job<R: Rng + ?Sized>(tq: &TaskQueue, jobs_per_level: u32, rng: &mut R) -> Option<JobId> {
    let jobs = if tq.levels.len() == 1 {
        let (_, jobs) = tq.levels.iter().next()?;
        if !jobs.is_empty() {
            // `min_of_uniforms` draws one uniform for a non-empty level.
            dist::uniform01(rng);
        }
        jobs
    } else {
        let mut best: Option<(u8, f64)> = None;
        for (level, jobs) in tq.levels.iter() {
            let key = dist::min_of_uniforms(rng, jobs.len() as u64) / real_priority(level);
            if best.is_none_or(|(_, b)| key < b) {
                best = Some((level, key));
            }
        }
        tq.levels.get(best?.0)?
    };
    let n = jobs.len().min(jobs_per_level.max(1) as usize);
    jobs.get(dist::index(rng, n))
}

/// A successful match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Match {
    pub tq: TqId,
    pub job: JobId,
}

/// How many accepted TQs [`request_job`] keeps on the stack (a pilot's request usually
/// finds a few; a grid's TQDB holds tens).
const CANDIDATES: usize = 64;

/// The whole Matcher request: filter, order, pick a job. The caller removes the job from
/// the TQ (and recomputes priorities if the TQ empties).
pub fn request_job<R: Rng + ?Sized>(
    db: &TaskQueueDb,
    resource: &Resource,
    job_sharing: impl Fn(u32) -> bool,
    rules: MatchRules,
    rng: &mut R,
) -> Option<Match> {
    // An empty TQ (DIRAC 9 keeps them, `EmptyTqDeletion::OrphanCleaning`) yields no job, and DIRAC tries the next in
    // the RAND()/Priority order: the first non-empty one, i.e. the argmin over non-empty TQs.
    let accepted = |t: &&TaskQueue| t.n_jobs > 0 && tq_accepts(t, resource, &job_sharing);
    // The filter runs once (measured: it ran again for each of the ordering's two walks): the
    // accepted TQs' positions are kept on the stack, or, past `CANDIDATES`, walked again.
    let tqs = db.as_slice();
    // A private pilot takes only its owner's TQs, or its group's under JOB_SHARING: the TQs'
    // (group, owner) keys, a compact array beside them, pick those out before the filter
    // reads a TQ (measured: 96 % of the requests of the 10⁷-job week came from private
    // pilots, each walking 16 TQs to accept 0.4). The identity filter is part of `accepted`,
    // so this only skips TQs it would refuse; the accepted ones stay in id order.
    let (mask, wanted) = match resource.identity {
        PilotIdentity::Generic => (0, 0),
        PilotIdentity::Private { group, .. } if job_sharing(group) => (!0 << 32, owner_key(group, 0)),
        PilotIdentity::Private { owner, group } => (!0, owner_key(group, owner)),
    };
    let keys = db.owner_keys();
    let mut found = [0u32; CANDIDATES];
    let mut n = 0;
    let fits = keys.iter().enumerate().filter(|&(i, &k)| k & mask == wanted && accepted(&&tqs[i])).all(|(i, _)| {
        let room = n < CANDIDATES;
        if room {
            found[n] = i as u32;
            n += 1;
        }
        room
    });
    let tq = if fits {
        select_task_queue(found[..n].iter().map(|&i| &tqs[i as usize]), rules.ordering, rng)?
    } else {
        select_task_queue(tqs.iter().filter(accepted), rules.ordering, rng)?
    };
    let job = select_job(tq, rules.jobs_per_level, rng)?;
    Some(Match { tq: tq.id, job })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dirac::taskqueue::{TqChange, canonical};
    use crate::engine::RngStreams;

    const PRIVATE: u32 = 99;

    fn def() -> TqDefinition {
        TqDefinition { owner: 1, group: 1, cpu_time: 5000, ..Default::default() }
    }

    fn resource(tags: &[u32]) -> Resource<'_> {
        Resource {
            identity: PilotIdentity::Generic,
            private_type: PRIVATE,
            setup: 0,
            site: 7,
            grid_ce: 70,
            platform: 3,
            tags,
            required_tags: &[],
            cpu_time: 10_000.0,
            job_types: &[],
        }
    }

    /// Reference §1.3 item 5: a resource with `RequiredTag` takes only TQs carrying all of its
    /// required tags (a GPU queue with `Tag = GPU`, `RequiredTag = GPU` takes GPU jobs only),
    /// by the full definition and by the head alone.
    #[test]
    fn required_tags_keep_a_queue_for_the_tqs_that_carry_them() {
        let (gpu, multi) = (5, 6);
        let tags = [gpu, multi];
        let r = Resource { required_tags: &[gpu], ..resource(&tags) };
        let no_js = |_| false;
        assert!(tq_matches(&TqDefinition { tags: vec![gpu], ..def() }, &r, no_js));
        assert!(tq_matches(&TqDefinition { tags: vec![gpu, multi], ..def() }, &r, no_js));
        assert!(!tq_matches(&TqDefinition { tags: vec![multi], ..def() }, &r, no_js));
        assert!(!tq_matches(&def(), &r, no_js), "an untagged TQ does not carry the required tag");
        let mut db = TaskQueueDb::new();
        let untagged = db.insert_job(&def(), 1, 1).id();
        let tagged = db.insert_job(&TqDefinition { tags: vec![gpu], ..def() }, 2, 1).id();
        let tq = |id| db.get(id).unwrap();
        assert!(!tq_accepts(tq(untagged), &r, no_js), "the head alone refuses it too");
        assert!(tq_accepts(tq(tagged), &r, no_js));
        assert!(tq_accepts(tq(untagged), &resource(&tags), no_js), "no RequiredTag: untagged TQs match");
    }

    /// Reference §1.3 item 4 for `JobType`: a resource that names no type takes every TQ; one
    /// that names types takes TQs without a restriction or sharing one of its values.
    #[test]
    fn job_types_filter_as_the_tq_db_does() {
        let user = TqDefinition { job_types: vec![1], ..def() };
        let mc = TqDefinition { job_types: vec![2], ..def() };
        let both = TqDefinition { job_types: vec![1, 2], ..def() };
        let unrestricted = def();
        let any = resource(&[]);
        let analysis = Resource { job_types: &[1], ..any };
        let production = Resource { job_types: &[2, 3], ..any };
        let yes = |d: &TqDefinition, r: &Resource| tq_matches(d, r, |_| false);
        for d in [&user, &mc, &both, &unrestricted] {
            assert!(yes(d, &any));
        }
        assert_eq!([&user, &mc, &both, &unrestricted].map(|d| yes(d, &analysis)), [true, false, true, true]);
        assert_eq!([&user, &mc, &both, &unrestricted].map(|d| yes(d, &production)), [false, true, true, true]);
    }

    #[test]
    fn every_seed_filter() {
        let r = resource(&[5, 6]);
        let no_js = |_| false;
        assert!(tq_matches(&def(), &r, no_js));
        let check = |f: &dyn Fn(&mut TqDefinition), want: bool| {
            let mut d = def();
            f(&mut d);
            assert_eq!(tq_matches(&d, &r, no_js), want, "{d:?}");
        };
        check(&|d| d.setup = 1, false); // Setup must match
        check(&|d| d.cpu_time = 10_000, true); // TQ CPU ≤ resource CPU
        check(&|d| d.cpu_time = 10_001, false);
        check(&|d| d.sites = canonical(vec![8, 7]), true); // site accepted
        check(&|d| d.sites = vec![8], false);
        check(&|d| d.banned_sites = vec![7], false); // banned site
        check(&|d| d.grid_ces = vec![70], true); // GridCE
        check(&|d| d.grid_ces = vec![71], false);
        check(&|d| d.platforms = vec![3, 4], true); // platform
        check(&|d| d.platforms = vec![4], false);
        check(&|d| d.tags = vec![5], true); // TQ tags ⊆ resource tags
        check(&|d| d.tags = vec![5, 9], false);
        check(&|d| d.pilot_types = vec![PRIVATE], false); // generic pilot, private-only TQ
    }

    #[test]
    fn private_pilots_match_owner_and_group_unless_job_sharing() {
        let mut r = resource(&[]);
        r.identity = PilotIdentity::Private { owner: 2, group: 1 };
        let mut d = def();
        d.pilot_types = vec![PRIVATE];
        assert!(!tq_matches(&d, &r, |_| false), "other owner, no JOB_SHARING");
        assert!(tq_matches(&d, &r, |_| true), "JOB_SHARING: group only");
        r.identity = PilotIdentity::Private { owner: 1, group: 2 };
        assert!(!tq_matches(&d, &r, |_| true), "other group");
        r.identity = PilotIdentity::Private { owner: 1, group: 1 };
        assert!(tq_matches(&d, &r, |_| false));
        d.pilot_types.clear();
        assert!(tq_matches(&d, &r, |_| false), "a TQ without PilotTypes takes private pilots");
    }

    /// [`tq_accepts`] reads the TQ's head where it can: it must decide as [`tq_matches`] on the
    /// whole definition, for every identity, JOB_SHARING, CPU time and list requirement.
    #[test]
    fn a_tqs_head_decides_as_its_definition() {
        let mut rng = RngStreams::new(5).stream("test/head");
        let mut pick = |n: u32| dist::index(&mut rng, n as usize) as u32;
        let mut db = TaskQueueDb::new();
        let mut head_alone = 0;
        for i in 0..4000 {
            let mut d = TqDefinition {
                owner: pick(3),
                group: pick(2),
                setup: pick(2),
                cpu_time: u64::from(pick(3)) * 5000,
                ..Default::default()
            };
            // Each list is set in a third of the definitions, so that many have none, or only
            // job types (the head decides alone), and the others each kind of list.
            let private = pick(3) == 0;
            let mut list =
                |n: u32| if pick(3) == 0 { canonical((0..=pick(2)).map(|_| pick(n)).collect()) } else { vec![] };
            d.sites = list(9);
            d.banned_sites = list(9);
            d.platforms = list(5);
            d.grid_ces = list(80);
            d.tags = list(8);
            d.job_types = list(3);
            d.pilot_types = if private { vec![PRIVATE] } else { vec![] };
            db.insert_job(&d, i + 1, 1);
            let id = db.iter().find(|t| *t.def == d).unwrap().id;
            let tq = db.get(id).unwrap();
            let tags = [5, 6];
            let types = [1];
            let r = Resource {
                identity: if pick(2) == 0 {
                    PilotIdentity::Generic
                } else {
                    PilotIdentity::Private { owner: pick(3), group: pick(2) }
                },
                setup: pick(2),
                site: pick(9),
                grid_ce: pick(80),
                platform: pick(5),
                cpu_time: f64::from(pick(5) * 2500),
                job_types: if pick(2) == 0 { &[] } else { &types },
                required_tags: if pick(3) == 0 { &tags[..1] } else { &[] },
                ..resource(&tags)
            };
            let sharing = pick(2) == 0;
            let js = |_| sharing;
            assert_eq!(tq_accepts(tq, &r, js), tq_matches(&d, &r, js), "{d:?} {r:?}");
            head_alone += usize::from(!tq.head.has_lists);
        }
        assert!(head_alone > 200, "the head decided alone only {head_alone} times");
    }

    /// [`request_job`] (its filter run once, the candidates kept on the stack up to
    /// `CANDIDATES`) picks what the plain filter-then-order rule picks and draws alike, with
    /// few TQs and with more accepted TQs than the stack keeps, in both orderings.
    #[test]
    fn request_job_decides_as_the_plain_rule() {
        // Group 2 has JOB_SHARING. Random TQDBs of two groups (some TQs deleted again, so the
        // keys beside the TQs must follow), generic and private pilots of either group.
        let js = |g: u32| g == 2;
        let plain = |db: &TaskQueueDb, r: &Resource, rules: MatchRules, rng: &mut crate::engine::SimRng| {
            let candidates = db.iter().filter(|t| t.n_jobs > 0 && tq_accepts(t, r, js));
            let tq = select_task_queue(candidates, rules.ordering, rng)?;
            let job = select_job(tq, rules.jobs_per_level, rng)?;
            Some(Match { tq: tq.id, job })
        };
        let mut shape = RngStreams::new(9).stream("test/request");
        let mut sizes = Vec::new();
        for case in 0..160u64 {
            let mut db = TaskQueueDb::with_rules(0, case % 3 == 1);
            let n_defs = [3, 40, 150][case as usize % 3];
            let mut inserted = Vec::new();
            for j in 0..2 * n_defs {
                let d = TqDefinition {
                    owner: dist::index(&mut shape, n_defs) as u32,
                    group: 1 + dist::index(&mut shape, 2) as u32,
                    cpu_time: 1000 * (1 + dist::index(&mut shape, 3) as u64),
                    ..Default::default()
                };
                inserted.push((db.insert_job(&d, j as JobId + 1, 1).id(), j as JobId + 1));
            }
            for &(tq, job) in inserted.iter().filter(|_| dist::index(&mut shape, 3) == 0) {
                if let Some(TqChange::Emptied(id)) = db.remove_job(tq, job, 1) {
                    db.delete_empty(id);
                }
            }
            for tq in db.iter().map(|t| t.id).collect::<Vec<_>>() {
                db.get_mut(tq).unwrap().priority = 0.1 + dist::uniform01(&mut shape);
            }
            let owner = dist::index(&mut shape, n_defs) as u32;
            let r = Resource {
                identity: match case % 4 {
                    0 => PilotIdentity::Generic,
                    1 => PilotIdentity::Private { owner: 0, group: 1 },
                    2 => PilotIdentity::Private { owner, group: 1 },
                    _ => PilotIdentity::Private { owner, group: 2 },
                },
                ..resource(&[])
            };
            let ordering = if case % 8 < 4 { TqOrdering::CpuThenRandomPriority } else { TqOrdering::RandomPriority };
            let rules = MatchRules { ordering, jobs_per_level: 10 };
            let mut fast = RngStreams::new(case).stream("test/request-draws");
            let mut slow = fast.clone();
            for _ in 0..10 {
                assert_eq!(request_job(&db, &r, js, rules, &mut fast), plain(&db, &r, rules, &mut slow), "case {case}");
            }
            assert_eq!(fast.next_u64(), slow.next_u64(), "case {case}: the stream moved on alike");
            sizes.push(db.iter().filter(|t| t.n_jobs > 0 && tq_accepts(t, &r, js)).count());
        }
        assert!(sizes.iter().any(|&n| n > CANDIDATES), "some request overflows the stack: {sizes:?}");
        assert!(sizes.iter().any(|&n| (2..CANDIDATES).contains(&n)), "{sizes:?}");
    }

    /// Pr(i first) for `ORDER BY RAND()/p`, by numerical integration of reference §2.6's
    /// `∫_0^{1/p_i} p_i · Π_{j≠i} max(0, 1 − p_j·x) dx`.
    fn theory(p: &[f64], i: usize) -> f64 {
        let steps = 200_000;
        let h = (1.0 / p[i]) / steps as f64;
        (0..steps)
            .map(|k| {
                let x = (k as f64 + 0.5) * h;
                p[i] * p
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .map(|(_, pj)| (1.0 - pj * x).max(0.0))
                    .product::<f64>()
            })
            .sum::<f64>()
            * h
    }

    #[test]
    fn rand_over_priority_is_not_proportional_two_tq_closed_form() {
        // Reference §2.6: for p1 ≥ p2, Pr(first) = 1 − p2/(2·p1); p1 = 2·p2 gives 0.75, not 0.667.
        let mut rng = RngStreams::new(7).stream("test/argmin");
        let n = 200_000;
        for (p1, p2) in [(2.0, 1.0), (1000.0, 250.0), (3.0, 3.0)] {
            let first = (0..n).filter(|_| argmin_index(&mut rng, &[p1, p2]) == Some(0)).count();
            let got = first as f64 / n as f64;
            let want = 1.0 - p2 / (2.0 * p1);
            let sigma = (want * (1.0 - want) / n as f64).sqrt();
            assert!((got - want).abs() < 5.0 * sigma, "p=({p1},{p2}) got {got} want {want}");
        }
        assert!((theory(&[2.0, 1.0], 0) - 0.75).abs() < 1e-6);
    }

    #[test]
    fn five_tq_distribution_matches_mariadb_check() {
        // Reference §2.6: priorities 250/250/500/2500/1000 → theory 0.040/0.040/0.082/0.665/0.175
        // (proportional sampling would give 0.056/0.056/0.111/0.556/0.222).
        let p = [250.0, 250.0, 500.0, 2500.0, 1000.0];
        let mut rng = RngStreams::new(11).stream("test/five");
        let n = 200_000;
        let mut counts = [0usize; 5];
        for _ in 0..n {
            counts[argmin_index(&mut rng, &p).unwrap()] += 1;
        }
        for (i, want_rounded) in [0.040, 0.040, 0.082, 0.665, 0.175].into_iter().enumerate() {
            let want = theory(&p, i);
            assert!((want - want_rounded).abs() < 0.0011, "theory {i}: {want}");
            let got = counts[i] as f64 / n as f64;
            let sigma = (want * (1.0 - want) / n as f64).sqrt();
            assert!((got - want).abs() < 5.0 * sigma, "TQ {i}: got {got} want {want}");
        }
    }

    /// The index [`argmin_rand`] picks among weights.
    fn argmin_index<R: Rng + ?Sized>(rng: &mut R, weights: &[f64]) -> Option<usize> {
        argmin_rand(rng, weights.iter().enumerate(), |&(_, &w)| w).map(|(i, _)| i)
    }

    fn tq_with(levels: &[(u8, u32)]) -> TaskQueue {
        let mut db = TaskQueueDb::new();
        let mut id = 0;
        for &(p, n) in levels {
            for _ in 0..n {
                id += 1;
                db.insert_job(&def(), id, p);
            }
        }
        db.get(1).unwrap().clone()
    }

    #[test]
    fn level_choice_uses_min_of_uniforms_per_level() {
        // Reference §2.6: 20 jobs at priority 1 and 20 at priority 5 → P(level 5) = 0.838.
        let tq = tq_with(&[(1, 20), (5, 20)]);
        let mut rng = RngStreams::new(3).stream("test/level");
        let n = 100_000;
        let hi = (0..n).filter(|_| select_job(&tq, 10, &mut rng).unwrap() > 20).count();
        let got = hi as f64 / n as f64;
        let mut ps = vec![1.0; 20];
        ps.extend(vec![5.0; 20]);
        let want: f64 = (20..40).map(|i| theory(&ps, i)).sum();
        assert!((want - 0.838).abs() < 0.001, "theory {want}");
        assert!((got - want).abs() < 5.0 * (want * (1.0 - want) / n as f64).sqrt(), "got {got}");
    }

    /// [`select_job`] as seed 001 defines it: every level's key computed, one or many.
    fn select_job_as_defined<R: Rng + ?Sized>(tq: &TaskQueue, jobs_per_level: u32, rng: &mut R) -> Option<JobId> {
        let mut best: Option<(u8, f64)> = None;
        for (level, jobs) in tq.levels.iter() {
            let key = dist::min_of_uniforms(rng, jobs.len() as u64) / real_priority(level);
            if best.is_none_or(|(_, b)| key < b) {
                best = Some((level, key));
            }
        }
        let jobs = tq.levels.get(best?.0)?;
        let n = jobs.len().min(jobs_per_level.max(1) as usize);
        jobs.get(dist::index(rng, n))
    }

    /// The lone-level shortcut picks the same job and leaves the stream where the defined rule
    /// does, for one level and for several.
    #[test]
    fn select_job_draws_as_defined() {
        let mut shape_rng = RngStreams::new(11).stream("test/shapes");
        for case in 0..300 {
            let n_levels = 1 + dist::index(&mut shape_rng, 3);
            let levels: Vec<(u8, u32)> = (0..n_levels)
                .map(|i| {
                    (i as u8 * 3 + dist::index(&mut shape_rng, 3) as u8, 1 + dist::index(&mut shape_rng, 80) as u32)
                })
                .collect();
            let tq = tq_with(&levels);
            let per_level = [1, 10, 50][case % 3];
            let mut fast = RngStreams::new(case as u64).stream("test/select");
            let mut plain = fast.clone();
            for _ in 0..20 {
                assert_eq!(select_job(&tq, per_level, &mut fast), select_job_as_defined(&tq, per_level, &mut plain));
            }
            assert_eq!(fast.next_u64(), plain.next_u64(), "case {case}: the stream moved on alike");
        }
    }

    #[test]
    fn job_is_uniform_among_the_first_n_by_job_id() {
        let tq = tq_with(&[(1, 30)]);
        let mut rng = RngStreams::new(5).stream("test/first-n");
        let mut counts = [0usize; 31];
        for _ in 0..50_000 {
            counts[select_job(&tq, 10, &mut rng).unwrap() as usize] += 1;
        }
        assert!(counts[11..].iter().all(|&c| c == 0), "only jobs 1..=10");
        assert!(counts[1..=10].iter().all(|&c| (4_500..5_500).contains(&c)), "{counts:?}");
    }

    #[test]
    fn cpu_first_ordering_takes_the_longest_tq() {
        let mut db = TaskQueueDb::new();
        let mut d = def();
        db.insert_job(&d, 1, 1);
        d.cpu_time = 500;
        db.insert_job(&d, 2, 1);
        db.get_mut(1).unwrap().priority = 0.001;
        db.get_mut(2).unwrap().priority = 1e6;
        let all: Vec<&TaskQueue> = db.iter().collect();
        let mut rng = RngStreams::new(1).stream("test/cpu");
        for _ in 0..100 {
            assert_eq!(
                select_task_queue(all.iter().copied(), TqOrdering::CpuThenRandomPriority, &mut rng).map(|t| t.id),
                Some(1)
            );
        }
        let by_prio = (0..100)
            .filter(|_| {
                select_task_queue(all.iter().copied(), TqOrdering::RandomPriority, &mut rng).map(|t| t.id) == Some(2)
            })
            .count();
        assert_eq!(by_prio, 100);
        let r = resource(&[]);
        let m = request_job(&db, &r, |_| false, MatchRules::default(), &mut rng).unwrap();
        assert_eq!(m, Match { tq: 1, job: 1 });
    }
}
