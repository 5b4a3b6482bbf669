//! The human-readable table of a report.

use comfy_table::{Cell, CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};

use super::Report;

/// Renders the results of a report as a table, with the machine on the first line.
pub fn render_table(report: &Report) -> String {
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(vec![
            "measurement",
            "answered",
            "errors",
            "req/s",
            "MiB/s",
            "mean ms",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "max ms",
        ]);
    for m in &report.results {
        let l = &m.latency_ms;
        let mib = m.payload_bytes_per_sec.map_or_else(
            || "-".to_owned(),
            |b| format!("{:.1}", b / (1024.0 * 1024.0)),
        );
        let row = vec![
            Cell::new(&m.name),
            right(m.answered.to_string()),
            right(m.errors.to_string()),
            right(format!("{:.0}", m.throughput_rps)),
            right(mib),
            right(format!("{:.3}", l.mean_ms)),
            right(format!("{:.3}", l.p50_ms)),
            right(format!("{:.3}", l.p95_ms)),
            right(format!("{:.3}", l.p99_ms)),
            right(format!("{:.3}", l.max_ms)),
        ];
        table.add_row(row);
    }
    format!(
        "{}\nmachine: {}\n{table}\n",
        report.benchmark,
        report.machine.one_line()
    )
}

fn right(text: String) -> Cell {
    Cell::new(text).set_alignment(CellAlignment::Right)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{MachineInfo, Measurement};
    use crate::stats::LatencySummary;

    #[test]
    fn table_shows_every_measurement() {
        let report = Report {
            benchmark: "limit udp".into(),
            machine: MachineInfo::default(),
            config: serde_json::json!({}),
            results: vec![Measurement {
                name: "udp-limit".into(),
                sent: 10,
                answered: 9,
                errors: 1,
                seconds: 1.0,
                throughput_rps: 9.0,
                payload_bytes_per_sec: None,
                latency_ms: LatencySummary::default(),
            }],
        };
        let text = render_table(&report);
        assert!(text.contains("udp-limit"));
        assert!(text.contains("limit udp"));
        assert!(text.lines().any(|l| l.contains(" 9 ") && l.contains(" 1 ")));
    }
}
