//! Axis helpers shared by all charts: ranges, tick positions at round numbers and
//! tick label formatting.
//!
//! Every axis is linear in plotting coordinates. A logarithmic axis is expressed by
//! plotting `log10(value)` and formatting the ticks back as `10^tick`
//! ([`TickFormat::Log10`]), which keeps the tick positions fully under our control.

/// Largest number of labelled ticks on an axis; more would crowd a slide.
const MAX_TICKS: usize = 10;

/// How tick values are turned into labels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum TickFormat {
    /// Decimal number with as many decimals as the tick step needs.
    Plain,
    /// Fraction shown as a percentage (`0.25` → `25 %`).
    Percent,
    /// Counts: integers, with `k`/`M` suffixes for large round values.
    Count,
    /// The plotted value is `log10(v)`; the label shows `v`.
    Log10,
    /// Categories at `0, 1, 2, …`; the label of tick `i` is `categories[i]`.
    Category,
}

/// A fully specified axis: plotted range, tick positions and labels.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Axis {
    /// Axis description (e.g. "time [h]").
    pub label: String,
    /// Plotted range `(lo, hi)`, `lo < hi`.
    pub range: (f64, f64),
    /// Labelled tick positions, all inside `range`.
    pub ticks: Vec<f64>,
    /// Unlabelled light grid positions (log axes only).
    pub minor: Vec<f64>,
    /// Distance between two labelled ticks (drives the number of decimals).
    pub step: f64,
    /// Label format.
    pub format: TickFormat,
    /// Category names ([`TickFormat::Category`] only).
    pub categories: Vec<String>,
}

impl Axis {
    /// Linear axis from `lo` to the next round number at or above `hi`, plus
    /// `headroom` (a fraction of the span) above the last tick so that data at the
    /// top is not hidden by the frame and small labels fit above it.
    pub(crate) fn linear(label: &str, lo: f64, hi: f64, headroom: f64, format: TickFormat) -> Self {
        let (lo, hi) = sane_range(lo, hi);
        let step = nice_step(hi - lo);
        // Counts are whole numbers: no ticks between them.
        let step = if format == TickFormat::Count { step.max(1.0) } else { step };
        let top = (hi / step - 1e-9).ceil() * step;
        Self::with_step(label, lo, top, step, headroom, format)
    }

    /// Time axis in hours from 0 (or `lo`) to `hi`, with ticks at hour multiples
    /// that read naturally (every 1, 2, 3, 6, 12, 24 … hours).
    pub(crate) fn hours(label: &str, lo: f64, hi: f64) -> Self {
        let (lo, hi) = sane_range(lo, hi);
        let span = hi - lo;
        const HOUR_STEPS: [f64; 13] = [0.25, 0.5, 1.0, 2.0, 3.0, 6.0, 12.0, 24.0, 48.0, 72.0, 168.0, 336.0, 720.0];
        let step = HOUR_STEPS
            .iter()
            .copied()
            .find(|s| span / s <= MAX_TICKS as f64 - 1.0 + 1e-9)
            .unwrap_or_else(|| nice_step(span));
        Self::with_step(label, lo, hi, step, 0.0, TickFormat::Plain)
    }

    /// Logarithmic axis (plotted as `log10`) covering `[min_pos, max]`, both
    /// positive, extended to whole decades.
    pub(crate) fn log10(label: &str, min_pos: f64, max: f64) -> Self {
        let lo = min_pos.log10().floor();
        let hi = max.log10().ceil().max(lo + 1.0);
        let decades = (hi - lo) as usize;
        let every = decades.div_ceil(MAX_TICKS - 1).max(1) as f64;
        let ticks = ticks_between(lo, hi, every);
        let minor = if decades <= 5 {
            (lo as i32..hi as i32).flat_map(|d| (2..10).map(move |m| (f64::from(m) * 10f64.powi(d)).log10())).collect()
        } else {
            Vec::new()
        };
        let format = TickFormat::Log10;
        Self { label: label.to_owned(), range: (lo, hi), ticks, minor, step: every, format, categories: Vec::new() }
    }

    /// Linear axis from the round number at or below `lo` to the one at or
    /// above `hi`, both ticks (for ranges near the limits of `f64`: from `lo`
    /// to `hi`, ticked at both ends).
    pub(crate) fn rounded(label: &str, lo: f64, hi: f64, format: TickFormat) -> Self {
        let (lo, hi) = sane_range(lo, hi);
        let step = nice_step(hi - lo);
        let (first, top) = ((lo / step + 1e-9).floor() * step, (hi / step - 1e-9).ceil() * step);
        if first.is_finite() && top.is_finite() && step > 0.0 {
            return Self::with_step(label, first, top, step, 0.0, format);
        }
        let (ticks, minor, categories) = (vec![lo, hi], Vec::new(), Vec::new());
        Self { label: label.to_owned(), range: (lo, hi), ticks, minor, step: hi - lo, format, categories }
    }

