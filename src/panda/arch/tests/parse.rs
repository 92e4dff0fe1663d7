//! Parsing: every architecture example of seed 004 (prun/pathena, ART headers, JSON), the §9
//! reference vectors, the string getters' quirks, the refiner's reformat, version constraints.

use super::*;

fn p(text: &str) -> TaskArch {
    TaskArch::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn g(text: &str) -> GpuSpec {
    p(text).gpu_spec.unwrap_or_else(|| panic!("{text}: no gpu spec"))
}

fn pat(text: &str) -> Pattern {
    Pattern::re_match(text, true, "test").unwrap()
}

fn c(raw: &str) -> Option<Constraint> {
    Some(Constraint::parse(raw))
}

fn cpu(a: &TaskArch) -> Vec<(Option<&str>, &str, &str)> {
    a.cpu_specs.iter().flatten().map(|s| (s.arch.as_deref(), s.vendor.as_str(), s.instr.as_str())).collect()
}

#[test]
fn reference_vectors_of_section_9() {
    let a = p("#&nvidia:model=.*A100.*:vram==81920:cuda>=12.0:driver>=575.0");
    let want = GpuSpec {
        vendor: Some(pat("nvidia")),
        model: ModelReq::Include(pat(".*A100.*")),
        vram: c("==81920"),
        microarchitecture: None,
        version: c(">=12.0"),
        driver_version: c(">=575.0"),
    };
    assert_eq!(a.gpu_spec, Some(want));
    assert_eq!(
        a.refined,
        r#"{"gpu_spec": {"vendor": "nvidia", "model": ".*A100.*", "vram": "==81920", "version": ">=12.0", "driver_version": ">=575.0"}}"#
    );
    assert_eq!((a.sw_platform.as_str(), a.base_platform.as_deref(), a.cpu_specs.as_ref()), ("", None, None));
    assert_eq!(g("#&nvidia:vram=15360").vram, c("==15360"), "= is ==");
    let two = p("@el9#(x86_64|aarch64)");
    assert_eq!(cpu(&two), vec![(Some("x86_64"), "*", "*"), (Some("aarch64"), "*", "*")]);
    assert_eq!(two.base_platform.as_deref(), Some("el9"));
    let plain = p("x86_64-el9-gcc13-opt");
    assert_eq!(cpu(&plain), vec![(Some("x86_64"), "*", "*")], "implied cpu arch");
    assert_eq!(plain.sw_platform, "x86_64-el9-gcc13-opt");
    assert!(!plain.sw_platform_is_regexp() && plain.gpu_spec.is_none());
}

#[test]
fn seed_prun_and_art_shorthand_examples() {
    let any_nvidia = GpuSpec { vendor: Some(pat("nvidia")), ..GpuSpec::any() };
    assert_eq!(g("#&nvidia"), any_nvidia);
    assert_eq!(p("#&nvidia").refined, r#"{"gpu_spec": {"vendor": "nvidia"}}"#);
    assert_eq!(g("#&nvidia:vram>=40960").vram, c(">=40960"));
    assert_eq!(g("#&nvidia:vram==15360").vram, c("==15360"));
    for text in ["#&nvidia:uarch=Ampere:cuda>=12.0", "#&nvidia:cuda>=12.0:uarch=Ampere"] {
        let s = g(text);
        assert_eq!((s.microarchitecture, s.version), (Some(vec!["Ampere".to_string()]), c(">=12.0")), "{text}");
    }
    let s = g("#&nvidia:model=.*A100.*:vram>=40960:driver>=575.0");
    assert_eq!((s.model, s.vram, s.driver_version), (ModelReq::Include(pat(".*A100.*")), c(">=40960"), c(">=575.0")));
    let s = g("#&nvidia:model=.*A100.*:vram>=40960");
    assert_eq!((s.model, s.vram), (ModelReq::Include(pat(".*A100.*")), c(">=40960")));
    assert_eq!(g("#&nvidia:model!=.*P100.*").model, ModelReq::Exclude(pat(".*P100.*")));
    assert_eq!(g("#&nvidia:model!=.*(P100|V100).*").model, ModelReq::Exclude(pat(".*(P100|V100).*")));
    // ART headers carry the same values, unquoted (see the stray-quote test).
    let art = TaskArch::parse_art_header("# art-architecture: #&nvidia:model!=.*(P100|V100).*").unwrap();
    assert_eq!(art.gpu_spec.unwrap().model, ModelReq::Exclude(pat(".*(P100|V100).*")));
}

#[test]
fn seed_json_examples() {
    let s = g(r#"{"gpu_spec": {"vendor": "nvidia", "vram": ">=40960", "version": ">=12.0"}}"#);
    assert_eq!((s.vram, s.version, s.model), (c(">=40960"), c(">=12.0"), ModelReq::Any));
    let s = g(
        r#"{"gpu_spec": {"vendor": "nvidia", "model": ".*A100.*", "microarchitecture": "Ampere", "driver_version": ">=575.0"}}"#,
    );
    assert_eq!(s.microarchitecture, Some(vec!["Ampere".to_string()]));
    assert_eq!((s.model, s.driver_version), (ModelReq::Include(pat(".*A100.*")), c(">=575.0")));
    let s =
        g(r#"{"gpu_spec": {"vendor": "nvidia", "model": {"pattern": ".*P100.*", "excl": true}, "vram": ">=40960"}}"#);
    assert_eq!((s.model, s.vram), (ModelReq::Exclude(pat(".*P100.*")), c(">=40960")));
    let header = r#"# art-architecture: {"gpu_spec": {"vendor": "nvidia", "model": {"pattern": ".*(P100|V100).*", "excl": true}}}"#;
    let art = TaskArch::parse_art_header(header).unwrap();
    assert_eq!(art.form, ArchForm::Json);
    assert_eq!(art.gpu_spec.unwrap().model, ModelReq::Exclude(pat(".*(P100|V100).*")));
    let list = g(r#"{"gpu_spec": {"vendor": "nvidia", "microarchitecture": ["Ampere", "Hopper", "Ada Lovelace"]}}"#);
    assert_eq!(list.microarchitecture.unwrap().len(), 3);
}

#[test]
fn seed_warning_quoted_json_in_art_header_is_an_error_naming_the_quote() {
    let quoted = r#"'{"gpu_spec": {"vendor": "nvidia", "vram": ">=40960", "version": ">=12.0"}}'"#;
    let e = TaskArch::parse(quoted).unwrap_err();
    assert_eq!(e, ArchError::StrayQuote { quote: '\'', at: 0, json_inside: true });
    let msg = e.to_string();
    assert!(msg.contains("stray quote '") && msg.contains("JSON wrapped in quotes") && msg.contains("ART"), "{msg}");
    let header = format!("# art-architecture: {quoted}");
    assert!(matches!(TaskArch::parse_art_header(&header), Err(ArchError::StrayQuote { json_inside: true, .. })));
    assert!(matches!(TaskArch::parse("'#&nvidia'"), Err(ArchError::StrayQuote { json_inside: false, .. })));
    assert!(matches!(TaskArch::parse("#&nvidia'"), Err(ArchError::StrayQuote { at: 8, .. })));
    assert!(matches!(TaskArch::parse_art_header("# art-include: x"), Err(ArchError::NotArtHeader(_))));
}

#[test]
fn seed_note_case_insensitive_match_and_misplaced_pattern() {
    let p = pat(".*(P100|V100).*");
    assert!(p.is_match("Tesla V100S-PCIE-32GB") && p.is_match("Tesla P100-PCIE-16GB") && !p.is_match("A100"));
    let a = TaskArch::parse(r#"{"gpu_spec": {"vendor": "nvidia", "pattern": ".*P100.*", "excl": true}}"#).unwrap();
    assert_eq!(a.gpu_spec.as_ref().unwrap().model, ModelReq::Any, "top-level pattern/excl have no effect");
    assert!(
        a.warnings.iter().any(|w| w.contains("'pattern'") && w.contains("nested inside model")),
        "{:?}",
        a.warnings
    );
    let p100 = gpu(r#"{"vendor": "NVIDIA", "model": "Tesla P100-PCIE-16GB"}"#);
    assert!(ok(a.gpu_spec.as_ref().unwrap(), &[p100]));
}

#[test]
fn python_re_match_semantics() {
    // Anchored at the start only, case-insensitive.
    assert!(ok(&g("#&nvidia:model=nvidia a100"), &[a100()]), "a prefix is enough");
    assert!(!ok(&g("#&nvidia-A100"), &[a100()]), "legacy model A100 is a prefix pattern: no match");
    assert!(ok(&g("#&nvidia-.*A100"), &[a100()]));
    assert!(ok(&g("#&NVIDIA"), &[gpu(r#"{"vendor": "nvidia"}"#)]));
    // CPU arch and cmtconfig regexps are case-sensitive and anchored at both ends.
    let a = p("#(X86_64|aarch64)");
    let re = a.cpu_specs.as_ref().unwrap()[0].arch_re.as_ref().unwrap();
    assert!(re.is_match("X86_64") && !re.is_match("x86_64") && !re.is_match("X86_64_v2"));
}

#[test]
fn patterns_rust_cannot_compile_are_errors_naming_them() {
    for (text, pattern) in [
        ("#&nvidia:model=(?=A100).*", "(?=A100).*"),
        (r"#&nvidia:model=(A)\1", r"(A)\1"),
        (r#"{"gpu_spec": {"model": {"pattern": "(?<!P)100", "excl": true}}}"#, "(?<!P)100"),
        ("#&nvidia:model=a)(b", "a)(b"),
        ("(x86_64-el9", "(x86_64"),
    ] {
        match TaskArch::parse(text) {
            Err(ArchError::Regex { pattern: got, .. }) => assert_eq!(got, pattern, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    let e = TaskArch::parse("#&nvidia:model=(?=A100).*").unwrap_err().to_string();
    assert!(e.contains("'(?=A100).*'"), "{e}");
}

#[test]
fn shorthand_quirks_of_get_host_gpu_spec() {
    let a = p("#&nvidia:uarch!=Volta:mem>=4:vram=>40960:nonsense");
    let s = a.gpu_spec.as_ref().unwrap();
    assert_eq!(s.microarchitecture, Some(vec!["Volta".to_string()]), "uarch keeps only the value");
    assert_eq!(s.vram.as_ref().map(|c| (c.raw.as_str(), c.is_valid())), Some(("==>40960", false)));
    assert_eq!(a.warnings.len(), 4, "{:?}", a.warnings);
    assert!(!ok(s, &[a100()]), "an invalid constraint is never satisfied");
    // Later keys win; a model regexp stops at ^ @ #; the legacy model stops at the 2nd '-'.
    assert_eq!(g("#&nvidia:vram>=1:vram<=2").vram, c("<=2"));
    assert_eq!(g("#&amd-MI250-X").model, ModelReq::Include(pat("MI250")));
    assert_eq!(g("#&nvidia:model=^A100").model, ModelReq::Include(pat("")), "the spec ends at ^: model ''");
}

#[test]
fn refiner_drops_wildcards_and_reading_readds_them() {
    assert_eq!(p("#*").cpu_specs, None, "#* is no CPU requirement after reformat");
    assert_eq!(p("x86_64-el9-gcc13-opt#*").cpu_specs, None, "an explicit # replaces the implied arch");
    assert_eq!(p("&*").gpu_spec, None, "&* is no GPU requirement after reformat");
    assert_eq!(cpu(&p("#*-intel")), vec![(None, "intel", "*")], "arch lost: PanDA raises KeyError later");
    assert_eq!(cpu(&p("#x86_64-intel-avx2")), vec![(Some("x86_64"), "intel", "avx2")]);
    assert_eq!(p("#(x86_64|*)").cpu_specs.unwrap().len(), 1);
    // JSON is read as is: a '*' spec and an empty gpu_spec are requirements.
    assert_eq!(cpu(&p(r#"{"cpu_specs": [{"arch": "*"}]}"#)), vec![(Some("*"), "*", "*")]);
    assert_eq!(g(r#"{"gpu_spec": {}}"#), GpuSpec::any());
    let base = p(r#"{"sw_platform": "x86_64-el9-gcc13-opt", "base_platform": ""}"#);
    assert_eq!((base.base_platform.as_deref(), base.cpu_specs), (Some(""), None));
    let enc = p(r#"{"encoded_platform": "x86_64-el9-gcc13-opt@el9#x86_64-intel"}"#);
    assert_eq!(enc.refined, r#"{"base_platform": "el9", "cpu_specs": [{"arch": "x86_64", "vendor": "intel"}]}"#);
    assert_eq!(cpu(&enc), vec![(Some("x86_64"), "intel", "*")]);
    let pref = p(r#"{"sw_platform": "x", "cpu_pref": {"preferred_architecture_level": "x86-64-v3"}}"#);
    assert_eq!(pref.preferred_architecture_level.as_deref(), Some("x86-64-v3"));
    assert_eq!(p("").cpu_specs, None);
    assert_eq!(p("@el9&nvidia").cpu_specs, None, "no implied arch when the text starts with @");
}

#[test]
fn implied_cpu_arch_seed_vs_panda_server() {
    let seed = TaskArch::parse_with("x86_64@el9&nvidia", ArchVariant::Seed).unwrap();
    let code = TaskArch::parse_with("x86_64@el9&nvidia", ArchVariant::PandaServer).unwrap();
    assert_eq!(cpu(&seed), vec![(Some("x86_64"), "*", "*")], "first part of sw_platform");
    assert_eq!(cpu(&code), vec![(Some("x86_64@el9&nvidia"), "*", "*")], "first '-' field of the whole string");
    let regexp = p("(x86_64|aarch64)-el9-gcc13-opt");
    assert_eq!(cpu(&regexp), vec![(Some("(x86_64|aarch64)"), "*", "*")]);
    assert!(regexp.sw_platform_is_regexp());
    assert!(!p("x86_64-el9-gcc13-opt.*").sw_platform_is_regexp(), "re.match(p, p) succeeds: not a regexp");
    assert!(p("x86_64-el9-gcc13+cuda-opt").sw_platform_is_regexp(), "'+' is a quantifier");
}

#[test]
fn json_fields_of_the_wrong_type_are_errors() {
    for (text, field) in [
        (r#"{"gpu_spec": {"vram": 40960}}"#, "gpu_spec.vram"),
        (r#"{"gpu_spec": {"model": {"excl": true}}}"#, "gpu_spec.model.pattern"),
        (r#"{"gpu_spec": {"model": {"pattern": "x", "excl": "yes"}}}"#, "gpu_spec.model.excl"),
        (r#"{"gpu_spec": {"microarchitecture": 8}}"#, "gpu_spec.microarchitecture"),
        (r#"{"cpu_specs": "x86_64"}"#, "cpu_specs"),
        (r#"{"cpu_specs": [{"arch": 1}]}"#, "cpu_specs[].arch"),
        (r#"{"sw_platform": 3}"#, "sw_platform"),
    ] {
        match TaskArch::parse(text) {
            Err(ArchError::Field { field: got, .. }) => assert_eq!(got, field, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    let s = g(r#"{"gpu_spec": {"model": {"pattern": ".*P100.*", "excl": 1}}}"#);
    assert_eq!(s.model, ModelReq::Exclude(pat(".*P100.*")), "Python: True == 1");
}

#[test]
fn version_comparison_boundaries() {
    let vram = |req: &str, mb: u64| Constraint::parse(req).holds_for_u64(mb);
    assert!(vram(">=40960", 40960) && !vram(">=40960", 40959) && !vram(">40960", 40960) && vram("<=40960", 40960));
    assert!(vram("==40960.0", 40960), "versions, not strings: 40960 == 40960.0");
    assert_eq!(compare_version_string("575", "==575.0"), Some(true));
    assert_eq!(compare_version_string("12.10", ">12.9"), Some(true), "tuples, not floats");
    assert_eq!(compare_version_string("575.57.08", "<575.57.10"), Some(true));
    assert_eq!(compare_version_string("12.0", ">= 12.0 "), Some(true), "the version part is stripped");
    assert_eq!(compare_version_string("12.0", " >=12.0"), None, "re.match: the operator comes first");
    assert_eq!(compare_version_string("12.0", "=>12.0"), None, "unknown operator");
    assert_eq!(compare_version_string("12.0", ">="), None);
    assert_eq!(compare_version_string("12.x", ">=12"), None);
    assert_eq!(compare_version_string("v12.0", "==12"), Some(true));
    let chain = ["1.0.dev0", "1.0a1", "1.0b2", "1.0rc1", "1.0", "1.0+local.7", "1.0.post1", "1.1", "1!0.1"];
    let parsed: Vec<Version> = chain.iter().map(|v| Version::parse(v).unwrap()).collect();
    for w in parsed.windows(2) {
        assert!(w[0] < w[1], "{w:?}");
    }
    assert_eq!(Version::parse("1.0-1"), Version::parse("1.0.post1"));
    assert_eq!(Version::parse("1.0alpha1"), Version::parse("1.0a1"));
    assert!(Version::parse("1.0+abc.").is_none() && Version::parse("1.").is_none() && Version::parse("").is_none());
}

/// The refined JSON keeps the input objects' key order, as `json.dumps` of Python's dicts
/// (outputs of panda-server 1.0.4's `JediTaskSpec.reformat_architecture`); a repeated key keeps
/// its first position and its last value.
#[test]
fn refined_json_keeps_the_input_key_order() {
    let a = p(r#"{"sw_platform":"x","encoded_platform":"x","gpu_spec":{"vendor":"nvidia","model":"A100"}}"#);
    assert_eq!(
        a.refined,
        r#"{"sw_platform": "x", "cpu_specs": [{"arch": "x"}], "gpu_spec": {"vendor": "nvidia", "model": "A100"}}"#
    );
    let b = p(
        r#"{"encoded_platform":"x","cpu_specs":[{"vendor":"intel","arch":"x86_64"}],"gpu_spec":{"model":"A100","vendor":"nvidia","vendor":"amd"}}"#,
    );
    assert_eq!(
        b.refined,
        r#"{"cpu_specs": [{"vendor": "intel", "arch": "x86_64"}], "gpu_spec": {"model": "A100", "vendor": "amd"}}"#
    );
}

/// `json.dumps` writes backspace and form feed as `\b` and `\f`.
#[test]
fn refined_json_escapes_backspace_and_form_feed() {
    let a = p("x86_64\u{8}\u{c}-el9");
    assert_eq!(a.refined, r#"{"sw_platform": "x86_64\b\f-el9", "cpu_specs": [{"arch": "x86_64\b\f"}]}"#);
}
