//! The per-nucleus filters other than data locality, in code order (reference `panda.md` §1
//! filters 2-5 and 7; `AtlasProdTaskBroker.py` L289-432, L504-538; seed 004 "ATLAS Production
//! Task Brokerage" and "Special Brokerage for ATLAS Full-chain"). Each returns `Ok` to keep the
//! nucleus or the [`SkipReason`] PanDA logs.

use super::input::{BareNucleus, DdmEndpoint, FullChain, NucleusSpec, NucleusState, Parent, TaskSpec};
use super::report::{PendingReason, SkipReason, SpaceWording};
use super::{SPACE_PER_RW_GB, TaskBrokerVariant, TaskBrokerageParams};

/// Status (L289-302): only `ACTIVE` nuclei.
pub fn status_check(n: &NucleusSpec) -> Result<(), SkipReason<'static>> {
    match n.state {
        NucleusState::Active => Ok(()),
        state => Err(SkipReason::Status { state }),
    }
}

/// Transfer backlog (L304-322, `getBackloggedNuclei`): the nucleus is backlogged when its
/// summed `Production Output_queued` exceeds `NQUEUED_NUC_CAP` (`HAVING SUM(value) > cap`).
/// The caller skips the check for tasks with `t1Weight < 0`.
pub fn backlog_check(n: &NucleusSpec, p: &TaskBrokerageParams) -> Result<(), SkipReason<'static>> {
    if n.queued_output_files > p.nqueued_nuc_cap { Err(SkipReason::TransferBacklog) } else { Ok(()) }
}

/// The projected demand on a nucleus' storage in GB: `int(fullRW / 10 / 24 / 3600 × 0.25)`
/// ("0.25 GB per cpuTime/corePower/day", corePower 10; the seed's normalizedExpOutSize × RW).
/// A non-finite RW counts as none.
pub fn projected_demand_gb(full_rw: f64) -> f64 {
    let rw = if full_rw.is_finite() { full_rw } else { 0.0 };
    (rw / 10.0 / 24.0 / 3600.0 * SPACE_PER_RW_GB).trunc()
}

/// The free-space figures the weight uses: `free / total` and `min(FREE_DISK_CUTOFF,
/// ⌊cutoff_free / 1024⌋)`; `free` is `usable − demand` in the code, `free + expired` in the seed
/// (whose cutoff term reads `spaceFree` alone).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FreeSpace {
    pub free_gb: f64,
    pub total_gb: f64,
    pub cutoff_free_gb: f64,
}

/// What the endpoint check found for a nucleus that passes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EndpointOutcome<'a> {
    /// Passes; the endpoint with the smallest free fraction, if any had a non-zero total.
    Pass(Option<FreeSpace>),
    /// Skipped with a reason.
    Skip(SkipReason<'a>),
    /// The code raises on a missing endpoint (panda-server variant): the task's brokerage stops.
    Crash(PendingReason<'a>),
}

fn finite(x: f64) -> f64 {
    if x.is_finite() { x } else { 0.0 }
}

/// Endpoint and space (L323-396) for one nucleus, over the task's output and log datasets in
/// order (distributed ones ignored): an endpoint must exist for the storage token
/// (`-match`), its `read_wan` (`-source_blacklist`) and `write_wan` (`-destination_blacklist`)
/// must be up, and `space − demand` must reach `DISK_THRESHOLD` (`-space`). Up, space and the
/// comparison differ by variant:
///
/// | | seed | code |
/// |---|---|---|
/// | WAN up | `ON` | not `OFF`/`TEST` (a missing status passes) |
/// | space | `space_free + space_expired` | `space_usable` |
/// | passes when | `space − demand > threshold` | `space − demand ≥ threshold` |
/// | missing endpoint | skip `-match` | the brokerage raises ([`EndpointOutcome::Crash`]) |
pub fn endpoint_check<'a>(
    n: &'a NucleusSpec,
    task: &'a TaskSpec,
    endpoints: &'a [DdmEndpoint],
    threshold_gb: f64,
    variant: TaskBrokerVariant,
) -> EndpointOutcome<'a> {
    let seed = variant == TaskBrokerVariant::Seed;
    let down = |s: super::input::WanStatus| if seed { s != super::input::WanStatus::On } else { s.is_downtime() };
    let demand = projected_demand_gb(n.full_rw);
    let mut best: Option<FreeSpace> = None;
    for ds in task.outputs.iter().filter(|d| !d.distributed) {
        let ep = n.output_endpoints.get(ds.token).copied().flatten().and_then(|i| endpoints.get(i));
        let Some(ep) = ep else {
            if seed {
                return EndpointOutcome::Skip(SkipReason::NoEndpoint { token: &ds.storage_token });
            }
            return EndpointOutcome::Crash(PendingReason::EndpointLookupCrash {
                nucleus: &n.name,
                token: &ds.storage_token,
            });
        };
        if down(ep.read_wan) {
            return EndpointOutcome::Skip(SkipReason::SourceBlacklist { endpoint: &ep.name, status: ep.read_wan });
        }
        if down(ep.write_wan) {
            return EndpointOutcome::Skip(SkipReason::DestinationBlacklist {
                endpoint: &ep.name,
                status: ep.write_wan,
            });
        }
        let space = if seed { finite(ep.space_free) + finite(ep.space_expired) } else { finite(ep.space_usable) };
        let left = space - demand;
        let short = if seed { left <= threshold_gb } else { left < threshold_gb };
        if short {
            let wording = if seed { SpaceWording::FreePlusExpired } else { SpaceWording::Usable };
            return EndpointOutcome::Skip(SkipReason::DiskShortage {
                space_gb: space,
                demand_gb: demand,
                threshold_gb,
                endpoint: &ep.name,
                wording,
            });
        }
        let total = finite(ep.space_total);
        if total != 0.0 {
            let candidate = if seed {
                FreeSpace { free_gb: space, total_gb: total, cutoff_free_gb: finite(ep.space_free) }
            } else {
                FreeSpace { free_gb: left, total_gb: total, cutoff_free_gb: left }
            };
            let fraction = |f: &FreeSpace| f.free_gb / f.total_gb;
            if best.is_none_or(|b| fraction(&candidate) < fraction(&b)) {
                best = Some(candidate);
            }
        }
    }
    EndpointOutcome::Pass(best)
}

