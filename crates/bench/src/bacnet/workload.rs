//! The published worker mix: what each worker sends, and how each reply is checked before it
//! is counted.

use std::net::SocketAddrV4;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use buildwire_bacnet::app::{CovOptions, Reply};
use buildwire_bacnet::driver::BacnetClient;
use buildwire_bacnet::encoding::{ApplicationValue, Element};
use buildwire_bacnet::network::DeviceAddress;
use buildwire_bacnet::services::{
    ComplexAckParameters, ConfirmedRequest, PropertyReference, ReadAccessSpecification,
    ReadPropertyMultipleRequest, ReadPropertyRequest, ReadResult, WriteAccessSpecification,
    WritePropertyMultipleRequest, WritePropertyRequest,
};
use buildwire_bacnet::{ObjectIdentifier, ObjectType, PropertyIdentifier, PropertyValue};

use super::phases::StepError;

/// Objects of the stress profile the workers use (instances 1..=count).
pub const STRESS_AI: u32 = 10;
/// Binary inputs of the stress profile.
pub const STRESS_BI: u32 = 5;
/// Multi-state inputs of the stress profile.
pub const STRESS_MSI: u32 = 3;
/// Commandable analog values of the stress profile.
pub const STRESS_AV: u32 = 5;
/// The stress device's instance.
pub const STRESS_DEVICE: u32 = 400;
/// Entries of the stress device's object-list (the Device and 39 objects).
pub const STRESS_OBJECTS: usize = 40;
/// The priority the writers command at, as published.
pub const WRITE_PRIORITY: u8 = 8;

/// The kinds of worker, each a named operation in the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    /// ReadProperty present-value of a random AI, BI or MSI.
    ReadProperty,
    /// WriteProperty present-value of an AV at priority 8.
    WriteProperty,
    /// ReadPropertyMultiple: an AI's present-value, units and status-flags and the
    /// present-value of an AV some writer owns.
    ReadPropertyMultiple,
    /// WritePropertyMultiple: present-value of an AV at priority 8.
    WritePropertyMultiple,
    /// ReadProperty of the Device's whole object-list.
    ObjectList,
    /// SubscribeCOV, the initial notification, and the cancellation.
    Cov,
    /// Read-Foreign-Device-Table from the BBMD.
    ReadFdt,
    /// Read-Broadcast-Distribution-Table from the BBMD.
    ReadBdt,
    /// Who-Is-Router-To-Network for the server's network, every 10 s.
    RouteCheck,
}

impl Operation {
    /// The name used in tables and JSON (bac-py's service names where it has one).
    pub const fn name(self) -> &'static str {
        match self {
            Self::ReadProperty => "readProperty",
            Self::WriteProperty => "writeProperty",
            Self::ReadPropertyMultiple => "readPropertyMultiple",
            Self::WritePropertyMultiple => "writePropertyMultiple",
            Self::ObjectList => "objectList",
            Self::Cov => "subscribeCOV",
            Self::ReadFdt => "readFDT",
            Self::ReadBdt => "readBDT",
            Self::RouteCheck => "whoIsRouterToNetwork",
        }
    }

    /// Confirmed requests the server executes for one operation (the COV cycle is a
    /// subscription and its cancellation; the link-layer reads are not requests to it).
    pub const fn confirmed_requests(self) -> u64 {
        match self {
            Self::Cov => 2,
            Self::ReadFdt | Self::ReadBdt | Self::RouteCheck => 0,
            _ => 1,
        }
    }
}

/// Per AV, the last value a writer had acknowledged and the value it is writing now, for
/// the RPM worker's check (one writer's values only rise, so any value the server can hold
/// during a read lies between the acknowledged one before and the pending one after).
#[derive(Debug)]
pub struct WrittenValues {
    values: Vec<AtomicU32>,
    pending: Vec<AtomicU32>,
    writers: Vec<AtomicU32>,
}

impl WrittenValues {
    /// One slot per stress AV, with the number of writers that command it.
    pub fn new(writers_per_av: &[u32]) -> Self {
        Self {
            values: (0..STRESS_AV)
                .map(|_| AtomicU32::new(f32::NAN.to_bits()))
                .collect(),
            pending: (0..STRESS_AV)
                .map(|_| AtomicU32::new(f32::NAN.to_bits()))
                .collect(),
            writers: writers_per_av.iter().map(|w| AtomicU32::new(*w)).collect(),
        }
    }

    fn slot(av: u32) -> usize {
        (av.saturating_sub(1) % STRESS_AV) as usize
    }

