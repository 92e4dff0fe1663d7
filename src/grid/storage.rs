//! Storage endpoints (Rucio RSEs such as `AGLT2_DATADISK`): space is consumed when a file is
//! written there and freed when it is deleted. Sizes are TB (10¹² bytes) in the scenario
//! ([`config::Storage`], as `traces/panda_cgsim/site_info.json` gives them) and bytes here.
//!
//! An endpoint without a capacity (a tape library, or a size not reported) never refuses a
//! write. A write that does not fit is refused with [`StorageError::Full`], never forced: the
//! caller decides what a refused output means (the job fails, the file goes elsewhere).
//! There is no time here: a reservation holds from the call on.

use super::config::{self, StorageKind};
use crate::ids::SiteId;

/// A storage endpoint: its index in the scenario's list.
pub type StorageId = u32;

/// TB in bytes (decimal, as Rucio and CRIC report sizes).
pub const TB: f64 = 1e12;

/// One endpoint now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub name: String,
    pub site: SiteId,
    pub kind: StorageKind,
    /// Capacity in bytes; None: unlimited.
    pub total: Option<u64>,
    /// Bytes in use.
    pub used: u64,
}

impl Endpoint {
    /// Free bytes; None: unlimited.
    pub fn free(&self) -> Option<u64> {
        self.total.map(|t| t.saturating_sub(self.used))
    }
}

/// Why the scenario's storage cannot be built (the path is the scenario's `storage[i]`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StorageConfigError {
    #[error("storage[{index}].site: unknown site {site:?}")]
    UnknownSite { index: usize, site: String },
    #[error("storage[{index}]: a second endpoint named {name:?}")]
    Duplicate { index: usize, name: String },
    #[error("storage[{index}].{field}: must be a finite number of TB ≥ 0, got {tb}")]
    Size { index: usize, field: &'static str, tb: f64 },
    #[error("storage[{index}]: {used_tb} TB used of {total_tb} TB")]
    UsedBeyondTotal { index: usize, used_tb: f64, total_tb: f64 },
    #[error("more than {} storage endpoints", StorageId::MAX)]
    TooMany,
}

/// Why a reservation or a release did nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StorageError {
    /// The write does not fit (the refusal of a full endpoint).
    #[error("{endpoint} is full: {requested} bytes requested, {free} free")]
    Full { endpoint: String, requested: u64, free: u64 },
    #[error("no storage endpoint {0}")]
    Unknown(StorageId),
    /// More bytes released than the endpoint holds: an accounting error of the caller.
    #[error("{endpoint}: release of {requested} bytes, but only {used} are used")]
    ReleaseBeyondUsed { endpoint: String, requested: u64, used: u64 },
}

/// Every storage endpoint of the grid.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Storages {
    endpoints: Vec<Endpoint>,
    /// `name → id`, sorted by name.
    by_name: Vec<(String, StorageId)>,
}

/// TB from the scenario to bytes, rounded; None if not a finite number ≥ 0 that fits.
fn tb_to_bytes(tb: f64) -> Option<u64> {
    let b = (tb * TB).round();
    (tb.is_finite() && tb >= 0.0 && b < u64::MAX as f64).then_some(b as u64)
}

impl Storages {
    /// The endpoints of the scenario, at these sites (by name; [`SiteId`] = index).
    pub fn new(site_names: &[&str], cfg: &[config::Storage]) -> Result<Self, StorageConfigError> {
        if StorageId::try_from(cfg.len()).is_err() {
            return Err(StorageConfigError::TooMany);
        }
        let mut endpoints = Vec::with_capacity(cfg.len());
        let mut by_name: Vec<(String, StorageId)> = Vec::with_capacity(cfg.len());
        for (index, s) in cfg.iter().enumerate() {
            let site = site_names
                .iter()
                .position(|n| *n == s.site)
                .ok_or_else(|| StorageConfigError::UnknownSite { index, site: s.site.clone() })?;
            let used =
                tb_to_bytes(s.used_tb).ok_or(StorageConfigError::Size { index, field: "used_tb", tb: s.used_tb })?;
            let total = match s.total_tb {
                None => None,
                Some(tb) => Some(tb_to_bytes(tb).ok_or(StorageConfigError::Size { index, field: "total_tb", tb })?),
            };
            if let (Some(t), Some(total_tb)) = (total, s.total_tb)
                && used > t
            {
                return Err(StorageConfigError::UsedBeyondTotal { index, used_tb: s.used_tb, total_tb });
            }
            match by_name.binary_search_by(|(n, _)| n.as_str().cmp(&s.name)) {
                Ok(_) => return Err(StorageConfigError::Duplicate { index, name: s.name.clone() }),
                Err(k) => by_name.insert(k, (s.name.clone(), index as StorageId)),
            }
            endpoints.push(Endpoint { name: s.name.clone(), site: site as SiteId, kind: s.kind, total, used });
        }
        Ok(Self { endpoints, by_name })
    }

