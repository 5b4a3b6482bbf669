//! `BACnetServicesSupported` (ASHRAE 135-2020 Clause 21): the bit positions of a Device's
//! protocol-services-supported, generated from the table below.
//!
//! The bit numbers are facts of the standard (they differ from the service choice numbers
//! from bit 26 on); they were cross-checked against the bacnet-stack table. The device
//! object (`crate::objects::device`) lists the services it answers with it.

use super::enum_table::bacnet_enum;

bacnet_enum! {
    /// One bit of `BACnetServicesSupported` (Clause 21): the bit number of each service in
    /// protocol-services-supported. Not the same numbering as the service choices.
    pub enum ServiceSupported {
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
        IAm = 26 => "i-am",
        IHave = 27 => "i-have",
        UnconfirmedCovNotification = 28 => "unconfirmed-cov-notification",
        UnconfirmedEventNotification = 29 => "unconfirmed-event-notification",
        UnconfirmedPrivateTransfer = 30 => "unconfirmed-private-transfer",
        UnconfirmedTextMessage = 31 => "unconfirmed-text-message",
        TimeSynchronization = 32 => "time-synchronization",
        WhoHas = 33 => "who-has",
        WhoIs = 34 => "who-is",
        ReadRange = 35 => "read-range",
        UtcTimeSynchronization = 36 => "utc-time-synchronization",
        LifeSafetyOperation = 37 => "life-safety-operation",
        SubscribeCovProperty = 38 => "subscribe-cov-property",
        GetEventInformation = 39 => "get-event-information",
        WriteGroup = 40 => "write-group",
        SubscribeCovPropertyMultiple = 41 => "subscribe-cov-property-multiple",
        ConfirmedCovNotificationMultiple = 42 => "confirmed-cov-notification-multiple",
        UnconfirmedCovNotificationMultiple = 43 => "unconfirmed-cov-notification-multiple",
        ConfirmedAuditNotification = 44 => "confirmed-audit-notification",
        AuditLogQuery = 45 => "audit-log-query",
        UnconfirmedAuditNotification = 46 => "unconfirmed-audit-notification",
        WhoAmI = 47 => "who-am-i",
        YouAre = 48 => "you-are",
        AuthRequest = 49 => "auth-request",
    }
    unknown: Other;
    aliases: { "rp" => ReadProperty, "rpm" => ReadPropertyMultiple, "wp" => WriteProperty, "wpm" => WritePropertyMultiple }
}
