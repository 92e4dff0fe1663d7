//! Exact samplers in pure Rust, so every draw is bit-identical in every build.
//!
//! `std`'s `f64::ln`, `exp`, `powf`, `sin`… call the platform's C library, whose last-bit
//! results differ between systems; a single differing bit can flip a comparison and fork
//! a whole run. Here all transcendental math goes through `libm` (a pure-Rust port of
//! musl's libm, the same everywhere), and only IEEE-exact operations (`+ - * /`, `sqrt`,
//! `floor`, `round`) use `std`. Each sampler is exact in distribution: it draws from the
//! stated law up to `f64` rounding (no truncated series, no approximate tables), and it
//! uses a fixed number of draws where it can, so stream positions stay predictable.
//!
//! All samplers take any `R: rand::Rng + ?Sized`, normally a [`super::SimRng`].

use rand::Rng;
use std::f64::consts::PI;

/// A uniform draw on `[0, 1)`: the top 53 bits of one `u64`, times 2⁻⁵³ (every value is a
/// multiple of 2⁻⁵³, all equally likely).
#[inline]
pub fn uniform01<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform draw on `(0, 1]` (`1 - uniform01`), safe to take the logarithm of.
#[inline]
pub fn uniform_open01<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    1.0 - uniform01(rng)
}

/// A uniform draw on `[lo, hi)` (`lo + (hi - lo) * u`; `hi` itself only by rounding).
pub fn uniform_range<R: Rng + ?Sized>(rng: &mut R, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * uniform01(rng)
}

/// An exponential draw with this mean, by inversion: `-mean · ln(1 - u)` (one draw;
/// `log1p` keeps full precision for small `u`; the largest value is about 36.7 · mean).
pub fn exponential<R: Rng + ?Sized>(rng: &mut R, mean: f64) -> f64 {
    -libm::log1p(-uniform01(rng)) * mean
}

/// A standard normal draw by the Box–Muller transform, `sqrt(-2 ln u₁) · cos(2π u₂)`,
/// exact in distribution. It takes two draws and discards the sine partner, so the
/// sampler keeps no hidden state and each call advances the stream by exactly two.
pub fn standard_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let r = (-2.0 * libm::log(uniform_open01(rng))).sqrt();
    r * libm::cos(2.0 * PI * uniform01(rng))
}

/// A normal draw with mean `mu` and standard deviation `sigma`.
pub fn normal<R: Rng + ?Sized>(rng: &mut R, mu: f64, sigma: f64) -> f64 {
    mu + sigma * standard_normal(rng)
}

/// A log-normal draw: `exp(N(mu, sigma²))`, so the median is `exp(mu)`.
pub fn lognormal<R: Rng + ?Sized>(rng: &mut R, mu: f64, sigma: f64) -> f64 {
    libm::exp(normal(rng, mu, sigma))
}

