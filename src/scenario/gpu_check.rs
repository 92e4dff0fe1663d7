//! The checks of what a scenario says about GPUs beyond each field's own range: a CE's DIRAC
//! `RequiredTag` and `NumberOfGPUs` against its tags and GPU nodes, DIRAC streams asking for
//! GPUs against the CEs that would match them, and PanDA's GPU queues against their CEs.
//!
//! The DIRAC check exists because DIRAC 9 matches GPU jobs by tag only (reference `dirac.md`
//! §1.3 item 5; `JobScheduling._getTagsFromManifest` makes no tag of `NumberOfGPUs` and the
//! Matcher drops the pilot's count): a CPU pilot at a CE whose tags a GPU stream matches would
//! take its jobs. The real payload would find no GPU there; a simulation that ran it would be wrong, so
//! such a scenario is refused with the fix.

use super::Scenario;
use super::dirac_check::StreamMatcher;
use super::validate::Problem;
use crate::dirac::director;
use crate::grid::config::{Ce, Site};
use crate::scenario::dirac::DiracConfig;
use crate::scenario::panda::PandaQueue;

/// The GPU problems of a scenario whose fields are otherwise valid.
pub(super) fn problems(s: &Scenario) -> Vec<Problem> {
    let mut out = Vec::new();
    for (i, site) in s.sites.iter().enumerate() {
        for (j, ce) in site.ces.iter().enumerate() {
            ce_problems(&format!("sites[{i}].ces[{j}]"), ce, &mut out);
        }
    }
    if let Some(d) = &s.dirac {
        let fed = dirac_factory_ces(s);
        let m = StreamMatcher::new(s, d);
        for (i, _) in s.workload.iter().enumerate().filter(|(_, w)| w.number_of_gpus > 0) {
            if let Some(p) = dirac_stream_problem(s, d, &m, i, &fed) {
                out.push(Problem { path: format!("workload[{i}].number_of_gpus"), message: p });
            }
        }
    }
    if let Some(p) = &s.panda {
        for (i, q) in p.queues.iter().enumerate() {
            if q.worker_gpus() > 0 && !queue_ces(&s.sites, q).any(|ce| ce.gpus.iter().any(|g| g.gpus_per_node > 0)) {
                out.push(Problem {
                    path: format!("panda.queues[{i}].resource_type"),
                    message: format!(
                        "PQ {:?} is a GPU queue (resource_type \"gpu\": Harvester requests a GPU for every worker) but none of its CEs has a GPU node: every worker would be refused",
                        q.name
                    ),
                });
            }
        }
    }
    out
}

/// What is likely wrong but runs: a PanDA queue that takes GPU tasks and gets CPU workers.
pub(super) fn warnings(s: &Scenario) -> Vec<Problem> {
    let mut out = Vec::new();
    let Some(p) = &s.panda else { return out };
    for (i, q) in p.queues.iter().enumerate() {
        let cpu_only: Vec<&str> = queue_ces(&s.sites, q)
            .filter(|ce| !ce.gpus.iter().any(|g| g.gpus_per_node > 0))
            .map(|ce| ce.name.as_str())
            .collect();
        if q.worker_gpus() > 0 && !cpu_only.is_empty() && queue_ces(&s.sites, q).count() > cpu_only.len() {
            out.push(Problem {
                path: format!("panda.queues[{i}].ces"),
                message: format!(
                    "GPU queue {:?} also submits to CEs without GPU nodes ({}): they refuse every one of its GPU workers",
                    q.name,
                    cpu_only.join(", ")
                ),
            });
        }
        let gpu_capable = q.catchall.split(',').any(|c| c.starts_with("gpu")) || q.software.arch_entry("gpu").is_some();
        let factory_fed = s.factory.iter().any(|f| f.target().2 == Some(q.name.as_str()));
        if gpu_capable && factory_fed {
            out.push(Problem {
                path: format!("panda.queues[{i}]"),
                message: format!(
                    "PQ {:?} takes GPU tasks but a pilot factory feeds it, and a factory's pilots hold no GPU: GPU jobs brokered there never start",
                    q.name
                ),
            });
        } else if gpu_capable && q.worker_gpus() == 0 {
            let case = match q.resource_type.as_deref() {
                Some(t) if t.eq_ignore_ascii_case("gpu") => {
                    format!(" ({t:?}: Harvester compares with \"gpu\" exactly)")
                }
                _ => String::new(),
            };
            out.push(Problem {
                path: format!("panda.queues[{i}].resource_type"),
                message: format!(
                    "PQ {:?} takes GPU tasks (a gpu architecture entry or catchall) but its Harvester submits CPU workers: resource_type is not \"gpu\"{case}; GPU jobs brokered there never start",
                    q.name
                ),
            });
        }
    }
    out
}

