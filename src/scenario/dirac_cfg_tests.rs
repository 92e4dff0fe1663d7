//! Tests of `scenario::dirac_cfg`: the seed's example, Registry groups, syntax and errors.
use super::*;

/// Seed 002's WMSHistory example, verbatim.
const SEED_002: &str = r"ShareCorrections
{
ShareCorrectorsToStart = WMSHistory
WMSHistory
{
GroupsInstance
{
MaxGlobalCorrectionFactor = 3
WeekSlice
{
TimeSpan = 604800
Weight = 80
MaxCorrection = 2
}
HourSlice
{
TimeSpan = 3600
Weight = 20
MaxCorrection = 5
}
}
lhcb_userInstance
{
Group = lhcb_user
MaxGlobalCorrectionFactor = 3
WeekSlice
{
TimeSpan = 604800
Weight = 80
MaxCorrection = 2
}
HourSlice
{
TimeSpan = 3600
Weight = 20
MaxCorrection = 5
}
}
}
}";

fn seed_instances(global: f64) -> Vec<CorrectorInstance> {
    let sl = |name: &str, t, w, m| TimeSlice { name: name.into(), time_span_s: t, weight: w, max_correction: m };
    let slices = vec![sl("WeekSlice", 604_800.0, 80.0, 2.0), sl("HourSlice", 3600.0, 20.0, 5.0)];
    let base = CorrectorInstance { name: "GroupsInstance".into(), max_global_correction: global, slices, group: None };
    let g = Some("lhcb_user".to_string());
    vec![base.clone(), CorrectorInstance { name: "lhcb_userInstance".into(), group: g, ..base }]
}

/// The fragment wrapped as `( groups: …, share_corrections: … )`, read back as the scenario does.
fn round_trip(imp: &DiracCfgImport) {
    let text = format!("(\n{}\n)", to_ron_fragment(imp));
    let options = ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
    let back: DiracCfgImport = options.from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!((&back.groups, &back.share_corrections), (&imp.groups, &imp.share_corrections));
}

#[test]
fn seed_002_example_imports_two_instances_and_round_trips() {
    let imp = import(SEED_002).unwrap();
    let want = ShareCorrections {
        variant: Some(CorrectorVariant::Seed),
        instances: seed_instances(3.0),
        ..ShareCorrections::default()
    };
    assert_eq!((imp.groups.len(), &imp.share_corrections), (0, &Some(want)));
    assert_eq!(imp.global_correction_keys, [GlobalCorrectionKey::Factor; 2]);
    // DIRAC 9 never reads `MaxGlobalCorrectionFactor` (reference §3.1 ⚠): the default 5 applies.
    let d9 = import_with(SEED_002, CorrectorVariant::Dirac9, true).unwrap().share_corrections.unwrap();
    assert_eq!((d9.variant, d9.instances), (Some(CorrectorVariant::Dirac9), seed_instances(5.0)));
    let frag = to_ron_fragment(&imp);
    for want in [
        "groups: [\n],\nshare_corrections: (enabled: false, variant: Seed, update_history_period_s: 900.0, instances: [\n",
        "    (name: \"GroupsInstance\", group: None, max_global_correction: 3.0, slices: [\n",
        "        (name: \"WeekSlice\", time_span_s: 604800.0, weight: 80.0, max_correction: 2.0),\n",
        "    (name: \"lhcb_userInstance\", group: Some(\"lhcb_user\"), max_global_correction: 3.0, slices: [\n",
    ] {
        assert!(frag.contains(want), "{want}\n{frag}");
    }
    round_trip(&imp);
}

