//! Rendering tests of the sweep charts: realistic and degenerate inputs,
//! determinism, output format.
//!
//! Set `PILOTSIM_REPORT_OUT=<dir>` to also write the charts there as PNG and
//! SVG files, for a look by eye.

use super::*;

use crate::report::tests::check;
const X_PATH: &str = "dirac.director.extra_pilot_fraction";
const SERIES_PATH: &str = "dirac.director.max_waiting_pilots";

/// Pilot efficiency against the extra-pilot fraction (11 values) for three
/// waiting-pilot limits: more extra pilots idle more, a higher limit more so;
/// 95 % CIs of 10 replicas, wider where efficiency is lower.
fn realistic_sweep() -> MetricVsParam {
    let series = [20, 50, 100]
        .iter()
        .enumerate()
        .map(|(k, limit)| BandSeries {
            label: format!("{SERIES_PATH} = {limit}"),
            points: (0..=10)
                .map(|i| {
                    let x = f64::from(i) / 10.0;
                    let mean = 0.955 - (0.10 + 0.09 * k as f64) * x.powf(1.3) + 0.004 * (f64::from(i) * 1.7).sin();
                    let ci = 0.008 + 0.025 * x;
                    BandPoint { x, mean, lo: mean - ci, hi: mean + ci }
                })
                .collect(),
        })
        .collect();
    MetricVsParam {
        title: "pilot_efficiency — fairshare_demo (10 replicas, 95 % CI)".to_owned(),
        x_label: X_PATH.to_owned(),
        y_label: "pilot_efficiency".to_owned(),
        series,
        thresholds: vec![(0.8, "constraint ≥ 0.8".to_owned())],
        marker: Some((0.35, "chosen 0.35".to_owned())),
        percent: true,
    }
}

/// Waiting-time p95 in seconds against one parameter: a single unlabeled series.
fn realistic_single() -> MetricVsParam {
    let points = [10.0, 20.0, 50.0, 100.0, 150.0, 200.0]
        .iter()
        .map(|&x: &f64| {
            let mean = 5400.0 / (1.0 + x / 40.0) + 600.0;
            BandPoint { x, mean, lo: mean * 0.9, hi: mean * 1.1 }
        })
        .collect();
    MetricVsParam {
        title: "wait_time_s.lhcb_user.p95 — quickstart (5 replicas, 95 % CI)".to_owned(),
        x_label: "grid.sites.CERN.slots".to_owned(),
        y_label: "wait_time_s.lhcb_user.p95".to_owned(),
        series: vec![BandSeries { label: String::new(), points }],
        thresholds: Vec::new(),
        marker: None,
        percent: false,
    }
}

/// Pilot efficiency over 5 extra-pilot fractions × 4 waiting-pilot limits,
/// one grid point without data.
fn realistic_heat_map() -> HeatMap {
    let xs = [0.0, 0.25, 0.5, 0.75, 1.0];
    let ys = [20, 50, 100, 200];
    let cells = ys
        .iter()
        .enumerate()
        .map(|(k, _)| xs.iter().map(|x| Some(0.955 - (0.08 + 0.06 * k as f64) * x)).collect::<Vec<_>>())
        .map(|mut row: Vec<Option<f64>>| {
            row.truncate(5);
            row
        })
        .enumerate()
        .map(|(k, mut row)| {
            if k == 3 {
                row[4] = None;
            }
            row
        })
        .collect();
    HeatMap {
        title: "pilot_efficiency — fairshare_demo (mean of 10 replicas)".to_owned(),
        x_label: X_PATH.to_owned(),
        x_values: xs.iter().map(|x| x.to_string()).collect(),
        y_label: SERIES_PATH.to_owned(),
        y_values: ys.iter().map(|y| y.to_string()).collect(),
        cells,
        value_label: "pilot_efficiency".to_owned(),
        percent: true,
        noise: None,
    }
}

#[test]
fn metric_vs_param_renders_realistic_data() {
    let r = metric_vs_param(&realistic_sweep()).expect("render");
    let texts = ["pilot_efficiency — fairshare_demo", X_PATH, SERIES_PATH, "constraint ≥ 0.8", "chosen 0.35", "80 %"];
    check("sweep_bands", &r, &texts);
    assert!(!r.svg.contains("no data"));
}