/// Job check (L397-432): the nucleus keeps a PQ after the job broker's hint-mode filters.
pub fn job_check(n: &NucleusSpec) -> Result<(), SkipReason<'static>> {
    if n.can_run_jobs { Ok(()) } else { Err(SkipReason::NoJobs) }
}

/// The parent a full-chain task must follow, as the nucleus index (L507-515), or `None`.
///
/// Code: a full-chain task (any mode) whose parent is full-chain and ran on a bare nucleus
/// (`check_full_chain_with_nucleus`) follows it; a parent that cannot be read, or a
/// full-chain parent whose nucleus the site mapper does not know, stops the brokerage.
/// Seed: "When capable is set, the task is assigned to the same nucleus as that of the parent
/// task only if the parent task was assigned to a bare nucleus" — for `capable` the parent's own
/// flag does not matter; for the other modes (on which the seed is silent) the code's rule holds;
/// an unknown parent nucleus is simply not bare.
pub fn parent_to_follow<'a>(
    task: &TaskSpec,
    nuclei: &[NucleusSpec],
    variant: TaskBrokerVariant,
) -> Result<Option<usize>, PendingReason<'a>> {
    let Some(mode) = task.full_chain else { return Ok(None) };
    let (parent_full_chain, parent_nucleus) = match task.parent {
        Parent::Itself => return Ok(None),
        Parent::NotFound => return Err(PendingReason::ParentNotFound),
        Parent::Task { full_chain, nucleus } => (full_chain, nucleus),
    };
    let bare = parent_nucleus.and_then(|i| nuclei.get(i)).map(|n| n.bare_nucleus.is_some());
    let follows = match variant {
        TaskBrokerVariant::PandaServer => match (parent_full_chain, bare) {
            (false, _) => false,
            (true, None) => return Err(PendingReason::ParentNucleusUnknown),
            (true, Some(b)) => b,
        },
        TaskBrokerVariant::Seed => bare.unwrap_or(false) && (parent_full_chain || mode == FullChain::Capable),
    };
    Ok(if follows { parent_nucleus } else { None })
}

/// Full-chain check for one nucleus (L516-536; seed "Special Brokerage for ATLAS Full-chain"):
/// `bareNucleus=only` takes only full-chain tasks; `only`/`require` tasks need a bare nucleus —
/// in the seed `only` needs `bareNucleus=only`, in the code any bare nucleus; a task with a
/// parent to follow ([`parent_to_follow`]) goes nowhere else.
pub fn full_chain_check(
    index: usize,
    n: &NucleusSpec,
    task: &TaskSpec,
    follow: Option<usize>,
    variant: TaskBrokerVariant,
) -> Result<(), SkipReason<'static>> {
    if n.bare_nucleus == Some(BareNucleus::Only) && task.full_chain.is_none() {
        return Err(SkipReason::OnlyFullChain);
    }
    let lacks = match (task.full_chain, variant) {
        (Some(FullChain::Only), TaskBrokerVariant::Seed) => n.bare_nucleus != Some(BareNucleus::Only),
        (Some(FullChain::Only | FullChain::Require), _) => n.bare_nucleus.is_none(),
        _ => false,
    };
    if lacks {
        return Err(SkipReason::NoFullChainCapability);
    }
    if task.full_chain.is_some() && follow.is_some_and(|p| p != index) {
        return Err(SkipReason::ParentElsewhere);
    }
    Ok(())
}