#[test]
fn registry_groups_and_operations_paths() {
    let registry = "Registry\n{\n  Groups\n  {\n    lhcb_prod\n    {\n      JobShare = 3000\n      \
        Properties = JobSharing, NormalUser\n      Users = prod1\n    }\n    lhcb_user {\n      Users = a, b\n      \
        Users += c,\n    }\n    \"odd\\name\"é {\n JobShare = 1e-7\n    }\n  }\n}\n";
    let sc = "ShareCorrections {\n ShareCorrectorsToStart = WMSHistory\n WMSHistory {\n  G {\n   \
        MaxGlobalCorrection = 2\n   MaxGlobalCorrectionFactor = 4\n   UpdateHistoryPeriod = 600\n   S {\n   }\n  }\n }\n}\n";
    for (open, close) in [
        ("Operations {\n Defaults {\n JobScheduling {\n EnableSharesCorrection = yes\n", "}\n}\n}\n"),
        ("Operations {\n VO {\n Setup {\n JobScheduling {\n EnableSharesCorrection = True\n", "}\n}\n}\n}\n"),
        ("Operations {\n Scheduling {\n Production {\n EnableSharesCorrection = 1\n", "}\n}\n}\n"),
        ("EnableSharesCorrection = y\n", ""),
    ] {
        let imp = import(&format!("{registry}{open}{sc}{close}")).unwrap();
        let g = &imp.groups;
        assert_eq!((g.len(), g[0].name.as_str(), g[0].job_share, g[1].job_share), (3, "lhcb_prod", 3000.0, 1000.0));
        let lists = [g[0].properties.join(","), g[0].users.join(","), g[1].users.join(","), g[2].name.clone()];
        assert_eq!(lists, ["JobSharing,NormalUser", "prod1", "a,b,c", "\"odd\\name\"é"]);
        let s = imp.share_corrections.as_ref().unwrap();
        let i = &s.instances[0];
        assert_eq!((s.enabled, s.update_history_period_s.as_secs_f64(), i.max_global_correction), (true, 600.0, 4.0));
        assert_eq!(i.slices, [TimeSlice { name: "S".into(), ..TimeSlice::default() }]);
        assert_eq!(imp.global_correction_keys, [GlobalCorrectionKey::Both]);
        round_trip(&imp);
    }
    let d9 = import_with(sc, CorrectorVariant::Dirac9, true).unwrap().share_corrections.unwrap();
    assert_eq!((d9.enabled, d9.instances[0].max_global_correction), (false, 2.0));
    let none = import("ShareCorrections {\n WMSHistory {\n  G {\n  }\n }\n}").unwrap();
    assert_eq!(none.share_corrections.unwrap().instances, [], "ShareCorrectorsToStart absent: nothing starts");
    let only_registry = import(registry).unwrap();
    assert!(
        to_ron_fragment(&only_registry)
            .ends_with("],\n// no ShareCorrections section: share corrections stay off (DIRAC's default)\n")
    );
    round_trip(&only_registry);
}

#[test]
fn syntax_comments_appends_braces_and_positions() {
    let text = "# header\r\nTop   # the top section\r\n\r\n  # between name and brace\r\n{\r\n  a = 1 # note\r\n  \
        url = http://x/#frag\r\n  list += x\r\n  list += , y,, z\r\n  a = 2\r\n  Sub {}\r\n  Deep {\r\n    k = v = w\r\n  \
        }\r\n}\r\n} \t# closes nothing\n";
    assert_eq!(parse(text), Err(CfgError::new(16, 1, UnmatchedClose)));
    let root = parse(text.rsplit_once("} \t#").unwrap().0).unwrap();
    let (top, a) = (root.section("/Top/").unwrap(), root.option("Top/a").unwrap());
    assert_eq!((top.name.as_str(), top.line, top.col), ("Top", 2, 1));
    assert_eq!((a.value.as_str(), a.line, a.col), ("2", 10, 3), "last value wins, with its position");
    assert_eq!(top.options.iter().map(|o| o.key.as_str()).collect::<Vec<_>>(), ["a", "url", "list"]);
    assert_eq!((root.get("Top/url"), root.get("Top/list")), (Some("http://x/#frag"), Some("x, , y,, z")));
    assert_eq!((root.get_list("Top/list").join("|"), root.get("Top/Deep/k")), ("x|y|z".into(), Some("v = w")));
    assert_eq!((root.section("Top/Sub").unwrap().line, root.section("Top/Deep").unwrap().col), (11, 3));
    assert_eq!((root.get_f64("Top/a"), root.get_f64("Top/missing")), (Ok(Some(2.0)), Ok(None)));
    assert!(root.get_f64("Top/url").unwrap_err().to_string().starts_with("7:3: option `url = http"));
    assert!(root.get_list("Nope/x").is_empty() && root.section("Top/a").is_none() && root.get("Top").is_none());
    assert_eq!(parse(""), Ok(CfgSection::default()));
}

