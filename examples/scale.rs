//! The scale benchmark: per size of a generated week — `--kind dirac`
//! (default), the DIRAC week of `scenario::generate` (`pilotsim generate scale`), or `--kind
//! atlas`, the ATLAS week under PanDA of `scenario::generate_atlas` (`pilotsim generate atlas`)
//! — the time of each phase of a run — load (parse + validate), build (the WMSs set up, every
//! job drawn and tabled: `sim::build`), event loop (`sim::run_to_end`), check (invariants),
//! write (every output) — the cost per event of the event loop (first run, and warm: the
//! median of repeated loops in the same process for a week of under 2·10⁶ events, which one
//! cold run of a few milliseconds measures badly), the simulation's (build and
//! loop) per job (the generated DIRAC weeks scale the director with the slots, so their event
//! mix is alike: 4 to 7 events per job, five to six jobs per pilot), and
//! memory: the peak of the process, and the growth during the simulation per job.
//!
//! ```text
//! cargo run --release --example scale -- [--kind dirac|atlas] [--sizes 1e4,1e5,1e6] [--runs 3] [--no-write] [--out DIR]
//! ```
//!
//! Each size runs in a child process of its own (so peak memory is that size's), `--runs`
//! times; the table gives medians (memory of the first run; it is deterministic up to the
//! allocator). Prints a Markdown table for the README's performance section. The PanDA table
//! adds the jobs PanDA created (the size is the generator's `--jobs`; JEDI creates about half of
//! them within the week), the rows of `brokerage.parquet` and the transfers on the network, and
//! gives the memory per created job, and a second table: the event loop's time per PanDA agent
//! (`wms::panda::agent_times`) and in the world, ns per event.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use pilotsim::engine::{SimDuration, SimTime};
use pilotsim::metrics::RunMeta;
use pilotsim::run::Finished;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let kind = match value("--kind").as_deref() {
        None | Some("dirac") => Kind::Dirac,
        Some("atlas") => Kind::Atlas,
        Some(k) => fail(&format!("unknown --kind {k:?} (dirac or atlas)")),
    };
    if let Some(n) = value("--one") {
        let jobs = parse_count(&n);
        let out = value("--out").map(PathBuf::from);
        one(kind, jobs, out);
        return;
    }
    let sizes: Vec<u64> =
        value("--sizes").unwrap_or_else(|| "1e4,1e5,1e6".into()).split(',').map(parse_count).collect();
    let runs: usize = value("--runs").and_then(|r| r.parse().ok()).unwrap_or(3).max(1);
    let write = !args.iter().any(|a| a == "--no-write");
    let out_root = value("--out").map_or_else(|| std::env::temp_dir().join("pilotsim-scale"), PathBuf::from);
    let exe = std::env::current_exe().expect("own path");
    match kind {
        Kind::Dirac => {
            println!(
                "| jobs | events | load s | build s | event loop s | ns/event | warm ns/event | µs/job | check s | write s | whole s | peak MiB | sim bytes/job |"
            );
            println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        }
        Kind::Atlas => {
            println!(
                "| --jobs | PanDA jobs | events | brokerage rows | transfers | load s | build s | event loop s | ns/event | warm ns/event | µs/job | check s | write s | whole s | peak MiB | sim bytes/job |"
            );
            println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        }
    }
    let mut agent_rows = Vec::new();
    for jobs in sizes {
        let mut rows: Vec<Row> = Vec::new();
        for _ in 0..runs {
            let mut cmd = Command::new(&exe);
            cmd.args(["--one", &jobs.to_string(), "--kind", kind.name()]);
            if write {
                cmd.arg("--out").arg(out_root.join(format!("{}_{jobs}", kind.name())));
            }
            let t = Instant::now();
            let output = cmd.output().expect("run the child");
            let whole = t.elapsed().as_secs_f64();
            if !output.status.success() {
                eprintln!("size {jobs}: {}", String::from_utf8_lossy(&output.stderr));
                std::process::exit(1);
            }
            let mut row = Row::parse(&String::from_utf8_lossy(&output.stdout));
            row.whole = whole - row.warm_spent;
            rows.push(row);
        }
        let med = |f: &dyn Fn(&Row) -> f64| {
            let mut v: Vec<f64> = rows.iter().map(f).collect();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let r0 = &rows[0];
        let lead = match kind {
            Kind::Dirac => format!("| {jobs} | {} |", r0.events),
            Kind::Atlas => {
                format!("| {jobs} | {} | {} | {} | {} |", r0.jobs, r0.events, r0.brokerage_rows, r0.transfers)
            }
        };
        let per_job = match kind {
            Kind::Dirac => jobs as f64,
            Kind::Atlas => r0.jobs.max(1) as f64,
        };
        println!(
            "{lead} {:.2} | {:.2} | {:.2} | {:.0} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0} | {:.0} |",
            med(&|r| r.load),
            med(&|r| r.build),
            med(&|r| r.simulate),
            med(&|r| r.simulate * 1e9 / r.events as f64),
            med(&|r| r.warm * 1e9 / r.events as f64),
            med(&|r| (r.build + r.simulate) * 1e6 / per_job),
            med(&|r| r.check),
            med(&|r| r.write),
            med(&|r| r.whole),
            r0.peak_kib / 1024.0,
            r0.sim_growth_kib * 1024.0 / per_job,
        );
        if !r0.agents.is_empty() {
            let names: Vec<String> = r0.agents.iter().map(|(n, _)| n.clone()).collect();
            let spent: Vec<f64> = (0..names.len()).map(|i| med(&|r| r.agents.get(i).map_or(0.0, |a| a.1))).collect();
            let rest = med(&|r| r.simulate) - spent.iter().sum::<f64>();
            agent_rows.push((jobs, names, spent, rest, med(&|r| r.events as f64)));
        }
    }
    // Where PanDA's event loop spends its time: each agent's callbacks, and the rest (the
    // world: event queue, grid, batch state machine, network), ns per event.
    if let Some((_, names, _, _, _)) = agent_rows.first() {
        println!();
        println!("PanDA's event loop by agent, ns/event (the world: event queue, grid, network):");
        println!("| --jobs | {} | the world |", names.join(" | "));
        println!("|---:|{}---:|", "---:|".repeat(names.len()));
        for (jobs, _, spent, rest, events) in &agent_rows {
            let cells: Vec<String> = spent.iter().map(|s| format!("{:.0}", s * 1e9 / events)).collect();
            println!("| {jobs} | {} | {:.0} |", cells.join(" | "), rest * 1e9 / events);
        }
    }
}

