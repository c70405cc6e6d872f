//! `target/bench/results.png`: four bar charts of the run (Wharf vs baseline).
//!
//! plotters draws text with `ab_glyph` from a TrueType font read at run time
//! (DejaVu Sans, Debian's `fonts-dejavu-core`), so the build needs no system
//! font libraries. Without the font the plot is skipped with a message.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use plotters::style::FontStyle;

/// Where the font is looked for, first match wins.
const FONTS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
];

/// One bar chart: categories, each with a Wharf and (optionally) a baseline bar.
pub struct Panel {
    pub title: String,
    pub unit: String,
    pub log: bool,
    pub categories: Vec<String>,
    pub wharf: Vec<f64>,
    /// Same length as `wharf`; `NAN` where the baseline has no counterpart.
    pub baseline: Vec<f64>,
    /// Legend names of the two series.
    pub series: (&'static str, &'static str),
}

/// Registers the font; false (with a message) if none is installed.
fn load_font() -> bool {
    for path in FONTS {
        if let Ok(bytes) = std::fs::read(path) {
            // plotters keeps fonts for the life of the process.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                return true;
            }
        }
    }
    eprintln!(
        "no DejaVu Sans font found (apt-get install fonts-dejavu-core): skipping results.png"
    );
    false
}

/// Draws the panels in a 2x2 grid into `path`; returns whether a file was written.
pub fn draw(path: &Path, heading: &str, panels: &[Panel]) -> Result<bool> {
    if !load_font() {
        return Ok(false);
    }
    let root = BitMapBackend::new(path, (1600, 1100)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
    let root = root
        .titled(heading, ("sans-serif", 24))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    for (area, panel) in root.split_evenly((2, 2)).iter().zip(panels) {
        draw_panel(area, panel).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    root.present()
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(true)
}

type Area<'a> = DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>;

fn draw_panel(area: &Area<'_>, panel: &Panel) -> Result<(), Box<dyn std::error::Error>> {
    let values = panel
        .wharf
        .iter()
        .chain(&panel.baseline)
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0);
    let max = values.clone().fold(f64::MIN, f64::max).max(1e-9);
    let min = values.fold(f64::MAX, f64::min).min(max);
    let n = panel.categories.len() as f64;
    let categories = panel.categories.clone();
    let label = move |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < categories.len() {
            categories[i as usize].clone()
        } else {
            String::new()
        }
    };
    let colours = [RGBColor(31, 119, 180), RGBColor(255, 127, 14)];
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(&panel.title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(70);
    let series = [
        (&panel.wharf, panel.series.0, -0.38),
        (&panel.baseline, panel.series.1, 0.0),
    ];
    if panel.log {
        let floor = min / 2.0;
        let mut chart =
            builder.build_cartesian_2d(-0.5f64..n - 0.5, (floor..max * 2.0).log_scale())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(panel.categories.len() + 1)
            .x_label_formatter(&label)
            .y_desc(panel.unit.as_str())
            .label_style(("sans-serif", 14))
            .draw()?;
        for ((values, name, offset), colour) in series.into_iter().zip(colours) {
            chart
                .draw_series(
                    values
                        .iter()
                        .enumerate()
                        .filter(|(_, v)| v.is_finite())
                        .map(|(i, v)| {
                            let x = i as f64 + offset;
                            Rectangle::new([(x, floor), (x + 0.38, *v)], colour.filled())
                        }),
                )?
                .label(name)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 6), (x + 12, y + 6)], colour.filled())
                });
        }
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE)
            .label_font(("sans-serif", 14))
            .draw()?;
    } else {
        let mut chart = builder.build_cartesian_2d(-0.5f64..n - 0.5, 0f64..max * 1.15)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(panel.categories.len() + 1)
            .x_label_formatter(&label)
            .y_desc(panel.unit.as_str())
            .label_style(("sans-serif", 14))
            .draw()?;
        for ((values, name, offset), colour) in series.into_iter().zip(colours) {
            chart
                .draw_series(
                    values
                        .iter()
                        .enumerate()
                        .filter(|(_, v)| v.is_finite())
                        .map(|(i, v)| {
                            let x = i as f64 + offset;
                            Rectangle::new([(x, 0.0), (x + 0.38, *v)], colour.filled())
                        }),
                )?
                .label(name)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 6), (x + 12, y + 6)], colour.filled())
                });
        }
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE)
            .label_font(("sans-serif", 14))
            .draw()?;
    }
    Ok(())
}
