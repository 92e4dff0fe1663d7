//! `dirac::corrector` — the WMSHistory share corrector (seed 002, "Dynamic share corrections";
//! reference `dirac.md` §2.3 and §3).
//!
//! Every history-aware instance compares each entity's normalised share `n_e = E_e / ΣE` with its
//! normalised usage over each time slice `s` (`u = H_s[e] / T_s`, `T_s` = usage of the entities of
//! `E` present in `H_s`), clamps the ratio `n_e / u` to `[1/Max_s, Max_s]`, weights it, sums over
//! the slices, clamps the sum to `[1/MaxGlobal, MaxGlobal]` and multiplies the share by it. The
//! corrected shares are **not** renormalised (reference §3.3, step 4).
//!
//! Two variants ([`CorrectorVariant`]) differ only in edge cases:
//!
//! | case | `Seed` (default) | `Dirac9` (`BaseHistoryCorrector.applyCorrection`) |
//! |---|---|---|
//! | entity absent from slice `s` | ratio +∞ → `Max_s · w_s` | raw `Max_s`, **not** weighted (§3.3) |
//! | entity present with usage 0 | ratio +∞ → `Max_s · w_s` | real code: `ZeroDivisionError`; here `Max_s · w_s` |
//! | slice with `T_s = 0` | every ratio +∞ → `Max_s · w_s` | slice skipped |
//! | a slice map that is empty | as `T_s = 0` | whole history dropped → no correction (§3.2) |
//! | no slice factor at all | — (never happens) | the entity keeps `E_e` |
//!
//! Common to both: weights are relative (divided by their sum, as `_fillSlices` does); an empty
//! `history` means no correction; all expected shares 0 (a `ZeroDivisionError` in the real code)
//! returns the input unchanged; `n_e = 0` makes the ratio 0, clamped to `1/Max_s`, so the
//! corrected share is 0 (§3.3 "Zero share"). Non-finite or negative shares and usages are read
//! as 0, `MaxCorrection`/`MaxGlobalCorrection` below 1 (or NaN) as 1, and weights that are not
//! finite and ≥ 0 as 0 (all-zero weights as equal weights): [`validate`] rejects such
//! configurations, the function only guarantees that no NaN comes out.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::engine::Period;

/// Which behaviour the corrector follows (seed 002 vs reference §3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum CorrectorVariant {
    /// The seed's formula: every slice factor is clamped then weighted; an entity without usage
    /// in a slice gets `Max_s · w_s`.
    #[default]
    Seed,
    /// DIRAC 9.1.22 `BaseHistoryCorrector.applyCorrection` (reference §3.3): an absent entity gets
    /// the raw `Max_s`, zero-usage slices are skipped, an empty slice drops the history.
    Dirac9,
}

/// One time slice of an instance: CS sub-section `<Instance>/<Slice>` (seed 002 example;
/// reference §3.1, `BaseHistoryCorrector._fillSlices`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimeSlice {
    /// Section name, e.g. `WeekSlice`.
    pub name: String,
    /// `TimeSpan` in seconds: the history window `[now − span, now]` (default 604800).
    pub time_span_s: f64,
    /// `Weight`, relative to the other slices of the instance (default 1).
    pub weight: f64,
    /// `MaxCorrection`: the slice factor is clamped to `[1/max, max]` (default 3).
    pub max_correction: f64,
}

impl Default for TimeSlice {
    fn default() -> Self {
        Self { name: String::new(), time_span_s: 604_800.0, weight: 1.0, max_correction: 3.0 }
    }
}

/// One corrector instance: CS section `WMSHistory/<Instance>` (seed 002; reference §3.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CorrectorInstance {
    /// Section name, e.g. `GroupsInstance`.
    pub name: String,
    /// `Group`: `None` = the global instance correcting groups; `Some(g)` corrects the users of `g`.
    pub group: Option<String>,
    /// Global cap `[1/x, x]`. The seed calls it `MaxGlobalCorrectionFactor`; DIRAC 9 reads only
    /// `MaxGlobalCorrection`, default 5 (reference §3.1 ⚠).
    pub max_global_correction: f64,
    /// The time slices, in CS order.
    pub slices: Vec<TimeSlice>,
}

