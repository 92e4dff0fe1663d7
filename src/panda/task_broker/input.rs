//! What task brokerage reads: the task (`JediTaskSpec` fields, its input and output datasets),
//! the nuclei (`NucleusSpec` from the site mapper) and the DDM endpoints (RSEs) they use, plus
//! the three small parsers PanDA applies to strings (`splitRule` of the task, `catchall` of the
//! site). Reference `panda.md` §1 "Definitions"; code `AtlasProdTaskBroker.py` L146-626,
//! `JediTaskSpec.py` (`get_full_chain`, `getT1Weight`, `inputPreStaging`), `SiteSpec.py`
//! (`getValueFromCatchall`, `bare_nucleus_mode`), `task_split_rules.py` (tokens `FU`, `TW`, `IS`).
//!
//! Everything is plain data indexed by position: a nucleus names its endpoints by index into
//! the endpoint slice, a replica names its endpoint the same way, the task names its parent's
//! nucleus by index into the nucleus slice. An index out of range is read as "no such thing"
//! (as a name missing from PanDA's dictionaries), never as a panic.

use std::fmt;

use serde::{Deserialize, Serialize};

/// `NucleusSpec.state`, the CRIC state of the nucleus' PanDA site; only `ACTIVE` passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum NucleusState {
    #[default]
    Active,
    Disabled,
    Test,
}

impl fmt::Display for NucleusState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NucleusState::Active => "ACTIVE",
            NucleusState::Disabled => "DISABLED",
            NucleusState::Test => "TEST",
        })
    }
}

/// Whether the site mapper lists the site among `nuclei` or `satellites` (CRIC `role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Role {
    #[default]
    Nucleus,
    /// A satellite is a candidate only when it has a bare-nucleus mode and the task is full-chain.
    Satellite,
}

/// `bareNucleus=only|allow` in the CRIC `catchall` (seed 004 "Special Brokerage for ATLAS
/// Full-chain"; `SiteSpec.bare_nucleus_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BareNucleus {
    /// Accepts only full-chain tasks.
    Only,
    /// Accepts normal tasks as well.
    Allow,
}

impl BareNucleus {
    /// `SiteSpec.bare_nucleus_mode()`: `getValueFromCatchall("bareNucleus")` — the first
    /// comma-separated item matching `^bareNucleus=(.+)` (`.` stops at a newline) — if it is
    /// exactly `only` or `allow`. A first item with another value hides any later one, as in PanDA.
    pub fn from_catchall(catchall: &str) -> Option<Self> {
        let value = catchall.split(',').find_map(|item| {
            let rest = item.strip_prefix("bareNucleus=")?;
            let line = rest.split('\n').next().unwrap_or("");
            (!line.is_empty()).then_some(line)
        })?;
        match value {
            "only" => Some(BareNucleus::Only),
            "allow" => Some(BareNucleus::Allow),
            _ => None,
        }
    }
}

/// The task's `fullChain` split rule (`FU=<digits>`; `JediTaskSpec.FullChain`: 1 only, 2
/// require, 3 capable). Any other digits still make the task full-chain (`get_full_chain()` is a
/// non-empty string) without any of the three modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FullChain {
    /// `only`: seed — a nucleus with `bareNucleus=only`; code — any bare nucleus.
    Only,
    /// `require`: a nucleus with `bareNucleus=only` or `allow`.
    Require,
    /// `capable`: follows a parent that ran on a bare nucleus, else goes anywhere.
    Capable,
    /// Digits other than `1`, `2`, `3` (e.g. `01`): full-chain, no mode.
    Other,
}

/// The first `token=` in `rule` followed by `-*` (if `minus`) and at least one ASCII digit, as
/// `re.search(token + "=(-*\d+)")` finds it; returns the matched value.
fn search_value<'s>(rule: &'s str, token: &str, minus: bool) -> Option<&'s str> {
    let key = format!("{token}=");
    rule.match_indices(key.as_str()).find_map(|(at, _)| {
        let value = rule.get(at + key.len()..)?;
        let dashes = if minus { value.len() - value.trim_start_matches('-').len() } else { 0 };
        let digits = value.get(dashes..)?.bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0).then(|| value.get(..dashes + digits)).flatten()
    })
}

impl FullChain {
    /// `JediTaskSpec.get_full_chain()` read as a mode: `None` when `splitRule` has no `FU=<digits>`.
    /// (Python's `\d` also matches non-ASCII decimal digits; here only ASCII ones count.)
    pub fn from_split_rule(split_rule: &str) -> Option<Self> {
        Some(match search_value(split_rule, "FU", false)? {
            "1" => FullChain::Only,
            "2" => FullChain::Require,
            "3" => FullChain::Capable,
            _ => FullChain::Other,
        })
    }
}

