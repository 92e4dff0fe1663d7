//! One link's processor sharing in virtual time (the formulas are in the module doc of
//! [`super`]): the finish tags, the exact catch-up to a time, the next report and its epoch.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use super::window::Windows;
use super::{Epoch, LinkEvent, LinkId, LinkSpec, Transfer, TransferId, TransferStatus};
use crate::engine::{SimDuration, SimTime};

/// A finish tag in the link's heap; the heap's top is the smallest `(f, id)`.
#[derive(Debug, Clone, Copy)]
struct Tag {
    f: f64,
    id: TransferId,
}

impl Ord for Tag {
    fn cmp(&self, o: &Self) -> Ordering {
        o.f.total_cmp(&self.f).then(o.id.cmp(&self.id))
    }
}
impl PartialOrd for Tag {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl PartialEq for Tag {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Tag {}

/// Run-time state of one link.
#[derive(Debug, Clone)]
pub(super) struct LinkState {
    pub(super) spec: LinkSpec,
    /// Bytes per ms of the whole link.
    pub(super) rate: f64,
    /// The latest `now` seen: time never goes back on a link.
    pub(super) clock: SimTime,
    /// Virtual clock V at exact time `t_v` (ms).
    v: f64,
    t_v: f64,
    /// Tags of the sending transfers (cancelled ones are dropped lazily).
    heap: BinaryHeap<Tag>,
    pub(super) sending: u32,
    pub(super) waiting: VecDeque<TransferId>,
    pub(super) n_waiting: u32,
    /// Transfers whose last byte left, by report time (cancelled ones dropped lazily).
    pub(super) delivering: VecDeque<(SimTime, TransferId)>,
    pub(super) n_delivering: u32,
    pub(super) last_report: SimTime,
    pub(super) epoch: Epoch,
    /// The time of the live event the world holds, if any.
    pub(super) pending: Option<SimTime>,
    pub(super) files_done: u64,
    pub(super) bytes_done: u64,
    pub(super) windows: Option<Box<Windows>>,
}

/// `⌈8000·B / bps⌉` ms: the transfer alone on the link, exactly.
fn alone_ms(bytes: u64, bps: u64) -> u64 {
    let bps = u128::from(bps.max(1));
    u64::try_from((u128::from(bytes) * 8000).div_ceil(bps)).unwrap_or(u64::MAX)
}

/// A non-negative float time in ms, rounded up (saturating; NaN → 0).
fn ceil_ms(t: f64) -> SimTime {
    SimTime::from_millis(t.ceil() as u64)
}

impl LinkState {
    /// An idle link.
    pub(super) fn new(spec: LinkSpec) -> Self {
        Self {
            rate: spec.bits_per_s as f64 / 8000.0,
            spec,
            clock: SimTime::ZERO,
            v: 0.0,
            t_v: 0.0,
            heap: BinaryHeap::new(),
            sending: 0,
            waiting: VecDeque::new(),
            n_waiting: 0,
            delivering: VecDeque::new(),
            n_delivering: 0,
            last_report: SimTime::ZERO,
            epoch: 0,
            pending: None,
            files_done: 0,
            bytes_done: 0,
            windows: None,
        }
    }

    pub(super) fn tick(&mut self, now: SimTime) -> SimTime {
        self.clock = self.clock.max(now);
        self.clock
    }

    /// Move V to exact time `t` at the current share.
    fn advance_v(&mut self, t: f64) {
        if t > self.t_v {
            if self.sending > 0 {
                self.v += (t - self.t_v) * self.rate / f64::from(self.sending);
            }
            self.t_v = t;
        }
    }

    /// The sending transfer that finishes first, with its exact finish time.
    fn head(&mut self, transfers: &[Transfer]) -> Option<(f64, Tag)> {
        while let Some(top) = self.heap.peek() {
            if transfers.get(top.id as usize).is_some_and(|t| t.sending && t.status == TransferStatus::Active) {
                break;
            }
            self.heap.pop();
        }
        let top = *self.heap.peek()?;
        let n = f64::from(self.sending.max(1));
        Some((self.t_v + (top.f - self.v).max(0.0) * n / self.rate, top))
    }