#[test]
fn metric_vs_param_renders_a_single_unlabeled_series() {
    let r = metric_vs_param(&realistic_single()).expect("render");
    check("sweep_single", &r, &["wait_time_s.lhcb_user.p95", "grid.sites.CERN.slots"]);
    assert!(band_scene(&realistic_single()).legend.is_empty(), "no legend for a single unlabeled series");
}

#[test]
fn heat_map_renders_realistic_data() {
    let r = heat_map(&realistic_heat_map()).expect("render");
    let texts = ["pilot_efficiency — fairshare_demo", X_PATH, SERIES_PATH, "0.75", "200", "95.5 %", "no data"];
    check("heat_map", &r, &texts);
}

#[test]
fn sweep_output_is_deterministic() {
    let s = realistic_sweep();
    assert_eq!(metric_vs_param(&s).unwrap(), metric_vs_param(&s.clone()).unwrap());
    let h = realistic_heat_map();
    assert_eq!(heat_map(&h).unwrap(), heat_map(&h.clone()).unwrap());
}

fn sweep(series: Vec<Vec<BandPoint>>) -> MetricVsParam {
    let series = series.into_iter().enumerate().map(|(i, points)| BandSeries { label: format!("s{i}"), points });
    MetricVsParam { title: "degenerate".to_owned(), series: series.collect(), percent: true, ..Default::default() }
}

fn pt(x: f64, mean: f64, lo: f64, hi: f64) -> BandPoint {
    BandPoint { x, mean, lo, hi }
}

#[test]
fn metric_vs_param_survives_degenerate_inputs() {
    let (nan, inf) = (f64::NAN, f64::INFINITY);
    let cases = [
        (sweep(vec![]), true),
        (sweep(vec![vec![]]), true),
        (sweep(vec![vec![pt(nan, 0.5, 0.4, 0.6), pt(1.0, inf, 0.0, 1.0)]]), true),
        (sweep(vec![vec![pt(0.3, 0.5, 0.4, 0.6)]]), false),
        (sweep(vec![vec![pt(0.0, 0.5, 0.5, 0.5), pt(1.0, 0.5, 0.5, 0.5)]]), false),
        (sweep(vec![vec![pt(1.0, 0.5, 0.7, 0.2), pt(0.0, 0.6, nan, inf), pt(1.0, 0.4, 0.3, 0.5)]]), false),
        (
            sweep(vec![vec![pt(0.0, 0.2, 0.1, 0.3)], vec![], vec![pt(2.0, -0.5, -1.0, 0.0), pt(3.0, 1.5, 1.0, 2.0)]]),
            false,
        ),
        (sweep(vec![vec![pt(0.0, 1e300, -1e300, f64::MAX), pt(f64::MAX, 0.0, 0.0, 0.0)]]), true),
        (sweep(vec![vec![pt(-1e12, 1e12, -f64::MAX, 2e12), pt(1e-300, 0.0, 0.0, 0.0)]]), false),
        (sweep((0..12).map(|i| vec![pt(0.0, f64::from(i) / 12.0, 0.0, 1.0)]).collect()), false),
    ];
    for (i, (c, no_data)) in cases.iter().enumerate() {
        let r = metric_vs_param(c).unwrap_or_else(|e| panic!("case {i}: {e}"));
        check(&format!("degenerate_sweep_{i}"), &r, &["degenerate"]);
        assert_eq!(band_scene(c).note.is_some(), *no_data, "case {i}");
    }
    // Thresholds and marker outside the data, close together, or not finite.
    let mut c = sweep(vec![vec![pt(0.2, 0.5, 0.45, 0.55), pt(0.4, 0.6, 0.5, 0.7)]]);
    c.thresholds = vec![(0.9, "upper".to_owned()), (0.91, "close".to_owned()), (f64::NAN, "nan".to_owned())];
    c.marker = Some((2.0, "far right ".repeat(30)));
    let r = metric_vs_param(&c).expect("render");
    check("degenerate_sweep_marks", &r, &["upper", "close", "far right"]);
    assert!(!r.svg.contains(">nan<"));
}

