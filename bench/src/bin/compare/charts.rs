//! SVG charts of the in-task rows, drawn with plotters' SVG backend (its
//! text is laid out without font files and drawn by the viewer):
//!
//! - `insert.svg`: insert ns/op against pending timers (log x), every
//!   implementation;
//! - `cancel.svg`: cancel ns/op against pending timers, insertion order and
//!   random order side by side;
//! - `server.svg`: the server rows' timer CPU per message, one bar per
//!   implementation, one panel per connection count.
//!
//! A chart whose rows were not run (see `--only`) is not written.

use std::error::Error;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::harness::config::Config;
use crate::harness::in_task::rows::{cancel_row, insert_row};
use crate::harness::server::rows::server_cpu_row;
use crate::harness::table::{count, Table};
use crate::harness::Imp;

type Res<T> = Result<T, Box<dyn Error>>;

/// One implementation's points (x, y).
type Curve = (Imp, Vec<(f64, f64)>);

/// One implementation's colour, the same in every chart.
fn colour(imp: Imp) -> RGBColor {
    match imp {
        Imp::Hashwheel => RGBColor(0xd6, 0x27, 0x28),
        Imp::HashwheelFree => RGBColor(0xff, 0x7f, 0x0e),
        Imp::HashwheelQueue => RGBColor(0x94, 0x67, 0xbd),
        Imp::Tokio => RGBColor(0x1f, 0x77, 0xb4),
        #[cfg(tokio_unstable)]
        Imp::TokioAlt => RGBColor(0x8c, 0x56, 0x4b),
        Imp::TokioUtil => RGBColor(0x17, 0xbe, 0xcf),
        Imp::Pingora => RGBColor(0x2c, 0xa0, 0x2c),
        Imp::FuturesTimer => RGBColor(0x7f, 0x7f, 0x7f),
        Imp::NoTimer => RGBColor(0, 0, 0),
        Imp::Floor => RGBColor(0xbc, 0xbd, 0x22),
    }
}

/// A short label for a bar.
fn short(imp: Imp) -> &'static str {
    match imp {
        Imp::HashwheelFree => "hashwheel::sleep",
        imp => imp.name(),
    }
}

/// Writes every chart it has rows for into `dir`; returns the files.
pub fn write_all(dir: &Path, cfg: &Config, t: &Table) -> Res<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut out = Vec::new();
    let curve = |row: &dyn Fn(usize) -> String, imp: Imp| -> Vec<(f64, f64)> {
        cfg.sizes
            .iter()
            .filter_map(|&n| Some((n as f64, t.median(&row(n), imp)?)))
            .collect()
    };
    let curves = |row: &dyn Fn(usize) -> String| -> Vec<Curve> {
        crate::harness::in_task::insert_cancel_imps()
            .into_iter()
            .map(|imp| (imp, curve(row, imp)))
            .filter(|(_, c)| !c.is_empty())
            .collect()
    };

    let insert = curves(&insert_row);
    if !insert.is_empty() {
        let path = dir.join("insert.svg");
        lines(
            &path,
            "Insert a pending timer, in a task on 1 worker (process CPU)",
            &[("10–60 s deadlines", insert)],
        )?;
        out.push(path);
    }
    let in_order = curves(&|n| cancel_row(n, false));
    let random = curves(&|n| cancel_row(n, true));
    if !in_order.is_empty() || !random.is_empty() {
        let path = dir.join("cancel.svg");
        lines(
            &path,
            "Cancel a pending timer, in a task on 1 worker (process CPU)",
            &[("insertion order", in_order), ("random order", random)],
        )?;
        out.push(path);
    }
    let panels: Vec<(String, Vec<(Imp, f64)>)> = cfg
        .server_conns
        .iter()
        .map(|&c| {
            let bars = Imp::SERVER
                .iter()
                .copied()
                .filter_map(|imp| Some((imp, t.median(&server_cpu_row(c), imp)?)))
                .collect::<Vec<_>>();
            (format!("{} connections", count(c)), bars)
        })
        .filter(|(_, b)| !b.is_empty())
        .collect();
    if !panels.is_empty() {
        let path = dir.join("server.svg");
        bars(
            &path,
            &format!(
                "Server, {} msg/s on 2 workers: timer CPU per message (run − no-timer run)",
                count(cfg.server_rate as usize)
            ),
            &panels,
        )?;
        out.push(path);
    }
    Ok(out)
}

/// One panel per entry of `panels`, side by side: ns/op against pending
/// timers, log x, one line per implementation.
fn lines(path: &Path, title: &str, panels: &[(&str, Vec<Curve>)]) -> Res<()> {
    let width = 120 + 560 * panels.len() as u32;
    let root = SVGBackend::new(path, (width, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 20))?;
    let all = || panels.iter().flat_map(|p| &p.1).flat_map(|c| &c.1);
    let x_lo = all().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x_hi = all().map(|p| p.0).fold(0.0, f64::max);
    let y_hi = all().map(|p| p.1).fold(0.0, f64::max) * 1.45;
    for (area, (sub, curves)) in root.split_evenly((1, panels.len())).iter().zip(panels) {
        let mut chart = ChartBuilder::on(area)
            .caption(*sub, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d((x_lo * 0.8..x_hi * 1.25).log_scale(), 0.0..y_hi.max(1.0))?;
        chart
            .configure_mesh()
            .x_desc("pending timers")
            .y_desc("ns/op")
            .x_label_formatter(&|x| count(round_count(*x)))
            .draw()?;
        for (imp, points) in curves {
            let c = colour(*imp);
            chart
                .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))?
                .label(imp.name())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
                });
            chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, c.filled())))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// A tick value of the log axis as a round count (10k, 1M, …).
fn round_count(x: f64) -> usize {
    let p = 10f64.powf(x.log10().floor());
    ((x / p).round() * p) as usize
}

/// One panel per entry of `panels`: a bar per implementation, with its
/// value written above it.
fn bars(path: &Path, title: &str, panels: &[(String, Vec<(Imp, f64)>)]) -> Res<()> {
    let width = 200 + 480 * panels.len() as u32;
    let root = SVGBackend::new(path, (width, 460)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 18))?;
    let values = || panels.iter().flat_map(|p| &p.1).map(|b| b.1);
    let hi = values().fold(0.0, f64::max).max(1.0) * 1.2;
    let lo = values().fold(0.0, f64::min) * 1.2;
    for (area, (sub, bars)) in root.split_evenly((1, panels.len())).iter().zip(panels) {
        let n = bars.len();
        let mut chart = ChartBuilder::on(area)
            .caption(sub, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            // An integer range holds both ends: 0..n - 1 is n segments.
            .build_cartesian_2d((0..n - 1).into_segmented(), lo..hi)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n)
            .y_desc("timer CPU per message (ns)")
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) if *i < n => short(bars[*i].0).to_string(),
                _ => String::new(),
            })
            .draw()?;
        chart.draw_series(bars.iter().enumerate().map(|(i, &(imp, v))| {
            let mut r = Rectangle::new(
                [
                    (SegmentValue::Exact(i), 0.0),
                    (SegmentValue::Exact(i + 1), v),
                ],
                colour(imp).filled(),
            );
            r.set_margin(0, 0, 14, 14);
            r
        }))?;
        chart.draw_series(bars.iter().enumerate().map(|(i, &(_, v))| {
            Text::new(
                format!("{v:.0}"),
                (SegmentValue::CenterOf(i), v.max(0.0) + hi * 0.03),
                ("sans-serif", 14).into_font().color(&BLACK),
            )
        }))?;
    }
    root.present()?;
    Ok(())
}
