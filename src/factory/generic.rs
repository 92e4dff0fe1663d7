//! `factory::generic` — the Generic Pilot Factory (GPF, seed 003 §1 "Pilot Factory with Generic
//! Pilot" and "Pilot Submission Efficiency").
//!
//! The factory is a Condor schedd glided into the site's head node and a Generator running under
//! it; the Generator submits generic pilots to the schedd, which passes them to the native batch
//! system. "A policy for the rate at which pilots are given to the local batch system can be
//! adjusted via the Generator" (§1): here, a rate Gp in pilots per minute, with optional caps on
//! the pilots queued at the schedd and batch system and on all of them (queued + running).
//!
//! ```text
//! credit += Gp[milli-pilots/min] × elapsed[ms]            (integers: no float drift)
//! due     = credit / (1000 × 60 000)                      whole pilots earned
//! pilots  = min(due, max_queued − queued, max_total − queued − running)
//! credit  = credit − pilots × PILOT, or, when a cap cut `due`, credit mod PILOT
//! ```
//!
//! A cap drops the pilots it withholds (the Generator does not bank them and burst when the cap
//! lifts) but keeps the fraction of a pilot earned so far, so that over any run without a cap
//! the Generator submits exactly `⌊Gp × elapsed⌋` pilots, whatever its cycle lengths.
//!
//! Gp is kept to a thousandth of a pilot per minute (the scenario rejects a finer rate).

use serde::{Deserialize, Serialize};

use crate::engine::SimDuration;

/// Milli-pilots in a pilot: Gp is held as an integer number of milli-pilots per minute.
pub const MILLI_PER_PILOT: u64 = 1000;
/// Milliseconds in a minute (Gp is per minute, simulated time in milliseconds).
pub const MS_PER_MIN: u64 = 60_000;
/// One pilot in credit units (milli-pilot × ms / min): `1000 × 60 000`.
pub const PILOT: u128 = (MILLI_PER_PILOT as u128) * (MS_PER_MIN as u128);

/// The Generator's rate policy (seed 003 §1 and "Pilot Submission Efficiency").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorSettings {
    /// Gp: generic pilots per minute the Generator gives the schedd (≥ 0.001).
    pub rate_per_min: f64,
    /// Most generic pilots queued at the schedd and the batch system (submitted, not yet on a
    /// worker node); `None`: no cap.
    #[serde(default)]
    pub max_queued: Option<u32>,
    /// Most generic pilots queued or running; `None`: no cap.
    #[serde(default)]
    pub max_total: Option<u32>,
}

/// Gp as an integer number of milli-pilots per minute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate(u64);

impl Rate {
    /// Gp in pilots per minute, rounded to the nearest milli-pilot per minute; an error for a
    /// rate that is not finite, below 0.001 or beyond 10⁹ pilots per minute.
    pub fn per_min(gp: f64) -> Result<Rate, String> {
        if !(gp.is_finite() && (0.001..=1e9).contains(&gp)) {
            return Err(format!(
                "Gp must be a number of pilots per minute in [0.001, 1e9] (the Generator counts in milli-pilots), got {gp}"
            ));
        }
        Ok(Rate((gp * MILLI_PER_PILOT as f64).round() as u64))
    }

    /// Milli-pilots per minute.
    pub fn milli_per_min(self) -> u64 {
        self.0
    }
}

/// The fraction of a pilot the Generator has earned but not submitted, in credit units
/// ([`PILOT`] = one pilot). Starts at zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Carry(pub u128);

/// What the Generator observes at its cycle, for its caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Observed {
    /// Its generic pilots at the schedd or in the batch queue (submitted, not on a worker node).
    pub queued: u32,
    /// Its generic pilots running on worker nodes.
    pub running: u32,
}

/// Which cap cut a cycle's submissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cap {
    MaxQueued,
    MaxTotal,
}

/// One Generator cycle's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CyclePlan {
    /// Generic pilots to submit to the schedd now.
    pub pilots: u32,
    /// Whole pilots the rate had earned (≥ `pilots`).
    pub due: u64,
    /// The cap that made `pilots < due`, if one did.
    pub capped_by: Option<Cap>,
}

