//! GPUs end to end on `scenarios/gpu_grid.ron`: PanDA's GPU specs decide which models a job runs
//! on (a model exclusion never runs on that model, an inclusion only on it, a VRAM floor never
//! below it), DIRAC's GPU jobs run only in GPU pilots at GPU CEs, no sample has more GPUs busy
//! than the inventory, and the outputs say it (`gpu_model`, `gpu_timeseries`, `summary.gpus`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use pilotsim::metrics::columns::to_frame;
use pilotsim::metrics::{gpus, tables};
use pilotsim::run;
use pilotsim::scenario;

fn finished(seed: u64) -> run::Finished {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/gpu_grid.ron");
    let loaded = scenario::load_file(&path).unwrap();
    let prepared = run::prepare(&loaded, &[]).unwrap();
    run::simulate(&prepared, seed, |_, _| {}).unwrap()
}

/// Per stream, the GPU models its jobs ran on (from the grid's record of each pilot's GPUs,
/// not from the output columns) and how many jobs.
fn models_by_stream(f: &run::Finished) -> BTreeMap<String, BTreeMap<String, u32>> {
    let c = &f.world.core;
    let ces: Vec<_> = c.grid.ces.iter().collect();
    let mut out: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
    for j in c.jobs.iter().filter(|j| c.streams[j.stream as usize].gpus > 0) {
        let Some(p) = j.pilot() else { continue };
        let (held, entry) = c.grid.gpus.record()[&p];
        assert!(held >= c.streams[j.stream as usize].gpus, "job {} ran in a pilot holding {held} GPUs", j.id);
        let ce = ces[c.grid.pilot(p).ce as usize];
        let model = ce.gpus[usize::from(entry.expect("it ran"))].model.clone();
        *out.entry(c.streams[j.stream as usize].name.clone()).or_default().entry(model).or_default() += 1;
    }
    out
}

#[test]
fn gpu_specs_choose_the_models_jobs_run_on() {
    for seed in [33, 34, 35] {
        let f = finished(seed);
        let by = models_by_stream(&f);
        let ran = |s: &str| by.get(s).cloned().unwrap_or_default();
        let has = |s: &str, m: &str| ran(s).keys().any(|k| k.contains(m));
        // `model: {pattern: .*V100.*, excl: true}`: the queue with V100s is excluded as a whole.
        assert!(!ran("no_v100").is_empty() && !has("no_v100", "V100"), "seed {seed}: {:?}", ran("no_v100"));
        // `model: .*H100.*`: brokered to the mixed A100/H100 queue, dispatched to H100 nodes only.
        assert!(!ran("llm_finetune").is_empty(), "seed {seed}");
        assert!(ran("llm_finetune").keys().all(|m| m.contains("H100")), "seed {seed}: {:?}", ran("llm_finetune"));
        // `vram>=40000`: never on the 16 GB V100s.
        assert!(!ran("gnn_training").is_empty() && !has("gnn_training", "V100"), "seed {seed}");
        // Any NVIDIA GPU: both sites.
        assert!(
            has("fast_inference", "V100") && has("fast_inference", "A100"),
            "seed {seed}: {:?}",
            ran("fast_inference")
        );
        // DIRAC: tag GPU, NumberOfGPUs 1: only GPU pilots at the GPU CEs.
        assert!(!ran("erin_gpu_training").is_empty(), "seed {seed}");
    }
}

