//! The CRIC pandaqueue form: a queue's attributes as CRIC gives them, read into a
//! [`PandaQueue`].

use serde_json::{Map, Value};

use super::{num, text};
use crate::scenario::panda::{PandaQueue, QueueKind, QueueStatus};

fn flag(v: &Value) -> Result<bool, String> {
    match v {
        Value::Null => Ok(false),
        Value::Bool(b) => Ok(*b),
        Value::Number(n) => Ok(n.as_f64().is_some_and(|x| x != 0.0)),
        Value::String(s) => Ok(matches!(s.to_ascii_lowercase().as_str(), "true" | "1" | "yes" | "y")),
        other => Err(format!("expected a boolean, got {other}")),
    }
}

fn strings(v: &Value) -> Result<Vec<String>, String> {
    match v {
        Value::Null => Ok(Vec::new()),
        Value::String(s) => Ok(s.split(',').map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect()),
        Value::Array(a) => a.iter().map(|x| text(x).map(Option::unwrap_or_default)).collect(),
        other => Err(format!("expected a list of strings, got {other}")),
    }
}

fn uint(v: &Value) -> Result<Option<u64>, String> {
    Ok(num(v)?.map(|x| if x.is_finite() && x > 0.0 { x.round() as u64 } else { 0 }))
}

/// The CRIC pandaqueue fields read, and those known but without a scenario field (no warning).
pub(super) const QUEUE_FIELDS: &[&str] = &[
    "atlas_site",
    "site",
    "status",
    "type",
    "capability",
    "resource_type",
    "corecount",
    "corepower",
    "maxrss",
    "minrss",
    "maxtime",
    "mintime",
    "maxwdir",
    "maxinputsize",
    "maxdiskio",
    "pledgedcpu",
    "fairsharepolicy",
    "catchall",
    "direct_access_lan",
    "direct_access_wan",
    "wnconnectivity",
    "astorages",
    "num_slots",
    "transferringlimit",
    "releases",
    "cmtconfigs",
    "containers",
    "architectures",
    "name",
    "panda_resource",
];

/// The attributes of one CRIC pandaqueue entry applied to `q`; returns the unknown field names.
pub(super) fn apply_queue(q: &mut PandaQueue, o: &Map<String, Value>) -> Result<Vec<String>, String> {
    let mut unknown = Vec::new();
    for (k, v) in o {
        let r: Result<(), String> = (|| {
            match k.as_str() {
                "status" => {
                    if let Some(s) = text(v)? {
                        q.status = QueueStatus::parse(&s).ok_or_else(|| format!("unknown status {s:?}"))?;
                    }
                }
                "type" => {
                    if let Some(s) = text(v)? {
                        q.kind = QueueKind::parse(&s)
                            .ok_or_else(|| format!("type {s:?}: expected production, analysis or unified"))?;
                    }
                }
                "capability" => q.capability = text(v)?.filter(|s| !s.is_empty()),
                "resource_type" => q.resource_type = text(v)?.filter(|s| !s.is_empty()),
                "corecount" => q.corecount = uint(v)?.map(|c| c.min(u64::from(u32::MAX)) as u32),
                "corepower" => {
                    if let Some(x) = num(v)?.filter(|x| *x > 0.0) {
                        q.corepower = x;
                    }
                }
                "maxrss" => q.maxrss = uint(v)?.unwrap_or(0),
                "minrss" => q.minrss = uint(v)?.unwrap_or(0),
                "maxtime" => q.maxtime = uint(v)?.unwrap_or(0),
                "mintime" => q.mintime = uint(v)?.unwrap_or(0),
                "maxwdir" => q.maxwdir = uint(v)?.unwrap_or(0),
                "maxinputsize" => q.maxinputsize = num(v)?.map(|x| x.round() as i64),
                "maxdiskio" => q.maxdiskio = num(v)?,
                "pledgedcpu" => q.pledgedcpu = num(v)?,
                "fairsharepolicy" => q.fairsharepolicy = text(v)?.unwrap_or_default(),
                "catchall" => q.catchall = text(v)?.unwrap_or_default(),
                "direct_access_lan" => q.direct_access_lan = flag(v)?,
                "direct_access_wan" => q.direct_access_wan = flag(v)?,
                "wnconnectivity" => q.wnconnectivity = text(v)?.filter(|s| !s.is_empty()),
                "astorages" => {
                    if let Value::Object(m) = v {
                        for (act, rses) in m {
                            q.astorages.insert(act.clone(), strings(rses)?);
                        }
                    } else if !v.is_null() {
                        return Err("expected an object activity → [RSE]".into());
                    }
                }
                "num_slots" => q.num_slots = uint(v)?,
                "transferringlimit" => q.transferringlimit = uint(v)?.unwrap_or(0),
                "releases" => {
                    let r = strings(v)?;
                    if !r.is_empty() {
                        q.software.releases = r;
                    }
                }
                "cmtconfigs" => q.software.cmtconfigs = strings(v)?,
                "containers" => q.software.containers = strings(v)?,
                "architectures" => {
                    q.software.architectures = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?
                }
                "atlas_site" | "site" | "name" | "panda_resource" => {}
                _ => unknown.push(k.clone()),
            }
            Ok(())
        })();
        r.map_err(|e| format!("{k}: {e}"))?;
    }
    Ok(unknown)
}