/// A Poisson draw with mean `lambda` (0 for `lambda <= 0` or NaN), exact.
///
/// Below 10, inversion by sequential search (one draw, about `lambda + 1` steps). From 10
/// on, Hörmann's PTRS transformed rejection with squeeze (W. Hörmann, "The transformed
/// rejection method for generating Poisson random variables", Insurance: Mathematics and
/// Economics 12, 1993): about 2.3 draws on average for any `lambda`, with `ln k!` from
/// `libm::lgamma`, so it stays accurate and overflow-free up to `lambda` = 1e6 and beyond.
pub fn poisson<R: Rng + ?Sized>(rng: &mut R, lambda: f64) -> u64 {
    if lambda.is_nan() || lambda <= 0.0 {
        return 0;
    }
    if lambda < 10.0 {
        let u = uniform01(rng);
        let (mut k, mut p) = (0u64, libm::exp(-lambda));
        let mut cdf = p;
        // `p > 0` stops the search should rounding leave the total just below `u`.
        while u >= cdf && p > 0.0 {
            k += 1;
            p *= lambda / k as f64;
            cdf += p;
        }
        return k;
    }
    let (slam, loglam) = (lambda.sqrt(), libm::log(lambda));
    let b = 0.931 + 2.53 * slam;
    let a = -0.059 + 0.02483 * b;
    let log_inv_alpha = libm::log(1.1239 + 1.1328 / (b - 3.4));
    let v_r = 0.9277 - 3.6224 / (b - 2.0);
    loop {
        let u = uniform01(rng) - 0.5;
        let v = uniform01(rng);
        let us = 0.5 - u.abs();
        let k = ((2.0 * a / us + b) * u + lambda + 0.43).floor();
        if k < 0.0 {
            continue; // includes us == 0, where k is -inf
        }
        if us >= 0.07 && v <= v_r {
            return k as u64; // squeeze: accepted without evaluating the density
        }
        if us < 0.013 && v > us {
            continue;
        }
        let lhs = libm::log(v) + log_inv_alpha - libm::log(a / (us * us) + b);
        if lhs <= -lambda + k * loglam - libm::lgamma(k + 1.0) {
            return k as u64;
        }
    }
}

/// The minimum of `n` independent U(0, 1) draws, with a single draw: that minimum is
/// Beta(1, n), sampled by inversion as `1 - (1 - u)^(1/n)`, computed stably as
/// `-expm1(log1p(-u) / n)`. `n = 0` gives 1.0 (the minimum of nothing).
///
/// Used to emulate SQL `ORDER BY RAND()/p` over `n` rows at one priority level `p`: the
/// row that wins has key `min(U₁..Uₙ)/p`, which this draws in O(1) instead of O(n).
pub fn min_of_uniforms<R: Rng + ?Sized>(rng: &mut R, n: u64) -> f64 {
    if n == 0 {
        return 1.0;
    }
    -libm::expm1(libm::log1p(-uniform01(rng)) / n as f64)
}

/// A uniform index in `0..n`, without bias, by Lemire's multiply-and-reject method
/// ("Fast random integer generation in an interval", 2019): usually one draw, no division.
///
/// Panics if `n == 0`.
pub fn index<R: Rng + ?Sized>(rng: &mut R, n: usize) -> usize {
    assert!(n > 0, "index of an empty range");
    let n = n as u64;
    let mut m = u128::from(rng.next_u64()) * u128::from(n);
    if (m as u64) < n {
        // Reject the `2⁶⁴ mod n` low products that would over-represent some indices.
        let threshold = n.wrapping_neg() % n;
        while (m as u64) < threshold {
            m = u128::from(rng.next_u64()) * u128::from(n);
        }
    }
    (m >> 64) as usize
}

/// True with probability `p`, clamped to `[0, 1]` (`p <= 0` or NaN: never; `p >= 1`:
/// always). Always takes exactly one draw, so the stream position does not depend on `p`.
pub fn bernoulli<R: Rng + ?Sized>(rng: &mut R, p: f64) -> bool {
    uniform01(rng) < p
}

/// Shuffle `items` uniformly in place (Fisher–Yates, `len - 1` calls of [`index`]).
pub fn shuffle<R: Rng + ?Sized, T>(rng: &mut R, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        items.swap(i, index(rng, i + 1));
    }
}

#[cfg(test)]
mod tests {
    //! Statistical tests of the samplers: fixed seeds, tolerances of about 5 standard errors
    //! (a false failure is practically impossible; a wrong formula is still caught).

    use super::*;
    use crate::engine::{RngStreams, SimRng};
    use rand_distr::Distribution;

    fn rng(key: &str) -> SimRng {
        RngStreams::new(2024).stream(key)
    }

    /// Sample mean and (unbiased) variance.
    fn moments(xs: &[f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        (mean, xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0))
    }

    fn assert_close(what: &str, got: f64, want: f64, tol: f64) {
        assert!((got - want).abs() <= tol, "{what}: got {got}, want {want} ± {tol}");
    }

