//! The device-management and list services of [`BacnetClient`]: ReadRange,
//! Add/RemoveListElement, DeviceCommunicationControl, ReinitializeDevice and
//! (UTC)TimeSynchronization. Each is one request through the client task, like
//! `read` and `write`, with the same limits and time limits.

use super::{BacnetClient, Command, closed, unexpected};
use crate::app::{ClientError, Destination, Reply};
use crate::encoding::{DateTime, Element, ObjectIdentifier};
use crate::enums::{EnableDisable, PropertyIdentifier, ReinitializedState};
use crate::network::{DeviceAddress, LinkAddress};
use crate::services::{
    ComplexAckParameters, ConfirmedRequest, DeviceCommunicationControlRequest, ListElementRequest,
    RangeSpec, ReadRangeAck, ReadRangeRequest, ReinitializeDeviceRequest,
    TimeSynchronizationRequest, UnconfirmedRequest,
};

impl<A: LinkAddress> BacnetClient<A> {
    /// ReadRange of a list or array property (a trend log's log-buffer): the items
    /// `range` selects, or all of them without one.
    pub async fn read_range(
        &self,
        to: impl Into<DeviceAddress<A>>,
        object: ObjectIdentifier,
        property: PropertyIdentifier,
        array_index: Option<u32>,
        range: Option<RangeSpec>,
    ) -> Result<ReadRangeAck, ClientError> {
        let request = ConfirmedRequest::ReadRange(ReadRangeRequest {
            object,
            property,
            array_index,
            range,
        });
        match self.request(to, request).await? {
            Reply::ComplexAck(ComplexAckParameters::ReadRange(ack)) => Ok(ack),
            other => Err(unexpected(&other)),
        }
    }

    /// AddListElement (`add` true) or RemoveListElement of `elements` (the encoded
    /// items) to or from a list property; the device applies all of them or none.
    pub async fn change_list(
        &self,
        to: impl Into<DeviceAddress<A>>,
        add: bool,
        object: ObjectIdentifier,
        property: PropertyIdentifier,
        array_index: Option<u32>,
        elements: Vec<Element>,
    ) -> Result<(), ClientError> {
        let change = ListElementRequest {
            object,
            property,
            array_index,
            elements,
        };
        let request = if add {
            ConfirmedRequest::AddListElement(change)
        } else {
            ConfirmedRequest::RemoveListElement(change)
        };
        self.simple(to, request).await
    }

    /// DeviceCommunicationControl: stop the device's communication (`disable`,
    /// `disable-initiation`) for `minutes` (none: until enabled again) or resume it.
    pub async fn device_communication_control(
        &self,
        to: impl Into<DeviceAddress<A>>,
        enable_disable: EnableDisable,
        minutes: Option<u16>,
        password: Option<String>,
    ) -> Result<(), ClientError> {
        let request =
            ConfirmedRequest::DeviceCommunicationControl(DeviceCommunicationControlRequest {
                time_duration: minutes,
                enable_disable,
                password,
            });
        self.simple(to, request).await
    }

    /// ReinitializeDevice: a cold or warm start, or a backup/restore step.
    pub async fn reinitialize_device(
        &self,
        to: impl Into<DeviceAddress<A>>,
        state: ReinitializedState,
        password: Option<String>,
    ) -> Result<(), ClientError> {
        let request =
            ConfirmedRequest::ReinitializeDevice(ReinitializeDeviceRequest { state, password });
        self.simple(to, request).await
    }

    /// TimeSynchronization (local time) or UTCTimeSynchronization (`utc`) to one
    /// device or a broadcast. Unconfirmed: it returns once the datagram is queued.
    pub async fn time_synchronization(
        &self,
        destination: Destination<A>,
        time: DateTime,
        utc: bool,
    ) -> Result<(), ClientError> {
        if destination == Destination::Broadcast && !self.has_broadcast {
            return Err(ClientError::InvalidArgument(
                "this client has no broadcast address: bind it with one, or name the device"
                    .to_owned(),
            ));
        }
        let sync = TimeSynchronizationRequest { time };
        let request = if utc {
            UnconfirmedRequest::UtcTimeSynchronization(sync)
        } else {
            UnconfirmedRequest::TimeSynchronization(sync)
        };
        self.commands
            .send(Command::Unconfirmed {
                request,
                destination,
            })
            .await
            .map_err(|_| closed())
    }

    async fn simple(
        &self,
        to: impl Into<DeviceAddress<A>>,
        request: ConfirmedRequest,
    ) -> Result<(), ClientError> {
        match self.request(to, request).await? {
            Reply::SimpleAck => Ok(()),
            other => Err(unexpected(&other)),
        }
    }
}
