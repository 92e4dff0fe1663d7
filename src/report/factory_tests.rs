//! Tests of the factory charts: binning, steps, the dashed closed forms and targets, empty
//! inputs, and the charts of a small hand-built run (two factories, a `factory_cycles` table).
//!
//! Set `PILOTSIM_REPORT_OUT=<dir>` to also write the charts there as PNG and SVG files.

use super::*;
use crate::engine::{RngStreams, SimTime};
use crate::grid::Grid;
use crate::grid::network::Network;
use crate::metrics::recorder::Recorder;
use crate::metrics::{RunMeta, Table};
use crate::report::scene::Shape;
use crate::report::tests::check;
use crate::scenario::Scenario;
use crate::workload::StreamInfo;

const GPF: &str = "Generic@GPF.BNL.us";
const SPF: &str = "Startd@SPF.BNL.us";

fn dashed(scene: &Scene) -> usize {
    scene.shapes.iter().filter(|s| matches!(s, Shape::DashedH { .. } | Shape::DashedLine { .. })).count()
}

#[test]
fn jobs_are_counted_per_hour_of_their_end() {
    // Three full hours: 3, 1 and 2 jobs (one ends exactly at the end of the run).
    let rate = hourly_rate(&[0.1, 0.5, 0.9, 1.2, 2.99, 3.0, -1.0, f64::NAN], 3.0);
    assert_eq!(rate, vec![(0.5, 3.0), (1.5, 1.0), (2.5, 2.0)]);
    // A last half hour with 2 jobs: 4 jobs/h at its centre.
    let rate = hourly_rate(&[0.2, 2.1, 2.2], 2.5);
    assert_eq!(rate, vec![(0.5, 1.0), (1.5, 0.0), (2.25, 4.0)]);
    // Jobs after the given end extend the bins; a run of no length has none.
    assert_eq!(hourly_rate(&[1.5], 1.0), vec![(0.5, 0.0), (1.25, 2.0)]);
    assert!(hourly_rate(&[0.0], 0.0).is_empty() && hourly_rate(&[], f64::NAN).is_empty());
}

#[test]
fn levels_are_steps_held_to_the_end() {
    let ch = changes(&[(2.0, 8.0), (0.0, 10.0), (1.0, 10.0), (3.0, 10.0), (3.5, f64::NAN)]);
    assert_eq!(ch, vec![(0.0, 10.0), (2.0, 8.0), (3.0, 10.0)]);
    let s = level_steps(&ch, 4.0, None);
    assert_eq!(s, vec![(0.0, 10.0), (2.0, 10.0), (2.0, 8.0), (3.0, 8.0), (3.0, 10.0), (4.0, 10.0)]);
    assert_eq!(level_steps(&[(1.0, 5.0)], 0.5, None), vec![(1.0, 5.0), (1.0, 5.0)]);
    assert!(level_steps(&[], 4.0, None).is_empty());
}

#[test]
fn binned_levels_are_time_weighted_means() {
    // 0 for half an hour, then 10: means 5 and 10 over 1-hour bins.
    let s = level_steps(&[(0.0, 0.0), (0.5, 10.0)], 2.0, Some(1.0));
    assert_eq!(s, vec![(0.0, 5.0), (1.0, 5.0), (1.0, 10.0), (2.0, 10.0)]);
    // Bins are aligned on multiples of their width; the first starts at the first change.
    let s = level_steps(&[(0.5, 4.0), (1.25, 8.0)], 2.5, Some(1.0));
    assert_eq!(s, vec![(0.5, 4.0), (1.0, 4.0), (1.0, 7.0), (2.0, 7.0), (2.0, 8.0), (2.5, 8.0)]);
    assert_eq!((bin_hours(96.0), bin_hours(72.0), bin_hours(6.0)), (0.25, 0.25, 1.0 / 60.0));
    assert_eq!(bin_hours(1e6), 1e6 / MAX_BINS as f64);
}

