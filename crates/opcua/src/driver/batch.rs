//! Batched reads and writes on [`OpcuaClient`] that honour the server's operation limits.
//!
//! The server publishes its limits under Server/ServerCapabilities/OperationLimits
//! (MaxNodesPerRead i=11705, MaxNodesPerWrite i=11707, MaxNodesPerBrowse i=11710 ...; OPC
//! 10000-5 §6.3.11). [`OpcuaClient::operation_limits`] reads them once per connection;
//! [`read_many`](OpcuaClient::read_many) and [`write_many`](OpcuaClient::write_many) split a
//! request into batches no larger than the limit, keep up to [`PIPELINE_DEPTH`] batches in
//! flight and put the results back in request order.
//!
//! A limit of 0 means "no limit" (OPC 10000-5 §6.3.11); a server that publishes none (or that
//! answers the limit nodes with a bad status) is treated the same. In both cases batches are
//! still capped at [`FALLBACK_BATCH_SIZE`] operations, so that one huge request does not
//! become one response too large for either side's maximum message size.

use std::collections::HashMap;

use super::client::{ClientError, OpcuaClient};
use crate::encoding::{DataValue, NodeId, QualifiedName, Variant};
use crate::server::namespace_zero::{
    MAX_NODES_PER_BROWSE, MAX_NODES_PER_METHOD_CALL, MAX_NODES_PER_READ, MAX_NODES_PER_WRITE,
};
use crate::services::{
    AttributeId, ReadRequest, ReadValueId, RequestHeader, ServiceResponse, TimestampsToReturn,
    WriteRequest, WriteValue,
};
use crate::types::StatusCode;

/// Batches of one `read_many` / `write_many` in flight at once.
pub const PIPELINE_DEPTH: usize = 4;
/// Largest batch when the server publishes no limit.
pub const FALLBACK_BATCH_SIZE: usize = 1000;

/// The server's operation limits (0: no limit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerOperationLimits {
    /// MaxNodesPerRead.
    pub max_nodes_per_read: u32,
    /// MaxNodesPerWrite.
    pub max_nodes_per_write: u32,
    /// MaxNodesPerBrowse.
    pub max_nodes_per_browse: u32,
    /// MaxNodesPerMethodCall.
    pub max_nodes_per_method_call: u32,
}

/// Batch size for a published limit.
fn batch_size(limit: u32) -> usize {
    match limit {
        0 => FALLBACK_BATCH_SIZE,
        limit => limit as usize,
    }
}

/// A ReadValueId for the Value attribute of `node`.
pub fn value_of(node: &NodeId) -> ReadValueId {
    ReadValueId {
        node_id: node.clone(),
        attribute_id: AttributeId::Value.id(),
        index_range: Default::default(),
        data_encoding: QualifiedName::default(),
    }
}

impl OpcuaClient {
    /// The server's operation limits, read once per connection (one Read of four nodes);
    /// limits the server does not publish are 0.
    pub async fn operation_limits(&mut self) -> Result<ServerOperationLimits, ClientError> {
        if let Some(limits) = self.cached_operation_limits() {
            return Ok(limits);
        }
        let ids = [
            MAX_NODES_PER_READ,
            MAX_NODES_PER_WRITE,
            MAX_NODES_PER_BROWSE,
            MAX_NODES_PER_METHOD_CALL,
        ]
        .map(|id| NodeId::numeric(0, id));
        let values = self.read(&ids, AttributeId::Value).await?;
        let number = |value: &DataValue| match (&value.value, value.status.unwrap_or_default()) {
            (Some(Variant::UInt32(limit)), status) if !status.is_bad() => *limit,
            _ => 0,
        };
        let limits = ServerOperationLimits {
            max_nodes_per_read: number(&values[0]),
            max_nodes_per_write: number(&values[1]),
            max_nodes_per_browse: number(&values[2]),
            max_nodes_per_method_call: number(&values[3]),
        };
        self.cache_operation_limits(limits);
        Ok(limits)
    }

