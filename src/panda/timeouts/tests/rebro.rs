//! Fast rebrokerage (L521-633) and analysis rebrokerage (L1007-1198).

use super::*;

fn with_limit(gshare: &str, limit: f64) -> TimeoutParams {
    let mut p = seed();
    p.fast_rebro_threshold_nqueue.insert(gshare.to_string(), limit);
    p
}

fn stats(nq: u64, nr: u64) -> ShareQueueStats {
    ShareQueueStats { nq, nr }
}

fn checked(v: &FastRebroVerdict) -> FastRebroCheck {
    match v {
        FastRebroVerdict::NoOvershoot(c) | FastRebroVerdict::DryRun(c) => *c,
        FastRebroVerdict::Reassign(a) => a.check,
        FastRebroVerdict::HarvesterSlots => panic!("excluded"),
    }
}

/// nq 100, nr 10, nq_total 200, threshold 50: 30 < 100, 100 > 50, 100 > 60 → overshoot;
/// excess = ceil(min(100 − 30, 100 − 50, 100 − 60)) = 40; `rownum < 40` → 39 jobs, code 10.
#[test]
fn fast_rebro_worked_example() {
    let p = with_limit("MC", 50.0);
    let a = fast_rebrokerage(&p, "MC", stats(100, 10), 200, false).expect("overshoot");
    assert_eq!(a.check.excess(), 40);
    assert_eq!(a.n_jobs, 39);
    assert_eq!(
        a.check.log_line("CERN-PROD", "MC"),
        "CERN-PROD in MC : nQueue(100)>nRun(10)*3: True, nQueue>nQueueThreshold(50):True, nQueue>nQueue_total(200)*0.3:True"
    );
    assert_eq!(a.action.rule, TimeoutRule::FastRebrokerage);
    assert_eq!(
        a.action.effect,
        TimeoutEffect::Close {
            kill_code: KillCode::FastRebrokerage,
            job_sub_status: None,
            error_code: TaskBufferErrorCode::FastRebrokerage,
            diag: "fast rebrokerage due to Nq/Nr overshoot".to_string(),
        }
    );
    assert_eq!((a.action.kill_code(), a.action.error_code()), (Some(KillCode::FastRebrokerage), 130));
    assert!(a.action.reassigns());
}

/// Each check is strict: nq = nr·3 is no overshoot, nq = limit neither, nq = total·0.3 neither
/// (100 × 0.3 = 30.000000000000004 in floating point, as in Python).
#[test]
fn fast_rebro_boundaries() {
    let p = with_limit("MC", 20.0);
    let c = checked(&fast_rebro_check(&p, "MC", stats(30, 10), 60, false));
    assert!(!c.ratio_check && c.stat_check && c.frac_check);
    let c = checked(&fast_rebro_check(&p, "MC", stats(31, 10), 60, false));
    assert!(c.ratio_check && c.overshoot());
    let c = checked(&fast_rebro_check(&p, "MC", stats(20, 0), 40, false));
    assert!(c.ratio_check && !c.stat_check, "20 > 20 is false");
    let c = checked(&fast_rebro_check(&p, "MC", stats(21, 0), 40, false));
    assert!(c.overshoot());
    let c = checked(&fast_rebro_check(&p, "MC", stats(30, 0), 100, false));
    assert!(!c.frac_check);
    let c = checked(&fast_rebro_check(&p, "MC", stats(31, 0), 100, false));
    assert!(c.frac_check);
    // nr = 0: any nq > 0 passes the ratio check.
    let c = checked(&fast_rebro_check(&p, "MC", stats(1, 0), 1, false));
    assert!(c.ratio_check && !c.stat_check);
}

/// Seed: "Unless the gshare defines the parameter it doesn't trigger the fast rebrokerage": the
/// code logs an overshoot against 10 and does nothing; 0 counts as unset.
#[test]
fn fast_rebro_dry_run() {
    let v = fast_rebro_check(&seed(), "MC", stats(100, 10), 200, false);
    let c = checked(&v);
    assert!(c.dry_run && c.overshoot());
    assert_eq!(c.nqueue_limit, 10.0);
    assert!(matches!(v, FastRebroVerdict::DryRun(_)));
    assert!(v.to_string().ends_with("overshoot, dry run (no FAST_REBRO_THRESHOLD_NQUEUE_<gshare>)"));
    assert_eq!(fast_rebrokerage(&seed(), "MC", stats(100, 10), 200, false), None);
    assert_eq!(fast_rebrokerage(&with_limit("MC", 0.0), "MC", stats(100, 10), 200, false), None);
    assert_eq!(fast_rebrokerage(&with_limit("Express", 5.0), "MC", stats(100, 10), 200, false), None);
}

