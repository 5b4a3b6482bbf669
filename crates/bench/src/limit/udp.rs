//! UDP request/response limit: one datagram out, one datagram back.

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{
    LimitConfig, LimitError, LimitOutcome, MAX_UDP_PAYLOAD, PhaseClock, ProgressFn, Tally,
};
use crate::placement::Side;

/// Why the limit's server socket could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ServerBindError {
    /// Its network namespace could not be entered.
    #[error(transparent)]
    Netns(#[from] crate::netns::NetnsError),
    /// The socket could not be bound or set up.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// How long the client waits for a reply before it counts the request lost and resends.
const LOSS_TIMEOUT: Duration = Duration::from_millis(200);

/// Where the two ends of the UDP limit loop sit: both on 127.0.0.1 by default, or the
/// server in a network namespace at the far end of a veth link (`--netns` benchmarks).
#[derive(Clone, Debug)]
pub struct UdpPath {
    /// The client's address (in this namespace).
    pub client: Ipv4Addr,
    /// The server's address.
    pub server: Ipv4Addr,
    /// The namespace the server's thread enters first, when not this one.
    pub server_namespace: Option<String>,
}

impl Default for UdpPath {
    fn default() -> Self {
        UdpPath {
            client: Ipv4Addr::LOCALHOST,
            server: Ipv4Addr::LOCALHOST,
            server_namespace: None,
        }
    }
}

impl std::fmt::Display for UdpPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.server_namespace {
            None if self.server == self.client => write!(f, "{}", self.server),
            None => write!(f, "{} to {}", self.client, self.server),
            Some(ns) => write!(
                f,
                "{} to {} in network namespace {ns}",
                self.client, self.server
            ),
        }
    }
}

/// Runs the UDP limit loop on 127.0.0.1 and returns what the client measured.
///
/// Each of the `in_flight` slots carries its own sequence number in the first 8 bytes; the
/// server echoes it at the head of a response of `response_size` bytes.
pub fn run_udp_limit(
    config: &LimitConfig,
    progress: ProgressFn<'_>,
) -> Result<LimitOutcome, LimitError> {
    run_udp_limit_on(config, &UdpPath::default(), progress)
}

