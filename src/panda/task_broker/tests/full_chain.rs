//! Every full-chain combination (seed 004 "Special Brokerage for ATLAS Full-chain"; reference
//! §1 filter 7, L504-538): task mode × bareNucleus, satellites as candidates, the parent rule.

use super::*;

/// N0 normal, N1 `bareNucleus=only`, N2 `allow`, S3 a satellite with `allow`, S4 a plain satellite.
fn world() -> World {
    let mut w = World::new();
    w.nuclei[0].name = "N0".into();
    w.nuclei[1].name = "N1".into();
    w.nuclei[2].name = "N2".into();
    w.nuclei[1].bare_nucleus = Some(BareNucleus::Only);
    w.nuclei[2].bare_nucleus = Some(BareNucleus::Allow);
    w.endpoints.push(ep("S3_DATADISK", 500.0, 1000.0));
    w.endpoints.push(ep("S4_DATADISK", 500.0, 1000.0));
    let mut s3 = nucleus("S3", 3);
    s3.role = Role::Satellite;
    s3.bare_nucleus = Some(BareNucleus::Allow);
    let mut s4 = nucleus("S4", 4);
    s4.role = Role::Satellite;
    w.nuclei.push(s3);
    w.nuclei.push(s4);
    w.prio_rw = vec![0.0; 5];
    w
}

