//! Python's number formatting, for log lines and messages quoted from PanDA.

/// Python's `str(float)` (= `repr`): the shortest digits that round-trip, positional for decimal
/// exponents in `[-4, 16)` with integral values keeping a `.0` (`100.0`, `-0.0`, `0.0001`),
/// else `d.ddde±XX` (`1e-05`, `1.5e+16`); `nan`, `inf`, `-inf`.
pub fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if x != 0.0 && !(-4..16).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.unsigned_abs())
    } else {
        let s = format!("{x}");
        if s.contains('.') { s } else { format!("{s}.0") }
    }
}

#[cfg(test)]
mod tests {
    use super::py_float;

    /// Each expected string is `python3 -c 'print(str(x))'` (CPython 3).
    #[test]
    fn str_of_float_as_python_prints_it() {
        let cases = [
            (1e-05, "1e-05"),
            (1e16, "1e+16"),
            (0.1, "0.1"),
            (100.0, "100.0"),
            (1e22, "1e+22"),
            (f64::NAN, "nan"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (0.0001, "0.0001"),
            (9999999999999998.0, "9999999999999998.0"),
            (1.5e16, "1.5e+16"),
            (2.5e-07, "2.5e-07"),
            (123456.789, "123456.789"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-3.0, "-3.0"),
        ];
        for (x, want) in cases {
            assert_eq!(py_float(x), want, "{x:?}");
        }
    }
}