    /// When a transfer whose last byte leaves at exact time `t` is reported.
    fn report_time(&self, t: f64, not_before: SimTime) -> SimTime {
        (ceil_ms(t).max(not_before) + self.spec.latency).max(self.last_report)
    }

    /// Start waiting transfers at exact time `t` while a slot is free.
    pub(super) fn start_waiting(&mut self, t: f64, transfers: &mut [Transfer]) {
        while self.sending < self.spec.max_active {
            let Some(id) = self.waiting.pop_front() else { break };
            let Some(tr) = transfers.get_mut(id as usize) else { continue };
            if tr.status != TransferStatus::Waiting {
                continue; // cancelled while waiting
            }
            self.n_waiting -= 1;
            self.advance_v(t);
            tr.status = TransferStatus::Active;
            tr.sending = true;
            tr.started = Some(ceil_ms(t));
            tr.not_before = SimTime::from_millis(t.floor() as u64)
                + SimDuration::from_millis(alone_ms(tr.bytes, self.spec.bits_per_s));
            self.heap.push(Tag { f: self.v + tr.bytes as f64, id });
            self.sending += 1;
        }
    }

    /// Sending transfer `id` is cancelled at `now` (caught up): its share is freed at once and
    /// the first waiting transfer takes its slot.
    pub(super) fn cancel_sending(&mut self, now: SimTime, id: TransferId, transfers: &mut [Transfer]) {
        let now_f = now.as_millis() as f64;
        self.advance_v(now_f);
        if let Some(tr) = transfers.get_mut(id as usize) {
            tr.sending = false;
            tr.status = TransferStatus::Cancelled;
        }
        self.sending -= 1;
        if self.sending == 0 {
            self.v = 0.0;
            self.heap.clear();
        }
        self.start_waiting(now_f, transfers);
        self.catch_up(now, transfers); // a zero-byte transfer that took the slot
    }

    /// Process every last byte leaving at or before `now`, in order, starting waiting transfers
    /// at the exact times slots free up.
    pub(super) fn catch_up(&mut self, now: SimTime, transfers: &mut [Transfer]) {
        let now_f = now.as_millis() as f64;
        while let Some((t, tag)) = self.head(transfers) {
            if t > now_f {
                break;
            }
            self.heap.pop();
            self.v = self.v.max(tag.f);
            self.t_v = self.t_v.max(t);
            self.sending -= 1;
            let Some(tr) = transfers.get_mut(tag.id as usize) else { continue };
            tr.sending = false;
            let at = self.report_time(t, tr.not_before);
            self.last_report = at;
            self.delivering.push_back((at, tag.id));
            self.n_delivering += 1;
            if self.sending == 0 {
                self.v = 0.0;
                self.heap.clear();
            }
            self.start_waiting(t, transfers);
        }
    }

    /// The next report time (never before the link's clock).
    fn next_time(&mut self, transfers: &[Transfer]) -> Option<SimTime> {
        while let Some(&(_, id)) = self.delivering.front() {
            if transfers.get(id as usize).is_some_and(|t| t.status == TransferStatus::Active) {
                break;
            }
            self.delivering.pop_front();
        }
        let reported = self.delivering.front().map(|&(at, _)| at);
        let sending = self
            .head(transfers)
            .and_then(|(t, tag)| transfers.get(tag.id as usize).map(|tr| self.report_time(t, tr.not_before)));
        let next = match (reported, sending) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        next.map(|t| t.max(self.clock))
    }

    /// The event the world must now hold for this link, if it changed.
    pub(super) fn reschedule(&mut self, link: LinkId, transfers: &[Transfer]) -> Option<LinkEvent> {
        let next = self.next_time(transfers);
        if next == self.pending {
            return None;
        }
        self.epoch = self.epoch.wrapping_add(1);
        self.pending = next;
        next.map(|at| LinkEvent { link, epoch: self.epoch, at })
    }
}