    /// Reads any number of attributes: batches of at most MaxNodesPerRead, up to
    /// [`PIPELINE_DEPTH`] in flight, results in the order of `reads`. A failed batch fails
    /// the whole call.
    pub async fn read_many(
        &mut self,
        reads: &[ReadValueId],
    ) -> Result<Vec<DataValue>, ClientError> {
        if reads.is_empty() {
            return Ok(Vec::new());
        }
        let size = batch_size(self.operation_limits().await?.max_nodes_per_read);
        let requests = reads.chunks(size).map(|batch| {
            ReadRequest {
                request_header: RequestHeader::default(),
                max_age: 0.0,
                timestamps_to_return: TimestampsToReturn::Both,
                nodes_to_read: batch.to_vec(),
            }
            .into()
        });
        let responses = self.pipeline(requests, "Read").await?;
        let mut results = Vec::with_capacity(reads.len());
        for (batch, response) in reads.chunks(size).zip(responses) {
            let ServiceResponse::Read(response) = response else {
                return Err(unexpected_response("Read"));
            };
            if response.results.len() != batch.len() {
                return Err(wrong_count("Read"));
            }
            results.extend(response.results);
        }
        Ok(results)
    }

    /// The Value attribute of each node, batched as [`read_many`](Self::read_many).
    pub async fn read_values(&mut self, nodes: &[NodeId]) -> Result<Vec<DataValue>, ClientError> {
        let reads: Vec<ReadValueId> = nodes.iter().map(value_of).collect();
        self.read_many(&reads).await
    }

    /// Writes any number of values: batches of at most MaxNodesPerWrite, up to
    /// [`PIPELINE_DEPTH`] in flight; returns each write's status in the order of `writes`.
    pub async fn write_many(
        &mut self,
        writes: &[WriteValue],
    ) -> Result<Vec<StatusCode>, ClientError> {
        if writes.is_empty() {
            return Ok(Vec::new());
        }
        let size = batch_size(self.operation_limits().await?.max_nodes_per_write);
        let requests = writes.chunks(size).map(|batch| {
            WriteRequest {
                request_header: RequestHeader::default(),
                nodes_to_write: batch.to_vec(),
            }
            .into()
        });
        let responses = self.pipeline(requests, "Write").await?;
        let mut results = Vec::with_capacity(writes.len());
        for (batch, response) in writes.chunks(size).zip(responses) {
            let ServiceResponse::Write(response) = response else {
                return Err(unexpected_response("Write"));
            };
            if response.results.len() != batch.len() {
                return Err(wrong_count("Write"));
            }
            results.extend(response.results);
        }
        Ok(results)
    }

    /// Sends `requests` with up to [`PIPELINE_DEPTH`] in flight; returns the responses in
    /// request order.
    async fn pipeline(
        &mut self,
        requests: impl Iterator<Item = crate::services::ServiceRequest>,
        service: &str,
    ) -> Result<Vec<ServiceResponse>, ClientError> {
        let mut requests = requests.enumerate();
        let mut in_flight: HashMap<u32, usize> = HashMap::new();
        let mut done: Vec<Option<ServiceResponse>> = Vec::new();
        let mut failed: Option<ClientError> = None;
        loop {
            while failed.is_none() && in_flight.len() < PIPELINE_DEPTH {
                let Some((index, request)) = requests.next() else {
                    break;
                };
                match self.send(request).await {
                    Ok(handle) => {
                        in_flight.insert(handle, index);
                        done.push(None);
                    }
                    Err(error) => failed = Some(error),
                }
            }
            if in_flight.is_empty() {
                break;
            }
            // After a failure the batches already sent are still collected, so that no
            // response is left behind in the client.
            let (handle, result) = self.next_response().await?;
            let Some(index) = in_flight.remove(&handle) else {
                // Not one of ours (a response left over from an abandoned call): drop it.
                continue;
            };
            match result {
                Ok(response) => done[index] = Some(response),
                Err(status) => {
                    failed.get_or_insert(ClientError::Status {
                        status,
                        context: format!("batch {} of a batched {service}", index + 1),
                    });
                }
            }
        }
        if let Some(error) = failed {
            return Err(error);
        }
        done.into_iter()
            .map(|response| response.ok_or_else(|| wrong_count(service)))
            .collect()
    }
}

fn unexpected_response(service: &str) -> ClientError {
    ClientError::Status {
        status: StatusCode::BAD_UNKNOWN_RESPONSE,
        context: format!("the server answered {service} with another response type"),
    }
}

fn wrong_count(service: &str) -> ClientError {
    ClientError::Status {
        status: StatusCode::BAD_UNKNOWN_RESPONSE,
        context: format!("{service} returned another number of results than it was asked for"),
    }
}