    fn get(&self, av: u32) -> f32 {
        self.values
            .get(Self::slot(av))
            .map_or(f32::NAN, |v| f32::from_bits(v.load(Ordering::Acquire)))
    }

    fn set(&self, av: u32, value: f32) {
        if let Some(slot) = self.values.get(Self::slot(av)) {
            slot.store(value.to_bits(), Ordering::Release);
        }
    }

    fn pending(&self, av: u32) -> f32 {
        self.pending
            .get(Self::slot(av))
            .map_or(f32::NAN, |v| f32::from_bits(v.load(Ordering::Acquire)))
    }

    fn set_pending(&self, av: u32, value: f32) {
        if let Some(slot) = self.pending.get(Self::slot(av)) {
            slot.store(value.to_bits(), Ordering::Release);
        }
    }

    fn single_writer(&self, av: u32) -> bool {
        self.writers
            .get(Self::slot(av))
            .is_some_and(|w| w.load(Ordering::Relaxed) == 1)
    }
}

/// What one operation cost on the wire, for the raw-UDP limit with the same packet sizes.
#[derive(Clone, Copy, Debug, Default)]
pub struct WireSize {
    /// BVLL + NPDU + APDU bytes of the request.
    pub request: usize,
    /// BVLL + NPDU + APDU bytes of the answer.
    pub response: usize,
}

/// BVLL (4) and a local NPDU (2).
const LINK_OVERHEAD: usize = 6;

fn request_size(request: &ConfirmedRequest) -> usize {
    let mut buf = Vec::new();
    request.encode(&mut buf);
    LINK_OVERHEAD + 4 + buf.len()
}

fn complex_ack_size(ack: &ComplexAckParameters) -> usize {
    let mut buf = Vec::new();
    ack.encode(&mut buf);
    LINK_OVERHEAD + 3 + buf.len()
}

/// Simple-ACK: BVLL, NPDU and the 3-byte APDU.
const SIMPLE_ACK_SIZE: usize = LINK_OVERHEAD + 3;

/// One worker: its operation, the client it uses, and its own state.
pub struct Worker {
    /// What it does.
    pub operation: Operation,
    /// Its pool's client (all workers of a pool share one client and its invoke ids).
    pub client: Arc<BacnetClient>,
    /// The stress server (directly, or through the router).
    pub target: DeviceAddress,
    /// The AV this worker writes (writers) or checks (the RPM worker).
    pub av: u32,
    /// Values written, shared by every worker.
    pub written: Arc<WrittenValues>,
    /// The BBMD for the FDT/BDT readers, the router for the route check.
    pub link_peer: Option<SocketAddrV4>,
    /// The remote network for the route check.
    pub remote_network: u16,
    /// Where the route check listens.
    pub check_from: super::route_check::CheckFrom,
    /// Seed of this worker's random choices.
    pub rng: u64,
    /// Next value to write.
    pub sequence: u32,
    /// The object-list as first read (every later read must match it).
    pub object_list: Option<Vec<Element>>,
}

