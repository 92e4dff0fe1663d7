//! The recorder the simulation calls: running and waiting jobs per share entity, their
//! time integrals after the warm-up, and periodic samples for `timeseries.parquet`.
//!
//! Integrals are exact (updated at every change), so achieved shares do not depend on the
//! sampling interval. Running and achieved shares are in each entity's [`ShareUnit`]: jobs for
//! DIRAC's groups, cores for PanDA's global shares; the core-based share is kept for every
//! entity beside it. The recorder only observes: no decision of the model reads it (the
//! share corrector reads the simulation's `workload::Accounting`).

use crate::engine::SimTime;

pub use crate::grid::PilotCounts;
pub use crate::workload::{EntityDef, JobEntities, Level, ShareUnit};

/// One sampling instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub time: SimTime,
    /// Running jobs per entity.
    pub running: Vec<u32>,
    /// Cores of the running jobs per entity.
    pub running_cores: Vec<u32>,
    /// Waiting jobs per entity.
    pub waiting: Vec<u32>,
    /// Instantaneous running share among siblings per entity, in its unit; NaN when the
    /// siblings run nothing.
    pub share: Vec<f64>,
    /// Achieved (time-averaged, since the warm-up) running share per entity, in its unit; NaN
    /// before.
    pub achieved: Vec<f64>,
    /// Achieved share of core-seconds since the warm-up per entity; NaN before.
    pub achieved_cores: Vec<f64>,
    /// Achieved share of delivered CPU work since the warm-up per entity; NaN before.
    pub achieved_cpu: Vec<f64>,
    pub pilots: PilotCounts,
}

/// GPUs busy at one sampling instant, per CE and GPU inventory entry (flattened in CE then
/// entry order, `grid::gpu::Gpus::usage`): held by running pilots, and used by their jobs.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuSample {
    pub time: SimTime,
    pub held: Vec<u32>,
    pub used: Vec<u32>,
}

/// Running/waiting counts, exact integrals and samples per entity.
#[derive(Debug, Clone)]
pub struct Recorder {
    pub entities: Vec<EntityDef>,
    warmup: SimTime,
    running: Vec<u32>,
    running_cores: Vec<u32>,
    waiting: Vec<u32>,
    /// Σ CPU power of the running jobs' CEs.
    running_power: Vec<f64>,
    last_change: Vec<SimTime>,
    /// ∫ running dt after the warm-up, in job-seconds.
    job_seconds: Vec<f64>,
    /// ∫ running cores dt after the warm-up, in core-seconds.
    core_seconds: Vec<f64>,
    /// ∫ running·power dt after the warm-up: delivered CPU work.
    cpu_work: Vec<f64>,
    /// Index of each entity's sibling set (all groups; or the users of one group).
    sibling_set: Vec<usize>,
    pub samples: Vec<Sample>,
    /// GPU samples, taken with `samples` when the grid declares GPUs (else empty).
    pub gpu_samples: Vec<GpuSample>,
}

impl Recorder {
    pub fn new(entities: Vec<EntityDef>, warmup: SimTime) -> Self {
        let n = entities.len();
        // Sibling sets: the groups of one WMS, or the users of one group.
        let mut keys: Vec<(Option<usize>, crate::ids::WmsId)> = Vec::new();
        let sibling_set = entities
            .iter()
            .map(|e| {
                let key = (e.parent, if e.parent.is_some() { 0 } else { e.wms });
                keys.iter().position(|k| *k == key).unwrap_or_else(|| {
                    keys.push(key);
                    keys.len() - 1
                })
            })
            .collect();
        Self {
            entities,
            warmup,
            running: vec![0; n],
            running_cores: vec![0; n],
            waiting: vec![0; n],
            running_power: vec![0.0; n],
            last_change: vec![SimTime::ZERO; n],
            job_seconds: vec![0.0; n],
            core_seconds: vec![0.0; n],
            cpu_work: vec![0.0; n],
            sibling_set,
            samples: Vec::new(),
            gpu_samples: Vec::new(),
        }
    }

    fn advance(&mut self, e: usize, now: SimTime) {
        let from = self.last_change[e].max(self.warmup);
        if now > from {
            let dt = (now - from).as_secs_f64();
            self.job_seconds[e] += f64::from(self.running[e]) * dt;
            self.core_seconds[e] += f64::from(self.running_cores[e]) * dt;
            self.cpu_work[e] += self.running_power[e] * dt;
        }
        self.last_change[e] = now;
    }