/// The rate policy, pure: the credit `carry` plus Gp × `elapsed` (time since the last cycle),
/// in whole pilots, less what the caps allow given `observed`. Returns the plan and the carry
/// for the next cycle (the module doc's rule).
pub fn rate_policy(
    rate: Rate,
    max_queued: Option<u32>,
    max_total: Option<u32>,
    carry: Carry,
    elapsed: SimDuration,
    observed: Observed,
) -> (CyclePlan, Carry) {
    let credit = carry.0 + u128::from(rate.0) * u128::from(elapsed.as_millis());
    let due = u64::try_from(credit / PILOT).unwrap_or(u64::MAX);
    let mut allowed = due;
    let mut capped_by = None;
    if let Some(m) = max_queued {
        let room = u64::from(m.saturating_sub(observed.queued));
        if room < allowed {
            (allowed, capped_by) = (room, Some(Cap::MaxQueued));
        }
    }
    if let Some(m) = max_total {
        let room = u64::from(m.saturating_sub(observed.queued.saturating_add(observed.running)));
        if room < allowed {
            (allowed, capped_by) = (room, Some(Cap::MaxTotal));
        }
    }
    let pilots = u32::try_from(allowed).unwrap_or(u32::MAX);
    let next = if capped_by.is_some() || u64::from(pilots) < due {
        credit % PILOT
    } else {
        credit - u128::from(pilots) * PILOT
    };
    (CyclePlan { pilots, due, capped_by }, Carry(next))
}

/// The GPF Generator: its settings and the carry between cycles. The world calls
/// [`Generator::cycle`] every Generator cycle with the time since the previous one.
#[derive(Debug, Clone, PartialEq)]
pub struct Generator {
    rate: Rate,
    max_queued: Option<u32>,
    max_total: Option<u32>,
    carry: Carry,
    submitted: u64,
}

impl Generator {
    /// A Generator with no credit yet; an error for a rate [`Rate::per_min`] rejects.
    pub fn new(s: &GeneratorSettings) -> Result<Generator, String> {
        Ok(Generator {
            rate: Rate::per_min(s.rate_per_min)?,
            max_queued: s.max_queued,
            max_total: s.max_total,
            carry: Carry::default(),
            submitted: 0,
        })
    }

    /// One cycle, `elapsed` after the previous one (or after the Generator started).
    pub fn cycle(&mut self, elapsed: SimDuration, observed: Observed) -> CyclePlan {
        let (plan, carry) = rate_policy(self.rate, self.max_queued, self.max_total, self.carry, elapsed, observed);
        self.carry = carry;
        self.submitted += u64::from(plan.pilots);
        plan
    }

    /// The credit carried to the next cycle.
    pub fn carry(&self) -> Carry {
        self.carry
    }

    /// Generic pilots submitted so far: the head node's load (seed §2).
    pub fn submitted(&self) -> u64 {
        self.submitted
    }
}

/// A closed-form throughput in jobs per second: the exact form of the seed's model and the
/// approximation the seed writes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClosedForm {
    /// The seed's model without its approximation.
    pub exact: f64,
    /// The seed's approximation.
    pub approx: f64,
}

