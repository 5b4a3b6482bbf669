//! DeviceCommunicationControl (Clause 16.1): tell a device to stop (and later resume)
//! answering or initiating messages, optionally for a number of minutes and behind a
//! password.
//!
//! ```text
//! DeviceCommunicationControl-Request ::= SEQUENCE {
//!     time-duration  [0] Unsigned16 OPTIONAL,          -- minutes
//!     enable-disable [1] ENUMERATED { enable (0), disable (1), disable-initiation (2) },
//!     password       [2] CharacterString (SIZE (1..20)) OPTIONAL
//! }
//! ```

use super::password::{decode_password, encode_password};
use crate::encoding::context::{decode_optional_context, encode_optional_context};
use crate::encoding::{DecodeError, PrimitiveValue, Reader};
use crate::enums::EnableDisable;

/// DeviceCommunicationControl-Request.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DeviceCommunicationControlRequest {
    /// [0] minutes until communication is enabled again; `None` for no limit.
    pub time_duration: Option<u16>,
    /// [1] what to do.
    pub enable_disable: EnableDisable,
    /// [2] the device's password, when it has one.
    pub password: Option<String>,
}

impl DeviceCommunicationControlRequest {
    /// Appends the service parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        encode_optional_context(self.time_duration.as_ref(), 0, buf);
        self.enable_disable.encode_context(1, buf);
        encode_password(self.password.as_ref(), 2, buf);
    }

    /// Decodes the service parameters; a password outside 1..=20 characters is an
    /// `InvalidValue`.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            time_duration: decode_optional_context(reader, 0)?,
            enable_disable: EnableDisable::decode_context(reader, 1)?,
            password: decode_password(reader, 2)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::DecodeErrorKind;

    #[test]
    fn example_bytes_and_password_limits() {
        // Clause F.4.1: disable for 5 minutes with password "#egbdf!".
        let request = DeviceCommunicationControlRequest {
            time_duration: Some(5),
            enable_disable: EnableDisable::Disable,
            password: Some("#egbdf!".to_owned()),
        };
        let mut buf = Vec::new();
        request.encode(&mut buf);
        assert_eq!(
            buf,
            [
                0x09, 0x05, 0x19, 0x01, 0x2D, 0x08, 0x00, 0x23, 0x65, 0x67, 0x62, 0x64, 0x66, 0x21
            ]
        );
        assert_eq!(
            DeviceCommunicationControlRequest::decode(&mut Reader::new(&buf)).unwrap(),
            request
        );
        let long = DeviceCommunicationControlRequest {
            password: Some("x".repeat(21)),
            ..request
        };
        let mut buf = Vec::new();
        long.encode(&mut buf);
        let err = DeviceCommunicationControlRequest::decode(&mut Reader::new(&buf)).unwrap_err();
        assert_eq!(
            err.kind,
            DecodeErrorKind::InvalidValue("password must have 1 to 20 characters")
        );
    }
}