/// [`run_udp_limit`] between the two addresses of `path`; the server thread enters the
/// path's namespace (root only) before it binds.
pub fn run_udp_limit_on(
    config: &LimitConfig,
    path: &UdpPath,
    progress: ProgressFn<'_>,
) -> Result<LimitOutcome, LimitError> {
    config.validate(MAX_UDP_PAYLOAD)?;
    let stop = Arc::new(AtomicBool::new(false));
    let server_stop = Arc::clone(&stop);
    let response_size = config.response_size;
    let placement = config.placement;
    let (bound_tx, bound_rx) = std::sync::mpsc::channel::<Result<SocketAddr, ServerBindError>>();
    let (namespace, server_ip) = (path.server_namespace.clone(), path.server);
    let server_thread = std::thread::spawn(move || -> std::io::Result<()> {
        let bound = (|| -> Result<UdpSocket, ServerBindError> {
            if let Some(ns) = &namespace {
                crate::netns::enter_on_this_thread(ns)?;
            }
            let server = UdpSocket::bind((server_ip, 0))?;
            server.set_read_timeout(Some(Duration::from_millis(50)))?;
            Ok(server)
        })();
        let server = match bound {
            Ok(server) => {
                let _ = bound_tx.send(server.local_addr().map_err(ServerBindError::Io));
                server
            }
            Err(e) => {
                let _ = bound_tx.send(Err(e));
                return Ok(());
            }
        };
        placement.apply(Side::Server);
        let mut buf = vec![0u8; MAX_UDP_PAYLOAD];
        let mut response = vec![0x5au8; response_size];
        while !server_stop.load(Ordering::Relaxed) {
            match server.recv_from(&mut buf) {
                Ok((n, peer)) if n >= 8 => {
                    response[..8].copy_from_slice(&buf[..8]);
                    server.send_to(&response, peer)?;
                }
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    });

    let server_addr = match bound_rx.recv() {
        Ok(Ok(addr)) => addr,
        Ok(Err(e)) => {
            let _ = server_thread.join();
            return Err(LimitError::ServerStart {
                path: path.to_string(),
                source: e,
            });
        }
        Err(_) => {
            let _ = server_thread.join();
            return Err(LimitError::Config(
                "the UDP limit's server thread ended before it bound".into(),
            ));
        }
    };
    let result = udp_client(config, path.client, server_addr, progress);
    stop.store(true, Ordering::Relaxed);
    let served = server_thread
        .join()
        .map_err(|_| LimitError::Config("the UDP server thread panicked".into()))?;
    served?;
    result
}

/// Sends one request and returns when it was sent: the instant *before* `send`. On loopback
/// the kernel hands the datagram to the server's socket inside `send`, and the server
/// thread (on the other core) often answers before `send` has returned, so a clock read
/// after it made about a fifth of the round trips look shorter than 1 µs.
fn send_timed(socket: &UdpSocket, request: &[u8]) -> std::io::Result<Instant> {
    let sent_at = Instant::now();
    socket.send(request)?;
    Ok(sent_at)
}

fn udp_client(
    config: &LimitConfig,
    client: Ipv4Addr,
    server: SocketAddr,
    progress: ProgressFn<'_>,
) -> Result<LimitOutcome, LimitError> {
    config.placement.apply(Side::Client);
    let socket = UdpSocket::bind((client, 0))?;
    socket.connect(server)?;
    socket.set_read_timeout(Some(LOSS_TIMEOUT))?;

    let slots = config.in_flight;
    let mut request = vec![0xa5u8; config.request_size];
    let mut reply = vec![0u8; MAX_UDP_PAYLOAD];
    // Sequence numbers: slot index in the low bits, a counter above, so a reply names its slot.
    let slot_bits = usize::BITS - (slots - 1).leading_zeros();
    let mut outstanding: Vec<(u64, Instant)> = Vec::with_capacity(slots);
    let mut counter = 0u64;
    let mut next_seq = |slot: usize| {
        counter += 1;
        (counter << slot_bits) | slot as u64
    };
    for slot in 0..slots {
        let seq = next_seq(slot);
        request[..8].copy_from_slice(&seq.to_be_bytes());
        outstanding.push((seq, send_timed(&socket, &request)?));
    }

    let mask = (1u64 << slot_bits) - 1;
    let mut tally = Tally::default();
    let mut clock = PhaseClock::new(config, progress);
    while clock.keep_going(&mut tally) {
        match socket.recv(&mut reply) {
            Ok(n) => {
                let seq = match reply.get(..8).filter(|_| n == config.response_size) {
                    Some(head) => u64::from_be_bytes(head.try_into().unwrap_or_default()),
                    None => {
                        tally.errors += 1;
                        continue;
                    }
                };
                let slot = (seq & mask) as usize;
                match outstanding.get(slot) {
                    Some(&(expected, sent_at)) if expected == seq => {
                        tally.answered += 1;
                        tally.histogram.record(sent_at.elapsed());
                        let seq = next_seq(slot);
                        request[..8].copy_from_slice(&seq.to_be_bytes());
                        outstanding[slot] = (seq, send_timed(&socket, &request)?);
                        tally.sent += 1;
                    }
                    _ => tally.errors += 1,
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                // Every outstanding request is overdue: count each as lost and resend.
                for (slot, entry) in outstanding.iter_mut().enumerate() {
                    tally.errors += 1;
                    let seq = next_seq(slot);
                    request[..8].copy_from_slice(&seq.to_be_bytes());
                    *entry = (seq, send_timed(&socket, &request)?);
                    tally.sent += 1;
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    let seconds = clock.finish(&tally);
    Ok(tally.into_outcome("udp-limit", config, seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reply_is_checked_and_counted() {
        let config = LimitConfig {
            in_flight: 4,
            request_size: 25,
            response_size: 300,
            warmup: Duration::from_millis(50),
            duration: Duration::from_millis(300),
            ..LimitConfig::default()
        };
        let out = run_udp_limit(&config, &|_, _, _| {}).unwrap();
        let m = &out.measurement;
        assert!(m.answered > 0, "{m:?}");
        assert_eq!(m.errors, 0, "{m:?}");
        assert_eq!(m.latency_ms.count, m.answered);
        // Replies answered in the sustain phase were sent in it or were in flight at its start.
        assert!(m.answered <= m.sent + config.in_flight as u64);
    }

    #[test]
    fn rejects_messages_too_small_for_a_sequence_number() {
        let config = LimitConfig {
            request_size: 4,
            ..LimitConfig::default()
        };
        assert!(matches!(
            run_udp_limit(&config, &|_, _, _| {}),
            Err(LimitError::Config(_))
        ));
    }
}
