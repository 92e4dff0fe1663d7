//! The `site_conn_info.json` form: FTS's link matrix into `network` links (module doc of
//! [`cric`](super), "bandwidth").

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::{Fragment, Options, PRODUCTION_OUTPUT};
use crate::grid::config::Link;

/// Every link between sites of the fragment (any link when it has no site) with a closeness in
/// 0..=11, its bandwidth and backlog ([`link`]); the others are counted as dropped.
pub(super) fn import_links(frag: &mut Fragment, conn: &[(String, String, &Map<String, Value>)], opt: Options) {
    let keep: BTreeSet<String> = frag.sites.iter().map(|s| s.name.clone()).collect();
    for (src, dst, o) in conn {
        if !keep.is_empty() && (!keep.contains(src) || !keep.contains(dst)) {
            frag.foreign_links += 1;
            continue;
        }
        if let Some(l) = link(frag, src, dst, o, opt) {
            frag.network.push(l);
        }
    }
}

/// The link `src` → `dst` of entry `o`: its closeness (CRIC's latest; none is the farthest, 11;
/// out of range is blocked: `None`), the largest of FTS's 1 h / 1 d / 1 w Mbps (else the
/// default), and the `Production Output` files queued on it (else `queued-total`).
fn link(frag: &mut Fragment, src: &str, dst: &str, o: &Map<String, Value>, opt: Options) -> Option<Link> {
    let closeness = o.get("closeness").and_then(|c| c.get("latest")).and_then(Value::as_i64);
    let closeness = match closeness {
        None => 11, // no CRIC value: the farthest
        Some(c) if (0..=11).contains(&c) => c as u8,
        Some(_) => {
            frag.blocked_links += 1;
            return None;
        }
    };
    let dashb = o.get("mbps").and_then(|m| m.get("dashb"));
    let mbps = ["1h", "1d", "1w"]
        .iter()
        .filter_map(|k| dashb.and_then(|d| d.get(*k)).and_then(Value::as_f64))
        .filter(|x| x.is_finite() && *x > 0.0)
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    let bandwidth_mbps = mbps.unwrap_or_else(|| {
        frag.default_bandwidth_links += 1;
        opt.default_mbps
    });
    let files = o.get("files");
    let count = |v: Option<&Value>| {
        v.and_then(Value::as_f64).filter(|x| x.is_finite() && *x > 0.0).map_or(0, |x| x.round() as u64)
    };
    // What `getBackloggedNuclei` and the link check read: `Production Output_queued`.
    let queued_files = match files.and_then(|f| f.get("queued")).and_then(Value::as_object) {
        Some(by_activity) => count(by_activity.get(PRODUCTION_OUTPUT).and_then(|a| a.get("latest"))),
        None => {
            let total = count(files.and_then(|f| f.get("queued-total")));
            frag.total_only_links += usize::from(total > 0);
            total
        }
    };
    Some(Link {
        from: src.to_string(),
        to: dst.to_string(),
        bandwidth_mbps,
        latency_ms: 0.0,
        closeness,
        queued_files,
        max_active_transfers: None,
    })
}