    /// Category axis: one tick per name at `0, 1, …`, half a step of room on
    /// each side.
    pub(crate) fn categories(label: &str, names: Vec<String>) -> Self {
        let n = names.len().max(1) as f64;
        Self {
            label: label.to_owned(),
            range: (-0.5, n - 0.5),
            ticks: (0..names.len()).map(|i| i as f64).collect(),
            minor: Vec::new(),
            step: 1.0,
            format: TickFormat::Category,
            categories: names,
        }
    }

    fn with_step(label: &str, lo: f64, top: f64, step: f64, headroom: f64, f: TickFormat) -> Self {
        let first = (lo / step - 1e-9).ceil() * step;
        Self {
            label: label.to_owned(),
            range: (lo, top + headroom * (top - lo)),
            ticks: ticks_between(first, top, step),
            minor: Vec::new(),
            step,
            format: f,
            categories: Vec::new(),
        }
    }

    /// Label for the tick at `v`.
    pub(crate) fn format_tick(&self, v: f64) -> String {
        if self.format == TickFormat::Category {
            let i = v.round();
            return if i >= 0.0 { self.categories.get(i as usize).cloned().unwrap_or_default() } else { String::new() };
        }
        let top = self.ticks.last().copied().unwrap_or(0.0).abs();
        format_tick(v, self.step, top, self.format)
    }
}

/// Replaces a non-finite or empty range by a usable one.
fn sane_range(lo: f64, hi: f64) -> (f64, f64) {
    let lo = if lo.is_finite() { lo } else { 0.0 };
    let hi = if hi.is_finite() { hi } else { lo + 1.0 };
    if hi > lo { (lo, hi) } else { (lo, lo + 1.0) }
}

/// Round step (1, 2, 2.5 or 5 × 10^k) giving at most [`MAX_TICKS`] intervals.
pub(crate) fn nice_step(span: f64) -> f64 {
    let raw = span / (MAX_TICKS as f64 - 2.0);
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude)
}

/// `from, from + step, …` up to `to` (inclusive, with tolerance), computed by
/// multiplication so that no rounding error accumulates. At most
/// [`MAX_TICKS`] + 1 ticks even for degenerate (overflowing) ranges.
fn ticks_between(from: f64, to: f64, step: f64) -> Vec<f64> {
    let n = ((to - from) / step + 1e-9).floor().clamp(0.0, MAX_TICKS as f64) as usize;
    (0..=n).map(|i| from + i as f64 * step).filter(|t| t.is_finite()).collect()
}

