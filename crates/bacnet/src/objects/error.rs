//! `PropertyError`: the error class and code a property read or write answers with
//! (Clause 18 / Clause 15.5.1.3), with constructors for the codes the object layer uses.

use crate::enums::{ErrorClass, ErrorCode};

/// Why a property could not be read or written: the pair carried back in an Error PDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[error("{class}: {code}")]
pub struct PropertyError {
    /// Error class (usually `property` or `object`).
    pub class: ErrorClass,
    /// Error code.
    pub code: ErrorCode,
}

impl PropertyError {
    /// An error of class `property` with `code`.
    pub const fn property(code: ErrorCode) -> Self {
        Self {
            class: ErrorClass::Property,
            code,
        }
    }

    /// `object` / `unknown-object`: no object with that identifier.
    pub const UNKNOWN_OBJECT: Self = Self {
        class: ErrorClass::Object,
        code: ErrorCode::UnknownObject,
    };
    /// `property` / `unknown-property`: the object has no such property.
    pub const UNKNOWN_PROPERTY: Self = Self::property(ErrorCode::UnknownProperty);
    /// `property` / `write-access-denied`: the property is read-only (now or always).
    pub const WRITE_ACCESS_DENIED: Self = Self::property(ErrorCode::WriteAccessDenied);
    /// `property` / `invalid-array-index`: index beyond the array's length.
    pub const INVALID_ARRAY_INDEX: Self = Self::property(ErrorCode::InvalidArrayIndex);
    /// `property` / `property-is-not-an-array`: an index was given for a non-array.
    pub const NOT_AN_ARRAY: Self = Self::property(ErrorCode::PropertyIsNotAnArray);
    /// `property` / `value-out-of-range`: right type, value not allowed.
    pub const VALUE_OUT_OF_RANGE: Self = Self::property(ErrorCode::ValueOutOfRange);
    /// `property` / `invalid-data-type`: the written value has the wrong datatype.
    pub const INVALID_DATA_TYPE: Self = Self::property(ErrorCode::InvalidDataType);
    /// `property` / `duplicate-name`: another object already has that object-name.
    pub const DUPLICATE_NAME: Self = Self::property(ErrorCode::DuplicateName);
    /// `object` / `object-identifier-already-exists`: an object with that id is present.
    pub const OBJECT_ALREADY_EXISTS: Self = Self {
        class: ErrorClass::Object,
        code: ErrorCode::ObjectIdentifierAlreadyExists,
    };
    /// `object` / `object-deletion-not-permitted`: the device object cannot be removed.
    pub const DELETION_NOT_PERMITTED: Self = Self {
        class: ErrorClass::Object,
        code: ErrorCode::ObjectDeletionNotPermitted,
    };
    /// `services` / `parameter-out-of-range`: a write priority outside 1..=16.
    pub const PRIORITY_OUT_OF_RANGE: Self = Self {
        class: ErrorClass::Services,
        code: ErrorCode::ParameterOutOfRange,
    };
    /// `services` / `property-is-not-a-list`: AddListElement or RemoveListElement on a
    /// property that is not a list.
    pub const NOT_A_LIST: Self = Self {
        class: ErrorClass::Services,
        code: ErrorCode::PropertyIsNotAList,
    };
    /// `services` / `list-element-not-found`: RemoveListElement of an item not in the list.
    pub const LIST_ELEMENT_NOT_FOUND: Self = Self {
        class: ErrorClass::Services,
        code: ErrorCode::ListElementNotFound,
    };
    /// `property` / `datatype-not-supported`: ReadRange by sequence number or time of a
    /// list without sequence numbers or timestamps.
    pub const DATATYPE_NOT_SUPPORTED: Self = Self::property(ErrorCode::DatatypeNotSupported);
    /// `property` / `read-access-denied`: the property is not readable this way.
    pub const READ_ACCESS_DENIED: Self = Self::property(ErrorCode::ReadAccessDenied);
    /// `resources` / `no-space-to-add-list-element`: the database is full.
    pub const NO_SPACE: Self = Self {
        class: ErrorClass::Resources,
        code: ErrorCode::NoSpaceToAddListElement,
    };
}
