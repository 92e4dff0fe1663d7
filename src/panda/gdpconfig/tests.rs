use proptest::prelude::*;

use super::*;

fn rows(json: &str) -> Imported {
    import(json, "atlas").expect("import")
}

/// A dump as `SELECT * FROM ATLAS_PANDA.CONFIG` exports it: strings everywhere.
const DUMP: &str = r#"[
  {"app": "jedi", "component": "jobbroker", "key": "NW_ACTIVE", "value": "True", "vo": "atlas"},
  {"app": "jedi", "component": "jobbroker", "key": "NW_QUEUE_IMPORTANCE", "value": "0.7", "vo": "atlas"},
  {"app": "jedi", "component": "jobbroker", "key": "NQUEUED_SAT_CAP", "value": "200", "vo": "atlas",
   "descr": "files queued on a satellite link"},
  {"app": "pandaserver", "component": "jobdispatch", "key": "SLOPPY_DISPATCH_RATIO", "value": "5", "vo": null},
  {"app": "jedi", "component": "prod_job_throttler", "key": "NQUEUELIMIT_MC_16", "value": "3000", "vo": "atlas"},
  {"app": "jedi", "component": "core", "key": "WORK_SHORTAGE", "value": "true", "vo": "atlas"},
  {"app": "jedi", "component": "jobbroker", "key": "SOME_FUTURE_KEY", "value": "1", "vo": "atlas"}
]"#;

#[test]
fn dump_of_strings_fills_typed_fields() {
    let imp = rows(DUMP);
    let c = &imp.config;
    assert!(c.job_broker.nw_active);
    assert_eq!(c.job_broker.nw_queue_importance, 0.7);
    assert_eq!(c.job_broker.nqueued_sat_cap, 200);
    // untouched keys keep the code defaults (reference §2: NW_THRESHOLD 1.7)
    assert_eq!(c.job_broker.nw_threshold, 1.7);
    assert_eq!(c.dispatch.sloppy_dispatch_ratio, 5);
    assert_eq!(c.throttle.nqueuelimit.get("MC_16"), Some(&3000));
    // one row, two readers: the job broker and the throttle
    assert!(c.throttle.work_shortage && c.job_broker.work_shortage);
    assert_eq!(imp.applied.len(), 7);
    assert_eq!(imp.warnings.len(), 1, "{:?}", imp.warnings);
    assert!(imp.warnings[0].contains("row 7") && imp.warnings[0].contains("SOME_FUTURE_KEY"));
}

#[test]
fn empty_dump_is_the_defaults() {
    let imp = rows("[]");
    assert_eq!(imp.config, GdpConfig::default());
    assert_eq!(imp.config.job_broker.nqueued_sat_cap, 150);
    assert_eq!(imp.config.dispatch.sloppy_dispatch_ratio, 10);
    assert_eq!(imp.config.throttle.throttle_threshold, 2.0);
}

#[test]
fn bad_value_is_an_error_naming_the_row() {
    let json = r#"[
      {"app": "jedi", "component": "jobbroker", "key": "NW_ACTIVE", "value": "True"},
      {"app": "jedi", "component": "jobbroker", "key": "NQUEUED_SAT_CAP", "value": "lots"}
    ]"#;
    let e = import(json, "atlas").unwrap_err();
    let ImportError::Row { row, ref text, ref message } = e else { panic!("{e:?}") };
    assert_eq!(row, 2);
    assert!(text.contains("NQUEUED_SAT_CAP") && text.contains("lots"), "{text}");
    assert!(message.contains("job_broker.nqueued_sat_cap"), "{message}");
    assert!(e.to_string().starts_with("row 2 (jobbroker/NQUEUED_SAT_CAP = \"lots\")"), "{e}");
}

#[test]
fn fraction_for_an_integer_key_is_an_error() {
    let json = r#"[{"app": "jedi", "component": "jobbroker", "key": "NQUEUED_SAT_CAP", "value": "1.5"}]"#;
    assert!(matches!(import(json, "atlas"), Err(ImportError::Row { row: 1, .. })));
    let json = r#"[{"app": "jedi", "component": "jobbroker", "key": "NQUEUED_SAT_CAP", "value": "-3"}]"#;
    assert!(matches!(import(json, "atlas"), Err(ImportError::Row { row: 1, .. })));
}

