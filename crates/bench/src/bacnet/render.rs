//! The tables a BACnet benchmark prints: operations with their latency, one run's summary,
//! the `--max` curve.

use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};

use super::orchestrate::best_of;
use super::{BacnetOutcome, Latency, PhaseReport, Scenario};
use crate::report::MachineInfo;

pub fn right(text: String) -> Cell {
    Cell::new(text).set_alignment(CellAlignment::Right)
}

pub fn opt(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.digits$}"))
}

/// A table line for a target that could not be measured: its name, the first line of the
/// error, and `-` up to `columns`.
pub fn failed_row(target: &str, error: &str, columns: usize) -> Vec<Cell> {
    let mut row = vec![
        Cell::new(target),
        Cell::new(error.lines().next().unwrap_or_default()),
    ];
    row.extend((2..columns).map(|_| Cell::new("-")));
    row
}

/// A line of the operations table: counts, rate and latency.
pub fn latency_row(name: &str, answered: u64, errors: u64, rps: f64, l: &Latency) -> Vec<Cell> {
    vec![
        Cell::new(name),
        right(answered.to_string()),
        right(errors.to_string()),
        right(format!("{rps:.0}")),
        right(format!("{:.3}", l.mean)),
        right(format!("{:.3}", l.p50)),
        right(format!("{:.3}", l.p95)),
        right(format!("{:.3}", l.p99)),
        right(format!("{:.3}", l.max)),
    ]
}

/// The operations of a phase and their total, one line each.
pub fn phase_table(s: &PhaseReport, rate: &str) -> Table {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "operation",
        "answered",
        "errors",
        rate,
        "mean ms",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "max ms",
    ]);
    for (name, op) in &s.operations {
        table.add_row(latency_row(
            name,
            op.answered,
            op.errors,
            op.throughput_rps,
            &op.latency_ms,
        ));
    }
    table.add_row(latency_row(
        "all",
        s.answered,
        s.total_errors,
        s.throughput_rps,
        &s.latency_ms,
    ));
    table
}

/// `N s measured after M s warm-up` and the machine, under a scenario's title.
pub fn measured_line(
    sustained: &PhaseReport,
    warmup: &PhaseReport,
    machine: &MachineInfo,
) -> String {
    format!(
        "{:.1} s measured after {:.1} s warm-up\nmachine: {}",
        sustained.duration_s,
        warmup.duration_s,
        machine.one_line()
    )
}

/// The error rate against the threshold, and the verdict.
pub fn error_line(sustained: &PhaseReport, threshold: f64, passed: bool) -> String {
    format!(
        "error rate {:.3} % (threshold {} %): {}",
        sustained.error_rate * 100.0,
        threshold * 100.0,
        if passed { "passed" } else { "FAILED" }
    )
}

pub fn scenario_table(outcome: &BacnetOutcome, machine: &MachineInfo) -> String {
    let s = &outcome.sustained;
    let mut table = phase_table(s, "req/s");
    if let Some(limit) = &outcome.limit {
        table.add_row(latency_row(
            &format!(
                "limit (udp {}/{} B x{})",
                limit.request_size, limit.response_size, limit.in_flight
            ),
            0,
            0,
            limit.throughput_rps,
            &limit.latency_ms,
        ));
    }
    let executed = match (s.executed, s.executed_rps) {
        (Some(n), Some(rate)) => format!(
            "executed by the server: {n} ({rate:.0}/s) for {} confirmed requests answered; \
             answers replayed from its response cache: {}",
            s.confirmed_answered,
            s.replayed_from_cache
                .map_or_else(|| "unknown".to_owned(), |r| r.to_string())
        ),
        _ => "executed by the server: unknown (a foreign target)".to_owned(),
    };
    let limit = outcome.limit.as_ref().map_or_else(String::new, |l| {
        format!(
            "\nlimit ({}): {:.0} req/s; buildwire answered {:.1} % of it",
            l.path,
            l.throughput_rps,
            l.fraction_of_limit * 100.0
        )
    });
    format!(
        "bacnet {} ({} workers, {} pools, server {}): {}\n{table}\n{executed}{limit}\n{}\
         \nresident memory: this process {}, the server's own process {}{}\n",
        outcome.mode,
        outcome.concurrency,
        outcome.config.mix.pools,
        outcome.server,
        measured_line(s, &outcome.warmup, machine),
        error_line(s, outcome.error_threshold, outcome.passed),
        outcome
            .resident_mib
            .map_or_else(|| "-".to_owned(), |m| format!("{m:.1} MiB")),
        outcome
            .server_resident_mib
            .map_or_else(|| "-".to_owned(), |m| format!("{m:.1} MiB")),
        outcome
            .router_resident_mib
            .map_or_else(String::new, |m| format!(
                ", the router's own process {m:.1} MiB"
            )),
    )
}

/// `--max`: the curve of throughput by pools, and the best run.
pub fn max_table(scenario: Scenario, curve: &[BacnetOutcome], machine: &MachineInfo) -> String {
    let best = best_of(curve, |o| &o.sustained);
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "pools",
        "workers",
        "req/s",
        "executed/s",
        "p50 ms",
        "p99 ms",
        "errors",
    ]);
    for o in curve {
        let s = &o.sustained;
        table.add_row(vec![
            right(o.config.mix.pools.to_string()),
            right(o.concurrency.to_string()),
            right(format!("{:.0}", s.throughput_rps)),
            right(opt(s.executed_rps, 0)),
            right(format!("{:.3}", s.latency_ms.p50)),
            right(format!("{:.3}", s.latency_ms.p99)),
            right(s.total_errors.to_string()),
        ]);
    }
    format!(
        "bacnet {} --max: throughput by concurrency (stops when it rises less than 5 %)\n\
         machine: {}\n{table}\nbest: {}\n",
        scenario.name(),
        machine.one_line(),
        best.map_or_else(
            || "-".to_owned(),
            |b| format!(
                "{:.0} req/s with {} pools ({} workers)",
                b.sustained.throughput_rps, b.config.mix.pools, b.concurrency
            )
        )
    )
}
