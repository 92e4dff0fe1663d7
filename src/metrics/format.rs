//! Numbers as the tables on the terminal and in the reports show them: fractions as
//! percentages, counts as integers, other values with three significant digits, differences
//! signed (percentage points for fractions) with a typographic minus.

/// A fraction as a percentage with one decimal (`75.0%`), as the terminal report and the HTML
/// report print shares and efficiencies; `—` for none.
pub fn pct(v: Option<f64>) -> String {
    v.map_or("—".into(), |x| format!("{:.1}%", 100.0 * x))
}

/// Whether a metric is a fraction in [0, 1] (drawn and printed as percentages).
pub fn is_fraction(metric: &str) -> bool {
    metric.contains("share") || metric.contains("efficiency") || metric.contains("deviation") || metric == "jain_index"
}

/// A value as the table shows it: fractions as percentages, integers as integers, others
/// with three significant digits (at least the units).
pub fn fmt_value(metric: &str, v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    if is_fraction(metric) {
        return format!("{}%", number(100.0 * v, 1));
    }
    number(v, 0)
}

/// `v` with three significant digits (two below 1; percentages from 1 up with one decimal),
/// none for integers and values of 100 or more; the minus sign typographic.
fn number(v: f64, min_decimals: usize) -> String {
    let a = v.abs();
    let decimals = if v == v.trunc() && min_decimals == 0 || a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 || a == 0.0 {
        // Percentages keep one decimal from 1 % up, as the summary prints them.
        if min_decimals > 0 { 1 } else { 2 }
    } else {
        (1 - a.log10().floor() as i32).clamp(2, 6) as usize
    };
    let s = format!("{a:.*}", decimals.max(min_decimals));
    if v < 0.0 && s.chars().any(|c| c.is_ascii_digit() && c != '0') { format!("−{s}") } else { s }
}

/// A difference: signed, in percentage points for fractions.
pub fn fmt_diff(metric: &str, d: f64) -> String {
    if !d.is_finite() {
        return "—".into();
    }
    let (s, unit) = if is_fraction(metric) { (number(100.0 * d, 1), " pp") } else { (number(d, 0), "") };
    if s.starts_with('−') { format!("{s}{unit}") } else { format!("+{s}{unit}") }
}

/// The half-width of an interval, unsigned.
pub fn fmt_half(metric: &str, h: f64) -> String {
    format!("±{}", fmt_diff(metric, h.abs()).trim_start_matches('+'))
}

/// A plain-text table: the first column left-aligned, the others right-aligned, two spaces
/// between columns, one line per row (the head first), each ending with a newline.
pub fn aligned(head: &[&str], rows: &[Vec<String>]) -> String {
    let width = |i: usize| {
        rows.iter().filter_map(|r| r.get(i)).map(|c| c.chars().count()).chain([head[i].chars().count()]).max()
    };
    let widths: Vec<usize> = (0..head.len()).map(|i| width(i).unwrap_or(0)).collect();
    let mut out = String::new();
    let mut line = |row: &[&str]| {
        for (i, cell) in row.iter().enumerate().take(widths.len()) {
            let pad = " ".repeat(widths[i].saturating_sub(cell.chars().count()));
            if i == 0 {
                out.push_str(cell);
                out.push_str(&pad);
            } else {
                out.push_str("  ");
                out.push_str(&pad);
                out.push_str(cell);
            }
        }
        out.push('\n');
    };
    line(head);
    for r in rows {
        line(&r.iter().map(String::as_str).collect::<Vec<_>>());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aligned_table_pads_to_the_widest_cell() {
        let t = aligned(&["metric", "A"], &[vec!["x".into(), "12.5%".into()], vec!["longer".into(), "1".into()]]);
        assert_eq!(t, "metric      A\nx       12.5%\nlonger      1\n");
    }

    #[test]
    fn numbers_read_as_an_operator_expects() {
        assert_eq!(fmt_value("jobs.done", 14690.0), "14690");
        assert_eq!(fmt_value("pilots.aborted", 58.25), "58.2");
        assert_eq!(fmt_value("pilots.aborted", 2.25), "2.25");
        assert_eq!(fmt_value("x", 0.001234), "0.0012");
        assert_eq!(fmt_value("pilot_efficiency", 0.9183), "91.8%");
        assert_eq!(fmt_diff("pilot_efficiency", -0.004), "−0.40 pp");
        assert_eq!(fmt_diff("pilot_efficiency", -0.04), "−4.0 pp");
        assert_eq!(fmt_diff("entities.g/carol.achieved_share", 0.00003), "+0.0030 pp");
        assert_eq!(fmt_diff("jobs.done", -224.75), "−225");
        assert_eq!(fmt_diff("jobs.done", 0.0), "+0");
        assert_eq!(fmt_half("pilots.aborted", 5.257), "±5.26");
        assert_eq!(fmt_value("x", f64::NAN), "—");
    }
}