impl Default for CorrectorInstance {
    fn default() -> Self {
        Self { name: String::new(), group: None, max_global_correction: 5.0, slices: Vec::new() }
    }
}

/// Share-correction settings (`JobScheduling/ShareCorrections`, reference §3.1; seed 002).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ShareCorrections {
    /// `JobScheduling/EnableSharesCorrection` (default false, reference §2.3).
    pub enabled: bool,
    /// Seed formula or DIRAC 9 behaviour; left out, `dirac.preset` decides.
    pub variant: Option<CorrectorVariant>,
    /// `UpdateHistoryPeriod`: history is refreshed at most this often (default 900 s, §3.1).
    pub update_history_period_s: Period,
    /// The `WMSHistory` instances (at most one per group key, `SharesCorrector` L66-71).
    pub instances: Vec<CorrectorInstance>,
}

impl Default for ShareCorrections {
    fn default() -> Self {
        Self { enabled: false, variant: None, update_history_period_s: Period::secs(900.0), instances: Vec::new() }
    }
}

/// A share or usage as the corrector reads it: finite and ≥ 0, anything else is 0.
fn amount(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 { x } else { 0.0 }
}

/// A cap as the corrector reads it: at least 1 (NaN → 1); +∞ is kept.
fn cap(x: f64) -> f64 {
    if x >= 1.0 { x } else { 1.0 }
}

/// `max(min(x, hi), 1/hi)`, the seed's clamp (never panics, unlike `f64::clamp`).
fn clamp_to(x: f64, hi: f64) -> f64 {
    x.min(hi).max(1.0 / hi)
}

/// `x · w`, with `w = 0` giving 0 even when `x` is +∞.
fn weighted(x: f64, w: f64) -> f64 {
    if w == 0.0 { 0.0 } else { x * w }
}

/// Values divided by their sum, computed without overflow (divide by the maximum first).
/// Returns `None` if every value is 0.
fn normalised(values: &[f64]) -> Option<Vec<f64>> {
    let max = values.iter().copied().fold(0.0, f64::max);
    if max <= 0.0 {
        return None;
    }
    let scaled: Vec<f64> = values.iter().map(|v| v / max).collect();
    let sum: f64 = scaled.iter().sum();
    Some(scaled.into_iter().map(|v| v / sum).collect())
}

/// The slice weights normalised to sum 1 (`_fillSlices` L44-48; the seed's "80%/20%").
/// Taking the seed's 80/20 literally would make every sum ≥ 80·0.5 + 20·0.2 = 44 and always
/// saturate the global clamp, so weights are relative in both variants.
fn slice_weights(slices: &[TimeSlice]) -> Vec<f64> {
    let raw: Vec<f64> = slices.iter().map(|s| amount(s.weight)).collect();
    normalised(&raw).unwrap_or_else(|| vec![1.0 / slices.len().max(1) as f64; slices.len()])
}

/// The ratio `n / u`: 0 when `n = 0` (zero share), +∞ when `u = 0` (no usage).
fn ratio(n: f64, u: f64) -> f64 {
    if n <= 0.0 {
        0.0
    } else if u <= 0.0 {
        f64::INFINITY
    } else {
        n / u
    }
}

