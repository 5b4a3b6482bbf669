//! MonitoredItem services (OPC 10000-4 §5.12): CreateMonitoredItems, ModifyMonitoredItems,
//! SetMonitoringMode and DeleteMonitoredItems, with MonitoringParameters (§7.21),
//! MonitoringMode (§7.23) and the DataChangeFilter (§7.22.2) carried in an ExtensionObject.

use super::attribute::{ReadValueId, TimestampsToReturn};
use super::header::{RequestHeader, ResponseHeader};
use super::structure_codec::{BinaryEncodingId, ua_enumeration, ua_structure};
use super::subscription::{decode_whole, wrap_binary};
use crate::encoding::{
    DecodeError, DiagnosticInfo, ExtensionObject, ExtensionObjectBody, Identifier,
};
use crate::types::StatusCode;

ua_enumeration! {
    /// Whether an item samples and reports (OPC 10000-4 §7.23).
    #[derive(Default)]
    pub enum MonitoringMode {
        /// Neither samples nor reports.
        Disabled = 0,
        /// Samples and queues, but does not report.
        Sampling = 1,
        /// Samples and reports (the default).
        #[default]
        Reporting = 2,
    }
}

ua_enumeration! {
    /// What counts as a data change (OPC 10000-4 §7.22.2).
    pub enum DataChangeTrigger {
        /// A change of the status only.
        Status = 0,
        /// A change of the status or the value (the default without a filter).
        StatusValue = 1,
        /// A change of the status, the value or the source timestamp.
        StatusValueTimestamp = 2,
    }
}

/// DeadbandType of a DataChangeFilter (OPC 10000-4 §7.22.2), a UInt32 on the wire.
pub mod deadband_type {
    /// No deadband.
    pub const NONE: u32 = 0;
    /// A change must exceed `deadband_value` in the value's units.
    pub const ABSOLUTE: u32 = 1;
    /// A change must exceed `deadband_value` percent of the item's EURange.
    pub const PERCENT: u32 = 2;
}

ua_structure! {
    /// Which changes of a value are reported (OPC 10000-4 §7.22.2).
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct DataChangeFilter {
        /// The trigger.
        pub trigger: DataChangeTrigger,
        /// See [`deadband_type`].
        pub deadband_type: u32,
        /// Absolute amount or percent of the EURange.
        pub deadband_value: f64,
    }
}

impl Default for DataChangeFilter {
    fn default() -> Self {
        Self {
            trigger: DataChangeTrigger::StatusValue,
            deadband_type: deadband_type::NONE,
            deadband_value: 0.0,
        }
    }
}

/// The filter of a MonitoringParameters, read from its ExtensionObject.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MonitoringFilter {
    /// A null ExtensionObject: no filter.
    None,
    /// A DataChangeFilter.
    DataChange(DataChangeFilter),
    /// A filter this stack does not implement (EventFilter, AggregateFilter, other types):
    /// the server answers Bad_MonitoredItemFilterUnsupported.
    Unsupported,
}

impl MonitoringFilter {
    /// Reads the filter of an item. A malformed DataChangeFilter body is a decode error (the
    /// server answers Bad_MonitoredItemFilterInvalid).
    pub fn from_extension_object(object: &ExtensionObject) -> Result<Self, DecodeError> {
        if object.type_id.is_null() && object.body == ExtensionObjectBody::None {
            return Ok(Self::None);
        }
        match (
            &object.body,
            object.type_id.namespace,
            &object.type_id.identifier,
        ) {
            (ExtensionObjectBody::Binary(bytes), 0, Identifier::Numeric(id))
                if *id == DataChangeFilter::BINARY_ENCODING_ID =>
            {
                Ok(Self::DataChange(decode_whole(bytes)?))
            }
            _ => Ok(Self::Unsupported),
        }
    }
}

impl DataChangeFilter {
    /// The ExtensionObject carrying this filter in MonitoringParameters.
    pub fn to_extension_object(&self) -> ExtensionObject {
        wrap_binary(self)
    }
}

