//! `OpcuaClient`: the sans-IO [`ClientConnection`] on a TCP socket, with one async method per
//! service. The connection is driven by whichever method is waiting (`&mut self`): no
//! background task, no channel hop between the caller and the socket, which keeps the
//! one-request-at-a-time benchmark loop on one task. Token renewal and timeouts happen while a
//! call is waiting; an idle client renews on its next call.
//!
//! Every failure is a [`ClientError`] that carries a StatusCode (Bad_Timeout, the server's
//! ServiceFault or ERR status, Bad_CommunicationError for socket errors...).

mod subscriptions;

use std::collections::HashMap;
use std::io;
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::server::{sleep_until, wall_clock_now};
use crate::client::reconnect::ResumeSession;
use crate::client::{
    ClientConfig, ClientConnection, ClientEvent, ClientIdentity, ClientSecurity, SendError,
};
use crate::encoding::{
    ByteString, DataValue, ExpandedNodeId, NodeId, QualifiedName, Variant, VariantType,
};
use crate::security::{Certificate, MessageSecurityMode, SecurityPolicy};
use crate::services::BINARY_ENCODING_IDS;
use crate::services::view::{browse_result_mask, node_class_mask};
use crate::services::well_known_nodes as ids;
use crate::services::{
    AttributeId, BrowseDescription, BrowseDirection, BrowseNextRequest, BrowsePath, BrowseRequest,
    CallMethodRequest, CallRequest, EndpointDescription, GetEndpointsRequest, ReadRequest,
    ReadValueId, ReferenceDescription, RelativePath, RelativePathElement, RequestHeader,
    ServiceRequest, ServiceResponse, TimestampsToReturn, TranslateBrowsePathsToNodeIdsRequest,
    ViewDescription, WriteRequest, WriteValue,
};
use crate::transport::TransmitBuffer;
use crate::types::StatusCode;

/// Bytes of chunks gathered before one (vectored) socket write.
pub const CLIENT_WRITE_BATCH: usize = 4 * 1024 * 1024;
/// Default TCP port of `opc.tcp` URLs.
pub const DEFAULT_OPC_TCP_PORT: u16 = 4840;

pub use subscriptions::{DEFAULT_PUBLISH_REQUESTS, RestoredSubscriptions, single_result};
/// Most BrowseNext rounds one `browse` follows.
pub const MAX_BROWSE_NEXT_ROUNDS: usize = 1000;
/// `HierarchicalReferences` (i=33), followed by `browse` and `translate`.
const HIERARCHICAL_REFERENCES: NodeId = NodeId::numeric(0, 33);

/// A failed client call.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server, the protocol or a timeout said no.
    #[error("{status}: {context}")]
    Status {
        /// The StatusCode.
        status: StatusCode,
        /// What was being done.
        context: String,
    },
    /// The socket failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        source: io::Error,
    },
}

impl ClientError {
    pub(crate) fn status(status: StatusCode, context: impl Into<String>) -> Self {
        Self::Status {
            status,
            context: context.into(),
        }
    }

    fn io(context: impl Into<String>, source: io::Error) -> Self {
        Self::Io {
            context: context.into(),
            source,
        }
    }

    /// The StatusCode (Bad_CommunicationError for socket errors).
    pub fn status_code(&self) -> StatusCode {
        match self {
            Self::Status { status, .. } => *status,
            Self::Io { .. } => StatusCode::BAD_COMMUNICATION_ERROR,
        }
    }
}

impl From<SendError> for ClientError {
    fn from(error: SendError) -> Self {
        Self::status(error.status_code(), error.to_string())
    }
}

/// `host:port` of an `opc.tcp://host[:port][/path]` URL.
pub fn socket_address(endpoint_url: &str) -> Result<String, ClientError> {
    let invalid = || {
        ClientError::status(
            StatusCode::BAD_TCP_ENDPOINT_URL_INVALID,
            format!("`{endpoint_url}` is not opc.tcp://HOST[:PORT][/PATH]"),
        )
    };
    let rest = endpoint_url
        .strip_prefix("opc.tcp://")
        .ok_or_else(invalid)?;
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() {
        return Err(invalid());
    }
    // A bracketed IPv6 literal keeps its colons.
    let has_port = match authority.rfind(']') {
        Some(end) => authority.get(end + 1..).is_some_and(|s| s.starts_with(':')),
        None => authority.contains(':'),
    };
    Ok(if has_port {
        authority.to_owned()
    } else {
        format!("{authority}:{DEFAULT_OPC_TCP_PORT}")
    })
}