/// The correction factor of every entity of `expected` (seed 002 "final formula"; reference
/// §3.3). `history[i]` is the usage of slice `inst.slices[i]` (entity → average number of
/// running jobs over its TimeSpan); maps beyond the slices are ignored. See the module doc for
/// the variants and the edge cases. Every factor is finite or +∞ (only with an infinite cap),
/// never NaN.
///
/// Entities are keyed by any ordered type: DIRAC keys them by name; the simulation by a rank
/// that sorts like the name, so sums run in the same order.
pub fn correction_factors<K: Ord + Clone>(
    inst: &CorrectorInstance,
    variant: CorrectorVariant,
    expected: &BTreeMap<K, f64>,
    history: &[BTreeMap<K, f64>],
) -> BTreeMap<K, f64> {
    let no_correction = || expected.keys().map(|e| (e.clone(), 1.0)).collect();
    let shares: Vec<f64> = expected.values().map(|&v| amount(v)).collect();
    let Some(norm) = normalised(&shares) else { return no_correction() };
    let k = inst.slices.len();
    if history.is_empty() || k == 0 {
        return no_correction();
    }
    // DIRAC 9: a slice whose accounting data is empty drops the whole history (§3.2, L59-66).
    if variant == CorrectorVariant::Dirac9 && (history.len() < k || history[..k].iter().any(BTreeMap::is_empty)) {
        return no_correction();
    }
    let weights = slice_weights(&inst.slices);
    let empty = BTreeMap::new();
    let mut sums: Vec<Option<f64>> = vec![None; expected.len()];
    for (i, slice) in inst.slices.iter().enumerate() {
        let h = history.get(i).unwrap_or(&empty);
        let (max_s, w) = (cap(slice.max_correction), weights[i]);
        let usage: Vec<Option<f64>> = expected.keys().map(|e| h.get(e).map(|&u| amount(u))).collect();
        let present: Vec<f64> = usage.iter().map(|u| u.unwrap_or(0.0)).collect();
        let norm_usage = normalised(&present);
        if norm_usage.is_none() && variant == CorrectorVariant::Dirac9 {
            continue; // T_s == 0: "Slice usage is 0, skipping slice" (L139-141)
        }
        for (j, sum) in sums.iter_mut().enumerate() {
            let c = match (usage[j], &norm_usage, variant) {
                (None, _, CorrectorVariant::Dirac9) => max_s, // raw, not weighted (L155-157)
                (Some(_), Some(u), _) => weighted(clamp_to(ratio(norm[j], u[j]), max_s), w),
                _ => weighted(clamp_to(ratio(norm[j], 0.0), max_s), w),
            };
            *sum = Some(sum.unwrap_or(0.0) + c);
        }
    }
    let global = cap(inst.max_global_correction);
    expected.keys().zip(sums).map(|(e, s)| (e.clone(), s.map_or(1.0, |s| clamp_to(s, global)))).collect()
}

/// The corrected share of every entity of `expected` (`applyCorrection`, reference §3.3):
/// `E_e · f_e` with `f_e` from [`correction_factors`], not renormalised. `expected` maps entity →
/// expected share (groups → JobShare, or users → `S_g/U_g`); `history[i]` maps entity → usage
/// over slice `i` (average number of running jobs over the slice's TimeSpan). Shares that are
/// not finite and ≥ 0 come out as 0; otherwise, when every share is 0 or there is no history,
/// the input comes back unchanged. Never NaN.
pub fn correct_shares<K: Ord + Clone>(
    inst: &CorrectorInstance,
    variant: CorrectorVariant,
    expected: &BTreeMap<K, f64>,
    history: &[BTreeMap<K, f64>],
) -> BTreeMap<K, f64> {
    let factors = correction_factors(inst, variant, expected, history);
    expected
        .iter()
        .map(|(e, &v)| {
            let v = amount(v);
            let f = factors.get(e).copied().unwrap_or(1.0);
            (e.clone(), if v == 0.0 { 0.0 } else { v * f })
        })
        .collect()
}

