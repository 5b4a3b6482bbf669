//! Charts of benchmark results, SVG or PNG by the file's extension. Text is laid out (and,
//! in PNG, drawn) with DejaVu Sans read from the system (Debian package fonts-dejavu-core,
//! which `make` installs); no font is bundled.

use std::path::Path;

use plotters::prelude::*;

use crate::stats::LatencyHistogram;

/// Why a chart could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw {path}: {message}")]
pub struct PlotError {
    path: String,
    message: String,
}

/// Where the TrueType font for chart text is looked for, in order.
const PNG_FONTS: [&str; 3] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
];

/// Registers the chart font once (plotters keeps it for the life of the process).
/// Why the chart font could not be registered.
#[derive(Clone, Copy, Debug, thiserror::Error)]
enum FontError {
    /// None of [`PNG_FONTS`] is there.
    #[error(
        "a chart needs the DejaVu Sans font ({}): install the Debian package fonts-dejavu-core",
        PNG_FONTS[0]
    )]
    Missing,
    /// The file is there but plotters cannot read it.
    #[error("the DejaVu Sans font file is not a valid TrueType font")]
    Invalid,
}

fn register_font() -> Result<(), FontError> {
    static REGISTERED: std::sync::OnceLock<Result<(), FontError>> = std::sync::OnceLock::new();
    *REGISTERED.get_or_init(|| {
        let bytes = PNG_FONTS
            .iter()
            .find_map(|path| std::fs::read(path).ok())
            .ok_or(FontError::Missing)?;
        // Registered fonts live as long as the process: one small leak per run.
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
            .map_err(|_| FontError::Invalid)
    })
}

/// Whether the file is to be a PNG (by its extension; anything else is SVG).
fn is_png(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("png"))
}

/// Runs `$draw` (a generic function taking the root area) on an SVG or a PNG backend of
/// `$size`, as `$path`'s extension says, then writes the file.
macro_rules! draw_file {
    ($path:expr, $size:expr, $draw:expr) => {{
        let path: &Path = $path;
        let err = |message: String| PlotError {
            path: path.display().to_string(),
            message,
        };
        register_font().map_err(|e| err(e.to_string()))?;
        if is_png(path) {
            let root = BitMapBackend::new(path, $size).into_drawing_area();
            $draw(&root).map_err(|e| err(e.to_string()))?;
            root.present().map_err(|e| err(e.to_string()))
        } else {
            let root = SVGBackend::new(path, $size).into_drawing_area();
            $draw(&root).map_err(|e| err(e.to_string()))?;
            root.present().map_err(|e| err(e.to_string()))
        }
    }};
}

type Area<DB> = DrawingArea<DB, plotters::coord::Shift>;
type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

fn cdf_curves<'a>(series: &[(&'a str, &LatencyHistogram)]) -> Vec<(&'a str, Vec<(f64, f64)>)> {
    series
        .iter()
        .map(|(name, h)| (*name, h.cdf_points()))
        .filter(|(_, pts)| !pts.is_empty())
        .collect()
}

/// Draws the latency CDF of each named histogram on one chart (x: latency in ms, log scale;
/// y: fraction of requests at or below): SVG, or PNG for a `.png` path.
pub fn write_latency_cdf(
    path: &Path,
    title: &str,
    series: &[(&str, &LatencyHistogram)],
) -> Result<(), PlotError> {
    let curves = cdf_curves(series);
    draw_file!(path, (900, 540), |root| latency_chart(root, title, &curves))
}

fn latency_chart<DB: DrawingBackend>(
    root: &Area<DB>,
    title: &str,
    curves: &[(&str, Vec<(f64, f64)>)],
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 22))?;
    draw_cdf(&root, curves)
}

/// One run on a throughput-and-CDF chart: its name, (seconds, requests per second) points
/// and its latency histogram.
pub type RunSeries<'a> = (&'a str, &'a [(f64, f64)], &'a LatencyHistogram);

/// Draws throughput over time (left) and the latency CDF (right) of each named run on one
/// chart: SVG, or PNG for a `.png` path. `series` holds (name, (seconds, requests per
/// second) points, latency histogram).
pub fn write_throughput_and_cdf(
    path: &Path,
    title: &str,
    series: &[RunSeries<'_>],
) -> Result<(), PlotError> {
    draw_file!(path, (1400, 540), |root| throughput_chart(
        root, title, series
    ))
}

fn throughput_chart<DB: DrawingBackend>(
    root: &Area<DB>,
    title: &str,
    series: &[RunSeries<'_>],
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 22))?;
    let (left, right) = root.split_horizontally(700);
    let max_t = series
        .iter()
        .flat_map(|(_, t, _)| t.iter().map(|p| p.0))
        .fold(1.0, f64::max);
    let max_r = series
        .iter()
        .flat_map(|(_, t, _)| t.iter().map(|p| p.1))
        .fold(1.0, f64::max)
        * 1.1;
    let mut chart = ChartBuilder::on(&left)
        .caption("throughput", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..max_t, 0.0..max_r)?;
    chart
        .configure_mesh()
        .x_desc("seconds into the measured phase")
        .y_desc("answered requests / s")
        .draw()?;
    for (i, (name, timeline, _)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(timeline.to_vec(), color.stroke_width(2)))?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()?;
    let cdf_series: Vec<(&str, &LatencyHistogram)> =
        series.iter().map(|(name, _, h)| (*name, *h)).collect();
    draw_cdf(&right, &cdf_curves(&cdf_series))
}

fn draw_cdf<DB: DrawingBackend>(
    area: &Area<DB>,
    curves: &[(&str, Vec<(f64, f64)>)],
) -> DrawResult<DB> {
    let min_x = curves
        .iter()
        .flat_map(|(_, p)| p.iter().map(|x| x.0))
        .fold(f64::INFINITY, f64::min)
        .max(1e-4);
    let max_x = curves
        .iter()
        .flat_map(|(_, p)| p.iter().map(|x| x.0))
        .fold(0.0, f64::max)
        .max(min_x * 10.0);
    let mut chart = ChartBuilder::on(area)
        .caption("latency CDF", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d((min_x..max_x).log_scale(), 0.0..1.0)?;
    chart
        .configure_mesh()
        .x_desc("latency (ms, log scale)")
        .y_desc("fraction of requests")
        .draw()?;
    for (i, (name, points)) in curves.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn writes_svg_and_png_charts() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        for us in 1..200u64 {
            a.record(Duration::from_micros(us * 3));
            b.record(Duration::from_micros(us * 7));
        }
        let dir = std::env::temp_dir().join(format!("bw-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("cdf.svg");
        write_latency_cdf(&path, "test", &[("ours", &a), ("peer", &b)]).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("ours") && svg.contains("peer"));
        // The same chart as PNG: a real image of the chart's size, with pixels of the
        // series' colours, not only the white background.
        let png = dir.join("cdf.png");
        write_latency_cdf(&png, "test", &[("ours", &a), ("peer", &b)]).unwrap();
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&bytes[16..24], &[0, 0, 3, 132, 0, 0, 2, 28], "900 x 540");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
