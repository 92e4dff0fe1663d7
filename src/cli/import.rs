//! `pilotsim import`: real configuration into scenario fragments; `pilotsim generate`:
//! generated scenarios.

use std::path::{Path, PathBuf};

use anyhow::Context;
use pilotsim::panda::gdpconfig;
use pilotsim::scenario::{cric, dirac_cfg};

use super::Outcome;
use super::args::{Generate, Import};
use super::out::out;

/// Print the RON fragment of a DIRAC CS file; a syntax error is `FILE:LINE:COL: message`.
pub fn run(import: Import) -> anyhow::Result<Outcome> {
    match import {
        Import::DiracCfg { file } => {
            let cfg = read_dirac_cfg(&file)?;
            out!("{}", dirac_cfg::to_ron_fragment(&cfg));
            Ok(Outcome::Success)
        }
        Import::Gdpconfig { file, vo } => {
            let imported = read_gdpconfig(&file, &vo)?;
            out!("{}", gdpconfig::to_ron_fragment(&imported).map_err(anyhow::Error::msg)?);
            Ok(Outcome::Success)
        }
        Import::Cric { files, gflops_per_core, default_mbps } => {
            if !(gflops_per_core.is_finite() && gflops_per_core > 0.0) {
                anyhow::bail!("--gflops-per-core {gflops_per_core}: must be a positive number");
            }
            check_mbps(default_mbps)?;
            let texts = read_texts(&files)?;
            let opt = cric::Options { gflops_per_core, default_mbps };
            let frag = cric::import(&texts, opt).map_err(|e| anyhow::anyhow!("{e}"))?;
            for w in &frag.warnings {
                eprintln!("warning: {w}");
            }
            out!("{}", cric::to_ron_fragment(&frag, opt));
            Ok(Outcome::Success)
        }
    }
}

/// `--default-mbps` must be a positive number.
pub fn check_mbps(default_mbps: f64) -> anyhow::Result<()> {
    if !(default_mbps.is_finite() && default_mbps > 0.0) {
        anyhow::bail!("--default-mbps {default_mbps}: must be a positive number");
    }
    Ok(())
}

/// Each file's displayed name with its text.
pub fn read_texts(files: &[PathBuf]) -> anyhow::Result<Vec<(String, String)>> {
    files
        .iter()
        .map(|f| {
            let text = pilotsim::scenario::input::read_text(f).with_context(|| f.display().to_string())?;
            Ok((f.display().to_string(), text))
        })
        .collect()
}

/// A DIRAC CS file imported; its warnings printed on stderr as `FILE:LINE:COL: …`.
pub fn read_dirac_cfg(file: &Path) -> anyhow::Result<dirac_cfg::DiracCfgImport> {
    let text = pilotsim::scenario::input::read_text(file).with_context(|| file.display().to_string())?;
    let cfg =
        dirac_cfg::import(&text).map_err(|e| anyhow::anyhow!("{}:{}:{}: {}", file.display(), e.line, e.col, e.kind))?;
    for w in &cfg.warnings {
        eprintln!("{}:{w}", file.display());
    }
    Ok(cfg)
}

/// A gdpconfig dump imported for `vo`; the rows it does not read printed on stderr.
pub fn read_gdpconfig(file: &Path, vo: &str) -> anyhow::Result<gdpconfig::Imported> {
    let text = pilotsim::scenario::input::read_text(file).with_context(|| file.display().to_string())?;
    let imported = gdpconfig::import(&text, vo).map_err(|e| match e {
        gdpconfig::ImportError::Syntax { .. } => anyhow::anyhow!("{}:{e}", file.display()),
        gdpconfig::ImportError::Row { .. } => anyhow::anyhow!("{}: {e}", file.display()),
    })?;
    for w in &imported.warnings {
        eprintln!("{}: warning: {w}", file.display());
    }
    Ok(imported)
}

/// Print a generated scenario.
pub fn generate(generate: Generate) -> anyhow::Result<Outcome> {
    match generate {
        Generate::Scale { jobs } => {
            if jobs < 1000 {
                anyhow::bail!("--jobs {jobs}: the scale scenario needs at least 1000 jobs");
            }
            out!("{}", pilotsim::scenario::generate::scale_scenario(jobs));
            Ok(Outcome::Success)
        }
        Generate::Atlas { jobs } => {
            if jobs < 10_000 {
                anyhow::bail!("--jobs {jobs}: the ATLAS scenario needs at least 10000 jobs");
            }
            let text = pilotsim::scenario::generate_atlas::atlas_scenario(jobs).map_err(|e| anyhow::anyhow!("{e}"))?;
            out!("{text}");
            Ok(Outcome::Success)
        }
    }
}