/// Semantic problems of one instance as `(field path, message)` (reference §3.1 defaults and
/// ranges): at least one slice, unique slice names, positive finite time spans, finite
/// non-negative weights with a positive sum, `max_correction` and `max_global_correction` finite
/// and ≥ 1.
pub fn validate(inst: &CorrectorInstance) -> Vec<(String, String)> {
    let mut p = Vec::new();
    let mut push = |path: String, msg: &str| p.push((path, msg.to_string()));
    if !(inst.max_global_correction.is_finite() && inst.max_global_correction >= 1.0) {
        push("max_global_correction".into(), "must be a finite number ≥ 1");
    }
    if inst.slices.is_empty() {
        push("slices".into(), "at least one time slice is needed");
    }
    let mut seen = BTreeMap::new();
    for (i, s) in inst.slices.iter().enumerate() {
        if let Some(first) = seen.insert(s.name.as_str(), i) {
            p.push((format!("slices[{i}].name"), format!("duplicate slice name `{}` (also slices[{first}])", s.name)));
        }
        if !(s.time_span_s.is_finite() && s.time_span_s > 0.0) {
            p.push((format!("slices[{i}].time_span_s"), "must be a positive number of seconds".into()));
        }
        if !(s.weight.is_finite() && s.weight >= 0.0) {
            p.push((format!("slices[{i}].weight"), "must be a finite number ≥ 0".into()));
        }
        if !(s.max_correction.is_finite() && s.max_correction >= 1.0) {
            p.push((format!("slices[{i}].max_correction"), "must be a finite number ≥ 1".into()));
        }
    }
    let weight_sum: f64 = inst.slices.iter().map(|s| amount(s.weight)).sum();
    if !inst.slices.is_empty() && weight_sum <= 0.0 {
        p.push(("slices".into(), "the slice weights must have a positive sum".into()));
    }
    p
}

