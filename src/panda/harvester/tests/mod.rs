//! Tests of `panda::harvester`: every rule of reference §8 with literal numbers, the worked
//! examples computed by hand in the comments, and property tests (no input panics; caps hold).

use super::*;

mod adjuster;
mod config;
mod props;
mod ups;

/// ATLAS's four resource types.
fn types() -> Vec<ResourceSpec> {
    ResourceSpec::atlas_defaults()
}

/// A PQ state with one resource-type row.
fn state_with(rows: Vec<RtRow>) -> QueueState {
    QueueState { status: Some(PqStatus::Online), job_stats: JobStats::NoActivatedEntry, rows, ..QueueState::default() }
}

/// A resource-type row holding one PR row.
fn rt(resource_type: &str, pr: PilotRow) -> RtRow {
    RtRow { resource_type: resource_type.to_string().into(), commanded: 0, pilots: vec![pr] }
}

/// A PR row with queued, ready and running workers.
fn pr(n_queue: u64, n_ready: u64, n_running: u64) -> PilotRow {
    PilotRow { n_ready, ..PilotRow::new("PR", n_queue, n_running) }
}