#[test]
fn many_level_changes_are_drawn_as_means() {
    // 96 h of 10 s cycles alternating 9/10, with one dip to 0 for a cycle.
    let mut samples: Vec<(f64, f64)> = (0..34_560).map(|i| (f64::from(i) / 360.0, f64::from(9 + i % 2))).collect();
    samples[20_000].1 = 0.0;
    let s = level_steps(&changes(&samples), 96.0, Some(bin_hours(96.0)));
    assert!(s.len() <= 2 * 384 + 1, "{}", s.len());
    assert!(s.iter().all(|p| (p.1 - 9.5).abs() < 0.11), "means of 9 and 10");
    assert!(s.iter().any(|p| p.1 < 9.45), "the dip lowers its bin's mean");
    assert_eq!(s.last().map(|p| p.0), Some(96.0));
    assert!(s.windows(2).all(|w| w[0].0 <= w[1].0), "time order");
}

fn rate(label: &str, closed_form: Option<f64>, ends: &[f64]) -> FactoryRate {
    FactoryRate { label: label.into(), points: hourly_rate(ends, 6.0), closed_form, second_half: Some(2.0) }
}

#[test]
fn closed_forms_are_dashed_only_when_known() {
    let ends: Vec<f64> = (0..60).map(|i| f64::from(i) / 10.0).collect();
    let c = FactoryThroughput {
        title: "Jobs finished per hour by pilot factory — test, seed 1".into(),
        end_hours: 6.0,
        factories: vec![rate(GPF, Some(9.5), &ends), rate(SPF, None, &ends[10..])],
    };
    let scene = throughput_scene(&c);
    assert_eq!(dashed(&scene), 1);
    assert!(scene.shapes.contains(&Shape::DashedH { y: 9.5, color: 0 }));
    let r = factory_throughput(&c).unwrap();
    check("factory_throughput_small", &r, &[GPF, "closed form", "9.50 jobs/h", "second half: 2.00 jobs/h"]);
    assert!(!r.svg.contains(&format!("{SPF} closed form")) && !r.svg.contains(NO_DATA));
    let none = FactoryThroughput { factories: vec![rate(GPF, None, &ends)], ..c };
    assert_eq!(dashed(&throughput_scene(&none)), 0);
    assert!(!factory_throughput(&none).unwrap().svg.contains("closed form"));
}

#[test]
fn standby_targets_are_dashed_steps() {
    let standby: Vec<(f64, f64)> = (0..50).map(|i| (f64::from(i) / 10.0, f64::from(10 - (i % 7)))).collect();
    let target: Vec<(f64, f64)> = (0..50).map(|i| (f64::from(i) / 10.0, if i < 25 { 10.0 } else { 6.0 })).collect();
    let c = FactoryStandby {
        title: "Standby startd pilots per factory — test, seed 1".into(),
        end_hours: 6.0,
        factories: vec![StandbyLevel { label: SPF.into(), color: 1, standby, target }],
    };
    let scene = standby_scene(&c);
    assert_eq!(dashed(&scene), 1);
    let target = scene.shapes.iter().find_map(|s| match s {
        Shape::DashedLine { points, color: 1 } => Some(points.clone()),
        _ => None,
    });
    assert_eq!(target, Some(vec![(0.0, 10.0), (2.5, 10.0), (2.5, 6.0), (6.0, 6.0)]));
    check("factory_standby_small", &factory_standby(&c).unwrap(), &[SPF, "target", "standby pilots"]);
}

#[test]
fn empty_inputs_give_no_data_charts() {
    let t = factory_throughput(&FactoryThroughput::default()).unwrap();
    let s = factory_standby(&FactoryStandby::default()).unwrap();
    let w = wait_time_distribution(&WaitTimes::default()).unwrap();
    let nan = FactoryThroughput {
        title: "nan".into(),
        end_hours: f64::NAN,
        factories: vec![FactoryRate { label: GPF.into(), points: vec![(f64::NAN, 1.0)], ..FactoryRate::default() }],
    };
    let n = factory_throughput(&nan).unwrap();
    for (name, r) in [("empty_throughput", &t), ("empty_standby", &s), ("empty_waits", &w), ("nan_throughput", &n)] {
        check(name, r, &[NO_DATA]);
    }
}