#[test]
fn gpu_outputs_agree_with_the_run_and_never_exceed_the_inventory() {
    let mut f = finished(33);
    let expected = models_by_stream(&f);
    let data = f.data();
    // jobs.parquet: `gpus` and `gpu_model` give the same counts as the grid's record.
    let jobs = to_frame(&tables::jobs(&data)).unwrap();
    let (stream, gpus_col, model) =
        (jobs.column("stream").unwrap(), jobs.column("gpus").unwrap(), jobs.column("gpu_model").unwrap());
    let mut counted: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
    for i in 0..jobs.height() {
        let g = gpus_col.get(i).unwrap().try_extract::<u32>().unwrap();
        let m = model.get(i).unwrap();
        if g == 0 {
            assert!(m.is_null(), "a CPU job has a GPU model");
        } else if !m.is_null() {
            let name = stream.get(i).unwrap().get_str().unwrap().to_string();
            *counted.entry(name).or_default().entry(m.get_str().unwrap().to_string()).or_default() += 1;
        }
    }
    assert_eq!(counted, expected);
    // gpu_timeseries: held ≤ inventory and used ≤ held in every sample, per site and model.
    let ts = to_frame(&gpus::timeseries(&data)).unwrap();
    assert!(ts.height() > 0);
    let (inv, held, used) = (ts.column("gpus").unwrap(), ts.column("held").unwrap(), ts.column("used").unwrap());
    let mut peak = 0;
    for i in 0..ts.height() {
        let [n, h, u] = [inv, held, used].map(|c| c.get(i).unwrap().try_extract::<u32>().unwrap());
        assert!(u <= h && h <= n, "row {i}: used {u}, held {h}, inventory {n}");
        peak = peak.max(h);
    }
    assert!(peak > 0, "the GPUs were never used");
    // summary.gpus: 40 GPUs, every kind busy, waits given.
    let s = gpus::summary(&data).unwrap();
    assert_eq!((s.gpus, s.kinds.len(), s.sites.len(), s.models.len()), (40, 3, 2, 3));
    assert!(s.kinds.iter().all(|k| k.utilisation.is_some_and(|u| u > 0.0 && u <= 1.0) && k.jobs_run > 0), "{s:?}");
    assert!(s.kinds.iter().all(|k| k.held_fraction >= k.utilisation), "pilots hold at least what jobs use");
    assert!(s.wait_p50_h.is_some() && s.wait_p95_h >= s.wait_p50_h);
}

#[test]
fn a_cpu_only_run_has_no_gpu_outputs() {
    let loaded = scenario::load_file(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/two_vo.ron")).unwrap();
    let prepared = run::prepare(&loaded, &["duration_s=21600".to_string()]).unwrap();
    let mut f = run::simulate(&prepared, 1, |_, _| {}).unwrap();
    let data = f.data();
    assert!(gpus::summary(&data).is_none() && data.recorder.gpu_samples.is_empty());
}

/// Two CEs at one site: a CPU CE and a GPU CE that DIRAC keeps for GPU jobs (`Tag` and
/// `RequiredTag` GPU, `NumberOfGPUs` 2 per pilot). The director sends two-GPU pilots to the GPU
/// CE only for the GPU task queue; CPU jobs never run there, GPU jobs only there.
#[test]
fn dirac_keeps_a_required_tag_ce_for_gpu_jobs_and_asks_its_number_of_gpus() {
    let text = r#"Scenario(
        name: "dirac_gpu", duration_s: 43200, seed: 5,
        sites: [Site(name: "LCG.S.ch", ces: [
            Ce(name: "cpu-ce", slots: 40, pilot_wait: Fixed(60)),
            Ce(name: "gpu-ce", slots: 16, pilot_wait: Fixed(60), tags: ["GPU"], required_tags: ["GPU"],
               number_of_gpus: 2,
               gpus: [(vendor: "NVIDIA", model: "NVIDIA A100-SXM4-40GB", vram_mb: 40960, gpus_per_node: 4, nodes: 2)]),
        ])],
        dirac: (groups: [(name: "users", job_share: 1000, users: ["u", "v"])]),
        workload: [
            JobStream(name: "cpu", owner: "u", group: "users", count: 400, arrival: Poisson(start_s: 0, rate_per_hour: 100),
                      cpu_work: Exponential(mean: 1800), cpu_time: 20000),
            JobStream(name: "gpu", owner: "v", group: "users", count: 60, arrival: Poisson(start_s: 0, rate_per_hour: 20),
                      cpu_work: Exponential(mean: 3600), cpu_time: 40000, tags: ["GPU"], number_of_gpus: 2),
        ],
    )"#;
    let loaded = scenario::load_str(text, "dirac_gpu").unwrap();
    let mut f = run::simulate(&run::prepare(&loaded, &[]).unwrap(), 5, |_, _| {}).unwrap();
    let c = &f.world.core;
    let gpu_ce = 1;
    for p in &c.grid.pilots {
        let asked = c.grid.gpus.record().get(&p.id).map_or(0, |r| r.0);
        assert_eq!(asked, if p.ce == gpu_ce { 2 } else { 0 }, "pilot {} at CE {}", p.id, p.ce);
    }
    let (mut gpu_ran, mut cpu_ran) = (0, 0);
    for j in c.jobs.iter().filter(|j| j.pilot().is_some()) {
        let gpus = c.streams[j.stream as usize].gpus;
        assert_eq!(j.ce() == Some(gpu_ce), gpus == 2, "job {} of stream {} ran at CE {:?}", j.id, j.stream, j.ce());
        if gpus > 0 {
            gpu_ran += 1;
        } else {
            cpu_ran += 1;
        }
    }
    assert!(gpu_ran > 40 && cpu_ran > 300, "{gpu_ran} GPU and {cpu_ran} CPU jobs ran");
    let s = gpus::summary(&f.data()).unwrap();
    assert_eq!(s.gpus, 8);
    assert!(s.utilisation.is_some_and(|u| u > 0.0) && s.held_fraction >= s.utilisation, "{s:?}");
}

