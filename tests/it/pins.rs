//! Pinned digests: the event sequence of every shipped scenario at its own seed.
//!
//! A refactor keeps these byte for byte. A commit that changes behaviour on purpose updates
//! the pin in that commit alone and says why in its message (item 1).

use pilotsim::run;
use pilotsim::scenario;

/// (scenario file, `--set` assignments, seed, events processed, digest).
const PINS: &[(&str, &[&str], u64, u64, &str)] = &[
    ("quickstart.ron", &[], 42, 53_360, "8654d47ebec508ba"),
    ("cpu_first_starvation.ron", &[], 5, 18_906, "7d02162f13cf37bf"),
    ("fairshare_corrected.ron", &[], 7, 69_977, "8ef60a6fdc81a59c"),
    ("fairshare_uncorrected.ron", &[], 7, 70_056, "e5219bc257f20568"),
    ("tuning_extra_pilots.ron", &[], 11, 33_828, "7542d37ab432db9d"),
    // DIRAC 9.1.22: every option of the preset in play on the quickstart.
    // Emptied TQs kept until the director's query cleans them all (9.1.22's orphan cleaning).
    ("quickstart.ron", &["dirac.preset=Dirac9"], 42, 53_962, "b10a09dfd06fa283"),
    // DIRAC 9 with the 2009 code's shares in the recalculations at TQ creation and deletion:
    // the DIRAC 9 pin before the process-local default share 1000 was modelled.
    (
        "quickstart.ron",
        &["dirac.preset=Dirac9", "dirac.priority.entity_recalculation_shares=Configured"],
        42,
        54_612,
        "24a870ebab8bf92d",
    ),
    // The PanDA WMS: brokerage, Harvester, dispatch, transfers, copyArchive.
    ("panda_quickstart.ron", &[], 4, 21_635, "0785f640c2d26a4c"),
    // LHCb's DIRAC and ATLAS's PanDA on one grid.
    ("two_vo.ron", &[], 21, 63_960, "8dfa09d5359b8f59"),
    // 100 recorded BNL jobs replayed.
    ("panda_replay_bnl.ron", &[], 24, 107_029, "4bdd778b4f019a84"),
    // Pilot factories: generic vs startd pilots; startd VMs with suspensions.
    ("factory_efficiency.ron", &[], 3, 698_581, "33b6525fb11d0691"),
    ("factory_analysis.ron", &[], 31, 233_387, "8eabdef4f670842f"),
    // Standby startd pilots under a changing load, adaptive controller.
    ("factory_standby.ron", &[], 37, 753_031, "ca92ae721d1af052"),
];

#[test]
fn shipped_scenarios_keep_their_pinned_digests() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut wrong = Vec::new();
    for &(file, sets, seed, events, digest) in PINS {
        let loaded = scenario::load_file(&dir.join(file)).unwrap();
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let prepared = run::prepare(&loaded, &sets).unwrap();
        let f = run::simulate(&prepared, seed, |_, _| {}).unwrap();
        if (f.meta.events, f.meta.digest.as_str()) != (events, digest) {
            wrong.push(format!("{file} {sets:?} seed {seed}: {} events, digest {}", f.meta.events, f.meta.digest));
        }
    }
    assert!(wrong.is_empty(), "pinned digests changed:\n{}", wrong.join("\n"));
}