/// A small run: a generic and a startd factory, two streams (production, analysis), pilots
/// 0–1 of the generic factory, 2 of the startd one, 3 of the WMS's own.
struct Fixture {
    scenario: Scenario,
    grid: Grid,
    recorder: Recorder,
    network: Network,
    jobs: Vec<Job>,
    streams: Vec<StreamInfo>,
    summaries: Vec<serde_json::Value>,
    tables: Vec<Table>,
}

fn job(id: u32, stream: u32, submitted: u64, matched: u64, ended: Option<u64>, pilot: u32) -> Job {
    let mut j = Job::new(id, stream, SimTime::from_secs(submitted), 100.0, 1, 0);
    j.status = if ended.is_some() { JobStatus::Done } else { JobStatus::Running };
    j.set_matched(Some(SimTime::from_secs(matched)));
    j.set_ended(ended.map(SimTime::from_secs));
    j.set_ce(Some(0));
    j.set_pilot(Some(pilot));
    j
}

fn stream(name: &str, kind: JobKind) -> StreamInfo {
    StreamInfo {
        name: name.into(),
        owner: "prod".into(),
        group: "atlas".into(),
        user_priority: 0,
        cpu_time: 100.0,
        failure_probability: 0.0,
        wms: 0,
        kind,
        gpus: 0,
    }
}

fn cycles(rows: &[(f64, &str, u32, u32)]) -> Table {
    let col = |name: &str, values| ExtraColumn { name: name.into(), values };
    Table {
        name: CYCLES_TABLE.into(),
        columns: vec![
            col("time_s", ExtraValues::F64(rows.iter().map(|r| Some(r.0)).collect())),
            col("factory", ExtraValues::Str(rows.iter().map(|r| Some(r.1.to_string())).collect())),
            col("standby", ExtraValues::U32(rows.iter().map(|r| Some(r.2)).collect())),
            col("target", ExtraValues::U32(rows.iter().map(|r| Some(r.3)).collect())),
        ],
    }
}

impl Fixture {
    fn new() -> Self {
        let jobs = vec![
            // Generic: done at 0.5 h and 1.5 h (production), one still running.
            job(0, 0, 0, 600, Some(1800), 0),
            job(1, 0, 0, 3600, Some(5400), 1),
            job(2, 1, 0, 7200, None, 1),
            // Startd: done at 0.25, 0.75 and 2.5 h; an analysis job waited 60 s.
            job(3, 0, 0, 60, Some(900), 2),
            job(4, 1, 2640, 2700, Some(2700), 2),
            job(5, 0, 0, 120, Some(9000), 2),
            // The WMS's own pilot: in no factory's chart.
            job(6, 0, 0, 30, Some(1000), 3),
        ];
        let summaries = vec![
            serde_json::json!({"kind": "Generic", "site": "GPF.BNL.us", "closed_form_jobs_per_hour": 39.45,
                               "jobs_per_hour_second_half": 1.0}),
            serde_json::json!({"kind": "Startd", "site": "SPF.BNL.us", "closed_form_jobs_per_hour": null}),
        ];
        let rows = [(0.0, SPF, 10, 10), (3600.0, SPF, 7, 10), (7200.0, SPF, 10, 12)];
        Fixture {
            scenario: crate::scenario::quickstart().scenario,
            grid: Grid::new(&[], &RngStreams::new(1)),
            recorder: Recorder::new(Vec::new(), SimTime::ZERO),
            network: Network::new(&[], &[]).unwrap(),
            jobs,
            streams: vec![stream("mc", JobKind::Production), stream("user", JobKind::Analysis)],
            summaries,
            tables: vec![cycles(&rows)],
        }
    }