#[test]
fn syntax_error_has_line_and_column() {
    let e = import("[\n  {\"component\": \"jobbroker\",\n  \"key\" \"NW_ACTIVE\"}\n]", "atlas").unwrap_err();
    let ImportError::Syntax { line, column, .. } = e else { panic!("{e:?}") };
    assert_eq!((line, column), (3, 9));
    // an object instead of an array of rows
    assert!(matches!(import("{}", "atlas"), Err(ImportError::Syntax { .. })));
    // a row without a key
    assert!(matches!(import(r#"[{"component": "x"}]"#, "atlas"), Err(ImportError::Row { row: 1, .. })));
}

#[test]
fn vo_rules_follow_get_config_value() {
    // `AND (vo=:vo or vo IS NULL)`: other VOs are not read, null VO is read, VO-specific wins.
    let json = r#"[
      {"app": "jedi", "component": "jobbroker", "key": "NW_THRESHOLD", "value": "3.0", "vo": "cms"},
      {"app": "jedi", "component": "jobbroker", "key": "NQUEUED_SAT_CAP", "value": "120", "vo": null},
      {"app": "jedi", "component": "jobbroker", "key": "NQUEUED_SAT_CAP", "value": "180", "vo": "atlas"}
    ]"#;
    let imp = rows(json);
    assert_eq!(imp.config.job_broker.nw_threshold, 1.7);
    assert_eq!(imp.config.job_broker.nqueued_sat_cap, 180);
    assert_eq!(imp.warnings.len(), 2, "{:?}", imp.warnings);
    assert!(imp.warnings.iter().any(|w| w.contains("\"cms\"")));
    assert!(imp.warnings.iter().any(|w| w.contains("row 2") && w.contains("row 3 is used")));
}

#[test]
fn app_must_match_how_panda_reads_the_key() {
    // No app is PanDA's default `pandaserver`: right for jobdispatch, wrong for jobbroker.
    let json = r#"[
      {"component": "jobdispatch", "key": "SLOPPY_DISPATCH_RATIO", "value": "20"},
      {"component": "jobbroker", "key": "NW_ACTIVE", "value": "True"}
    ]"#;
    let imp = rows(json);
    assert_eq!(imp.config.dispatch.sloppy_dispatch_ratio, 20);
    assert!(!imp.config.job_broker.nw_active);
    assert!(imp.warnings[0].contains("app \"jedi\""), "{:?}", imp.warnings);
}

#[test]
fn type_column_converts_as_get_config_value() {
    let json = r#"[
      {"app": "jedi", "component": "jobbroker", "key": "NW_ACTIVE", "value": "yes", "type": "bool"},
      {"app": "jedi", "component": "jobbroker", "key": "NQUEUED_SAT_CAP", "value": "90", "type": "int"},
      {"app": "jedi", "component": "jobbroker", "key": "NW_THRESHOLD", "value": "2", "type": "float"}
    ]"#;
    let imp = rows(json);
    assert!(!imp.config.job_broker.nw_active, "only 'true' is True");
    assert_eq!(imp.config.job_broker.nqueued_sat_cap, 90);
    assert_eq!(imp.config.job_broker.nw_threshold, 2.0);
    let bad = r#"[{"app": "jedi", "component": "jobbroker", "key": "NQUEUED_SAT_CAP", "value": "9.5", "type": "int"}]"#;
    let e = import(bad, "atlas").unwrap_err();
    assert!(e.to_string().contains("not an integer"), "{e}");
    let bad = r#"[{"app": "jedi", "component": "jobbroker", "key": "NW_ACTIVE", "value": "1", "type": "blob"}]"#;
    assert!(import(bad, "atlas").unwrap_err().to_string().contains("unknown type"));
}

#[test]
fn numbers_as_json_numbers_are_accepted() {
    let json = r#"[{"app": "jedi", "component": "jobbroker", "key": "NW_QUEUE_IMPORTANCE", "value": 0.25},
                   {"app": "jedi", "component": "jobbroker", "key": "NW_ACTIVE", "value": true}]"#;
    let imp = rows(json);
    assert_eq!(imp.config.job_broker.nw_queue_importance, 0.25);
    assert!(imp.config.job_broker.nw_active);
}