/// GPF's throughput with `x` worker nodes allocated to pilots (seed 003 "Pilot Submission
/// Efficiency"): each node runs one generic pilot after another, each taking Tsw from the schedd
/// to the worker node, tp to run the pilot script, tpw to fetch its job and Tj to run it, so
///
/// ```text
/// exact  = x / (Tsw + tp + tpw + Tj)      jobs per second
/// approx = x / (Tsw + Tj)                 the seed's, with (Tj + tp + tpw) ≈ Tj
/// ```
///
/// The seed writes the period as "Tsp + Tj" in one place: from its own definitions it is
/// Tsw + Tj (Tsp is defined nowhere; Tsw is "the time for a pilot job to reach a worker node from
/// schedd"). Durations in seconds; a period of 0 gives an infinite throughput.
pub fn gpf_throughput(x: f64, tsw: f64, tj: f64, tp: f64, tpw: f64) -> ClosedForm {
    ClosedForm { exact: x / (tsw + tp + tpw + tj), approx: x / (tsw + tj) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(m: u64) -> SimDuration {
        SimDuration::from_millis(m)
    }

    #[test]
    fn the_rate_is_kept_in_milli_pilots() {
        assert_eq!(Rate::per_min(2.5).unwrap().milli_per_min(), 2500);
        assert_eq!(Rate::per_min(0.0014).unwrap().milli_per_min(), 1);
        assert!(Rate::per_min(0.0004).unwrap_err().contains("[0.001, 1e9]"));
        assert!(Rate::per_min(f64::NAN).is_err());
        assert!(Generator::new(&GeneratorSettings { rate_per_min: -1.0, max_queued: None, max_total: None }).is_err());
    }

    #[test]
    fn fractions_of_a_pilot_carry_over() {
        // Gp = 0.5/min, cycles of 60 s: 0, 1, 0, 1, …
        let rate = Rate::per_min(0.5).unwrap();
        let (p1, c1) = rate_policy(rate, None, None, Carry(0), ms(60_000), Observed::default());
        assert_eq!((p1.pilots, c1), (0, Carry(PILOT / 2)));
        let (p2, c2) = rate_policy(rate, None, None, c1, ms(60_000), Observed::default());
        assert_eq!((p2.pilots, c2, p2.capped_by), (1, Carry(0), None));
    }

    #[test]
    fn many_irregular_cycles_give_exactly_gp_times_elapsed() {
        // Gp = 0.7/min over 10 000 cycles of 61 234 ms, 17 ms, 3 600 001 ms in turn: no drift.
        let mut g =
            Generator::new(&GeneratorSettings { rate_per_min: 0.7, max_queued: None, max_total: None }).unwrap();
        let steps = [61_234u64, 17, 3_600_001];
        let mut total_ms = 0u128;
        for i in 0..10_000 {
            let d = steps[i % 3];
            total_ms += u128::from(d);
            g.cycle(ms(d), Observed::default());
            // Invariant after every cycle: submitted + carry = Gp × elapsed, exactly.
            assert_eq!(u128::from(g.submitted()) * PILOT + g.carry().0, 700 * total_ms);
        }
        // 10 000 cycles: 3334 × 61 234 + 3333 × 17 + 3333 × 3 600 001 = 12 203 014 150 ms
        // = 203 383.569 166… min; × 0.7 = 142 368.498 416… pilots: 142 368 submitted.
        assert_eq!(total_ms, 12_203_014_150);
        assert_eq!(g.submitted(), 142_368);
        assert_eq!(g.carry().0, 700 * total_ms - 142_368 * PILOT);
    }

    #[test]
    fn caps_cut_the_cycle_and_drop_whole_pilots_withheld() {
        let rate = Rate::per_min(10.0).unwrap();
        // 90 s at 10/min = 15 pilots; 8 queued of max 12: 4 allowed; the half pilot stays.
        let obs = Observed { queued: 8, running: 30 };
        let (p, c) = rate_policy(rate, Some(12), None, Carry(PILOT / 2), ms(90_000), obs);
        assert_eq!((p.pilots, p.due, p.capped_by, c), (4, 15, Some(Cap::MaxQueued), Carry(PILOT / 2)));
        // max_total 40 with 38 queued + running: 2 allowed, the tighter cap names itself.
        let (p, _) = rate_policy(rate, Some(12), Some(40), Carry(0), ms(90_000), obs);
        assert_eq!((p.pilots, p.capped_by), (2, Some(Cap::MaxTotal)));
        // Over the caps already: 0, never negative.
        let (p, _) = rate_policy(rate, Some(5), Some(10), Carry(0), ms(90_000), obs);
        assert_eq!(p.pilots, 0);
        // A cap that does not bite changes nothing.
        let (p, c) = rate_policy(rate, Some(100), Some(100), Carry(0), ms(90_000), obs);
        assert_eq!((p.pilots, p.capped_by, c), (15, None, Carry(0)));
    }

    #[test]
    fn gpf_closed_form_with_the_seed_numbers() {
        // x = 100 nodes, Tsw = 30 min, Tj = 2 h, tp = tpw = 1 min.
        let m = 60.0;
        let f = gpf_throughput(100.0, 30.0 * m, 120.0 * m, 1.0 * m, 1.0 * m);
        assert_eq!(f.approx, 100.0 / (150.0 * m)); // 100 jobs per 150 min: 40 jobs/h
        assert_eq!(f.exact, 100.0 / (152.0 * m)); // 100 jobs per 152 min: 39.47 jobs/h
        assert!((f.approx * 3600.0 - 40.0).abs() < 1e-9);
        assert!((f.exact * 3600.0 - 39.473_684_210_526_315).abs() < 1e-9);
    }
}
