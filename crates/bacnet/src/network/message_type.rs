//! Network-layer message types (Clause 6.2.4), generated from the table below.
//!
//! Numbers and names follow ASHRAE 135-2020 and its published addenda; they were
//! cross-checked against the bacnet-stack tables.

use crate::enums::enum_table::bacnet_enum;

bacnet_enum! {
    /// Message type octet of a network-layer message. X'14'..X'7F' are reserved for ASHRAE;
    /// X'80'..X'FF' are proprietary and followed by a vendor identifier.
    pub enum NetworkMessageType {
        WhoIsRouterToNetwork = 0 => "who-is-router-to-network",
        IAmRouterToNetwork = 1 => "i-am-router-to-network",
        ICouldBeRouterToNetwork = 2 => "i-could-be-router-to-network",
        RejectMessageToNetwork = 3 => "reject-message-to-network",
        RouterBusyToNetwork = 4 => "router-busy-to-network",
        RouterAvailableToNetwork = 5 => "router-available-to-network",
        InitializeRoutingTable = 6 => "initialize-routing-table",
        InitializeRoutingTableAck = 7 => "initialize-routing-table-ack",
        EstablishConnectionToNetwork = 8 => "establish-connection-to-network",
        DisconnectConnectionToNetwork = 9 => "disconnect-connection-to-network",
        ChallengeRequest = 10 => "challenge-request",
        SecurityPayload = 11 => "security-payload",
        SecurityResponse = 12 => "security-response",
        RequestKeyUpdate = 13 => "request-key-update",
        UpdateKeySet = 14 => "update-key-set",
        UpdateDistributionKey = 15 => "update-distribution-key",
        RequestMasterKey = 16 => "request-master-key",
        SetMasterKey = 17 => "set-master-key",
        WhatIsNetworkNumber = 18 => "what-is-network-number",
        NetworkNumberIs = 19 => "network-number-is",
    }
    unknown: Other;
    proprietary: 128..=255;
    aliases: {}
}