ua_structure! {
    /// How an item samples and queues (OPC 10000-4 §7.21).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct MonitoringParameters {
        /// Client-chosen handle carried in every notification of the item.
        pub client_handle: u32,
        /// Sampling interval in milliseconds (-1: the subscription's publishing interval,
        /// 0: the fastest the server supports).
        pub sampling_interval: f64,
        /// A DataChangeFilter or a null ExtensionObject (see [`MonitoringFilter`]).
        pub filter: ExtensionObject,
        /// Requested queue size (0 and 1: no queue, the latest value only).
        pub queue_size: u32,
        /// On overflow drop the oldest (true) or the newest (false) value.
        pub discard_oldest: bool,
    }
}

ua_structure! {
    /// One item to create (OPC 10000-4 §5.12.2.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct MonitoredItemCreateRequest {
        /// The node and attribute.
        pub item_to_monitor: ReadValueId,
        /// Initial monitoring mode.
        pub monitoring_mode: MonitoringMode,
        /// Requested parameters.
        pub requested_parameters: MonitoringParameters,
    }
}

ua_structure! {
    /// The result of creating one item (OPC 10000-4 §5.12.2.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct MonitoredItemCreateResult {
        /// Good or the reason the item was not created.
        pub status_code: StatusCode,
        /// The server-assigned id.
        pub monitored_item_id: u32,
        /// Sampling interval granted.
        pub revised_sampling_interval: f64,
        /// Queue size granted.
        pub revised_queue_size: u32,
        /// Filter result (null for DataChangeFilter).
        pub filter_result: ExtensionObject,
    }
}

ua_structure! {
    /// Creates items in a subscription (OPC 10000-4 §5.12.2.2).
    #[derive(Clone, Debug, PartialEq)]
    pub struct CreateMonitoredItemsRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// The subscription.
        pub subscription_id: u32,
        /// Which timestamps notifications carry.
        pub timestamps_to_return: TimestampsToReturn,
        /// The items.
        pub items_to_create: Vec<MonitoredItemCreateRequest>,
    }
}

ua_structure! {
    /// One result per item (OPC 10000-4 §5.12.2.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CreateMonitoredItemsResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// One result per item.
        pub results: Vec<MonitoredItemCreateResult>,
        /// Diagnostics for `results`.
        pub diagnostic_infos: Vec<DiagnosticInfo>,
    }
}

ua_structure! {
    /// One item to modify (OPC 10000-4 §5.12.3.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct MonitoredItemModifyRequest {
        /// The item.
        pub monitored_item_id: u32,
        /// The new parameters.
        pub requested_parameters: MonitoringParameters,
    }
}

ua_structure! {
    /// The result of modifying one item (OPC 10000-4 §5.12.3.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct MonitoredItemModifyResult {
        /// Good or the reason.
        pub status_code: StatusCode,
        /// Sampling interval granted.
        pub revised_sampling_interval: f64,
        /// Queue size granted.
        pub revised_queue_size: u32,
        /// Filter result (null for DataChangeFilter).
        pub filter_result: ExtensionObject,
    }
}

ua_structure! {
    /// Modifies items (OPC 10000-4 §5.12.3.2).
    #[derive(Clone, Debug, PartialEq)]
    pub struct ModifyMonitoredItemsRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// The subscription.
        pub subscription_id: u32,
        /// Which timestamps notifications carry.
        pub timestamps_to_return: TimestampsToReturn,
        /// The items.
        pub items_to_modify: Vec<MonitoredItemModifyRequest>,
    }
}

ua_structure! {
    /// One result per item (OPC 10000-4 §5.12.3.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ModifyMonitoredItemsResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// One result per item.
        pub results: Vec<MonitoredItemModifyResult>,
        /// Diagnostics for `results`.
        pub diagnostic_infos: Vec<DiagnosticInfo>,
    }
}

