//! Data on the network: file transfers over the scenario's links, as a state machine like the
//! CE's ([`super::ce`]): engine-agnostic, methods take `now` and return the event to schedule.
//!
//! # Model
//!
//! A link ([`super::config::Link`]) is directed; a link from a site to itself is its LAN. It
//! runs at most `max_active` transfers at once (FTS's active limit, default
//! [`DEFAULT_MAX_ACTIVE`]); later ones wait in a FIFO queue. The active transfers share the
//! bandwidth equally (processor sharing, FTS's parallel files over one pipe):
//!
//! ```text
//! rate r = bandwidth_mbps · 10⁶ / 8 / 1000 bytes per ms   (bandwidth kept as whole bit/s)
//! virtual clock V(t): dV/dt = r / n(t), n(t) = active transfers         (V reset to 0 when idle)
//! a transfer of B bytes activated at t₀ gets the finish tag F = V(t₀) + B
//! the next to finish is the active transfer of smallest (F, TransferId), at
//!     t* = t_V + (F − V) · n / r                                       (exact, in f64 ms)
//! it is done (reported) at  max(⌈t*⌉, ⌊t₀⌋ + ⌈8000·B / bps⌉) + ⌈latency_ms⌉,
//!     and never before the link's previous report (reports of a link are in time order)
//! ```
//!
//! Virtual time (GPS) makes each event O(log n): shares change only when a transfer starts,
//! finishes or is cancelled, and none of the others' tags change then. The share is freed at the
//! exact `t*` (a waiting transfer starts then), the latency is added once, at the end: the last
//! byte still travels one latency to the destination. The second term of the `max` is the
//! transfer alone on the link, computed exactly in integers: it only absorbs float rounding, so
//! no transfer is ever reported before `B/r`. A zero-byte transfer that finds a free slot is done
//! after the latency only. A link of no bandwidth is refused when the network is built. Time never
//! goes back on a link: a call with an earlier `now` than the link has seen is taken at that time.
//!
//! **Background backlog.** A link's `queued_files` from the scenario is a constant: the files the
//! rest of the grid keeps queued on it (other experiments and activities, as in the matrix
//! snapshot `site_conn_info.json`). It is added to the link's and its destination's queued files
//! for the whole run and takes none of the bandwidth, which is what our transfers share.
//!
//! # The world's side: one pending event per link
//!
//! [`Network::submit`], [`Network::cancel`] and [`Network::advance`] return
//! `Some(`[`LinkEvent`]`)` when the link's next completion time changed: the world schedules it
//! at `at`, and every event it had for that link becomes stale. On a link event the world calls
//! `advance(at, link, epoch, &mut out)`, which ignores a stale epoch. Correctness never depends on
//! the epoch (an extra `advance` only catches up and reports what is due), so the 16-bit epoch
//! may wrap; it spares the world's work and keeps one live event per link.
//!
//! # Observations: the model's Network Weather Service
//!
//! [`Network::observe`] gives one link's numbers as the network matrix carries them (and as
//! brokerage's link metrics read them): files queued = background + waiting + active (FTS and
//! Rucio count a file as queued from submission until it is done), throughput over the last
//! 1 h / 1 d / 1 w in Mbps from the bytes completed (`None` when nothing completed in the window;
//! buckets of 5 min / 1 h / 1 d, module `window`), closeness. [`Network::queued_to`] is the total queued towards a site over all
//! its incoming links, the LAN included (the matrix rows with that destination).
//!
//! Determinism: no hashing; ties between transfers are broken by [`TransferId`]; a link's state
//! is a function of its calls. Memory: at most 256 bytes per link (a link never used allocates
//! nothing), plus 344 for the windows of a link that carried data; 64 bytes per transfer ever
//! submitted.

mod link;
mod window;

use super::config::{Link, Site};
use crate::engine::{SimDuration, SimTime};
use crate::ids::SiteId;
use link::LinkState;
use window::Windows;

/// A link: its index in the scenario's `network` list.
pub type LinkId = u32;
/// A transfer: 0, 1, 2… in submission order over every link.
pub type TransferId = u32;
/// The version of a link's pending event (wraps; see the module doc).
pub type Epoch = u16;

/// FTS3's `DEFAULT_MAX_ACTIVE_PER_LINK` (cern-fts/fts3 `OptimizerConstants.h`): the optimizer's
/// ceiling of active transfers on a link with no configured limit. The optimizer moves between 2
/// (10 on a LAN) and this; the model runs at the ceiling, since its bandwidth is already the
/// throughput the link achieves.
pub const DEFAULT_MAX_ACTIVE: u32 = 60;