/// Why a split rule cannot be read the way PanDA reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitRuleError {
    /// `TW=--5`: `int("--5")` raises `ValueError` in `getT1Weight`, which aborts the brokerage
    /// of the task for this cycle.
    T1WeightNotAnInteger,
}

/// `JediTaskSpec.getT1Weight()`: the value of `TW=(-*\d+)`, 0 when absent. Values beyond `i64`
/// saturate (Python's integers are unbounded; only the sign matters to task brokerage).
pub fn t1_weight_from_split_rule(split_rule: &str) -> Result<i64, SplitRuleError> {
    let Some(value) = search_value(split_rule, "TW", true) else { return Ok(0) };
    let digits = value.trim_start_matches('-');
    let negative = match value.len() - digits.len() {
        0 => false,
        1 => true,
        _ => return Err(SplitRuleError::T1WeightNotAnInteger),
    };
    let magnitude = digits.bytes().fold(0i64, |acc, d| acc.saturating_mul(10).saturating_add(i64::from(d - b'0')));
    Ok(if negative { -magnitude } else { magnitude })
}

/// `JediTaskSpec.inputPreStaging()`: `re.search("IS=1", splitRule)` (data carousel), so `IS=10`
/// counts too.
pub fn input_pre_staging_from_split_rule(split_rule: &str) -> bool {
    split_rule.contains("IS=1")
}

/// `detailed_status` `read_wan` / `write_wan` of a DDM endpoint (seed: must be `ON`; code:
/// skipped when in `DOWNTIME_STATUSES`, read here as `OFF` and `TEST`, the list the code spelled
/// out before the constant existed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum WanStatus {
    #[default]
    On,
    Off,
    Test,
    /// The key is absent (`dict.get` → `None`).
    Missing,
}

impl WanStatus {
    /// In `DOWNTIME_STATUSES` (the code's test).
    pub fn is_downtime(self) -> bool {
        matches!(self, WanStatus::Off | WanStatus::Test)
    }
}

impl fmt::Display for WanStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WanStatus::On => "ON",
            WanStatus::Off => "OFF",
            WanStatus::Test => "TEST",
            WanStatus::Missing => "None",
        })
    }
}

/// A DDM endpoint (RSE) with what brokerage reads of it; space figures in GB as in
/// `ATLAS_PANDA.DDM_ENDPOINT`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DdmEndpoint {
    /// `ddm_endpoint_name`, used in the log messages only.
    pub name: String,
    /// `is_tape == 'Y'`: replicas here count as "any" (disk or tape) but not as disk.
    pub is_tape: bool,
    pub read_wan: WanStatus,
    pub write_wan: WanStatus,
    /// `space_usable` (code): free space the endpoint can still use.
    pub space_usable: f64,
    /// `space_free` (seed's spaceFree).
    pub space_free: f64,
    /// `space_expired` (seed's spaceExpired): space held by expired secondary data.
    pub space_expired: f64,
    /// `space_total`.
    pub space_total: f64,
}

impl DdmEndpoint {
    /// `siteMapper.is_readable_remotely(rse)`, read here as "`read_wan` not in downtime": a
    /// complete replica there can be a source for any nucleus.
    pub fn is_readable_remotely(&self) -> bool {
        !self.read_wan.is_downtime()
    }
}

/// A nucleus (or a satellite) as the site mapper describes it, plus the per-cycle figures
/// brokerage reads about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NucleusSpec {
    /// The PanDA site name of the nucleus (log messages, and what a task's `nucleus` refers to).
    pub name: String,
    pub state: NucleusState,
    pub role: Role,
    pub bare_nucleus: Option<BareNucleus>,
    /// `SUM(value)` of `Production Output_queued` rows to this nucleus in `network_matrix_kv`
    /// younger than 60 min (`getBackloggedNuclei`).
    pub queued_output_files: f64,
    /// `fullRW[nucleus]` (`calculateWorldRWwithPrio_JEDI` without priority or queue), in
    /// cpuTime × events; 0 when the nucleus has no row.
    pub full_rw: f64,
    /// `getAssociatedEndpoint(storageToken)` per storage-token class: entry `k` is the endpoint
    /// (index into the endpoint slice) for output datasets with `token == k`, `None` if none.
    pub output_endpoints: Vec<Option<usize>>,
    /// Endpoints associated for input (`is_associated_for_input`), as indices.
    pub input_endpoints: Vec<usize>,
    /// The job check (reference §1 filter 5): at least one PQ of the nucleus survives
    /// `AtlasProdJobBroker.doBrokerage` in hint mode.
    pub can_run_jobs: bool,
}