/// Harvester in push mode (`OneToOne`) at a GPU queue: each worker asks one GPU and carries its
/// job; the job is fetched before the worker runs, so it may land on any model of the queue.
#[test]
fn push_mode_gpu_workers_carry_their_job_and_one_gpu() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/gpu_grid.ron");
    let mut loaded = scenario::load_file(&path).unwrap();
    let panda = loaded.scenario.panda.as_mut().unwrap();
    for q in panda.queues.iter_mut().filter(|q| q.worker_gpus() > 0) {
        q.harvester.map_type = pilotsim::panda::harvester::config::MapType::OneToOne;
    }
    assert_eq!(scenario::validate(&loaded.scenario), vec![]);
    let f = run::simulate(&run::prepare(&loaded, &[]).unwrap(), 33, |_, _| {}).unwrap();
    let by = models_by_stream(&f);
    assert!(by.get("fast_inference").is_some_and(|m| !m.is_empty()), "{by:?}");
    assert!(by.get("no_v100").is_some_and(|m| m.keys().all(|k| !k.contains("V100"))), "{by:?}");
    let c = &f.world.core;
    let panda_gpu_pilots = c.grid.gpus.record().keys().filter(|&&p| c.grid.pilot(p).wms == 1).count();
    assert!(panda_gpu_pilots > 0);
}

/// `explain --job` names the GPU model a GPU job ran on, read from `jobs.parquet`.
#[test]
fn explain_names_the_gpu_a_job_ran_on() {
    let mut f = finished(33);
    let dir = std::env::temp_dir().join(format!("pilotsim-gpu-explain-{}", std::process::id()));
    f.write(&dir).unwrap();
    let c = &f.world.core;
    let (job, model) = c
        .jobs
        .iter()
        .find_map(|j| {
            let p = j.pilot().filter(|_| c.streams[j.stream as usize].name == "llm_finetune")?;
            let entry = c.grid.gpus.record()[&p].1?;
            Some((j.id, c.grid.ces[c.grid.pilot(p).ce as usize].gpus[usize::from(entry)].model.clone()))
        })
        .expect("an H100 job ran");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pilotsim"))
        .args(["explain", dir.to_str().unwrap(), "--job", &job.to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains(&format!(", GPU {model}")), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}