#[test]
fn one_row_feeds_every_section_that_reads_it() {
    let specs = find_keys("core", "WORK_SHORTAGE");
    assert!(specs.iter().any(|(s, _)| s.section == Section::Throttle));
    // longest family prefix wins; an empty suffix is no family member
    assert_eq!(find_keys("prod_job_throttler", "NQUEUELIMIT_MC_16")[0].1, Some("MC_16"));
    assert!(find_keys("prod_job_throttler", "NQUEUELIMIT_").is_empty());
    assert!(find_keys("jobbroker", "NQUEUELIMIT_MC").is_empty());
}

#[test]
fn every_key_names_a_real_field() {
    // Apply each key's current default back: fails if the table names a field that is not there.
    for spec in keys() {
        let mut c = GdpConfig::default();
        let section = c.section_value(spec.section);
        let v = if spec.family {
            Value::from(7)
        } else {
            section.get(&spec.field).cloned().unwrap_or_else(|| panic!("{} has no field {}", spec.key, spec.field))
        };
        // an Option field is null by default: any number it takes
        let v = if v.is_null() { Value::from(1) } else { v };
        apply(&mut c, spec, spec.family.then_some("X"), v).unwrap_or_else(|e| panic!("{}: {e}", spec.key));
    }
}

#[derive(Debug, Deserialize)]
struct Fragment {
    gdpconfig: GdpConfig,
}

#[test]
fn fragment_parses_back_to_the_same_config() {
    let imp = rows(DUMP);
    let text = to_ron_fragment(&imp).unwrap();
    assert!(text.contains("row 5: prod_job_throttler/NQUEUELIMIT_MC_16 -> throttle.nqueuelimit[\"MC_16\"]"), "{text}");
    let back: Fragment = ron::from_str(&format!("({text})")).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back.gdpconfig, imp.config);
}

proptest! {
    /// No value, type or key text makes the importer panic.
    #[test]
    fn no_row_panics(key_i in 0usize..keys().len(), value in ".{0,12}", kind in prop::option::of("(int|float|bool|str|json|x)"),
                     suffix in "[A-Za-z_0-9]{0,4}") {
        let spec = &keys()[key_i];
        let key = if spec.family { format!("{}{suffix}", spec.key) } else { spec.key.to_string() };
        let row = serde_json::json!({"app": spec.app, "component": spec.component, "key": key, "value": value,
                                     "type": kind, "value_json": value});
        let text = serde_json::Value::Array(vec![row]).to_string();
        let _ = import(&text, "atlas");
    }

    #[test]
    fn no_text_panics(text in ".{0,64}") {
        let _ = import(&text, "atlas");
    }
}

/// One key of every section, with the app each is read with in panda-server 1.0.4.
const EVERY_SECTION: &str = r#"[
  {"app": "jedi", "component": "taskbrokerage", "key": "DISK_THRESHOLD", "value": "80"},
  {"app": "jedi", "component": "taskbrokerage", "key": "DISK_THRESHOLD_MC_16", "value": "40"},
  {"app": "jedi", "component": "jobbroker", "key": "MIN_WEIGHT_managed", "value": "0.5"},
  {"app": "jedi", "component": "jobbroker", "key": "NQUEUELIMITSITE_MC_16", "value": "30"},
  {"app": "jedi", "component": "anal_jobbroker", "key": "TW_DONE_JOB_STAT", "value": "6"},
  {"app": "pandaserver", "component": "prio_mgr", "key": "CAP_RUNNING_USER_JOBS", "value": "5000"},
  {"app": "pandaserver", "component": "watcher", "key": "HEARTBEAT_TIMEOUT_analysis", "value": "3"},
  {"app": "pandaserver", "component": "rebroker", "key": "ANALY_TIMEOUT", "value": "12"},
  {"app": "pandaserver", "component": "rebroker", "key": "ANALY_TIMEOUT_phys-higgs", "value": "24"},
  {"app": "pandaserver", "component": "meanrss", "key": "IGNORE_MEANRSS", "value": "True"},
  {"app": "jedi", "component": "prod_job_throttler", "key": "NQUEUELIMIT_MC_16_SCORE", "value": "1200"}
]"#;