/// Semantic problems of the whole settings, paths prefixed with `instances[i].`: every
/// instance as in [`validate`], and at most one instance per
/// group key (`SharesCorrector` L66-71 keeps only the first).
pub fn validate_share_corrections(sc: &ShareCorrections) -> Vec<(String, String)> {
    let mut p = Vec::new();
    let mut keys = BTreeMap::new();
    for (i, inst) in sc.instances.iter().enumerate() {
        p.extend(validate(inst).into_iter().map(|(path, m)| (format!("instances[{i}].{path}"), m)));
        if let Some(first) = keys.insert(inst.group.as_deref(), i) {
            let m = format!("instances[{first}] already corrects the same entities (one instance per group)");
            p.push((format!("instances[{i}].group"), m));
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED: CorrectorVariant = CorrectorVariant::Seed;
    const D9: CorrectorVariant = CorrectorVariant::Dirac9;

    fn slice(name: &str, time_span_s: f64, weight: f64, max_correction: f64) -> TimeSlice {
        TimeSlice { name: name.into(), time_span_s, weight, max_correction }
    }

    /// The instance of seed 002's example and of the reference §3.3 worked vectors.
    fn week_hour() -> CorrectorInstance {
        CorrectorInstance {
            name: "GroupsInstance".into(),
            group: None,
            max_global_correction: 3.0,
            slices: vec![slice("WeekSlice", 604_800.0, 80.0, 2.0), slice("HourSlice", 3600.0, 20.0, 5.0)],
        }
    }

    fn map(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        pairs.iter().map(|&(k, v)| (k.to_string(), v)).collect()
    }

    fn assert_close(got: &BTreeMap<String, f64>, want: &[(&str, f64)]) {
        assert_eq!(got.len(), want.len(), "{got:?}");
        for &(k, w) in want {
            let g = got[k];
            assert!((g - w).abs() <= 1e-6 * w.abs().max(1e-12), "{k}: got {g}, want {w} ({got:?})");
        }
    }

    #[test]
    fn reference_vector_two_groups_both_variants() {
        let e = map(&[("A", 1000.0), ("B", 1000.0)]);
        let h = [map(&[("A", 300.0), ("B", 100.0)]), map(&[("A", 50.0), ("B", 50.0)])];
        for v in [SEED, D9] {
            assert_close(&correct_shares(&week_hour(), v, &e, &h), &[("A", 733.333_333_333), ("B", 1800.0)]);
            assert_close(&correction_factors(&week_hour(), v, &e, &h), &[("A", 2.2 / 3.0), ("B", 1.8)]);
        }
    }

    #[test]
    fn reference_vector_absent_entity_dirac9_gets_raw_max() {
        let e = map(&[("A", 1000.0), ("B", 1000.0), ("C", 1000.0)]);
        let h = [map(&[("A", 300.0), ("B", 100.0), ("C", 10.0)]), map(&[("A", 50.0), ("B", 50.0)])];
        // A 533.3, B 1226.7 (= 3680/3: 4.1/3 · 0.8 + 2/3 · 0.2), C 3000 (2 · 0.8 + 5 = 6.6, capped at 3).
        let want = [("A", 533.333_333_333), ("B", 1_226.666_666_667), ("C", 3000.0)];
        assert_close(&correct_shares(&week_hour(), D9, &e, &h), &want);
        // Seed: C gets 2 · 0.8 + 5 · 0.2 = 2.6.
        assert_close(&correct_shares(&week_hour(), SEED, &e, &h), &[want[0], want[1], ("C", 2600.0)]);
    }

    #[test]
    fn weights_are_relative() {
        let e = map(&[("A", 1000.0), ("B", 1000.0)]);
        let h = [map(&[("A", 300.0), ("B", 100.0)]), map(&[("A", 50.0), ("B", 50.0)])];
        let mut inst = week_hour();
        let want = correct_shares(&inst, SEED, &e, &h);
        for (w1, w2) in [(0.8, 0.2), (4.0, 1.0)] {
            (inst.slices[0].weight, inst.slices[1].weight) = (w1, w2);
            assert_close(&correct_shares(&inst, SEED, &e, &h), &[("A", want["A"]), ("B", want["B"])]);
        }
    }

    #[test]
    fn zero_usage_slice_skipped_by_dirac9_maxed_by_seed() {
        let e = map(&[("A", 1000.0), ("B", 1000.0)]);
        // Hour slice: both present with usage 0, or only an entity outside E: T_s = 0.
        for hour in [map(&[("A", 0.0), ("B", 0.0)]), map(&[("Z", 7.0)])] {
            let h = [map(&[("A", 300.0), ("B", 100.0)]), hour];
            assert_close(&correct_shares(&week_hour(), D9, &e, &h), &[("A", 1600.0 / 3.0), ("B", 1600.0)]);
            // Seed: every entity gets 5 · 0.2 = 1 from the hour slice.
            assert_close(&correct_shares(&week_hour(), SEED, &e, &h), &[("A", 4600.0 / 3.0), ("B", 2600.0)]);
        }
    }

    #[test]
    fn dirac9_all_slices_skipped_keeps_shares() {
        let e = map(&[("A", 1000.0), ("B", 500.0)]);
        let h = [map(&[("A", 0.0)]), map(&[("Z", 1.0)])];
        assert_eq!(correct_shares(&week_hour(), D9, &e, &h), e);
    }

    #[test]
    fn dirac9_empty_slice_map_drops_the_history() {
        let e = map(&[("A", 1000.0), ("B", 1000.0)]);
        let h = [map(&[("A", 300.0), ("B", 100.0)]), BTreeMap::new()];
        assert_eq!(correct_shares(&week_hour(), D9, &e, &h), e);
        assert_eq!(correct_shares(&week_hour(), D9, &e, &h[..1]), e, "a missing slice is an empty one");
        // Seed: the empty hour slice boosts everybody by 5 · 0.2.
        assert_close(&correct_shares(&week_hour(), SEED, &e, &h), &[("A", 4600.0 / 3.0), ("B", 2600.0)]);
    }

    #[test]
    fn empty_history_no_slices_or_zero_shares_change_nothing() {
        let e = map(&[("A", 1000.0), ("B", 0.0)]);
        let h = [map(&[("A", 1.0)]), map(&[("A", 1.0)])];
        let no_slices = CorrectorInstance { slices: vec![], ..week_hour() };
        let zero = map(&[("A", 0.0), ("B", 0.0)]);
        for v in [SEED, D9] {
            assert_eq!(correct_shares(&week_hour(), v, &e, &[]), e);
            assert_eq!(correct_shares(&no_slices, v, &e, &h), e);
            assert_eq!(correct_shares(&week_hour(), v, &zero, &h), zero);
            assert_eq!(correction_factors(&week_hour(), v, &zero, &h), map(&[("A", 1.0), ("B", 1.0)]));
            assert!(correct_shares(&week_hour(), v, &BTreeMap::new(), &h).is_empty());
        }
    }

    #[test]
    fn present_with_zero_usage_gets_weighted_max() {
        // The real code raises ZeroDivisionError here (reference §3.3); both variants use +∞.
        let e = map(&[("A", 1000.0), ("B", 1000.0)]);
        let h = [map(&[("A", 0.0), ("B", 100.0)]), map(&[("A", 50.0), ("B", 50.0)])];
        for v in [SEED, D9] {
            let f = correction_factors(&week_hour(), v, &e, &h);
            assert!((f["A"] - (2.0 * 0.8 + 0.2)).abs() < 1e-12, "{f:?}");
            assert!((f["B"] - (0.5 * 0.8 + 0.2)).abs() < 1e-12, "{f:?}");
        }
    }

    #[test]
    fn zero_share_entity_is_clamped_low_and_stays_zero() {
        let inst = CorrectorInstance { slices: vec![slice("W", 1.0, 1.0, 2.0)], ..week_hour() };
        let e = map(&[("A", 1000.0), ("Z", 0.0)]);
        for (v, z_absent) in [(SEED, 0.5), (D9, 2.0)] {
            let h = [map(&[("A", 10.0), ("Z", 10.0)])];
            assert_eq!(correction_factors(&inst, v, &e, &h)["Z"], 0.5);
            assert_eq!(correct_shares(&inst, v, &e, &h)["Z"], 0.0);
            let h = [map(&[("A", 10.0)])];
            assert_eq!(correction_factors(&inst, v, &e, &h)["Z"], z_absent);
            assert_eq!(correct_shares(&inst, v, &e, &h)["Z"], 0.0);
        }
    }

    #[test]
    fn non_finite_inputs_never_give_nan() {
        let e = map(&[("A", f64::NAN), ("B", f64::INFINITY), ("C", -3.0), ("D", 1e308), ("E", 1e308)]);
        let h = [map(&[("A", f64::NAN), ("D", 1e308), ("E", 1e308)]), map(&[("C", f64::INFINITY)])];
        let mut inst = week_hour();
        inst.slices[0].max_correction = f64::INFINITY;
        inst.slices[1].weight = f64::NAN;
        inst.max_global_correction = 0.0;
        for v in [SEED, D9] {
            let out = correct_shares(&inst, v, &e, &h);
            assert!(out.values().all(|x| !x.is_nan()), "{out:?}");
            assert_eq!((out["A"], out["B"], out["C"]), (0.0, 0.0, 0.0));
        }
    }

    /// A tiny deterministic LCG (Knuth's MMIX constants), so the test needs no `rand`.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            self.0 >> 33
        }
        fn pick(&mut self, options: &[f64]) -> f64 {
            options[(self.next() % options.len() as u64) as usize]
        }
    }

    #[test]
    fn property_no_nan_and_factors_within_global_bounds() {
        let mut r = Lcg(2009);
        let values = [0.0, 0.0, 1e-300, 0.5, 1.0, 3.0, 10.0, 333.3, 1000.0, 1e6, 1e300];
        let caps = [1.0, 1.5, 2.0, 3.0, 5.0, 100.0];
        for _ in 0..3000 {
            let n_slices = 1 + (r.next() % 4) as usize;
            let slices = (0..n_slices)
                .map(|i| slice(&format!("s{i}"), 3600.0, r.pick(&[0.0, 1.0, 20.0, 80.0]), r.pick(&caps)))
                .collect();
            let inst = CorrectorInstance { slices, max_global_correction: r.pick(&caps), ..week_hour() };
            let n = (r.next() % 6) as usize;
            let e: BTreeMap<String, f64> = (0..n).map(|i| (format!("e{i}"), r.pick(&values))).collect();
            let mut h: Vec<BTreeMap<String, f64>> = vec![BTreeMap::new(); (r.next() % 5) as usize];
            for m in &mut h {
                for i in 0..7 {
                    if r.next() % 3 != 0 {
                        m.insert(format!("e{i}"), r.pick(&values));
                    }
                }
            }
            let g = inst.max_global_correction;
            for v in [SEED, D9] {
                let f = correction_factors(&inst, v, &e, &h);
                let out = correct_shares(&inst, v, &e, &h);
                assert_eq!(f.len(), e.len());
                assert!(f.values().all(|&x| x >= 1.0 / g - 1e-12 && x <= g + 1e-12), "{inst:?} {e:?} {h:?} {f:?}");
                assert!(out.values().all(|x| !x.is_nan() && *x >= 0.0), "{out:?}");
                assert!(out.iter().all(|(k, &x)| x == 0.0 || e[k] > 0.0));
            }
        }
    }

    #[test]
    fn validate_accepts_the_seed_instance_and_names_every_problem() {
        assert!(validate(&week_hour()).is_empty());
        let bad = CorrectorInstance {
            max_global_correction: 0.5,
            slices: vec![slice("W", 0.0, -1.0, 0.9), slice("W", f64::NAN, 0.0, f64::INFINITY)],
            ..week_hour()
        };
        let paths: Vec<String> = validate(&bad).into_iter().map(|(p, _)| p).collect();
        let want = [
            "max_global_correction",
            "slices[0].time_span_s",
            "slices[0].weight",
            "slices[0].max_correction",
            "slices[1].name",
            "slices[1].time_span_s",
            "slices[1].max_correction",
            "slices",
        ];
        assert_eq!(paths, want);
        let empty = validate(&CorrectorInstance { slices: vec![], ..week_hour() });
        assert_eq!(empty, vec![("slices".to_string(), "at least one time slice is needed".to_string())]);
        let sc = ShareCorrections {
            instances: vec![week_hour(), CorrectorInstance { slices: vec![], ..week_hour() }],
            ..Default::default()
        };
        let paths: Vec<String> = validate_share_corrections(&sc).into_iter().map(|(p, _)| p).collect();
        assert_eq!(paths, ["instances[1].slices", "instances[1].group"]);
    }

    #[test]
    fn serde_defaults_and_unknown_fields() {
        let sc: ShareCorrections = ron::from_str("(instances: [(slices: [()])])").unwrap();
        assert_eq!((sc.enabled, sc.variant, sc.update_history_period_s), (false, None, Period::secs(900.0)));
        let e = ron::from_str::<ShareCorrections>("(update_history_period_s: 0.0004)").unwrap_err().to_string();
        assert!(e.contains("at least 1 s"), "{e}");
        assert_eq!(sc.instances[0].max_global_correction, 5.0);
        assert_eq!(sc.instances[0].slices[0], TimeSlice::default());
        assert_eq!((TimeSlice::default().time_span_s, TimeSlice::default().weight), (604_800.0, 1.0));
        assert_eq!(TimeSlice::default().max_correction, 3.0);
        let v: ShareCorrections = ron::from_str("(variant: Some(Dirac9))").unwrap();
        assert_eq!(v.variant, Some(D9));
        assert!(ron::from_str::<TimeSlice>("(weigth: 2.0)").is_err());
        assert!(ron::from_str::<CorrectorInstance>("(MaxGlobalCorrectionFactor: 2.0)").is_err());
    }
}
