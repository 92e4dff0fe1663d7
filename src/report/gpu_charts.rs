//! The `gpu_usage` chart of a run whose grid declares GPUs: per GPU model, the GPUs used by
//! jobs (solid) and held by pilots (dashed) over time, against the model's inventory (a grey
//! guide labelled with the count). Its input comes from `gpu_timeseries.parquet`'s samples.

use super::axis::{Axis, TickFormat};
use super::charts::{Line, extent};
use super::frame::{Rendered, render};
use super::scene::{LegendEntry, Sample, Scene, Shape};
use super::style::{ChartError, NO_DATA};
use crate::metrics::RunData;
use crate::metrics::gpus::GpuKinds;

/// Input of [`gpu_usage`]: one entry per model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GpuUsage {
    pub title: String,
    pub end_hours: f64,
    /// (model, GPUs of the model, used by jobs over time, held by pilots over time).
    pub models: Vec<(String, u32, Line, Line)>,
}

/// The chart's input from a run's GPU samples; None when the grid declares no GPU.
pub fn gpu_usage_input(run: &RunData) -> Option<GpuUsage> {
    let kinds = GpuKinds::of(run);
    if kinds.kinds.iter().all(|k| k.2 == 0) {
        return None;
    }
    let models = &kinds.models;
    let mut out: Vec<(String, u32, Line, Line)> = models
        .iter()
        .map(|m| {
            let gpus = kinds.kinds.iter().filter(|k| k.1 == *m).map(|k| k.2).sum();
            let line = || Line { label: m.to_string(), points: Vec::new() };
            (m.to_string(), gpus, line(), line())
        })
        .collect();
    for s in &run.recorder.gpu_samples {
        let t = s.time.as_hours_f64();
        let (held, used) = kinds.per_kind(s);
        let (mut model_used, mut model_held) = (vec![0u32; models.len()], vec![0u32; models.len()]);
        for k in 0..kinds.kinds.len() {
            model_used[kinds.model_index(k)] += used[k];
            model_held[kinds.model_index(k)] += held[k];
        }
        for (m, entry) in out.iter_mut().enumerate() {
            entry.2.points.push((t, f64::from(model_used[m])));
            entry.3.points.push((t, f64::from(model_held[m])));
        }
    }
    Some(GpuUsage {
        title: format!("GPUs — {}", run.meta.label()),
        end_hours: run.meta.end.as_hours_f64(),
        models: out,
    })
}

/// Busy GPUs over time against the inventory, one colour per model.
pub fn gpu_usage(c: &GpuUsage) -> Result<Rendered, ChartError> {
    let points: Vec<(f64, f64)> = c
        .models
        .iter()
        .flat_map(|(_, _, u, h)| u.points.iter().chain(&h.points).copied())
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    let (lo, hi) = extent(points.iter().map(|p| p.0)).unwrap_or((0.0, 0.0));
    let end = if c.end_hours.is_finite() { c.end_hours } else { 0.0 };
    let x = Axis::hours("simulated time [h]", lo.min(0.0), hi.max(end));
    let top = c.models.iter().map(|m| f64::from(m.1)).fold(0.0, f64::max);
    let y = Axis::linear("GPUs", 0.0, if top > 0.0 { top } else { 10.0 }, 0.06, TickFormat::Count);
    let (mut shapes, mut legend) = (Vec::new(), Vec::new());
    // One guide per inventory size, naming every model of that size.
    let mut guides: Vec<(u32, Vec<&str>)> = Vec::new();
    for (color, (model, gpus, used, held)) in c.models.iter().enumerate() {
        shapes.push(Shape::Line { points: used.points.clone(), color });
        shapes.push(Shape::DashedLine { points: held.points.clone(), color });
        match guides.iter_mut().find(|g| g.0 == *gpus) {
            Some(g) => g.1.push(short(model)),
            None => guides.push((*gpus, vec![short(model)])),
        }
        legend.push(LegendEntry::new(format!("{} used by jobs", short(model)), color, Sample::Solid));
        legend.push(LegendEntry::new(format!("{} held by pilots", short(model)), color, Sample::Dashed));
    }
    for (gpus, models) in guides {
        shapes.push(Shape::Guide { y: f64::from(gpus), label: format!("{gpus} {}", models.join(", ")) });
    }
    let note = points.is_empty().then(|| NO_DATA.to_owned());
    render(&Scene { title: c.title.clone(), x, y, shapes, legend, note, colorbar: None })
}

/// A model's name without its vendor words (`NVIDIA A100-SXM4-40GB` → `A100-SXM4-40GB`): its
/// last word.
fn short(model: &str) -> &str {
    model.split_whitespace().last().unwrap_or(model)
}
