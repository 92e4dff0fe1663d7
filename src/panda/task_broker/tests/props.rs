//! Property tests: no parser and no brokerage input panics (NaN, infinities, negative numbers,
//! indices out of range, empty lists), and the result is consistent.

use super::*;
use proptest::prelude::*;

fn num() -> impl Strategy<Value = f64> {
    prop_oneof![prop::num::f64::ANY, -1e7..1e9f64, Just(0.0)]
}

fn wan(i: u8) -> WanStatus {
    [WanStatus::On, WanStatus::Off, WanStatus::Test, WanStatus::Missing][usize::from(i % 4)]
}

fn endpoint() -> impl Strategy<Value = DdmEndpoint> {
    (0..4u8, 0..4u8, any::<bool>(), num(), num(), num(), num()).prop_map(|(r, w, tape, u, f, e, t)| DdmEndpoint {
        name: "E".into(),
        is_tape: tape,
        read_wan: wan(r),
        write_wan: wan(w),
        space_usable: u,
        space_free: f,
        space_expired: e,
        space_total: t,
    })
}

fn nucleus_spec() -> impl Strategy<Value = NucleusSpec> {
    (
        (0..3u8, any::<bool>(), 0..3u8, any::<bool>()),
        (num(), num()),
        prop::collection::vec(prop::option::of(0..6usize), 0..3),
        prop::collection::vec(0..6usize, 0..3),
    )
        .prop_map(|((state, satellite, bare, jobs), (queued, rw), out, inp)| NucleusSpec {
            name: "N".into(),
            state: [NucleusState::Active, NucleusState::Disabled, NucleusState::Test][usize::from(state)],
            role: if satellite { Role::Satellite } else { Role::Nucleus },
            bare_nucleus: [None, Some(BareNucleus::Only), Some(BareNucleus::Allow)][usize::from(bare)],
            queued_output_files: queued,
            full_rw: rw,
            output_endpoints: out,
            input_endpoints: inp,
            can_run_jobs: jobs,
        })
}

fn replica() -> impl Strategy<Value = Replica> {
    (0..6usize, 0..4u64, any::<u64>(), 0..4u64, any::<u64>()).prop_map(|(endpoint, t, tb, f, ab)| Replica {
        endpoint,
        total_files: t,
        total_bytes: tb,
        found_files: f,
        available_bytes: ab,
    })
}

fn input_dataset() -> impl Strategy<Value = InputDataset> {
    (0..4u8, any::<bool>(), prop::collection::vec(prop::collection::vec(replica(), 0..3), 0..3)).prop_map(
        |(kind, master, constituents)| InputDataset {
            name: "D".into(),
            kind: [DatasetKind::Regular, DatasetKind::Pseudo, DatasetKind::Dbr, DatasetKind::Log][usize::from(kind)],
            master,
            constituents,
        },
    )
}

fn task() -> impl Strategy<Value = TaskSpec> {
    (
        (-2000..2000i64, -2000..2000i64, prop::option::of(num()), -2..2i64, 0..5u8),
        (any::<bool>(), any::<bool>(), prop::option::of(0..7usize), prop::option::of(num())),
        (0..3u8, any::<bool>(), prop::option::of(0..7usize)),
        prop::collection::vec(input_dataset(), 0..3),
        prop::collection::vec((0..3usize, any::<bool>()), 0..3),
    )
        .prop_map(|((tp, cp, io, t1, fc), (ps, om, nucleus, frozen), (parent, pfc, pn), inputs, outputs)| {
            TaskSpec {
                task_priority: tp,
                current_priority: cp,
                io_intensity: io,
                t1_weight: t1,
                full_chain: [
                    None,
                    Some(FullChain::Only),
                    Some(FullChain::Require),
                    Some(FullChain::Capable),
                    Some(FullChain::Other),
                ][usize::from(fc)],
                input_pre_staging: ps,
                task_broker_on_master: om,
                work_queue: "MC".into(),
                nucleus,
                frozen_for_s: frozen,
                parent: match parent {
                    0 => Parent::Itself,
                    1 => Parent::NotFound,
                    _ => Parent::Task { full_chain: pfc, nucleus: pn },
                },
                inputs,
                outputs: outputs
                    .into_iter()
                    .map(|(token, distributed)| OutputDataset { storage_token: "T".into(), token, distributed })
                    .collect(),
            }
        })
}

fn params() -> impl Strategy<Value = TaskBrokerageParams> {
    (num(), num(), num(), num(), num(), num(), -1000..2000i64).prop_map(|(dt, cut, st, nt, sf, period, prio)| {
        TaskBrokerageParams {
            disk_threshold: dt,
            free_disk_cutoff: cut,
            input_size_threshold: st,
            input_num_threshold: nt,
            input_size_fraction: sf,
            data_location_check_period: period,
            max_task_prio_with_local_data: prio,
            ..TaskBrokerageParams::default()
        }
    })
}

proptest! {
    #[test]
    fn parsers_never_panic(s in ".*") {
        let _ = FullChain::from_split_rule(&s);
        let _ = t1_weight_from_split_rule(&s);
        let _ = input_pre_staging_from_split_rule(&s);
        let _ = BareNucleus::from_catchall(&s);
    }

    #[test]
    fn parsers_on_split_rule_shapes(
        tokens in prop::collection::vec(("(FU|TW|IS|NG|X)", "-{0,3}[0-9]{0,4}[a-z]?"), 0..5),
    ) {
        let rule: Vec<String> = tokens.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let rule = rule.join(",");
        let t1 = t1_weight_from_split_rule(&rule);
        if !rule.contains("TW=") {
            prop_assert_eq!(t1, Ok(0));
        }
        let fu_with_digits = tokens.iter().any(|(k, v)| k == "FU" && v.starts_with(|c: char| c.is_ascii_digit()));
        prop_assert_eq!(FullChain::from_split_rule(&rule).is_some(), fu_with_digits);
    }

    #[test]
    fn brokerage_never_panics_and_is_consistent(
        task in task(),
        nuclei in prop::collection::vec(nucleus_spec(), 0..5),
        endpoints in prop::collection::vec(endpoint(), 0..5),
        prio_rw in prop::collection::vec(num(), 0..6),
        p in params(),
        seed in any::<u64>(),
        code in any::<bool>(),
    ) {
        let v = if code { CODE } else { SEED };
        let input = BrokerageInput { task: &task, nuclei: &nuclei, endpoints: &endpoints, prio_rw: &prio_rw };
        let mut rng = RngStreams::new(seed).stream("test/props");
        let b = do_brokerage(&input, &p, v, &mut rng);
        for s in b.skipped() {
            let _ = s.to_string();
            prop_assert!(s.nucleus < nuclei.len());
            prop_assert_eq!(b.skipped().iter().filter(|o| o.nucleus == s.nucleus).count(), 1);
        }
        match &b {
            Brokerage::Preset { nucleus } => prop_assert!(*nucleus < nuclei.len()),
            Brokerage::Assigned(a) => {
                prop_assert!(a.candidates.iter().any(|c| c.nucleus == a.nucleus));
                for c in &a.candidates {
                    let _ = c.to_string();
                    prop_assert!(b.why_not(c.nucleus).is_none());
                }
            }
            Brokerage::Pending(pd) => {
                prop_assert_eq!(pd.retry_after_s, 1800);
                let _ = (pd.reason.to_string(), pd.locality.to_string());
            }
        }
    }
}
