//! `panda::network` — the network weight of production job brokerage (seed 004, "Network
//! Weight"; reference `panda.md` §3, `AtlasProdJobBroker.py` L22-42, L107-117, L1869-1924, and the
//! link check of §2 filter 4, L427-519).
//!
//! Production output is aggregated to the task's nucleus, so a queue (PQ) at a satellite is
//! weighted by how well its storage's link to the nucleus is doing. The inputs are one row of the
//! network matrix, [`LinkMetrics`] (FTS throughput, queued files, CRIC closeness); the result
//! multiplies the PQ's brokerage weight when `NW_ACTIVE` (reference §2 "Weight").
//!
//! Formulas (reference §3; `MIN_CLOSENESS = 0`, `MAX_CLOSENESS = 11`, `BLOCKED_LINK = −1`):
//!
//! ```text
//! PQ at the nucleus:  queuedW = throughputW = 2.5                         (weightNw = 2.5)
//! satellite:          queuedW     = 2 − nQueued / NQUEUED_SAT_CAP          (nQueued missing → 0)
//!                     throughputW = convertMBpsToWeight(mbps)              if mbps is known
//!                                 = 1 + (11 − closeness) / (11 − 0)        else (closeness missing → 0.7·11 = 7.7)
//! weightNw = NW_QUEUE_IMPORTANCE · queuedW + (1 − NW_QUEUE_IMPORTANCE) · throughputW
//! convertMBpsToWeight(m): first of >200→2.0, >100→1.9, >75→1.8, >50→1.6, >20→1.5, >10→1.3,
//!                         >2→1.2, >1→1.1, else 1.0   (strict: 200 → 1.9, 100 → 1.8)
//! ```
//!
//! Which Mbps is "known", and when a satellite link is saturated, is where the two variants
//! ([`NetworkVariant`]) differ:
//!
//! | | `Seed` (default) | `PandaServer` (1.0.4 code, reference §3 ⚠) |
//! |---|---|---|
//! | rule | 1 h, else 1 d, else 1 w | 1 w, overwritten by 1 d, then by 1 h; stops at the first missing key |
//! | only 1 h known | 1 h | no FTS data → closeness |
//! | 1 w and 1 h, no 1 d | 1 h | 1 w |
//! | link skipped | "over the `NQUEUED_SAT_CAP`" files queued: `queued > cap` (150 kept, 151 skipped) | `queued >= cap` (L490-491: 150 skipped) |
//!
//! The seed gives the shapes only as plots; the queued weight, the Mbps steps, the closeness
//! normalisation and the 2.5 of nucleus PQs come from the code and are common to both variants.
//!
//! The link check ([`link_check`], reference §2 filter 4) runs before the weight: a blocked link
//! (closeness −1) is a hard skip, a saturated link (table above) and a nucleus with
//! ≥ `NQUEUED_NUC_CAP_FOR_JOBS` queued files are temporary skips, an unknown link passes. So the
//! real code never weighs a blocked or saturated link; here [`network_weight`] is total anyway:
//! a blocked link weighs `None`, the queued weight is floored at 0 (never negative).
//!
//! Inputs are read explicitly, never panicking: a NaN Mbps or closeness is missing data; a
//! negative or infinite Mbps goes through the steps as in Python (→ 1.0 / 2.0); a closeness is
//! clamped to `[0, 11]` after the blocked test; settings are sanitised by [`NetworkSettings::sane`]
//! and reported by [`validate`].

use serde::{Deserialize, Serialize};

/// `MIN_CLOSENESS` (AtlasProdJobBroker.py L22-42): the best CRIC closeness.
pub const MIN_CLOSENESS: f64 = 0.0;
/// `MAX_CLOSENESS`: the worst CRIC closeness.
pub const MAX_CLOSENESS: f64 = 11.0;
/// `BLOCKED_LINK`: the closeness CRIC gives a blocked link.
pub const BLOCKED_LINK: f64 = -1.0;
/// Closeness assumed when the matrix has none: `0.7 × MAX_CLOSENESS` (reference §3).
pub const DEFAULT_CLOSENESS: f64 = 0.7 * MAX_CLOSENESS;
/// Queued and throughput weight of a PQ at the nucleus itself (reference §3): above any
/// satellite's 2.0, so local PQs are preferred.
pub const NUCLEUS_WEIGHT: f64 = 2.5;