/// xorshift64*: good enough to spread reads over objects and sizes, and to fill payloads.
pub(crate) fn xorshift(state: &mut u64) -> u64 {
    let mut x = (*state).max(1);
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    x.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

fn bad(what: impl Into<String>) -> StepError {
    StepError::Wrong(what.into())
}

impl Worker {
    fn next_random(&mut self) -> u64 {
        xorshift(&mut self.rng)
    }

    fn random_input(&mut self) -> ObjectIdentifier {
        let pick = self.next_random() % u64::from(STRESS_AI + STRESS_BI + STRESS_MSI);
        let pick = pick as u32;
        if pick < STRESS_AI {
            ObjectIdentifier::new(ObjectType::AnalogInput, pick + 1)
        } else if pick < STRESS_AI + STRESS_BI {
            ObjectIdentifier::new(ObjectType::BinaryInput, pick - STRESS_AI + 1)
        } else {
            ObjectIdentifier::new(
                ObjectType::MultiStateInput,
                pick - STRESS_AI - STRESS_BI + 1,
            )
        }
    }

    fn next_value(&mut self) -> f32 {
        // Distinct, exactly representable values: 0.5 steps below 2^20.
        self.sequence = self.sequence.wrapping_add(1) % (1 << 20);
        self.sequence as f32 * 0.5 + (self.av as f32) * 1_000_000.0
    }

    /// Runs one operation and checks its answer; returns its wire size when it was right.
    pub async fn step(&mut self) -> Result<WireSize, StepError> {
        match self.operation {
            Operation::ReadProperty => {
                let object = self.random_input();
                self.read_property(object).await
            }
            Operation::WriteProperty => self.write_property().await,
            Operation::ReadPropertyMultiple => self.read_multiple().await,
            Operation::WritePropertyMultiple => self.write_multiple().await,
            Operation::ObjectList => self.object_list().await,
            Operation::Cov => self.cov_cycle().await,
            Operation::ReadFdt => self.read_fdt().await,
            Operation::ReadBdt => self.read_bdt().await,
            Operation::RouteCheck => self.route_check().await,
        }
    }

    async fn confirmed(&self, request: ConfirmedRequest) -> Result<(Reply, usize), StepError> {
        let size = request_size(&request);
        let reply = self
            .client
            .request(self.target, request)
            .await
            .map_err(StepError::Client)?;
        Ok((reply, size))
    }

    async fn read_property(&mut self, object: ObjectIdentifier) -> Result<WireSize, StepError> {
        let request = ConfirmedRequest::ReadProperty(ReadPropertyRequest {
            object,
            property: PropertyIdentifier::PresentValue,
            array_index: None,
        });
        let (reply, request) = self.confirmed(request).await?;
        let Reply::ComplexAck(ack @ ComplexAckParameters::ReadProperty(rp)) = &reply else {
            return Err(bad(format!("ReadProperty {object}: answered {reply:?}")));
        };
        if rp.object != object || rp.property != PropertyIdentifier::PresentValue {
            return Err(bad(format!(
                "ReadProperty {object} present-value: the answer names {} {:?}",
                rp.object, rp.property
            )));
        }
        check_present_value(object, &rp.value)?;
        Ok(WireSize {
            request,
            response: complex_ack_size(ack),
        })
    }

    async fn write_property(&mut self) -> Result<WireSize, StepError> {
        let value = self.next_value();
        self.written.set_pending(self.av, value);
        let object = ObjectIdentifier::new(ObjectType::AnalogValue, self.av);
        let request = ConfirmedRequest::WriteProperty(WritePropertyRequest {
            object,
            property: PropertyIdentifier::PresentValue,
            array_index: None,
            value: vec![Element::Application(ApplicationValue::Real(value))],
            priority: Some(WRITE_PRIORITY),
        });
        let (reply, request) = self.confirmed(request).await?;
        if reply != Reply::SimpleAck {
            return Err(bad(format!("WriteProperty {object}: answered {reply:?}")));
        }
        self.written.set(self.av, value);
        Ok(WireSize {
            request,
            response: SIMPLE_ACK_SIZE,
        })
    }

    async fn write_multiple(&mut self) -> Result<WireSize, StepError> {
        let value = self.next_value();
        self.written.set_pending(self.av, value);
        let object = ObjectIdentifier::new(ObjectType::AnalogValue, self.av);
        let request = ConfirmedRequest::WritePropertyMultiple(WritePropertyMultipleRequest {
            specifications: vec![WriteAccessSpecification {
                object,
                properties: vec![PropertyValue {
                    property: PropertyIdentifier::PresentValue,
                    array_index: None,
                    value: vec![Element::Application(ApplicationValue::Real(value))],
                    priority: Some(WRITE_PRIORITY),
                }],
            }],
        });
        let (reply, request) = self.confirmed(request).await?;
        if reply != Reply::SimpleAck {
            return Err(bad(format!(
                "WritePropertyMultiple {object}: answered {reply:?}"
            )));
        }
        self.written.set(self.av, value);
        Ok(WireSize {
            request,
            response: SIMPLE_ACK_SIZE,
        })
    }

    async fn read_multiple(&mut self) -> Result<WireSize, StepError> {
        let ai = ObjectIdentifier::new(
            ObjectType::AnalogInput,
            (self.next_random() % u64::from(STRESS_AI)) as u32 + 1,
        );
        let av = ObjectIdentifier::new(ObjectType::AnalogValue, self.av);
        let reference = |property| PropertyReference {
            property,
            array_index: None,
        };
        let ai_properties = [
            PropertyIdentifier::PresentValue,
            PropertyIdentifier::Units,
            PropertyIdentifier::StatusFlags,
        ];
        let request = ConfirmedRequest::ReadPropertyMultiple(ReadPropertyMultipleRequest {
            specifications: vec![
                ReadAccessSpecification {
                    object: ai,
                    properties: ai_properties.iter().map(|p| reference(*p)).collect(),
                },
                ReadAccessSpecification {
                    object: av,
                    properties: vec![reference(PropertyIdentifier::PresentValue)],
                },
            ],
        });
        // A write may complete while this read is out: the value is the one written
        // before it was sent or the one written by the time it came back.
        let before = self.written.get(self.av);
        let (reply, request) = self.confirmed(request).await?;
        let after = self.written.pending(self.av);
        let Reply::ComplexAck(ack @ ComplexAckParameters::ReadPropertyMultiple(rpm)) = &reply
        else {
            return Err(bad(format!("ReadPropertyMultiple: answered {reply:?}")));
        };
        let [ai_result, av_result] = rpm.results.as_slice() else {
            return Err(bad(format!(
                "ReadPropertyMultiple: {} object results for 2 objects",
                rpm.results.len()
            )));
        };
        if ai_result.object != ai || av_result.object != av {
            return Err(bad(format!(
                "ReadPropertyMultiple: results for {} and {}, asked {ai} and {av}",
                ai_result.object, av_result.object
            )));
        }
        let names: Vec<PropertyIdentifier> = ai_result.results.iter().map(|r| r.property).collect();
        if names != ai_properties {
            return Err(bad(format!(
                "ReadPropertyMultiple {ai}: properties {names:?}"
            )));
        }
        for result in &ai_result.results {
            if let ReadResult::Error(e) = &result.result {
                return Err(bad(format!("ReadPropertyMultiple {ai}: {e:?}")));
            }
        }
        if let Some(ReadResult::Value(pv)) = ai_result.results.first().map(|r| &r.result) {
            check_present_value(ai, pv)?;
        }
        let av_value = match av_result.results.as_slice() {
            [r] if r.property == PropertyIdentifier::PresentValue => match &r.result {
                ReadResult::Value(v) => real(v),
                ReadResult::Error(e) => {
                    return Err(bad(format!("ReadPropertyMultiple {av}: {e:?}")));
                }
            },
            other => {
                return Err(bad(format!(
                    "ReadPropertyMultiple {av}: {} results for 1 property",
                    other.len()
                )));
            }
        };
        let Some(av_value) = av_value else {
            return Err(bad(format!(
                "ReadPropertyMultiple {av}: present-value is not a REAL"
            )));
        };
        // Only a value with one writer is predictable; before the first write, anything.
        // (A wrap of the writer's sequence makes `after` smaller: not checked then.)
        if self.written.single_writer(self.av)
            && !before.is_nan()
            && before <= after
            && !(before..=after).contains(&av_value)
        {
            return Err(bad(format!(
                "ReadPropertyMultiple {av}: present-value {av_value}, written between {before} and {after}"
            )));
        }
        Ok(WireSize {
            request,
            response: complex_ack_size(ack),
        })
    }

    async fn object_list(&mut self) -> Result<WireSize, StepError> {
        let device = ObjectIdentifier::new(ObjectType::Device, STRESS_DEVICE);
        let request = ConfirmedRequest::ReadProperty(ReadPropertyRequest {
            object: device,
            property: PropertyIdentifier::ObjectList,
            array_index: None,
        });
        let (reply, request) = self.confirmed(request).await?;
        let Reply::ComplexAck(ack @ ComplexAckParameters::ReadProperty(rp)) = &reply else {
            return Err(bad(format!("ReadProperty object-list: answered {reply:?}")));
        };
        if rp.property != PropertyIdentifier::ObjectList
            || rp.object.object_type() != ObjectType::Device
        {
            return Err(bad(format!(
                "ReadProperty object-list: the answer names {} {:?}",
                rp.object, rp.property
            )));
        }
        let ids = rp
            .value
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    Element::Application(ApplicationValue::ObjectIdentifier(_))
                )
            })
            .count();
        // At least the stress objects (a peer may add its Network Port), all identifiers,
        // and the same list every time.
        if ids < STRESS_OBJECTS || rp.value.len() != ids {
            return Err(bad(format!(
                "object-list has {} entries ({ids} object identifiers); the stress device has {STRESS_OBJECTS}",
                rp.value.len()
            )));
        }
        match &self.object_list {
            Some(first) if *first != rp.value => {
                return Err(bad(format!(
                    "object-list changed: {} entries, first read {}",
                    rp.value.len(),
                    first.len()
                )));
            }
            Some(_) => {}
            None => self.object_list = Some(rp.value.clone()),
        }
        Ok(WireSize {
            request,
            response: complex_ack_size(ack),
        })
    }

    async fn cov_cycle(&mut self) -> Result<WireSize, StepError> {
        let object = ObjectIdentifier::new(ObjectType::AnalogValue, self.av);
        let options = CovOptions {
            object,
            property: None,
            cov_increment: None,
            confirmed: false,
            lifetime: 60,
        };
        let mut subscription = self
            .client
            .subscribe_cov(self.target, options)
            .await
            .map_err(StepError::Client)?;
        let first = tokio::time::timeout(Duration::from_secs(5), subscription.next()).await;
        let checked = match first {
            Ok(Some(n)) if n.request.monitored_object == object => {
                let has_value = n
                    .request
                    .values
                    .iter()
                    .any(|v| v.property == PropertyIdentifier::PresentValue);
                if has_value {
                    Ok(())
                } else {
                    Err(bad(format!(
                        "COV notification of {object} without present-value"
                    )))
                }
            }
            Ok(Some(n)) => Err(bad(format!(
                "COV notification for {}, subscribed to {object}",
                n.request.monitored_object
            ))),
            Ok(None) => Err(bad("the client stopped before the COV notification")),
            Err(_) => Err(bad(format!("no COV notification of {object} within 5 s"))),
        };
        subscription.cancel().await;
        checked?;
        // Subscribe and cancel requests of about 20 bytes; an initial notification of about 40.
        Ok(WireSize {
            request: LINK_OVERHEAD + 4 + 14,
            response: SIMPLE_ACK_SIZE,
        })
    }

    async fn read_fdt(&mut self) -> Result<WireSize, StepError> {
        let bbmd = self
            .link_peer
            .ok_or(StepError::NoPeer("no BBMD to read the FDT of"))?;
        let entries = buildwire_bacnet::driver::bip::bbmd::read_fdt(bbmd, Duration::from_secs(3))
            .await
            .map_err(|source| StepError::Io {
                what: "Read-FDT".into(),
                source,
            })?;
        if entries.is_empty() {
            return Err(bad("Read-FDT: no foreign device registered"));
        }
        Ok(WireSize {
            request: 4,
            response: 6 + 10 * entries.len(),
        })
    }

    async fn read_bdt(&mut self) -> Result<WireSize, StepError> {
        let bbmd = self
            .link_peer
            .ok_or(StepError::NoPeer("no BBMD to read the BDT of"))?;
        let entries = buildwire_bacnet::driver::bip::bbmd::read_bdt(bbmd, Duration::from_secs(3))
            .await
            .map_err(|source| StepError::Io {
                what: "Read-BDT".into(),
                source,
            })?;
        if !entries.iter().any(|e| e.address == bbmd) {
            return Err(bad(format!("Read-BDT: {bbmd} is not in its own BDT")));
        }
        Ok(WireSize {
            request: 4,
            response: 4 + 10 * entries.len(),
        })
    }

    async fn route_check(&mut self) -> Result<WireSize, StepError> {
        let router = self
            .link_peer
            .ok_or(StepError::NoPeer("no router to ask"))?;
        super::route_check::who_is_router(
            router,
            self.remote_network,
            Duration::from_secs(3),
            self.check_from,
        )
        .await?;
        Ok(WireSize {
            request: LINK_OVERHEAD + 3,
            response: LINK_OVERHEAD + 3,
        })
    }
}

