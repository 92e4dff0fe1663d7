//! The network on its own, driven by a minimal world that keeps every returned event (stale
//! ones included) in a time-ordered queue, as the simulation does.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use proptest::prelude::*;

use super::*;

fn link(from: &str, to: &str, mbps: f64, latency_ms: f64, max_active: Option<u32>) -> Link {
    Link {
        from: from.into(),
        to: to.into(),
        bandwidth_mbps: mbps,
        latency_ms,
        closeness: 3,
        queued_files: 0,
        max_active_transfers: max_active,
    }
}

/// A → B at `mbps`.
fn one(mbps: f64, latency_ms: f64, max_active: Option<u32>) -> World {
    World::new(Network::new(&["A", "B"], &[link("A", "B", mbps, latency_ms, max_active)]).unwrap())
}

const S: u64 = 1000; // ms per second
const GB: u64 = 1_000_000_000;

#[derive(Default)]
struct World {
    net: Network,
    queue: BinaryHeap<Reverse<(SimTime, u64, LinkId, Epoch)>>,
    seq: u64,
    done: Vec<Completion>,
    stale: usize,
}

impl World {
    fn new(net: Network) -> Self {
        Self { net, ..Self::default() }
    }
    fn schedule(&mut self, e: Option<LinkEvent>) {
        if let Some(e) = e {
            self.seq += 1;
            self.queue.push(Reverse((e.at, self.seq, e.link, e.epoch)));
        }
    }
    fn submit(&mut self, t_ms: u64, l: LinkId, bytes: u64) -> TransferId {
        let (id, e) = self.net.submit(SimTime::from_millis(t_ms), l, bytes).unwrap();
        self.schedule(e);
        id
    }
    fn cancel(&mut self, t_ms: u64, id: TransferId) -> Result<(), TransferError> {
        let e = self.net.cancel(SimTime::from_millis(t_ms), id)?;
        self.schedule(e);
        Ok(())
    }
    /// Process every event up to `t_ms`, in time order.
    fn run_until(&mut self, t_ms: u64) {
        while let Some(&Reverse((at, _, l, epoch))) = self.queue.peek() {
            if at.as_millis() > t_ms {
                break;
            }
            self.queue.pop();
            if !self.net.is_current(l, epoch) {
                self.stale += 1;
            }
            let e = self.net.advance(at, l, epoch, &mut self.done);
            self.schedule(e);
        }
    }
    fn run(&mut self) {
        self.run_until(u64::MAX);
    }
    /// `(transfer, done ms)` in report order.
    fn done_ms(&self) -> Vec<(TransferId, u64)> {
        self.done.iter().map(|c| (c.transfer, c.done.as_millis())).collect()
    }
}

#[test]
fn one_transfer_takes_bytes_over_bandwidth_plus_latency() {
    // 1 GB over 100 Mbps: 10⁹ · 8 / (100 · 10⁶) = 80 s, plus 50 ms of latency.
    let mut w = one(100.0, 50.0, None);
    let a = w.submit(0, 0, GB);
    w.run();
    assert_eq!(w.done_ms(), vec![(a, 80 * S + 50)]);
    let c = w.done[0];
    assert_eq!((c.bytes, c.submitted, c.started, c.link), (GB, SimTime::ZERO, SimTime::ZERO, 0));
    assert_eq!(w.net.transfer(a).unwrap().status, TransferStatus::Done);
    assert_eq!(w.net.transfer(a).unwrap().ended, Some(SimTime::from_millis(80_050)));
    assert_eq!(w.stale, 0);
    assert_eq!(w.net.check_invariants(), Vec::<String>::new());
}

#[test]
fn two_equal_transfers_started_together_both_take_twice_as_long() {
    let mut w = one(100.0, 0.0, None);
    let a = w.submit(0, 0, GB);
    let b = w.submit(0, 0, GB);
    w.run();
    // Each gets 50 Mbps: 160 s; equal finish tags complete in id order.
    assert_eq!(w.done_ms(), vec![(a, 160 * S), (b, 160 * S)]);
}