/// Why the scenario's links cannot be built (the path is the scenario's `network[i]`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NetworkError {
    #[error("network[{link}].{field}: unknown site {name:?}")]
    UnknownSite { link: usize, field: &'static str, name: String },
    #[error("network[{link}].bandwidth_mbps: must be at least 1e-6 Mbps (1 bit/s) and finite, got {mbps}")]
    Bandwidth { link: usize, mbps: f64 },
    #[error("network[{link}].latency_ms: must be a finite number ≥ 0, got {ms}")]
    Latency { link: usize, ms: f64 },
    #[error("network[{link}].max_active_transfers: must be at least 1")]
    MaxActive { link: usize },
    #[error("network[{link}].closeness: must be 0..=11, got {closeness}")]
    Closeness { link: usize, closeness: u8 },
    #[error("network[{link}]: a second link from {from:?} to {to:?} (the first is network[{first}])")]
    DuplicateLink { link: usize, first: usize, from: String, to: String },
    #[error("site {name:?} is listed twice")]
    DuplicateSite { name: String },
    #[error("more than {} links", LinkId::MAX)]
    TooManyLinks,
}

/// Why a transfer call did nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TransferError {
    #[error("no link {0}")]
    UnknownLink(LinkId),
    #[error("the scenario has no link from site {from} to site {to}")]
    NoRoute { from: SiteId, to: SiteId },
    #[error("no transfer {0}")]
    UnknownTransfer(TransferId),
    #[error("transfer {transfer} is already {}", status.as_str())]
    Finished { transfer: TransferId, status: TransferStatus },
    #[error("the network has run out of transfer ids")]
    TooManyTransfers,
}

/// Where a transfer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransferStatus {
    /// In the link's FIFO queue (the link had `max_active` transfers).
    Waiting,
    /// Sending: holds a share of the bandwidth, or its last bytes travel the latency.
    Active,
    /// Every byte arrived.
    Done,
    /// Cancelled before it was done (its job was killed).
    Cancelled,
}

impl TransferStatus {
    /// A name for logs.
    pub fn as_str(self) -> &'static str {
        match self {
            TransferStatus::Waiting => "Waiting",
            TransferStatus::Active => "Active",
            TransferStatus::Done => "Done",
            TransferStatus::Cancelled => "Cancelled",
        }
    }
}

/// One transfer.
#[derive(Debug, Clone, PartialEq)]
pub struct Transfer {
    pub link: LinkId,
    pub bytes: u64,
    pub status: TransferStatus,
    pub submitted: SimTime,
    /// When it took a share of the link (rounded up to the ms).
    pub started: Option<SimTime>,
    /// When it was done or cancelled.
    pub ended: Option<SimTime>,
    /// Still sending (false once its last byte left: the latency remains).
    sending: bool,
    /// The earliest report: activation (rounded down) + the transfer alone on the link.
    not_before: SimTime,
}

/// A transfer that is done, as [`Network::advance`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub transfer: TransferId,
    pub link: LinkId,
    pub bytes: u64,
    pub submitted: SimTime,
    pub started: SimTime,
    /// When its last byte arrived (at or before the `now` of the `advance` that reports it).
    pub done: SimTime,
}

/// What the world schedules: `advance(at, link, epoch, …)` at time `at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkEvent {
    pub link: LinkId,
    pub epoch: Epoch,
    pub at: SimTime,
}

/// A link's fixed description, as built from the scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkSpec {
    pub from: SiteId,
    pub to: SiteId,
    /// Bandwidth in whole bit/s (`bandwidth_mbps · 10⁶`, rounded).
    pub bits_per_s: u64,
    /// One-way latency, rounded up to the ms.
    pub latency: SimDuration,
    /// CRIC closeness 0..=11.
    pub closeness: u8,
    /// Concurrent transfers at most.
    pub max_active: u32,
    /// The constant background backlog of files (the scenario's `queued_files`).
    pub background_files: u64,
}