fn ce_problems(p: &str, ce: &Ce, out: &mut Vec<Problem>) {
    for (k, t) in ce.required_tags.iter().enumerate() {
        if !ce.tags.contains(t) {
            out.push(Problem {
                path: format!("{p}.required_tags[{k}]"),
                message: format!(
                    "RequiredTag {t:?} is not one of the CE's tags (DIRAC refuses a RequiredTag outside Tag)"
                ),
            });
        }
    }
    let per_node = ce.gpus.iter().map(|g| g.gpus_per_node).max().unwrap_or(0);
    if ce.number_of_gpus > per_node {
        out.push(Problem {
            path: format!("{p}.number_of_gpus"),
            message: format!(
                "DIRAC's pilots here ask for {} GPUs but no GPU node of CE {:?} has that many (most per node: {per_node}): the batch system would refuse every one",
                ce.number_of_gpus, ce.name
            ),
        });
    }
}

/// Per CE (index order), whether a pilot factory feeds it for DIRAC: its pilots hold no GPU.
fn dirac_factory_ces(s: &Scenario) -> Vec<bool> {
    let mut fed = vec![false; s.sites.iter().map(|x| x.ces.len()).sum()];
    for f in s.factory.iter().filter(|f| f.target().2.is_none()) {
        for c in f.ce_ids(&s.sites) {
            fed[c as usize] = true;
        }
    }
    fed
}

/// The submit pools of stream `w`'s task queues: its own, or the director's default ones.
fn stream_pools<'a>(d: &'a DiracConfig, w: &'a crate::workload::config::JobStream) -> &'a [String] {
    if w.submit_pools.is_empty() { &d.director.default_submit_pools } else { &w.submit_pools }
}

/// Whether the director may submit generic pilots for stream `w`'s task queues
/// ([`director::may_submit_generic`]; pilot types are compared lower-cased, as the TQ
/// definition interns them).
fn gets_generic_pilots(d: &DiracConfig, w: &crate::workload::config::JobStream) -> bool {
    let private_tq = w.pilot_types.iter().any(|t| t.to_lowercase() == "private");
    director::may_submit_generic(&d.director, private_tq, w.force_generic)
}

/// The CEs DIRAC's pilots that may take the jobs of GPU stream `i` reach (the director's submit
/// pools of the stream, the pools of every stream whose task queues get generic pilots, and the
/// CEs its pilot factories feed) where the Matcher would give such a pilot those jobs, CPU time
/// apart ([`StreamMatcher::takes`]), but whose pilots hold fewer GPUs than its jobs use.
fn dirac_stream_problem(s: &Scenario, d: &DiracConfig, m: &StreamMatcher, i: usize, fed: &[bool]) -> Option<String> {
    let w = &s.workload[i];
    let mut pools: Vec<&String> = stream_pools(d, w).iter().collect();
    for other in s.workload.iter().filter(|o| gets_generic_pilots(d, o)) {
        pools.extend(stream_pools(d, other));
    }
    let pooled = |ce: &Ce| {
        let mut named = d.director.submit_pools.iter().filter(|p| pools.contains(&&p.name));
        named.any(|p| p.ces.is_empty() || p.ces.contains(&ce.name))
    };
    let ces = s.sites.iter().flat_map(|site| &site.ces);
    let short: Vec<(&str, u32)> = ces
        .enumerate()
        .filter(|&(c, ce)| fed[c] || pooled(ce))
        .filter(|&(c, _)| m.takes(i, c))
        .map(|(c, ce)| (ce.name.as_str(), if fed[c] { 0 } else { ce.number_of_gpus }))
        .filter(|&(_, gpus)| gpus < w.number_of_gpus)
        .collect();
    let (name, gpus) = *short.first()?;
    let more = match short.len() - 1 {
        0 => String::new(),
        n => format!(" (and {n} more CEs)"),
    };
    Some(format!(
        "stream {:?} uses {} GPUs per job, but CE {name:?}{more} matches its tags and gives DIRAC's pilots {gpus} (its number_of_gpus, 0 where a pilot factory feeds it): DIRAC 9 matches GPU jobs by tag only, so a pilot there would take a job it cannot run. Give the stream a tag only GPU CEs offer (tags: [\"GPU\"]), or keep GPU CEs for tagged jobs (required_tags: [\"GPU\"])",
        w.name, w.number_of_gpus
    ))
}