/// A connected client with an active session.
#[derive(Debug)]
pub struct OpcuaClient {
    socket: TcpStream,
    connection: ClientConnection,
    transmit: TransmitBuffer,
    completed: HashMap<u32, Result<ServiceResponse, StatusCode>>,
    closed: Option<(StatusCode, String)>,
    /// Subscriptions, outstanding Publish requests and undelivered notifications.
    subs: subscriptions::SubscriptionDriver,
    operation_limits: Option<super::batch::ServerOperationLimits>,
}

impl OpcuaClient {
    /// Connects to `endpoint_url` and activates a session as `identity`, with default limits
    /// and timeouts.
    pub async fn connect(
        endpoint_url: &str,
        identity: ClientIdentity,
    ) -> Result<Self, ClientError> {
        let mut config = ClientConfig::new(endpoint_url);
        config.identity = identity;
        Self::connect_with(config).await
    }

    /// Connects with an explicit configuration.
    pub async fn connect_with(config: ClientConfig) -> Result<Self, ClientError> {
        Self::connect_resuming(config, None).await
    }

    /// Connects and, given `resume`, re-activates that session on the new channel instead of
    /// creating one (a new session only if the server says it is gone); see
    /// [`ReconnectingClient`](super::reconnect::ReconnectingClient).
    pub async fn connect_resuming(
        config: ClientConfig,
        resume: Option<ResumeSession>,
    ) -> Result<Self, ClientError> {
        let address = socket_address(&config.endpoint_url)?;
        let timeout = config.connect_timeout;
        let socket = tokio::time::timeout(timeout, TcpStream::connect(&address))
            .await
            .map_err(|_| {
                ClientError::status(StatusCode::BAD_TIMEOUT, format!("connecting to {address}"))
            })?
            .map_err(|error| ClientError::io(format!("connecting to {address}"), error))?;
        socket
            .set_nodelay(true)
            .map_err(|error| ClientError::io("setting TCP_NODELAY", error))?;
        let connection = match resume {
            Some(session) => {
                ClientConnection::resume(config, Instant::now(), wall_clock_now(), session)
            }
            None => ClientConnection::new(config, Instant::now(), wall_clock_now()),
        };
        let mut client = Self {
            socket,
            connection,
            transmit: TransmitBuffer::new(),
            completed: HashMap::new(),
            closed: None,
            subs: subscriptions::SubscriptionDriver::default(),
            operation_limits: None,
        };
        let mut activated = false;
        while !activated {
            if let Some((status, reason)) = &client.closed {
                // A server tells an unauthenticated peer only the status; what to do about
                // an untrusted certificate is ours to say, from our own certificate.
                let hint = match client.connection.config().security.identity.as_ref() {
                    Some(ours) if *status == StatusCode::BAD_CERTIFICATE_UNTRUSTED => format!(
                        "; the server does not trust our certificate {0}: its operator must \
                         trust it (on a buildwire server: `buildwire opcua certs trust {0}`)",
                        ours.certificate.thumbprint_hex()
                    ),
                    _ => String::new(),
                };
                return Err(ClientError::status(
                    *status,
                    format!("connecting: {reason}{hint}"),
                ));
            }
            activated = client.step().await?;
        }
        Ok(client)
    }

    /// The endpoints of the server at `endpoint_url`, asked over a SecurityPolicy None
    /// channel without a session (servers answer discovery services on such a channel even
    /// when they offer no None endpoint).
    pub async fn discover_endpoints(
        endpoint_url: &str,
    ) -> Result<Vec<EndpointDescription>, ClientError> {
        let mut config = ClientConfig::new(endpoint_url);
        config.discovery_only = true;
        let mut client = Self::connect_with(config).await?;
        let endpoints = client.get_endpoints().await;
        let _ = client.close().await;
        endpoints
    }

