//! The log lines of a BBMD's own tables (Annex J.4, J.5): foreign devices registered,
//! renewed, deleted and expired, and the broadcast distribution table written by a peer;
//! and on a foreign device, its registration with the BBMD accepted, renewed or refused.
//! The driver takes a snapshot of the tables around the few BVLL messages that change them
//! (and around its timers, for expiries), so that other datagrams cost nothing.

use std::net::SocketAddrV4;
use std::time::Instant;

use crate::link::{BdtEntry, BipLink, FdtEntry, RegistrationState};

/// BVLC functions whose handling may change a BBMD's tables (Annex J.2): Write-BDT (0x01),
/// Register-Foreign-Device (0x05), Delete-Foreign-Device-Table-Entry (0x08).
const TABLE_FUNCTIONS: [u8; 3] = [0x01, 0x05, 0x08];

/// A BBMD's tables at one moment.
pub(super) struct Tables {
    bdt: Vec<BdtEntry>,
    fdt: Vec<FdtEntry>,
}

impl Tables {
    /// The tables of `link` before it handles `datagram`, when the datagram may change them.
    pub(super) fn before_datagram(link: &BipLink, now: Instant, datagram: &[u8]) -> Option<Self> {
        let function = datagram.get(1)?;
        TABLE_FUNCTIONS
            .contains(function)
            .then(|| Self::of(link, now))
    }

    /// The tables of `link` now (empty for a node that is no BBMD).
    pub(super) fn of(link: &BipLink, now: Instant) -> Self {
        Self {
            bdt: link.bdt(),
            fdt: link.fdt(now),
        }
    }

    /// Logs what changed from `self` to `after`: `peer` is who sent the message that
    /// changed them, `None` when a timer did (expiries).
    pub(super) fn log_changes(&self, after: &Tables, peer: Option<SocketAddrV4>) {
        for entry in &after.fdt {
            let address = entry.address.to_string();
            let time_to_live = entry.time_to_live;
            let renewed = self.fdt.iter().any(|old| old.address == entry.address)
                && Some(entry.address) == peer
                && after_renewal(&self.fdt, entry);
            if !self.fdt.iter().any(|old| old.address == entry.address) {
                tracing::info!(address, time_to_live, "foreign device registered");
            } else if renewed {
                tracing::debug!(
                    address,
                    time_to_live,
                    "foreign device renewed its registration"
                );
            }
        }
        for entry in &self.fdt {
            if after.fdt.iter().any(|new| new.address == entry.address) {
                continue;
            }
            let address = entry.address.to_string();
            match peer {
                Some(by) => tracing::info!(address, by = %by, "foreign device table entry deleted"),
                None => tracing::info!(address, "foreign device registration expired"),
            }
        }
        if self.bdt != after.bdt {
            let entries: Vec<String> = after
                .bdt
                .iter()
                .map(|entry| format!("{}/{}", entry.address, entry.mask))
                .collect();
            let by = peer.map(|by| by.to_string()).unwrap_or_default();
            tracing::info!(by, entries = ?entries, "broadcast distribution table written");
        }
    }
}

/// Whether `entry`'s registration was just made again: its remaining time grew.
fn after_renewal(before: &[FdtEntry], entry: &FdtEntry) -> bool {
    before
        .iter()
        .find(|old| old.address == entry.address)
        .is_some_and(|old| entry.remaining >= old.remaining)
}

/// The log line of a foreign device whose registration changed on an answer from `bbmd`:
/// accepted or renewed (debug), refused with a NAK (info).
pub(super) fn log_registration(
    before: Option<RegistrationState>,
    after: Option<RegistrationState>,
    bbmd: SocketAddrV4,
) {
    let bbmd = bbmd.to_string();
    match (before, after) {
        (before, Some(RegistrationState::Registered { since })) => match before {
            Some(RegistrationState::Registered { since: old }) if old == since => {}
            Some(RegistrationState::Registered { .. }) => {
                tracing::debug!(bbmd, "foreign device registration renewed");
            }
            _ => tracing::info!(bbmd, "registered as a foreign device"),
        },
        (Some(RegistrationState::Registering), Some(RegistrationState::Refused)) => {
            tracing::info!(
                bbmd,
                "the BBMD refused the foreign device registration (NAK)"
            );
        }
        _ => {}
    }
}