    /// Bring every integral up to `now`.
    pub fn advance_all(&mut self, now: SimTime) {
        for e in 0..self.entities.len() {
            self.advance(e, now);
        }
    }

    /// Shares of `values` among each entity's siblings; NaN where the siblings sum to 0.
    pub fn sibling_shares(&self, values: &[f64]) -> Vec<f64> {
        let sets = self.sibling_set.iter().max().map_or(0, |m| m + 1);
        let mut totals = vec![0.0; sets];
        for (e, v) in values.iter().enumerate() {
            totals[self.sibling_set[e]] += v;
        }
        values
            .iter()
            .enumerate()
            .map(|(e, v)| {
                let t = totals[self.sibling_set[e]];
                if t > 0.0 { v / t } else { f64::NAN }
            })
            .collect()
    }

    /// A job entered a task queue.
    pub fn job_waiting(&mut self, e: JobEntities) {
        for i in e.each() {
            self.waiting[i] += 1;
        }
    }

    /// A waiting job left the queue without running (its WMS cancelled it).
    pub fn job_left_waiting(&mut self, e: JobEntities) {
        for i in e.each() {
            self.waiting[i] -= 1;
        }
    }

    /// A waiting job of `cores` cores was matched and started on a CE of this CPU power.
    pub fn job_started(&mut self, now: SimTime, e: JobEntities, cores: u32, cpu_power: f64) {
        for i in e.each() {
            self.advance(i, now);
            self.waiting[i] -= 1;
            self.running[i] += 1;
            self.running_cores[i] += cores;
            self.running_power[i] += cpu_power;
        }
    }

    /// A running job of `cores` cores ended on a CE of this CPU power.
    pub fn job_ended(&mut self, now: SimTime, e: JobEntities, cores: u32, cpu_power: f64) {
        for i in e.each() {
            self.advance(i, now);
            self.running[i] -= 1;
            self.running_cores[i] -= cores;
            self.running_power[i] -= cpu_power;
            if self.running[i] == 0 {
                self.running_power[i] = 0.0; // no float residue
            }
        }
    }

    /// Per entity, `jobs` or `cores` as its unit says (siblings share one unit: they belong to
    /// one WMS).
    fn in_unit<T: Copy>(&self, jobs: &[T], cores: &[T]) -> Vec<T> {
        self.entities
            .iter()
            .enumerate()
            .map(|(e, d)| match d.unit {
                ShareUnit::Jobs => jobs[e],
                ShareUnit::Cores => cores[e],
            })
            .collect()
    }

    /// Achieved share per entity over `[warm-up, now]`, in its unit: its job-seconds (or
    /// core-seconds) over its siblings' (all groups for a group; the group's users for a user).
    /// NaN when the siblings ran nothing.
    pub fn achieved_shares(&mut self, now: SimTime) -> Vec<f64> {
        self.advance_all(now);
        self.sibling_shares(&self.in_unit(&self.job_seconds, &self.core_seconds))
    }

    /// Like [`Self::achieved_shares`], in core-seconds for every entity.
    pub fn achieved_core_shares(&mut self, now: SimTime) -> Vec<f64> {
        self.advance_all(now);
        self.sibling_shares(&self.core_seconds)
    }

    /// Like [`Self::achieved_shares`], for delivered CPU work (running time × CPU power).
    pub fn achieved_cpu_shares(&mut self, now: SimTime) -> Vec<f64> {
        self.advance_all(now);
        self.sibling_shares(&self.cpu_work)
    }

