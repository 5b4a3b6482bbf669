//! Clause 6.4 network-layer messages with their parameters, typed: Who-Is-Router-To-Network,
//! I-Am-Router-To-Network, I-Could-Be-Router-To-Network, Reject-Message-To-Network,
//! Router-Busy/Available-To-Network, Initialize-Routing-Table (+Ack), What-Is-Network-Number
//! and Network-Number-Is. Other types (network security, connection establishment,
//! proprietary) are kept as raw parameters.
//!
//! Every list is bounded by the NPDU that carries it: decoding never allocates more than
//! the input's length allows.

use crate::encoding::{DecodeError, DecodeErrorKind, Reader};
use crate::enums::enum_table::bacnet_enum;

use super::message_type::NetworkMessageType;
use super::npdu::{Npdu, NpduBody, RemoteAddress};

bacnet_enum! {
    /// Reason of a Reject-Message-To-Network (Clause 6.4.4).
    pub enum NetworkRejectReason {
        Other = 0 => "other",
        UnknownNetwork = 1 => "unknown-network",
        RouterBusy = 2 => "router-busy",
        UnknownMessageType = 3 => "unknown-message-type",
        MessageTooLong = 4 => "message-too-long",
        SecurityError = 5 => "security-error",
        AddressingError = 6 => "addressing-error",
    }
    unknown: Unknown;
    aliases: {
        "not-directly-connected" => UnknownNetwork,
        "busy" => RouterBusy,
    }
}

/// Longest port-info octet string accepted in an Initialize-Routing-Table entry (its
/// length is one octet on the wire).
pub const MAX_PORT_INFO: usize = 255;

/// One entry of Initialize-Routing-Table(-Ack) (Clause 6.4.7): a network, the port it is
/// reached through (0 in a request: purge the entry) and opaque port information.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RoutingTablePort {
    /// The destination network.
    pub network: u16,
    /// The port id (0 removes the entry).
    pub port_id: u8,
    /// Port information (PPP/dial-up details), usually empty.
    pub port_info: Vec<u8>,
}

/// A network-layer message and its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NetworkMessage {
    /// X'00': who routes to this network (or, without one, to any network)?
    WhoIsRouterToNetwork(Option<u16>),
    /// X'01': the sender routes to these networks.
    IAmRouterToNetwork(Vec<u16>),
    /// X'02': a half-router could establish a connection to `network`.
    ICouldBeRouterToNetwork {
        /// The network.
        network: u16,
        /// Performance index (lower is better).
        performance_index: u8,
    },
    /// X'03': the message for `network` was not routed, for `reason`.
    RejectMessageToNetwork {
        /// Why.
        reason: NetworkRejectReason,
        /// The DNET of the rejected message.
        network: u16,
    },
    /// X'04': the sender cannot take traffic for these networks (all it serves when empty).
    RouterBusyToNetwork(Vec<u16>),
    /// X'05': the sender takes traffic again for these networks (all when empty).
    RouterAvailableToNetwork(Vec<u16>),
    /// X'06': set (or, with no entries, query) the routing table.
    InitializeRoutingTable(Vec<RoutingTablePort>),
    /// X'07': the answer, with the table when the request was a query.
    InitializeRoutingTableAck(Vec<RoutingTablePort>),
    /// X'12': which network is this?
    WhatIsNetworkNumber,
    /// X'13': this network's number, and whether it was configured (or learned).
    NetworkNumberIs {
        /// The local network's number.
        network: u16,
        /// True when configured, false when learned.
        configured: bool,
    },
    /// Any other type, parameters undecoded.
    Other {
        /// The message type.
        message_type: NetworkMessageType,
        /// The vendor of a proprietary type.
        vendor_id: Option<u16>,
        /// The parameters.
        data: Vec<u8>,
    },
}

fn network_list(reader: &mut Reader<'_>) -> Result<Vec<u16>, DecodeError> {
    let remaining = reader.remaining();
    if !remaining.is_multiple_of(2) {
        return Err(reader.error(DecodeErrorKind::InvalidLength {
            length: remaining as u32,
        }));
    }
    // Bounded by the input: two octets per entry.
    let mut networks = Vec::with_capacity(remaining / 2);
    while !reader.is_empty() {
        networks.push(reader.read_u16()?);
    }
    Ok(networks)
}