/// One link's numbers now, as the network matrix has them: fill the brokerage's link metrics
/// with `queued_files`, `mbps_1h/1d/1w` and `closeness` (same meanings).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkObservation {
    /// Files submitted and not yet done: background + waiting + active.
    pub queued_files: u64,
    pub background_files: u64,
    pub waiting_files: u64,
    /// Sending, or travelling the latency.
    pub active_files: u64,
    /// Mean throughput over the last hour (`dashb` 1h), Mbps; None: nothing done in it.
    pub mbps_1h: Option<f64>,
    /// … over the last day (`dashb` 1d).
    pub mbps_1d: Option<f64>,
    /// … over the last week (`dashb` 1w).
    pub mbps_1w: Option<f64>,
    /// CRIC closeness 0 (best) to 11.
    pub closeness: u8,
    pub files_done: u64,
    pub bytes_done: u64,
    pub bandwidth_mbps: f64,
}

/// The network: links, their transfers and what they observe.
#[derive(Debug, Clone, Default)]
pub struct Network {
    links: Vec<LinkState>,
    /// `(from, to) → link`, sorted.
    pairs: Vec<((SiteId, SiteId), LinkId)>,
    /// Files queued towards each site (background included).
    queued_to: Vec<u64>,
    transfers: Vec<Transfer>,
}