fn grid(cells: Vec<Vec<Option<f64>>>, xs: usize, ys: usize) -> HeatMap {
    HeatMap {
        title: "degenerate".to_owned(),
        x_label: "x".to_owned(),
        x_values: (0..xs).map(|i| format!("x{i}")).collect(),
        y_label: "y".to_owned(),
        y_values: (0..ys).map(|i| format!("y{i}")).collect(),
        cells,
        value_label: "metric".to_owned(),
        percent: false,
        noise: None,
    }
}

#[test]
fn heat_map_survives_degenerate_inputs() {
    let nan = Some(f64::NAN);
    let big: Vec<Vec<Option<f64>>> = (0..30).map(|r| (0..40).map(|c| Some(f64::from(r * c))).collect()).collect();
    let cases = [
        (grid(vec![], 0, 0), true),
        (grid(vec![vec![], vec![]], 0, 2), true),
        (grid(vec![vec![None, nan]], 2, 1), true),
        (grid(vec![vec![Some(0.7)]], 1, 1), false),
        (grid(vec![vec![Some(3.0), Some(3.0)], vec![Some(3.0)]], 2, 2), false),
        (grid(vec![vec![Some(1.0), Some(2.0), Some(3.0)], vec![Some(4.0)]], 1, 1), false),
        (grid(vec![vec![Some(-1e12), Some(f64::MAX)], vec![Some(0.0), nan]], 2, 2), false),
        (grid(big, 40, 30), false),
    ];
    for (i, (c, no_data)) in cases.iter().enumerate() {
        let r = heat_map(c).unwrap_or_else(|e| panic!("case {i}: {e}"));
        check(&format!("degenerate_heat_{i}"), &r, &["degenerate"]);
        assert_eq!(heat_scene(c).note.is_some(), *no_data, "case {i}");
    }
}

#[test]
fn heat_map_labels_are_shortened_to_fit() {
    let mut c = realistic_heat_map();
    c.x_values[1] = "a_very_long_column_label_for_a_category".to_owned();
    c.y_values[2] = "an_equally_long_row_label_that_would_eat_the_plot".repeat(2);
    let r = heat_map(&c).expect("render");
    check("heat_map_long_labels", &r, &["a_very", "…"]);
}

#[test]
fn cell_values_share_their_decimals() {
    let show = |values: &[f64], percent: bool| {
        let f = CellFormat::new(values, percent);
        values.iter().map(|v| f.format(*v)).collect::<Vec<_>>()
    };
    assert_eq!(show(&[0.9551, 0.755, 1.0], true), ["95.5 %", "75.5 %", "100.0 %"]);
    assert_eq!(show(&[0.5, 0.25], true), ["50 %", "25 %"]);
    assert_eq!(show(&[0.004, 0.0012], true), ["0.400 %", "0.120 %"]);
    assert_eq!(show(&[12345.6, 4.56789], false), ["12346", "5"]);
    assert_eq!(show(&[4.56789, 0.5], false), ["4.57", "0.50"]);
    assert_eq!(show(&[0.012345], false), ["0.0123"]);
    assert_eq!(show(&[1.0, 40.0, 0.0, -0.0], false), ["1", "40", "0", "0"]);
    assert_eq!(show(&[2e7, 1.0], false), ["2.00e7", "1.00e0"]);
    assert_eq!(show(&[-0.0], true), ["0 %"]);
}

#[test]
fn heat_map_colours_a_spread_within_the_noise_as_one_band() {
    // A Jain index of 92.0–92.4 % with means known to ±1 %: the scale spans the noise, and the
    // two extreme cells end up close in colour instead of at its two ends.
    let mut c = grid(vec![vec![Some(0.920), Some(0.924)], vec![Some(0.922), Some(0.921)]], 2, 2);
    let span = |c: &HeatMap| {
        let r = heat_scene(c).colorbar.unwrap().axis.range;
        r.1 - r.0
    };
    assert!(span(&c) < 0.01, "without noise the spread fills the scale: {}", span(&c));
    c.noise = Some(0.01);
    assert!(span(&c) >= 0.02, "{}", span(&c));
    // A spread larger than the noise keeps its own range.
    c.cells = vec![vec![Some(0.5), Some(0.9)], vec![Some(0.6), Some(0.7)]];
    assert!(span(&c) < 0.5, "{}", span(&c));
}