    #[test]
    fn uniforms_stay_in_range() {
        let mut r = rng("uniform");
        for _ in 0..100_000 {
            let (u, v, w) = (uniform01(&mut r), uniform_open01(&mut r), uniform_range(&mut r, -2.0, 3.0));
            assert!((0.0..1.0).contains(&u) && v > 0.0 && v <= 1.0 && (-2.0..=3.0).contains(&w));
        }
        let (mean, var) = moments(&(0..200_000).map(|_| uniform01(&mut r)).collect::<Vec<_>>());
        assert_close("uniform mean", mean, 0.5, 5.0 * (1.0 / 12.0 / 2e5f64).sqrt());
        assert_close("uniform var", var, 1.0 / 12.0, 0.002);
    }

    #[test]
    fn exponential_mean() {
        let mut r = rng("exp");
        let xs: Vec<f64> = (0..200_000).map(|_| exponential(&mut r, 5.0)).collect();
        assert!(xs.iter().all(|&x| x >= 0.0 && x.is_finite()));
        let (mean, var) = moments(&xs);
        assert_close("exp mean", mean, 5.0, 5.0 * 5.0 / 2e5f64.sqrt());
        assert_close("exp var", var, 25.0, 5.0 * (8.0 * 625.0 / 2e5f64).sqrt());
    }

    #[test]
    fn normal_and_lognormal() {
        let mut r = rng("normal");
        let n = 200_000;
        let (mean, var) = moments(&(0..n).map(|_| normal(&mut r, 3.0, 2.0)).collect::<Vec<_>>());
        assert_close("normal mean", mean, 3.0, 5.0 * 2.0 / (n as f64).sqrt());
        assert_close("normal var", var, 4.0, 5.0 * 4.0 * (2.0 / n as f64).sqrt());
        let median = libm::exp(2.0);
        let below = (0..n).filter(|_| lognormal(&mut r, 2.0, 0.5) < median).count() as f64 / n as f64;
        assert_close("lognormal P(X < median)", below, 0.5, 5.0 * (0.25 / n as f64).sqrt());
    }

    #[test]
    fn poisson_moments() {
        for (i, &lambda) in [0.5, 3.0, 9.9, 10.0, 37.5, 1000.0, 1e5, 1e6].iter().enumerate() {
            let mut r = rng(&format!("poisson/{i}"));
            let n = 100_000;
            let xs: Vec<f64> = (0..n).map(|_| poisson(&mut r, lambda) as f64).collect();
            let (mean, var) = moments(&xs);
            let nf = n as f64;
            assert_close(&format!("poisson({lambda}) mean"), mean, lambda, 5.0 * (lambda / nf).sqrt());
            let var_tol = 5.0 * ((lambda + 2.0 * lambda * lambda) / nf).sqrt();
            assert_close(&format!("poisson({lambda}) var"), var, lambda, var_tol);
            if lambda < 5.0 {
                let p0 = libm::exp(-lambda);
                let zeros = xs.iter().filter(|&&x| x == 0.0).count() as f64 / nf;
                assert_close(&format!("poisson({lambda}) P(0)"), zeros, p0, 5.0 * (p0 * (1.0 - p0) / nf).sqrt());
            }
        }
        let mut r = rng("poisson/degenerate");
        assert_eq!([0.0, -1.0, f64::NAN].map(|l| poisson(&mut r, l)), [0, 0, 0]);
    }