#[test]
fn a_second_transfer_starting_halfway() {
    // T = 80 s alone. At T/2 the first has 0.5 GB left; sharing, it needs 80 s more: 1.5 T.
    // The second then has received 0.5 GB and finishes its last 0.5 GB alone in 40 s: 2 T.
    let mut w = one(100.0, 0.0, None);
    let a = w.submit(0, 0, GB);
    w.run_until(40 * S);
    let b = w.submit(40 * S, 0, GB);
    w.run();
    assert_eq!(w.done_ms(), vec![(a, 120 * S), (b, 160 * S)]);
    assert_eq!(w.done[1].started, SimTime::from_secs(40));
}

#[test]
fn processor_sharing_of_unequal_transfers_is_work_conserving() {
    // 1, 2 and 3 GB at once on 100 Mbps (80 s per GB alone): the three share until the
    // smallest is done at 3 × 80 = 240 s, two share 1 GB more each until 400 s, the last
    // finishes alone at 480 s = 6 GB / 100 Mbps.
    let mut w = one(100.0, 0.0, None);
    let c = w.submit(0, 0, 3 * GB);
    let b = w.submit(0, 0, 2 * GB);
    let a = w.submit(0, 0, GB);
    w.run();
    assert_eq!(w.done_ms(), vec![(a, 240 * S), (b, 400 * S), (c, 480 * S)]);
}

#[test]
fn transfers_beyond_max_active_wait_in_fifo_order() {
    let mut w = one(100.0, 0.0, Some(1));
    let ids: Vec<_> = (0..3).map(|_| w.submit(0, 0, GB)).collect();
    w.run();
    assert_eq!(w.done_ms(), vec![(ids[0], 80 * S), (ids[1], 160 * S), (ids[2], 240 * S)]);
    let started: Vec<_> = w.done.iter().map(|c| c.started.as_millis()).collect();
    assert_eq!(started, vec![0, 80 * S, 160 * S]);
    // Two at a time: the first two share until 160 s, the third is then alone until 240 s.
    let mut w = one(100.0, 0.0, Some(2));
    let ids: Vec<_> = (0..3).map(|_| w.submit(0, 0, GB)).collect();
    w.run();
    assert_eq!(w.done_ms(), vec![(ids[0], 160 * S), (ids[1], 160 * S), (ids[2], 240 * S)]);
}

#[test]
fn waiting_and_active_files_are_queued_on_the_link_and_towards_the_destination() {
    // Background: 31 files, as AGLT2→BEIJING-LCG2's queued Functional Test files in the matrix.
    let mut lan = link("B", "B", 1000.0, 0.0, None);
    lan.queued_files = 4;
    let mut ab = link("A", "B", 100.0, 0.0, Some(1));
    ab.queued_files = 31;
    let mut w = World::new(Network::new(&["A", "B"], &[ab, lan]).unwrap());
    assert_eq!(w.net.queued_to(1), 35);
    for _ in 0..3 {
        w.submit(0, 0, GB);
    }
    let o = w.net.observe(0, SimTime::ZERO).unwrap();
    assert_eq!((o.queued_files, o.background_files, o.waiting_files, o.active_files), (34, 31, 2, 1));
    assert_eq!(w.net.queued_to(1), 38);
    assert_eq!(w.net.queued_to(0), 0);
    w.run_until(80 * S);
    assert_eq!(w.net.observe(0, SimTime::from_secs(80)).unwrap().queued_files, 33);
    w.run();
    let o = w.net.observe(0, SimTime::from_secs(240)).unwrap();
    assert_eq!((o.queued_files, o.files_done, o.bytes_done), (31, 3, 3 * GB));
    assert_eq!(w.net.queued_to(1), 35);
    assert_eq!(w.net.queued_to(9), 0, "an unknown site has nothing queued");
    assert_eq!(w.net.check_invariants(), Vec::<String>::new());
}

/// Two links into one site with 2⁶³ background files each: the total towards the site
/// saturates, in `new` and in `check_invariants` alike, instead of overflowing.
#[test]
fn huge_background_queues_saturate_towards_a_site() {
    let (mut ab, mut cb) = (link("A", "B", 10.0, 0.0, None), link("C", "B", 10.0, 0.0, None));
    ab.queued_files = 1 << 63;
    cb.queued_files = 1 << 63;
    let net = Network::new(&["A", "B", "C"], &[ab, cb]).unwrap();
    assert_eq!(net.queued_to(1), u64::MAX);
    assert_eq!(net.check_invariants(), Vec::<String>::new());
}

