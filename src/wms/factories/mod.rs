//! Pilot factories (seed 003 §1-§3), a [`Provisioner`](crate::wms::provision::Provisioner): each `factory[]` entry of a scenario
//! submits pilots to its site's CEs in place of the WMS's own submission there (DIRAC's
//! director and PanDA's Harvester skip those CEs), and its pilots fetch jobs from the WMS through
//! [`Wms::fetch_job`](crate::wms::Wms::fetch_job) — DIRAC's Matcher, PanDA's `getJob`.
//!
//! * **Generic pilots** (GPF): the Generator submits at rate Gp ([`Generator`](crate::factory::generic::Generator)) each cycle. A
//!   pilot that reaches a worker node runs the pilot script (tp), asks for one job, and runs it
//!   (its fetch tpw, then the payload): `Tsw + tp + tpw + Tj` from submission to the job's end.
//!   A pilot that gets no job exits at once; one whose job ended exits.
//! * **Startd pilots** (SPF): the Generator keeps the standby count of [`StandbyController`](crate::factory::standby::StandbyController)
//!   queued. A startd pilot holds `vms` job slots of its CE for its lifetime (drawn from the
//!   factory's distribution, capped at the CE's walltime), runs the pilot script every
//!   `pilot_interval_s` ([`StartdPilot`](crate::factory::startd::StartdPilot)), and each run that finds a free VM asks, tp' later, for
//!   a job of the kind the policy says. Jobs on VMs run at the rates [`StartdPilot::rates`](crate::factory::startd::StartdPilot::rates) gives
//!   (a background job suspended while a foreground job runs): each job's remaining work is kept
//!   here and its end rescheduled at every change. At removal its jobs are requeued in their WMS
//!   or killed.
//!
//! Everything here is driven by the provisioner's timers and its pilots' news; the pure
//! decisions are `crate::factory`'s, the startd VMs' clocks are in `startd_vms`. Randomness: one stream per factory, keyed by its
//! identity (`factory:<site>:<PanDA queue or DIRAC>:<CEs>/lifetime`, see
//! [`FactoryConfig::identity`](crate::scenario::factory::FactoryConfig::identity)), so that reordering or adding factories never changes the
//! draws of another (DESIGN.md, "Determinism").

mod factory;
mod generator;
mod provisioner;
mod startd_vms;
pub mod summary;

pub use factory::{CycleRow, Factory, FactoryStats, Mode};
pub use generator::Demand;
pub use provisioner::Factories;

#[cfg(test)]
mod tests;
