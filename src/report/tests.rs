//! Rendering tests: realistic and degenerate inputs, determinism, output format.
//!
//! Set `PILOTSIM_REPORT_OUT=<dir>` to also write the realistic charts there as
//! PNG and SVG files, for a look by eye.

use super::*;

const ENTITIES: [(&str, f64); 4] = [("lhcb_user", 0.40), ("lhcb_mc", 0.30), ("atlas_prod", 0.20), ("belle2", 0.10)];

/// Small deterministic generator (xorshift64*), uniform in [0, 1).
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// 145 points (every 10 min over 24 h) per entity: shares far from target at the
/// start, damped oscillation towards the target, normalised to sum to 1.
fn realistic_shares() -> ShareConvergence {
    let mut noise = Noise(42);
    let times: Vec<f64> = (0..145).map(|i| f64::from(i) / 6.0).collect();
    let start = [0.05, 0.55, 0.35, 0.05];
    let raw: Vec<Vec<f64>> = ENTITIES
        .iter()
        .zip(start)
        .enumerate()
        .map(|(i, ((_, target), s0))| {
            let phase = i as f64;
            times
                .iter()
                .map(|t| {
                    let decay = (-t / 2.5).exp() * (1.3 * t + phase).cos();
                    (target + (s0 - target) * decay + 0.02 * (noise.next() - 0.5)).max(0.0)
                })
                .collect()
        })
        .collect();
    let entities = ENTITIES
        .iter()
        .enumerate()
        .map(|(i, (label, target))| EntityShare {
            label: (*label).to_owned(),
            target: *target,
            points: times
                .iter()
                .enumerate()
                .map(|(k, t)| (*t, raw[i][k] / raw.iter().map(|r| r[k]).sum::<f64>()))
                .collect(),
        })
        .collect();
    ShareConvergence {
        title: "Share convergence — quickstart, seed 42".to_owned(),
        entities,
        warmup_hours: 2.0,
        end_hours: 24.0,
        y_label: "running-job share".to_owned(),
    }
}

fn realistic_pilots() -> PilotsOverTime {
    let times: Vec<f64> = (0..145).map(|i| f64::from(i) / 6.0).collect();
    let mut noise = Noise(7);
    let line = |label: &str, f: &mut dyn FnMut(f64) -> f64| Line {
        label: label.to_owned(),
        points: times.iter().map(|t| (*t, f(*t).round())).collect(),
    };
    let waiting = line("waiting", &mut |t| 600.0 + 1400.0 * (-(t - 1.5) * (t - 1.5) / 2.0).exp() + 80.0 * noise.next());
    let running = line("running", &mut |t| 5200.0 * (1.0 - (-t / 1.8).exp()));
    let aborted = line("aborted (cumulative)", &mut |t| 55.0 * t);
    PilotsOverTime {
        title: "Pilots over time — quickstart, seed 42".to_owned(),
        end_hours: 24.0,
        lines: vec![waiting, running, aborted],
    }
}

/// Log-normal-ish waiting times in seconds, spanning several decades, with
/// some zero waits.
fn realistic_waits() -> WaitTimes {
    let mut noise = Noise(99);
    let groups = [("lhcb_user", 1500.0, 1.2, 0.0), ("lhcb_mc", 300.0, 1.0, 0.1)];
    let groups = groups
        .iter()
        .chain(&[("atlas_prod", 40.0, 1.5, 0.25), ("belle2", 5000.0, 0.8, 0.0)])
        .map(|(label, median, sigma, zero_frac)| {
            let waits = (0..2000)
                .map(|_| {
                    if noise.next() < *zero_frac {
                        return 0.0;
                    }
                    // Sum of uniforms ≈ normal (Irwin–Hall), then exponentiate.
                    let z: f64 = (0..12).map(|_| noise.next()).sum::<f64>() - 6.0;
                    median * (sigma * z).exp()
                })
                .collect();
            ((*label).to_owned(), waits)
        })
        .collect();
    WaitTimes { title: "Job waiting time — quickstart, seed 42".to_owned(), groups, ..Default::default() }
}

