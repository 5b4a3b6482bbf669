//! `BACnetConfirmedServiceChoice` and `BACnetUnconfirmedServiceChoice` (Clause 21),
//! generated from the tables below.
//!
//! Numbers and names follow ASHRAE 135-2020 and its published addenda; they were
//! cross-checked against the bacnet-stack tables.

use crate::enums::enum_table::bacnet_enum;

bacnet_enum! {
    /// Service choice of Confirmed-Request, SimpleACK, ComplexACK and Error PDUs.
    pub enum ConfirmedServiceChoice {
        AcknowledgeAlarm = 0 => "acknowledge-alarm",
        ConfirmedCovNotification = 1 => "confirmed-cov-notification",
        ConfirmedEventNotification = 2 => "confirmed-event-notification",
        GetAlarmSummary = 3 => "get-alarm-summary",
        GetEnrollmentSummary = 4 => "get-enrollment-summary",
        SubscribeCov = 5 => "subscribe-cov",
        AtomicReadFile = 6 => "atomic-read-file",
        AtomicWriteFile = 7 => "atomic-write-file",
        AddListElement = 8 => "add-list-element",
        RemoveListElement = 9 => "remove-list-element",
        CreateObject = 10 => "create-object",
        DeleteObject = 11 => "delete-object",
        ReadProperty = 12 => "read-property",
        ReadPropertyConditional = 13 => "read-property-conditional",
        ReadPropertyMultiple = 14 => "read-property-multiple",
        WriteProperty = 15 => "write-property",
        WritePropertyMultiple = 16 => "write-property-multiple",
        DeviceCommunicationControl = 17 => "device-communication-control",
        ConfirmedPrivateTransfer = 18 => "confirmed-private-transfer",
        ConfirmedTextMessage = 19 => "confirmed-text-message",
        ReinitializeDevice = 20 => "reinitialize-device",
        VtOpen = 21 => "vt-open",
        VtClose = 22 => "vt-close",
        VtData = 23 => "vt-data",
        Authenticate = 24 => "authenticate",
        RequestKey = 25 => "request-key",
        ReadRange = 26 => "read-range",
        LifeSafetyOperation = 27 => "life-safety-operation",
        SubscribeCovProperty = 28 => "subscribe-cov-property",
        GetEventInformation = 29 => "get-event-information",
        SubscribeCovPropertyMultiple = 30 => "subscribe-cov-property-multiple",
        ConfirmedCovNotificationMultiple = 31 => "confirmed-cov-notification-multiple",
        ConfirmedAuditNotification = 32 => "confirmed-audit-notification",
        AuditLogQuery = 33 => "audit-log-query",
        AuthRequest = 34 => "auth-request",
    }
    unknown: Other;
    aliases: {
        "rp" => ReadProperty,
        "rpm" => ReadPropertyMultiple,
        "wp" => WriteProperty,
        "wpm" => WritePropertyMultiple,
    }
}

bacnet_enum! {
    /// Service choice of Unconfirmed-Request PDUs.
    pub enum UnconfirmedServiceChoice {
        IAm = 0 => "i-am",
        IHave = 1 => "i-have",
        UnconfirmedCovNotification = 2 => "unconfirmed-cov-notification",
        UnconfirmedEventNotification = 3 => "unconfirmed-event-notification",
        UnconfirmedPrivateTransfer = 4 => "unconfirmed-private-transfer",
        UnconfirmedTextMessage = 5 => "unconfirmed-text-message",
        TimeSynchronization = 6 => "time-synchronization",
        WhoHas = 7 => "who-has",
        WhoIs = 8 => "who-is",
        UtcTimeSynchronization = 9 => "utc-time-synchronization",
        WriteGroup = 10 => "write-group",
        UnconfirmedCovNotificationMultiple = 11 => "unconfirmed-cov-notification-multiple",
        UnconfirmedAuditNotification = 12 => "unconfirmed-audit-notification",
        WhoAmI = 13 => "who-am-i",
        YouAre = 14 => "you-are",
    }
    unknown: Other;
    aliases: {}
}
