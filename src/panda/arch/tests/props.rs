//! Property tests: no architecture string, JSON spec, version, requirement or queue panics,
//! and parsing is deterministic.

use proptest::prelude::*;

use super::*;

/// Text made of the characters the parsers cut on, regexp syntax and letters.
fn arch_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("@".to_string()),
            Just("#".to_string()),
            Just("&".to_string()),
            Just("^".to_string()),
            Just(":".to_string()),
            Just("-".to_string()),
            Just("|".to_string()),
            Just("(".to_string()),
            Just(")".to_string()),
            Just("*".to_string()),
            Just("'".to_string()),
            Just("\"".to_string()),
            Just("{".to_string()),
            Just("}".to_string()),
            Just("=".to_string()),
            Just(">=".to_string()),
            Just("!=".to_string()),
            Just("model".to_string()),
            Just("vram".to_string()),
            Just("cuda".to_string()),
            Just("uarch".to_string()),
            Just("nvidia".to_string()),
            Just("x86_64".to_string()),
            Just(".*".to_string()),
            Just("12.0".to_string()),
            "[a-zA-Z0-9_.+?\\\\\\[\\]é ]{0,4}",
        ],
        0..16,
    )
    .prop_map(|parts| parts.concat())
}

/// A JSON value: strings (of architecture text), numbers, booleans, null, short lists.
/// PEP 440 version texts over a small alphabet, so that equal and near versions are common.
fn version_text() -> impl Strategy<Value = String> {
    "v?([01]!)?[0-2](\\.[0-2]){0,3}((a|b|rc)[0-2])?(\\.post[0-2])?(\\.dev[0-2])?(\\+[a0-2]{1,2}(\\.[a0-2]{1,2})?)?"
}

fn json_value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        arch_text().prop_map(|s| serde_json::Value::String(s).to_string()),
        Just("null".to_string()),
        Just("true".to_string()),
        Just("1".to_string()),
        Just("40960".to_string()),
        Just("-2.5".to_string()),
        Just(r#"">=40960""#.to_string()),
        Just(r#""*""#.to_string()),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| format!("[{}]", v.join(", "))),
            prop::collection::vec(
                (prop_oneof![Just("pattern"), Just("excl"), Just("arch"), Just("vendor"), Just("x")], inner),
                0..3
            )
            .prop_map(|kv| format!(
                "{{{}}}",
                kv.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect::<Vec<_>>().join(", ")
            )),
        ]
    })
}

/// A JSON architecture with the real keys and arbitrary values.
fn json_arch() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("sw_platform"),
        Just("base_platform"),
        Just("cpu_specs"),
        Just("gpu_spec"),
        Just("encoded_platform"),
        Just("cpu_pref"),
        Just("vendor"),
        Just("model"),
        Just("vram"),
        Just("microarchitecture"),
        Just("version"),
        Just("driver_version"),
    ];
    prop::collection::vec((key, json_value()), 0..5).prop_map(|kv| {
        let gpu: Vec<String> = kv.iter().skip(1).map(|(k, v)| format!("\"{k}\": {v}")).collect();
        let top: Vec<String> = kv.iter().take(1).map(|(k, v)| format!("\"{k}\": {v}")).collect();
        let mut all = top;
        all.push(format!("\"gpu_spec\": {{{}}}", gpu.join(", ")));
        format!("{{{}}}", all.join(", "))
    })
}

fn gpus() -> impl Strategy<Value = Vec<WnGpu>> {
    let row = (
        prop::option::of(prop_oneof![Just("NVIDIA".to_string()), arch_text()]),
        prop::option::of(arch_text()),
        prop::option::of(prop_oneof![Just(0u64), Just(40960u64), any::<u64>()]),
        prop::option::of(prop_oneof![Just("Ampere".to_string()), arch_text()]),
        prop::option::of(prop_oneof![Just("12.4".to_string()), arch_text()]),
        prop::option::of(prop_oneof![Just("575.57.08".to_string()), arch_text()]),
    );
    prop::collection::vec(
        row.prop_map(|(vendor, model, vram, architecture, framework_version, driver_version)| {
            WnGpu::from(WnGpuRow {
                vendor,
                model,
                vram,
                architecture,
                framework_version,
                driver_version,
                ..WnGpuRow::default()
            })
        }),
        0..3,
    )
}