    /// The certificate of the server's endpoint with `policy` and `mode`, from GetEndpoints.
    /// Check it against a trust list before connecting with it.
    pub async fn server_certificate(
        endpoint_url: &str,
        policy: SecurityPolicy,
        mode: MessageSecurityMode,
    ) -> Result<Certificate, ClientError> {
        let endpoints = Self::discover_endpoints(endpoint_url).await?;
        let wanted = ClientSecurity {
            policy,
            mode,
            ..ClientSecurity::default()
        };
        let Some(endpoint) = wanted.matching_endpoint(&endpoints).cloned() else {
            let offered: Vec<String> = endpoints
                .iter()
                .map(|e| {
                    let uri = e.security_policy_uri.as_str().unwrap_or_default();
                    let name = SecurityPolicy::from_uri(uri)
                        .map_or_else(|| uri.to_owned(), |p| p.name().to_owned());
                    format!("{name}/{:?}", e.security_mode)
                })
                .collect();
            return Err(ClientError::status(
                StatusCode::BAD_SECURITY_POLICY_REJECTED,
                format!(
                    "the server offers no {policy} endpoint with mode {mode:?}; it offers {}: choose one with --security and --mode",
                    offered.join(", ")
                ),
            ));
        };
        Certificate::from_der(endpoint.server_certificate.as_bytes().unwrap_or_default()).map_err(
            |error| {
                ClientError::status(
                    StatusCode::BAD_CERTIFICATE_INVALID,
                    format!("the server's certificate: {error}"),
                )
            },
        )
    }

    pub(crate) fn cached_operation_limits(&self) -> Option<super::batch::ServerOperationLimits> {
        self.operation_limits
    }

    pub(crate) fn cache_operation_limits(&mut self, limits: super::batch::ServerOperationLimits) {
        self.operation_limits = Some(limits);
    }

    /// The underlying connection (negotiated limits, endpoints...).
    pub fn connection(&self) -> &ClientConnection {
        &self.connection
    }

    /// Sends a request without waiting; returns its handle for
    /// [`next_response`](Self::next_response). Several may be in flight.
    pub async fn send(&mut self, request: impl Into<ServiceRequest>) -> Result<u32, ClientError> {
        let handle = self.connection.send(Instant::now(), request)?;
        self.flush().await?;
        Ok(handle)
    }

    /// Waits for any response of a request sent with [`send`](Self::send).
    pub async fn next_response(
        &mut self,
    ) -> Result<(u32, Result<ServiceResponse, StatusCode>), ClientError> {
        loop {
            if let Some(&handle) = self.completed.keys().next()
                && let Some(result) = self.completed.remove(&handle)
            {
                return Ok((handle, result));
            }
            self.check_open()?;
            self.step().await?;
        }
    }

    /// Sends one request and waits for its response; a ServiceFault, a bad service result
    /// or a timeout is an error with that status.
    pub async fn request(
        &mut self,
        request: impl Into<ServiceRequest>,
    ) -> Result<ServiceResponse, ClientError> {
        let request = request.into();
        let id = request.binary_encoding_id();
        let name = BINARY_ENCODING_IDS
            .iter()
            .find(|(_, number)| *number == id)
            .map_or("request", |(name, _)| *name);
        let handle = self.send(request).await?;
        loop {
            if let Some(result) = self.completed.remove(&handle) {
                return result.map_err(|status| ClientError::status(status, name));
            }
            self.check_open()?;
            self.step().await?;
        }
    }

    /// The references of `node` (forward, hierarchical, all node classes), following
    /// continuation points.
    pub async fn browse(
        &mut self,
        node: &NodeId,
    ) -> Result<Vec<ReferenceDescription>, ClientError> {
        let request = BrowseRequest {
            request_header: RequestHeader::default(),
            view: ViewDescription::default(),
            requested_max_references_per_node: 0,
            nodes_to_browse: vec![BrowseDescription {
                node_id: node.clone(),
                browse_direction: BrowseDirection::Forward,
                reference_type_id: HIERARCHICAL_REFERENCES,
                include_subtypes: true,
                node_class_mask: node_class_mask::ALL,
                result_mask: browse_result_mask::ALL,
            }],
        };
        let ServiceResponse::Browse(response) = self.request(request).await? else {
            return Err(unexpected("Browse"));
        };
        let mut result = first(response.results, "Browse")?;
        let mut references = Vec::new();
        for _round in 0..MAX_BROWSE_NEXT_ROUNDS {
            if result.status_code.is_bad() {
                return Err(ClientError::status(
                    result.status_code,
                    format!("browsing {node}"),
                ));
            }
            references.append(&mut result.references);
            let point = result.continuation_point;
            if point.as_bytes().is_none_or(<[u8]>::is_empty) {
                return Ok(references);
            }
            let next = BrowseNextRequest {
                request_header: RequestHeader::default(),
                release_continuation_points: false,
                continuation_points: vec![point],
            };
            let ServiceResponse::BrowseNext(response) = self.request(next).await? else {
                return Err(unexpected("BrowseNext"));
            };
            result = first(response.results, "BrowseNext")?;
        }
        Ok(references)
    }