/// The CEs Harvester submits to for PQ `q`: its `ces`, or every CE of its site.
fn queue_ces<'a>(sites: &'a [Site], q: &'a PandaQueue) -> impl Iterator<Item = &'a Ce> + 'a {
    sites
        .iter()
        .filter(move |site| site.name == q.site)
        .flat_map(|site| site.ces.iter())
        .filter(move |ce| q.ces.is_empty() || q.ces.contains(&ce.name))
}

#[cfg(test)]
mod tests {
    use super::super::{QUICKSTART, parse};
    use super::*;

    fn quick() -> Scenario {
        parse(QUICKSTART, "quickstart").unwrap()
    }

    fn gpu_node() -> crate::grid::config::GpuInventory {
        serde_json::from_str(r#"{"vendor":"NVIDIA","model":"NVIDIA A100-SXM4-40GB","vram_mb":40960,"gpus_per_node":4}"#)
            .unwrap()
    }

    #[test]
    fn a_required_tag_outside_the_tags_and_more_gpus_than_a_node_are_refused() {
        let mut s = quick();
        let ce = &mut s.sites[0].ces[0];
        ce.required_tags = vec!["GPU".into()];
        ce.number_of_gpus = 1;
        let p = problems(&s);
        assert!(p.iter().any(|p| p.path == "sites[0].ces[0].required_tags[0]"), "{p:?}");
        assert!(p.iter().any(|p| p.path == "sites[0].ces[0].number_of_gpus" && p.message.contains("most per node: 0")));
        let ce = &mut s.sites[0].ces[0];
        ce.tags.push("GPU".into());
        ce.gpus = vec![gpu_node()];
        assert_eq!(problems(&s), Vec::new());
    }

    /// The quickstart with a GPU CE (site 0's first, tagged `GPU`, one GPU per pilot), a CPU CE
    /// tagged `GPU` too (site 1's first) and stream 0 a one-GPU stream tagged `GPU`: the names
    /// of the two CEs.
    fn gpu_stream_and_tagged_cpu_ce(s: &mut Scenario) -> (String, String) {
        let (gpu, cpu) = (s.sites[0].ces[0].name.clone(), s.sites[1].ces[0].name.clone());
        let ce = &mut s.sites[0].ces[0];
        (ce.tags, ce.gpus, ce.number_of_gpus) = (vec!["GPU".into()], vec![gpu_node()], 1);
        s.sites[1].ces[0].tags = vec!["GPU".into()];
        s.workload[0].tags = vec!["GPU".into()];
        s.workload[0].number_of_gpus = 1;
        (gpu, cpu)
    }

    /// Only the CEs DIRAC's pilots reach count: a CPU CE tagged `GPU` outside every submit pool
    /// of the stream (another VO's) does not make a DIRAC GPU stream invalid.
    #[test]
    fn a_gpu_tagged_ce_dirac_never_reaches_is_not_held_against_a_stream() {
        let mut s = quick();
        let (gpu, cpu) = gpu_stream_and_tagged_cpu_ce(&mut s);
        let p = problems(&s);
        assert!(p.iter().any(|p| p.message.contains(&format!("CE {cpu:?}"))), "{p:?}");
        let d = s.dirac.as_mut().unwrap();
        d.director.submit_pools = vec![crate::dirac::director::SubmitPool { name: "GPUs".into(), ces: vec![gpu] }];
        d.director.default_submit_pools = vec!["GPUs".into()];
        assert_eq!(problems(&s), Vec::new());
    }

    /// A generic pilot takes any stream's jobs: a CPU CE tagged `GPU` in the pool of another
    /// stream whose task queues get generic pilots is held against the GPU stream, and is not
    /// once that stream's pilots are all private.
    #[test]
    fn a_generic_pilot_of_another_stream_counts_where_it_reaches() {
        let mut s = quick();
        let (gpu, cpu) = gpu_stream_and_tagged_cpu_ce(&mut s);
        s.workload[0].submit_pools = vec!["GPUs".into()];
        let d = s.dirac.as_mut().unwrap();
        d.director.submit_pools = vec![
            crate::dirac::director::SubmitPool { name: "GPUs".into(), ces: vec![gpu] },
            crate::dirac::director::SubmitPool { name: "CPUs".into(), ces: vec![cpu.clone()] },
        ];
        d.director.default_submit_pools = vec!["CPUs".into()];
        d.director.private_pilot_fraction = 0.5;
        let p = problems(&s);
        assert!(p.iter().any(|p| p.message.contains(&format!("CE {cpu:?}"))), "{p:?}");
        s.dirac.as_mut().unwrap().director.private_pilot_fraction = 0.0;
        assert_eq!(problems(&s), Vec::new(), "private pilots of the other streams take none of its jobs");
    }

    /// PanDA's GPU queues: a CPU CE among a GPU queue's CEs, and a queue that takes GPU tasks
    /// but whose `resource_type` is not exactly `gpu`, are warned about; a GPU queue without any
    /// GPU CE is refused.
    #[test]
    fn panda_gpu_queues_are_checked_against_their_ces() {
        let mut s = parse(include_str!("../../scenarios/gpu_grid.ron"), "gpu_grid").unwrap();
        assert_eq!((problems(&s), warnings(&s)), (Vec::new(), Vec::new()));
        let q = &mut s.panda.as_mut().unwrap().queues;
        q[2].ces.clear(); // every CERN CE, ce503 without GPUs among them
        q[3].resource_type = Some("GPU".into());
        let w = warnings(&s);
        assert!(w.iter().any(|p| p.path == "panda.queues[2].ces" && p.message.contains("ce503.cern.ch")), "{w:?}");
        assert!(w.iter().any(|p| p.path == "panda.queues[3].resource_type" && p.message.contains("exactly")), "{w:?}");
        let q = &mut s.panda.as_mut().unwrap().queues;
        q[2].ces = vec!["ce503.cern.ch".into()];
        assert!(problems(&s).iter().any(|p| p.path == "panda.queues[2].resource_type"));
    }

    /// DIRAC matches GPU jobs by tag only: a GPU stream must not match a CE whose pilots hold
    /// fewer GPUs, and the message says how to fix it.
    #[test]
    fn a_dirac_gpu_stream_that_a_cpu_ce_would_match_is_refused_with_the_fix() {
        let mut s = quick();
        s.workload[0].number_of_gpus = 1;
        let p = problems(&s);
        assert!(
            p.iter().any(|p| p.path == "workload[0].number_of_gpus" && p.message.contains("tags: [\"GPU\"]")),
            "{p:?}"
        );
        for site in &mut s.sites {
            for ce in &mut site.ces {
                ce.gpus = vec![gpu_node()];
                ce.number_of_gpus = 1;
            }
        }
        assert_eq!(problems(&s), Vec::new(), "every CE gives its pilots a GPU");
        s.workload[0].number_of_gpus = 2;
        assert!(problems(&s).iter().any(|p| p.path == "workload[0].number_of_gpus"), "one GPU is not two");
    }
}
