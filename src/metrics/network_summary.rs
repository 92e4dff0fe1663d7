//! The `network` section of `summary.json`: what the simulation's own transfers did to the
//! grid's links: how many files were moved, how long a file took from
//! submission to arrival, and how deep each link's queue got.
//!
//! "Queued" counts a file from its submission until it is done or cancelled, as FTS and Rucio
//! do and as PanDA's brokerage reads a link (`grid::network` module doc); the constant background
//! backlog of a link (the scenario's `queued_files`) is not in these figures, which describe the
//! simulated transfers only. The section is absent when the run made no transfer (every DIRAC
//! scenario), so summaries of runs without data movement do not change.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::summary::WaitStats;
use crate::engine::SimTime;
use crate::grid::network::{Network, TransferStatus};

/// Transfer times, s: from submission to the last byte's arrival, of the transfers that arrived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DurationStats {
    /// n, mean, p50, p95.
    #[serde(flatten)]
    pub stats: WaitStats,
    pub max: Option<f64>,
}

/// One link's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkSummary {
    /// Transfers submitted on the link.
    pub transfers: u64,
    /// Transfers that arrived.
    pub done: u64,
    /// Gigabytes (10⁹ bytes) that arrived.
    pub gbytes_done: f64,
    /// The most files queued at once (waiting or in transfer).
    pub queued_files_peak: u64,
    /// Files queued, averaged over the whole run.
    pub queued_files_mean: f64,
    /// Files still queued at the end.
    pub queued_files_at_end: u64,
    /// Transfer times on this link.
    pub transfer_time_s: DurationStats,
}

/// The whole `network` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetworkSummary {
    /// Transfers submitted, arrived and cancelled (a cancelled transfer's job was killed).
    pub transfers: u64,
    pub done: u64,
    pub cancelled: u64,
    /// Transfer times over every link.
    pub transfer_time_s: DurationStats,
    /// The deepest queue of any link: the largest `queued_files_peak` (what `NQUEUED_SAT_CAP`
    /// is compared with, minus the background).
    pub queued_files_peak: u64,
    /// Per link, keyed `FROM:TO` by site name as in the ATLAS network matrix (`AGLT2:BNL`);
    /// links without transfers are left out.
    pub links: BTreeMap<String, LinkSummary>,
}

fn durations(v: Vec<f64>) -> DurationStats {
    let max = v.iter().copied().reduce(f64::max);
    DurationStats { stats: WaitStats::of(v), max }
}

/// Peak, time average over `[0, end]` and final value of a count that steps by `changes`
/// (time, +1/−1). Changes at the same instant are applied together, so a file that leaves as
/// another arrives does not count twice.
fn queue_profile(mut changes: Vec<(SimTime, i64)>, end: SimTime) -> (u64, f64, u64) {
    changes.sort_by_key(|&(t, d)| (t, d));
    let (mut level, mut peak, mut area, mut last) = (0i64, 0i64, 0.0f64, SimTime::ZERO);
    let mut i = 0;
    while i < changes.len() {
        let at = changes[i].0;
        let t = at.min(end);
        area += level as f64 * (t - last).as_secs_f64();
        last = t;
        while i < changes.len() && changes[i].0 == at {
            level += changes[i].1;
            i += 1;
        }
        peak = peak.max(level);
    }
    area += level as f64 * (end - last).as_secs_f64();
    let span = end.as_secs_f64();
    let mean = if span > 0.0 { area / span } else { 0.0 };
    (peak.max(0) as u64, mean, level.max(0) as u64)
}

/// One link's transfers as they are collected.
#[derive(Default)]
struct Acc {
    /// Queue changes: (time, +1 submitted / −1 ended).
    changes: Vec<(SimTime, i64)>,
    /// Transfer times of the transfers that arrived, s.
    times: Vec<f64>,
    transfers: u64,
    bytes_done: u64,
}

