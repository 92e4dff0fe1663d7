//! The queue side: `architectures` with `excl` (seed examples, §9 vectors), the two-stage GPU
//! selection, the release / container / cmtconfig / tag rules and the brokers' wrappers.

use super::*;

fn q(json: &str) -> QueueSoftware {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"))
}

fn a(text: &str) -> TaskArch {
    TaskArch::parse(text).unwrap()
}

/// The standalone (analysis, no transHome) check of one queue, seed variant.
fn hw(queue: &QueueSoftware, arch: &TaskArch, variant: ArchVariant) -> SwCheck {
    json_software_check(queue, &SwRequest::standalone(arch, None, false), None, variant)
}

fn cpu_queue(arch_list: &str) -> QueueSoftware {
    q(&format!(r#"{{"architectures": [{{"type": "cpu", "arch": {arch_list}}}]}}"#))
}

/// The seed's AGLT2 entry (without the stray comma after "11.0.3", which is invalid JSON).
const AGLT2: &str = r#"{
  "cmtconfigs": ["x86_64-centos7-gcc62-opt", "x86_64-centos7-gcc8-opt", "x86_64-slc6-gcc49-opt",
                 "x86_64-slc6-gcc62-opt", "x86_64-slc6-gcc8-opt"],
  "containers": ["any", "/cvmfs"],
  "cvmfs": ["atlas", "nightlies"],
  "architectures": [
    {"arch": ["x86_64"], "instr": ["avx2"], "type": "cpu", "vendor": ["intel", "excl"]},
    {"type": "gpu", "vendor": ["nvidia", "excl"], "model": ["kt100"], "version": "11.0.3"}
  ],
  "tags": [
    {"cmtconfig": "x86_64-slc6-gcc62-opt", "container_name": "", "project": "AthDerivation", "release": "21.2.2.0",
     "sources": [], "tag": "VO-atlas-AthDerivation-21.2.2.0-x86_64-slc6-gcc62-opt"},
    {"cmtconfig": "x86_64-slc6-gcc62-opt", "container_name": "", "project": "Athena", "release": "21.0.38",
     "sources": [], "tag": "VO-atlas-Athena-21.0.38-x86_64-slc6-gcc62-opt"}
  ]
}"#;

#[test]
fn seed_excl_example_x86_64_task() {
    let task = a("#x86_64");
    for list in [r#"["x86_64"]"#, r#"["x86_64", "excl"]"#, r#"[""]"#] {
        assert_eq!(hw(&cpu_queue(list), &task, ArchVariant::Seed), SwCheck::Pass, "{list}");
    }
    assert!(matches!(hw(&cpu_queue(r#"["arm64"]"#), &task, ArchVariant::Seed), SwCheck::Skip(SwSkip::Cpu(_))));
    // ⚠ reference §5/§9: the code rejects "arch": [""].
    match hw(&cpu_queue(r#"[""]"#), &task, ArchVariant::PandaServer) {
        SwCheck::Skip(SwSkip::Cpu(m)) => {
            assert_eq!(
                m,
                vec![CpuMismatch::NotOffered { attr: "arch", value: "x86_64".into(), offered: r#"[""]"#.into() }]
            )
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(hw(&cpu_queue(r#"["any"]"#), &task, ArchVariant::PandaServer), SwCheck::Pass);
    assert_eq!(
        hw(&cpu_queue(r#"["aarch64", "x86_64"]"#), &a("#(x86_64|aarch64)"), ArchVariant::PandaServer),
        SwCheck::Pass
    );
}

#[test]
fn reference_excl_vectors() {
    let star = a(r#"{"cpu_specs": [{"arch": "*"}]}"#);
    for v in [ArchVariant::Seed, ArchVariant::PandaServer] {
        let by_arch = hw(&cpu_queue(r#"["x86_64", "excl"]"#), &star, v);
        assert!(
            matches!(&by_arch, SwCheck::Skip(SwSkip::Cpu(m)) if matches!(m[0], CpuMismatch::Exclusive { attr: "arch", .. }))
        );
        let vendor = q(r#"{"architectures": [{"type": "cpu", "arch": ["x86_64"], "vendor": ["intel", "excl"]}]}"#);
        let by_vendor = hw(&vendor, &star, v);
        assert!(
            matches!(&by_vendor, SwCheck::Skip(SwSkip::Cpu(m)) if matches!(m[0], CpuMismatch::Exclusive { attr: "vendor", .. }))
        );
        let gpu_excl = q(
            r#"{"architectures": [{"type": "cpu", "arch": ["x86_64"]}, {"type": "gpu", "vendor": ["nvidia", "excl"]}]}"#,
        );
        assert_eq!(
            hw(&gpu_excl, &star, v),
            SwCheck::Skip(SwSkip::ExclusiveHardware { kind: "gpu", attr: "vendor".into() })
        );
        let none = TaskArch::none();
        assert_eq!(
            hw(&cpu_queue(r#"["x86_64", "excl"]"#), &none, v),
            SwCheck::Skip(SwSkip::ExclusiveHardware { kind: "cpu", attr: "arch".into() })
        );
    }
    // gpu vram>=80000 against an A100-40GB: no PQ.
    let mut gpu_q = q(r#"{"architectures": [{"type": "gpu", "vendor": ["nvidia"]}]}"#);
    gpu_q.wn_gpus = vec![a100()];
    let big = a(r#"{"gpu_spec": {"vendor": "nvidia", "vram": ">=80000"}}"#);
    assert_eq!(
        hw(&gpu_q, &big, ArchVariant::Seed),
        SwCheck::Skip(SwSkip::Gpu(GpuMismatch::Requirement {
            attr: GpuAttr::Vram,
            requirement: ">=80000".into(),
            gpu: 0
        }))
    );
    assert_eq!(hw(&gpu_q, &a("#&nvidia:vram>=40960"), ArchVariant::Seed), SwCheck::Pass);
}

#[test]
fn two_stage_gpu_selection() {
    // Stage 1: no gpu entry in CRIC → skipped whatever the worker nodes report.
    let mut cpu_only = cpu_queue(r#"["x86_64"]"#);
    cpu_only.wn_gpus = vec![a100()];
    let task = a("#&nvidia");
    assert_eq!(hw(&cpu_only, &task, ArchVariant::Seed), SwCheck::Skip(SwSkip::NotGpuCapable));
    // Stage 2 without worker-node data: wildcard requests only.
    let capable = q(r#"{"architectures": [{"type": "gpu", "vendor": ["nvidia"], "model": ["kt100"]}]}"#);
    assert_eq!(hw(&capable, &a(r#"{"gpu_spec": {}}"#), ArchVariant::Seed), SwCheck::Pass);
    assert_eq!(
        hw(&capable, &task, ArchVariant::Seed),
        SwCheck::Skip(SwSkip::Gpu(GpuMismatch::NoGpuData { attr: GpuAttr::Vendor }))
    );
    // CRIC's vendor/model lists are not compared any more: worker-node data decides.
    let mut amd_in_cric = q(r#"{"architectures": [{"type": "gpu", "vendor": ["amd"], "model": ["MI250"]}]}"#);
    amd_in_cric.wn_gpus = vec![a100(), v100()];
    assert_eq!(hw(&amd_in_cric, &a("#&nvidia:model=.*A100.*"), ArchVariant::Seed), SwCheck::Pass);
    let excl = a("#&nvidia:model!=.*(P100|V100).*");
    assert_eq!(
        hw(&amd_in_cric, &excl, ArchVariant::Seed),
        SwCheck::Skip(SwSkip::Gpu(GpuMismatch::ModelExcluded { pattern: ".*(P100|V100).*".into(), gpu: 1 }))
    );
    // Per-GPU explanation and the dispatch-time gate.
    let v = gpu_verdicts(&a("#&nvidia:vram>=40960").gpu_spec.unwrap(), &amd_in_cric.wn_gpus);
    assert_eq!((v[0].fits(), v[1].failed().collect::<Vec<_>>()), (true, vec![GpuAttr::Vram]));
    assert!(check_task_architecture(&a("#&nvidia:vram>=40960"), &[]).is_ok(), "no reported GPUs: accepted");
    assert!(check_task_architecture(&a("#&nvidia:vram>=40960"), &[v100()]).is_err());
    assert!(check_task_architecture(&a("x86_64-el9-gcc13-opt"), &[v100()]).is_ok());
}

#[test]
fn seed_aglt2_queue() {
    let aglt2 = q(AGLT2);
    let plain = a("x86_64-slc6-gcc62-opt");
    let req = SwRequest::production(&plain, "Athena-21.0.38", None, false).unwrap();
    assert_eq!(
        json_software_check(&aglt2, &req, None, ArchVariant::Seed),
        SwCheck::Skip(SwSkip::ExclusiveHardware { kind: "gpu", attr: "vendor".into() }),
        "the published gpu entry is exclusive: a task without a GPU spec is refused"
    );
    let mut with_gpus = aglt2.clone();
    with_gpus.wn_gpus = vec![a100()];
    let gpu_task = a("x86_64-slc6-gcc62-opt#x86_64-intel-avx2&nvidia:cuda>=12.0");
    let req = SwRequest::production(&gpu_task, "Athena-21.0.38", None, false).unwrap();
    assert_eq!(json_software_check(&with_gpus, &req, None, ArchVariant::Seed), SwCheck::Pass);
    assert_eq!(
        sw_filter(&with_gpus, &gpu_task, &req, Broker::Production, None, ArchVariant::Seed),
        Ok(SwPass::Auto { resolved_platform: None })
    );
    let amd = a("x86_64-slc6-gcc62-opt#x86_64-amd&nvidia");
    let req = SwRequest::production(&amd, "Athena-21.0.38", None, false).unwrap();
    assert!(matches!(
        json_software_check(&with_gpus, &req, None, ArchVariant::Seed),
        SwCheck::Skip(SwSkip::Cpu(m)) if matches!(m[0], CpuMismatch::NotOffered { attr: "vendor", .. })
    ));
    assert_eq!(aglt2.arch_entry("gpu").unwrap().attrs.get("version"), Some(&AttrValue::Text("11.0.3".into())));
}

#[test]
fn release_checks_and_the_tag_fallback() {
    let sw = |extra: &str| a(&format!(r#"{{"sw_platform": "x86_64-slc6-gcc62-opt"{extra}}}"#));
    let queue = |cvmfs: &str, containers: &str, cmt: &str| {
        q(&format!(
            r#"{{"cvmfs": {cvmfs}, "containers": {containers}, "cmtconfigs": {cmt},
                "tags": [{{"cmtconfig": "x86_64-slc6-gcc62-opt", "project": "Athena", "release": "21.0.38"}}]}}"#
        ))
    };
    let check = |queue: &QueueSoftware, arch: &TaskArch, th: &str, v| {
        json_software_check(queue, &SwRequest::production(arch, th, None, false).unwrap(), None, v)
    };
    let listed = queue(r#"["atlas"]"#, "[]", r#"["x86_64-slc6-gcc62-opt"]"#);
    let (plain, based) = (sw(""), sw(r#", "base_platform": "el9""#));
    for v in [ArchVariant::Seed, ArchVariant::PandaServer] {
        assert_eq!(check(&listed, &plain, "Athena-22.0.1", v), SwCheck::Pass, "cvmfs + cmtconfig");
        assert_eq!(check(&queue(r#"["any"]"#, r#"["/cvmfs"]"#, "[]"), &plain, "Athena-22.0.1", v), SwCheck::Pass);
        let no_cvmfs = queue("[]", "[]", "[]");
        assert_eq!(check(&no_cvmfs, &plain, "Athena-21.0.38", v), SwCheck::Pass, "tag fallback");
        assert!(matches!(
            check(&no_cvmfs, &plain, "Athena-21.0.39", v),
            SwCheck::Skip(SwSkip::NoTag { cvmfs_ok: false, .. })
        ));
        let slash_cvmfs = queue("[]", r#"["/cvmfs"]"#, "[]");
        assert_eq!(check(&slash_cvmfs, &based, "Athena-21.0.38", v), SwCheck::Skip(SwSkip::TagNeedsAnyContainer));
        let nightly = SwRequest {
            cvmfs_tag: Some("nightlies"),
            need_cvmfs: true,
            ..SwRequest::production(&plain, "x-1", None, false).unwrap()
        };
        assert_eq!(
            json_software_check(&no_cvmfs, &nightly, None, v),
            SwCheck::Skip(SwSkip::Cvmfs { tag: "nightlies".into() })
        );
    }
    // The two ways the seed and the code differ.
    assert_eq!(check(&listed, &based, "Athena-22.0.1", ArchVariant::Seed), SwCheck::Pass);
    assert!(matches!(
        check(&listed, &based, "Athena-22.0.1", ArchVariant::PandaServer),
        SwCheck::Skip(SwSkip::ContainerOrCmtConfig { need_container: true, .. })
    ));
    let cvmfs_no_cmt = queue(r#"["atlas"]"#, "[]", "[]");
    assert_eq!(check(&cvmfs_no_cmt, &plain, "Athena-21.0.38", ArchVariant::Seed), SwCheck::Pass, "tags after cvmfs");
    assert!(matches!(
        check(&cvmfs_no_cmt, &plain, "Athena-21.0.38", ArchVariant::PandaServer),
        SwCheck::Skip(SwSkip::ContainerOrCmtConfig { need_container: false, .. })
    ));
}

#[test]
fn fat_containers() {
    let task = a(r#"{"sw_platform": "x86_64-el9-gcc13-opt"}"#);
    let queue = q(r#"{"containers": ["/cvmfs/unpacked.cern.ch/registry.hub.docker.com/atlas/"],
                      "tags": [{"container_name": "atlas/athena:24.0.1", "sources": ["/cvmfs/unpacked.cern.ch/x/analysisbase"]}]}"#);
    let all = q(
        r#"{"tags": [{"container_name": "athanalysis:21.2", "sources": ["/cvmfs/unpacked.cern.ch/registry.hub.docker.com/atlas/athanalysis:21.2"]}]}"#,
    );
    let check = |name: &str, only_tags: bool, all: Option<&QueueSoftware>| {
        json_software_check(&queue, &SwRequest::standalone(&task, Some(name), only_tags), all, ArchVariant::Seed)
    };
    assert_eq!(check("atlas/athena:24.0.1", true, None), SwCheck::Pass, "tag container_name");
    assert_eq!(check("/cvmfs/unpacked.cern.ch/x/analysisbase", true, None), SwCheck::Pass, "tag sources");
    assert_eq!(
        check("/cvmfs/unpacked.cern.ch/registry.hub.docker.com/atlas/athena:25", false, None),
        SwCheck::Pass,
        "prefix"
    );
    assert_eq!(check("athanalysis:21.2", false, Some(&all)), SwCheck::Pass, "resolved through ALL");
    assert_eq!(
        check("athanalysis:21.2", true, Some(&all)),
        SwCheck::Skip(SwSkip::Container { name: "athanalysis:21.2".into(), only_tags: true })
    );
    assert!(matches!(check("athanalysis:21.2", false, None), SwCheck::Skip(SwSkip::Container { .. })));
    let any = q(r#"{"containers": ["any"]}"#);
    let req = SwRequest::standalone(&task, Some("whatever"), false);
    assert_eq!(json_software_check(&any, &req, None, ArchVariant::Seed), SwCheck::Pass);
    let req = SwRequest::standalone(&task, Some("whatever"), true);
    assert!(matches!(
        json_software_check(&any, &req, None, ArchVariant::Seed),
        SwCheck::Skip(SwSkip::Container { .. })
    ));
}

#[test]
fn regexp_cmtconfig_is_resolved_per_queue() {
    let task = a("(x86_64|aarch64)-el9-gcc13-opt@el9");
    let arm =
        q(r#"{"cmtconfigs": ["aarch64-el9-gcc13-opt"], "architectures": [{"type": "cpu", "arch": ["aarch64"]}]}"#);
    let req = SwRequest::standalone(&task, None, false);
    for v in [ArchVariant::Seed, ArchVariant::PandaServer] {
        assert_eq!(resolve_cmt_config(&arm, &task, v).as_deref(), Some("aarch64-el9-gcc13-opt@el9"));
        assert_eq!(
            sw_filter(&arm, &task, &req, Broker::Analysis, None, v),
            Ok(SwPass::Auto { resolved_platform: Some("aarch64-el9-gcc13-opt@el9".into()) })
        );
    }
    // No cmtconfig of the queue matches: the seed leaves the regexp unresolved ...
    let old = q(r#"{"cmtconfigs": ["x86_64-el8-gcc11-opt"], "architectures": [{"type": "cpu", "arch": ["x86_64"]}]}"#);
    let e = sw_filter(&old, &task, &req, Broker::Analysis, None, ArchVariant::Seed).unwrap_err();
    assert_eq!(e, SwSkip::UnresolvedRegexp { cmt_config: "(x86_64|aarch64)-el9-gcc13-opt".into() });
    assert_eq!(e.criteria(), "-regexpcmtconfig");
    assert!(e.to_string().contains("due to unresolved regexp in cmtconfig=(x86_64|aarch64)-el9-gcc13-opt"));
    // ... panda-server 1.0.4 resolves the alternation with the queue's CPU architectures.
    assert_eq!(
        sw_filter(&old, &task, &req, Broker::Analysis, None, ArchVariant::PandaServer),
        Ok(SwPass::Auto { resolved_platform: Some("x86_64-el9-gcc13-opt@el9".into()) })
    );
    let plain = a("x86_64-el9-gcc13-opt");
    let listed = q(r#"{"cmtconfigs": ["x86_64-el9-gcc13-opt"]}"#);
    for v in [ArchVariant::Seed, ArchVariant::PandaServer] {
        assert_eq!(resolve_cmt_config(&listed, &plain, v), None, "listed as is: nothing to resolve");
    }
}

/// `resolve_arch_in_cmt_config` (panda-server 1.0.4, AtlasBrokerUtils.py L1150-1174): the case
/// of the independent check, `(aarch64|x86_64)-el9-gcc15-opt` on an x86_64 queue listing no el9
/// cmtconfig, and the edges of the alternation's shape and of the queue's architecture list.
#[test]
fn arch_alternation_resolves_with_the_queue_cpu_architectures() {
    const PS: ArchVariant = ArchVariant::PandaServer;
    let x86 = q(r#"{"cmtconfigs": ["x86_64-centos7-gcc11-opt"], "containers": ["any"], "cvmfs": ["atlas"],
                   "architectures": [{"type": "cpu", "arch": ["x86_64"]}]}"#);
    let task = a("(aarch64|x86_64)-el9-gcc15-opt");
    assert_eq!(resolve_cmt_config(&x86, &task, PS).as_deref(), Some("x86_64-el9-gcc15-opt"));
    assert_eq!(resolve_cmt_config(&x86, &task, ArchVariant::Seed), None);
    let with_base = a("(aarch64|x86_64)-el9-gcc15-opt@el9");
    assert_eq!(resolve_cmt_config(&x86, &with_base, PS).as_deref(), Some("x86_64-el9-gcc15-opt@el9"));
    // The production broker (transHome set, containers `any`): skipped before, kept now.
    let prod = |v| production_sw_check(&x86, &task, Some("Athena-25.0.30"), None, false, None, v).unwrap();
    assert_eq!(
        prod(ArchVariant::Seed),
        Err(SwSkip::UnresolvedRegexp { cmt_config: "(aarch64|x86_64)-el9-gcc15-opt".into() })
    );
    assert_eq!(prod(PS), Ok(SwPass::Auto { resolved_platform: Some("x86_64-el9-gcc15-opt".into()) }));
    // The task's order decides; `any` takes the first alternative.
    let both = cpu_queue(r#"["x86_64", "aarch64"]"#);
    assert_eq!(
        resolve_arch_in_cmt_config(&both, "(aarch64|x86_64)-el9-gcc15-opt").as_deref(),
        Some("aarch64-el9-gcc15-opt")
    );
    let any = cpu_queue(r#"["any"]"#);
    assert_eq!(resolve_arch_in_cmt_config(&any, "(ppc64le|x86_64)-el9").as_deref(), Some("ppc64le-el9"));
    // Every `type: cpu` entry counts; other types and a queue without CPU architectures do not.
    let split = q(r#"{"architectures": [{"type": "gpu", "arch": ["x86_64"]}, {"type": "cpu", "arch": ["aarch64"]},
                                        {"type": "cpu", "arch": ["x86_64"]}]}"#);
    assert_eq!(queue_cpu_architectures(&split), vec!["aarch64".to_string(), "x86_64".to_string()]);
    assert_eq!(resolve_arch_in_cmt_config(&split, "(riscv64|x86_64)-el9").as_deref(), Some("x86_64-el9"));
    let gpu_only = q(r#"{"architectures": [{"type": "gpu", "arch": ["x86_64"]}]}"#);
    assert_eq!(resolve_arch_in_cmt_config(&gpu_only, "(aarch64|x86_64)-el9"), None);
    assert_eq!(resolve_arch_in_cmt_config(&cpu_queue(r#"["aarch64"]"#), "(ppc64le|x86_64)-el9"), None);
    // A plain-string arch is a list of characters (Python's `list += str`).
    let text = q(r#"{"architectures": [{"type": "cpu", "arch": "x86_64"}]}"#);
    assert_eq!(resolve_arch_in_cmt_config(&text, "(x86_64|aarch64)-el9"), None);
    assert_eq!(resolve_arch_in_cmt_config(&text, "(6|aarch64)-el9").as_deref(), Some("6-el9"));
    // Only a leading alternation followed by a literal rest.
    for other in [
        "x86_64-el9-gcc15-opt",
        "(x86_64|aarch64)",
        "(x86_64|)-el9",
        "x(86_64|aarch64)-el9",
        "(x86_64|aarch64)-el.*",
        "(x86_64|aarch64)-el9-(gcc13|gcc15)-opt",
        "((x86_64))-el9",
    ] {
        assert_eq!(resolve_arch_in_cmt_config(&x86, other), None, "{other}");
    }
    assert_eq!(resolve_arch_in_cmt_config(&x86, "(x86_64|aarch64)-el9\n").as_deref(), Some("x86_64-el9"));
}

#[test]
fn non_auto_queues_and_the_any_rule() {
    let any = q(r#"{"releases": ["ANY"]}"#);
    let no_hw = a(r#"{"sw_platform": "x86_64-el9-gcc13-opt"}"#);
    let hw_task = a("x86_64-el9-gcc13-opt");
    let run = |queue: &QueueSoftware, arch: &TaskArch, container, only_tags, broker| {
        let req = SwRequest {
            container_name: container,
            only_tags_fc: only_tags,
            ..SwRequest::standalone(arch, None, false)
        };
        sw_filter(queue, arch, &req, broker, None, ArchVariant::Seed)
    };
    assert_eq!(
        json_software_check(&any, &SwRequest::standalone(&no_hw, None, false), None, ArchVariant::Seed),
        SwCheck::NoAuto
    );
    assert_eq!(run(&any, &no_hw, None, false, Broker::Production), Ok(SwPass::Any));
    assert_eq!(
        run(&any, &hw_task, None, false, Broker::Production),
        Err(SwSkip::NotAuto { releases: vec!["ANY".into()] }),
        "the implied CPU spec of a plain cmtconfig needs an AUTO queue"
    );
    assert!(run(&any, &no_hw, Some("c"), true, Broker::Production).is_err(), "only-tags container");
    assert_eq!(run(&any, &no_hw, Some("c"), true, Broker::Analysis), Ok(SwPass::Any));
    let other = q(r#"{"releases": ["21.0.38"]}"#);
    assert!(matches!(run(&other, &no_hw, None, false, Broker::Production), Err(SwSkip::NoRelease { .. })));
    let not_in_map = QueueSoftware { in_sw_map: false, ..QueueSoftware::default() };
    assert!(matches!(run(&not_in_map, &hw_task, None, false, Broker::Analysis), Err(SwSkip::NotAuto { .. })));
    let bare_auto = QueueSoftware::default();
    assert_eq!(run(&bare_auto, &hw_task, None, false, Broker::Analysis), Err(SwSkip::NoArchitectures));
}

#[test]
fn production_trans_home_and_analysis_gpu_queue() {
    let arch = a("x86_64-el9-gcc13-opt");
    let r = SwRequest::production(&arch, "Athena-21.0.38", None, false).unwrap();
    assert_eq!((r.cvmfs_tag, r.sw_project, r.sw_version), (Some("atlas"), Some("Athena"), Some("21.0.38")));
    let r = SwRequest::production(&arch, "AthDerivation-21.2.2.0", None, false).unwrap();
    assert_eq!((r.cvmfs_tag, r.sw_version), (Some("atlas"), Some("21.2.2.0")));
    for nightly in ["Athena-master-rel_3", "Athena-22.0.X-2024-01-15T2101"] {
        let r = SwRequest::production(&arch, nightly, None, false).unwrap();
        assert_eq!((r.cvmfs_tag, r.sw_project), (Some("nightlies"), None), "{nightly}");
    }
    assert_eq!(SwRequest::production(&arch, "Athena", None, false), Err(ArchError::TransHome("Athena".into())));
    let queue = QueueSoftware::default();
    assert_eq!(
        production_sw_check(&queue, &arch, None, None, false, None, ArchVariant::Seed),
        Ok(Ok(SwPass::NotChecked))
    );
    // Analysis: GPU queues need an architecture that check() accepts without HW.
    let gpu_q = q(r#"{"architectures": [{"type": "gpu", "vendor": ["nvidia", "excl"]}]}"#);
    let none = TaskArch::none();
    assert_eq!(
        analysis_gpu_queue_check(&gpu_q, true, false, &none, ArchVariant::Seed),
        Err(SwSkip::ArchitectureRequired)
    );
    assert_eq!(analysis_gpu_queue_check(&gpu_q, true, true, &none, ArchVariant::Seed), Ok(()), "HPO");
    let e = analysis_gpu_queue_check(&gpu_q, true, false, &arch, ArchVariant::Seed).unwrap_err();
    assert!(e.to_string().starts_with("since architecture=x86_64-el9-gcc13-opt is unavailable"), "{e}");
    assert_eq!(analysis_gpu_queue_check(&QueueSoftware::default(), true, false, &arch, ArchVariant::Seed), Ok(()));
}

#[test]
fn string_attributes_read_with_python_in() {
    assert!(AttrValue::Text("x86_64_v2".into()).contains("x86_64"), "substring");
    assert!(!AttrValue::List(vec!["x86_64_v2".into()]).contains("x86_64"));
    let queue = q(r#"{"architectures": [{"type": "cpu", "arch": "x86_64_v2"}]}"#);
    assert_eq!(hw(&queue, &a("#x86_64"), ArchVariant::PandaServer), SwCheck::Pass);
    let missing = q(r#"{"architectures": [{"type": "cpu", "vendor": ["intel"]}]}"#);
    assert_eq!(
        hw(&missing, &a("#x86_64"), ArchVariant::Seed),
        SwCheck::Skip(SwSkip::Cpu(vec![CpuMismatch::QueueArchMissing]))
    );
    assert_eq!(
        hw(&cpu_queue(r#"["x86_64"]"#), &a("#*-intel"), ArchVariant::Seed),
        SwCheck::Skip(SwSkip::Cpu(vec![CpuMismatch::TaskArchMissing]))
    );
    assert!(serde_json::from_str::<QueueSoftware>(r#"{"architecture": []}"#).is_err(), "unknown field");
    assert!(serde_json::from_str::<QueueSoftware>(r#"{"architectures": [{"type": "cpu", "arch": 5}]}"#).is_err());
}