/// Number of decimals needed to print multiples of `step` exactly.
fn decimals_for(step: f64) -> usize {
    (0..=6)
        .find(|d| {
            let scaled = step * 10f64.powi(*d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
        })
        .unwrap_or(6)
}

/// Formats a tick value; `step` is the distance between ticks and `top` the
/// largest tick (counts use `k`, `M`, `G` from 10 000, 10^7, 10^10 on).
fn format_tick(v: f64, step: f64, top: f64, format: TickFormat) -> String {
    // Values no simulation produces (garbage in) still get short labels.
    let shown = if format == TickFormat::Percent { v * 100.0 } else { v };
    if format != TickFormat::Log10 && (shown.abs() >= 1e15 || !shown.is_finite()) {
        return format!("{shown:.1e}");
    }
    // `+ 0.0` turns a negative zero into a positive one ("-0" is never wanted).
    match format {
        TickFormat::Plain => format!("{:.*}", decimals_for(step), v + 0.0),
        TickFormat::Percent => format!("{:.*} %", decimals_for(step * 100.0), v * 100.0 + 0.0),
        TickFormat::Count => {
            let unit = [(1e10, 1e9, "G"), (1e7, 1e6, "M"), (1e4, 1e3, "k")]
                .into_iter()
                .find(|(from, unit, _)| top >= *from && step % unit == 0.0);
            match unit {
                Some((_, unit, suffix)) if v != 0.0 => format!("{}{suffix}", (v / unit).round()),
                _ => format!("{:.*}", decimals_for(step), v + 0.0),
            }
        }
        TickFormat::Category => String::new(),
        TickFormat::Log10 => {
            let exp = v.round() as i32;
            if (-4..=6).contains(&exp) {
                format!("{:.*}", exp.min(0).unsigned_abs() as usize, 10f64.powi(exp))
            } else {
                format!("1e{exp}")
            }
        }
    }
}

/// Formats a duration in hours: two significant digits below 10 h, whole hours
/// above, trailing zeros dropped: `0.43 h`, `2.1 h`, `2 h`, `12 h`, `0.0001 h`;
/// scientific notation outside `[0.0001 h, 10^6 h)`.
pub(crate) fn format_hours(h: f64) -> String {
    if h == 0.0 {
        return "0 h".to_owned();
    }
    if !(1e-4..1e6).contains(&h.abs()) {
        return format!("{h:.1e} h");
    }
    let digits = h.abs().log10().floor() as i32;
    let decimals = (1 - digits).max(0) as usize;
    let text = format!("{h:.decimals$}");
    let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { &text };
    format!("{text} h")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(a: &Axis) -> Vec<String> {
        a.ticks.iter().map(|t| a.format_tick(*t)).collect()
    }

    #[test]
    fn hour_axis_uses_readable_steps() {
        let a = Axis::hours("t", 0.0, 24.0);
        assert_eq!(labels(&a), ["0", "3", "6", "9", "12", "15", "18", "21", "24"]);
        let a = Axis::hours("t", 0.0, 2.0);
        assert_eq!(a.step, 0.25);
        assert_eq!(Axis::hours("t", 0.0, 0.0).range, (0.0, 1.0));
    }

    #[test]
    fn linear_axis_ends_on_a_round_number() {
        let a = Axis::linear("y", 0.0, 0.87, 0.0, TickFormat::Percent);
        assert_eq!(a.ticks.last().copied(), Some(1.0));
        assert_eq!(labels(&a)[..3], ["0 %", "20 %", "40 %"]);
        let a = Axis::linear("y", 0.0, 23_456.0, 0.0, TickFormat::Count);
        assert_eq!(labels(&a), ["0", "5k", "10k", "15k", "20k", "25k"]);
        let a = Axis::linear("y", 0.0, 5200.0, 0.0, TickFormat::Count);
        assert_eq!(labels(&a)[..3], ["0", "1000", "2000"]);
        let a = Axis::linear("y", 0.0, 1e12, 0.0, TickFormat::Count);
        assert_eq!(labels(&a)[..2], ["0", "200G"]);
        let a = Axis::linear("y", 0.0, 3.0, 0.0, TickFormat::Count);
        assert_eq!(labels(&a), ["0", "1", "2", "3"]);
        let a = Axis::linear("y", 0.0, f64::NAN, 0.0, TickFormat::Plain);
        assert_eq!(a.range, (0.0, 1.0));
    }

    #[test]
    fn rounded_axis_starts_and_ends_on_ticks() {
        let a = Axis::rounded("y", 0.643, 0.963, TickFormat::Percent);
        assert!((a.range.0 - 0.6).abs() < 1e-12 && (a.range.1 - 1.0).abs() < 1e-12, "{:?}", a.range);
        assert_eq!(labels(&a)[..3], ["60 %", "65 %", "70 %"]);
        let a = Axis::rounded("y", -1e12, f64::MAX, TickFormat::Plain);
        assert_eq!((a.range, a.ticks.len()), ((-1e12, f64::MAX), 2));
    }

    #[test]
    fn category_axis_labels_its_ticks() {
        let a = Axis::categories("x", vec!["20".to_owned(), "50".to_owned()]);
        assert_eq!((a.range, labels(&a)), ((-0.5, 1.5), vec!["20".to_owned(), "50".to_owned()]));
        assert_eq!(a.format_tick(-1.0), "");
        assert_eq!(Axis::categories("x", Vec::new()).range, (-0.5, 0.5));
    }

    #[test]
    fn log_axis_labels_decades() {
        let a = Axis::log10("x", 0.004, 37.0);
        assert_eq!(labels(&a), ["0.001", "0.01", "0.1", "1", "10", "100"]);
        assert!(!a.minor.is_empty());
    }

    #[test]
    fn hours_have_two_significant_digits() {
        assert_eq!(format_hours(0.4321), "0.43 h");
        assert_eq!(format_hours(2.14), "2.1 h");
        assert_eq!(format_hours(12.4), "12 h");
        assert_eq!(format_hours(0.0), "0 h");
        assert_eq!(format_hours(2.0), "2 h");
        assert_eq!(format_hours(1e-4), "0.0001 h");
        assert_eq!(format_hours(130.4), "130 h");
        assert_eq!(format_hours(2e-5), "2.0e-5 h");
        assert_eq!(format_hours(f64::INFINITY), "inf h");
    }
}
