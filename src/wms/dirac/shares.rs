//! The group shares entering DIRAC's priority computation, corrected by the WMSHistory share
//! corrector when `EnableSharesCorrection` is on (seed 002, "Dynamic share corrections";
//! reference `dirac.md` §2.3): the global instance corrects the shares of the groups that
//! have task queues, a per-group instance the shares `S_g/U_g` of that group's owners.
//!
//! The usage history is the simulation's accounting ([`Accounting`]), read by entity id. The
//! corrector's maps are keyed by each name's rank in name order, so they iterate in the same
//! order as DIRAC's maps keyed by name, without building a string in the event loop.

use std::collections::BTreeMap;

use super::setup::{Names, Static};
use crate::dirac::corrector::{self, CorrectorVariant, ShareCorrections};
use crate::dirac::priority::{self, EntityShares};
use crate::dirac::taskqueue::TaskQueueDb;
use crate::workload::{Accounting, EntityDef, Level};

/// The corrector's view of the share entities, derived once.
#[derive(Debug, Clone, Default)]
pub struct ShareKeys {
    /// For each share entity: its level, its group id and, for a user, its user id.
    entity: Vec<(Level, u32, Option<u32>)>,
    /// Rank of each group id and user id among the names of its kind, in name order.
    group_rank: BTreeMap<u32, u32>,
    user_rank: BTreeMap<u32, u32>,
    /// The group id of each corrector instance; `None` for the global one.
    instance_group: Vec<Option<u32>>,
}

/// Ranks in name order of the interned names with this prefix.
fn ranks(names: &Names, prefix: &str) -> BTreeMap<u32, u32> {
    let mut ids: Vec<(&str, u32)> = names.with_prefix(prefix).collect();
    ids.sort_unstable();
    ids.into_iter().enumerate().map(|(rank, (_, id))| (id, rank as u32)).collect()
}

impl ShareKeys {
    /// Keys of the entities `defs` and of the instances of `sc`; interns what is new.
    pub fn new(defs: &[EntityDef], sc: &ShareCorrections, names: &mut Names) -> Self {
        let entity = defs
            .iter()
            .map(|d| match d.level {
                Level::Group => (Level::Group, names.id(&format!("group:{}", d.name)), None),
                Level::User => {
                    let (g, u) = d.name.split_once('/').expect("a user entity is group/user");
                    (Level::User, names.id(&format!("group:{g}")), Some(names.id(&format!("user:{u}"))))
                }
            })
            .collect();
        let instance_group =
            sc.instances.iter().map(|i| i.group.as_ref().map(|g| names.id(&format!("group:{g}")))).collect();
        Self { entity, group_rank: ranks(names, "group:"), user_rank: ranks(names, "user:"), instance_group }
    }
}

/// The (possibly corrected) shares of every entity with task queues now.
///
/// Under the DIRAC 9 variant the in-group (per-group) instances do nothing: DIRAC 9 keys their
/// history by DN and the TQ owners by user name, so no entity ever matches, every slice is
/// skipped and every factor is 1 (reference §3.3, "v9 no-op").
pub fn entity_shares(
    tqs: &TaskQueueDb,
    st: &Static,
    sc: &ShareCorrections,
    variant: CorrectorVariant,
    keys: &ShareKeys,
    accounting: &Accounting,
) -> EntityShares {
    let mut shares = st.shares.clone();
    if !sc.enabled {
        return shares;
    }
    let owners = priority::owners_per_group(tqs.iter());
    for (inst, &group) in sc.instances.iter().zip(&keys.instance_group) {
        if group.is_some() && variant == CorrectorVariant::Dirac9 {
            continue;
        }
        // The usage of each slice, keyed as the instance's entities; entities with no usage
        // are absent, as in an accounting report.
        let slices: Vec<BTreeMap<u32, f64>> = inst
            .slices
            .iter()
            .map(|slice| {
                let Some(avg) = accounting.average_running(slice.time_span_s) else { return BTreeMap::new() };
                keys.entity
                    .iter()
                    .zip(avg)
                    .filter(|(_, a)| *a > 0.0)
                    .filter_map(|(&(level, g, u), a)| match (group, level, u) {
                        (None, Level::Group, _) => Some((keys.group_rank[&g], a)),
                        (Some(ig), Level::User, Some(u)) if ig == g => Some((keys.user_rank[&u], a)),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        match group {
            None => {
                let expected: BTreeMap<u32, f64> =
                    owners.keys().map(|g| (keys.group_rank[g], st.shares.group[g])).collect();
                let corrected = corrector::correct_shares(inst, variant, &expected, &slices);
                for g in owners.keys() {
                    shares.group.insert(*g, corrected[&keys.group_rank[g]]);
                }
            }
            Some(g) => {
                // Factors do not depend on the scale of the expected shares: S_g/U_g each.
                let Some(users) = owners.get(&g) else { continue };
                let expected: BTreeMap<u32, f64> = users.iter().map(|u| (keys.user_rank[u], 1.0)).collect();
                let factors = corrector::correction_factors(inst, variant, &expected, &slices);
                for u in users {
                    shares.user_factor.insert((g, *u), factors[&keys.user_rank[u]]);
                }
            }
        }
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimTime;
    use crate::workload::JobEntities;

    /// The quickstart's user group with an in-group corrector; alice ran 30 jobs for an
    /// hour, bob 10, carol none.
    fn factors(variant: CorrectorVariant) -> BTreeMap<(u32, u32), f64> {
        let mut s = crate::scenario::quickstart().scenario;
        let d = s.dirac_mut();
        d.share_corrections = ron::from_str(
            "(enabled: true, instances: [(name: \"u\", group: Some(\"lhcb_user\"), slices: [(name: \"h\", time_span_s: 3600)])])",
        )
        .unwrap();
        let d = s.dirac.clone().unwrap();
        let mut st = Static::new(&s, &d);
        let entities = super::super::setup::share_entities(&s, &d);
        let keys = ShareKeys::new(&entities.defs, &d.share_corrections, &mut st.names);
        let mut tqs = TaskQueueDb::new();
        for j in 1..s.workload.len() {
            tqs.insert_job(&st.stream_def[j], j as u32, 1);
        }
        let mut acc = Accounting::new(entities.defs.len());
        let user = |name: &str| entities.defs.iter().position(|e| e.name == format!("lhcb_user/{name}")).unwrap();
        let group = entities.defs.iter().position(|e| e.name == "lhcb_user").unwrap();
        for (name, n) in [("alice", 30), ("bob", 10)] {
            for _ in 0..n {
                acc.job_started(SimTime::ZERO, JobEntities { group, user: Some(user(name)) });
            }
        }
        acc.snapshot(SimTime::from_secs(3600));
        entity_shares(&tqs, &st, &d.share_corrections, variant, &keys, &acc).user_factor
    }

    #[test]
    fn the_in_group_corrector_applies_in_the_seed_and_does_nothing_in_dirac9() {
        let seed = factors(CorrectorVariant::Seed);
        let f: Vec<f64> = seed.values().copied().collect();
        // alice (3/4 of the usage) is corrected down, bob and carol up: MaxCorrection 3.
        assert_eq!(f.len(), 3);
        assert!(f[0] < 1.0 && f[1] > 1.0 && f[2] == 3.0, "{f:?}");
        assert!(factors(CorrectorVariant::Dirac9).is_empty(), "DIRAC 9: every factor stays 1");
    }
}
