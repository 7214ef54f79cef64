//! `gpuio bench --plot FILE.svg`: two log–log panels drawn by hand as SVG (no
//! plotting crate: a few lines and labels do not need one). Left, throughput (MB/s)
//! against bytes per operation (the whole device's 64 B and 4 KiB operations and
//! its 1 MiB bulk requests); right, operations per second against thread count
//! (64-byte `pwrite` from 1 thread, 64 threads and the whole device). One colour
//! per pair, one dash per series, and one host thread doing the same work in grey
//! (the first pair's same-run reference).

use std::fmt::Write as _;

use super::{Figure, Panel, PlotPoint};

const PANEL_W: f64 = 460.0;
const PANEL_H: f64 = 320.0;
const LEFT: f64 = 70.0;
const TOP: f64 = 56.0;
const GAP: f64 = 110.0;
const COLOURS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
];

/// A line to draw: its label, colour, dash, and points (x, y).
struct Line {
    label: String,
    colour: &'static str,
    dash: &'static str,
    points: Vec<(f64, f64)>,
}

fn dash(series: &str) -> &'static str {
    if series.contains("pread") {
        "6 4"
    } else {
        ""
    }
}

fn lines(pairs: &[(String, Vec<Figure>)], panel: Panel) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::new();
    let mut reference: Vec<Line> = Vec::new();
    for (i, (pair, figures)) in pairs.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let points: Vec<&PlotPoint> = figures
            .iter()
            .flat_map(|f| f.plot.iter())
            .filter(|p| p.panel == panel && p.y > 0.0)
            .collect();
        for p in &points {
            let label = format!("{pair} {}", p.series);
            match out.iter_mut().find(|l| l.label == label) {
                Some(l) => l.points.push((p.x, p.y)),
                None => out.push(Line {
                    label,
                    colour,
                    dash: dash(&p.series),
                    points: vec![(p.x, p.y)],
                }),
            }
            if i == 0 {
                if let Some(r) = p.reference.filter(|r| *r > 0.0) {
                    let label = format!("one host thread, {}", p.series);
                    match reference.iter_mut().find(|l| l.label == label) {
                        Some(l) => l.points.push((p.x, r)),
                        None => reference.push(Line {
                            label,
                            colour: "#888888",
                            dash: if dash(&p.series).is_empty() {
                                "2 3"
                            } else {
                                "6 3 2 3"
                            },
                            points: vec![(p.x, r)],
                        }),
                    }
                }
            }
        }
    }
    out.extend(reference);
    for l in &mut out {
        l.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// Exponents `(lo, hi)` of `base` spanning `lo..hi`, a whole number of `step`s.
fn span(lo: f64, hi: f64, base: f64, step: i32) -> (i32, i32) {
    let log = |v: f64| v.max(1e-12).ln() / base.ln();
    let lo = (log(lo).floor() as i32).div_euclid(step) * step;
    let hi = -((-(log(hi).ceil() as i32)).div_euclid(step) * step);
    (lo, if hi > lo { hi } else { lo + step })
}

fn size_label(x: f64) -> String {
    match x {
        x if x >= 1048576.0 => format!("{} MiB", x / 1048576.0),
        x if x >= 1024.0 => format!("{} KiB", x / 1024.0),
        x => format!("{x} B"),
    }
}

fn count_label(x: f64) -> String {
    match x {
        x if x >= 1e6 => format!("{}M", x / 1e6),
        x if x >= 1e3 => format!("{}k", x / 1e3),
        x => format!("{x}"),
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn panel(
    svg: &mut String,
    x0: f64,
    title: &str,
    xlabel: &str,
    ylabel: &str,
    lines: &[Line],
    sizes: bool,
) {
    let pts = lines.iter().flat_map(|l| l.points.iter());
    let (xs, ys): (Vec<f64>, Vec<f64>) = pts.copied().unzip();
    let fold = |v: &[f64]| {
        v.iter()
            .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)))
    };
    let ((xl, xh), (yl, yh)) = (fold(&xs), fold(&ys));
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" font-size="14" font-weight="bold">{}</text>"#,
        x0,
        TOP - 15.0,
        esc(title)
    );
    let _ = writeln!(
        svg,
        r##"<rect x="{x0}" y="{TOP}" width="{PANEL_W}" height="{PANEL_H}" fill="none" stroke="#333"/>"##
    );
    if xs.is_empty() {
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{}">no data</text>"#,
            x0 + 20.0,
            TOP + 30.0
        );
        return;
    }
    // Sizes on powers of two, a tick every 16×; counts and rates on powers of ten.
    let (xbase, xstep) = if sizes { (2.0f64, 4) } else { (10.0, 1) };
    let (dx0, dx1) = span(xl, xh, xbase, xstep);
    let (dy0, dy1) = span(yl, yh, 10.0, 1);
    let lx = |x: f64| x.ln() / xbase.ln();
    let px = |x: f64| x0 + (lx(x) - f64::from(dx0)) / f64::from(dx1 - dx0) * PANEL_W;
    let py = |y: f64| TOP + PANEL_H - (y.log10() - f64::from(dy0)) / f64::from(dy1 - dy0) * PANEL_H;
    for d in (dx0..=dx1).step_by(xstep as usize) {
        let v = xbase.powi(d);
        let x = px(v);
        let label = if sizes { size_label(v) } else { count_label(v) };
        let _ = writeln!(
            svg,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"##,
            TOP + PANEL_H,
            TOP + PANEL_H + 15.0,
            esc(&label)
        );
    }
    for d in dy0..=dy1 {
        let y = py(10f64.powi(d));
        let _ = writeln!(
            svg,
            r##"<line x1="{x0}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"##,
            x0 + PANEL_W,
            x0 - 5.0,
            y + 4.0,
            count_label(10f64.powi(d))
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text>"#,
        x0 + PANEL_W / 2.0,
        TOP + PANEL_H + 32.0,
        esc(xlabel)
    );
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle" transform="rotate(-90 {:.1} {:.1})">{}</text>"#,
        x0 - 50.0,
        TOP + PANEL_H / 2.0,
        x0 - 50.0,
        TOP + PANEL_H / 2.0,
        esc(ylabel)
    );
    for (i, l) in lines.iter().enumerate() {
        let path: Vec<String> = l
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = writeln!(
            svg,
            r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2" stroke-dasharray="{}"/>"#,
            path.join(" "),
            l.colour,
            l.dash
        );
        for &(x, y) in &l.points {
            let _ = writeln!(
                svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{}"/>"#,
                px(x),
                py(y),
                l.colour
            );
        }
        let ly = TOP + PANEL_H + 50.0 + 15.0 * i as f64;
        let _ = writeln!(
            svg,
            r#"<line x1="{x0}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{}" stroke-width="2" stroke-dasharray="{}"/><text x="{:.1}" y="{:.1}" font-size="11">{}</text>"#,
            x0 + 30.0,
            l.colour,
            l.dash,
            x0 + 36.0,
            ly + 4.0,
            esc(&l.label)
        );
    }
}

/// The SVG document for every pair's figures, titled `title`.
pub fn svg(title: &str, pairs: &[(String, Vec<Figure>)]) -> String {
    let size = lines(pairs, Panel::Size);
    let threads = lines(pairs, Panel::Threads);
    let legend = size.len().max(threads.len()) as f64;
    let width = LEFT + 2.0 * PANEL_W + GAP + 20.0;
    let height = TOP + PANEL_H + 60.0 + 15.0 * legend;
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="{LEFT}" y="16" font-size="13">{}</text>
"#,
        esc(title)
    );
    panel(
        &mut svg,
        LEFT,
        "whole device: throughput against bytes per operation",
        "bytes per operation",
        "MB/s",
        &size,
        true,
    );
    panel(
        &mut svg,
        LEFT + PANEL_W + GAP,
        "64 B pwrite: operations against threads",
        "threads",
        "M ops/s",
        &threads,
        false,
    );
    svg.push_str("</svg>\n");
    svg
}