    /// The whole distribution, not only its moments: chi-square against the exact pmf, on
    /// both sides of the inversion/PTRS switch.
    #[test]
    fn poisson_matches_pmf() {
        for lambda in [9.9, 10.0, 37.5] {
            let mut r = rng(&format!("poisson/pmf/{lambda}"));
            let n = 200_000;
            let mut counts = vec![0u64; 200];
            for _ in 0..n {
                counts[(poisson(&mut r, lambda) as usize).min(199)] += 1;
            }
            let (mut chi2, mut df, mut tail_obs, mut tail_exp) = (0.0, 0.0f64, 0.0, 0.0);
            for (k, &c) in counts.iter().enumerate() {
                let k = k as f64;
                let expected = n as f64 * libm::exp(-lambda + k * libm::log(lambda) - libm::lgamma(k + 1.0));
                if expected >= 20.0 {
                    chi2 += (c as f64 - expected).powi(2) / expected;
                    df += 1.0;
                } else {
                    (tail_obs, tail_exp) = (tail_obs + c as f64, tail_exp + expected);
                }
            }
            chi2 += (tail_obs - tail_exp).powi(2) / tail_exp;
            assert!(chi2 < df + 6.0 * (2.0 * df).sqrt(), "poisson({lambda}): chi2 {chi2} with {df} bins");
        }
    }

    #[test]
    fn min_of_uniforms_mean() {
        for n in [1u64, 10, 1000] {
            let mut r = rng(&format!("min/{n}"));
            let draws = 200_000;
            let xs: Vec<f64> = (0..draws).map(|_| min_of_uniforms(&mut r, n)).collect();
            assert!(xs.iter().all(|x| (0.0..1.0).contains(x)));
            let nf = n as f64;
            let sd = (nf / ((nf + 1.0).powi(2) * (nf + 2.0))).sqrt();
            assert_close(
                &format!("min of {n} mean"),
                moments(&xs).0,
                1.0 / (nf + 1.0),
                5.0 * sd / (draws as f64).sqrt(),
            );
        }
        assert_eq!(min_of_uniforms(&mut rng("min/0"), 0), 1.0);
    }

    /// Two-sample Kolmogorov–Smirnov distance between the one-draw minimum and an explicit
    /// minimum of `n` uniforms.
    #[test]
    fn min_of_uniforms_matches_explicit_min() {
        for n in [10u64, 1000] {
            let mut r = rng(&format!("min/ks/{n}"));
            let m = 20_000;
            let mut fast: Vec<f64> = (0..m).map(|_| min_of_uniforms(&mut r, n)).collect();
            let mut slow: Vec<f64> = (0..m).map(|_| (0..n).map(|_| uniform01(&mut r)).fold(1.0, f64::min)).collect();
            fast.sort_by(f64::total_cmp);
            slow.sort_by(f64::total_cmp);
            let (mut i, mut j, mut d) = (0, 0, 0.0f64);
            while i < m && j < m {
                if fast[i] <= slow[j] {
                    i += 1
                } else {
                    j += 1
                }
                d = d.max((i as f64 - j as f64).abs() / m as f64);
            }
            // Critical value for alpha = 1e-6: sqrt(-ln(alpha / 2) / 2) * sqrt(2 / m).
            let crit = 2.7 * (2.0 / m as f64).sqrt();
            assert!(d < crit, "min of {n}: KS distance {d} >= {crit}");
        }
    }

    #[test]
    fn index_is_uniform() {
        let mut r = rng("index");
        let (bins, n) = (7, 700_000);
        let mut counts = [0u64; 7];
        for _ in 0..n {
            counts[index(&mut r, bins)] += 1;
        }
        let e = (n / bins) as f64;
        let chi2: f64 = counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum();
        assert!(chi2 < 40.0, "chi2 {chi2} over 6 degrees of freedom: {counts:?}");
        assert_eq!(index(&mut r, 1), 0);
        // A range of 3·2⁶² is where a biased multiply would favour some values the most.
        let big = 3usize << 62;
        let low = (0..30_000).filter(|_| index(&mut r, big) < 1 << 63).count() as f64 / 30_000.0;
        assert_close("index(3·2⁶²) share below 2⁶³", low, 2.0 / 3.0, 5.0 * (2.0 / 9.0 / 30_000.0f64).sqrt());
    }