    /// One attribute of each node, in order.
    pub async fn read(
        &mut self,
        nodes: &[NodeId],
        attribute: AttributeId,
    ) -> Result<Vec<DataValue>, ClientError> {
        let request = ReadRequest {
            request_header: RequestHeader::default(),
            max_age: 0.0,
            timestamps_to_return: TimestampsToReturn::Both,
            nodes_to_read: nodes
                .iter()
                .map(|node| ReadValueId {
                    node_id: node.clone(),
                    attribute_id: attribute.id(),
                    index_range: Default::default(),
                    data_encoding: QualifiedName::default(),
                })
                .collect(),
        };
        let ServiceResponse::Read(response) = self.request(request).await? else {
            return Err(unexpected("Read"));
        };
        if response.results.len() != nodes.len() {
            return Err(ClientError::status(
                StatusCode::BAD_UNKNOWN_RESPONSE,
                "Read returned another number of results",
            ));
        }
        Ok(response.results)
    }

    /// The built-in type that values of Variable `node` have: from its DataType attribute,
    /// else (an abstract or structured DataType such as BaseDataType or Number) from its
    /// current value; None when neither tells.
    pub async fn value_type(&mut self, node: &NodeId) -> Result<Option<VariantType>, ClientError> {
        let read = self
            .read(std::slice::from_ref(node), AttributeId::DataType)
            .await?;
        let data_type = read.into_iter().next().unwrap_or_default();
        let status = data_type.status.unwrap_or_default();
        if status.is_bad() {
            return Err(ClientError::status(
                status,
                format!("reading the DataType of {node}"),
            ));
        }
        if let Some(Variant::NodeId(id)) = &data_type.value
            && let Some(kind) = crate::services::attribute::builtin_type_of(id)
        {
            return Ok(Some(kind));
        }
        let value = self
            .read(std::slice::from_ref(node), AttributeId::Value)
            .await?;
        Ok(value
            .into_iter()
            .next()
            .and_then(|v| v.value)
            .and_then(|v| match v {
                Variant::Array(array) => Some(array.element_type()),
                other => other.scalar_type(),
            }))
    }

