//! The activity windows against exact counts of the events' times.

use super::Activity;
use crate::engine::SimTime;
use crate::wms::panda::view::anal_cycle::site_to_running_window;

/// Start times 20 s to 420 s apart (a fixed pseudo-random walk) over about a day, so that
/// every minute of the 10-minute round comes up, with and without starts in the current bucket.
fn start_times() -> Vec<u64> {
    let mut t = 0u64;
    (0..400u64)
        .map(|k| {
            t += 20_000 + (k * 7_919 % 401) * 1_000;
            t
        })
        .collect()
}

/// `getSiteToRunRateStats`' count: start times in `[lo, hi)` of the window at `now`.
fn exact(starts: &[u64], now: SimTime) -> u64 {
    let (lo, hi, _) = site_to_running_window(now);
    starts.iter().filter(|&&s| s >= lo.as_millis() && s < hi.as_millis()).count() as u64
}

#[test]
fn rate_window_counts_exactly_the_start_times_of_the_divisors_window() {
    let times = start_times();
    let mut a = Activity::new(2);
    let mut seen = Vec::new();
    let (mut checked, mut wrong) = (0, Vec::new());
    for (k, &t) in times.iter().enumerate() {
        a.add(0, SimTime::from_millis(t));
        seen.push(t);
        // At the start itself and halfway to the next one.
        let next = times.get(k + 1).copied().unwrap_or(t + 600_000);
        for now in [t, t + (next - t) / 2] {
            let now = SimTime::from_millis(now);
            let (want, got) = (exact(&seen, now), a.rate_window(0, now));
            checked += 1;
            if got != want {
                wrong.push((now.as_millis(), want, got));
            }
            assert_eq!(a.rate_window(1, now), 0, "a PQ without starts");
        }
    }
    assert_eq!(checked, 800);
    assert!(
        wrong.is_empty(),
        "{} of {checked} counts differ (ms, exact, counted): {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(5)]
    );
}

/// One start per minute for 8 h: at 08:04 the window is [02:00, 07:50) (35 buckets, 5.83 h) and
/// holds 350 starts; at 08:06 it is [02:00, 08:00) (36 buckets, 6 h) and holds 360, although the
/// bucket 08:00 has starts too.
#[test]
fn rate_window_at_both_halves_of_the_ten_minutes() {
    let mut a = Activity::new(1);
    let min = 60_000u64;
    for m in 0..=486 {
        a.add(0, SimTime::from_millis(m * min));
    }
    let at = |h: u64, m: u64| SimTime::from_millis((h * 60 + m) * min);
    assert_eq!(site_to_running_window(at(8, 4)).2, 35.0 / 6.0);
    assert_eq!(a.rate_window(0, at(8, 4)), 350);
    assert_eq!(site_to_running_window(at(8, 6)).2, 6.0);
    assert_eq!(a.rate_window(0, at(8, 6)), 360);
}

/// `last_hours` keeps counting the current bucket and the ones before it.
#[test]
fn last_hours_counts_the_current_bucket() {
    let mut a = Activity::new(1);
    for m in 0..=200u64 {
        a.add(0, SimTime::from_millis(m * 60_000));
    }
    // At 03:20: buckets 01:30 … 03:20, 18 of them, the last with one start (03:20).
    assert_eq!(a.last_hours(0, SimTime::from_millis(200 * 60_000), 3), 171);
}
