//! Building the production views' statics from a validated scenario (`ProdView::new`).

use crate::grid::config::{StorageKind, StorageStatus};
use crate::grid::network::LinkId;
use crate::grid::storage::TB;
use crate::panda::arch::{ArchVariant, Broker, SwRequest, SwSkip, TaskArch, sw_filter};
use crate::panda::gshare;
use crate::panda::job_broker::{BrokerQueue, EndpointStatus, FairsharePolicy, JobSeed, LocalInput};
use crate::panda::network::Link;
use crate::panda::task_broker::{BareNucleus, Role};
use crate::scenario::Scenario;
use crate::scenario::panda::{PandaConfig, PandaQueue, ProductionStream};

use super::statics::{
    Completeness, DatasetStatic, Geometry, MAX_MISSING_INPUT_FILES, MIN_INPUT_COMPLETENESS, NucleusStatic, ProdView,
    QueueStatic, ReplicaStatic, ResourceType, StorageStatic, StreamStatic,
};

/// `SiteSpec.hasValueInCatchall(key)`: a comma-separated item matching `^key` (a prefix, as
/// the code's `re.search(f"^{key}(=|)*", item)`).
pub(super) fn catchall_has(catchall: &str, key: &str) -> bool {
    catchall.split(',').any(|item| item.starts_with(key))
}

/// `SiteSpec.getValueFromCatchall(key)`: the first item matching `^key=(.+)` (`.` stops at a
/// newline).
pub(super) fn catchall_value<'c>(catchall: &'c str, key: &str) -> Option<&'c str> {
    catchall.split(',').find_map(|item| {
        let v = item.strip_prefix(key)?.strip_prefix('=')?;
        let v = v.split('\n').next().unwrap_or("");
        (!v.is_empty()).then_some(v)
    })
}

fn down(s: StorageStatus) -> bool {
    s.is_downtime()
}

fn storage_id(storages: &[StorageStatic], name: &str) -> Option<usize> {
    storages.iter().position(|s| s.name == name)
}

fn site_id(site_names: &[String], name: &str) -> Option<u32> {
    site_names.iter().position(|n| n == name).map(|i| i as u32)
}

/// The `astorages` storages of one role, resolved (unknown names skipped).
fn role_storages(q: &PandaQueue, role: &str, storages: &[StorageStatic]) -> Vec<usize> {
    q.astorages.get(role).map_or_else(Vec::new, |names| names.iter().filter_map(|n| storage_id(storages, n)).collect())
}

/// The SW/HW verdict of one (stream, PQ) (see `job::BrokerQueue` docs in `job.rs`).
fn software_verdict(q: &PandaQueue, arch: &Result<TaskArch, String>, variant: ArchVariant) -> Result<(), String> {
    let arch = match arch {
        Ok(a) => a,
        Err(e) => return Err(format!("due to an architecture PanDA cannot read ({e}) criteria=-cache")),
    };
    let req = SwRequest::standalone(arch, None, false);
    match sw_filter(&q.software, arch, &req, Broker::Production, None, variant) {
        Ok(_) => Ok(()),
        Err(SwSkip::UnresolvedRegexp { cmt_config }) => {
            Err(format!("due to unresolved regexp in cmtconfig={cmt_config} criteria=-regexpcmtconfig"))
        }
        Err(why) => {
            let auto = if q.software.releases.len() == 1 && q.software.releases[0] == "AUTO" {
                "with AUTO"
            } else {
                "without AUTO"
            };
            Err(format!("{auto} due to {why} criteria=-cache"))
        }
    }
}

fn dataset(d: &crate::scenario::panda::DatasetConfig, storages: &[StorageStatic]) -> DatasetStatic {
    let bytes = if d.size_gb.is_finite() && d.size_gb > 0.0 { (d.size_gb * 1e9).round() as u64 } else { 0 };
    let mut out =
        DatasetStatic { prefix: d.name.clone(), master: d.master, files: d.files, bytes, replicas: Vec::new() };
    let per_file = out.bytes_per_file();
    for r in &d.replicas {
        let Some(storage) = storage_id(storages, &r.storage) else { continue };
        let share = if r.fraction.is_finite() { r.fraction.clamp(0.0, 1.0) } else { 0.0 };
        let complete = r.complete();
        let found = if complete { d.files } else { ((share * d.files as f64).floor() as u64).min(d.files) };
        let rbytes = if found == d.files { bytes } else { (found as f64 * per_file).round() as u64 };
        out.replicas.push(ReplicaStatic {
            storage,
            found,
            bytes: rbytes,
            complete,
            share: if complete { 1.0 } else { share },
        });
    }
    out
}