    fn data(&mut self) -> RunData<'_> {
        let owners = [Some(GPF), Some(GPF), Some(SPF), None];
        let factory = ExtraValues::Str(owners.iter().map(|o| o.map(str::to_string)).collect());
        RunData {
            meta: RunMeta {
                scenario: "fixture".into(),
                scenario_sha256: String::new(),
                seed: 7,
                pilotsim_version: "test",
                digest: String::new(),
                events: 0,
                wall_seconds: 0.0,
                end: SimTime::from_secs(3 * 3600),
                origin: String::new(),
                overrides: Vec::new(),
            },
            scenario: &self.scenario,
            jobs: &self.jobs,
            grid: &self.grid,
            recorder: &mut self.recorder,
            entities_of_stream: &[],
            streams: &self.streams,
            wms_names: vec!["dirac".into()],
            job_columns: Vec::new(),
            pilot_columns: vec![ExtraColumn { name: "factory".into(), values: factory }],
            wms_tables: self.tables.clone(),
            wms_summaries: BTreeMap::new(),
            factory_summaries: self.summaries.clone(),
            network: &self.network,
        }
    }
}

#[test]
fn a_run_with_factories_gets_three_charts() {
    let mut fx = Fixture::new();
    let run = fx.data();
    let f = Factories::of(&run);
    assert_eq!(f.owner, vec![Some(0), Some(0), Some(1), None]);

    let t = throughput_chart(&run, &f);
    assert_eq!(t.title, "Jobs finished per hour by pilot factory — fixture, seed 7");
    let rates: Vec<_> = t.factories.iter().map(|x| (x.label.as_str(), x.points.clone(), x.closed_form)).collect();
    assert_eq!(
        rates,
        vec![
            (GPF, vec![(0.5, 1.0), (1.5, 1.0), (2.5, 0.0)], Some(39.45)),
            (SPF, vec![(0.5, 2.0), (1.5, 0.0), (2.5, 1.0)], None),
        ]
    );

    let w = waits_chart(&run, &f);
    let labels: Vec<&str> = w.groups.iter().map(|g| g.0.as_str()).collect();
    assert_eq!(
        labels,
        [
            format!("{GPF} production"),
            format!("{GPF} analysis"),
            format!("{SPF} production"),
            format!("{SPF} analysis")
        ]
    );
    let waits: Vec<Vec<f64>> = w.groups.iter().map(|g| g.1.clone()).collect();
    assert_eq!(waits, vec![vec![600.0, 3600.0], vec![7200.0], vec![60.0, 120.0], vec![60.0]]);

    let s = standby_chart(&run, &f).expect("the table has rows");
    assert_eq!(s.factories.len(), 1);
    assert_eq!((s.factories[0].label.as_str(), s.factories[0].color), (SPF, 1));
    assert_eq!(s.factories[0].standby, vec![(0.0, 10.0), (1.0, 7.0), (2.0, 10.0)]);
    assert_eq!(s.factories[0].target, vec![(0.0, 10.0), (1.0, 10.0), (2.0, 12.0)]);

    let charts = factory_charts(&run).unwrap();
    let stems: Vec<&str> = charts.iter().map(|c| c.0).collect();
    assert_eq!(stems, ["factory_throughput", "factory_waits", "factory_standby"]);
    check("fixture_factory_throughput", &charts[0].1, &[GPF, "closed form", "fixture, seed 7"]);
    check("fixture_factory_waits", &charts[1].1, &[&format!("{SPF} analysis"), "p50"]);
    check("fixture_factory_standby", &charts[2].1, &[SPF, "target"]);
    // Deterministic.
    assert_eq!(factory_charts(&run).unwrap(), charts);
}

#[test]
fn standby_needs_the_cycles_table_with_rows() {
    let mut fx = Fixture::new();
    fx.tables = vec![cycles(&[])];
    assert_eq!(factory_charts(&fx.data()).unwrap().len(), 2);
    fx.tables.clear();
    assert_eq!(factory_charts(&fx.data()).unwrap().len(), 2);
    fx.summaries.clear();
    assert!(factory_charts(&fx.data()).unwrap().is_empty(), "no factory, no factory chart");
}