/// `convertMBpsToWeight` steps, `(threshold, weight)`, tested in order with a strict `>`.
const MBPS_STEPS: [(f64, f64); 8] =
    [(200.0, 2.0), (100.0, 1.9), (75.0, 1.8), (50.0, 1.6), (20.0, 1.5), (10.0, 1.3), (2.0, 1.2), (1.0, 1.1)];

/// Which Mbps fallback chain is used (seed 004 vs reference §3 ⚠).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum NetworkVariant {
    /// Seed 004: "preferably data of the last 1 hour, if not available of last 1 day, if not
    /// available of last 1 week".
    #[default]
    Seed,
    /// panda-server 1.0.4 (L1869-1924): start from 1 w, overwrite with 1 d, then with 1 h,
    /// stopping at the first missing value; no 1 w value means no FTS data.
    PandaServer,
}

impl NetworkVariant {
    /// Whether `queued` files on a satellite→nucleus link saturate it against `NQUEUED_SAT_CAP`:
    /// seed 004 skips queues "over the NQUEUED_SAT_CAP files queued on their links to the
    /// nucleus" (`>`); panda-server 1.0.4 compares `>=` (AtlasProdJobBroker.py L490-491).
    pub fn link_saturated(self, queued: u64, sat_cap: u64) -> bool {
        match self {
            NetworkVariant::Seed => queued > sat_cap,
            NetworkVariant::PandaServer => queued >= sat_cap,
        }
    }

    /// The comparison [`Self::link_saturated`] applies, for the skip message (`150(>=150 link
    /// limit)`; panda-server itself writes `>` whatever it compared).
    pub fn sat_cap_op(self) -> &'static str {
        match self {
            NetworkVariant::Seed => ">",
            NetworkVariant::PandaServer => ">=",
        }
    }
}

/// The gdpconfig keys of the network weight (component `jobbroker`, app `jedi`, vo `atlas`;
/// reference §2 "Parameters", AtlasProdJobBroker.py L53-72), plus the variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkSettings {
    /// `NW_ACTIVE` (default **false**, L53-55): the weight is computed but multiplies the PQ weight,
    /// and gates express tasks, only when true.
    pub nw_active: bool,
    /// `NW_QUEUE_IMPORTANCE` (default 0.5, L57-60): share of the queued weight; the throughput
    /// weight gets `1 − it`. Read clamped to `[0, 1]`.
    pub nw_queue_importance: f64,
    /// `NW_THRESHOLD` (default 1.7, L62-64): express tasks need `weightNw ≥ it × multiplier`.
    pub nw_threshold: f64,
    /// `NW_WEIGHT_MULTIPLIER` (default 1, L74-76), used only in the express threshold.
    pub nw_weight_multiplier: f64,
    /// `NQUEUED_SAT_CAP` (default 150 files, L66-68): files queued on a satellite→nucleus link
    /// beyond which (seed; at which, code) the link is saturated (temporary skip); at it the
    /// link's queued weight reaches 1.
    pub nqueued_sat_cap: u64,
    /// `NQUEUED_NUC_CAP_FOR_JOBS` (default 10000 files, L70-72): files queued to the nucleus in
    /// total at which every satellite PQ is temporarily skipped.
    pub nqueued_nuc_cap_for_jobs: u64,
    /// Seed chain (default) or the panda-server one.
    pub variant: NetworkVariant,
}

impl Default for NetworkSettings {
    fn default() -> Self {
        Self {
            nw_active: false,
            nw_queue_importance: 0.5,
            nw_threshold: 1.7,
            nw_weight_multiplier: 1.0,
            nqueued_sat_cap: 150,
            nqueued_nuc_cap_for_jobs: 10_000,
            variant: NetworkVariant::Seed,
        }
    }
}

impl NetworkSettings {
    /// The settings as the functions read them: a NaN importance is the default 0.5, any other
    /// is clamped to `[0, 1]` (so the two weights stay a convex combination); a non-finite
    /// threshold or multiplier is its default.
    pub fn sane(&self) -> Self {
        let d = Self::default();
        let finite_or = |x: f64, def: f64| if x.is_finite() { x } else { def };
        Self {
            nw_queue_importance: if self.nw_queue_importance.is_nan() {
                d.nw_queue_importance
            } else {
                self.nw_queue_importance.clamp(0.0, 1.0)
            },
            nw_threshold: finite_or(self.nw_threshold, d.nw_threshold),
            nw_weight_multiplier: finite_or(self.nw_weight_multiplier, d.nw_weight_multiplier),
            ..self.clone()
        }
    }
}

