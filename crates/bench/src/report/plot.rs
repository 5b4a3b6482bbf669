//! SVG charts of benchmark results (text in SVG needs no font files on the machine).

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

/// Draws the latency CDF of each named histogram on one chart (x: latency in ms, log scale;
/// y: fraction of requests at or below).
pub fn write_latency_cdf_svg(
    path: &Path,
    title: &str,
    series: &[(&str, &LatencyHistogram)],
) -> Result<(), PlotError> {
    let err = |e: &dyn std::fmt::Display| PlotError {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let curves: Vec<(&str, Vec<(f64, f64)>)> = series
        .iter()
        .map(|(name, h)| (*name, h.cdf_points()))
        .filter(|(_, pts)| !pts.is_empty())
        .collect();
    let root = SVGBackend::new(path, (900, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let root = root
        .titled(title, ("sans-serif", 22))
        .map_err(|e| err(&e))?;
    draw_cdf(&root, &curves).map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// One run on a throughput-and-CDF chart: its name, (seconds, requests per second) points
/// and its latency histogram.
pub type RunSeries<'a> = (&'a str, &'a [(f64, f64)], &'a LatencyHistogram);

/// Draws throughput over time (left) and the latency CDF (right) of each named run on one
/// SVG: `series` holds (name, (seconds, requests per second) points, latency histogram).
pub fn write_throughput_and_cdf_svg(
    path: &Path,
    title: &str,
    series: &[RunSeries<'_>],
) -> Result<(), PlotError> {
    let err = |e: &dyn std::fmt::Display| PlotError {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let root = SVGBackend::new(path, (1400, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let root = root
        .titled(title, ("sans-serif", 22))
        .map_err(|e| err(&e))?;
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
        .build_cartesian_2d(0.0..max_t, 0.0..max_r)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("seconds into the measured phase")
        .y_desc("answered requests / s")
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (name, timeline, _)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(timeline.to_vec(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
        .map_err(|e| err(&e))?;
    let curves: Vec<(&str, Vec<(f64, f64)>)> = series
        .iter()
        .map(|(name, _, h)| (*name, h.cdf_points()))
        .filter(|(_, pts)| !pts.is_empty())
        .collect();
    draw_cdf(&right, &curves).map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn draw_cdf(
    area: &Area<'_>,
    curves: &[(&str, Vec<(f64, f64)>)],
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
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
    fn writes_an_svg_with_the_series_names() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        for us in 1..200u64 {
            a.record(Duration::from_micros(us * 3));
            b.record(Duration::from_micros(us * 7));
        }
        let dir = std::env::temp_dir().join(format!("bw-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("cdf.svg");
        write_latency_cdf_svg(&path, "test", &[("ours", &a), ("peer", &b)]).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("ours") && svg.contains("peer"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