    /// The built-in types of `method`'s declared InputArguments, in order (None for an
    /// argument of another DataType); empty when the method declares none.
    pub async fn input_argument_types(
        &mut self,
        method: &NodeId,
    ) -> Result<Vec<Option<VariantType>>, ClientError> {
        let path = [QualifiedName::new(0, "InputArguments")];
        let targets = match self.translate(method, &path).await {
            Ok(targets) => targets,
            Err(e) if e.status_code() == StatusCode::BAD_NO_MATCH => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let Some(property) = targets.into_iter().next() else {
            return Ok(Vec::new());
        };
        let read = self.read(&[property.node_id], AttributeId::Value).await?;
        let elements = match read.into_iter().next().and_then(|v| v.value) {
            Some(Variant::Array(array)) => array.elements().to_vec(),
            _ => Vec::new(),
        };
        Ok(elements
            .iter()
            .map(|element| match element {
                Variant::ExtensionObject(object) => {
                    match crate::client::structures::Structure::decode(object) {
                        Some(crate::client::structures::Structure::Argument {
                            data_type, ..
                        }) => crate::services::attribute::builtin_type_of(&data_type),
                        _ => None,
                    }
                }
                _ => None,
            })
            .collect())
    }

    /// Writes the Value attribute of `node`; a bad result is an error.
    pub async fn write(&mut self, node: &NodeId, value: Variant) -> Result<(), ClientError> {
        let request = WriteRequest {
            request_header: RequestHeader::default(),
            nodes_to_write: vec![WriteValue {
                node_id: node.clone(),
                attribute_id: AttributeId::Value.id(),
                index_range: Default::default(),
                value: DataValue {
                    value: Some(value),
                    ..DataValue::default()
                },
            }],
        };
        let ServiceResponse::Write(response) = self.request(request).await? else {
            return Err(unexpected("Write"));
        };
        let status = first(response.results, "Write")?;
        if status.is_bad() {
            return Err(ClientError::status(status, format!("writing {node}")));
        }
        Ok(())
    }

    /// Calls `method` on `object`; returns the output arguments. A bad result is an error.
    pub async fn call(
        &mut self,
        object: &NodeId,
        method: &NodeId,
        args: Vec<Variant>,
    ) -> Result<Vec<Variant>, ClientError> {
        let ServiceResponse::Call(response) =
            self.request(call_request(object, method, args)).await?
        else {
            return Err(unexpected("Call"));
        };
        let result = first(response.results, "Call")?;
        if result.status_code.is_bad() {
            return Err(ClientError::status(
                result.status_code,
                format!("calling {method} on {object}"),
            ));
        }
        Ok(result.output_arguments)
    }

    /// Follows hierarchical references from `start` through the browse names of `path`.
    pub async fn translate(
        &mut self,
        start: &NodeId,
        path: &[QualifiedName],
    ) -> Result<Vec<ExpandedNodeId>, ClientError> {
        let request = TranslateBrowsePathsToNodeIdsRequest {
            request_header: RequestHeader::default(),
            browse_paths: vec![BrowsePath {
                starting_node: start.clone(),
                relative_path: RelativePath {
                    elements: path
                        .iter()
                        .map(|name| RelativePathElement {
                            reference_type_id: HIERARCHICAL_REFERENCES,
                            is_inverse: false,
                            include_subtypes: true,
                            target_name: name.clone(),
                        })
                        .collect(),
                },
            }],
        };
        let ServiceResponse::TranslateBrowsePathsToNodeIds(response) =
            self.request(request).await?
        else {
            return Err(unexpected("TranslateBrowsePathsToNodeIds"));
        };
        let result = first(response.results, "TranslateBrowsePathsToNodeIds")?;
        if result.status_code.is_bad() {
            return Err(ClientError::status(
                result.status_code,
                "translating a browse path",
            ));
        }
        Ok(result.targets.into_iter().map(|t| t.target_id).collect())
    }

    /// The server's endpoints.
    pub async fn get_endpoints(&mut self) -> Result<Vec<EndpointDescription>, ClientError> {
        let request = GetEndpointsRequest {
            request_header: RequestHeader::default(),
            endpoint_url: self.connection.config().endpoint_url.as_str().into(),
            locale_ids: Vec::new(),
            profile_uris: Vec::new(),
        };
        let ServiceResponse::GetEndpoints(response) = self.request(request).await? else {
            return Err(unexpected("GetEndpoints"));
        };
        Ok(response.endpoints)
    }

    /// Closes the session and the secure channel, then the socket.
    pub async fn close(mut self) -> Result<(), ClientError> {
        self.connection.close(Instant::now());
        while self.closed.is_none() {
            self.step().await?;
        }
        self.flush().await?;
        let _ = self.socket.shutdown().await;
        match self.closed {
            Some((status, reason)) if status.is_bad() => {
                Err(ClientError::status(status, format!("closing: {reason}")))
            }
            _ => Ok(()),
        }
    }

    /// True while the connection is open, as far as can be told without waiting: bytes the
    /// server already sent (an Error message, the end of the stream after a restart) are
    /// taken in first, so a call after a server restart does not send into a dead socket.
    pub fn is_open(&mut self) -> bool {
        if self.closed.is_none() {
            match self.socket.try_read_buf(self.connection.read_buffer()) {
                Ok(0) => self.connection.handle_end_of_stream(),
                Ok(_) => self.connection.handle_received(Instant::now()),
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => self.connection.handle_end_of_stream(),
            }
            self.collect_events();
        }
        self.closed.is_none()
    }

    fn check_open(&self) -> Result<(), ClientError> {
        match &self.closed {
            Some((status, reason)) => Err(ClientError::status(
                if status.is_good() {
                    StatusCode::BAD_CONNECTION_CLOSED
                } else {
                    *status
                },
                reason.clone(),
            )),
            None => Ok(()),
        }
    }

    /// Writes everything the connection has to send.
    async fn flush(&mut self) -> Result<(), ClientError> {
        while self
            .connection
            .transmit_buffered(&mut self.transmit, CLIENT_WRITE_BATCH)
            > 0
        {
            self.socket
                .write_all_buf(&mut self.transmit)
                .await
                .map_err(|error| ClientError::io("writing to the server", error))?;
        }
        Ok(())
    }

    /// Flushes, waits for bytes or the next deadline, and collects events. Returns true when
    /// the session was activated during this step.
    async fn step(&mut self) -> Result<bool, ClientError> {
        self.flush().await?;
        if self.closed.is_none() {
            let deadline = self.connection.poll_timeout();
            tokio::select! {
                // Straight into the connection's receive buffer: frames and one-chunk
                // responses are split off it without a copy.
                read = self.socket.read_buf(self.connection.read_buffer()) => match read {
                    Ok(0) => self.connection.handle_end_of_stream(),
                    Ok(_) => self.connection.handle_received(Instant::now()),
                    Err(error) => {
                        self.connection.handle_end_of_stream();
                        self.collect_events();
                        return Err(ClientError::io("reading from the server", error));
                    }
                },
                () = sleep_until(deadline) => self.connection.handle_timeout(Instant::now()),
            }
        }
        let activated = self.collect_events();
        self.flush().await?;
        Ok(activated)
    }

    fn collect_events(&mut self) -> bool {
        let mut activated = false;
        while let Some(event) = self.connection.poll_event() {
            match event {
                ClientEvent::SessionActivated => activated = true,
                ClientEvent::Response { handle, response } => {
                    self.completed.insert(handle, Ok(*response));
                }
                ClientEvent::RequestFailed { handle, status } => {
                    self.completed.insert(handle, Err(status));
                }
                ClientEvent::Closed { status, reason } => self.closed = Some((status, reason)),
            }
        }
        activated
    }
}

/// A Call request for one method.
pub fn call_request(object: &NodeId, method: &NodeId, args: Vec<Variant>) -> CallRequest {
    CallRequest {
        request_header: RequestHeader::default(),
        methods_to_call: vec![CallMethodRequest {
            object_id: object.clone(),
            method_id: method.clone(),
            input_arguments: args,
        }],
    }
}

/// The ByteString payload of a getData-style Call response, if that is what it carries.
pub fn single_byte_string_output(response: &ServiceResponse) -> Option<&ByteString> {
    let ServiceResponse::Call(call) = response else {
        return None;
    };
    let result = call.results.first()?;
    if result.status_code.is_bad() {
        return None;
    }
    match result.output_arguments.first()? {
        Variant::ByteString(bytes) => Some(bytes),
        _ => None,
    }
}

fn unexpected(service: &str) -> ClientError {
    ClientError::status(
        StatusCode::BAD_UNKNOWN_RESPONSE,
        format!("the server answered {service} with another response type"),
    )
}

fn first<T>(results: Vec<T>, service: &str) -> Result<T, ClientError> {
    results.into_iter().next().ok_or_else(|| {
        ClientError::status(
            StatusCode::BAD_UNKNOWN_RESPONSE,
            format!("{service} returned no result"),
        )
    })
}

/// The namespace-0 nodes a client reads most.
pub mod nodes {
    use super::{NodeId, ids};

    /// Objects folder (i=85).
    pub const OBJECTS: NodeId = ids::OBJECTS_FOLDER;
    /// Server_ServerStatus_CurrentTime (i=2258).
    pub const CURRENT_TIME: NodeId = ids::SERVER_SERVER_STATUS_CURRENT_TIME;
    /// Server_NamespaceArray (i=2255).
    pub const NAMESPACE_ARRAY: NodeId = ids::SERVER_NAMESPACE_ARRAY;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_urls() {
        assert_eq!(
            socket_address("opc.tcp://127.0.0.1:4841/x").unwrap(),
            "127.0.0.1:4841"
        );
        assert_eq!(socket_address("opc.tcp://plc").unwrap(), "plc:4840");
        assert_eq!(
            socket_address("opc.tcp://[::1]:48400").unwrap(),
            "[::1]:48400"
        );
        assert_eq!(socket_address("opc.tcp://[::1]/").unwrap(), "[::1]:4840");
        assert_eq!(
            socket_address("http://x").unwrap_err().status_code(),
            StatusCode::BAD_TCP_ENDPOINT_URL_INVALID
        );
        assert!(socket_address("opc.tcp:///path").is_err());
    }
}
