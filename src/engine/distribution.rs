//! The distributions a scenario can give for a duration or an amount, sampled exactly
//! through [`super::dist`] (pure-Rust math, so values are the same in every build).

use serde::{Deserialize, Serialize};

/// A probability distribution of a duration or an amount, in seconds or CPU-work units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Distribution {
    /// Always this value.
    Fixed(f64),
    /// Exponential with this mean.
    Exponential {
        /// Mean, in the unit of the field it describes (seconds, or normalised CPU seconds for
        /// CPU work); must be positive.
        mean: f64,
    },
    /// Log-normal with this median (`exp(mu)`) and log-space standard deviation.
    LogNormal {
        /// Median, `exp(mu)`, in the unit of the field it describes (seconds, or normalised CPU
        /// seconds for CPU work); must be positive.
        median: f64,
        /// Standard deviation of the value's natural logarithm (no unit; at least 0, where 0
        /// always gives the median); the mean is `median × exp(sigma² / 2)`.
        sigma: f64,
    },
    /// Uniform on `[min, max]`.
    Uniform {
        /// Lower bound, in the unit of the field it describes (seconds, or normalised CPU seconds
        /// for CPU work); at least 0.
        min: f64,
        /// Upper bound, in the same unit; at least `min` (equal to it: always that value).
        max: f64,
    },
    /// One of these values, each equally likely (a measured sample).
    Empirical(Vec<f64>),
}

impl Distribution {
    /// Draw one value (never negative for a validated distribution).
    pub fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        use super::dist;
        match self {
            Distribution::Fixed(v) => *v,
            Distribution::Exponential { mean } => dist::exponential(rng, *mean),
            Distribution::LogNormal { median, sigma } => dist::lognormal(rng, libm::log(*median), *sigma),
            Distribution::Uniform { min, max } => dist::uniform_range(rng, *min, *max),
            Distribution::Empirical(values) => values[dist::index(rng, values.len())],
        }
    }

    /// The mean of the distribution.
    pub fn mean(&self) -> f64 {
        match self {
            Distribution::Fixed(v) => *v,
            Distribution::Exponential { mean } => *mean,
            Distribution::LogNormal { median, sigma } => median * libm::exp(sigma * sigma / 2.0),
            Distribution::Uniform { min, max } => (min + max) / 2.0,
            Distribution::Empirical(values) => values.iter().sum::<f64>() / values.len().max(1) as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStreams;

    #[test]
    fn sample_means_match() {
        let mut rng = RngStreams::new(4).stream("test/distribution");
        let cases = [
            Distribution::Fixed(3.0),
            Distribution::Exponential { mean: 600.0 },
            Distribution::LogNormal { median: 100.0, sigma: 0.5 },
            Distribution::Uniform { min: 10.0, max: 20.0 },
            Distribution::Empirical(vec![1.0, 2.0, 6.0]),
        ];
        for d in cases {
            let n = 200_000;
            let got = (0..n).map(|_| d.sample(&mut rng)).sum::<f64>() / n as f64;
            assert!((got - d.mean()).abs() < 0.01 * d.mean(), "{d:?}: {got} vs {}", d.mean());
        }
    }
}