/// Shared by the sweep-chart tests: PNG and SVG are well formed, sized 1600×900, contain
/// `must_contain`; saved under `$PILOTSIM_REPORT_OUT` for a look.
pub(super) fn check(name: &str, r: &Rendered, must_contain: &[&str]) {
    assert!(r.png.starts_with(&super::png::SIGNATURE), "{name}: not a PNG");
    assert!(r.svg.starts_with("<svg"), "{name}: not an SVG");
    assert!(r.svg.contains(r#"width="1600""#) && r.svg.contains(r#"height="900""#));
    for text in must_contain {
        assert!(r.svg.contains(text), "{name}: SVG lacks {text:?}");
    }
    if let Some(dir) = std::env::var_os("PILOTSIM_REPORT_OUT") {
        let dir = std::path::PathBuf::from(dir);
        std::fs::create_dir_all(&dir).expect("create output dir");
        std::fs::write(dir.join(format!("{name}.png")), &r.png).expect("write PNG");
        std::fs::write(dir.join(format!("{name}.svg")), &r.svg).expect("write SVG");
    }
}

#[test]
fn share_convergence_renders_realistic_data() {
    let c = realistic_shares();
    let r = share_convergence(&c).expect("render");
    let mut texts = vec!["Share convergence — quickstart, seed 42", "warm-up"];
    texts.extend(ENTITIES.iter().map(|e| e.0));
    texts.push("lhcb_user target (40 %)");
    check("share_convergence", &r, &texts);
    assert!(!r.svg.contains("no data"));
}

#[test]
fn pilots_over_time_renders_realistic_data() {
    let r = pilots_over_time(&realistic_pilots()).expect("render");
    check("pilots_over_time", &r, &["Pilots over time", "waiting", "running", "aborted"]);
}

#[test]
fn wait_time_distribution_renders_realistic_data() {
    let r = wait_time_distribution(&realistic_waits()).expect("render");
    let texts = ["Job waiting time", "lhcb_user", "belle2", "p50", "p95", "log scale"];
    check("wait_time_distribution", &r, &texts);
}

#[test]
fn wait_time_distribution_uses_linear_axis_for_narrow_ranges() {
    let waits = (20..=200).map(|i| f64::from(i) * 36.0).collect();
    let c = WaitTimes { title: "narrow".to_owned(), groups: vec![("g".to_owned(), waits)], ..Default::default() };
    let r = wait_time_distribution(&c).expect("render");
    check("wait_time_linear", &r, &["narrow", "p50 1.1 h, p95 1.9 h (n = 181)"]);
    assert!(!r.svg.contains("log scale"));
}

#[test]
fn output_is_deterministic() {
    let c = realistic_shares();
    assert_eq!(share_convergence(&c).unwrap(), share_convergence(&c.clone()).unwrap());
    let p = realistic_pilots();
    assert_eq!(pilots_over_time(&p).unwrap(), pilots_over_time(&p).unwrap());
    let w = realistic_waits();
    assert_eq!(wait_time_distribution(&w).unwrap(), wait_time_distribution(&w).unwrap());
}

fn entity(label: &str, target: f64, points: Vec<(f64, f64)>) -> EntityShare {
    EntityShare { label: label.to_owned(), target, points }
}

fn shares(entities: Vec<EntityShare>, warmup: f64, end: f64) -> ShareConvergence {
    ShareConvergence {
        title: "degenerate".to_owned(),
        entities,
        warmup_hours: warmup,
        end_hours: end,
        y_label: "share".to_owned(),
    }
}

#[test]
fn share_convergence_survives_degenerate_inputs() {
    let nan = f64::NAN;
    let cases = [
        (shares(vec![], 2.0, 24.0), true),
        (shares(vec![entity("a", 0.5, vec![])], 0.0, 0.0), true),
        (shares(vec![entity("a", nan, vec![(nan, nan)])], nan, nan), true),
        (shares(vec![entity("a", 0.5, vec![(1.0, 0.4)])], 2.0, 24.0), false),
        (shares(vec![entity("a", 0.0, vec![(0.0, 0.0), (1.0, 0.0)])], 0.0, 1.0), false),
        (shares(vec![entity("a", 0.3, vec![(0.0, 0.2), (1.0, nan), (2.0, 0.3)])], 1.0, 2.0), false),
        (shares(vec![entity("a", 0.2, vec![(0.0, 0.1)]), entity("b", 0.2, vec![])], 50.0, 1.0), false),
        (shares(vec![entity("a", -1.0, vec![(-5.0, -0.2), (f64::INFINITY, 3.0)])], -1.0, -3.0), false),
    ];
    for (i, (c, no_data)) in cases.iter().enumerate() {
        let r = share_convergence(c).unwrap_or_else(|e| panic!("case {i}: {e}"));
        check(&format!("degenerate_share_{i}"), &r, &["degenerate"]);
        assert_eq!(r.svg.contains("no data"), *no_data, "case {i}");
    }
}

#[test]
fn pilots_over_time_survives_degenerate_inputs() {
    let line = |points: Vec<(f64, f64)>| Line { label: "waiting".to_owned(), points };
    let cases = [
        (vec![], true),
        (vec![line(vec![])], true),
        (vec![line(vec![(f64::NAN, 1.0), (2.0, f64::NAN)])], true),
        (vec![line(vec![(3.0, 7.0)])], false),
        (vec![line(vec![(0.0, 0.0), (24.0, 0.0)])], false),
        (vec![line(vec![(0.0, 1e12), (1.0, -5.0)])], false),
    ];
    for (i, (lines, no_data)) in cases.into_iter().enumerate() {
        let c = PilotsOverTime { title: "degenerate".to_owned(), end_hours: 24.0, lines };
        let r = pilots_over_time(&c).unwrap_or_else(|e| panic!("case {i}: {e}"));
        check(&format!("degenerate_pilots_{i}"), &r, &["degenerate"]);
        assert_eq!(r.svg.contains("no data"), no_data, "case {i}");
    }
}

#[test]
fn wait_time_distribution_survives_degenerate_inputs() {
    let group = |v: Vec<f64>| ("g".to_owned(), v);
    let cases = [
        (vec![], true),
        (vec![group(vec![])], true),
        (vec![group(vec![f64::NAN, -3.0, f64::INFINITY])], true),
        (vec![group(vec![0.0, 0.0, 0.0])], false),
        (vec![group(vec![120.0])], false),
        (vec![group(vec![0.0, 1.0, 1e7]), group(vec![])], false),
    ];
    for (i, (groups, no_data)) in cases.into_iter().enumerate() {
        let c = WaitTimes { title: "degenerate".to_owned(), groups, ..Default::default() };
        let r = wait_time_distribution(&c).unwrap_or_else(|e| panic!("case {i}: {e}"));
        check(&format!("degenerate_waits_{i}"), &r, &["degenerate"]);
        // Groups without data say so in the legend, so only check charts without.
        if no_data {
            assert!(r.svg.contains("no data"), "case {i}");
        }
    }
}

#[test]
fn long_titles_and_labels_are_shortened_to_fit() {
    let mut c = realistic_shares();
    c.title = "A very long title ".repeat(12);
    c.entities[0].label = "an_entity_label_that_is_far_too_long_for_any_legend".repeat(3);
    let r = share_convergence(&c).expect("render");
    check("long_labels", &r, &["…", "… target (40 %)"]);
}

#[test]
fn a_legend_too_long_for_the_image_is_cut_with_a_count() {
    let lines = (0..30)
        .map(|i| Line { label: format!("series {i}"), points: vec![(0.0, f64::from(i)), (24.0, f64::from(i))] })
        .collect();
    let c = PilotsOverTime { title: "many lines".to_owned(), end_hours: 24.0, lines };
    let r = pilots_over_time(&c).expect("render");
    check("many_lines", &r, &["series 0", "more"]);
    assert!(!r.svg.contains("series 29"));
}

#[test]
fn extreme_values_do_not_panic() {
    let huge = f64::MAX;
    let line = Line { label: "x".repeat(5000), points: vec![(0.0, huge), (huge, -huge), (1.0, f64::MIN_POSITIVE)] };
    let c = PilotsOverTime { title: "extreme".to_owned(), end_hours: huge, lines: vec![line] };
    check("extreme_pilots", &pilots_over_time(&c).expect("render"), &["extreme"]);
    let s = shares(vec![entity("a", huge, vec![(0.0, huge), (-huge, 0.5)])], huge, huge);
    check("extreme_share", &share_convergence(&s).expect("render"), &["degenerate"]);
    let w = WaitTimes {
        title: "extreme".to_owned(),
        groups: vec![("g".to_owned(), vec![f64::MIN_POSITIVE, huge, 0.0])],
        ..Default::default()
    };
    check("extreme_waits", &wait_time_distribution(&w).expect("render"), &["extreme"]);
}