#[test]
fn every_error_kind_names_its_line_and_column() {
    let check = |text: &str, line: usize, col: usize, msg: &str| {
        let e = import(text).unwrap_err();
        assert_eq!((e.line, e.col), (line, col), "{text:?}: {e}");
        assert!(e.to_string().starts_with(&format!("{line}:{col}: ")) && e.to_string().contains(msg), "{e}");
    };
    check("A {\n}\n}\n", 3, 1, "unexpected `}`: no section is open");
    check("A {\n  B {\n  x = 1\n}\n", 1, 1, "section `A` opened here is never closed (expected `}`");
    check("A {\n  B\n  {\n    x = 1 }\n", 2, 3, "`A/B` opened here is never closed (expected `}` before the end");
    check("A {\n  B\n  {\n    x = 1 }\n", 2, 3, "the text) (`x` at 4:5 has `}` in its value)");
    check("Name\nKey = 1\n", 1, 1, "`Name` is not followed by `{`: expected `{` on this or the next line");
    check("A {\n}\n  Tail  # comment\n\n", 3, 3, "`Tail` is not followed by `{`");
    check("A {\n  Key 5\n}\n", 2, 7, "`5` after `Key`: expected `=` (an option) or `{` (a section)");
    check("  = 3\n", 1, 3, "`=` without a key: expected a key");
    check("x {\n += 3\n}", 2, 2, "`+=` without a key");
    check("A { x = 1 }\n", 1, 5, "option `x` on a line with a brace: expected each option on its own line");
    check("{\n}\n", 1, 1, "`{` without a name: expected a section name");
    check("A {\n B }\n}\n", 2, 2, "`B}`: expected `{` on this or the next line");
    check("Foo/Bar = 1\n", 1, 4, "`/` in a name");
    check("A {\n}\nA {\n}\n", 3, 1, "`A` is already defined at line 1 (expected a unique section name)");
    check("A {\n  x = 1\n  x {\n  }\n}\n", 3, 3, "`x` is already defined at line 2");
    check("A {\n  x {\n  }\n  x = 1\n}\n", 4, 3, "`x` is already defined at line 2");
    check("Registry {\nGroups {\ng {\n JobShare = lots\n}\n}\n}", 4, 2, "`JobShare = lots`: expected a finite number");
    let sc = |body: &str| format!("ShareCorrections {{\n ShareCorrectorsToStart = WMSHistory\n{body}\n}}");
    let wms = |inst: &str| sc(&format!(" WMSHistory {{\n{inst}\n }}"));
    check("ShareCorrections {\n ShareCorrectorsToStart = WMSHistory, X\n}", 2, 2, "type `X` is not supported");
    check(&sc(""), 2, 2, "`WMSHistory` has no section");
    check("ShareCorrections {\n}\nOperations {\n ShareCorrections {\n }\n}", 4, 2, "(the first is at line 1)");
    check(&wms("  A {\n  }\n  B {\n   Group =\n  }"), 6, 3, "`B` corrects the groups like `A`");
    check(&wms("  A {\n   Group = g\n  }\n  B {\n   Group = g\n  }"), 7, 3, "corrects the users of `g` like `A`");
    let period = " UpdateHistoryPeriod = 900\n WMSHistory {\n  A {\n   UpdateHistoryPeriod = 60\n  }\n }";
    check(&sc(period), 6, 4, "UpdateHistoryPeriod differs from the one at line 3");
    check(&wms("  A {\n   S {\n    Weight = heavy\n   }\n  }"), 6, 5, "`Weight = heavy`: expected a finite number");
}

#[test]
fn fuzz_never_panics() {
    let (mut x, alphabet) = (0x5eed_0002_u64, b"{}{}==+#/ \t\n\n\r,aZ_9.\xc3\xa9\xff");
    for round in 0..4000 {
        let mut bytes = Vec::new();
        for _ in 0..=(round % 60) {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let r = (x >> 33) as usize;
            bytes.push(if round % 4 == 0 { r as u8 } else { alphabet[r % alphabet.len()] });
        }
        let text = String::from_utf8_lossy(&bytes);
        let e = import(&text).err().filter(|e| !(1..=text.split('\n').count()).contains(&e.line));
        assert!(e.is_none(), "{text:?}: {e:?}");
        let _ = import(&format!("{SEED_002}\n{text}"));
    }
}

