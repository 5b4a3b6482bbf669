//! `BACnetRejectReason` and `BACnetAbortReason` (ASHRAE 135-2020 Clause 18.8, 18.9, 21), generated from the tables below.
//!
//! Numbers and names follow ASHRAE 135-2020 Clause 21 and its published addenda; they were
//! cross-checked against the bacnet-stack and BACpypes3 tables. Where those disagree on a
//! name, the newer standard spelling is used and the older one is kept as a parse alias.

use super::enum_table::bacnet_enum;

bacnet_enum! {
    /// Reason carried by a Reject PDU (`BACnetRejectReason`). 0..=63 ASHRAE, 64..=255 proprietary.
    pub enum RejectReason {
        Other = 0 => "other",
        BufferOverflow = 1 => "buffer-overflow",
        InconsistentParameters = 2 => "inconsistent-parameters",
        InvalidParameterDataType = 3 => "invalid-parameter-data-type",
        InvalidTag = 4 => "invalid-tag",
        MissingRequiredParameter = 5 => "missing-required-parameter",
        ParameterOutOfRange = 6 => "parameter-out-of-range",
        TooManyArguments = 7 => "too-many-arguments",
        UndefinedEnumeration = 8 => "undefined-enumeration",
        UnrecognizedService = 9 => "unrecognized-service",
        InvalidDataEncoding = 10 => "invalid-data-encoding",
    }
    unknown: Unknown;
    proprietary: 64..=255;
    aliases: {}
}

bacnet_enum! {
    /// Reason carried by an Abort PDU (`BACnetAbortReason`). 0..=63 ASHRAE, 64..=255 proprietary.
    pub enum AbortReason {
        Other = 0 => "other",
        BufferOverflow = 1 => "buffer-overflow",
        InvalidApduInThisState = 2 => "invalid-apdu-in-this-state",
        PreemptedByHigherPriorityTask = 3 => "preempted-by-higher-priority-task",
        SegmentationNotSupported = 4 => "segmentation-not-supported",
        SecurityError = 5 => "security-error",
        InsufficientSecurity = 6 => "insufficient-security",
        WindowSizeOutOfRange = 7 => "window-size-out-of-range",
        ApplicationExceededReplyTime = 8 => "application-exceeded-reply-time",
        OutOfResources = 9 => "out-of-resources",
        TsmTimeout = 10 => "tsm-timeout",
        ApduTooLong = 11 => "apdu-too-long",
    }
    unknown: Unknown;
    proprietary: 64..=255;
    aliases: {}
}
