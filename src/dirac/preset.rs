//! `dirac::preset` — which DIRAC a scenario models (DESIGN.md
//! "Faithfulness"): the seeds' 2009 code (the default) or DIRAC 9.1.22 (reference `dirac.md`).
//! A preset gives every option whose default differs between the two; an option written in
//! the scenario overrides its preset.
//!
//! | option | `Seed2009` | `Dirac9` | reference |
//! |---|---|---|---|
//! | CPU segments | 500/5000/50000/300000 s | 13 segments 360 s … 12.5 d | §1.2 |
//! | TQ ordering | CPU first, then `RAND()/Priority` | `RAND()/Priority` | §1.3 |
//! | jobs per priority level | 10 | 50 | §1.4 |
//! | UserPriority weighting | sum | average | §2.2 |
//! | TQs identical but for Sites/BannedSites | each its own priority | each the group's sum | §2.1 |
//! | `MaxJobsInTQ` | no limit | 5000 | §1.1 |
//! | an emptied TQ | deleted at once | kept (counting in U) until the director's TQ query finds it; then every empty TQ goes, no recomputation | §1.4, §2.1 |
//! | a JobShare that is not an integer | read as it is | `int()` fails: 1000 | §2.1 |
//! | shares of the recalculation at a TQ's creation or deletion | configured (corrected) | 1000 per group, uncorrected (process-local) | §2.4 |
//! | share corrector | the seed's formula | DIRAC 9 (`applyCorrection`; in-group correction a no-op) | §3.3, §0.4 |

use serde::{Deserialize, Serialize};

use super::corrector::CorrectorVariant;
use super::matcher::TqOrdering;
use super::priority::{EntityRecalculationShares, UserPriorityWeighting};
use super::taskqueue::{CpuSegments, EmptyTqDeletion};

/// The DIRAC version a scenario models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Preset {
    /// The seeds: the 2009 code (TaskQueueDB, Matcher, TaskqueueDirector of 2008-12/2009-04).
    #[default]
    Seed2009,
    /// DIRAC 9.1.22, as the reference documents it.
    Dirac9,
}

impl Preset {
    pub fn cpu_segments(self) -> CpuSegments {
        match self {
            Preset::Seed2009 => CpuSegments::Seed2009,
            Preset::Dirac9 => CpuSegments::Dirac9,
        }
    }

    pub fn ordering(self) -> TqOrdering {
        match self {
            Preset::Seed2009 => TqOrdering::CpuThenRandomPriority,
            Preset::Dirac9 => TqOrdering::RandomPriority,
        }
    }

    pub fn jobs_per_level(self) -> u32 {
        match self {
            Preset::Seed2009 => 10,
            Preset::Dirac9 => 50,
        }
    }

    pub fn user_priority_weighting(self) -> UserPriorityWeighting {
        match self {
            Preset::Seed2009 => UserPriorityWeighting::Sum,
            Preset::Dirac9 => UserPriorityWeighting::Average,
        }
    }

    /// Whether TQs identical except for Sites and BannedSites each get their group's sum.
    pub fn sum_identical_definitions(self) -> bool {
        self == Preset::Dirac9
    }

    /// The shares of the per-entity recalculations (DIRAC 9: the process-local default).
    pub fn entity_recalculation_shares(self) -> EntityRecalculationShares {
        match self {
            Preset::Seed2009 => EntityRecalculationShares::Configured,
            Preset::Dirac9 => EntityRecalculationShares::ProcessDefault,
        }
    }

    /// `__maxJobsInTQ`: 0 for no limit.
    pub fn max_jobs_in_tq(self) -> u32 {
        match self {
            Preset::Seed2009 => 0,
            Preset::Dirac9 => 5000,
        }
    }

    /// What becomes of an emptied TQ.
    pub fn empty_tq_deletion(self) -> EmptyTqDeletion {
        match self {
            Preset::Seed2009 => EmptyTqDeletion::AtOnce,
            Preset::Dirac9 => EmptyTqDeletion::OrphanCleaning,
        }
    }

    /// Whether a JobShare is read with `int()`, a non-integer giving 1000.
    pub fn int_job_share(self) -> bool {
        self == Preset::Dirac9
    }

    pub fn corrector_variant(self) -> CorrectorVariant {
        match self {
            Preset::Seed2009 => CorrectorVariant::Seed,
            Preset::Dirac9 => CorrectorVariant::Dirac9,
        }
    }
}
