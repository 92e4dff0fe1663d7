//! The DIRAC decision modules, pure and engine-agnostic: plain functions and small structs
//! over explicit inputs, randomness passed in. Each is named after the DIRAC component it
//! reimplements and cites the seed and reference sections it follows.

pub mod corrector;
pub mod director;
pub mod job_agent;
pub mod levels;
pub mod matcher;
pub mod preset;
pub mod priority;
pub mod taskqueue;

#[cfg(test)]
mod dirac9_tests;
