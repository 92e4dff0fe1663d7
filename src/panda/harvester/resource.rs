//! Resource types and what one worker of a type requests (Harvester
//! `resource_type_mapper.py`; panda-server `ResourceSpec.py`, used by UPS).
//!
//! `calculate_worker_requirements(resource_type, queue_dict)` returns `(cores, memory MB)`:
//!
//! ```text
//! unknown resource type (incl. "ANY")  → (1, 1)
//! PQ not UCORE (capability ≠ "ucore")  → (maxrss or 0, corecount or 1)   ← as written: cores and memory swapped
//! UCORE: cores  = min(maxcore, corecount) if maxcore else corecount
//!        memory = ceil(min(maxrampercore × cores, maxrss / corecount × cores)) if maxrampercore
//!                 else ceil(maxrss / corecount × cores)
//! ```
//!
//! The swap on non-UCORE PQs is Harvester's code (the tuple is returned in the order the
//! caller does not unpack it in); it only matters for a per-resource-type row of a non-UCORE
//! PQ with a core or memory limit, where a `maxrss` of 0 makes the core cap divide by zero.

use serde::{Deserialize, Serialize};

/// UPS's multi-core / high-memory boundary, MB per core (`HIMEM_THRESHOLD`, ResourceSpec.py).
pub const HIMEM_THRESHOLD: f64 = 2000.0;
/// `BASIC_RESOURCE_TYPE`: the type of UPS's keep-alive worker.
pub const BASIC_RESOURCE_TYPE: &str = "SCORE";

/// A row of PanDA's `resource_types` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceSpec {
    pub resource_name: String,
    pub mincore: Option<i64>,
    pub maxcore: Option<i64>,
    pub minrampercore: Option<f64>,
    pub maxrampercore: Option<f64>,
}

impl ResourceSpec {
    fn new(name: &str, mincore: i64, maxcore: Option<i64>, minram: Option<f64>, maxram: Option<f64>) -> Self {
        Self {
            resource_name: name.to_string(),
            mincore: Some(mincore),
            maxcore,
            minrampercore: minram,
            maxrampercore: maxram,
        }
    }

    /// ATLAS's four classic types: SCORE (1 core, ≤ 2000 MB/core), SCORE_HIMEM (1 core,
    /// ≥ 2001), MCORE (≥ 2 cores, ≤ 2000), MCORE_HIMEM (≥ 2 cores, ≥ 2001).
    pub fn atlas_defaults() -> Vec<Self> {
        vec![
            Self::new("SCORE", 1, Some(1), None, Some(2000.0)),
            Self::new("SCORE_HIMEM", 1, Some(1), Some(2001.0), None),
            Self::new("MCORE", 2, None, None, Some(2000.0)),
            Self::new("MCORE_HIMEM", 2, None, Some(2001.0), None),
        ]
    }

    /// `is_multi_core`: `mincore > 1`.
    pub fn is_multi_core(&self) -> bool {
        self.mincore.is_some_and(|m| m > 1)
    }

    /// `ResourceSpecMapper.is_high_memory`: no `maxrampercore`, or one above `threshold`.
    pub fn is_high_memory(&self, threshold: f64) -> bool {
        self.maxrampercore.is_none_or(|m| m > threshold || m.is_nan())
    }
}

/// The type named `name`, if any.
pub fn find<'a>(types: &'a [ResourceSpec], name: &str) -> Option<&'a ResourceSpec> {
    types.iter().find(|t| t.resource_name == name)
}

/// `translate_resourcetype_to_cores`: a multi-core type counts the PQ's cores, anything else 1.
pub fn cores_of(types: &[ResourceSpec], name: &str, cores_queue: i64) -> i64 {
    if find(types, name).is_some_and(ResourceSpec::is_multi_core) { cores_queue } else { 1 }
}

/// `is_high_memory` by name with the default threshold; an unknown type is not.
pub fn is_high_memory(types: &[ResourceSpec], name: &str) -> bool {
    find(types, name).is_some_and(|t| t.is_high_memory(HIMEM_THRESHOLD))
}

/// `filter_out_high_memory_resourcetypes(threshold)`: the types that are not high-memory at
/// `threshold`, in table order.
pub fn under_memory_target(types: &[ResourceSpec], threshold: f64) -> Vec<&str> {
    types.iter().filter(|t| !t.is_high_memory(threshold)).map(|t| t.resource_name.as_str()).collect()
}

/// The CRIC fields of a PQ Harvester reads (`PandaQueuesDict`): `corecount`, `maxrss`,
/// `capability`. `None` = missing (or the PQ absent from CRIC: all `None`, not unified).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CricQueue {
    pub corecount: Option<i64>,
    pub maxrss: Option<i64>,
    /// `capability == "ucore"`.
    pub unified: bool,
}

/// `ResourceTypeMapper.calculate_worker_requirements` → `(cores, memory MB)`; see the module doc.
pub fn calculate_worker_requirements(types: &[ResourceSpec], resource_type: &str, pq: &CricQueue) -> (i64, i64) {
    let Some(rt) = find(types, resource_type) else {
        return (1, 1);
    };
    let maxrss = pq.maxrss.filter(|&m| m != 0).unwrap_or(0);
    let corecount = pq.corecount.filter(|&c| c != 0).unwrap_or(1);
    if !pq.unified {
        return (maxrss, corecount);
    }
    let cores = match rt.maxcore.filter(|&m| m != 0) {
        Some(m) => m.min(corecount),
        None => corecount,
    };
    let per_core_site = maxrss as f64 / corecount as f64;
    let mem = match rt.maxrampercore.filter(|&m| m != 0.0) {
        Some(m) => (m * cores as f64).min(per_core_site * cores as f64),
        None => per_core_site * cores as f64,
    };
    (cores, super::py_int(mem.ceil()).unwrap_or(i64::MAX))
}