/// What a configuration gets wrong (values [`NetworkSettings::sane`] would replace).
pub fn validate(s: &NetworkSettings) -> Result<(), String> {
    if !(0.0..=1.0).contains(&s.nw_queue_importance) {
        return Err(format!("nw_queue_importance {} is not in [0, 1]", s.nw_queue_importance));
    }
    if !s.nw_threshold.is_finite() || !s.nw_weight_multiplier.is_finite() {
        return Err("nw_threshold and nw_weight_multiplier must be finite".into());
    }
    Ok(())
}

/// One row of the network matrix for a satellite→nucleus link (reference §2 filter 4,
/// `network_matrix_kv` rows younger than 60 min): `None` = the key is absent. The default is a
/// link the matrix does not know.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinkMetrics {
    /// `<activity>_queued`: files queued on the link (activity `Production Output`, or `Express`).
    pub queued_files: Option<u64>,
    /// `dashb_mbps_1h`: FTS throughput over the last hour, in Mbps.
    pub mbps_1h: Option<f64>,
    /// `dashb_mbps_1d`: over the last day.
    pub mbps_1d: Option<f64>,
    /// `dashb_mbps_1w`: over the last week.
    pub mbps_1w: Option<f64>,
    /// `AGIS_closeness`: CRIC closeness, 0 (best) to 11 (worst); −1 means blocked.
    pub closeness: Option<f64>,
    /// The link is blocked (CRIC closeness `BLOCKED_LINK`); equivalent to `closeness == −1`.
    pub blocked: bool,
}

impl LinkMetrics {
    /// Blocked by the flag or by closeness −1 (the code's `== BLOCKED_LINK`).
    pub fn is_blocked(&self) -> bool {
        self.blocked || self.closeness == Some(BLOCKED_LINK)
    }

    /// The closeness used by the fallback: missing or NaN → 7.7, else clamped to `[0, 11]`.
    pub fn effective_closeness(&self) -> f64 {
        match self.closeness {
            Some(c) if !c.is_nan() => c.clamp(MIN_CLOSENESS, MAX_CLOSENESS),
            _ => DEFAULT_CLOSENESS,
        }
    }

    /// The Mbps the variant uses, `None` when it finds no FTS data. NaN values count as missing.
    pub fn mbps(&self, variant: NetworkVariant) -> Option<f64> {
        let known = |x: Option<f64>| x.filter(|m| !m.is_nan());
        let (h, d, w) = (known(self.mbps_1h), known(self.mbps_1d), known(self.mbps_1w));
        match variant {
            NetworkVariant::Seed => h.or(d).or(w),
            // try: m = 1w; m = 1d; m = 1h — each assignment only if the previous succeeded.
            NetworkVariant::PandaServer => w.map(|w| d.map_or(w, |d| h.unwrap_or(d))),
        }
    }
}

/// Where the PQ's default output storage is relative to the task's nucleus.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub enum Link {
    /// The PQ writes to the nucleus itself: no link, weight 2.5 (reference §3 `src == nucleus`).
    Nucleus,
    /// A satellite, with its link's metrics (all `None` when the matrix has no row).
    Satellite(LinkMetrics),
    /// A satellite whose link the matrix does not know: passes the check, weighs like
    /// `Satellite(LinkMetrics::default())`.
    #[default]
    Unknown,
}

impl Link {
    fn metrics(&self) -> Option<LinkMetrics> {
        match *self {
            Link::Nucleus => None,
            Link::Satellite(m) => Some(m),
            Link::Unknown => Some(LinkMetrics::default()),
        }
    }
}

/// Outcome of the link check (reference §2 filter 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkCheck {
    /// The PQ stays a candidate.
    Ok,
    /// Closeness −1: the PQ is skipped for good.
    Blocked,
    /// Total files queued to the nucleus ≥ `NQUEUED_NUC_CAP_FOR_JOBS`: temporary skip.
    NucleusSaturated,
    /// Files queued on the link over `NQUEUED_SAT_CAP` (seed; code: at least): temporary skip.
    LinkSaturated,
}

/// The link check in code order (L427-519): nucleus PQ → Ok; nucleus total ≥ its cap →
/// temporary; unknown link → Ok; blocked → hard skip; link queue over its cap
/// ([`NetworkVariant::link_saturated`]) → temporary.
/// (The nucleus `write_wan` test of the same filter belongs to storage, not here.)
pub fn link_check(link: &Link, nucleus_queued_files: u64, s: &NetworkSettings) -> LinkCheck {
    match link {
        Link::Nucleus => LinkCheck::Ok,
        _ if nucleus_queued_files >= s.nqueued_nuc_cap_for_jobs => LinkCheck::NucleusSaturated,
        Link::Unknown => LinkCheck::Ok,
        Link::Satellite(m) if m.is_blocked() => LinkCheck::Blocked,
        Link::Satellite(m) if s.variant.link_saturated(m.queued_files.unwrap_or(0), s.nqueued_sat_cap) => {
            LinkCheck::LinkSaturated
        }
        Link::Satellite(_) => LinkCheck::Ok,
    }
}

