//! Python's number formatting, for log lines and messages quoted from PanDA.

use std::fmt;

/// Python's `str(float)` (= `repr`): the shortest digits that round-trip, positional for decimal
/// exponents in `[-4, 16)` with integral values keeping a `.0` (`100.0`, `-0.0`, `0.0001`),
/// else `d.ddde±XX` (`1e-05`, `1.5e+16`); `nan`, `inf`, `-inf`.
pub fn py_float(x: f64) -> String {
    PyFloat(x).to_string()
}

/// [`py_float`] as a `Display` value, for messages formatted many times: the positional form
/// (every magnitude from 10⁻⁴ to 10¹⁶, and zero) is written without allocating. It ignores
/// width, fill and precision: write it with `{}`.
#[derive(Debug, Clone, Copy)]
pub struct PyFloat(pub f64);

impl fmt::Display for PyFloat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.0;
        if x.is_nan() {
            return f.write_str("nan");
        }
        if x.is_infinite() {
            return f.write_str(if x > 0.0 { "inf" } else { "-inf" });
        }
        // The shortest round-trip digits of a double below 1e16 (or from 1e-4 up) have a
        // decimal exponent below 16 (or from -4 up): 1e16 and 1e-4 are the doubles those
        // digits name. Rust's `{}` is then the same digits, positional, with a `.` exactly
        // when the value is not integral.
        if x == 0.0 || (1e-4..1e16).contains(&x.abs()) {
            write!(f, "{x}")?;
            return if x.fract() == 0.0 { f.write_str(".0") } else { Ok(()) };
        }
        let sci = format!("{x:e}");
        let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        write!(f, "{mantissa}e{sign}{:02}", exp.unsigned_abs())
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

    /// The formatting of both exponent forms, as `py_float` first wrote every value: the
    /// scientific digits, then the positional ones when the exponent is in `[-4, 16)`.
    fn by_exponent(x: f64) -> String {
        let sci = format!("{x:e}");
        let (mantissa, exp) = sci.split_once('e').unwrap();
        let exp: i32 = exp.parse().unwrap();
        if x != 0.0 && !(-4..16).contains(&exp) {
            format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs())
        } else {
            let s = format!("{x}");
            if s.contains('.') { s } else { format!("{s}.0") }
        }
    }

    #[test]
    fn the_positional_fast_path_agrees_at_its_edges_and_across_magnitudes() {
        let below = |x: f64| f64::from_bits(x.to_bits() - 1);
        let above = |x: f64| f64::from_bits(x.to_bits() + 1);
        let mut xs = vec![1e-4, below(1e-4), above(1e-4), 1e16, below(1e16), above(1e16), 0.0, -0.0, 2f64.powi(53)];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..20_000 {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let x = f64::from_bits(state);
            if x.is_finite() {
                xs.push(x);
                // Magnitudes a message holds: 1e-8 … 1e20, some of them integral.
                let m = (state >> 11) as f64 / (1u64 << 53) as f64;
                let y = 10f64.powf(m * 28.0 - 8.0);
                xs.extend([y, -y, y.round()]);
            }
        }
        for x in xs {
            assert_eq!(py_float(x), by_exponent(x), "{x:?}");
        }
    }
}
