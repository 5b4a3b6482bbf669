//! Secure channel framing for SecurityPolicy None (OPC 10000-6 §6.7.2): the channel id, the
//! asymmetric (OPN) or symmetric (MSG, CLO) security header and the sequence header that
//! precede a message body, and the reassembly of chunked messages. Signing, encryption and
//! the channel state machine belong to later layers.

mod chunk;
mod message_assembler;
mod security_header;
mod sequence_header;

pub use chunk::{SecureChannelChunk, SecureChannelError, SecurityHeader};
pub use message_assembler::{
    AssembledMessage, AssemblerRole, AssemblyError, AssemblyEvent, MAX_MESSAGES_IN_PROGRESS,
    MessageAssembler,
};
pub use security_header::{
    AsymmetricSecurityHeader, MAX_SECURITY_POLICY_URI_LENGTH, SECURITY_POLICY_NONE_URI,
    SymmetricSecurityHeader,
};
pub use sequence_header::SequenceHeader;