fn routing_table(reader: &mut Reader<'_>) -> Result<Vec<RoutingTablePort>, DecodeError> {
    let count = usize::from(reader.read_u8()?);
    // Each entry takes at least four octets; a count beyond that is a lie.
    if count * 4 > reader.remaining() {
        return Err(reader.error(DecodeErrorKind::Truncated {
            needed: count * 4,
            remaining: reader.remaining(),
        }));
    }
    let mut ports = Vec::with_capacity(count);
    for _ in 0..count {
        let network = reader.read_u16()?;
        let port_id = reader.read_u8()?;
        let length = usize::from(reader.read_u8()?);
        let port_info = reader.read_bytes(length)?.to_vec();
        ports.push(RoutingTablePort {
            network,
            port_id,
            port_info,
        });
    }
    Ok(ports)
}

fn encode_networks(networks: &[u16], buf: &mut Vec<u8>) {
    for network in networks {
        buf.extend_from_slice(&network.to_be_bytes());
    }
}

fn encode_table(ports: &[RoutingTablePort], buf: &mut Vec<u8>) {
    // The count is one octet: at most 255 entries go on the wire.
    let ports = &ports[..ports.len().min(255)];
    buf.push(ports.len() as u8);
    for port in ports {
        buf.extend_from_slice(&port.network.to_be_bytes());
        buf.push(port.port_id);
        let info = &port.port_info[..port.port_info.len().min(MAX_PORT_INFO)];
        buf.push(info.len() as u8);
        buf.extend_from_slice(info);
    }
}

impl NetworkMessage {
    /// The message type octet.
    pub fn message_type(&self) -> NetworkMessageType {
        match self {
            Self::WhoIsRouterToNetwork(_) => NetworkMessageType::WhoIsRouterToNetwork,
            Self::IAmRouterToNetwork(_) => NetworkMessageType::IAmRouterToNetwork,
            Self::ICouldBeRouterToNetwork { .. } => NetworkMessageType::ICouldBeRouterToNetwork,
            Self::RejectMessageToNetwork { .. } => NetworkMessageType::RejectMessageToNetwork,
            Self::RouterBusyToNetwork(_) => NetworkMessageType::RouterBusyToNetwork,
            Self::RouterAvailableToNetwork(_) => NetworkMessageType::RouterAvailableToNetwork,
            Self::InitializeRoutingTable(_) => NetworkMessageType::InitializeRoutingTable,
            Self::InitializeRoutingTableAck(_) => NetworkMessageType::InitializeRoutingTableAck,
            Self::WhatIsNetworkNumber => NetworkMessageType::WhatIsNetworkNumber,
            Self::NetworkNumberIs { .. } => NetworkMessageType::NetworkNumberIs,
            Self::Other { message_type, .. } => *message_type,
        }
    }

    /// The vendor id of a proprietary message.
    pub fn vendor_id(&self) -> Option<u16> {
        match self {
            Self::Other { vendor_id, .. } => *vendor_id,
            _ => None,
        }
    }

    /// Appends the parameters (what follows the message type and vendor id).
    pub fn encode_data(&self, buf: &mut Vec<u8>) {
        match self {
            Self::WhoIsRouterToNetwork(network) => {
                if let Some(network) = network {
                    buf.extend_from_slice(&network.to_be_bytes());
                }
            }
            Self::IAmRouterToNetwork(networks)
            | Self::RouterBusyToNetwork(networks)
            | Self::RouterAvailableToNetwork(networks) => encode_networks(networks, buf),
            Self::ICouldBeRouterToNetwork {
                network,
                performance_index,
            } => {
                buf.extend_from_slice(&network.to_be_bytes());
                buf.push(*performance_index);
            }
            Self::RejectMessageToNetwork { reason, network } => {
                buf.push(reason.to_u32() as u8);
                buf.extend_from_slice(&network.to_be_bytes());
            }
            Self::InitializeRoutingTable(ports) | Self::InitializeRoutingTableAck(ports) => {
                encode_table(ports, buf);
            }
            Self::WhatIsNetworkNumber => {}
            Self::NetworkNumberIs {
                network,
                configured,
            } => {
                buf.extend_from_slice(&network.to_be_bytes());
                buf.push(u8::from(*configured));
            }
            Self::Other { data, .. } => buf.extend_from_slice(data),
        }
    }