/// `Harvester_Slots`: the PQ is never checked.
#[test]
fn fast_rebro_harvester_slots() {
    let p = with_limit("MC", 50.0);
    assert_eq!(fast_rebro_check(&p, "MC", stats(100, 10), 200, true), FastRebroVerdict::HarvesterSlots);
    assert_eq!(fast_rebrokerage(&p, "MC", stats(100, 10), 200, true), None);
}

/// ceil of a fractional excess, and the off-by-one of `rownum < :nRows`.
#[test]
fn fast_rebro_excess_rounding() {
    let p = with_limit("MC", 10.0);
    // 333 × 0.3 = 99.9 → excess = ceil(min(150, 140, 50.1)) = 51 → 50 jobs.
    let a = fast_rebrokerage(&p, "MC", stats(150, 0), 333, false).unwrap();
    assert_eq!((a.check.excess(), a.n_jobs), (51, 50));
    // excess 1 reassigns nothing: min(11, 1, 7.7) = 1, rownum < 1.
    let a = fast_rebrokerage(&p, "MC", stats(11, 0), 11, false).unwrap();
    assert_eq!((a.check.excess(), a.n_jobs), (1, 0));
    // Defaults 3 and 0.3 when the keys are 0.
    let mut p = with_limit("MC", 10.0);
    p.fast_rebro_threshold_nqnr_ratio = 0.0;
    p.fast_rebro_threshold_nqueue_frac = 0.0;
    let c = checked(&fast_rebro_check(&p, "MC", stats(100, 10), 200, false));
    assert_eq!((c.ratio_limit, c.fraction_limit), (3.0, 0.3));
    // Overrides.
    p.fast_rebro_threshold_nqnr_ratio = 20.0;
    assert!(!checked(&fast_rebro_check(&p, "MC", stats(100, 10), 200, false)).ratio_check);
}

/// `statsPerPQ`/`statsPerShare`: defined+assigned+activated+starting queued, running running,
/// Resource work queues and Harvester-slot PQs left out.
#[test]
fn aggregate_statistics() {
    let row = |queue, gshare, status, n_jobs| StatsRow {
        queue,
        gshare,
        status,
        n_jobs,
        resource_work_queue: false,
        harvester_slots: false,
    };
    let rows = [
        row(0, 0, JobStatus::Defined, 5),
        row(0, 0, JobStatus::Assigned, 6),
        row(0, 0, JobStatus::Activated, 7),
        row(0, 0, JobStatus::Starting, 8),
        row(0, 0, JobStatus::Running, 3),
        row(0, 0, JobStatus::Sent, 100),
        row(1, 0, JobStatus::Activated, 10),
        row(1, 1, JobStatus::Holding, 4),
        StatsRow { resource_work_queue: true, ..row(1, 0, JobStatus::Activated, 1000) },
        StatsRow { harvester_slots: true, ..row(2, 0, JobStatus::Activated, 1000) },
    ];
    let s = aggregate_share_stats(&rows);
    assert_eq!(s.per_queue.get(&(0, 0)), Some(&stats(26, 3)));
    assert_eq!(s.per_queue.get(&(1, 0)), Some(&stats(10, 0)));
    assert_eq!(s.per_queue.get(&(1, 1)), Some(&stats(0, 0)));
    assert_eq!(s.per_queue.get(&(2, 0)), None);
    assert_eq!(s.per_share.get(&0), Some(&stats(36, 3)));
    assert!(fast_rebro_eligible(JobStatus::Starting) && !fast_rebro_eligible(JobStatus::Running));
    assert!(!fast_rebro_eligible(JobStatus::Pending));
}

const H3: u64 = 3 * 3600;
const H12: u64 = 12 * 3600;

fn group() -> AnalRebroGroup<'static> {
    AnalRebroGroup { activated_at: Some(t(B)), site_known: true, ..AnalRebroGroup::default() }
}

fn rebro(p: &TimeoutParams, g: &AnalRebroGroup<'_>, secs: u64) -> AnalRebroVerdict {
    analysis_rebrokerage(p, g, at(secs))
}

