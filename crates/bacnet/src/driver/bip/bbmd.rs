//! A standalone BBMD on tokio ([`BacnetBbmd`]: a [`BipTransport`] in the BBMD role whose
//! task only keeps the link running), and the management requests a tool sends to any
//! BBMD: Read-BDT, Write-BDT, Read-FDT, Delete-FDT-Entry ([`read_bdt`] and friends).
//!
//! A device that is also a BBMD is a [`crate::driver::BacnetServer`] whose `BacnetServerConfig::role` is
//! [`BipRole::Bbmd`]; a router port can be one too.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::UdpSocket;
use tokio::task::JoinHandle;

use super::ipv4::{BipConfig, BipTransport, MAX_BIP_DATAGRAM};
use crate::driver::error::DriverError;
use crate::driver::link_clock::LinkClock;
use crate::driver::transport::Transport;
use crate::link::{BbmdConfig, BipLinkStats, BipRole};
use crate::link::{BdtEntry, BvlcResultCode, Bvll, FdtEntry};

/// A running BBMD with no device behind it.
#[derive(Debug)]
pub struct BacnetBbmd {
    transport: Arc<BipTransport>,
    task: JoinHandle<()>,
}

impl BacnetBbmd {
    /// Binds `config.bind` (a specific address: peers know the BBMD by it) and starts.
    pub async fn start(config: &BipConfig, bbmd: BbmdConfig) -> io::Result<Self> {
        Self::start_with_clock(config, bbmd, LinkClock::system()).await
    }

    /// As [`Self::start`], with the tables kept on `clock`: a test that moves an
    /// [`LinkClock::adjustable`] clock forward sees foreign devices expire at once.
    pub async fn start_with_clock(
        config: &BipConfig,
        bbmd: BbmdConfig,
        clock: LinkClock,
    ) -> io::Result<Self> {
        let transport =
            Arc::new(BipTransport::bind_with_clock(config, BipRole::Bbmd(bbmd), clock).await?);
        let running = Arc::clone(&transport);
        let task = tokio::spawn(async move {
            loop {
                // NPDUs for this node are dropped: no device here. The link forwards what
                // it must while being read.
                if running.receive().await.is_err() {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
        });
        Ok(Self { transport, task })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddrV4 {
        self.transport.local_addr()
    }

    /// The broadcast distribution table.
    pub fn bdt(&self) -> Vec<BdtEntry> {
        self.transport.bdt()
    }

    /// The foreign device table.
    pub fn fdt(&self) -> Vec<FdtEntry> {
        self.transport.fdt()
    }

    /// Link counters (forwards, registrations, NAKs, rate-limited...).
    pub fn stats(&self) -> BipLinkStats {
        self.transport.link_stats()
    }

    /// Stops the BBMD.
    pub fn shutdown(&self) {
        self.task.abort();
    }
}

impl Drop for BacnetBbmd {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Sends one BVLL request to `bbmd` from a fresh socket and returns the first answer
/// from it that `accept` takes.
async fn exchange<T>(
    bbmd: SocketAddrV4,
    request: &Bvll<'_>,
    wait: Duration,
    accept: impl Fn(Bvll<'_>) -> Option<T>,
) -> io::Result<T> {
    let socket = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0)).await?;
    let mut datagram = Vec::new();
    request.encode(&mut datagram);
    socket.send_to(&datagram, bbmd).await?;
    let mut buf = vec![0u8; MAX_BIP_DATAGRAM];
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let (n, from) = tokio::time::timeout_at(deadline, socket.recv_from(&mut buf))
            .await
            .map_err(|_| {
                io::Error::new(io::ErrorKind::TimedOut, DriverError::NoBbmdAnswer(bbmd))
            })??;
        if from != SocketAddr::V4(bbmd) {
            continue;
        }
        if let Ok(answer) = Bvll::decode_datagram(buf.get(..n).unwrap_or_default())
            && let Some(value) = accept(answer)
        {
            return Ok(value);
        }
    }
}

fn nak(code: BvlcResultCode) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        DriverError::BbmdNak(code.to_u16()),
    )
}

/// Read-Broadcast-Distribution-Table.
pub async fn read_bdt(bbmd: SocketAddrV4, wait: Duration) -> io::Result<Vec<BdtEntry>> {
    exchange(bbmd, &Bvll::ReadBdt, wait, |answer| match answer {
        Bvll::ReadBdtAck(entries) => Some(Ok(entries)),
        Bvll::Result(code) if code != BvlcResultCode::SuccessfulCompletion => Some(Err(nak(code))),
        _ => None,
    })
    .await?
}

/// Read-Foreign-Device-Table.
pub async fn read_fdt(bbmd: SocketAddrV4, wait: Duration) -> io::Result<Vec<FdtEntry>> {
    exchange(bbmd, &Bvll::ReadFdt, wait, |answer| match answer {
        Bvll::ReadFdtAck(entries) => Some(Ok(entries)),
        Bvll::Result(code) if code != BvlcResultCode::SuccessfulCompletion => Some(Err(nak(code))),
        _ => None,
    })
    .await?
}

/// Write-Broadcast-Distribution-Table (BBMDs accept it only when configured to).
pub async fn write_bdt(
    bbmd: SocketAddrV4,
    entries: Vec<BdtEntry>,
    wait: Duration,
) -> io::Result<()> {
    exchange(bbmd, &Bvll::WriteBdt(entries), wait, result_of).await?
}

