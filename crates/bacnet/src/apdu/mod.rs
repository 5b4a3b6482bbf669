//! Clause 20.1 application-layer PDUs: the fixed headers of all eight PDU types and
//! the service-choice enumerations.

pub(crate) mod header;
pub(crate) mod service_choice;

pub use header::{Apdu, BacnetError, MaxApdu, MaxSegments, PduType, SegmentInfo};
pub use service_choice::{ConfirmedServiceChoice, UnconfirmedServiceChoice};
