//! The throughput benchmark methods: object `ns=1;i=5000` "Throughput" organized by Objects,
//! with `setSize` (`ns=1;i=6000`: input UInt32 size in KiB; fills a buffer of that many KiB with
//! xorshift bytes) and `getData` (`ns=1;i=6001`: output ByteString, the buffer).
//!
//! No server has them unless they are installed: [`install`] is a setup step like any user
//! code's (`OpcuaServerConfig::with_setup(bench_methods::install)` for the tokio server,
//! or called on a sans-IO [`Server`]). Install it before registering other namespaces, so
//! that its namespace gets index 1, the index of the NodeIds below.
//!
//! The buffer is shared storage ([`Bytes`]): `getData` hands out a reference, the Call
//! response refers to it, and each outgoing chunk refers to its slice of it, so the socket
//! write (a gather write) is the only copy.

use bytes::Bytes;

use super::address_space::{AddNodeError, MethodArgument, MethodHandler};
use super::server_state::Server;
use crate::encoding::{NodeId, QualifiedName, VariantType};
use crate::services::well_known_nodes as ids;
use crate::types::StatusCode;

/// URI of the benchmark namespace (index 1 when registered first).
pub const THROUGHPUT_NAMESPACE_URI: &str = "urn:buildwire:opcua:throughput";
/// The Throughput object.
pub const THROUGHPUT_OBJECT: NodeId = NodeId::numeric(1, 5000);
/// The `setSize` method.
pub const SET_SIZE_METHOD: NodeId = NodeId::numeric(1, 6000);
/// The `getData` method.
pub const GET_DATA_METHOD: NodeId = NodeId::numeric(1, 6001);
/// Largest buffer `setSize` accepts, in KiB (256 MiB).
pub const MAX_THROUGHPUT_KIB: u32 = 256 * 1024;

/// The payload `getData` returns.
#[derive(Clone, Debug)]
pub struct ThroughputBuffer {
    data: Bytes,
    seed: u64,
}

impl Default for ThroughputBuffer {
    fn default() -> Self {
        Self {
            data: Bytes::new(),
            seed: 0x9E37_79B9_7F4A_7C15,
        }
    }
}

impl ThroughputBuffer {
    /// The current payload (shared, not copied).
    pub fn data(&self) -> Bytes {
        self.data.clone()
    }

    /// Refills the buffer with `kib` KiB of xorshift64 output; Bad_OutOfRange beyond
    /// [`MAX_THROUGHPUT_KIB`].
    pub fn set_size(&mut self, kib: u32) -> Result<(), StatusCode> {
        if kib > MAX_THROUGHPUT_KIB {
            return Err(StatusCode::BAD_OUT_OF_RANGE);
        }
        let length = kib as usize * 1024;
        let mut data = vec![0u8; length];
        let mut state = self.seed;
        // KiB multiples are whole 8-byte words.
        for word in data.chunks_exact_mut(8) {
            // xorshift64 (Marsaglia): 13, 7, 17.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            word.copy_from_slice(&state.to_le_bytes());
        }
        self.seed = state;
        self.data = Bytes::from(data);
        Ok(())
    }
}

/// Registers the benchmark namespace (in Server.NamespaceArray too) and adds the Throughput
/// object and its two methods; their payload is `server.throughput`.
pub fn install(server: &mut Server) -> Result<(), AddNodeError> {
    let namespace = server.add_namespace(THROUGHPUT_NAMESPACE_URI);
    let space = &mut server.address_space;
    space.add_object(
        &ids::OBJECTS_FOLDER,
        NodeId::numeric(namespace, 5000),
        QualifiedName::new(namespace, "Throughput"),
    )?;
    space.add_method(
        &THROUGHPUT_OBJECT,
        SET_SIZE_METHOD,
        QualifiedName::new(namespace, "setSize"),
        vec![MethodArgument::new(
            "size",
            VariantType::UInt32,
            "buffer size in KiB",
        )],
        Vec::new(),
        MethodHandler::ThroughputSetSize,
    )?;
    space.add_method(
        &THROUGHPUT_OBJECT,
        GET_DATA_METHOD,
        QualifiedName::new(namespace, "getData"),
        Vec::new(),
        vec![MethodArgument::new(
            "data",
            VariantType::ByteString,
            "the buffer",
        )],
        MethodHandler::ThroughputGetData,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_size_fills_and_changes_content() {
        let mut buffer = ThroughputBuffer::default();
        assert!(buffer.data().is_empty());
        buffer.set_size(4).unwrap();
        let first = buffer.data();
        assert_eq!(first.len(), 4096);
        assert!(first.iter().any(|b| *b != 0));
        buffer.set_size(4).unwrap();
        assert_ne!(buffer.data(), first);
        assert_eq!(
            buffer.set_size(MAX_THROUGHPUT_KIB + 1),
            Err(StatusCode::BAD_OUT_OF_RANGE)
        );
        buffer.set_size(0).unwrap();
        assert!(buffer.data().is_empty());
    }
}
