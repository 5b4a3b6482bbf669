//! The OPC UA throughput benchmark, with the semantics of open62541's (Pro/opcua-bench): one
//! session; `setSize(size_kib)` once; then `getData` strictly one after another (or
//! `in_flight` outstanding at a time). The first response is not counted: the clock starts
//! when it arrives, and every later payload adds to the total. Every reply's payload length
//! is checked.
//!
//! Reports (every `report_every` and at the end) carry the cumulative rate in the original's
//! line format, `Rate = X Mebibit/s = Y Mebibyte/s Total Size = Z MiB, Time = T s`, plus
//! calls/s and latency percentiles (each call's whole wall time, from before its request is
//! encoded to its response read and checked; monotonic clock).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use buildwire_opcua::client::{ClientConfig, ClientIdentity};
use buildwire_opcua::driver::client::{call_request, single_byte_string_output};
use buildwire_opcua::driver::{ClientError, OpcuaClient};
use buildwire_opcua::{NodeId, Variant};
use serde::Serialize;

use crate::stats::{LatencyHistogram, LatencySummary};

/// Bytes per MiB.
const MIB: f64 = 1024.0 * 1024.0;
/// Most requests kept in flight.
pub const MAX_IN_FLIGHT: usize = 1024;

/// What to measure.
#[derive(Clone, Debug)]
pub struct ThroughputConfig {
    /// `opc.tcp://host:port` of the server.
    pub endpoint: String,
    /// Payload size in KiB passed to setSize.
    pub size_kib: u32,
    /// How long getData is called (after the first, uncounted response).
    pub duration: Duration,
    /// The Throughput object.
    pub object: NodeId,
    /// The setSize method.
    pub set_size_method: NodeId,
    /// The getData method.
    pub get_data_method: NodeId,
    /// getData requests outstanding at once (1: strictly sequential).
    pub in_flight: usize,
    /// How often a progress report is produced.
    pub report_every: Duration,
    /// Who the session runs as.
    pub identity: ClientIdentity,
    /// The largest chunk the client offers to receive (its Hello ReceiveBufferSize); the
    /// server answers with at most this. `None`: the client default (65535).
    pub receive_buffer_size: Option<u32>,
}

impl ThroughputConfig {
    /// The defaults of the original benchmark: object `ns=1;i=5000`, setSize `ns=1;i=6000`,
    /// getData `ns=1;i=6001`, one in flight, a report every 2 s.
    pub fn new(endpoint: &str, size_kib: u32, duration: Duration) -> Self {
        Self {
            endpoint: endpoint.to_owned(),
            size_kib,
            duration,
            object: NodeId::numeric(1, 5000),
            set_size_method: NodeId::numeric(1, 6000),
            get_data_method: NodeId::numeric(1, 6001),
            in_flight: 1,
            report_every: Duration::from_secs(2),
            identity: ClientIdentity::Anonymous,
            receive_buffer_size: None,
        }
    }
}

/// Why the benchmark stopped early.
#[derive(Debug, thiserror::Error)]
pub enum ThroughputError {
    /// Connecting or a call failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// getData did not return one ByteString.
    #[error("getData did not return a ByteString")]
    NoPayload,
    /// getData returned a payload of the wrong length.
    #[error("getData returned {actual} bytes, expected {expected}")]
    WrongLength {
        /// size_kib * 1024.
        expected: usize,
        /// What came.
        actual: usize,
    },
}

/// Cumulative figures since the first (uncounted) response.
#[derive(Clone, Debug, Serialize)]
pub struct ThroughputReport {
    /// Payload size per call in KiB.
    pub size_kib: u32,
    /// Requests in flight.
    pub in_flight: usize,
    /// Seconds since the first response.
    pub elapsed_s: f64,
    /// Counted getData calls.
    pub calls: u64,
    /// Counted payload bytes.
    pub total_bytes: u64,
    /// Payload rate in Mebibit/s.
    pub mebibit_per_s: f64,
    /// Payload rate in Mebibyte/s.
    pub mebibyte_per_s: f64,
    /// Counted payload in MiB.
    pub total_mib: f64,
    /// Counted calls per second.
    pub calls_per_s: f64,
    /// Latency of the counted calls.
    pub latency: LatencySummary,
}

impl ThroughputReport {
    fn new(
        config: &ThroughputConfig,
        elapsed: Duration,
        calls: u64,
        total_bytes: u64,
        latency: &LatencyHistogram,
    ) -> Self {
        let seconds = elapsed.as_secs_f64();
        let per_second = |value: f64| if seconds > 0.0 { value / seconds } else { 0.0 };
        let total_mib = total_bytes as f64 / MIB;
        Self {
            size_kib: config.size_kib,
            in_flight: config.in_flight,
            elapsed_s: seconds,
            calls,
            total_bytes,
            mebibit_per_s: per_second(total_mib * 8.0),
            mebibyte_per_s: per_second(total_mib),
            total_mib,
            calls_per_s: per_second(calls as f64),
            latency: latency.summary(),
        }
    }

