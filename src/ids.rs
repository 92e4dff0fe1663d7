//! The neutral identifiers every layer above the engine shares: jobs, pilots, CEs, sites,
//! share entities and WMS instances. They are dense indices (or, for jobs, DIRAC-style
//! JobIDs counted from 1), so tables keyed by them are plain vectors. What a WMS attaches to
//! a job or a pilot (a DIRAC task queue, a PanDA queue) lives in that WMS's own tables,
//! keyed by these ids (DESIGN.md, "Layers").

/// A job: 1, 2, 3… in submission order, like DIRAC's JobIDs.
pub type JobId = u32;
/// A pilot: 0, 1, 2… in submission order over every WMS of the grid.
pub type PilotId = u32;
/// A computing element: its index in the scenario's CEs, flattened site by site.
pub type CeId = u32;
/// A site: its index in the scenario's sites.
pub type SiteId = u32;
/// A share entity (a group, or a user within a group): its index in the entity list.
pub type EntityId = usize;
/// A WMS instance of the world: its index in the world's WMS list (at most 256 instances,
/// which keeps every event of the queue within 8 bytes).
pub type WmsId = u8;

/// The index into a vector of jobs (ids start at 1).
pub fn job_index(j: JobId) -> usize {
    j as usize - 1
}