impl Default for NucleusSpec {
    fn default() -> Self {
        Self {
            name: String::new(),
            state: NucleusState::Active,
            role: Role::Nucleus,
            bare_nucleus: None,
            queued_output_files: 0.0,
            full_rw: 0.0,
            output_endpoints: Vec::new(),
            input_endpoints: Vec::new(),
            can_run_jobs: true,
        }
    }
}

/// What kind of input dataset, for the lookup's skips (L243-287).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum DatasetKind {
    #[default]
    Regular,
    /// `isPseudo()`: no real dataset.
    Pseudo,
    /// `DataServiceUtils.isDBR(name)`: database release.
    Dbr,
    /// `getDatasetType(name) == "log"`.
    Log,
}

/// One row of `listReplicasPerDataset` (`locData[0]`): the dataset's totals as that endpoint
/// reports them and what the endpoint holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Replica {
    /// The endpoint (index into the endpoint slice).
    pub endpoint: usize,
    /// `total`: files in the dataset (0 = unknown).
    pub total_files: u64,
    /// `tsize`: bytes in the dataset.
    pub total_bytes: u64,
    /// `found`: files present at the endpoint.
    pub found_files: u64,
    /// `asize`: bytes present at the endpoint.
    pub available_bytes: u64,
}

/// An input dataset or container of the task.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct InputDataset {
    /// `datasetName` (log message when no remote source exists).
    pub name: String,
    pub kind: DatasetKind,
    /// `isMaster()`: the primary input.
    pub master: bool,
    /// The replica lists of its constituent datasets, in DDM order (one list for a plain
    /// dataset, one per element for a container).
    pub constituents: Vec<Vec<Replica>>,
}

/// An output or log dataset of the task.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OutputDataset {
    /// `storageToken` as written in the task (log message only).
    pub storage_token: String,
    /// The storage-token class: index into each nucleus' `output_endpoints`.
    pub token: usize,
    /// `getDistributedDestination(storageToken)` is set (`dst:` token): ignored by the check.
    pub distributed: bool,
}

/// The task's parent as the full-chain check looks it up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Parent {
    /// `parent_tid == jediTaskID`: no parent to follow.
    #[default]
    Itself,
    /// `getTaskWithID_JEDI(parent_tid)` finds nothing.
    NotFound,
    /// The parent task: whether it is full-chain, and its nucleus (index into the nucleus slice;
    /// `None` or out of range = a name the site mapper does not know).
    Task { full_chain: bool, nucleus: Option<usize> },
}

/// The task being brokered: the `JediTaskSpec` fields and task parameters the filters read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TaskSpec {
    /// `taskPriority` (the seed's locality-disabling rule names it).
    pub task_priority: i64,
    /// `currentPriority` (the code's rule, and the key of the RW table).
    pub current_priority: i64,
    /// `ioIntensity` in kB/s; `None` when unset.
    pub io_intensity: Option<f64>,
    /// `getT1Weight()`; negative skips the transfer-backlog check.
    pub t1_weight: i64,
    /// `get_full_chain()`.
    pub full_chain: Option<FullChain>,
    /// `inputPreStaging()` (data carousel).
    pub input_pre_staging: bool,
    /// Task parameter `taskBrokerOnMaster is True`: only the primary input is looked up.
    pub task_broker_on_master: bool,
    /// `workQueue.queue_name` (the gshare name for global-share queues), for `DISK_THRESHOLD_<name>`.
    pub work_queue: String,
    /// A nucleus already set on the task (index): brokerage is skipped (L232-236).
    pub nucleus: Option<usize>,
    /// Seconds since `frozenTime` (the task entered `assigning`); `None` when unset.
    pub frozen_for_s: Option<f64>,
    pub parent: Parent,
    pub inputs: Vec<InputDataset>,
    /// Output and log datasets (`getDatasetsWithJediTaskID_JEDI(["output", "log"])`).
    pub outputs: Vec<OutputDataset>,
}

impl Default for TaskSpec {
    fn default() -> Self {
        Self {
            task_priority: 0,
            current_priority: 0,
            io_intensity: None,
            t1_weight: 0,
            full_chain: None,
            input_pre_staging: false,
            task_broker_on_master: false,
            work_queue: String::new(),
            nucleus: None,
            frozen_for_s: None,
            parent: Parent::Itself,
            inputs: Vec::new(),
            outputs: Vec::new(),
        }
    }
}