/// Delete-Foreign-Device-Table-Entry.
pub async fn delete_fdt_entry(
    bbmd: SocketAddrV4,
    entry: SocketAddrV4,
    wait: Duration,
) -> io::Result<()> {
    exchange(bbmd, &Bvll::DeleteFdtEntry(entry), wait, result_of).await?
}

fn result_of(answer: Bvll<'_>) -> Option<io::Result<()>> {
    match answer {
        Bvll::Result(BvlcResultCode::SuccessfulCompletion) => Some(Ok(())),
        Bvll::Result(code) => Some(Err(nak(code))),
        _ => None,
    }
}

/// A BDT file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BdtError {
    /// A line whose address is not `ADDRESS:PORT` (or an IPv4 address).
    #[error("line {line}: {text:?} is not ADDRESS:PORT")]
    Address {
        /// Line number, from 1.
        line: usize,
        /// The address as written.
        text: String,
    },
    /// A dotted mask that does not parse.
    #[error("line {line}: {text:?} is not a mask")]
    Mask {
        /// Line number, from 1.
        line: usize,
        /// The mask as written.
        text: String,
    },
    /// A prefix length above 32.
    #[error("line {line}: /{text} is not 0..=32")]
    Prefix {
        /// Line number, from 1.
        line: usize,
        /// The prefix as written.
        text: String,
    },
    /// More entries than a BDT holds.
    #[error("{count} entries; at most {max} fit")]
    TooMany {
        /// Entries in the file.
        count: usize,
        /// Most a BDT holds.
        max: usize,
    },
    /// The file cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: io::Error,
    },
    /// The file's content is wrong.
    #[error("{path}: {source}")]
    File {
        /// The file.
        path: String,
        /// What is wrong.
        source: Box<BdtError>,
    },
}

/// Parses a BDT file: one entry per line, `ADDRESS:PORT[/MASK]` where MASK is a dotted
/// mask or a prefix length (default /32: two-hop distribution); `#` starts a comment.
pub fn parse_bdt(text: &str) -> Result<Vec<BdtEntry>, BdtError> {
    let mut entries = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (address, mask) = match line.split_once('/') {
            Some((address, mask)) => (address.trim(), Some(mask.trim())),
            None => (line, None),
        };
        let address: SocketAddrV4 = address
            .parse()
            .or_else(|_| {
                address
                    .parse::<Ipv4Addr>()
                    .map(|ip| SocketAddrV4::new(ip, 0xBAC0))
            })
            .map_err(|_| BdtError::Address {
                line: number + 1,
                text: address.to_owned(),
            })?;
        let mask = match mask {
            None => Ipv4Addr::BROADCAST,
            Some(mask) if mask.contains('.') => mask.parse().map_err(|_| BdtError::Mask {
                line: number + 1,
                text: mask.to_owned(),
            })?,
            Some(prefix) => {
                let bits: u32 =
                    prefix
                        .parse()
                        .ok()
                        .filter(|bits| *bits <= 32)
                        .ok_or_else(|| BdtError::Prefix {
                            line: number + 1,
                            text: prefix.to_owned(),
                        })?;
                Ipv4Addr::from(u32::MAX.checked_shl(32 - bits).unwrap_or(0))
            }
        };
        entries.push(BdtEntry { address, mask });
    }
    if entries.len() > crate::link::bip::link::MAX_BDT_ENTRIES {
        return Err(BdtError::TooMany {
            count: entries.len(),
            max: crate::link::bip::link::MAX_BDT_ENTRIES,
        });
    }
    Ok(entries)
}

/// Reads a BDT file (see [`parse_bdt`]) and adds `own` (two-hop) when missing.
pub fn bdt_file(path: &str, own: SocketAddrV4) -> Result<Vec<BdtEntry>, BdtError> {
    let text = std::fs::read_to_string(path).map_err(|source| BdtError::Read {
        path: path.to_owned(),
        source,
    })?;
    let mut entries = parse_bdt(&text).map_err(|e| BdtError::File {
        path: path.to_owned(),
        source: Box::new(e),
    })?;
    if !entries.iter().any(|entry| entry.address == own) {
        entries.insert(
            0,
            BdtEntry {
                address: own,
                mask: Ipv4Addr::BROADCAST,
            },
        );
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bdt_files() {
        let entries = parse_bdt(
            "# site BBMDs\n10.0.1.1:47808\n10.0.2.1:47808/24 # one-hop\n10.0.3.1/255.255.0.0\n",
        )
        .unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[0].mask, Ipv4Addr::BROADCAST);
        assert_eq!(entries[1].mask, Ipv4Addr::new(255, 255, 255, 0));
        assert_eq!(entries[2].address.port(), 47808);
        assert_eq!(entries[2].mask, Ipv4Addr::new(255, 255, 0, 0));
        assert!(parse_bdt("10.0.0.1:47808/33").is_err());
        assert!(parse_bdt("nonsense").is_err());
        assert_eq!(
            parse_bdt("0.0.0.0:1/0").unwrap()[0].mask,
            Ipv4Addr::UNSPECIFIED
        );
    }
}
