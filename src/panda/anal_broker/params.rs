//! The gdpconfig keys analysis brokerage reads, with panda-server 1.0.4's defaults (reference
//! `panda.md` §4 "Parameters"; `AtlasAnalJobBroker.py` L157-283, L370-375, L1159-1192,
//! L1552-1557; the classification daemons `metric_collector.py` L834-840 and
//! `task_evaluator.py` L285-288), and the two variants of the module.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Which behaviour where panda-server 1.0.4 differs from seed 004 (reference §4, ⚠).
///
/// | | `Seed` (default) | `PandaServer` (1.0.4 code) |
/// |---|---|---|
/// | basic weight | original `(R+1)/(Q+1)` ("currently used") | new `W_s·W_q + 2⁻²⁰` (L2186) |
/// | status filter | only `online` passes unless pre-assigned | `offline` always skipped, `brokeroff`/`test` unless pre-assigned, any other status passes (L657-682) |
/// | loop without data locality | locality suppressed (one loop without it) when prio ≥ 2000, IO ≤ cutoff or timeout; otherwise retried without it when the persistent filters leave nothing | loop 0 always with locality; loop 1 without it whenever input datasets exist and are readable over WAN (`getNumSitesPerJob() > 0` is always true, L487-514); loop 0 also fails when every candidate is problematic and the suppression conditions hold |
/// | `cap_rt` (defined+activated+assigned+starting > 2·max(20, running)) | temporary skip | message only, the PQ is kept (L1511-1542) |
/// | failures filter | every PQ | only PQs the stabilizer reaches (skipped by its `continue`s, L1640-1670) |
/// | users on a PQ (`nUsers`) | real users | `len(dict)`, which counts the `_total` key too |
/// | memory need | `(baseRamCount + ramCount·cores)·0.9` | `int(ramCount·cores·0.9)`, no baseRamCount (L1062-1073) |
/// | scratch disk | `maxwdir / coreCount` | `maxwdir · task_cc / site_cc`, i.e. undivided for multi-core tasks (L1151-1162) |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum AnalBrokerVariant {
    /// Seed 004, "ATLAS Analysis Job Brokerage".
    #[default]
    Seed,
    /// panda-server 1.0.4 `AtlasAnalJobBroker.doBrokerage`.
    PandaServer,
}

/// Which basic weight multiplies the data factor (seed 004: "Original basic weight … Currently
/// original basic weight is used in brokerage"; reference §4: `_basic_weight_version = "new"`
/// since 2022-11-28).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BasicWeight {
    /// `(nRunning + 1) / (nActivated + nAssigned + nDefined + nStarting + 1)`.
    Original,
    /// `W_s · W_q + 2⁻²⁰` (see [`super::weight`]).
    New,
}