fn geometry(s: &ProductionStream, datasets: &[DatasetStatic]) -> Geometry {
    let master = datasets.iter().position(|d| d.master).or(if datasets.is_empty() { None } else { Some(0) });
    let n_events = s.n_events as f64;
    let events_per_file =
        master.and_then(|m| datasets.get(m)).filter(|d| d.files > 0).map_or(0.0, |d| n_events / d.files as f64);
    let events_per_job = match s.n_events_per_job {
        Some(e) if e > 0 => e as f64,
        _ if events_per_file > 0.0 => events_per_file,
        _ => n_events,
    };
    Geometry { master, events_per_job, events_per_file }
}

/// A replica regarded as complete by `get_sites_with_data` (found == total, or missing ≤
/// `MAX_MISSING_INPUT_FILES`, or ≥ `MIN_INPUT_COMPLETENESS` %).
fn regarded_complete(r: &ReplicaStatic, files: u64) -> bool {
    r.found == files
        || (files > 0
            && r.found > 0
            && (files - r.found <= MAX_MISSING_INPUT_FILES
                || r.found as f64 / files as f64 * 100.0 >= MIN_INPUT_COMPLETENESS))
}

fn completeness(s: &ProductionStream, datasets: &[DatasetStatic], storages: &[StorageStatic]) -> Completeness {
    let mut out = Completeness { remote_source_available: true, complete_locations: Vec::new(), error: None };
    let mut locations: Option<Vec<usize>> = None;
    for d in datasets {
        let complete: Vec<&ReplicaStatic> = d.replicas.iter().filter(|r| regarded_complete(r, d.files)).collect();
        let mut here: Vec<usize> = complete.iter().map(|r| r.storage).collect();
        here.sort_unstable();
        here.dedup();
        locations = Some(match locations {
            None => here,
            Some(prev) => prev.into_iter().filter(|x| here.binary_search(x).is_ok()).collect(),
        });
        if s.input_pre_staging {
            continue;
        }
        let (mut local, mut remote, mut any_ok) = (false, false, false);
        for r in &complete {
            let Some(st) = storages.get(r.storage) else { continue };
            let l = !down(st.read_lan);
            let w = !down(st.read_wan);
            local |= l;
            remote |= w;
            any_ok |= l || w;
        }
        if !any_ok {
            if out.error.is_none() {
                out.error = Some(format!("{} is incomplete at any online storage", d.prefix));
            }
        } else if !remote && local {
            out.remote_source_available = false;
        }
    }
    out.complete_locations = locations.unwrap_or_default();
    out
}

/// `getSitesShareDDM(first, output_share=True)` (DataServiceUtils L79-119): online PQs of the
/// same kind whose default output endpoint is among `first`'s input endpoints, `first` excluded.
fn shares_with(first: Option<(&PandaQueue, &[usize])>, q: &PandaQueue, q_default_out: Option<usize>) -> bool {
    let Some((f, f_inputs)) = first else { return false };
    if f.name == q.name {
        return false;
    }
    if (f.kind.production() && !q.kind.production()) || (f.kind.analysis() && !q.kind.analysis()) {
        return false;
    }
    q.status == crate::scenario::panda::QueueStatus::Online && q_default_out.is_some_and(|o| f_inputs.contains(&o))
}