fn queue() -> impl Strategy<Value = QueueSoftware> {
    let list = || {
        prop::collection::vec(
            prop_oneof![Just("any".to_string()), Just("excl".to_string()), Just(String::new()), arch_text()],
            0..3,
        )
    };
    let entry = (prop_oneof![Just("cpu"), Just("gpu"), Just("tpu")], list(), list(), list(), arch_text()).prop_map(
        |(kind, arch, vendor, instr, text)| QueueArch {
            kind: Some(kind.to_string()),
            attrs: [
                ("arch".to_string(), AttrValue::List(arch)),
                ("vendor".to_string(), AttrValue::List(vendor)),
                ("instr".to_string(), AttrValue::Text(text)),
                ("model".to_string(), AttrValue::List(instr)),
            ]
            .into_iter()
            .collect(),
        },
    );
    (
        prop_oneof![Just(vec!["AUTO".to_string()]), Just(vec!["ANY".to_string()]), list()],
        list(),
        list(),
        list(),
        prop::collection::vec(entry, 0..3),
        gpus(),
    )
        .prop_map(|(releases, cmtconfigs, containers, cvmfs, architectures, wn_gpus)| QueueSoftware {
            releases,
            in_sw_map: true,
            cmtconfigs,
            containers,
            cvmfs,
            architectures,
            tags: vec![SwTag {
                cmtconfig: "x86_64-el9-gcc13-opt".into(),
                project: "Athena".into(),
                release: "24.0.1".into(),
                ..SwTag::default()
            }],
            wn_gpus,
        })
}

fn exercise(arch: &TaskArch, q: &QueueSoftware) {
    for v in [ArchVariant::Seed, ArchVariant::PandaServer] {
        for broker in [Broker::Production, Broker::Analysis] {
            let req = SwRequest::standalone(arch, Some("c"), true);
            let _ = sw_filter(q, arch, &req, broker, Some(q), v).map_err(|e| e.to_string());
        }
        let _ = production_sw_check(q, arch, Some("Athena-24.0.1"), None, false, None, v);
        let _ = production_sw_check(q, arch, Some("Athena-master-rel_1"), None, false, None, v);
        let _ = analysis_gpu_queue_check(q, true, false, arch, v).map_err(|e| e.to_string());
    }
    if let Some(g) = &arch.gpu_spec {
        let _ = match_gpu_spec(g, &q.wn_gpus).map_err(|e| e.to_string());
        let _ = gpu_verdicts(g, &q.wn_gpus);
        let _ = g.to_string();
    }
    let _ = check_task_architecture(arch, &q.wn_gpus);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn no_architecture_string_panics(text in prop_oneof![arch_text(), any::<String>()], q in queue()) {
        for v in [ArchVariant::Seed, ArchVariant::PandaServer] {
            match TaskArch::parse_with(&text, v) {
                Ok(arch) => {
                    let again = TaskArch::parse_with(&text, v);
                    prop_assert_eq!(Ok(&arch), again.as_ref(), "deterministic");
                    exercise(&arch, &q);
                }
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }
        let _ = TaskArch::parse_art_header(&format!("# art-architecture: {text}"));
    }

    #[test]
    fn no_json_spec_panics(text in json_arch(), q in queue()) {
        if let Ok(arch) = TaskArch::parse(&text) {
            exercise(&arch, &q);
        }
    }

    #[test]
    fn no_version_or_requirement_panics(a in prop_oneof![arch_text(), any::<String>()], b in prop_oneof![arch_text(), any::<String>()]) {
        let _ = compare_version_string(&a, &b);
        let c = Constraint::parse(&b);
        if let Some(v) = Version::parse(&a) {
            let _ = c.holds_for(&v);
        }
        let _ = c.holds_for_u64(40960);
    }

    /// The version order is a total order over generated PEP 440 versions (epochs, trailing
    /// zeros, pre/post/dev releases, local parts): antisymmetric and transitive.
    #[test]
    fn version_order_is_antisymmetric_and_transitive(a in version_text(), b in version_text(), c in version_text()) {
        let parse = |s: &str| Version::parse(s).unwrap_or_else(|| panic!("{s} does not parse"));
        let (a, b, c) = (parse(&a), parse(&b), parse(&c));
        prop_assert_eq!(a.cmp(&b), b.cmp(&a).reverse(), "antisymmetry {:?} {:?}", a, b);
        prop_assert_eq!(b.cmp(&c), c.cmp(&b).reverse());
        if a <= b && b <= c {
            prop_assert!(a <= c, "transitivity {:?} ≤ {:?} ≤ {:?}", a, b, c);
        }
        if a >= b && b >= c {
            prop_assert!(a >= c, "transitivity {:?} ≥ {:?} ≥ {:?}", a, b, c);
        }
        if a.cmp(&b).is_eq() && b.cmp(&c).is_eq() {
            prop_assert!(a.cmp(&c).is_eq());
        }
    }

    #[test]
    fn no_queue_json_panics(text in prop_oneof![json_value(), any::<String>()]) {
        let _ = serde_json::from_str::<QueueSoftware>(&text);
        let _ = serde_json::from_str::<WnGpu>(&text);
    }
}