#[test]
fn a_stale_event_is_ignored_and_an_unchanged_one_is_not_reissued() {
    let mut net = Network::new(&["A", "B"], &[link("A", "B", 100.0, 0.0, None)]).unwrap();
    let (_, e1) = net.submit(SimTime::ZERO, 0, GB).unwrap();
    let e1 = e1.unwrap();
    assert_eq!(e1.at, SimTime::from_secs(80));
    // A second transfer slows the first down: a new event, the first is stale.
    let (_, e2) = net.submit(SimTime::ZERO, 0, GB).unwrap();
    let e2 = e2.unwrap();
    assert_eq!(e2.at, SimTime::from_secs(160));
    assert_ne!(e1.epoch, e2.epoch);
    assert!(!net.is_current(0, e1.epoch) && net.is_current(0, e2.epoch));
    let mut out = Vec::new();
    assert_eq!(net.advance(e1.at, 0, e1.epoch, &mut out), None);
    assert!(out.is_empty(), "the stale event reported nothing");
    assert_eq!(net.advance(e2.at, 0, e2.epoch, &mut out), None, "nothing left to do");
    assert_eq!(out.len(), 2);
    // The same event delivered twice does nothing the second time.
    assert_eq!(net.advance(e2.at, 0, e2.epoch, &mut out), None);
    assert_eq!(out.len(), 2);
    assert_eq!(net.advance(e2.at, 7, 0, &mut out), None, "unknown link");

    // A transfer that only queues does not move the next completion: no new event.
    let mut net = Network::new(&["A", "B"], &[link("A", "B", 100.0, 0.0, Some(1))]).unwrap();
    let (_, e) = net.submit(SimTime::ZERO, 0, GB).unwrap();
    let e = e.unwrap();
    assert_eq!(net.submit(SimTime::from_secs(10), 0, GB).unwrap().1, None);
    assert!(net.is_current(0, e.epoch));
}

#[test]
fn an_event_processed_late_reports_the_exact_done_times() {
    let mut net = Network::new(&["A", "B"], &[link("A", "B", 100.0, 0.0, Some(1))]).unwrap();
    let (a, e) = net.submit(SimTime::ZERO, 0, GB).unwrap();
    let (b, _) = net.submit(SimTime::ZERO, 0, GB).unwrap();
    let e = e.unwrap();
    let mut out = Vec::new();
    // Called at 200 s instead of 80 s: both are done, at 80 s and 160 s.
    let next = net.advance(SimTime::from_secs(200), 0, e.epoch, &mut out);
    assert_eq!(next, None);
    let got: Vec<_> = out.iter().map(|c| (c.transfer, c.started.as_millis(), c.done.as_millis())).collect();
    assert_eq!(got, vec![(a, 0, 80 * S), (b, 80 * S, 160 * S)]);
    // Time never goes back: a submission "at 50 s" is taken at the link's 200 s.
    let (c, _) = net.submit(SimTime::from_secs(50), 0, 0).unwrap();
    assert_eq!(net.transfer(c).unwrap().submitted, SimTime::from_secs(200));
}

#[test]
fn times_round_up_to_the_millisecond() {
    // 8 Mbps = 1000 bytes per ms: 1001 bytes take 1.001 ms → 2 ms; latency 0.4 ms → 1 ms.
    let mut w = one(8.0, 0.4, None);
    let a = w.submit(0, 0, 1001);
    w.run();
    assert_eq!(w.done_ms(), vec![(a, 3)]);
    // 1000 bytes take exactly 1 ms.
    let mut w = one(8.0, 0.0, None);
    let a = w.submit(5, 0, 1000);
    w.run();
    assert_eq!(w.done_ms(), vec![(a, 6)]);
}