/// Builds the static view.
pub(super) fn build(s: &Scenario) -> ProdView {
    let empty = PandaConfig::default();
    let p = s.panda.as_ref().unwrap_or(&empty);
    let rules = p.rules();
    let site_names: Vec<String> = s.sites.iter().map(|x| x.name.clone()).collect();
    let storages: Vec<StorageStatic> = s
        .storages
        .iter()
        .map(|st| StorageStatic {
            name: st.name.clone(),
            tape: st.kind == StorageKind::Tape,
            read_lan: st.read_lan,
            write_lan: st.write_lan,
            read_wan: st.read_wan,
            write_wan: st.write_wan,
            expired_bytes: if st.expired_tb.is_finite() && st.expired_tb > 0.0 {
                (st.expired_tb * TB).round().min(u64::MAX as f64) as u64
            } else {
                0
            },
        })
        .collect();
    let prod: Vec<usize> = (0..p.queues.len()).filter(|&i| p.queues[i].kind.production()).collect();
    let q_inputs: Vec<Vec<usize>> = p.queues.iter().map(|q| role_storages(q, "read_lan", &storages)).collect();
    let q_default_out: Vec<Option<usize>> =
        p.queues.iter().map(|q| role_storages(q, "write_lan", &storages).first().copied()).collect();
    let mut nuclei: Vec<NucleusStatic> = p
        .nuclei
        .iter()
        .map(|n| NucleusStatic {
            name: n.site.clone(),
            site: site_id(&site_names, &n.site),
            state: n.state,
            role: n.role,
            bare: n.bare_nucleus,
            output: n.output_storages.iter().map(|x| storage_id(&storages, x)).collect(),
            input: n.input_storages.iter().filter_map(|x| storage_id(&storages, x)).collect(),
            pqs: Vec::new(),
        })
        .collect();
    // allPandaSites[0] of each nucleus (any kind, scenario order), for getSitesShareDDM.
    let first_pq = |site: &str| -> Option<usize> { p.queues.iter().position(|q| q.site == site) };
    let nucleus_first: Vec<Option<usize>> = p.nuclei.iter().map(|n| first_pq(&n.site)).collect();
    let hint_first = p.nuclei.iter().zip(&nucleus_first).find(|(n, _)| n.role == Role::Nucleus).and_then(|(_, f)| *f);
    let first_of = |f: Option<usize>| f.and_then(|i| Some((p.queues.get(i)?, q_inputs.get(i)?.as_slice())));
    let mut queues = Vec::with_capacity(prod.len());
    let mut template = Vec::with_capacity(prod.len());
    for (pos, &qi) in prod.iter().enumerate() {
        let q = &p.queues[qi];
        let out_site = q_default_out[qi].and_then(|o| s.storages.get(o)).and_then(|st| site_id(&site_names, &st.site));
        let disk = |ids: Vec<usize>| -> Vec<usize> {
            ids.into_iter().filter(|&i| storages.get(i).is_some_and(|st| !st.tape)).collect()
        };
        let links = p
            .nuclei
            .iter()
            .map(|n| {
                let from = out_site.and_then(|o| site_names.get(o as usize))?;
                s.network.iter().position(|l| l.from == *from && l.to == n.site).map(|l| l as LinkId)
            })
            .collect();
        for (ni, n) in p.nuclei.iter().enumerate() {
            if n.site == q.site {
                nuclei[ni].pqs.push(pos);
            }
        }
        let in_any_nucleus = p.nuclei.iter().any(|n| n.role == Role::Nucleus && n.site == q.site);
        let qs = QueueStatic {
            panda: qi,
            input_disk: disk(q_inputs[qi].clone()),
            input_all: q_inputs[qi].clone(),
            output_disk: disk(role_storages(q, "write_lan", &storages)),
            default_out: q_default_out[qi],
            out_site,
            ucore: q.is_ucore(),
            corecount: q.corecount,
            maxrss: q.maxrss,
            minrss: q.minrss,
            in_any_nucleus,
            hint_shares: shares_with(first_of(hint_first), q, q_default_out[qi]),
            links,
            in_nucleus: p.nuclei.iter().map(|n| n.site == q.site).collect(),
            shares: nucleus_first.iter().map(|&f| shares_with(first_of(f), q, q_default_out[qi])).collect(),
            push: q.harvester.map_type != crate::panda::harvester::config::MapType::NoJob,
        };
        template.push(template_queue(q, &qs, &storages, &site_names));
        queues.push(qs);
    }
    let leaves = gshare::leaves(&p.gshares);
    let streams = p
        .tasks
        .iter()
        .map(|t| {
            let datasets: Vec<DatasetStatic> = t.inputs.iter().map(|d| dataset(d, &storages)).collect();
            let arch = match &t.architecture {
                None => Ok(TaskArch::none()),
                Some(text) => TaskArch::parse_with(text, rules.arch).map_err(|e| e.to_string()),
            };
            StreamStatic {
                cfg: t.clone(),
                leaf: leaves.iter().position(|l| l.name == t.gshare),
                resource_type: ResourceType::of(t.core_count, t.ram_count),
                software: prod.iter().map(|&qi| software_verdict(&p.queues[qi], &arch, rules.arch)).collect(),
                geometry: geometry(t, &datasets),
                completeness: completeness(t, &datasets, &storages),
                datasets,
            }
        })
        .collect();
    let unwritable_nuclei = (0..nuclei.len())
        .filter(|&i| {
            let n = &nuclei[i];
            n.role == Role::Nucleus
                && n.output
                    .first()
                    .copied()
                    .flatten()
                    .and_then(|o| storages.get(o))
                    .is_some_and(|st| down(st.write_wan))
        })
        .collect();
    ProdView {
        unwritable_nuclei,
        storages,
        nuclei,
        queues,
        template,
        streams,
        job_params: p.job_broker_params(),
        task_params: p.task_brokerage_params().clone(),
        task_variant: rules.task_broker,
        job_check_queues: Default::default(),
    }
}