ua_structure! {
    /// Changes the monitoring mode of items (OPC 10000-4 §5.12.4.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct SetMonitoringModeRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// The subscription.
        pub subscription_id: u32,
        /// The new mode.
        pub monitoring_mode: MonitoringMode,
        /// The items.
        pub monitored_item_ids: Vec<u32>,
    }
}

ua_structure! {
    /// One status per item (OPC 10000-4 §5.12.4.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct SetMonitoringModeResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// One status per item.
        pub results: Vec<StatusCode>,
        /// Diagnostics for `results`.
        pub diagnostic_infos: Vec<DiagnosticInfo>,
    }
}

ua_structure! {
    /// Deletes items (OPC 10000-4 §5.12.6.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct DeleteMonitoredItemsRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// The subscription.
        pub subscription_id: u32,
        /// The items.
        pub monitored_item_ids: Vec<u32>,
    }
}

ua_structure! {
    /// One status per item (OPC 10000-4 §5.12.6.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct DeleteMonitoredItemsResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// One status per item.
        pub results: Vec<StatusCode>,
        /// Diagnostics for `results`.
        pub diagnostic_infos: Vec<DiagnosticInfo>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{BinaryEncodable, NodeId};
    use crate::services::test_values::{assert_round_trip, generate_from_seed};
    use proptest::prelude::*;

    #[test]
    fn data_change_filter_layout() {
        let filter = DataChangeFilter {
            trigger: DataChangeTrigger::StatusValue,
            deadband_type: deadband_type::ABSOLUTE,
            deadband_value: 0.5,
        };
        let object = filter.to_extension_object();
        // ns=0;i=724 (DataChangeFilter_Encoding_DefaultBinary), binary body of 16 bytes:
        // Int32 trigger 1, UInt32 deadband type 1, Double 0.5.
        assert_eq!(
            object.to_bytes(),
            [
                0x01, 0x00, 0xD4, 0x02, 0x01, 16, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
                0, 0xE0, 0x3F
            ]
        );
        assert_eq!(
            MonitoringFilter::from_extension_object(&object).unwrap(),
            MonitoringFilter::DataChange(filter)
        );
        assert_eq!(
            MonitoringFilter::from_extension_object(&ExtensionObject::default()).unwrap(),
            MonitoringFilter::None
        );
        let event_filter = ExtensionObject {
            type_id: NodeId::numeric(0, 727),
            body: ExtensionObjectBody::Binary(vec![0, 0, 0, 0]),
        };
        assert_eq!(
            MonitoringFilter::from_extension_object(&event_filter).unwrap(),
            MonitoringFilter::Unsupported
        );
        let short = ExtensionObject {
            type_id: NodeId::numeric(0, 724),
            body: ExtensionObjectBody::Binary(vec![1, 0, 0, 0]),
        };
        assert!(MonitoringFilter::from_extension_object(&short).is_err());
    }

    proptest! {
        #[test]
        fn monitored_item_messages_round_trip(seed: u64) {
            assert_round_trip(&generate_from_seed::<CreateMonitoredItemsRequest>(seed));
            assert_round_trip(&generate_from_seed::<CreateMonitoredItemsResponse>(seed));
            assert_round_trip(&generate_from_seed::<ModifyMonitoredItemsRequest>(seed));
            assert_round_trip(&generate_from_seed::<ModifyMonitoredItemsResponse>(seed));
            assert_round_trip(&generate_from_seed::<SetMonitoringModeRequest>(seed));
            assert_round_trip(&generate_from_seed::<SetMonitoringModeResponse>(seed));
            assert_round_trip(&generate_from_seed::<DeleteMonitoredItemsRequest>(seed));
            assert_round_trip(&generate_from_seed::<DeleteMonitoredItemsResponse>(seed));
        }

        #[test]
        fn data_change_filter_round_trips(seed: u64) {
            let filter: DataChangeFilter = generate_from_seed(seed);
            prop_assert_eq!(
                MonitoringFilter::from_extension_object(&filter.to_extension_object()).unwrap(),
                MonitoringFilter::DataChange(filter)
            );
        }
    }
}