/// gdpconfig of analysis brokerage. Components: `anal_jobbroker` and `jobbroker` (app `jedi`,
/// vo `atlas`), `prio_mgr` (app `pandaserver`), `analy_eval` (app `pandaserver`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnalBrokerParams {
    /// `TW_DONE_JOB_STAT` (anal_jobbroker/jedi, default 6 h, L157-159): window of the task's
    /// failed/closed/finished counts the caller passes in [`super::QueueStats`].
    pub tw_done_job_stat: f64,
    /// `MIN_BAD_JOBS_TO_SKIP_PQ` (anal_jobbroker/jedi, default 5, L162-164).
    pub min_bad_jobs_to_skip_pq: u64,
    /// `CAP_RUNNING_USER_JOBS` (prio_mgr/pandaserver, default none = no cap, L175-203).
    pub cap_running_user_jobs: Option<u64>,
    /// `CAP_RUNNING_USER_CORES` (prio_mgr/pandaserver, default none).
    pub cap_running_user_cores: Option<u64>,
    /// `CAP_RUNNING_GROUP_JOBS` (prio_mgr/pandaserver, default none), for tasks with a workingGroup.
    pub cap_running_group_jobs: Option<u64>,
    /// `CAP_RUNNING_GROUP_CORES` (prio_mgr/pandaserver, default none).
    pub cap_running_group_cores: Option<u64>,
    /// `USER_USAGE_THRESHOLD_A` (analy_eval/pandaserver, default 1000 slots, L245-247 and
    /// metric_collector L834-836): running slots on hi-sites a user may have in class A.
    pub user_usage_threshold_a: f64,
    /// `USER_USAGE_THRESHOLD_B` (analy_eval/pandaserver): default **8000** slots in
    /// metric_collector (L837-840), the only reader that uses it; the broker reads it with a
    /// default of 10000 (L248-250) and never uses it.
    pub user_usage_threshold_b: f64,
    /// `PROGRESS_TO_BOOST_A` (analy_eval, default 90 %, task_evaluator L285).
    pub progress_to_boost_a: f64,
    /// `PROGRESS_TO_BOOST_B` (analy_eval, default 95 %).
    pub progress_to_boost_b: f64,
    /// `MAX_REM_JOBS_TO_BOOST_A` (analy_eval, default 500).
    pub max_rem_jobs_to_boost_a: f64,
    /// `MAX_REM_JOBS_TO_BOOST_B` (analy_eval, default 200).
    pub max_rem_jobs_to_boost_b: f64,
    /// `BASE_QUEUE_LENGTH_PER_PQ` (anal_jobbroker/jedi, default 100, L257-259).
    pub base_queue_length_per_pq: f64,
    /// `BASE_EXPECTED_WAIT_HOUR_ON_PQ` (anal_jobbroker/jedi, default 8 h, L260-262).
    pub base_expected_wait_hour_on_pq: f64,
    /// `BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER` (anal_jobbroker/jedi, default 5, L263-267).
    pub base_default_queue_length_per_pq_user: f64,
    /// `BASE_QUEUE_RATIO_ON_PQ` (anal_jobbroker/jedi, default 0.05, L268-270).
    pub base_queue_ratio_on_pq: f64,
    /// `STATIC_MAX_QUEUE_RUNNING_RATIO` (anal_jobbroker/jedi, default 2.0, L271-273).
    pub static_max_queue_running_ratio: f64,
    /// `MAX_EXPECTED_WAIT_HOUR` (anal_jobbroker/jedi, default 12.0 h, L274-276).
    pub max_expected_wait_hour: f64,
    /// `MAX_MISSING_INPUT_FILES` (anal_jobbroker/jedi, default 10, L278-280): a replica missing
    /// at most this many files counts as complete (used by the caller to fill `Replica`).
    pub max_missing_input_files: u64,
    /// `MIN_INPUT_COMPLETENESS` (anal_jobbroker/jedi, default 90 %, L281-283), likewise.
    pub min_input_completeness: f64,
    /// `IO_INTENSITY_CUTOFF_USER` (anal_jobbroker/jedi, default none, L370-371), kB/s.
    pub io_intensity_cutoff_user: Option<f64>,
    /// `DATA_CHECK_TIMEOUT_USER` (anal_jobbroker/jedi, default none, L373-375), hours.
    pub data_check_timeout_user: Option<f64>,
    /// `MAX_DISKIO_DEFAULT` (jobbroker/jedi, default 10¹⁰ = off; 0 or unset → 10¹⁰, L690-692),
    /// kB/s per core.
    pub max_diskio_default: f64,
    /// `STORAGE_MIN_FREE_SIZE` (jobbroker/jedi, default 200 GB; 0 → 200, L1185-1188): input
    /// endpoint free space when data locality is off.
    pub storage_min_free_size: f64,
    /// `STORAGE_MIN_FREE_SIZE_OUTPUT` (anal_jobbroker/jedi, default 200 GB; 0 → 200, L1189-1192).
    pub storage_min_free_size_output: f64,
    /// `OVERLOAD_MIN_QUEUE` (anal_jobbroker/jedi, default 20, L1552-1554).
    pub overload_min_queue: f64,
    /// `OVERLOAD_RATIO_OFFSET` (anal_jobbroker/jedi, default 1.2, L1555-1557).
    pub overload_ratio_offset: f64,
    /// `MIN_WEIGHT_<prodSourceLabel>_<gshare>` then `MIN_WEIGHT_<prodSourceLabel>` (jobbroker/jedi,
    /// default 0 = off, L285-291), keyed by what follows `MIN_WEIGHT_` (e.g. `user_User Analysis`,
    /// `user`); see [`AnalBrokerParams::min_weight`].
    pub min_weight: BTreeMap<String, f64>,
    /// Seed (default) or panda-server behaviour where they differ.
    pub variant: AnalBrokerVariant,
    /// Which basic weight; `None` = the variant's (Seed → original, PandaServer → new).
    pub basic_weight: Option<BasicWeight>,
}

