//! PanDA's decision modules (seed 004; reference `panda.md`), pure and engine-agnostic like
//! DIRAC's: plain functions and small structs over explicit inputs, each named after
//! the PanDA component it reimplements. Where panda-server 1.0.4 differs from the seed page
//! (⚠ in the reference), the seed is the default and the code a named variant.

pub mod anal_broker;
pub mod arch;
pub mod common;
pub mod gdpconfig;
pub mod gshare;
pub mod harvester;
pub mod job_broker;
pub mod network;
pub mod pyfmt;
pub mod task_broker;
pub mod timeouts;