/// The section for `net` at the end of a run, or `None` if no transfer was made. `site_names`
/// are the scenario's sites in order (a link's `from`/`to` index them).
pub fn build(net: &Network, site_names: &[&str], end: SimTime) -> Option<NetworkSummary> {
    if net.transfer_count() == 0 {
        return None;
    }
    let mut per_link: BTreeMap<u32, Acc> = BTreeMap::new();
    let (mut cancelled, mut all_times) = (0u64, Vec::new());
    for t in (0..net.transfer_count()).filter_map(|t| net.transfer(t as u32)) {
        let a = per_link.entry(t.link).or_default();
        a.changes.push((t.submitted, 1));
        a.transfers += 1;
        if let Some(end_t) = t.ended {
            a.changes.push((end_t, -1));
        }
        match t.status {
            TransferStatus::Done => {
                let d = t.ended.map_or(0.0, |x| (x - t.submitted).as_secs_f64());
                a.times.push(d);
                all_times.push(d);
                a.bytes_done += t.bytes;
            }
            TransferStatus::Cancelled => cancelled += 1,
            TransferStatus::Waiting | TransferStatus::Active => {}
        }
    }
    let name = |l: u32| match net.spec(l) {
        Some(s) => {
            let site = |i: u32| site_names.get(i as usize).copied().unwrap_or("?");
            format!("{}:{}", site(s.from), site(s.to))
        }
        None => format!("link {l}"),
    };
    let mut links = BTreeMap::new();
    for (l, a) in per_link {
        let (peak, mean, at_end) = queue_profile(a.changes, end);
        links.insert(
            name(l),
            LinkSummary {
                transfers: a.transfers,
                done: a.times.len() as u64,
                gbytes_done: a.bytes_done as f64 / 1e9,
                queued_files_peak: peak,
                queued_files_mean: mean,
                queued_files_at_end: at_end,
                transfer_time_s: durations(a.times),
            },
        );
    }
    let done = all_times.len() as u64;
    Some(NetworkSummary {
        transfers: net.transfer_count() as u64,
        done,
        cancelled,
        transfer_time_s: durations(all_times),
        queued_files_peak: links.values().map(|l| l.queued_files_peak).max().unwrap_or(0),
        links,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: f64) -> SimTime {
        SimTime::from_millis((x * 1e3) as u64)
    }

    #[test]
    fn queue_profile_peak_mean_and_end() {
        // 0–10 s: 1 file, 10–20 s: 2, 20–30 s: 1, then 0 until 40 s; one more queued at 40 s.
        let changes = vec![(s(0.0), 1), (s(10.0), 1), (s(20.0), -1), (s(30.0), -1), (s(40.0), 1)];
        let (peak, mean, at_end) = queue_profile(changes, s(50.0));
        assert_eq!(peak, 2);
        assert!((mean - (10.0 + 20.0 + 10.0 + 10.0) / 50.0).abs() < 1e-12, "{mean}");
        assert_eq!(at_end, 1);
    }

    #[test]
    fn simultaneous_arrival_and_departure_do_not_raise_the_peak() {
        let changes = vec![(s(0.0), 1), (s(5.0), 1), (s(5.0), -1), (s(10.0), -1)];
        let (peak, mean, at_end) = queue_profile(changes, s(10.0));
        assert_eq!(peak, 1);
        assert!((mean - 1.0).abs() < 1e-12);
        assert_eq!(at_end, 0);
    }

    #[test]
    fn durations_of_nothing_are_null() {
        let d = durations(Vec::new());
        assert_eq!((d.stats.n, d.stats.mean, d.stats.p50, d.stats.p95, d.max), (0, None, None, None, None));
        let d = durations(vec![30.0, 10.0, 20.0]);
        assert_eq!((d.stats.n, d.stats.mean, d.stats.p50, d.max), (3, Some(20.0), Some(20.0), Some(30.0)));
    }
}
