//! Line plots of result trajectories, as SVG or PNG, with the `plotters` crate.
//!
//! Fonts: plotters' default text support (`ttf` feature) looks fonts up through fontconfig,
//! which a fresh machine may not have. We build plotters without it and with its `ab_glyph`
//! feature instead, and register DejaVu Sans (freely redistributable, Bitstream Vera licence,
//! `assets/DejaVuSans-LICENSE.txt`) embedded in the binary with `include_bytes!`. So both
//! backends work without any system font: the SVG backend writes text as `<text>` elements (the
//! font only measures them), the PNG backend rasterises the glyphs itself.

use crate::compare::tube_at;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
static REGISTER_FONT: Once = Once::new();

/// Family name under which the embedded font is registered.
const FAMILY: &str = "sans-serif";

fn ensure_font() {
    REGISTER_FONT.call_once(|| {
        // The embedded file is a valid TrueType font; a failure would only lose the text.
        let _ = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT);
    });
}

/// How a curve is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// A normal trajectory, coloured from the palette.
    Normal,
    /// A reference: black.
    Reference,
    /// A tube edge: thin grey.
    TubeEdge,
}

/// One curve of a plot.
#[derive(Clone, Debug)]
pub struct Curve {
    /// Legend text.
    pub label: String,
    pub time: Vec<f64>,
    pub values: Vec<f64>,
    pub kind: LineKind,
}

impl Curve {
    /// A normal curve.
    pub fn new(label: impl Into<String>, time: Vec<f64>, values: Vec<f64>) -> Self {
        Curve {
            label: label.into(),
            time,
            values,
            kind: LineKind::Normal,
        }
    }
}

/// A plot: curves over time on one pair of axes.
#[derive(Clone, Debug)]
pub struct Plot {
    pub title: String,
    /// Label of the value axis, e.g. `value [rad]`.
    pub y_label: String,
    pub curves: Vec<Curve>,
    pub width: u32,
    pub height: u32,
}

impl Plot {
    /// An empty 1000 x 600 plot.
    pub fn new(title: impl Into<String>, y_label: impl Into<String>) -> Self {
        Plot {
            title: title.into(),
            y_label: y_label.into(),
            curves: Vec::new(),
            width: 1000,
            height: 600,
        }
    }

