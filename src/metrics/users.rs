//! Every user's figures (`summary.json` `users`): how long each user's jobs waited and what
//! share of its group's running time it got.
//!
//! Users are those a fair-share question is about: the users of DIRAC groups whose users
//! share the group (no `JOB_SHARING`: seed 001 §"Priorities" gives each user 1/U of the
//! group), keyed by their share entity (`lhcb_user/carol`), and the analysis users of a WMS
//! without user entities (PanDA's `prodUserName` within a gshare), keyed `gshare/user`. A
//! group's figures alone hide a starving user: carol's 3 % share looks benign until her jobs'
//! waits are shown beside it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::RunData;
use super::recorder::{Level, ShareUnit};
use super::summary::WaitStats;
use crate::workload::JobKind;

/// One user's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserSummary {
    /// The share group (DIRAC group or PanDA gshare) the user's jobs count for.
    pub group: String,
    /// The user's target share within the group where the WMS has one (DIRAC: its user
    /// entity's); none for PanDA's users, which PanDA does not share among.
    pub target_share: Option<f64>,
    /// Share of the group's running time after the warm-up, in the group's unit (jobs for
    /// DIRAC, cores for PanDA).
    pub achieved_share: Option<f64>,
    /// Time from submission to match of the user's jobs.
    pub wait_s: WaitStats,
}

/// The users of a finished run. `entity_waits` are the waits per share entity, `achieved`
/// each entity's achieved share (the recorder's, exact).
pub fn build(run: &RunData, entity_waits: &[WaitStats], achieved: &[Option<f64>]) -> BTreeMap<String, UserSummary> {
    let r = &*run.recorder;
    let mut users = BTreeMap::new();
    for (e, def) in r.entities.iter().enumerate() {
        if def.level != Level::User {
            continue;
        }
        let group = def.parent.map_or_else(String::new, |g| r.entities[g].name.clone());
        users.insert(
            def.name.clone(),
            UserSummary {
                group,
                target_share: Some(def.target_share),
                achieved_share: achieved[e],
                wait_s: entity_waits[e].clone(),
            },
        );
    }
    // PanDA's analysis users (no user entity): from the jobs, over the same window as the
    // recorder (after the warm-up, until the end), a job running from its match to its end.
    let warmup = run.scenario.output.warmup_s;
    let end = run.meta.end.as_secs_f64();
    let mut group_running = vec![0.0; r.entities.len()];
    let mut per_user: BTreeMap<(usize, &str), (Vec<f64>, f64)> = BTreeMap::new();
    for j in run.jobs {
        let of = run.entities_of_stream[j.stream as usize];
        let unit = if r.entities[of.group].unit == ShareUnit::Cores { f64::from(j.cores) } else { 1.0 };
        let running = j.matched().map_or(0.0, |m| {
            let from = m.as_secs_f64().max(warmup);
            let to = j.ended().map_or(end, |t| t.as_secs_f64()).min(end);
            unit * (to - from).max(0.0)
        });
        group_running[of.group] += running;
        if let Some(User::Panda { group, owner }) = user_of(run, j) {
            let entry = per_user.entry((group, owner)).or_default();
            entry.0.extend(j.wait_s());
            entry.1 += running;
        }
    }
    for ((g, owner), (waits, running)) in per_user {
        let group = r.entities[g].name.clone();
        let total = group_running[g];
        users.insert(
            format!("{group}/{owner}"),
            UserSummary {
                group,
                target_share: None,
                achieved_share: (total > 0.0).then(|| running / total),
                wait_s: WaitStats::of(waits),
            },
        );
    }
    users
}

/// Whose a job is, when its user is one of [`build`]'s.
enum User<'r> {
    /// A DIRAC user entity.
    Entity(usize),
    /// A PanDA analysis user: the gshare's entity and `prodUserName`.
    Panda { group: usize, owner: &'r str },
}

fn user_of<'r>(run: &'r RunData, j: &crate::workload::Job) -> Option<User<'r>> {
    let of = run.entities_of_stream[j.stream as usize];
    if let Some(u) = of.user {
        return Some(User::Entity(u));
    }
    let stream = &run.streams[j.stream as usize];
    // DIRAC's users are its user entities: a JOB_SHARING group's users do not share it.
    let panda = run.wms_names.get(usize::from(stream.wms)).is_some_and(|w| w == "panda");
    (panda && stream.kind == JobKind::Analysis).then_some(User::Panda { group: of.group, owner: &stream.owner })
}

/// Every user's waits (seconds), keyed as in [`build`], in key order: what the per-user wait
/// chart draws.
pub fn waits(run: &RunData) -> Vec<(String, Vec<f64>)> {
    let r = &*run.recorder;
    // Every user of the summary, also one whose jobs never started (empty).
    let mut out: BTreeMap<String, Vec<f64>> =
        r.entities.iter().filter(|e| e.level == Level::User).map(|e| (e.name.clone(), Vec::new())).collect();
    for j in run.jobs {
        let key = match user_of(run, j) {
            Some(User::Entity(u)) => r.entities[u].name.clone(),
            Some(User::Panda { group, owner }) => format!("{}/{owner}", r.entities[group].name),
            None => continue,
        };
        out.entry(key).or_default().extend(j.wait_s());
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use crate::run;
    use crate::scenario;

    #[test]
    fn dirac_users_are_their_entities_with_their_own_waits() {
        let p = run::prepare(&scenario::quickstart(), &["duration_s=28800".into()]).unwrap();
        let mut f = run::simulate(&p, 3, |_, _| {}).unwrap();
        let s = f.summary();
        let names: Vec<&str> = s.users.keys().map(String::as_str).collect();
        assert_eq!(names, ["lhcb_user/alice", "lhcb_user/bob", "lhcb_user/carol"], "lhcb_prod shares jobs, not users");
        for (name, u) in &s.users {
            let e = &s.entities[name];
            assert_eq!(
                (u.group.as_str(), u.target_share, u.achieved_share),
                ("lhcb_user", Some(e.target_share), e.achieved_share)
            );
            assert_eq!(u.wait_s.mean, e.mean_wait_s, "{name}");
        }
        // The users' jobs are the group's: their counts add up; the chart's waits are the same.
        let n: u64 = s.users.values().map(|u| u.wait_s.n).sum();
        assert_eq!(n, s.wait_time_s["lhcb_user"].n);
        let waits = super::waits(&f.core_data());
        assert_eq!(waits.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), names);
        for (name, w) in waits {
            assert_eq!(crate::metrics::summary::WaitStats::of(w), s.users[&name].wait_s);
        }
    }

    #[test]
    fn panda_analysis_users_share_their_gshare() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/panda_quickstart.ron");
        let p = run::prepare(&scenario::load_file(&path).unwrap(), &[]).unwrap();
        let s = run::simulate(&p, 4, |_, _| {}).unwrap().summary();
        let analysis: Vec<_> = s.users.iter().filter(|(_, u)| u.group == "User Analysis").collect();
        assert_eq!(analysis.len(), 2, "{:?}", s.users.keys());
        assert!(
            analysis.iter().all(|(n, u)| n.starts_with("User Analysis/") && u.target_share.is_none() && u.wait_s.n > 0)
        );
        // The gshare runs only these users' jobs: their core shares make it whole.
        let total: f64 = analysis.iter().map(|(_, u)| u.achieved_share.unwrap()).sum();
        assert!((total - 1.0).abs() < 1e-9, "{total}");
        assert!(!s.users.keys().any(|k| k.contains("atlas-prod")), "production is not a user's");
    }
}
