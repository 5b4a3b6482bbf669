//! TCP request/response limit: a small request, a response of any size (up to 128 MiB),
//! optionally pipelined.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use super::{
    LimitConfig, LimitError, LimitOutcome, MAX_TCP_MESSAGE, PhaseClock, ProgressFn, Tally,
};
use crate::placement::Side;

/// Runs the TCP limit loop on 127.0.0.1 over one connection.
///
/// The server reads requests of exactly `request_size` bytes and answers each with
/// `response_size` bytes whose first 8 are the request's sequence number; the client keeps
/// `in_flight` requests written ahead and checks every sequence number.
pub fn run_tcp_limit(
    config: &LimitConfig,
    progress: ProgressFn<'_>,
) -> Result<LimitOutcome, LimitError> {
    config.validate(MAX_TCP_MESSAGE)?;
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let (request_size, response_size, placement) =
        (config.request_size, config.response_size, config.placement);
    let server_thread = std::thread::spawn(move || -> std::io::Result<()> {
        placement.apply(Side::Server);
        let (mut stream, _) = listener.accept()?;
        stream.set_nodelay(true)?;
        let mut request = vec![0u8; request_size];
        let mut response = vec![0x5au8; response_size];
        loop {
            match stream.read_exact(&mut request) {
                Ok(()) => {}
                // The client closing the connection ends the run.
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
                Err(e) => return Err(e),
            }
            response[..8].copy_from_slice(&request[..8]);
            stream.write_all(&response)?;
        }
    });

    let result = tcp_client(config, addr, progress);
    let served = server_thread
        .join()
        .map_err(|_| LimitError::Config("the TCP server thread panicked".into()))?;
    let outcome = result?;
    served?;
    Ok(outcome)
}

fn tcp_client(
    config: &LimitConfig,
    addr: std::net::SocketAddr,
    progress: ProgressFn<'_>,
) -> Result<LimitOutcome, LimitError> {
    config.placement.apply(Side::Client);
    let mut stream = TcpStream::connect(addr)?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut request = vec![0xa5u8; config.request_size];
    let mut response = vec![0u8; config.response_size];
    let mut outstanding: VecDeque<(u64, Instant)> = VecDeque::with_capacity(config.in_flight);
    let mut seq = 0u64;
    let mut send = |stream: &mut TcpStream,
                    outstanding: &mut VecDeque<(u64, Instant)>|
     -> std::io::Result<()> {
        seq += 1;
        request[..8].copy_from_slice(&seq.to_be_bytes());
        // Timed from before the write: on loopback the answer can be back before the
        // write returns.
        let sent_at = Instant::now();
        stream.write_all(&request)?;
        outstanding.push_back((seq, sent_at));
        Ok(())
    };
    for _ in 0..config.in_flight {
        send(&mut stream, &mut outstanding)?;
    }

    let mut tally = Tally::default();
    let mut clock = PhaseClock::new(config, progress);
    while clock.keep_going(&mut tally) {
        stream.read_exact(&mut response)?;
        let got = u64::from_be_bytes(response[..8].try_into().unwrap_or_default());
        match outstanding.pop_front() {
            Some((expected, sent_at)) if expected == got => {
                tally.answered += 1;
                tally.histogram.record(sent_at.elapsed());
            }
            _ => tally.errors += 1,
        }
        send(&mut stream, &mut outstanding)?;
        tally.sent += 1;
    }
    let seconds = clock.finish(&tally);
    // Closing our side tells the server to stop; drain what is still in flight first so the
    // server's last writes do not fail with a reset.
    stream.shutdown(std::net::Shutdown::Write)?;
    let mut sink = Vec::new();
    let _ = stream.read_to_end(&mut sink);
    Ok(tally.into_outcome("tcp-limit", config, seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipelined_replies_are_checked_in_order() {
        let config = LimitConfig {
            in_flight: 3,
            request_size: 64,
            response_size: 1024,
            warmup: Duration::from_millis(50),
            duration: Duration::from_millis(300),
            ..LimitConfig::default()
        };
        let out = run_tcp_limit(&config, &|_, _, _| {}).unwrap();
        let m = &out.measurement;
        assert!(m.answered > 0, "{m:?}");
        assert_eq!(m.errors, 0, "{m:?}");
        assert_eq!(m.latency_ms.count, m.answered);
        assert_eq!(
            m.payload_bytes_per_sec
                .map(|b| (b / m.throughput_rps).round()),
            Some(1088.0)
        );
    }

    #[test]
    fn large_responses_arrive_whole() {
        let config = LimitConfig {
            request_size: 64,
            response_size: 4 * 1024 * 1024,
            warmup: Duration::from_millis(10),
            duration: Duration::from_millis(200),
            ..LimitConfig::default()
        };
        let out = run_tcp_limit(&config, &|_, _, _| {}).unwrap();
        assert!(out.measurement.answered > 0);
        assert_eq!(out.measurement.errors, 0);
    }
}
