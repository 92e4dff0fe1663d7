//! The discrete-event engine: simulated time, the event queue, named random streams,
//! exact samplers and the run digest.
//!
//! Everything here is deterministic: the same scenario and master seed give the same
//! events in the same order, bit for bit, in every build and on every platform. Time is
//! integer milliseconds ([`SimTime`]), ties pop in insertion order ([`EventQueue`]), each
//! purpose draws from its own stream derived from `(master seed, name)` ([`RngStreams`]),
//! samplers use only pure-Rust math ([`dist`]), and every processed event is folded into a
//! [`Digest`] so two runs can be compared by one number.

pub mod digest;
pub mod dist;
pub mod distribution;
pub mod period;
pub mod prefetch;
pub mod queue;
#[cfg(test)]
mod queue_check;
pub mod rng;
pub mod staged;
pub mod time;

pub use digest::Digest;
pub use period::Period;
pub use prefetch::prefetch;
pub use queue::EventQueue;
pub use rng::{RngStreams, SimRng};
pub use staged::StagedQueue;
pub use time::{OptTime, SimDuration, SimTime};