impl Default for AnalBrokerParams {
    fn default() -> Self {
        Self {
            tw_done_job_stat: 6.0,
            min_bad_jobs_to_skip_pq: 5,
            cap_running_user_jobs: None,
            cap_running_user_cores: None,
            cap_running_group_jobs: None,
            cap_running_group_cores: None,
            user_usage_threshold_a: 1000.0,
            user_usage_threshold_b: 8000.0,
            progress_to_boost_a: 90.0,
            progress_to_boost_b: 95.0,
            max_rem_jobs_to_boost_a: 500.0,
            max_rem_jobs_to_boost_b: 200.0,
            base_queue_length_per_pq: 100.0,
            base_expected_wait_hour_on_pq: 8.0,
            base_default_queue_length_per_pq_user: 5.0,
            base_queue_ratio_on_pq: 0.05,
            static_max_queue_running_ratio: 2.0,
            max_expected_wait_hour: 12.0,
            max_missing_input_files: 10,
            min_input_completeness: 90.0,
            io_intensity_cutoff_user: None,
            data_check_timeout_user: None,
            max_diskio_default: 1.0e10,
            storage_min_free_size: 200.0,
            storage_min_free_size_output: 200.0,
            overload_min_queue: 20.0,
            overload_ratio_offset: 1.2,
            min_weight: BTreeMap::new(),
            variant: AnalBrokerVariant::Seed,
            basic_weight: None,
        }
    }
}

/// The (component, key) pairs [`AnalBrokerParams`] reads; `MIN_WEIGHT_` is a family.
pub const GDPCONFIG_KEYS: &[(&str, &str)] = &[
    ("anal_jobbroker", "TW_DONE_JOB_STAT"),
    ("anal_jobbroker", "MIN_BAD_JOBS_TO_SKIP_PQ"),
    ("prio_mgr", "CAP_RUNNING_USER_JOBS"),
    ("prio_mgr", "CAP_RUNNING_USER_CORES"),
    ("prio_mgr", "CAP_RUNNING_GROUP_JOBS"),
    ("prio_mgr", "CAP_RUNNING_GROUP_CORES"),
    ("analy_eval", "USER_USAGE_THRESHOLD_A"),
    ("analy_eval", "USER_USAGE_THRESHOLD_B"),
    ("analy_eval", "PROGRESS_TO_BOOST_A"),
    ("analy_eval", "PROGRESS_TO_BOOST_B"),
    ("analy_eval", "MAX_REM_JOBS_TO_BOOST_A"),
    ("analy_eval", "MAX_REM_JOBS_TO_BOOST_B"),
    ("anal_jobbroker", "BASE_QUEUE_LENGTH_PER_PQ"),
    ("anal_jobbroker", "BASE_EXPECTED_WAIT_HOUR_ON_PQ"),
    ("anal_jobbroker", "BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER"),
    ("anal_jobbroker", "BASE_QUEUE_RATIO_ON_PQ"),
    ("anal_jobbroker", "STATIC_MAX_QUEUE_RUNNING_RATIO"),
    ("anal_jobbroker", "MAX_EXPECTED_WAIT_HOUR"),
    ("anal_jobbroker", "MAX_MISSING_INPUT_FILES"),
    ("anal_jobbroker", "MIN_INPUT_COMPLETENESS"),
    ("anal_jobbroker", "IO_INTENSITY_CUTOFF_USER"),
    ("anal_jobbroker", "DATA_CHECK_TIMEOUT_USER"),
    ("jobbroker", "MAX_DISKIO_DEFAULT"),
    ("jobbroker", "STORAGE_MIN_FREE_SIZE"),
    ("anal_jobbroker", "STORAGE_MIN_FREE_SIZE_OUTPUT"),
    ("anal_jobbroker", "OVERLOAD_MIN_QUEUE"),
    ("anal_jobbroker", "OVERLOAD_RATIO_OFFSET"),
    ("jobbroker", "MIN_WEIGHT_"),
];

/// `x` if finite and ≥ 0, else `default`.
fn nonneg_or(x: f64, default: f64) -> f64 {
    if x.is_finite() && x >= 0.0 { x } else { default }
}

impl AnalBrokerParams {
    /// The basic weight in use: the explicit choice, else the variant's.
    pub fn basic_weight(&self) -> BasicWeight {
        self.basic_weight.unwrap_or(match self.variant {
            AnalBrokerVariant::Seed => BasicWeight::Original,
            AnalBrokerVariant::PandaServer => BasicWeight::New,
        })
    }

    /// `MIN_WEIGHT_<label>_<gshare>`, else `MIN_WEIGHT_<label>`, else 0 (L285-291). A
    /// non-finite value reads as 0 (off).
    pub fn min_weight(&self, prod_source_label: &str, gshare: &str) -> f64 {
        crate::panda::common::min_weight(&self.min_weight, prod_source_label, gshare).1
    }

