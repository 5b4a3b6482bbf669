//! The errors the drivers report inside `io::Error` (whose kind says what sort of failure it
//! is): typed, so callers can look at them with `io::Error::get_ref` and `downcast_ref`.

use std::net::{SocketAddrV4, SocketAddrV6};
use std::path::PathBuf;

/// A driver failure beyond the socket's own errors.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DriverError {
    /// A BBMD management request got no answer.
    #[error("no answer from {0}; is it a BBMD, on that address and port?")]
    NoBbmdAnswer(SocketAddrV4),
    /// A BBMD answered a management request with a NAK (the BVLC-Result code).
    #[error("the BBMD answered BVLC-Result {0:#06x} (NAK)")]
    BbmdNak(u16),
    /// A B/IP socket came out bound to an IPv6 address.
    #[error("bound to IPv6 address {0}")]
    BoundToIpv6(SocketAddrV6),
    /// A B/IPv6 socket came out bound to an IPv4 address.
    #[error("bound to IPv4 {0}")]
    BoundToIpv4(SocketAddrV4),
    /// A device UUID file that does not hold a UUID.
    #[error("{}: {source}", path.display())]
    UuidFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with its text.
        source: crate::link::sc::AddressParseError,
    },
}