    /// The original benchmark's line.
    pub fn rate_line(&self) -> String {
        format!(
            "Rate = {:.3} Mebibit/s = {:.3} Mebibyte/s Total Size = {:.3} MiB, Time = {:.3} s",
            self.mebibit_per_s, self.mebibyte_per_s, self.total_mib, self.elapsed_s
        )
    }

    /// Calls per second and latency percentiles.
    pub fn calls_line(&self) -> String {
        format!(
            "Calls = {:.1}/s, p50 = {:.3} ms, p99 = {:.3} ms",
            self.calls_per_s, self.latency.p50_ms, self.latency.p99_ms
        )
    }
}

fn check_payload(
    response: &buildwire_opcua::services::ServiceResponse,
    expected: usize,
) -> Result<(), ThroughputError> {
    let payload = single_byte_string_output(response).ok_or(ThroughputError::NoPayload)?;
    let actual = payload.as_bytes().map_or(0, <[u8]>::len);
    if actual != expected {
        return Err(ThroughputError::WrongLength { expected, actual });
    }
    Ok(())
}

/// Sends one getData call, noting when it started: before the request is encoded and
/// written, so that a call's latency is its whole wall time (timing after `send` left out
/// the encoding and the socket write, a third to a half of a 1 KiB call).
async fn send_get_data(
    client: &mut OpcuaClient,
    config: &ThroughputConfig,
    sent_at: &mut HashMap<u32, Instant>,
) -> Result<(), ThroughputError> {
    let started = Instant::now();
    let handle = client
        .send(call_request(
            &config.object,
            &config.get_data_method,
            Vec::new(),
        ))
        .await?;
    sent_at.insert(handle, started);
    Ok(())
}

/// Runs the benchmark; `on_report` sees each progress report; the final report is returned.
pub async fn run_throughput(
    config: &ThroughputConfig,
    mut on_report: impl FnMut(&ThroughputReport),
) -> Result<ThroughputReport, ThroughputError> {
    let mut client_config = ClientConfig::new(&config.endpoint);
    client_config.identity = config.identity.clone();
    if let Some(size) = config.receive_buffer_size {
        client_config.connection_limits.receive_buffer_size = size;
    }
    let mut client = OpcuaClient::connect_with(client_config).await?;
    client
        .call(
            &config.object,
            &config.set_size_method,
            vec![Variant::UInt32(config.size_kib)],
        )
        .await?;
    let expected = config.size_kib as usize * 1024;
    let in_flight = config.in_flight.clamp(1, MAX_IN_FLIGHT);
    let mut sent_at: HashMap<u32, Instant> = HashMap::with_capacity(in_flight);
    let mut latency = LatencyHistogram::new();
    let (mut calls, mut total_bytes) = (0u64, 0u64);
    let mut started: Option<Instant> = None;
    let mut next_report = Instant::now() + config.report_every;
    for _ in 0..in_flight {
        send_get_data(&mut client, config, &mut sent_at).await?;
    }
    while !sent_at.is_empty() {
        let (handle, result) = client.next_response().await?;
        let response = result.map_err(|status| ClientError::Status {
            status,
            context: "getData".into(),
        })?;
        check_payload(&response, expected)?;
        // The call ends here: response read, decoded and checked.
        let now = Instant::now();
        let sent = sent_at.remove(&handle);
        match started {
            None => {
                started = Some(now);
                next_report = now + config.report_every;
            }
            Some(_) => {
                calls += 1;
                total_bytes += expected as u64;
                if let Some(sent) = sent {
                    latency.record(now.saturating_duration_since(sent));
                }
            }
        }
        let elapsed = started.map_or(Duration::ZERO, |start| now.saturating_duration_since(start));
        if now >= next_report {
            next_report += config.report_every;
            on_report(&ThroughputReport::new(
                config,
                elapsed,
                calls,
                total_bytes,
                &latency,
            ));
        }
        if elapsed < config.duration {
            send_get_data(&mut client, config, &mut sent_at).await?;
        }
    }
    let elapsed = started.map_or(Duration::ZERO, |start| start.elapsed());
    let report = ThroughputReport::new(config, elapsed, calls, total_bytes, &latency);
    client.close().await?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_line_format() {
        let config = ThroughputConfig::new("opc.tcp://x", 1024, Duration::from_secs(2));
        let report = ThroughputReport::new(
            &config,
            Duration::from_secs(2),
            200,
            200 * 1024 * 1024,
            &LatencyHistogram::new(),
        );
        assert_eq!(
            report.rate_line(),
            "Rate = 800.000 Mebibit/s = 100.000 Mebibyte/s Total Size = 200.000 MiB, Time = 2.000 s"
        );
        assert!(report.calls_line().starts_with("Calls = 100.0/s, p50 = "));
    }
}