    #[test]
    fn bernoulli_and_shuffle() {
        let mut r = rng("bernoulli");
        assert!((0..10_000).all(|_| !bernoulli(&mut r, 0.0) && bernoulli(&mut r, 1.0)));
        assert!((0..1000).all(|_| !bernoulli(&mut r, -1.0) && !bernoulli(&mut r, f64::NAN) && bernoulli(&mut r, 2.0)));
        let hits = (0..100_000).filter(|_| bernoulli(&mut r, 0.3)).count() as f64 / 1e5;
        assert_close("bernoulli(0.3)", hits, 0.3, 5.0 * (0.21 / 1e5f64).sqrt());
        // All 6 orders of 3 items equally often.
        let mut counts = std::collections::BTreeMap::new();
        for _ in 0..60_000 {
            let mut v = [0, 1, 2];
            shuffle(&mut r, &mut v);
            *counts.entry(v).or_insert(0u64) += 1;
        }
        assert_eq!(counts.len(), 6);
        let chi2: f64 = counts.values().map(|&c| (c as f64 - 1e4).powi(2) / 1e4).sum();
        assert!(chi2 < 40.0, "{counts:?}");
        let mut big: Vec<u32> = (0..1000).collect();
        shuffle(&mut r, &mut big);
        big.sort_unstable();
        assert!(big.iter().copied().eq(0..1000));
    }

    /// The same moments from `rand_distr`, an independent implementation.
    #[test]
    fn agrees_with_rand_distr() {
        let mut r = rng("rand_distr");
        let n = 200_000;
        let ours: Vec<f64> = (0..n).map(|_| exponential(&mut r, 2.0)).collect();
        let exp = rand_distr::Exp::new(0.5).unwrap();
        let theirs: Vec<f64> = (0..n).map(|_| exp.sample(&mut r)).collect();
        let (a, b) = (moments(&ours), moments(&theirs));
        assert_close("exp mean vs rand_distr", a.0, b.0, 5.0 * (2.0 * 4.0 / n as f64).sqrt());
        assert_close("exp var vs rand_distr", a.1, b.1, 5.0 * (2.0 * 8.0 * 16.0 / n as f64).sqrt());
        for lambda in [3.0, 37.5, 1000.0] {
            let ours: Vec<f64> = (0..n).map(|_| poisson(&mut r, lambda) as f64).collect();
            let p = rand_distr::Poisson::new(lambda).unwrap();
            let theirs: Vec<f64> = (0..n).map(|_| p.sample(&mut r)).collect();
            let (a, b) = (moments(&ours), moments(&theirs));
            let nf = n as f64;
            assert_close(&format!("poisson({lambda}) mean vs rand_distr"), a.0, b.0, 5.0 * (2.0 * lambda / nf).sqrt());
            let var_tol = 5.0 * (2.0 * (lambda + 2.0 * lambda * lambda) / nf).sqrt();
            assert_close(&format!("poisson({lambda}) var vs rand_distr"), a.1, b.1, var_tol);
        }
    }

    /// Pinned first values: any change to a sampler (or the stream derivation) shows here.
    /// Cross-checked with an independent Python transcription of the same algorithms.
    #[test]
    fn golden_values() {
        let mut r = RngStreams::new(1).stream("test/golden");
        let exp: Vec<f64> = (0..3).map(|_| exponential(&mut r, 1.0)).collect();
        let small: Vec<u64> = (0..5).map(|_| poisson(&mut r, 3.0)).collect();
        let large: Vec<u64> = (0..3).map(|_| poisson(&mut r, 1000.0)).collect();
        let (norm, min) = (standard_normal(&mut r), min_of_uniforms(&mut r, 10));
        assert_eq!(
            format!("{exp:?} {small:?} {large:?} {norm:?} {min:?}"),
            "[0.21368000102753595, 3.5469785434351606, 0.11824166006426619] [3, 3, 3, 7, 2] [995, 965, 1020] \
             -0.055269661077763044 0.33828749019534665"
        );
    }
}