impl Network {
    /// The network of the scenario's links between these sites (by name; [`SiteId`] = index).
    pub fn new(site_names: &[&str], links: &[Link]) -> Result<Self, NetworkError> {
        let mut names: Vec<(&str, SiteId)> = Vec::with_capacity(site_names.len());
        for (i, n) in site_names.iter().enumerate() {
            names.push((n, i as SiteId));
        }
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(NetworkError::DuplicateSite { name: w[0].0.to_string() });
        }
        let site = |i: usize, field: &'static str, name: &str| {
            names
                .binary_search_by(|(n, _)| (*n).cmp(name))
                .ok()
                .and_then(|k| names.get(k).map(|&(_, s)| s))
                .ok_or_else(|| NetworkError::UnknownSite { link: i, field, name: name.to_string() })
        };
        if LinkId::try_from(links.len()).is_err() {
            return Err(NetworkError::TooManyLinks);
        }
        let mut states = Vec::with_capacity(links.len());
        let mut pairs = Vec::with_capacity(links.len());
        let mut queued_to = vec![0u64; site_names.len()];
        for (i, l) in links.iter().enumerate() {
            let (from, to) = (site(i, "from", &l.from)?, site(i, "to", &l.to)?);
            let bps = l.bandwidth_mbps * 1e6;
            if !(bps.is_finite() && bps.round() >= 1.0 && bps.round() < u64::MAX as f64) {
                return Err(NetworkError::Bandwidth { link: i, mbps: l.bandwidth_mbps });
            }
            if !(l.latency_ms.is_finite() && l.latency_ms >= 0.0) {
                return Err(NetworkError::Latency { link: i, ms: l.latency_ms });
            }
            if l.closeness > 11 {
                return Err(NetworkError::Closeness { link: i, closeness: l.closeness });
            }
            let max_active = l.max_active_transfers.unwrap_or(DEFAULT_MAX_ACTIVE);
            if max_active == 0 {
                return Err(NetworkError::MaxActive { link: i });
            }
            let bits_per_s = bps.round() as u64;
            let spec = LinkSpec {
                from,
                to,
                bits_per_s,
                latency: SimDuration::from_millis(l.latency_ms.ceil() as u64),
                closeness: l.closeness,
                max_active,
                background_files: l.queued_files,
            };
            if let Some(q) = queued_to.get_mut(to as usize) {
                *q = q.saturating_add(l.queued_files);
            }
            pairs.push(((from, to), i as LinkId));
            states.push(LinkState::new(spec));
        }
        pairs.sort_unstable();
        if let Some(w) = pairs.windows(2).find(|w| w[0].0 == w[1].0) {
            let (first, link) = (w[0].1.min(w[1].1) as usize, w[0].1.max(w[1].1) as usize);
            let (from, to) = links.get(link).map(|l| (l.from.clone(), l.to.clone())).unwrap_or_default();
            return Err(NetworkError::DuplicateLink { link, first, from, to });
        }
        Ok(Self { links: states, pairs, queued_to, transfers: Vec::new() })
    }

    /// [`Network::new`] over the scenario's sites.
    pub fn from_sites(sites: &[Site], links: &[Link]) -> Result<Self, NetworkError> {
        let names: Vec<&str> = sites.iter().map(|s| s.name.as_str()).collect();
        Self::new(&names, links)
    }

    /// Number of links.
    pub fn link_count(&self) -> usize {
        self.links.len()
    }

    /// The link from `from` to `to`, if the scenario has one.
    pub fn link(&self, from: SiteId, to: SiteId) -> Option<LinkId> {
        let k = self.pairs.binary_search_by(|(p, _)| p.cmp(&(from, to))).ok()?;
        self.pairs.get(k).map(|&(_, l)| l)
    }

    /// A link's fixed description.
    pub fn spec(&self, link: LinkId) -> Option<&LinkSpec> {
        self.links.get(link as usize).map(|l| &l.spec)
    }

    /// A transfer.
    pub fn transfer(&self, t: TransferId) -> Option<&Transfer> {
        self.transfers.get(t as usize)
    }

    /// Number of transfers ever submitted.
    pub fn transfer_count(&self) -> usize {
        self.transfers.len()
    }

    /// Send `bytes` over `link` from `now`: the transfer starts at once if the link has a free
    /// slot, else it waits its turn (FIFO). Returns its id and the link's new event, if any.
    pub fn submit(
        &mut self,
        now: SimTime,
        link: LinkId,
        bytes: u64,
    ) -> Result<(TransferId, Option<LinkEvent>), TransferError> {
        let Self { links, queued_to, transfers, .. } = self;
        let l = links.get_mut(link as usize).ok_or(TransferError::UnknownLink(link))?;
        let id = TransferId::try_from(transfers.len()).map_err(|_| TransferError::TooManyTransfers)?;
        let now = l.tick(now);
        l.catch_up(now, transfers);
        transfers.push(Transfer {
            link,
            bytes,
            status: TransferStatus::Waiting,
            submitted: now,
            started: None,
            ended: None,
            sending: false,
            not_before: now,
        });
        l.waiting.push_back(id);
        l.n_waiting += 1;
        if let Some(q) = queued_to.get_mut(l.spec.to as usize) {
            *q = q.saturating_add(1);
        }
        l.start_waiting(now.as_millis() as f64, transfers);
        l.catch_up(now, transfers); // a zero-byte transfer is sent at once
        Ok((id, l.reschedule(link, transfers)))
    }

    /// Cancel a transfer that is not done (its job was killed): it leaves the queue, or frees
    /// its share of the link at once. Returns the link's new event, if any.
    pub fn cancel(&mut self, now: SimTime, t: TransferId) -> Result<Option<LinkEvent>, TransferError> {
        let Self { links, queued_to, transfers, .. } = self;
        let link = transfers.get(t as usize).ok_or(TransferError::UnknownTransfer(t))?.link;
        let l = links.get_mut(link as usize).ok_or(TransferError::UnknownLink(link))?;
        let now = l.tick(now);
        l.catch_up(now, transfers);
        let (status, sending) =
            transfers.get(t as usize).map_or((TransferStatus::Done, false), |tr| (tr.status, tr.sending));
        match (status, sending) {
            (TransferStatus::Done | TransferStatus::Cancelled, _) => {
                return Err(TransferError::Finished { transfer: t, status });
            }
            (TransferStatus::Waiting, _) => l.n_waiting -= 1,
            // Its last byte left: only the latency remains, no share to free.
            (TransferStatus::Active, false) => l.n_delivering -= 1,
            (TransferStatus::Active, true) => l.cancel_sending(now, t, transfers),
        }
        if let Some(tr) = transfers.get_mut(t as usize) {
            tr.status = TransferStatus::Cancelled;
            tr.sending = false;
            tr.ended = Some(now);
        }
        if let Some(q) = queued_to.get_mut(l.spec.to as usize) {
            *q = q.saturating_sub(1);
        }
        Ok(l.reschedule(link, transfers))
    }

    /// Whether `epoch` is the link's live event.
    pub fn is_current(&self, link: LinkId, epoch: Epoch) -> bool {
        self.links.get(link as usize).is_some_and(|l| l.pending.is_some() && l.epoch == epoch)
    }

    /// The link's event fired at `now`: append the transfers done by then to `out`, in order
    /// (by done time, then finish tag, then id), and return the link's next event. A stale
    /// event (or an unknown link) does nothing and returns None: the live one is still pending.
    pub fn advance(
        &mut self,
        now: SimTime,
        link: LinkId,
        epoch: Epoch,
        out: &mut Vec<Completion>,
    ) -> Option<LinkEvent> {
        if !self.is_current(link, epoch) {
            return None;
        }
        let Self { links, queued_to, transfers, .. } = self;
        let l = links.get_mut(link as usize)?;
        l.pending = None;
        let now = l.tick(now);
        l.catch_up(now, transfers);
        while let Some(&(at, id)) = l.delivering.front() {
            if at > now {
                break;
            }
            l.delivering.pop_front();
            let Some(tr) = transfers.get_mut(id as usize) else { continue };
            if tr.status != TransferStatus::Active || tr.sending {
                continue; // cancelled on its way
            }
            tr.status = TransferStatus::Done;
            tr.ended = Some(at);
            l.n_delivering -= 1;
            l.files_done += 1;
            l.bytes_done = l.bytes_done.saturating_add(tr.bytes);
            if tr.bytes > 0 {
                l.windows.get_or_insert_with(|| Box::new(Windows::new())).add(at, tr.bytes);
            }
            if let Some(q) = queued_to.get_mut(l.spec.to as usize) {
                *q = q.saturating_sub(1);
            }
            out.push(Completion {
                transfer: id,
                link,
                bytes: tr.bytes,
                submitted: tr.submitted,
                started: tr.started.unwrap_or(tr.submitted),
                done: at,
            });
        }
        l.reschedule(link, transfers)
    }

    /// One link's numbers at `now` (as of the events processed so far).
    pub fn observe(&self, link: LinkId, now: SimTime) -> Option<LinkObservation> {
        let l = self.links.get(link as usize)?;
        let [mbps_1h, mbps_1d, mbps_1w] = l.windows.as_ref().map_or([None; 3], |w| w.mbps(now));
        let (waiting, active) = (u64::from(l.n_waiting), u64::from(l.sending) + u64::from(l.n_delivering));
        Some(LinkObservation {
            queued_files: l.spec.background_files.saturating_add(waiting + active),
            background_files: l.spec.background_files,
            waiting_files: waiting,
            active_files: active,
            mbps_1h,
            mbps_1d,
            mbps_1w,
            closeness: l.spec.closeness,
            files_done: l.files_done,
            bytes_done: l.bytes_done,
            bandwidth_mbps: l.spec.bits_per_s as f64 / 1e6,
        })
    }

    /// Files queued towards `site` over all its incoming links, LAN and background included
    /// (what a cap on the files queued to a destination reads). 0 for an unknown site.
    pub fn queued_to(&self, site: SiteId) -> u64 {
        self.queued_to.get(site as usize).copied().unwrap_or(0)
    }

    /// Invariants of the network; a description of each violation.
    pub fn check_invariants(&self) -> Vec<String> {
        let mut bad = Vec::new();
        let mut per_link = vec![(0u32, 0u32, 0u32); self.links.len()];
        let mut to_site = vec![0u64; self.queued_to.len()];
        for (i, l) in self.links.iter().enumerate() {
            if let Some(q) = to_site.get_mut(l.spec.to as usize) {
                *q = q.saturating_add(l.spec.background_files);
            }
            if l.sending > l.spec.max_active {
                bad.push(format!("link {i}: {} sending, above max_active {}", l.sending, l.spec.max_active));
            }
            if l.sending < l.spec.max_active && l.n_waiting > 0 {
                bad.push(format!("link {i}: a free slot while {} transfers wait", l.n_waiting));
            }
        }
        for (id, t) in self.transfers.iter().enumerate() {
            let Some(c) = per_link.get_mut(t.link as usize) else {
                bad.push(format!("transfer {id} on unknown link {}", t.link));
                continue;
            };
            match (t.status, t.sending) {
                (TransferStatus::Waiting, _) => c.0 += 1,
                (TransferStatus::Active, true) => c.1 += 1,
                (TransferStatus::Active, false) => c.2 += 1,
                _ => continue,
            }
            if let Some(q) = self.links.get(t.link as usize).and_then(|l| to_site.get_mut(l.spec.to as usize)) {
                *q = q.saturating_add(1);
            }
        }
        for (i, (l, c)) in self.links.iter().zip(&per_link).enumerate() {
            if (l.n_waiting, l.sending, l.n_delivering) != *c {
                bad.push(format!(
                    "link {i}: counters (waiting, sending, delivering) = {:?} but transfers say {c:?}",
                    (l.n_waiting, l.sending, l.n_delivering)
                ));
            }
        }
        if to_site != self.queued_to {
            bad.push(format!("queued towards sites {:?}, transfers say {to_site:?}", self.queued_to));
        }
        bad
    }
}

#[cfg(test)]
mod tests;