    /// Render to `path`: `.svg` or `.png` by extension.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        ensure_font();
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let size = (self.width, self.height);
        match ext.as_deref() {
            Some("svg") => self.draw(SVGBackend::new(path, size).into_drawing_area()),
            Some("png") => self.draw(BitMapBackend::new(path, size).into_drawing_area()),
            _ => Err(format!(
                "{}: unknown plot format; use a file name ending in .svg or .png",
                path.display()
            )),
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<(), String> {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("cannot draw the plot: {e}");
        root.fill(&WHITE).map_err(err)?;
        let (x_range, y_range) = self.ranges();
        let mut chart = ChartBuilder::on(&root)
            .caption(&self.title, (FAMILY, 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(75)
            .build_cartesian_2d(x_range, y_range)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("time [s]")
            .y_desc(&self.y_label)
            .label_style((FAMILY, 14))
            .axis_desc_style((FAMILY, 16))
            .draw()
            .map_err(err)?;
        let mut palette_index = 0;
        for curve in &self.curves {
            let style = match curve.kind {
                LineKind::Reference => BLACK.stroke_width(1),
                LineKind::TubeEdge => RGBColor(150, 150, 150).stroke_width(1),
                LineKind::Normal => {
                    palette_index += 1;
                    Palette99::pick(palette_index - 1).stroke_width(2)
                }
            };
            let points = curve
                .time
                .iter()
                .zip(&curve.values)
                .filter(|(t, y)| t.is_finite() && y.is_finite())
                .map(|(&t, &y)| (t, y));
            chart
                .draw_series(LineSeries::new(points, style))
                .map_err(err)?
                .label(curve.label.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        }
        chart
            .configure_series_labels()
            .label_font((FAMILY, 14))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(err)?;
        root.present().map_err(err)
    }

    /// Axis ranges covering all finite points, with a margin; never empty.
    fn ranges(&self) -> (std::ops::Range<f64>, std::ops::Range<f64>) {
        let finite = |xs: &mut dyn Iterator<Item = f64>| {
            xs.filter(|x| x.is_finite())
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                    (lo.min(x), hi.max(x))
                })
        };
        let x = finite(&mut self.curves.iter().flat_map(|c| c.time.iter().copied()));
        let y = finite(&mut self.curves.iter().flat_map(|c| c.values.iter().copied()));
        (padded(x, 0.0), padded(y, 0.05))
    }
}

/// `lo..hi` widened by `margin` of its span; a sensible range when empty or a single value.
fn padded((lo, hi): (f64, f64), margin: f64) -> std::ops::Range<f64> {
    if !(lo.is_finite() && hi.is_finite()) {
        return 0.0..1.0;
    }
    let span = hi - lo;
    if span <= f64::EPSILON * lo.abs().max(hi.abs()).max(1e-300) {
        let half = if lo == 0.0 { 1.0 } else { 0.1 * lo.abs() };
        return lo - half..hi + half;
    }
    lo - margin * span..hi + margin * span
}

/// A comparison plot of one signal: reference, the tube edges and the result.
pub fn comparison_plot(
    signal: &str,
    unit: &str,
    reference: (&[f64], &[f64]),
    result: (&[f64], &[f64]),
    dt: f64,
    dy: f64,
) -> Plot {
    let (ref_t, ref_y) = reference;
    let tube = tube_at(ref_t, ref_y, dt, dy, ref_t);
    let (mut lower, mut upper) = (Vec::new(), Vec::new());
    let mut times = Vec::new();
    for (&t, edges) in ref_t.iter().zip(tube) {
        if let Some((lo, hi)) = edges {
            times.push(t);
            lower.push(lo);
            upper.push(hi);
        }
    }
    let mut plot = Plot::new(format!("{signal}: result vs. reference"), value_label(unit));
    plot.curves.push(Curve {
        kind: LineKind::Reference,
        ..Curve::new("reference", ref_t.to_vec(), ref_y.to_vec())
    });
    plot.curves.push(Curve {
        kind: LineKind::TubeEdge,
        ..Curve::new("tube lower", times.clone(), lower)
    });
    plot.curves.push(Curve {
        kind: LineKind::TubeEdge,
        ..Curve::new("tube upper", times, upper)
    });
    plot.curves
        .push(Curve::new("result", result.0.to_vec(), result.1.to_vec()));
    plot
}

/// `value [unit]`, or `value` when the unit is unknown.
pub fn value_label(unit: &str) -> String {
    if unit.is_empty() {
        "value".to_string()
    } else {
        format!("value [{unit}]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_plot() -> Plot {
        let t: Vec<f64> = (0..200).map(|i| i as f64 * 0.01).collect();
        let y: Vec<f64> = t.iter().map(|t| (5.0 * t).sin()).collect();
        let z: Vec<f64> = t.iter().map(|t| (5.0 * t).cos()).collect();
        let mut plot = Plot::new("sample", value_label("rad"));
        plot.curves.push(Curve::new("run.csv:phi", t.clone(), y));
        plot.curves.push(Curve::new("run.csv:w", t, z));
        plot
    }

    fn temp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("moss-results-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn svg_has_axes_and_legend_text() {
        let path = temp("sample.svg");
        sample_plot().save(&path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"));
        for text in ["run.csv:phi", "run.csv:w", "time [s]", "value [rad]"] {
            assert!(svg.contains(text), "missing {text}");
        }
    }

    #[test]
    fn png_is_a_png_with_ink() {
        let path = temp("sample.png");
        sample_plot().save(&path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        assert!(
            bytes.len() > 5000,
            "suspiciously small PNG: {} bytes",
            bytes.len()
        );
    }

    #[test]
    fn unknown_extension_is_refused() {
        assert!(sample_plot().save(Path::new("x.jpg")).is_err());
    }

    #[test]
    fn degenerate_ranges_are_widened() {
        assert_eq!(padded((2.0, 2.0), 0.05), 1.8..2.2);
        assert_eq!(padded((f64::INFINITY, f64::NEG_INFINITY), 0.05), 0.0..1.0);
        let mut plot = Plot::new("flat", "value");
        plot.curves.push(Curve::new("c", vec![0.0], vec![0.0]));
        assert!(plot.save(&temp("flat.svg")).is_ok());
    }
}