#[test]
fn factories_of_one_label_share_a_line() {
    let mut fx = Fixture::new();
    let second = serde_json::json!({"kind": "Generic", "site": "GPF.BNL.us", "closed_form_jobs_per_hour": 0.55});
    fx.summaries.push(second);
    let run = fx.data();
    let f = Factories::of(&run);
    assert_eq!(f.list.len(), 2);
    assert!(f.list[0].closed_form.is_some_and(|v| (v - 40.0).abs() < 1e-9), "summed");
    assert_eq!(f.list[0].second_half, None, "unknown for one of them");
}

/// Three days of 10 s cycles of two startd factories: an adaptive target that follows the
/// load with noise, standby pilots drained below it between cycles; a fixed target of 10.
#[test]
fn standby_renders_realistic_cycles() {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut noise = move || {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let times: Vec<f64> = (0..25_920).map(|i| f64::from(i) / 360.0).collect();
    let load = |t: f64| if (24.0..36.0).contains(&t) { 60.0 } else { 20.0 + 5.0 * (t / 6.0).sin() };
    let adaptive_target: Vec<(f64, f64)> = times.iter().map(|&t| (t, (load(t) + 3.0 * noise()).round())).collect();
    let adaptive = adaptive_target.iter().map(|&(t, v)| (t, (v - (8.0 * noise()).floor()).max(0.0))).collect();
    let fixed = times.iter().map(|&t| (t, 10.0 - (3.0 * noise()).floor())).collect();
    let c = FactoryStandby {
        title: "Standby startd pilots per factory — factory_standby, seed 37".into(),
        end_hours: 72.0,
        factories: vec![
            StandbyLevel { label: "Startd@BNL.us".into(), color: 0, standby: adaptive, target: adaptive_target },
            StandbyLevel {
                label: "Startd@CERN.ch".into(),
                color: 1,
                standby: fixed,
                target: times.iter().map(|&t| (t, 10.0)).collect(),
            },
        ],
    };
    let r = factory_standby(&c).unwrap();
    check("factory_standby_realistic", &r, &["Startd@BNL.us target", "Startd@CERN.ch"]);
}

/// Seed 003's efficiency argument over four days: 100 nodes per factory, each finishing a job
/// every 152 min (generic pilots) or 122.5 min (startd pilots, after the first 30 min), with
/// jitter; the closed forms 39.45 and 48.98 jobs/h.
#[test]
fn throughput_renders_realistic_rates() {
    let mut seed = 3u64;
    let mut noise = move || {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut ends = |first: f64, cycle_min: f64| -> Vec<f64> {
        let mut out = Vec::new();
        for _ in 0..100 {
            let mut t = first + noise() * 0.5;
            loop {
                t += (cycle_min + 40.0 * (noise() - 0.5)) / 60.0;
                if t >= 96.0 {
                    break;
                }
                out.push(t);
            }
        }
        out
    };
    let (gpf, spf) = (ends(0.0, 152.0), ends(0.5, 122.5));
    let factory = |label: &str, ends: &[f64], form: f64, half: f64| FactoryRate {
        label: label.into(),
        points: hourly_rate(ends, 96.0),
        closed_form: Some(form),
        second_half: Some(half),
    };
    let c = FactoryThroughput {
        title: "Jobs finished per hour by pilot factory — factory_efficiency, seed 3".into(),
        end_hours: 96.0,
        factories: vec![factory(GPF, &gpf, 39.45, 39.33), factory(SPF, &spf, 48.98, 49.0)],
    };
    let r = factory_throughput(&c).unwrap();
    check("factory_throughput_realistic", &r, &["39.45 jobs/h", "48.98 jobs/h", "second half: 39.33 jobs/h"]);
}