fn run(mode: Option<FullChain>, v: TaskBrokerVariant) -> (Vec<usize>, Vec<(usize, SkipReason<'static>)>) {
    let mut w = world();
    w.task.full_chain = mode;
    let w: &'static World = Box::leak(Box::new(w));
    let b = w.run(v);
    let skipped = b.skipped().iter().map(|s| (s.nucleus, s.reason)).collect();
    (cands(&b), skipped)
}

/// Task mode, variant, expected candidates, expected (nucleus, reason) skips.
type Row = (Option<FullChain>, TaskBrokerVariant, &'static [usize], &'static [(usize, SkipReason<'static>)]);

#[test]
fn mode_by_bare_nucleus_matrix() {
    use FullChain::*;
    use SkipReason::{NoFullChainCapability as NoCap, OnlyFullChain};
    // (task mode, variant, candidates, skipped) — satellites are candidates only for full-chain
    // tasks, and S4 (no bare mode) never.
    let expected: [Row; 10] = [
        (None, SEED, &[0, 2], &[(1, OnlyFullChain)]),
        (None, CODE, &[0, 2], &[(1, OnlyFullChain)]),
        (Some(Only), SEED, &[1], &[(0, NoCap), (2, NoCap), (3, NoCap)]),
        (Some(Only), CODE, &[1, 2, 3], &[(0, NoCap)]),
        (Some(Require), SEED, &[1, 2, 3], &[(0, NoCap)]),
        (Some(Require), CODE, &[1, 2, 3], &[(0, NoCap)]),
        (Some(Capable), SEED, &[0, 1, 2, 3], &[]),
        (Some(Capable), CODE, &[0, 1, 2, 3], &[]),
        (Some(Other), SEED, &[0, 1, 2, 3], &[]),
        (Some(Other), CODE, &[0, 1, 2, 3], &[]),
    ];
    for (mode, v, c, s) in expected {
        let (got_c, got_s) = run(mode, v);
        assert_eq!(got_c, c, "{mode:?} {v:?}");
        assert_eq!(got_s, s, "{mode:?} {v:?}");
    }
}

#[test]
fn full_chain_messages() {
    let mut w = world();
    w.task.full_chain = Some(FullChain::Require);
    assert_eq!(lines(&w.run(CODE)), ["  skip nucleus=N0 due to lack of full-chain capability criteria=-full_chain"]);
    w.task.full_chain = Some(FullChain::Capable);
    w.task.parent = Parent::Task { full_chain: true, nucleus: Some(2) };
    assert_eq!(
        lines(&w.run(CODE)),
        [
            "  skip nucleus=N0 since the parent of the full-chain ran elsewhere criteria=-full_chain",
            "  skip nucleus=N1 since the parent of the full-chain ran elsewhere criteria=-full_chain",
            "  skip nucleus=S3 since the parent of the full-chain ran elsewhere criteria=-full_chain",
        ]
    );
}

fn with_parent(mode: FullChain, parent: Parent, v: TaskBrokerVariant) -> Brokerage<'static> {
    let mut w = world();
    w.task.full_chain = Some(mode);
    w.task.parent = parent;
    // leak the small world so the borrowed result can be returned from the helper
    let w: &'static World = Box::leak(Box::new(w));
    w.run(v)
}

#[test]
fn capable_follows_a_full_chain_parent_on_a_bare_nucleus() {
    for v in BOTH {
        let parent = Parent::Task { full_chain: true, nucleus: Some(2) };
        assert_eq!(cands(&with_parent(FullChain::Capable, parent, v)), [2], "{v:?}");
        // a parent on a normal nucleus imposes nothing
        let parent = Parent::Task { full_chain: true, nucleus: Some(0) };
        assert_eq!(cands(&with_parent(FullChain::Capable, parent, v)), [0, 1, 2, 3], "{v:?}");
        // the task is its own parent
        assert_eq!(cands(&with_parent(FullChain::Capable, Parent::Itself, v)), [0, 1, 2, 3]);
    }
}

/// The seed: "only if the parent task was assigned to a bare nucleus"; the code also wants the
/// parent itself to be full-chain (`check_full_chain_with_nucleus`).
#[test]
fn capable_with_a_normal_parent_on_a_bare_nucleus_by_variant() {
    let parent = Parent::Task { full_chain: false, nucleus: Some(2) };
    assert_eq!(cands(&with_parent(FullChain::Capable, parent, SEED)), [2]);
    assert_eq!(cands(&with_parent(FullChain::Capable, parent, CODE)), [0, 1, 2, 3]);
    // for `require` (the seed is silent) both follow the code
    assert_eq!(cands(&with_parent(FullChain::Require, parent, SEED)), [1, 2, 3]);
}

#[test]
fn require_follows_a_parent_on_a_bare_satellite() {
    for v in BOTH {
        let parent = Parent::Task { full_chain: true, nucleus: Some(3) };
        assert_eq!(cands(&with_parent(FullChain::Require, parent, v)), [3]);
    }
}

#[test]
fn parent_lookup_failures() {
    for v in BOTH {
        let b = with_parent(FullChain::Capable, Parent::NotFound, v);
        assert_eq!(pending(&b).reason, PendingReason::ParentNotFound);
        assert_eq!(pending(&b).reason.to_string(), "failed to get parent taskSpec");
    }
    // a task without full chain never looks its parent up
    let mut w = world();
    w.task.parent = Parent::NotFound;
    assert_eq!(cands(&w.run(CODE)), [0, 2]);
    // a full-chain parent whose nucleus the site mapper does not know: the code raises
    let parent = Parent::Task { full_chain: true, nucleus: Some(42) };
    assert_eq!(pending(&with_parent(FullChain::Capable, parent, CODE)).reason, PendingReason::ParentNucleusUnknown);
    assert_eq!(cands(&with_parent(FullChain::Capable, parent, SEED)), [0, 1, 2, 3]);
    // ... unless the parent is not full-chain (short-circuit)
    let parent = Parent::Task { full_chain: false, nucleus: None };
    assert_eq!(cands(&with_parent(FullChain::Capable, parent, CODE)), [0, 1, 2, 3]);
}

/// A parent's nucleus removed by an earlier filter leaves nothing.
#[test]
fn parent_nucleus_filtered_out_leaves_pending() {
    let mut w = world();
    w.nuclei[2].state = NucleusState::Disabled;
    w.task.full_chain = Some(FullChain::Capable);
    w.task.parent = Parent::Task { full_chain: true, nucleus: Some(2) };
    let b = w.run(CODE);
    assert_eq!(pending(&b).reason, PendingReason::NoCandidates { stage: Stage::FullChain });
    assert_eq!(b.why_not(2).map(SkipReason::stage), Some(Stage::Status));
}