#[test]
fn every_section_is_reachable_from_a_dump() {
    let imp = rows(EVERY_SECTION);
    assert!(imp.warnings.is_empty(), "{:?}", imp.warnings);
    let c = &imp.config;
    assert_eq!(c.task_brokerage.disk_threshold, 80.0);
    assert_eq!(c.task_brokerage.disk_threshold_by_queue.get("MC_16"), Some(&40.0));
    // MIN_WEIGHT_<label> is read by both job brokers
    assert_eq!(c.job_broker.min_weight.get("managed"), Some(&0.5));
    assert_eq!(c.anal_broker.min_weight.get("managed"), Some(&0.5));
    assert_eq!(c.job_broker.nqueuelimitsite.get("MC_16"), Some(&30));
    assert_eq!(c.anal_broker.tw_done_job_stat, 6.0);
    assert_eq!(c.anal_broker.cap_running_user_jobs, Some(5000));
    assert_eq!(c.timeouts.heartbeat_timeout.get("analysis"), Some(&3.0));
    assert_eq!(c.timeouts.analy_timeout, 12.0);
    assert_eq!(c.timeouts.analy_timeout_by_group.get("phys-higgs"), Some(&24.0));
    assert!(c.meanrss.ignore_meanrss);
    assert_eq!(c.throttle.nqueuelimit.get("MC_16_SCORE"), Some(&1200));
    // 11 rows, MIN_WEIGHT_managed applied twice
    assert_eq!(imp.applied.len(), 12);
    let text = to_ron_fragment(&imp).unwrap();
    let back: Fragment = ron::from_str(&format!("({text})")).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back.gdpconfig, imp.config);
}

#[test]
fn apps_are_the_ones_panda_reads_with() {
    assert_eq!(app_of("jobbroker"), "jedi");
    assert_eq!(app_of("taskbrokerage"), "jedi");
    assert_eq!(app_of("core"), "jedi");
    assert_eq!(app_of("watcher"), "pandaserver");
    assert_eq!(app_of("prio_mgr"), "pandaserver");
    // a jedi key written with the pandaserver app is not read by PanDA
    let json = r#"[{"app": "pandaserver", "component": "taskbrokerage", "key": "DISK_THRESHOLD", "value": "1"}]"#;
    let imp = rows(json);
    assert_eq!(imp.config.task_brokerage.disk_threshold, 100.0);
    assert_eq!(imp.warnings.len(), 1);
}

#[test]
fn keys_read_without_a_vo_see_every_vo() {
    // `getConfigValue("jobdispatch", "SLOPPY_DISPATCH_RATIO")` passes no VO: a cms row is read;
    // `jobbroker` keys are read with the task's VO: a cms row is not.
    let json = r#"[
      {"app": "pandaserver", "component": "jobdispatch", "key": "SLOPPY_DISPATCH_RATIO", "value": "25", "vo": "cms"},
      {"app": "jedi", "component": "jobbroker", "key": "NQUEUED_SAT_CAP", "value": "99", "vo": "cms"}
    ]"#;
    let imp = rows(json);
    assert_eq!(imp.config.dispatch.sloppy_dispatch_ratio, 25);
    assert_eq!(imp.config.job_broker.nqueued_sat_cap, 150);
    assert_eq!(imp.warnings.len(), 1, "{:?}", imp.warnings);
    // several qualifying rows: the VO's own wins over another VO's
    let json = r#"[
      {"app": "pandaserver", "component": "jobdispatch", "key": "SLOPPY_DISPATCH_RATIO", "value": "25", "vo": "cms"},
      {"app": "pandaserver", "component": "jobdispatch", "key": "SLOPPY_DISPATCH_RATIO", "value": "15", "vo": "atlas"}
    ]"#;
    assert_eq!(rows(json).config.dispatch.sloppy_dispatch_ratio, 15);
    assert!(keys::reads_vo("taskbrokerage", "DISK_THRESHOLD") && !keys::reads_vo("taskbrokerage", "NQUEUED_NUC_CAP"));
}
