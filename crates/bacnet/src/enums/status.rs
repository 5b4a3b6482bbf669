//! Small status enumerations of Clause 21 (segmentation, event state, reliability, polarity, binary PV), generated from the tables below.
//!
//! Numbers and names follow ASHRAE 135-2020 Clause 21 and its published addenda; they were
//! cross-checked against the bacnet-stack and BACpypes3 tables. Where those disagree on a
//! name, the newer standard spelling is used and the older one is kept as a parse alias.

use super::enum_table::bacnet_enum;

bacnet_enum! {
    /// Segmentation support of a device (`BACnetSegmentation`).
    pub enum Segmentation {
        SegmentedBoth = 0 => "segmented-both",
        SegmentedTransmit = 1 => "segmented-transmit",
        SegmentedReceive = 2 => "segmented-receive",
        NoSegmentation = 3 => "no-segmentation",
    }
    unknown: Other;
    aliases: {}
}

bacnet_enum! {
    /// Event state of an object (`BACnetEventState`).
    pub enum EventState {
        Normal = 0 => "normal",
        Fault = 1 => "fault",
        Offnormal = 2 => "offnormal",
        HighLimit = 3 => "high-limit",
        LowLimit = 4 => "low-limit",
        LifeSafetyAlarm = 5 => "life-safety-alarm",
    }
    unknown: Other;
    proprietary: 64..=65535;
    aliases: {}
}

bacnet_enum! {
    /// Reliability of an object's value (`BACnetReliability`). 0..=63 ASHRAE, 64..=65535 proprietary.
    pub enum Reliability {
        NoFaultDetected = 0 => "no-fault-detected",
        NoSensor = 1 => "no-sensor",
        OverRange = 2 => "over-range",
        UnderRange = 3 => "under-range",
        OpenLoop = 4 => "open-loop",
        ShortedLoop = 5 => "shorted-loop",
        NoOutput = 6 => "no-output",
        UnreliableOther = 7 => "unreliable-other",
        ProcessError = 8 => "process-error",
        MultiStateFault = 9 => "multi-state-fault",
        ConfigurationError = 10 => "configuration-error",
        CommunicationFailure = 12 => "communication-failure",
        MemberFault = 13 => "member-fault",
        MonitoredObjectFault = 14 => "monitored-object-fault",
        Tripped = 15 => "tripped",
        LampFailure = 16 => "lamp-failure",
        ActivationFailure = 17 => "activation-failure",
        RenewDhcpFailure = 18 => "renew-dhcp-failure",
        RenewFdRegistrationFailure = 19 => "renew-fd-registration-failure",
        RestartAutoNegotiationFailure = 20 => "restart-auto-negotiation-failure",
        RestartFailure = 21 => "restart-failure",
        ProprietaryCommandFailure = 22 => "proprietary-command-failure",
        FaultsListed = 23 => "faults-listed",
        ReferencedObjectFault = 24 => "referenced-object-fault",
        MultiStateOutOfRange = 25 => "multi-state-out-of-range",
    }
    unknown: Other;
    proprietary: 64..=65535;
    aliases: {}
}

bacnet_enum! {
    /// Polarity of a binary input or output (`BACnetPolarity`).
    pub enum Polarity {
        Normal = 0 => "normal",
        Reverse = 1 => "reverse",
    }
    unknown: Other;
    aliases: {}
}

bacnet_enum! {
    /// Present value of a binary object (`BACnetBinaryPV`).
    pub enum BinaryPv {
        Inactive = 0 => "inactive",
        Active = 1 => "active",
    }
    unknown: Other;
    aliases: {}
}

bacnet_enum! {
    /// Status of a device (`BACnetDeviceStatus`, the Device object's system-status).
    pub enum DeviceStatus {
        Operational = 0 => "operational",
        OperationalReadOnly = 1 => "operational-read-only",
        DownloadRequired = 2 => "download-required",
        DownloadInProgress = 3 => "download-in-progress",
        NonOperational = 4 => "non-operational",
        BackupInProgress = 5 => "backup-in-progress",
    }
    unknown: Other;
    proprietary: 64..=65535;
    aliases: {}
}