/// `ANALY_TIMEOUT` 12 h: candidates activated more than 3 h ago (strict), reassigned once
/// `maxModificationTime ≤ now − 12 h` (the skip test is `>`, so exactly 12 h reassigns).
#[test]
fn analysis_rebro_12h() {
    let g = group();
    assert_eq!(rebro(&seed(), &g, H3), AnalRebroVerdict::NotCandidate { fires_after: Some(at(H3)) });
    let wait = AnalRebroSkip::WaitForTimeLimit { timeout_hours: 12.0, since: t(B) };
    assert_eq!(rebro(&seed(), &g, H3 + 1), AnalRebroVerdict::Skipped(wait));
    assert_eq!(rebro(&seed(), &g, H12 - 1), AnalRebroVerdict::Skipped(wait));
    let AnalRebroVerdict::Reassign { immediate, action } = rebro(&seed(), &g, H12) else { panic!("at 12 h") };
    assert!(!immediate);
    assert_eq!((action.kill_code(), action.error_code()), (Some(KillCode::ReassignedByJedi), 100));
    assert_eq!(action.diag(), "reassigned by JEDI");
    assert_eq!(wait.to_string(), format!("    -> skip wait for normal timelimit=now-12.0h<maxModTime={}", t(B)));
}

/// Offline/test PQs reassign at once; unknown PQs are skipped.
#[test]
fn analysis_rebro_site_status() {
    for site_status in [QueueStatus::Offline, QueueStatus::Test] {
        let g = AnalRebroGroup { site_status, ..group() };
        assert!(matches!(rebro(&seed(), &g, H3 + 1), AnalRebroVerdict::Reassign { immediate: true, .. }));
    }
    let g = AnalRebroGroup { site_known: false, ..group() };
    assert_eq!(rebro(&seed(), &g, H12 + 1), AnalRebroVerdict::Skipped(AnalRebroSkip::UnknownSite));
}

/// `ANALY_TIMEOUT_<workingGroup>` overrides; unset or 0 falls back to `ANALY_TIMEOUT`.
#[test]
fn analysis_rebro_working_group() {
    let mut p = seed();
    p.analy_timeout_by_group.insert("AP_Higgs".into(), 24.0);
    p.analy_timeout_by_group.insert("AP_Zero".into(), 0.0);
    let higgs = AnalRebroGroup { working_group: Some("AP_Higgs"), ..group() };
    assert!(matches!(rebro(&p, &higgs, H12), AnalRebroVerdict::Skipped(_)));
    assert!(matches!(rebro(&p, &higgs, 24 * 3600), AnalRebroVerdict::Reassign { .. }));
    for wg in ["AP_Zero", "AP_Other", ""] {
        let g = AnalRebroGroup { working_group: Some(wg), ..group() };
        assert!(matches!(rebro(&p, &g, H12), AnalRebroVerdict::Reassign { .. }), "{wg}");
    }
    p.analy_timeout = 6.0;
    assert!(matches!(rebro(&p, &group(), 6 * 3600), AnalRebroVerdict::Reassign { .. }));
}

/// A state change within 3 h (strict `>`) holds the group back; defined/assigned groups use
/// their newest `creationTime`.
#[test]
fn analysis_rebro_recent_activity_and_defined_groups() {
    let recent = AnalRebroGroup { last_state_change: Some(at(H12 - H3 + 1)), ..group() };
    assert_eq!(
        rebro(&seed(), &recent, H12),
        AnalRebroVerdict::Skipped(AnalRebroSkip::RecentActivity { at: at(H12 - H3 + 1) })
    );
    let old = AnalRebroGroup { last_state_change: Some(at(H12 - H3)), ..group() };
    assert!(matches!(rebro(&seed(), &old, H12), AnalRebroVerdict::Reassign { .. }));
    let defined = AnalRebroGroup { activated_at: None, defined_max_creation: Some(t(B)), ..group() };
    assert!(matches!(rebro(&seed(), &defined, H12), AnalRebroVerdict::Reassign { .. }));
    // The activated part is too young: the defined part decides.
    let both = AnalRebroGroup { activated_at: Some(at(H12)), defined_max_creation: Some(t(B)), ..group() };
    assert!(matches!(rebro(&seed(), &both, H12), AnalRebroVerdict::Reassign { .. }));
    let none = AnalRebroGroup { activated_at: None, ..group() };
    assert_eq!(rebro(&seed(), &none, H12), AnalRebroVerdict::NotCandidate { fires_after: None });
}
