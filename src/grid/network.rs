//! Network links between sites (bandwidth, latency, PanDA closeness, queued files).
//!
//! Recorded now so that scenarios carry them; PanDA's network weight will read them.

use std::collections::BTreeMap;

use super::config::Link;

/// Directed links by (source site, destination site).
#[derive(Debug, Clone, Default)]
pub struct Network {
    links: BTreeMap<(String, String), Link>,
}

impl Network {
    /// Index the scenario's links (a later duplicate replaces an earlier one).
    pub fn new(links: &[Link]) -> Self {
        Self { links: links.iter().map(|l| ((l.from.clone(), l.to.clone()), l.clone())).collect() }
    }

    /// The link from `from` to `to`, if configured.
    pub fn link(&self, from: &str, to: &str) -> Option<&Link> {
        self.links.get(&(from.to_string(), to.to_string()))
    }

    /// Number of links.
    pub fn len(&self) -> usize {
        self.links.len()
    }

    /// True if there is no link.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }
}