/// `convertMBpsToWeight` (reference §3, §9 vectors): the first step with `m > threshold`,
/// else 1.0. NaN and negatives give 1.0, +∞ gives 2.0, as in Python.
pub fn mbps_weight(mbps: f64) -> f64 {
    MBPS_STEPS.iter().find(|(t, _)| mbps > *t).map_or(1.0, |&(_, w)| w)
}

/// Queued weight of a satellite link: `2 − nQueued / NQUEUED_SAT_CAP`, in `(1, 2]` below the cap
/// and 1 at it (weighed in the seed variant only); floored at 0 beyond (never reached, the link
/// check skips such links first). A cap
/// of 0 (Python: `ZeroDivisionError`) reads as a saturated link, weight 1.
pub fn queued_weight(queued_files: u64, sat_cap: u64) -> f64 {
    let ratio = if sat_cap == 0 { 1.0 } else { queued_files as f64 / sat_cap as f64 };
    (2.0 - ratio).max(0.0)
}

/// Closeness fallback: `1 + (11 − c) / 11`, from 2 (closest) to 1 (farthest); `c` is clamped.
pub fn closeness_weight(closeness: f64) -> f64 {
    let c = if closeness.is_nan() { DEFAULT_CLOSENESS } else { closeness.clamp(MIN_CLOSENESS, MAX_CLOSENESS) };
    1.0 + (MAX_CLOSENESS - c) / (MAX_CLOSENESS - MIN_CLOSENESS)
}

/// The two parts of a network weight and their combination.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NetworkWeight {
    /// From the files queued on the link (2.5 at the nucleus).
    pub queued: f64,
    /// From FTS Mbps, or from closeness when there is no FTS data (2.5 at the nucleus).
    pub throughput: f64,
    /// Whether `throughput` came from closeness.
    pub from_closeness: bool,
    /// `weightNw = importance · queued + (1 − importance) · throughput`.
    pub weight: f64,
}

/// `weightNw` of a PQ (reference §3); `None` for a blocked link, which is never weighted.
pub fn network_weight(link: &Link, s: &NetworkSettings) -> Option<NetworkWeight> {
    let s = s.sane();
    let (queued, throughput, from_closeness) = match link.metrics() {
        None => (NUCLEUS_WEIGHT, NUCLEUS_WEIGHT, false),
        Some(m) if m.is_blocked() => return None,
        Some(m) => {
            let q = queued_weight(m.queued_files.unwrap_or(0), s.nqueued_sat_cap);
            match m.mbps(s.variant) {
                Some(mbps) => (q, mbps_weight(mbps), false),
                None => (q, closeness_weight(m.effective_closeness()), true),
            }
        }
    };
    let i = s.nw_queue_importance;
    Some(NetworkWeight { queued, throughput, from_closeness, weight: i * queued + (1.0 - i) * throughput })
}

/// The factor the PQ's brokerage weight is multiplied by (reference §2 "Weight"): `weightNw`
/// when `NW_ACTIVE`, else 1; a blocked link gives 0 (it would have been skipped).
pub fn brokerage_factor(link: &Link, s: &NetworkSettings) -> f64 {
    match network_weight(link, s) {
        None => 0.0,
        Some(_) if !s.nw_active => 1.0,
        Some(w) => w.weight,
    }
}

/// Express tasks (processingType `urgent` or priority > 1000): with `NW_ACTIVE`, the PQ is
/// rejected when `weightNw < NW_THRESHOLD × NW_WEIGHT_MULTIPLIER` (reference §2 final filter 4;
/// seed: "must be larger than or equal to"). Without `NW_ACTIVE` every unblocked PQ passes.
pub fn express_passes(link: &Link, s: &NetworkSettings) -> bool {
    let sane = s.sane();
    match network_weight(link, s) {
        None => false,
        Some(_) if !s.nw_active => true,
        Some(w) => w.weight >= sane.nw_threshold * sane.nw_weight_multiplier,
    }
}

#[cfg(test)]
mod tests;