#[test]
fn a_zero_byte_transfer_takes_the_latency_only() {
    let mut w = one(100.0, 15.0, None);
    let a = w.submit(5 * S, 0, 0);
    w.run();
    assert_eq!(w.done_ms(), vec![(a, 5 * S + 15)]);
    let mut w = one(100.0, 0.0, None);
    let a = w.submit(5 * S, 0, 0);
    w.run();
    assert_eq!(w.done_ms(), vec![(a, 5 * S)]);
    // It does not count in the throughput.
    assert_eq!(w.net.observe(0, SimTime::from_secs(5)).unwrap().mbps_1h, None);
}

#[test]
fn cancelling_a_transfer_frees_its_share() {
    // Two 1 GB transfers share 100 Mbps; at 40 s each has 0.25 GB. The second is cancelled:
    // the first sends its last 0.75 GB alone in 60 s, done at 100 s (1.25 T).
    let mut w = one(100.0, 0.0, None);
    let a = w.submit(0, 0, GB);
    let b = w.submit(0, 0, GB);
    w.run_until(40 * S);
    w.cancel(40 * S, b).unwrap();
    w.run();
    assert_eq!(w.done_ms(), vec![(a, 100 * S)]);
    // The first submission's event (80 s) and the pair's (160 s) became stale.
    assert_eq!(w.stale, 2);
    let tb = w.net.transfer(b).unwrap();
    assert_eq!((tb.status, tb.ended), (TransferStatus::Cancelled, Some(SimTime::from_secs(40))));
    assert_eq!(w.cancel(100 * S, b), Err(TransferError::Finished { transfer: b, status: TransferStatus::Cancelled }));
    assert_eq!(w.cancel(100 * S, a), Err(TransferError::Finished { transfer: a, status: TransferStatus::Done }));
    assert_eq!(w.cancel(100 * S, 99), Err(TransferError::UnknownTransfer(99)));
    let o = w.net.observe(0, SimTime::from_secs(100)).unwrap();
    assert_eq!((o.bytes_done, o.files_done, o.queued_files), (GB, 1, 0));
    assert_eq!(w.net.check_invariants(), Vec::<String>::new());
}

#[test]
fn cancelling_a_waiting_transfer_lets_the_next_one_through() {
    let mut w = one(100.0, 0.0, Some(1));
    let a = w.submit(0, 0, GB);
    let b = w.submit(0, 0, GB);
    let c = w.submit(0, 0, GB);
    w.cancel(10 * S, b).unwrap();
    w.run();
    assert_eq!(w.done_ms(), vec![(a, 80 * S), (c, 160 * S)]);
    // Cancelling the only active transfer of a link with waiting ones starts the next at once.
    let mut w = one(100.0, 0.0, Some(1));
    let a = w.submit(0, 0, GB);
    let b = w.submit(0, 0, GB);
    w.cancel(20 * S, a).unwrap();
    w.run();
    assert_eq!(w.done_ms(), vec![(b, 100 * S)]);
    assert_eq!(w.done[0].started, SimTime::from_secs(20));
}

#[test]
fn a_transfer_cancelled_during_its_latency_is_not_done() {
    let mut w = one(8.0, 100.0, None);
    let a = w.submit(0, 0, 10_000); // last byte leaves at 10 ms, arrives at 110 ms
    w.run_until(50);
    w.cancel(50, a).unwrap();
    w.run();
    assert!(w.done.is_empty());
    assert_eq!(w.net.observe(0, SimTime::from_millis(200)).unwrap().queued_files, 0);
    assert_eq!(w.net.check_invariants(), Vec::<String>::new());
}

