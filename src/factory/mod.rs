//! The pilot factory of seed 003 (ATLAS PilotFactoryPlan, 2006) as pure decision modules, beside
//! `dirac` and `panda`: plain functions and small structs over explicit inputs, randomness passed
//! in, never reading a clock (DESIGN.md, "Layers"); the world runs them (`wms::factories`).
//!
//! * [`generic`] — the Generic Pilot Factory (GPF, seed §1): the Generator's rate policy (Gp
//!   pilots per minute into the site's schedd, capped by what it observes queued or running) and
//!   the seed's closed form ("Pilot Submission Efficiency"): x jobs per (Tsw + Tj).
//! * [`startd`] — the Startd Pilot (seed §2): one batch slot split into VMs, the pilot script run
//!   at a fixed rate, background (production) and foreground (analysis) jobs, suspension or
//!   preemption, removal by the batch system; and the Startd-based Pilot Factory's closed form
//!   (seed §3): after the first round, x jobs per (tp' + tpw' + Tj) per VM.
//! * [`standby`] — how many standby startd pilots the Generator keeps queued (seed §3's open
//!   question): a fixed count, a count proportional to the queued jobs, or an adaptive
//!   controller that learns from what it observes (the seed's "learning algorithm").
//!
//! Times are [`SimTime`](crate::engine::SimTime) / [`SimDuration`](crate::engine::SimDuration)
//! (integer milliseconds) where the world will pass them, `f64` seconds in the closed forms.

pub mod generic;
pub mod standby;
pub mod startd;

pub use crate::workload::JobKind;

/// `ceil(v)` with a tolerance of 1e-9, so that a float product of exact decimals
/// (0.07 × 100 = 7.000000000000001) does not round up to the next integer. Negative and NaN
/// values give 0; values beyond `u32::MAX` saturate.
pub(crate) fn ceil_tol(v: f64) -> u32 {
    if v.is_nan() || v <= 0.0 { 0 } else { (v - 1e-9).ceil().max(0.0) as u32 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceil_tolerates_rounding_noise() {
        assert_eq!(0.07 * 100.0, 7.000000000000001);
        assert_eq!(ceil_tol(0.07 * 100.0), 7);
        assert_eq!(ceil_tol(7.01), 8);
        assert_eq!((ceil_tol(-3.0), ceil_tol(f64::NAN), ceil_tol(0.0)), (0, 0, 0));
        assert_eq!(ceil_tol(1e30), u32::MAX);
    }
}
