//! `pilotsim import`: real configuration into scenario fragments; `pilotsim generate`:
//! generated scenarios.

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
            let text = pilotsim::scenario::input::read_text(&file).with_context(|| file.display().to_string())?;
            let cfg = dirac_cfg::import(&text)
                .map_err(|e| anyhow::anyhow!("{}:{}:{}: {}", file.display(), e.line, e.col, e.kind))?;
            for w in &cfg.warnings {
                eprintln!("{}:{w}", file.display());
            }
            out!("{}", dirac_cfg::to_ron_fragment(&cfg));
            Ok(Outcome::Success)
        }
        Import::Gdpconfig { file, vo } => {
            let text = pilotsim::scenario::input::read_text(&file).with_context(|| file.display().to_string())?;
            let imported = gdpconfig::import(&text, &vo).map_err(|e| match e {
                gdpconfig::ImportError::Syntax { .. } => anyhow::anyhow!("{}:{e}", file.display()),
                gdpconfig::ImportError::Row { .. } => anyhow::anyhow!("{}: {e}", file.display()),
            })?;
            for w in &imported.warnings {
                eprintln!("{}: warning: {w}", file.display());
            }
            out!("{}", gdpconfig::to_ron_fragment(&imported).map_err(anyhow::Error::msg)?);
            Ok(Outcome::Success)
        }
        Import::Cric { files, gflops_per_core, default_mbps } => {
            if !(gflops_per_core.is_finite() && gflops_per_core > 0.0) {
                anyhow::bail!("--gflops-per-core {gflops_per_core}: must be a positive number");
            }
            if !(default_mbps.is_finite() && default_mbps > 0.0) {
                anyhow::bail!("--default-mbps {default_mbps}: must be a positive number");
            }
            let mut texts = Vec::with_capacity(files.len());
            for f in &files {
                let text = pilotsim::scenario::input::read_text(f).with_context(|| f.display().to_string())?;
                texts.push((f.display().to_string(), text));
            }
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
