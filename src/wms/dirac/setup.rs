//! What the DIRAC WMS derives once from a scenario: interned names, the task-queue
//! definition of each job stream, the share entities, and the CEs each submit pool reaches.

use std::collections::BTreeMap;

use crate::dirac::matcher::{PilotIdentity, Resource};
use crate::dirac::priority::EntityShares;
use crate::dirac::taskqueue::{TqDefinition, canonical};
use crate::ids::CeId;
use crate::scenario::Scenario;
use crate::scenario::dirac::{CeResource, DiracConfig};
use crate::workload::{EntityDef, JobEntities, Level, ShareEntities, ShareUnit};

/// String interner: names become dense `u32` ids, in first-seen order.
#[derive(Debug, Clone, Default)]
pub struct Names {
    ids: BTreeMap<String, u32>,
    names: Vec<String>,
}

impl Names {
    /// The id of `name`, creating it if new.
    pub fn id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.ids.insert(name.to_string(), id);
        self.names.push(name.to_string());
        id
    }

    /// `(name without the prefix, id)` of every name with this prefix, in name order.
    pub fn with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, u32)> + 'a {
        self.ids.range(prefix.to_string()..).map_while(move |(n, &id)| n.strip_prefix(prefix).map(|b| (b, id)))
    }

    fn ids(&mut self, names: &[String]) -> Vec<u32> {
        canonical(names.iter().map(|n| self.id(n)).collect())
    }
}

/// Everything static the DIRAC WMS needs, derived once from the scenario.
#[derive(Debug, Clone)]
pub struct Static {
    /// Interned names of sites, CEs, platforms, tags, pools, users, groups, setups.
    pub names: Names,
    /// What a pilot at each CE tells the Matcher of where it runs (interned site, CE, platform,
    /// tags and `RequiredTag`s), by CE id.
    pub ce_resources: Vec<CeResource>,
    /// The group ids (interned) with JOB_SHARING, sorted: a slice of one or two, searched on
    /// every TQ a private pilot's request walks.
    pub job_sharing: Vec<u32>,
    /// Group id → JobShare, and no in-group factors: the shares the priorities use when share
    /// corrections are off, built once so that a recomputation allocates nothing.
    pub shares: EntityShares,
    /// TQ definition of each stream.
    pub stream_def: Vec<TqDefinition>,
    /// JDL `Priority` (UserPriority) of each stream's jobs.
    pub stream_user_priority: Vec<u8>,
    /// Submit pool id → CE indices it reaches.
    pub pool_ces: BTreeMap<u32, Vec<CeId>>,
    /// Interned DefaultSubmitPools.
    pub default_pools: Vec<u32>,
    /// Interned pilot type "private".
    pub private_type: u32,
    /// Interned setup of the scenario.
    pub setup: u32,
    /// The interned job types of production (`[0]`) and analysis (`[1]`, `User`) jobs.
    pub kind_job_types: [Vec<u32>; 2],
}