#[test]
fn throughput_windows_average_the_bytes_done_over_1h_1d_1w() {
    // 45 GB over 1000 Mbps: 360 s. In the last hour: 45·10⁹ · 8 / 3600 / 10⁶ = 100 Mbps.
    let mut w = one(1000.0, 0.0, None);
    w.submit(0, 0, 45 * GB);
    w.run();
    assert_eq!(w.done_ms()[0].1, 360 * S);
    let at = |s: u64| w.net.observe(0, SimTime::from_secs(s)).unwrap();
    let o = at(3600);
    assert_eq!(o.mbps_1h, Some(100.0));
    let close = |x: Option<f64>, y: f64| x.is_some_and(|x| (x - y).abs() < 1e-12);
    assert!(close(o.mbps_1d, 45e9 * 8.0 / 86_400.0 / 1e6), "{:?}", o.mbps_1d); // 4.1667
    assert!(close(o.mbps_1w, 45e9 * 8.0 / 604_800.0 / 1e6), "{:?}", o.mbps_1w); // 0.5952
    // The hour window is 12 buckets of 5 min: at 3900 s it no longer holds the 300-600 s bucket.
    assert_eq!(at(3899).mbps_1h, Some(100.0));
    assert_eq!(at(3900).mbps_1h, None);
    assert!(close(at(3900).mbps_1d, 45e9 * 8.0 / 86_400.0 / 1e6));
    // The day window (24 × 1 h) drops hour 0 at 24 h, the week (7 × 1 d) drops day 0 at 7 d.
    assert!(at(86_399).mbps_1d.is_some());
    assert_eq!(at(86_400).mbps_1d, None);
    assert!(at(604_799).mbps_1w.is_some());
    assert_eq!(at(604_800).mbps_1w, None);
    // An idle link reports no throughput.
    let idle = Network::new(&["A", "B"], &[link("A", "B", 10.0, 0.0, None)]).unwrap();
    let o = idle.observe(0, SimTime::ZERO).unwrap();
    assert_eq!((o.mbps_1h, o.mbps_1d, o.mbps_1w, o.closeness, o.bandwidth_mbps), (None, None, None, 3, 10.0));
    assert_eq!(idle.observe(1, SimTime::ZERO), None);
}

#[test]
fn the_windows_add_transfers_of_different_buckets() {
    // 4.5 GB at 1000 Mbps: 36 s each; one done at 36 s, one at 1836 s (another bucket).
    let mut w = one(1000.0, 0.0, None);
    w.submit(0, 0, 4_500_000_000);
    w.run();
    w.submit(1800 * S, 0, 4_500_000_000);
    w.run();
    assert_eq!(w.done_ms().iter().map(|d| d.1).collect::<Vec<_>>(), vec![36 * S, 1836 * S]);
    let o = w.net.observe(0, SimTime::from_secs(3000)).unwrap();
    assert_eq!(o.mbps_1h, Some(20.0)); // 9·10⁹ · 8 / 3600 / 10⁶
    let o = w.net.observe(0, SimTime::from_secs(3900)).unwrap();
    assert_eq!(o.mbps_1h, Some(10.0), "the first one left the hour window");
}

#[test]
fn links_are_found_by_their_sites_and_the_lan_is_a_link() {
    let net = Network::new(
        &["A", "B", "C"],
        &[link("A", "B", 10.0, 0.0, None), link("C", "C", 10.0, 0.0, None), link("B", "A", 10.0, 0.0, Some(7))],
    )
    .unwrap();
    assert_eq!((net.link(0, 1), net.link(1, 0), net.link(2, 2), net.link(0, 2)), (Some(0), Some(2), Some(1), None));
    assert_eq!(net.spec(0).unwrap().max_active, DEFAULT_MAX_ACTIVE);
    assert_eq!(net.spec(2).unwrap().max_active, 7);
    assert_eq!(net.spec(0).unwrap().bits_per_s, 10_000_000);
    assert_eq!(net.link_count(), 3);
}

