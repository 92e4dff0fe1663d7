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
#[path = "dist_tests.rs"]
mod tests;