impl Static {
    /// Derive the static tables from a validated scenario and its `dirac` section.
    pub fn new(s: &Scenario, d: &DiracConfig) -> Self {
        let mut names = Names::default();
        let private_type = names.id("private");
        let setup = names.id(&format!("setup:{}", d.setup));
        let mut ces = Vec::new();
        let mut ce_resources = Vec::new();
        for site in &s.sites {
            for ce in &site.ces {
                ce_resources.push(CeResource::of(site, ce, &mut |n| names.id(n)));
                ces.push(ce.name.as_str());
            }
        }
        let mut job_sharing = Vec::new();
        let mut group_share = BTreeMap::new();
        let int_job_share = d.rules().int_job_share;
        for g in &d.groups {
            let id = names.id(&format!("group:{}", g.name));
            if g.job_sharing() {
                job_sharing.push(id);
            }
            group_share.insert(id, g.effective_job_share(int_job_share));
        }
        job_sharing.sort_unstable();
        job_sharing.dedup();
        let prefixed = |p: &str, v: &[String]| -> Vec<String> { v.iter().map(|x| format!("{p}:{x}")).collect() };
        let stream_def: Vec<TqDefinition> =
            s.workload.iter().map(|w| d.tq_definition(w, &mut |n| names.id(n))).collect();
        let mut pool_ces = BTreeMap::new();
        for pool in &d.director.submit_pools {
            let id = names.id(&format!("pool:{}", pool.name));
            let list: Vec<CeId> = (0..ces.len() as CeId)
                .filter(|&c| pool.ces.is_empty() || pool.ces.iter().any(|n| n == ces[c as usize]))
                .collect();
            pool_ces.insert(id, list);
        }
        let default_pools = names.ids(&prefixed("pool", &d.director.default_submit_pools));
        // Job types are interned last, so every other name keeps the id it had before they were
        // modelled (ids order task queues, and so the matcher's draws).
        let mut stream_def = stream_def;
        let mut kind_job_types = [Vec::new(), Vec::new()];
        for (def, w) in stream_def.iter_mut().zip(&s.workload) {
            let id = names.id(&format!("jobtype:{}", w.job_type));
            def.job_types = vec![id];
            let kind = usize::from(w.job_type == crate::workload::config::USER_JOB_TYPE);
            kind_job_types[kind].push(id);
        }
        let kind_job_types = kind_job_types.map(canonical);
        Self {
            names,
            ce_resources,
            job_sharing,
            shares: EntityShares { group: group_share, user_factor: BTreeMap::new() },
            stream_def,
            stream_user_priority: s.workload.iter().map(|w| w.user_priority).collect(),
            pool_ces,
            default_pools,
            private_type,
            setup,
            kind_job_types,
        }
    }

    /// The resource description a pilot at CE `c` presents to the Matcher.
    pub fn resource(&self, c: CeId, identity: PilotIdentity, cpu_time: f64) -> Resource<'_> {
        self.ce_resources[c as usize].resource(identity, self.private_type, self.setup, cpu_time)
    }

    /// True if group `g` has JOB_SHARING.
    pub fn is_job_sharing(&self, g: u32) -> bool {
        self.job_sharing.binary_search(&g).is_ok()
    }
}

/// The share entities of a scenario and the entities of each stream.
///
/// Groups that have jobs are entities with target JobShare / Σ JobShare (over those groups);
/// users of non-JOB_SHARING groups are entities with target 1/U among the group's users
/// that have jobs (seed 002).
pub fn share_entities(s: &Scenario, d: &DiracConfig) -> ShareEntities {
    let mut groups: Vec<&str> = Vec::new();
    for w in &s.workload {
        if !groups.contains(&w.group.as_str()) {
            groups.push(&w.group);
        }
    }
    let config = |g: &str| d.groups.iter().find(|c| c.name == g).expect("validated group");
    let int_job_share = d.rules().int_job_share;
    let share = |g: &str| config(g).effective_job_share(int_job_share);
    let total: f64 = groups.iter().map(|g| share(g)).sum();
    let mut entities: Vec<EntityDef> = groups
        .iter()
        .map(|g| EntityDef {
            name: g.to_string(),
            level: Level::Group,
            parent: None,
            target_share: if total > 0.0 { share(g) / total } else { 0.0 },
            wms: 0,
            unit: ShareUnit::Jobs,
        })
        .collect();
    for (gi, g) in groups.iter().enumerate() {
        if config(g).job_sharing() {
            continue;
        }
        let mut users: Vec<&str> = Vec::new();
        for w in s.workload.iter().filter(|w| w.group == *g) {
            if !users.contains(&w.owner.as_str()) {
                users.push(&w.owner);
            }
        }
        for u in &users {
            entities.push(EntityDef {
                name: format!("{g}/{u}"),
                level: Level::User,
                parent: Some(gi),
                target_share: 1.0 / users.len() as f64,
                wms: 0,
                unit: ShareUnit::Jobs,
            });
        }
    }
    let of_stream = s
        .workload
        .iter()
        .map(|w| {
            let group = groups.iter().position(|g| *g == w.group).expect("listed");
            let user =
                entities.iter().position(|e| e.parent == Some(group) && e.name == format!("{}/{}", w.group, w.owner));
            JobEntities { group, user }
        })
        .collect();
    ShareEntities { defs: entities, of_stream }
}