#[test]
fn bad_links_are_refused_when_the_network_is_built() {
    let new = |l: Link| Network::new(&["A", "B"], &[l]).map(|_| ());
    for mbps in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e-7] {
        assert!(matches!(new(link("A", "B", mbps, 0.0, None)), Err(NetworkError::Bandwidth { link: 0, .. })), "{mbps}");
    }
    assert_eq!(new(link("A", "B", 1e-6, 0.0, None)), Ok(()), "1 bit/s is slow but finite");
    for ms in [-1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(new(link("A", "B", 1.0, ms, None)), Err(NetworkError::Latency { link: 0, .. })));
    }
    assert_eq!(new(link("A", "B", 1.0, 0.0, Some(0))), Err(NetworkError::MaxActive { link: 0 }));
    assert_eq!(
        new(link("A", "X", 1.0, 0.0, None)),
        Err(NetworkError::UnknownSite { link: 0, field: "to", name: "X".into() })
    );
    let mut far = link("A", "B", 1.0, 0.0, None);
    far.closeness = 12;
    assert_eq!(new(far), Err(NetworkError::Closeness { link: 0, closeness: 12 }));
    let l = link("A", "B", 1.0, 0.0, None);
    assert_eq!(
        Network::new(&["A", "B"], &[l.clone(), link("B", "A", 1.0, 0.0, None), l]).map(|_| ()),
        Err(NetworkError::DuplicateLink { link: 2, first: 0, from: "A".into(), to: "B".into() })
    );
    assert_eq!(Network::new(&["A", "A"], &[]).map(|_| ()), Err(NetworkError::DuplicateSite { name: "A".into() }));
    assert_eq!(
        NetworkError::Bandwidth { link: 3, mbps: 0.0 }.to_string(),
        "network[3].bandwidth_mbps: must be at least 1e-6 Mbps (1 bit/s) and finite, got 0"
    );
    // A transfer on a link that does not exist.
    let mut net = Network::new(&["A", "B"], &[]).unwrap();
    assert_eq!(net.submit(SimTime::ZERO, 0, 1), Err(TransferError::UnknownLink(0)));
}