    /// Decodes the parameters of a message of `message_type` (all of `data`).
    pub fn decode(
        message_type: NetworkMessageType,
        vendor_id: Option<u16>,
        data: &[u8],
    ) -> Result<Self, DecodeError> {
        let mut reader = Reader::new(data);
        let reader = &mut reader;
        let message = match message_type {
            NetworkMessageType::WhoIsRouterToNetwork => {
                if reader.is_empty() {
                    Self::WhoIsRouterToNetwork(None)
                } else {
                    Self::WhoIsRouterToNetwork(Some(reader.read_u16()?))
                }
            }
            NetworkMessageType::IAmRouterToNetwork => {
                let networks = network_list(reader)?;
                if networks.is_empty() {
                    return Err(DecodeError::new(
                        0,
                        DecodeErrorKind::InvalidValue("I-Am-Router-To-Network lists no network"),
                    ));
                }
                Self::IAmRouterToNetwork(networks)
            }
            NetworkMessageType::ICouldBeRouterToNetwork => Self::ICouldBeRouterToNetwork {
                network: reader.read_u16()?,
                performance_index: reader.read_u8()?,
            },
            NetworkMessageType::RejectMessageToNetwork => Self::RejectMessageToNetwork {
                reason: NetworkRejectReason::from_u32(u32::from(reader.read_u8()?)),
                network: reader.read_u16()?,
            },
            NetworkMessageType::RouterBusyToNetwork => {
                Self::RouterBusyToNetwork(network_list(reader)?)
            }
            NetworkMessageType::RouterAvailableToNetwork => {
                Self::RouterAvailableToNetwork(network_list(reader)?)
            }
            NetworkMessageType::InitializeRoutingTable => {
                Self::InitializeRoutingTable(routing_table(reader)?)
            }
            NetworkMessageType::InitializeRoutingTableAck => {
                // Some routers answer a table update with no count octet at all.
                if reader.is_empty() {
                    Self::InitializeRoutingTableAck(Vec::new())
                } else {
                    Self::InitializeRoutingTableAck(routing_table(reader)?)
                }
            }
            NetworkMessageType::WhatIsNetworkNumber => Self::WhatIsNetworkNumber,
            NetworkMessageType::NetworkNumberIs => {
                let network = reader.read_u16()?;
                let flag_offset = reader.position();
                let configured = match reader.read_u8()? {
                    0 => false,
                    1 => true,
                    _ => {
                        return Err(DecodeError::new(
                            flag_offset,
                            DecodeErrorKind::InvalidValue(
                                "Network-Number-Is flag must be 0 (learned) or 1 (configured)",
                            ),
                        ));
                    }
                };
                Self::NetworkNumberIs {
                    network,
                    configured,
                }
            }
            other => Self::Other {
                message_type: other,
                vendor_id,
                data: reader.read_rest().to_vec(),
            },
        };
        reader.expect_end()?;
        Ok(message)
    }

    /// Decodes the message an NPDU body carries, or `None` for an APDU.
    pub fn from_body(body: &NpduBody<'_>) -> Option<Result<Self, DecodeError>> {
        match body {
            NpduBody::Apdu(_) => None,
            NpduBody::NetworkMessage {
                message_type,
                vendor_id,
                data,
            } => Some(Self::decode(*message_type, *vendor_id, data)),
        }
    }

    /// Encodes the message as a whole NPDU with the given addresses. Network messages
    /// that expect a reply (Who-Is-Router, Initialize-Routing-Table, What-Is-Network-Number)
    /// set the data-expecting-reply bit.
    pub fn encode_npdu(
        &self,
        destination: Option<RemoteAddress>,
        source: Option<RemoteAddress>,
        hop_count: u8,
        buf: &mut Vec<u8>,
    ) {
        let mut data = Vec::new();
        self.encode_data(&mut data);
        let expecting_reply = matches!(
            self,
            Self::WhoIsRouterToNetwork(_)
                | Self::InitializeRoutingTable(_)
                | Self::WhatIsNetworkNumber
        );
        Npdu {
            destination,
            source,
            hop_count,
            expecting_reply,
            priority: super::NetworkPriority::Normal,
            body: NpduBody::NetworkMessage {
                message_type: self.message_type(),
                vendor_id: self.vendor_id(),
                data: &data,
            },
        }
        .encode(buf);
    }