fn real(value: &[Element]) -> Option<f32> {
    match value {
        [Element::Application(ApplicationValue::Real(v))] => Some(*v),
        _ => None,
    }
}

/// The present-value of an input has its type's datatype (REAL, ENUMERATED, Unsigned).
fn check_present_value(object: ObjectIdentifier, value: &[Element]) -> Result<(), StepError> {
    let ok = match (object.object_type(), value) {
        (ObjectType::AnalogInput, [Element::Application(ApplicationValue::Real(v))]) => {
            v.is_finite()
        }
        (ObjectType::BinaryInput, [Element::Application(ApplicationValue::Enumerated(v))]) => {
            *v <= 1
        }
        (ObjectType::MultiStateInput, [Element::Application(ApplicationValue::Unsigned(v))]) => {
            (1..=4).contains(v)
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(bad(format!(
            "{object} present-value {value:?} is not what the stress object holds"
        )))
    }
}

impl super::phases::StepWorker for Worker {
    type Kind = Operation;

    fn kind(&self) -> Operation {
        self.operation
    }

    fn step(&mut self) -> impl Future<Output = Result<WireSize, StepError>> + Send {
        Worker::step(self)
    }

    fn pause_after(&self) -> Option<Duration> {
        (self.operation == Operation::RouteCheck).then_some(super::ROUTE_CHECK_EVERY)
    }
}
