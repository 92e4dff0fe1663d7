//! Tests of the DIRAC WMS driven directly on a world built from a small scenario: what its
//! timers and the Matcher's matches do to the task queues and their priorities.

use super::*;
use crate::scenario::{parse, validate, warnings};

/// Two users of group `g`, one job each at time 0, under `preset`; `groups` replaces the
/// Registry groups.
fn scenario(preset: &str, groups: &str) -> Scenario {
    let text = format!(
        r#"Scenario(name: "t", duration_s: 3600, output: (warmup_s: 10),
            sites: [Site(name: "S", ces: [Ce(name: "ce", slots: 1, cpu_power: 1.0, max_walltime_s: 86400,
                   pilot_wait: Fixed(0))])],
            dirac: (preset: {preset}, groups: {groups}),
            workload: [
                JobStream(name: "a", owner: "u", group: "g", count: 1, arrival: Burst(at_s: 0),
                          cpu_work: Fixed(100), cpu_time: 100),
                JobStream(name: "b", owner: "v", group: "g", count: 1, arrival: Burst(at_s: 0),
                          cpu_work: Fixed(100), cpu_time: 100)])"#
    );
    let s = parse(&text, "t").unwrap();
    assert_eq!(validate(&s), vec![]);
    s
}

#[test]
fn dirac9_keeps_an_emptied_tq_until_the_directors_query_and_then_recomputes_nothing() {
    // DIRAC 9.1.22: u's only job is matched; its TQ stays (the 300 s DictCache is never
    // read), still counting u in U, so the agent's pass gives v's TQ 1000/2 = 500. The
    // director's getMatchingTaskQueues finds it and cleanOrphanedTaskQueues deletes it
    // without a recomputation: v stays at 500 until the next agent pass gives it 1000. (Before,
    // the TQ went 300 s after the match, with a recomputation that gave v 1000 at once, and
    // the director's cycle left it in place.)
    let s = scenario("Dirac9", r#"[(name: "g")]"#);
    let mut world = crate::sim::build(&s, 1).unwrap();
    let job_of = |stream: u32| world.core.jobs.iter().find(|j| j.stream == stream).unwrap().id;
    let (ju, jv) = (job_of(0), job_of(1));
    let (mut wms, _) = DiracWms::new(&s, s.dirac.as_ref().unwrap(), &RngStreams::new(1));
    let ctx: &mut dyn Ctx = &mut world.core;
    wms.job_submitted(ctx, ju);
    wms.job_submitted(ctx, jv);
    let (tu, tv) = (wms.job_tq[job_index(ju)].unwrap(), wms.job_tq[job_index(jv)].unwrap());
    let priority = |w: &DiracWms| w.tqs.get(tv).unwrap().priority;
    wms.recalculate_all(ctx);
    assert_eq!(priority(&wms), 500.0);
    wms.take_matched(ctx, matcher::Match { tq: tu, job: ju });
    wms.recalculate_all(ctx);
    assert_eq!((wms.tqs.get(tu).map(|t| t.n_jobs), priority(&wms)), (Some(0), 500.0), "kept, u still in U");
    wms.director_cycle(ctx);
    assert!(wms.tqs.get(tu).is_none(), "the director's query cleaned it");
    assert_eq!(priority(&wms), 500.0, "cleanOrphanedTaskQueues recomputes nothing");
    wms.recalculate_all(ctx);
    assert_eq!(priority(&wms), 1000.0);
}

#[test]
fn the_seed_deletes_an_emptied_tq_at_once_and_recomputes() {
    let s = scenario("Seed2009", r#"[(name: "g")]"#);
    let mut world = crate::sim::build(&s, 1).unwrap();
    let job_of = |stream: u32| world.core.jobs.iter().find(|j| j.stream == stream).unwrap().id;
    let (ju, jv) = (job_of(0), job_of(1));
    let (mut wms, _) = DiracWms::new(&s, s.dirac.as_ref().unwrap(), &RngStreams::new(1));
    let ctx: &mut dyn Ctx = &mut world.core;
    wms.job_submitted(ctx, ju);
    wms.job_submitted(ctx, jv);
    let (tu, tv) = (wms.job_tq[job_index(ju)].unwrap(), wms.job_tq[job_index(jv)].unwrap());
    wms.take_matched(ctx, matcher::Match { tq: tu, job: ju });
    assert!(wms.tqs.get(tu).is_none());
    assert_eq!(wms.tqs.get(tv).unwrap().priority, 1000.0);
}

#[test]
fn under_dirac9_a_job_share_that_is_not_an_integer_is_1000() {
    // `gConfig.getValue(".../JobShare", 1000)` casts with int(): 0.5 fails and gives 1000;
    // the seed reads 0.5. Group g (0.5) against h (2500): targets 0.5/2500.5 then 1000/3500.
    let groups = r#"[(name: "g", job_share: 0.5), (name: "h", job_share: 2500)]"#;
    let mut want = [(0.5, 0.5 / 2500.5), (1000.0, 1000.0 / 3500.0)].into_iter();
    for preset in ["Seed2009", "Dirac9"] {
        let mut s = scenario(preset, groups);
        s.workload[1].group = "h".into();
        let d = s.dirac.as_ref().unwrap();
        let st = Static::new(&s, d);
        let shares: Vec<f64> = st.shares.group.values().copied().collect();
        let target = setup::share_entities(&s, d).defs[0].target_share;
        let (share, target_share) = want.next().unwrap();
        assert_eq!((shares, target), (vec![share, 2500.0], target_share), "{preset}");
        let w = warnings(&s);
        assert_eq!(
            w.iter().map(|p| p.path.as_str()).collect::<Vec<_>>(),
            ["dirac.groups[0].job_share"][..usize::from(preset == "Dirac9")]
        );
    }
}