    /// The message as a local NPDU (no addresses).
    pub fn to_local_npdu(&self) -> Vec<u8> {
        let mut buf = Vec::new();
        self.encode_npdu(None, None, super::npdu::DEFAULT_HOP_COUNT, &mut buf);
        buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(message: NetworkMessage, npdu: &[u8]) {
        assert_eq!(message.to_local_npdu(), npdu, "{message:?}");
        let decoded = Npdu::decode(&mut Reader::new(npdu)).unwrap();
        assert_eq!(
            NetworkMessage::from_body(&decoded.body).unwrap().unwrap(),
            message
        );
    }

    #[test]
    fn every_message_round_trips_with_its_wire_form() {
        // Wire forms follow Clause 6.4; the NPDU header is X'01', control X'80' (+X'04'
        // for the messages that expect a reply).
        round_trip(
            NetworkMessage::WhoIsRouterToNetwork(None),
            &[0x01, 0x84, 0x00],
        );
        round_trip(
            NetworkMessage::WhoIsRouterToNetwork(Some(2)),
            &[0x01, 0x84, 0x00, 0x00, 0x02],
        );
        round_trip(
            NetworkMessage::IAmRouterToNetwork(vec![2, 0x0300]),
            &[0x01, 0x80, 0x01, 0x00, 0x02, 0x03, 0x00],
        );
        round_trip(
            NetworkMessage::ICouldBeRouterToNetwork {
                network: 9,
                performance_index: 40,
            },
            &[0x01, 0x80, 0x02, 0x00, 0x09, 40],
        );
        round_trip(
            NetworkMessage::RejectMessageToNetwork {
                reason: NetworkRejectReason::UnknownNetwork,
                network: 7,
            },
            &[0x01, 0x80, 0x03, 0x01, 0x00, 0x07],
        );
        round_trip(
            NetworkMessage::RouterBusyToNetwork(vec![]),
            &[0x01, 0x80, 0x04],
        );
        round_trip(
            NetworkMessage::RouterAvailableToNetwork(vec![5]),
            &[0x01, 0x80, 0x05, 0x00, 0x05],
        );
        round_trip(
            NetworkMessage::InitializeRoutingTable(vec![]),
            &[0x01, 0x84, 0x06, 0x00],
        );
        round_trip(
            NetworkMessage::InitializeRoutingTableAck(vec![
                RoutingTablePort {
                    network: 2,
                    port_id: 1,
                    port_info: vec![],
                },
                RoutingTablePort {
                    network: 3,
                    port_id: 2,
                    port_info: vec![0xAA, 0xBB],
                },
            ]),
            &[
                0x01, 0x80, 0x07, 0x02, 0x00, 0x02, 0x01, 0x00, 0x00, 0x03, 0x02, 0x02, 0xAA, 0xBB,
            ],
        );
        round_trip(NetworkMessage::WhatIsNetworkNumber, &[0x01, 0x84, 0x12]);
        round_trip(
            NetworkMessage::NetworkNumberIs {
                network: 0x1234,
                configured: true,
            },
            &[0x01, 0x80, 0x13, 0x12, 0x34, 0x01],
        );
        round_trip(
            NetworkMessage::Other {
                message_type: NetworkMessageType::Other(0x90),
                vendor_id: Some(260),
                data: vec![1, 2],
            },
            &[0x01, 0x80, 0x90, 0x01, 0x04, 1, 2],
        );
    }

    #[test]
    fn malformed_parameters_are_errors_not_panics() {
        let cases: &[(NetworkMessageType, &[u8])] = &[
            (NetworkMessageType::WhoIsRouterToNetwork, &[0x00]),
            (NetworkMessageType::WhoIsRouterToNetwork, &[0, 1, 2]),
            (NetworkMessageType::IAmRouterToNetwork, &[]),
            (NetworkMessageType::IAmRouterToNetwork, &[0, 1, 2]),
            (NetworkMessageType::RejectMessageToNetwork, &[1, 0]),
            (NetworkMessageType::InitializeRoutingTable, &[]),
            (
                NetworkMessageType::InitializeRoutingTable,
                &[200, 0, 1, 1, 0],
            ),
            (
                NetworkMessageType::InitializeRoutingTable,
                &[1, 0, 1, 1, 5, 0],
            ),
            (NetworkMessageType::NetworkNumberIs, &[0, 1, 2]),
            (NetworkMessageType::NetworkNumberIs, &[0, 1]),
            (NetworkMessageType::WhatIsNetworkNumber, &[0]),
        ];
        for (message_type, data) in cases {
            assert!(
                NetworkMessage::decode(*message_type, None, data).is_err(),
                "{message_type:?} {data:?}"
            );
        }
        assert_eq!(
            "router-busy".parse::<NetworkRejectReason>().unwrap(),
            NetworkRejectReason::RouterBusy
        );
    }
}