#[test]
fn only_jobsharing_is_the_property_job_sharing_is_dropped_with_a_warning() {
    // DIRAC searches a group's properties for `Properties.JOB_SHARING`, whose value is
    // `JobSharing`: a CS that writes the constant's name gives a group without the property.
    let group = |props: &str| format!("Registry {{\n Groups {{\n  g {{\n   Properties = {props}\n  }}\n }}\n}}\n");
    let imp = import(&group("JobSharing, NormalUser")).unwrap();
    assert_eq!(
        (imp.groups[0].properties.join(","), imp.groups[0].job_sharing()),
        ("JobSharing,NormalUser".into(), true)
    );
    assert!(to_ron_fragment(&imp).contains(r#"properties: ["JobSharing", "NormalUser"]"#));
    assert!(imp.warnings.is_empty());
    for spelling in ["JOB_SHARING", "jobsharing", "Job_Sharing"] {
        let imp = import(&group(&format!("NormalUser, {spelling}"))).unwrap();
        assert_eq!((imp.groups[0].properties.join(","), imp.groups[0].job_sharing()), ("NormalUser".into(), false));
        let want = format!("4:4: group `g`: `{spelling}` is not a DIRAC property (DIRAC's is `JobSharing`)");
        assert!(imp.warnings.len() == 1 && imp.warnings[0].starts_with(&want), "{:?}", imp.warnings);
    }
}

#[test]
fn dirac9_reads_a_job_share_with_int_and_a_non_integer_gives_1000() {
    // `gConfig.getValue(".../JobShare", 1000)` casts the text with int(): "0.5" and "2500.0"
    // fail and give 1000 under DIRAC 9; the seed reads the numbers 0.5 and 2500.
    let group = |share: &str| format!("Registry {{\n Groups {{\n  g {{\n   JobShare = {share}\n  }}\n }}\n}}\n");
    let read = |share: &str, int: bool| {
        let imp = import_with(&group(share), CorrectorVariant::Seed, int).unwrap();
        (imp.groups[0].job_share, imp.warnings.len())
    };
    assert_eq!((read("0.5", true), read("0.5", false)), ((1000.0, 1), (0.5, 1)));
    assert_eq!((read("2500.0", true), read("2500.0", false)), ((1000.0, 1), (2500.0, 1)));
    assert_eq!((read("lots", true), read("1e3", true)), ((1000.0, 1), (1000.0, 1)));
    for int in [true, false] {
        assert_eq!((read("2500", int), read("+2_500", int)), ((2500.0, 0), (2500.0, 0)));
    }
    let w = import_with(&group("2500.0"), CorrectorVariant::Seed, true).unwrap().warnings;
    assert!(w[0].starts_with("4:4: `JobShare = 2500.0`: DIRAC 9 casts it with int(), which fails"), "{w:?}");
    assert!(import(&group("lots")).is_err(), "the seed reads numbers: not one is an error");
}

#[test]
fn values_the_scenario_refuses_are_refused_at_their_line() {
    let check = |text: &str, line: usize, col: usize, msg: &str| {
        let e = import(text).unwrap_err();
        assert_eq!((e.line, e.col), (line, col), "{text:?}: {e}");
        assert!(e.to_string().contains(msg), "{e}");
    };
    check("Registry {\n Groups {\n  g {\n   JobShare = -5\n  }\n }\n}", 4, 4, "`JobShare = -5`: expected a number ≥ 0");
    let sc = |inst: &str| {
        format!("ShareCorrections {{\n ShareCorrectorsToStart = WMSHistory\n WMSHistory {{\n{inst}\n }}\n}}")
    };
    check(
        &sc("  A {\n   S {\n    Weight = -1\n   }\n  }"),
        6,
        5,
        "must be a finite number ≥ 0 (the scenario's dirac.share_corrections.instances[0].slices[0].weight)",
    );
    check(&sc("  A {\n   MaxGlobalCorrection = 0.5\n   S {\n   }\n  }"), 5, 4, "instances[0].max_global_correction");
    check(&sc("  A {\n  }"), 4, 3, "at least one time slice is needed");
    check(
        "ShareCorrections {\n UpdateHistoryPeriod = -60\n}",
        2,
        2,
        "`UpdateHistoryPeriod = -60`: expected a period of at least 1 s",
    );
}
