//! Enumerations of the device-management services and the Trend Log object (Clause 21),
//! generated from the tables below.

use super::enum_table::bacnet_enum;

bacnet_enum! {
    /// The `enable-disable` parameter of DeviceCommunicationControl (Clause 16.1).
    pub enum EnableDisable {
        Enable = 0 => "enable",
        Disable = 1 => "disable",
        DisableInitiation = 2 => "disable-initiation",
    }
    unknown: Other;
    aliases: {}
}

bacnet_enum! {
    /// The `reinitialized-state-of-device` parameter of ReinitializeDevice (Clause 16.4).
    pub enum ReinitializedState {
        Coldstart = 0 => "coldstart",
        Warmstart = 1 => "warmstart",
        StartBackup = 2 => "start-backup",
        EndBackup = 3 => "end-backup",
        StartRestore = 4 => "start-restore",
        EndRestore = 5 => "end-restore",
        AbortRestore = 6 => "abort-restore",
        ActivateChanges = 7 => "activate-changes",
    }
    unknown: Other;
    aliases: {}
}

bacnet_enum! {
    /// How a Trend Log collects its records (`BACnetLoggingType`, Clause 12.25.27).
    pub enum LoggingType {
        Polled = 0 => "polled",
        Cov = 1 => "cov",
        Triggered = 2 => "triggered",
    }
    unknown: Other;
    aliases: {}
}