    /// Record a sample.
    pub fn sample(&mut self, now: SimTime, pilots: PilotCounts) {
        let (achieved, achieved_cores, achieved_cpu) = if now > self.warmup {
            (self.achieved_shares(now), self.achieved_core_shares(now), self.achieved_cpu_shares(now))
        } else {
            let nan = vec![f64::NAN; self.entities.len()];
            (nan.clone(), nan.clone(), nan)
        };
        let running: Vec<f64> = self.in_unit(&self.running, &self.running_cores).into_iter().map(f64::from).collect();
        let share = self.sibling_shares(&running);
        self.samples.push(Sample {
            time: now,
            running: self.running.clone(),
            running_cores: self.running_cores.clone(),
            waiting: self.waiting.clone(),
            share,
            achieved,
            achieved_cores,
            achieved_cpu,
            pilots,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entities() -> Vec<EntityDef> {
        let g = |name: &str, t| EntityDef {
            name: name.into(),
            level: Level::Group,
            parent: None,
            target_share: t,
            wms: 0,
            unit: ShareUnit::Jobs,
        };
        vec![
            g("prod", 0.75),
            g("user", 0.25),
            EntityDef {
                name: "user/a".into(),
                level: Level::User,
                parent: Some(1),
                target_share: 0.5,
                wms: 0,
                unit: ShareUnit::Jobs,
            },
            EntityDef {
                name: "user/b".into(),
                level: Level::User,
                parent: Some(1),
                target_share: 0.5,
                wms: 0,
                unit: ShareUnit::Jobs,
            },
        ]
    }

    #[test]
    fn integrals_start_at_the_warmup_and_shares_are_per_sibling_set() {
        let mut r = Recorder::new(entities(), SimTime::from_secs(100));
        let prod = JobEntities { group: 0, user: None };
        let ua = JobEntities { group: 1, user: Some(2) };
        let ub = JobEntities { group: 1, user: Some(3) };
        for e in [prod, prod, prod, ua, ub] {
            r.job_waiting(e);
        }
        r.job_started(SimTime::from_secs(0), prod, 1, 10.0);
        r.job_started(SimTime::from_secs(0), prod, 1, 10.0);
        r.job_started(SimTime::from_secs(50), ua, 1, 5.0);
        r.job_started(SimTime::from_secs(200), ub, 1, 10.0);
        r.job_ended(SimTime::from_secs(300), ua, 1, 5.0);
        // After 100 s: prod 2 jobs × 200 s = 400; user/a 1 × 200 = 200; user/b 1 × 100 = 100.
        let s = r.achieved_shares(SimTime::from_secs(300));
        assert_eq!(r.job_seconds, [400.0, 300.0, 200.0, 100.0]);
        assert!((s[0] - 400.0 / 700.0).abs() < 1e-12);
        assert!((s[2] - 2.0 / 3.0).abs() < 1e-12 && (s[3] - 1.0 / 3.0).abs() < 1e-12);
        // CPU work: prod 400·10 = 4000, user/a 200·5 = 1000, user/b 100·10 = 1000.
        let c = r.achieved_cpu_shares(SimTime::from_secs(300));
        assert!((c[0] - 4000.0 / 6000.0).abs() < 1e-12 && (c[2] - 0.5).abs() < 1e-12, "{c:?}");
        r.sample(SimTime::from_secs(300), PilotCounts::default());
        assert_eq!(r.samples[0].running, vec![2, 1, 0, 1]);
        assert_eq!(r.samples[0].share[0], 2.0 / 3.0);
        assert!(r.samples[0].share[2] == 0.0 && r.samples[0].share[3] == 1.0);
        assert_eq!(r.samples[0].waiting, vec![1, 0, 0, 0]);
    }

    #[test]
    fn a_core_counted_share_weighs_each_job_by_its_cores_and_a_job_counted_one_does_not() {
        // One 8-core MC job beside three 1-core analysis jobs for 100 s: 25 % of the jobs, 8/11
        // of the cores.
        for (unit, mc) in [(ShareUnit::Jobs, 0.25), (ShareUnit::Cores, 8.0 / 11.0)] {
            let g = |name: &str| EntityDef {
                name: name.into(),
                level: Level::Group,
                parent: None,
                target_share: 0.5,
                wms: 0,
                unit,
            };
            let mut r = Recorder::new(vec![g("mc"), g("user")], SimTime::ZERO);
            let (mc_job, user_job) = (JobEntities { group: 0, user: None }, JobEntities { group: 1, user: None });
            r.job_waiting(mc_job);
            r.job_started(SimTime::ZERO, mc_job, 8, 10.0);
            for _ in 0..3 {
                r.job_waiting(user_job);
                r.job_started(SimTime::ZERO, user_job, 1, 10.0);
            }
            let s = r.achieved_shares(SimTime::from_secs(100));
            assert!((s[0] - mc).abs() < 1e-12, "{unit:?}: {s:?}");
            let c = r.achieved_core_shares(SimTime::from_secs(100));
            assert!((c[0] - 8.0 / 11.0).abs() < 1e-12, "{c:?}");
            r.sample(SimTime::from_secs(100), PilotCounts::default());
            assert!((r.samples[0].share[0] - mc).abs() < 1e-12);
            assert_eq!(r.samples[0].running_cores, vec![8, 3]);
            r.job_ended(SimTime::from_secs(100), mc_job, 8, 10.0);
            assert_eq!(r.running_cores[0], 0);
        }
    }
}