/// Which generated week.
#[derive(Clone, Copy)]
enum Kind {
    /// `pilotsim generate scale`: DIRAC.
    Dirac,
    /// `pilotsim generate atlas`: PanDA on the ATLAS grid.
    Atlas,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Dirac => "dirac",
            Kind::Atlas => "atlas",
        }
    }

    /// The scenario's RON text at `jobs` jobs.
    fn scenario(self, jobs: u64) -> String {
        match self {
            Kind::Dirac => pilotsim::scenario::generate::scale_scenario(jobs),
            Kind::Atlas => pilotsim::scenario::generate_atlas::atlas_scenario(jobs)
                .unwrap_or_else(|e| fail(&format!("generate atlas: {e}"))),
        }
    }
}

/// The world's PanDA instances.
fn panda_of(world: &mut pilotsim::sim::World) -> impl Iterator<Item = &mut pilotsim::wms::panda::PandaWms> {
    world.wms.iter_mut().filter_map(|w| {
        let any: &mut dyn std::any::Any = w.as_mut();
        any.downcast_mut::<pilotsim::wms::panda::PandaWms>()
    })
}

/// Rows of the PanDA instance's `brokerage.parquet` (0 without PanDA).
fn brokerage_rows(world: &pilotsim::sim::World) -> usize {
    world
        .wms
        .iter()
        .filter_map(|w| {
            let any: &dyn std::any::Any = w.as_ref();
            any.downcast_ref::<pilotsim::wms::panda::PandaWms>()
        })
        .map(|p| p.record().table_rows())
        .sum()
}