    /// The parameters as the functions read them: negative or non-finite numbers take their
    /// default; `MAX_DISKIO_DEFAULT`, `STORAGE_MIN_FREE_SIZE[_OUTPUT]` of 0 take their default
    /// as in the code (`if not x`); a cap of 0 is no cap (`if maxNumRunJobs:`).
    pub fn sane(&self) -> Self {
        let d = Self::default();
        let falsy_or = |x: f64, def: f64| if x.is_finite() && x > 0.0 { x } else { def };
        let opt = |x: Option<f64>| x.filter(|v| v.is_finite());
        Self {
            tw_done_job_stat: nonneg_or(self.tw_done_job_stat, d.tw_done_job_stat),
            cap_running_user_jobs: self.cap_running_user_jobs.filter(|&c| c > 0),
            cap_running_user_cores: self.cap_running_user_cores.filter(|&c| c > 0),
            cap_running_group_jobs: self.cap_running_group_jobs.filter(|&c| c > 0),
            cap_running_group_cores: self.cap_running_group_cores.filter(|&c| c > 0),
            user_usage_threshold_a: nonneg_or(self.user_usage_threshold_a, d.user_usage_threshold_a),
            user_usage_threshold_b: nonneg_or(self.user_usage_threshold_b, d.user_usage_threshold_b),
            progress_to_boost_a: nonneg_or(self.progress_to_boost_a, d.progress_to_boost_a),
            progress_to_boost_b: nonneg_or(self.progress_to_boost_b, d.progress_to_boost_b),
            max_rem_jobs_to_boost_a: nonneg_or(self.max_rem_jobs_to_boost_a, d.max_rem_jobs_to_boost_a),
            max_rem_jobs_to_boost_b: nonneg_or(self.max_rem_jobs_to_boost_b, d.max_rem_jobs_to_boost_b),
            base_queue_length_per_pq: nonneg_or(self.base_queue_length_per_pq, d.base_queue_length_per_pq),
            base_expected_wait_hour_on_pq: nonneg_or(
                self.base_expected_wait_hour_on_pq,
                d.base_expected_wait_hour_on_pq,
            ),
            base_default_queue_length_per_pq_user: nonneg_or(
                self.base_default_queue_length_per_pq_user,
                d.base_default_queue_length_per_pq_user,
            ),
            base_queue_ratio_on_pq: nonneg_or(self.base_queue_ratio_on_pq, d.base_queue_ratio_on_pq),
            static_max_queue_running_ratio: nonneg_or(
                self.static_max_queue_running_ratio,
                d.static_max_queue_running_ratio,
            ),
            max_expected_wait_hour: nonneg_or(self.max_expected_wait_hour, d.max_expected_wait_hour),
            min_input_completeness: nonneg_or(self.min_input_completeness, d.min_input_completeness),
            io_intensity_cutoff_user: opt(self.io_intensity_cutoff_user),
            data_check_timeout_user: opt(self.data_check_timeout_user),
            max_diskio_default: falsy_or(self.max_diskio_default, d.max_diskio_default),
            storage_min_free_size: falsy_or(self.storage_min_free_size, d.storage_min_free_size),
            storage_min_free_size_output: falsy_or(self.storage_min_free_size_output, d.storage_min_free_size_output),
            overload_min_queue: nonneg_or(self.overload_min_queue, d.overload_min_queue),
            overload_ratio_offset: nonneg_or(self.overload_ratio_offset, d.overload_ratio_offset),
            ..self.clone()
        }
    }
}

/// What a configuration gets wrong (values [`AnalBrokerParams::sane`] replaces).
pub fn validate(p: &AnalBrokerParams) -> Result<(), String> {
    let sane = p.sane();
    let pairs = [
        ("base_queue_length_per_pq", p.base_queue_length_per_pq, sane.base_queue_length_per_pq),
        ("base_expected_wait_hour_on_pq", p.base_expected_wait_hour_on_pq, sane.base_expected_wait_hour_on_pq),
        (
            "base_default_queue_length_per_pq_user",
            p.base_default_queue_length_per_pq_user,
            sane.base_default_queue_length_per_pq_user,
        ),
        ("base_queue_ratio_on_pq", p.base_queue_ratio_on_pq, sane.base_queue_ratio_on_pq),
        ("static_max_queue_running_ratio", p.static_max_queue_running_ratio, sane.static_max_queue_running_ratio),
        ("max_expected_wait_hour", p.max_expected_wait_hour, sane.max_expected_wait_hour),
        ("user_usage_threshold_a", p.user_usage_threshold_a, sane.user_usage_threshold_a),
        ("user_usage_threshold_b", p.user_usage_threshold_b, sane.user_usage_threshold_b),
        ("overload_min_queue", p.overload_min_queue, sane.overload_min_queue),
        ("overload_ratio_offset", p.overload_ratio_offset, sane.overload_ratio_offset),
    ];
    for (name, given, used) in pairs {
        if given.to_bits() != used.to_bits() {
            return Err(format!("{name} = {given} is not a finite non-negative number"));
        }
    }
    Ok(())
}
