//! The grid model, neutral to any WMS: sites, CEs with their batch queues and slots, and
//! pilots (DESIGN.md, "Layers"). [`Grid`] is the CE life cycle as one state machine shared by
//! every WMS (submit → middleware wait, abort or stuck → batch queue → slots → end); it does
//! not own the event queue: it returns what to schedule ([`GridEvent`]) and what happened
//! ([`Transition`]), and the simulation applies both.
//!
//! Static configuration is in [`config`], the state machine in [`ce`], pilots in [`pilot`],
//! the GPUs they hold in [`gpu`],
//! the middleware's CE ranking in [`ranking`]. Data: file transfers over the links in
//! [`network`] (the same pattern: it returns the event to schedule), storage space in
//! [`storage`].

pub mod ce;
pub mod config;
pub mod gpu;
pub mod network;
pub mod pilot;
pub mod ranking;
pub mod storage;

pub use ce::{CeState, Grid, GridEvent, PilotCounts, Refusal, Transition};
pub use pilot::{Pilot, PilotShape, PilotStatus, RunningJobs};