/// One size in this process: prints `key=value` lines.
fn one(kind: Kind, jobs: u64, out: Option<PathBuf>) {
    let text = kind.scenario(jobs);
    let base = status_kib("VmRSS:");
    let t = Instant::now();
    let loaded = pilotsim::scenario::load_str(&text, "generated").unwrap_or_else(|e| fail(&e.to_string()));
    let load = t.elapsed().as_secs_f64();
    let s = &loaded.scenario;
    let t = Instant::now();
    let mut world = pilotsim::sim::build(s, s.seed).unwrap_or_else(|p| fail(&format!("{p:?}")));
    let build = t.elapsed().as_secs_f64();
    for p in panda_of(&mut world) {
        p.times.enabled = true;
    }
    let t = Instant::now();
    pilotsim::sim::run_to_end(&mut world, |_, _| {});
    let simulate = t.elapsed().as_secs_f64();
    for p in panda_of(&mut world) {
        for (agent, spent) in p.times.spent() {
            println!("agent_{}={}", agent.name(), spent.as_secs_f64());
        }
    }
    let after_sim = status_kib("VmHWM:");
    let t = Instant::now();
    let broken = pilotsim::sim::check_invariants(&world);
    let check = t.elapsed().as_secs_f64();
    if !broken.is_empty() {
        fail(&broken[0]);
    }
    let events = world.core.events;
    println!("jobs={}", world.core.jobs.len());
    println!("brokerage_rows={}", brokerage_rows(&world));
    println!("transfers={}", world.core.network.transfer_count());
    let mut write = 0.0;
    if let Some(dir) = out {
        let meta = RunMeta {
            scenario: s.name.clone(),
            scenario_sha256: loaded.sha256.clone(),
            seed: s.seed,
            pilotsim_version: pilotsim::VERSION,
            digest: world.core.digest.hex(),
            events,
            wall_seconds: build + simulate,
            end: SimTime::ZERO + SimDuration::from_secs_f64(s.duration_s),
            origin: loaded.origin.clone(),
            overrides: Vec::new(),
        };
        let mut finished = Finished { world, meta };
        let t = Instant::now();
        finished.write(&dir).unwrap_or_else(|e| fail(&format!("{e:#}")));
        write = t.elapsed().as_secs_f64();
    }
    println!("events={events}");
    println!("load={load}");
    println!("build={build}");
    println!("simulate={simulate}");
    let t = Instant::now();
    println!("warm={}", warm_loop(s, events).unwrap_or(simulate));
    // Not part of a run: the parent takes it off the process's wall time.
    println!("warm_spent={}", t.elapsed().as_secs_f64());
    println!("check={check}");
    println!("write={write}");
    println!("peak_kib={}", status_kib("VmHWM:"));
    println!("sim_growth_kib={}", after_sim.saturating_sub(base));
}

/// The event loop's median time over repeated builds and loops in this (warm) process, for a
/// week of fewer than 2·10⁶ events: a 15 ms loop timed once in a fresh process measures its
/// cold caches and the machine's noise more than its events (10⁴ jobs: 337 ns/event cold,
/// 229 warm). Runs after the outputs are written, so the peak and the phases above are the
/// first run's. `None` for a bigger week, whose first run is its measure.
fn warm_loop(s: &pilotsim::scenario::Scenario, events: u64) -> Option<f64> {
    let reps = (2_000_000 / events.max(1)).min(41) as usize;
    if reps < 3 {
        return None;
    }
    let mut loops: Vec<f64> = (0..reps)
        .map(|_| {
            let mut world = pilotsim::sim::build(s, s.seed).unwrap_or_else(|p| fail(&format!("{p:?}")));
            let t = Instant::now();
            pilotsim::sim::run_to_end(&mut world, |_, _| {});
            t.elapsed().as_secs_f64()
        })
        .collect();
    loops.sort_by(f64::total_cmp);
    Some(loops[reps / 2])
}

#[derive(Default)]
struct Row {
    events: u64,
    jobs: u64,
    brokerage_rows: u64,
    transfers: u64,
    load: f64,
    build: f64,
    simulate: f64,
    warm: f64,
    warm_spent: f64,
    check: f64,
    write: f64,
    whole: f64,
    peak_kib: f64,
    sim_growth_kib: f64,
    /// PanDA's agents: (name, seconds in its callbacks).
    agents: Vec<(String, f64)>,
}

impl Row {
    fn parse(text: &str) -> Row {
        let mut r = Row::default();
        for line in text.lines() {
            let Some((k, v)) = line.split_once('=') else { continue };
            let x: f64 = v.trim().parse().unwrap_or(f64::NAN);
            if let Some(agent) = k.strip_prefix("agent_") {
                r.agents.push((agent.to_string(), x));
                continue;
            }
            match k {
                "events" => r.events = x as u64,
                "jobs" => r.jobs = x as u64,
                "brokerage_rows" => r.brokerage_rows = x as u64,
                "transfers" => r.transfers = x as u64,
                "load" => r.load = x,
                "build" => r.build = x,
                "simulate" => r.simulate = x,
                "warm" => r.warm = x,
                "warm_spent" => r.warm_spent = x,
                "check" => r.check = x,
                "write" => r.write = x,
                "peak_kib" => r.peak_kib = x,
                "sim_growth_kib" => r.sim_growth_kib = x,
                _ => {}
            }
        }
        r
    }
}

/// A field of /proc/self/status in KiB (0 where there is no procfs).
fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with(field)).and_then(|l| l.split_whitespace().nth(1)?.parse().ok()))
        .unwrap_or(0)
}

fn parse_count(s: &str) -> u64 {
    s.parse::<u64>()
        .ok()
        .or_else(|| s.parse::<f64>().ok().map(|x| x as u64))
        .unwrap_or_else(|| fail(&format!("bad size {s:?}")))
}

fn fail(msg: &str) -> ! {
    eprintln!("{msg}");
    std::process::exit(2)
}