#[test]
fn the_scenario_format_of_a_link() {
    let l: Link =
        ron::from_str(r#"(from: "A", to: "B", bandwidth_mbps: 10000, latency_ms: 15, closeness: 1)"#).unwrap();
    assert_eq!((l.max_active_transfers, l.queued_files), (None, 0));
    // Scenario files are read with RON's implicit `Some`.
    let ron = ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
    let l: Link =
        ron.from_str(r#"(from: "A", to: "B", bandwidth_mbps: 10, max_active_transfers: 5, queued_files: 31)"#).unwrap();
    assert_eq!((l.max_active_transfers, l.queued_files), (Some(5), 31));
}

/// One step of a random sequence.
#[derive(Debug, Clone)]
enum Op {
    Submit {
        link: u8,
        bytes: u64,
    },
    Cancel {
        pick: u16,
    },
    /// An `advance` with a made-up epoch, as a world with a bug might call it.
    Poke {
        link: u8,
        epoch: u16,
    },
}

fn op() -> impl Strategy<Value = (u64, Op)> {
    let submit = (0u8..3, prop_oneof![Just(0u64), 1u64..5000, 1u64..50_000_000])
        .prop_map(|(link, bytes)| Op::Submit { link, bytes });
    let cancel = any::<u16>().prop_map(|pick| Op::Cancel { pick });
    let poke = (0u8..4, any::<u16>()).prop_map(|(link, epoch)| Op::Poke { link, epoch });
    (0u64..20_000, prop_oneof![6 => submit, 2 => cancel, 1 => poke])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_submit_advance_cancel_sequences_conserve_bytes(
        specs in proptest::collection::vec((1u32..2000, 0u32..60, 1u32..5), 3),
        ops in proptest::collection::vec(op(), 1..60),
    ) {
        let links: Vec<Link> = specs.iter().enumerate().map(|(i, &(mbps, lat, max))| {
            let to = ["B", "C", "A"][i];
            link("A", to, f64::from(mbps), f64::from(lat), Some(max))
        }).collect();
        let mut w = World::new(Network::new(&["A", "B", "C"], &links).unwrap());
        let mut t = 0u64;
        let mut cancelled = Vec::new();
        for (dt, op) in ops {
            t += dt;
            w.run_until(t);
            match op {
                Op::Submit { link, bytes } => { w.submit(t, LinkId::from(link), bytes); }
                Op::Cancel { pick } => {
                    let n = w.net.transfer_count();
                    if n > 0 {
                        let id = TransferId::from(pick) % n as TransferId;
                        if w.cancel(t, id).is_ok() { cancelled.push(id); }
                    }
                }
                Op::Poke { link, epoch } => {
                    let e = w.net.advance(SimTime::from_millis(t), LinkId::from(link), epoch, &mut w.done);
                    w.schedule(e);
                }
            }
            prop_assert_eq!(w.net.check_invariants(), Vec::<String>::new());
        }
        w.run();
        prop_assert!(w.queue.is_empty());
        let n = w.net.transfer_count();
        let mut seen = vec![0u32; n];
        let mut bytes_per_link = [0u64; 3];
        for c in &w.done {
            seen[c.transfer as usize] += 1;
            let tr = w.net.transfer(c.transfer).unwrap();
            let (bps, lat) = (specs[c.link as usize].0 as u64 * 1_000_000, specs[c.link as usize].1 as u64);
            // Never before the transfer alone on the link: ⌈8000·B / bps⌉ ms + latency.
            let bound = tr.submitted.as_millis() + (c.bytes * 8000).div_ceil(bps) + lat;
            prop_assert!(c.done.as_millis() >= bound, "{:?} done before {}", c, bound);
            prop_assert!(c.started >= c.submitted && c.done >= c.started);
            prop_assert_eq!(tr.status, TransferStatus::Done);
            bytes_per_link[c.link as usize] += c.bytes;
        }
        for (id, &k) in seen.iter().enumerate() {
            let was_cancelled = cancelled.contains(&(id as TransferId));
            prop_assert_eq!(k, u32::from(!was_cancelled), "transfer {} reported {} times", id, k);
        }
        for (l, &b) in bytes_per_link.iter().enumerate() {
            let o = w.net.observe(l as LinkId, SimTime::from_millis(t)).unwrap();
            prop_assert_eq!(o.bytes_done, b);
            prop_assert_eq!(o.queued_files, 0);
        }
        // Reports of a link come in time order.
        for l in 0..3 {
            let times: Vec<_> = w.done.iter().filter(|c| c.link == l).map(|c| c.done).collect();
            prop_assert!(times.windows(2).all(|p| p[0] <= p[1]));
        }
        prop_assert_eq!(w.net.check_invariants(), Vec::<String>::new());
    }

    #[test]
    fn building_any_links_never_panics(
        raw in proptest::collection::vec(
            (0usize..4, 0usize..4, any::<f64>(), any::<f64>(), any::<u8>(), any::<Option<u32>>(), any::<u64>()), 0..6),
        bytes in any::<u64>(),
    ) {
        let names = ["A", "B", "C", "X"];
        let links: Vec<Link> = raw.iter().map(|&(f, t, mbps, lat, closeness, max, queued)| Link {
            from: names[f].into(), to: names[t].into(), bandwidth_mbps: mbps, latency_ms: lat, closeness,
            queued_files: queued, max_active_transfers: max,
        }).collect();
        if let Ok(net) = Network::new(&names[..3], &links) {
            let mut w = World::new(net);
            for l in 0..w.net.link_count() {
                w.submit(0, l as LinkId, bytes);
                w.submit(1, l as LinkId, bytes / 3);
            }
            w.run_until(1_000_000);
            prop_assert_eq!(w.net.check_invariants(), Vec::<String>::new());
        }
    }
}

#[test]
fn per_link_and_per_transfer_state_stay_small() {
    // 15 377 links of the real matrix: under 4 MB before any window is allocated.
    assert!(std::mem::size_of::<LinkState>() <= 256, "{}", std::mem::size_of::<LinkState>());
    assert!(std::mem::size_of::<Transfer>() <= 64, "{}", std::mem::size_of::<Transfer>());
    assert_eq!(std::mem::size_of::<window::Windows>(), 43 * 8 + 3 * 8);
}

#[test]
fn the_same_calls_give_the_same_reports() {
    let run = || {
        let mut w = World::new(
            Network::new(&["A", "B"], &[link("A", "B", 333.0, 7.0, Some(3)), link("B", "A", 77.0, 1.0, None)]).unwrap(),
        );
        for i in 0..40u64 {
            w.submit(i * 997, (i % 2) as LinkId, 1_000_003 * (i % 7 + 1));
            if i % 5 == 4 {
                let _ = w.cancel(i * 997, (i / 2) as TransferId);
            }
            w.run_until(i * 997);
        }
        w.run();
        w.done
    };
    let a = run();
    assert_eq!(a, run());
    assert!(a.len() > 30);
}
