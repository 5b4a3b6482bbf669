//! ReinitializeDevice (Clause 16.4): restart a device (cold or warm), or drive a backup
//! or restore, optionally behind a password.
//!
//! ```text
//! ReinitializeDevice-Request ::= SEQUENCE {
//!     reinitialized-state-of-device [0] ENUMERATED { coldstart (0), warmstart (1),
//!         start-backup (2), end-backup (3), start-restore (4), end-restore (5),
//!         abort-restore (6), activate-changes (7) },
//!     password [1] CharacterString (SIZE (1..20)) OPTIONAL
//! }
//! ```

use super::password::{decode_password, encode_password};
use crate::encoding::{DecodeError, PrimitiveValue, Reader};
use crate::enums::ReinitializedState;

/// ReinitializeDevice-Request.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReinitializeDeviceRequest {
    /// [0] what to do.
    pub state: ReinitializedState,
    /// [1] the device's password, when it has one.
    pub password: Option<String>,
}

impl ReinitializeDeviceRequest {
    /// Appends the service parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.state.encode_context(0, buf);
        encode_password(self.password.as_ref(), 1, buf);
    }

    /// Decodes the service parameters.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            state: ReinitializedState::decode_context(reader, 0)?,
            password: decode_password(reader, 1)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_bytes() {
        // Clause F.4.4: warmstart with password "AbCdEfGh".
        let request = ReinitializeDeviceRequest {
            state: ReinitializedState::Warmstart,
            password: Some("AbCdEfGh".to_owned()),
        };
        let mut buf = Vec::new();
        request.encode(&mut buf);
        assert_eq!(
            buf,
            [
                0x09, 0x01, 0x1D, 0x09, 0x00, 0x41, 0x62, 0x43, 0x64, 0x45, 0x66, 0x47, 0x68
            ]
        );
        assert_eq!(
            ReinitializeDeviceRequest::decode(&mut Reader::new(&buf)).unwrap(),
            request
        );
    }
}
