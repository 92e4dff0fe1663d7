//! Share entities: who a job counts for when shares are measured and corrected. A group, or a
//! user inside a group whose users share it (seed 002). The WMS decides the entities and their
//! targets (DIRAC from its Registry groups); the simulation's accounting and the recorder key
//! their counters by [`EntityId`].

use crate::ids::EntityId;

/// The level of a share entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// A group, sharing with the other groups.
    Group,
    /// A user of a group whose users share it, sharing with the group's other users.
    User,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Group => "group",
            Level::User => "user",
        }
    }
}

/// What a share counts, as the system that sets it does (DESIGN.md "Resources are counted
/// where they are held"): DIRAC's group shares count jobs (the TaskQueueDB's priorities are
/// per job, whatever its cores), PanDA's global shares count cores (JEDI's throttle and the
/// dispatcher compare the HS06 each leaf executes, reference `panda.md` §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ShareUnit {
    /// One per running job.
    #[default]
    Jobs,
    /// One per core of each running job.
    Cores,
}

impl ShareUnit {
    pub fn as_str(self) -> &'static str {
        match self {
            ShareUnit::Jobs => "jobs",
            ShareUnit::Cores => "cores",
        }
    }
}

/// A share entity: a group, or a user inside a group.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityDef {
    /// `lhcb_user` for a group, `lhcb_user/alice` for a user.
    pub name: String,
    pub level: Level,
    /// Index of the group entity a user belongs to.
    pub parent: Option<EntityId>,
    /// Target share among its siblings (for DIRAC: JobShare / Σ JobShare for groups, 1/U for users).
    pub target_share: f64,
    /// The WMS instance whose shares it is in: groups share with the groups of the same WMS only
    /// (LHCb's DIRAC groups and ATLAS's gshares are not siblings).
    pub wms: crate::ids::WmsId,
    /// What its shares count.
    pub unit: ShareUnit,
}

/// The entities a job counts for: its group and, where users share the group, its user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobEntities {
    pub group: EntityId,
    pub user: Option<EntityId>,
}

impl JobEntities {
    /// The group, then the user if any.
    pub fn each(self) -> impl Iterator<Item = EntityId> {
        std::iter::once(self.group).chain(self.user)
    }
}

/// Every share entity of a world and the entities of each job stream.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShareEntities {
    /// Groups first, then users (per WMS, in instance order).
    pub defs: Vec<EntityDef>,
    /// Per job stream (the world's stream order).
    pub of_stream: Vec<JobEntities>,
}

impl ShareEntities {
    /// Append another WMS's entities and streams after these (its indices shifted).
    pub fn append(&mut self, other: ShareEntities) {
        let base = self.defs.len();
        self.defs.extend(other.defs.into_iter().map(|d| EntityDef { parent: d.parent.map(|p| p + base), ..d }));
        self.of_stream.extend(
            other.of_stream.into_iter().map(|e| JobEntities { group: e.group + base, user: e.user.map(|u| u + base) }),
        );
    }
}