    /// The endpoint named `name`.
    pub fn id(&self, name: &str) -> Option<StorageId> {
        let k = self.by_name.binary_search_by(|(n, _)| n.as_str().cmp(name)).ok()?;
        self.by_name.get(k).map(|&(_, id)| id)
    }

    /// An endpoint.
    pub fn get(&self, id: StorageId) -> Option<&Endpoint> {
        self.endpoints.get(id as usize)
    }

    /// Every endpoint, by id.
    pub fn endpoints(&self) -> &[Endpoint] {
        &self.endpoints
    }

    /// The endpoints of a site, by id.
    pub fn at_site(&self, site: SiteId) -> impl Iterator<Item = StorageId> + '_ {
        self.endpoints.iter().enumerate().filter(move |(_, e)| e.site == site).map(|(i, _)| i as StorageId)
    }

    /// Free bytes of an endpoint: `Ok(None)` when it is unlimited.
    pub fn free(&self, id: StorageId) -> Result<Option<u64>, StorageError> {
        self.get(id).map(Endpoint::free).ok_or(StorageError::Unknown(id))
    }

    /// Write `bytes` (an output file, a replica): refused, with nothing changed, if they do not
    /// fit in the free space.
    pub fn reserve(&mut self, id: StorageId, bytes: u64) -> Result<(), StorageError> {
        let e = self.endpoints.get_mut(id as usize).ok_or(StorageError::Unknown(id))?;
        if let Some(free) = e.free()
            && bytes > free
        {
            return Err(StorageError::Full { endpoint: e.name.clone(), requested: bytes, free });
        }
        e.used = e.used.saturating_add(bytes);
        Ok(())
    }

    /// Delete `bytes` (a file removed): refused, with nothing changed, if more than are used.
    pub fn release(&mut self, id: StorageId, bytes: u64) -> Result<(), StorageError> {
        let e = self.endpoints.get_mut(id as usize).ok_or(StorageError::Unknown(id))?;
        if bytes > e.used {
            return Err(StorageError::ReleaseBeyondUsed { endpoint: e.name.clone(), requested: bytes, used: e.used });
        }
        e.used -= bytes;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(name: &str, site: &str, kind: StorageKind, total_tb: Option<f64>, used_tb: f64) -> config::Storage {
        config::Storage {
            name: name.into(),
            site: site.into(),
            kind,
            total_tb,
            used_tb,
            expired_tb: 0.0,
            read_lan: Default::default(),
            write_lan: Default::default(),
            read_wan: Default::default(),
            write_wan: Default::default(),
        }
    }

    fn two() -> Storages {
        Storages::new(
            &["AGLT2", "BNL"],
            &[
                cfg("AGLT2_DATADISK", "AGLT2", StorageKind::Disk, Some(11239.99), 0.0),
                cfg("BNL_SCRATCH", "BNL", StorageKind::Disk, Some(1.0), 0.25),
                cfg("BNL_TAPE", "BNL", StorageKind::Tape, None, 0.0),
            ],
        )
        .unwrap()
    }

    #[test]
    fn terabytes_become_bytes() {
        let s = two();
        let e = s.get(s.id("AGLT2_DATADISK").unwrap()).unwrap();
        // site_info.json's 11239.99 TB.
        assert_eq!(e.total, Some(11_239_990_000_000_000));
        assert_eq!(s.free(1), Ok(Some(750_000_000_000)));
        assert_eq!(s.free(2), Ok(None), "a tape without a size is unlimited");
        assert_eq!(s.at_site(1).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(s.id("nowhere"), None);
    }

    #[test]
    fn a_full_endpoint_refuses_and_changes_nothing() {
        let mut s = two();
        // 0.75 TB free: 0.5 TB fits, then 0.3 TB does not.
        s.reserve(1, 500_000_000_000).unwrap();
        assert_eq!(s.free(1), Ok(Some(250_000_000_000)));
        assert_eq!(
            s.reserve(1, 300_000_000_000),
            Err(StorageError::Full {
                endpoint: "BNL_SCRATCH".into(),
                requested: 300_000_000_000,
                free: 250_000_000_000
            })
        );
        assert_eq!(s.get(1).unwrap().used, 750_000_000_000);
        // Exactly the free space fits, and then the endpoint is full.
        s.reserve(1, 250_000_000_000).unwrap();
        assert_eq!(s.free(1), Ok(Some(0)));
        assert!(matches!(s.reserve(1, 1), Err(StorageError::Full { free: 0, .. })));
        assert_eq!(s.reserve(1, 0), Ok(()), "an empty file always fits");
        // A deletion frees space for the refused write.
        s.release(1, 300_000_000_000).unwrap();
        assert_eq!(s.reserve(1, 300_000_000_000), Ok(()));
        // The tape takes anything.
        s.reserve(2, u64::MAX).unwrap();
        s.reserve(2, u64::MAX).unwrap();
        assert_eq!(s.get(2).unwrap().used, u64::MAX);
    }

    #[test]
    fn release_beyond_use_and_unknown_ids_are_errors() {
        let mut s = two();
        assert_eq!(
            s.release(1, 250_000_000_001),
            Err(StorageError::ReleaseBeyondUsed {
                endpoint: "BNL_SCRATCH".into(),
                requested: 250_000_000_001,
                used: 250_000_000_000
            })
        );
        assert_eq!(s.get(1).unwrap().used, 250_000_000_000);
        assert_eq!(s.reserve(9, 1), Err(StorageError::Unknown(9)));
        assert_eq!(s.release(9, 1), Err(StorageError::Unknown(9)));
        assert_eq!(s.free(9), Err(StorageError::Unknown(9)));
        assert_eq!(s.get(9), None);
    }

    #[test]
    fn bad_configurations_are_refused() {
        let sites = ["A"];
        let new = |c: config::Storage| Storages::new(&sites, &[c]);
        assert_eq!(
            new(cfg("X", "B", StorageKind::Disk, Some(1.0), 0.0)),
            Err(StorageConfigError::UnknownSite { index: 0, site: "B".into() })
        );
        for tb in [-1.0, f64::NAN, f64::INFINITY, 1e30] {
            assert!(matches!(
                new(cfg("X", "A", StorageKind::Disk, Some(tb), 0.0)),
                Err(StorageConfigError::Size { field: "total_tb", .. })
            ));
            assert!(matches!(
                new(cfg("X", "A", StorageKind::Disk, None, tb)),
                Err(StorageConfigError::Size { field: "used_tb", .. })
            ));
        }
        assert_eq!(
            new(cfg("X", "A", StorageKind::Disk, Some(1.0), 2.0)),
            Err(StorageConfigError::UsedBeyondTotal { index: 0, used_tb: 2.0, total_tb: 1.0 })
        );
        let x = cfg("X", "A", StorageKind::Disk, Some(1.0), 0.0);
        assert_eq!(
            Storages::new(&sites, &[x.clone(), x]),
            Err(StorageConfigError::Duplicate { index: 1, name: "X".into() })
        );
        // A disk of size 0 (site_info.json's "0.00") refuses every non-empty write.
        let mut zero = new(cfg("X", "A", StorageKind::Disk, Some(0.0), 0.0)).unwrap();
        assert!(matches!(zero.reserve(0, 1), Err(StorageError::Full { .. })));
    }

    proptest::proptest! {
        #[test]
        fn random_reserves_and_releases_never_panic_nor_overfill(
            total in proptest::option::of(0.0f64..2.0),
            used in 0.0f64..1.0,
            ops in proptest::collection::vec((proptest::prelude::any::<bool>(), 0u32..3, 0u64..800_000_000_000), 0..40),
        ) {
            let Ok(mut s) = Storages::new(&["A"], &[cfg("X", "A", StorageKind::Disk, total, used)]) else {
                proptest::prop_assert!(total.is_some_and(|t| used > t));
                return Ok(());
            };
            for (write, id, bytes) in ops {
                let before = s.get(id).cloned();
                let r = if write { s.reserve(id, bytes) } else { s.release(id, bytes) };
                if r.is_err() {
                    proptest::prop_assert_eq!(s.get(id).cloned(), before, "a refusal changes nothing");
                }
                if let Some(e) = s.get(0) {
                    proptest::prop_assert!(e.total.is_none_or(|t| e.used <= t));
                }
            }
        }
    }

    #[test]
    fn the_scenario_format() {
        let s: config::Storage = ron::from_str(r#"(name: "NDGF-T1_MCTAPE", site: "NDGF-T1", kind: Tape)"#).unwrap();
        assert_eq!(s, cfg("NDGF-T1_MCTAPE", "NDGF-T1", StorageKind::Tape, None, 0.0));
        // Scenario files are read with RON's implicit `Some`.
        let ron = ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        let d: config::Storage = ron.from_str(r#"(name: "D", site: "S", total_tb: 235.79)"#).unwrap();
        assert_eq!((d.kind, d.total_tb), (StorageKind::Disk, Some(235.79)));
        assert!(ron::from_str::<config::Storage>(r#"(name: "D", site: "S", size: 1)"#).is_err(), "unknown field");
    }
}