/// The static fields of a PQ's [`BrokerQueue`]; the dynamic ones are left at their defaults
/// and written by `ProdView::fill_queues`.
fn template_queue(q: &PandaQueue, qs: &QueueStatic, storages: &[StorageStatic], sites: &[String]) -> BrokerQueue {
    let status = |i: &usize| {
        storages.get(*i).map_or(EndpointStatus::default(), |st| EndpointStatus {
            read_lan: !down(st.read_lan),
            write_lan: !down(st.write_lan),
            read_wan: !down(st.read_wan),
            write_wan: !down(st.write_wan),
            complete_replica: false,
        })
    };
    BrokerQueue {
        name: q.name.clone(),
        status: q.status,
        ucore: q.is_ucore(),
        core_count: q.corecount,
        corepower: q.corepower,
        maxrss: q.maxrss,
        minrss: q.minrss,
        maxtime: q.maxtime,
        mintime: q.mintime,
        maxwdir: q.maxwdir,
        direct_io: q.direct_access_lan,
        always_direct_io: q.maxinputsize == Some(-1),
        pledged_cpu: q.pledgedcpu,
        fairshare: FairsharePolicy::parse(&q.fairsharepolicy).0,
        use_jumbo_jobs: catchall_has(&q.catchall, "useJumboJobs"),
        min_events_for_jumbo: catchall_value(&q.catchall, "minEventsForJumbo").and_then(|v| v.trim().parse().ok()),
        max_diskio: q.maxdiskio,
        diskio_usage_per_core: 0.0,
        job_seed: JobSeed::Std,
        wnconnectivity: q.wnconnectivity.clone(),
        transferring_limit: q.transferringlimit,
        in_nucleus: false,
        shares_nucleus_storage: false,
        output_storage_site: qs.out_site.and_then(|s| sites.get(s as usize)).cloned(),
        link: Link::Unknown,
        output_endpoint: qs.default_out.and_then(|i| storages.get(i)).map(|st| (st.name.clone(), 0.0)),
        input_endpoints: qs.input_disk.iter().map(status).collect(),
        output_endpoints: qs.output_disk.iter().map(status).collect(),
        software_ok: Ok(()),
        arch_preference_weight: None,
        inactive: false,
        n_pilot: 0,
        num_slots: q.num_slots,
        ups_queue: super::job::is_ups_queue(q),
        n_workers: 0,
        max_io_intensity: None,
        use_only_local_data: catchall_has(&q.catchall, "use_only_local_data"),
        bare_nucleus_only: BareNucleus::from_catchall(&q.catchall) == Some(BareNucleus::Only),
        counts: Default::default(),
        counts_all: Default::default(),
        transferring_to_unwritable_nuclei: 0,
        rt_counts: None,
        cores_running: 0.0,
        cores_starting: 0.0,
        live_count: 0,
        local_input: LocalInput::default(),
        locked: false,
    }
}
