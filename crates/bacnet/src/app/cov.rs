//! The device side of change of value (Clause 13.1): the table of COV subscriptions made
//! with SubscribeCOV and SubscribeCOVProperty, their lifetimes, and the decision of which
//! subscriber to notify after a change.
//!
//! Sans-IO and generic over the subscriber's address `P`: every call takes `now`; the
//! server turns the [`CovNotice`]s it gets back into Confirmed- or
//! UnconfirmedCOVNotification requests.
//!
//! - A subscription is identified by subscriber address, process identifier, monitored
//!   object and (for SubscribeCOVProperty) monitored property; subscribing again with
//!   the same identity renews it (new lifetime and mode). Every successful subscription,
//!   renewals included, is followed by a notification of the current values
//!   (Clause 13.14.2).
//! - The table is bounded ([`CovLimits`]): past its size, or past the per-subscriber
//!   share, a new subscription fails with `resources` / `no-space-to-add-list-element`.
//!   It lives in memory only: a restart of the device (ReinitializeDevice, or a new
//!   process) forgets every subscription, and subscribers must subscribe again (the
//!   client of this crate does so on its own).
//! - What triggers a notification: for analog objects a change of present-value by at
//!   least the object's cov-increment since the last notification; for binary and
//!   multi-state objects any change of present-value; for SubscribeCOVProperty a change of
//!   the property (by the given COV increment, or the object's for its present-value, when
//!   the value is a REAL); and in every case a change of status-flags.
//! - A confirmed notification still unanswered is not followed by another for the same
//!   subscription; a change in the meantime is sent (with the values then current) once the
//!   subscriber answers or the request times out. A subscriber that vanished therefore
//!   costs one outstanding request, which ends with the client TSM's timeout.

use std::fmt::Debug;
use std::hash::Hash;
use std::time::{Duration, Instant};

use crate::encoding::{ApplicationValue, Element, ObjectIdentifier, PropertyValue};
use crate::enums::{ObjectType, PropertyIdentifier as Prop};
use crate::objects::PropertyError;
use crate::objects::database::ObjectDatabase;
use crate::objects::value::PropertyData;
use crate::services::{CovNotificationRequest, PropertyReference};

/// Default limit on subscriptions in the table.
pub const DEFAULT_MAX_SUBSCRIPTIONS: usize = 1024;
/// Default limit on subscriptions of one subscriber address.
pub const DEFAULT_MAX_SUBSCRIPTIONS_PER_SUBSCRIBER: usize = 256;

/// Size limits of the subscription table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CovLimits {
    /// Most subscriptions in all.
    pub max_subscriptions: usize,
    /// Most subscriptions of one subscriber address.
    pub max_per_subscriber: usize,
}

impl Default for CovLimits {
    fn default() -> Self {
        Self {
            max_subscriptions: DEFAULT_MAX_SUBSCRIPTIONS,
            max_per_subscriber: DEFAULT_MAX_SUBSCRIPTIONS_PER_SUBSCRIBER,
        }
    }
}

/// What a subscriber asks for (SubscribeCOV, or SubscribeCOVProperty with `property`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CovRequest {
    /// The subscriber's process identifier.
    pub process_identifier: u32,
    /// The monitored object.
    pub object: ObjectIdentifier,
    /// The monitored property (SubscribeCOVProperty), or `None` for the object's
    /// standard COV properties (SubscribeCOV).
    pub property: Option<PropertyReference>,
    /// Confirmed notifications.
    pub confirmed: bool,
    /// Seconds, 0 for indefinite.
    pub lifetime: u32,
    /// The subscriber's COV increment (SubscribeCOVProperty).
    pub cov_increment: Option<f32>,
}

/// A stable handle on one subscription, to match the answer to a confirmed notification.
pub type SubscriptionId = u64;

/// A notification to send.
#[derive(Debug, Clone, PartialEq)]
pub struct CovNotice<P> {
    /// The subscription it is for.
    pub subscription: SubscriptionId,
    /// Where it goes.
    pub subscriber: P,
    /// Confirmed or unconfirmed.
    pub confirmed: bool,
    /// The service parameters.
    pub request: CovNotificationRequest,
}

#[derive(Debug, Clone)]
struct Subscription<P> {
    id: SubscriptionId,
    subscriber: P,
    process_identifier: u32,
    object: ObjectIdentifier,
    property: Option<PropertyReference>,
    confirmed: bool,
    lifetime: u32,
    expires: Option<Instant>,
    cov_increment: Option<f32>,
    /// The monitored value and status-flags last notified.
    last_value: Vec<Element>,
    last_flags: Option<Vec<Element>>,
    /// A confirmed notification is outstanding.
    in_flight: bool,
    /// A change arrived while it was outstanding.
    pending: bool,
}

impl<P: PartialEq> Subscription<P> {
    fn same(&self, subscriber: &P, request: &CovRequest) -> bool {
        self.subscriber == *subscriber
            && self.process_identifier == request.process_identifier
            && self.object == request.object
            && self.property == request.property
    }
}

/// One subscription as the device's active-cov-subscriptions shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ActiveSubscription<P> {
    /// The subscriber.
    pub subscriber: P,
    /// Its process identifier.
    pub process_identifier: u32,
    /// The monitored object.
    pub object: ObjectIdentifier,
    /// The monitored property (present-value for SubscribeCOV).
    pub property: PropertyReference,
    /// Confirmed notifications.
    pub confirmed: bool,
    /// Seconds left, 0 for indefinite.
    pub time_remaining: u32,
    /// The COV increment in use, if any.
    pub cov_increment: Option<f32>,
}

/// The table of COV subscriptions.
#[derive(Debug)]
pub struct CovTable<P> {
    subscriptions: Vec<Subscription<P>>,
    limits: CovLimits,
    next_id: SubscriptionId,
}

/// Object types whose standard COV properties SubscribeCOV reports (Clause 13.1.2).
pub fn supports_cov(object_type: ObjectType) -> bool {
    matches!(
        object_type,
        ObjectType::AnalogInput
            | ObjectType::AnalogOutput
            | ObjectType::AnalogValue
            | ObjectType::BinaryInput
            | ObjectType::BinaryOutput
            | ObjectType::BinaryValue
            | ObjectType::MultiStateInput
            | ObjectType::MultiStateOutput
            | ObjectType::MultiStateValue
    )
}

fn single_real(value: &[Element]) -> Option<f32> {
    match value {
        [Element::Application(ApplicationValue::Real(v))] => Some(*v),
        _ => None,
    }
}

/// True when `new` differs from `old` by at least `increment` (REAL values), or at all.
fn value_changed(old: &[Element], new: &[Element], increment: Option<f32>) -> bool {
    match (single_real(old), single_real(new), increment) {
        (Some(a), Some(b), Some(step)) => {
            if a.is_nan() || b.is_nan() {
                a.is_nan() != b.is_nan()
            } else {
                (b - a).abs() >= step && a != b
            }
        }
        _ => old != new,
    }
}

impl<P: Clone + Eq + Hash + Debug> CovTable<P> {
    /// An empty table with these limits.
    pub fn new(limits: CovLimits) -> Self {
        Self {
            subscriptions: Vec::new(),
            limits,
            next_id: 1,
        }
    }

    /// Number of subscriptions.
    pub fn len(&self) -> usize {
        self.subscriptions.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.subscriptions.is_empty()
    }

    /// Forgets every subscription (a device restart).
    pub fn clear(&mut self) {
        self.subscriptions.clear();
    }

    /// Subscribes (or renews, or with both optional parameters absent cancels: then pass
    /// `None`) and returns the initial notification to send after the SimpleACK.
    ///
    /// Errors: `object` / `unknown-object`; `object` / `optional-functionality-not-supported`
    /// for SubscribeCOV of an object type without COV properties; `property` /
    /// `unknown-property` (and the read errors) for SubscribeCOVProperty of a property that
    /// cannot be read; `resources` / `no-space-to-add-list-element` when the table is full.
    pub fn subscribe(
        &mut self,
        now: Instant,
        subscriber: P,
        request: &CovRequest,
        database: &ObjectDatabase,
    ) -> Result<CovNotice<P>, PropertyError> {
        let object = database
            .get(request.object)
            .ok_or(PropertyError::UNKNOWN_OBJECT)?;
        match request.property {
            None if !supports_cov(object.object_type()) => {
                return Err(PropertyError {
                    class: crate::enums::ErrorClass::Object,
                    code: crate::enums::ErrorCode::OptionalFunctionalityNotSupported,
                });
            }
            None => {}
            Some(reference) => {
                database.read_property(
                    request.object,
                    reference.property,
                    reference.array_index,
                )?;
            }
        }
        let expires = (request.lifetime > 0)
            .then(|| crate::tsm::after(now, Duration::from_secs(u64::from(request.lifetime))));
        let index = match self
            .subscriptions
            .iter()
            .position(|s| s.same(&subscriber, request))
        {
            Some(index) => index,
            None => {
                let mine = self
                    .subscriptions
                    .iter()
                    .filter(|s| s.subscriber == subscriber)
                    .count();
                if self.subscriptions.len() >= self.limits.max_subscriptions
                    || mine >= self.limits.max_per_subscriber
                {
                    return Err(PropertyError::NO_SPACE);
                }
                let id = self.next_id;
                self.next_id += 1;
                self.subscriptions.push(Subscription {
                    id,
                    subscriber: subscriber.clone(),
                    process_identifier: request.process_identifier,
                    object: request.object,
                    property: request.property,
                    confirmed: request.confirmed,
                    lifetime: request.lifetime,
                    expires,
                    cov_increment: request.cov_increment,
                    last_value: Vec::new(),
                    last_flags: None,
                    in_flight: false,
                    pending: false,
                });
                self.subscriptions.len() - 1
            }
        };
        let subscription = &mut self.subscriptions[index];
        subscription.confirmed = request.confirmed;
        subscription.lifetime = request.lifetime;
        subscription.expires = expires;
        subscription.cov_increment = request.cov_increment;
        let device = database.device_identifier();
        let notice = build_notice(subscription, now, database, device)
            .ok_or(PropertyError::UNKNOWN_PROPERTY)?;
        if subscription.confirmed {
            subscription.in_flight = true;
            subscription.pending = false;
        }
        Ok(notice)
    }

    /// Cancels a subscription; cancelling one that does not exist succeeds too.
    pub fn cancel(
        &mut self,
        subscriber: &P,
        process_identifier: u32,
        object: ObjectIdentifier,
        property: Option<PropertyReference>,
    ) {
        self.subscriptions.retain(|s| {
            !(s.subscriber == *subscriber
                && s.process_identifier == process_identifier
                && s.object == object
                && s.property == property)
        });
    }

    /// Drops subscriptions whose lifetime ended; returns how many.
    pub fn expire(&mut self, now: Instant) -> usize {
        let before = self.subscriptions.len();
        self.subscriptions
            .retain(|s| s.expires.is_none_or(|at| at > now));
        before - self.subscriptions.len()
    }

    /// When the next subscription expires.
    pub fn next_expiry(&self) -> Option<Instant> {
        self.subscriptions.iter().filter_map(|s| s.expires).min()
    }

    /// Drops the subscriptions of an object that was removed.
    pub fn forget_object(&mut self, object: ObjectIdentifier) {
        self.subscriptions.retain(|s| s.object != object);
    }

    /// The notifications the changes of `objects` call for (each subscription whose
    /// criteria are met; confirmed ones still outstanding are marked pending instead).
    pub fn on_changes(
        &mut self,
        now: Instant,
        objects: &[ObjectIdentifier],
        database: &ObjectDatabase,
    ) -> Vec<CovNotice<P>> {
        let device = database.device_identifier();
        let mut notices = Vec::new();
        for subscription in &mut self.subscriptions {
            if !objects.contains(&subscription.object) {
                continue;
            }
            if subscription.expires.is_some_and(|at| at <= now) {
                continue;
            }
            let Some((value, flags)) = current_values(subscription, database) else {
                continue;
            };
            let increment = effective_increment(subscription, database);
            let changed = value_changed(&subscription.last_value, &value, increment)
                || flags != subscription.last_flags;
            if !changed {
                continue;
            }
            if subscription.in_flight {
                subscription.pending = true;
                continue;
            }
            if let Some(notice) = build_notice(subscription, now, database, device) {
                subscription.in_flight = subscription.confirmed;
                notices.push(notice);
            }
        }
        notices
    }

    /// The answer (or timeout) of a confirmed notification arrived: returns the next
    /// notification when a change waited for it.
    pub fn on_confirmed_done(
        &mut self,
        now: Instant,
        subscription: SubscriptionId,
        database: &ObjectDatabase,
    ) -> Option<CovNotice<P>> {
        let device = database.device_identifier();
        let entry = self
            .subscriptions
            .iter_mut()
            .find(|s| s.id == subscription)?;
        entry.in_flight = false;
        if !std::mem::take(&mut entry.pending) {
            return None;
        }
        let notice = build_notice(entry, now, database, device)?;
        entry.in_flight = entry.confirmed;
        Some(notice)
    }

    /// Every live subscription, for the device's active-cov-subscriptions.
    pub fn active(&self, now: Instant) -> Vec<ActiveSubscription<P>> {
        self.subscriptions
            .iter()
            .filter(|s| s.expires.is_none_or(|at| at > now))
            .map(|s| ActiveSubscription {
                subscriber: s.subscriber.clone(),
                process_identifier: s.process_identifier,
                object: s.object,
                property: s.property.unwrap_or(PropertyReference {
                    property: Prop::PresentValue,
                    array_index: None,
                }),
                confirmed: s.confirmed,
                time_remaining: time_remaining(s.expires, now),
                cov_increment: s.cov_increment,
            })
            .collect()
    }
}

fn time_remaining(expires: Option<Instant>, now: Instant) -> u32 {
    expires.map_or(0, |at| {
        let left = at.saturating_duration_since(now);
        // Rounded up, so a live subscription never reports 0 (which means indefinite).
        u32::try_from(left.as_millis().div_ceil(1000)).unwrap_or(u32::MAX)
    })
}

/// The COV increment that applies: the subscriber's, else the object's for its
/// present-value.
fn effective_increment<P>(
    subscription: &Subscription<P>,
    database: &ObjectDatabase,
) -> Option<f32> {
    if subscription.cov_increment.is_some() {
        return subscription.cov_increment;
    }
    let monitors_pv = subscription
        .property
        .is_none_or(|r| r.property == Prop::PresentValue && r.array_index.is_none());
    if !monitors_pv {
        return None;
    }
    match database
        .get(subscription.object)?
        .stored(Prop::CovIncrement)
    {
        Some(PropertyData::Single(ApplicationValue::Real(step))) if step.is_finite() => Some(*step),
        _ => None,
    }
}

/// The monitored value and status-flags now (`None` when the value cannot be read, e.g.
/// the object was removed).
fn current_values<P>(
    subscription: &Subscription<P>,
    database: &ObjectDatabase,
) -> Option<(Vec<Element>, Option<Vec<Element>>)> {
    let (property, index) = match subscription.property {
        Some(reference) => (reference.property, reference.array_index),
        None => (Prop::PresentValue, None),
    };
    let value = database
        .read_property(subscription.object, property, index)
        .ok()?;
    let flags = database
        .read_property(subscription.object, Prop::StatusFlags, None)
        .ok();
    Some((value, flags))
}

fn build_notice<P: Clone>(
    subscription: &mut Subscription<P>,
    now: Instant,
    database: &ObjectDatabase,
    device: ObjectIdentifier,
) -> Option<CovNotice<P>> {
    let (value, flags) = current_values(subscription, database)?;
    let (property, array_index) = match subscription.property {
        Some(reference) => (reference.property, reference.array_index),
        None => (Prop::PresentValue, None),
    };
    let mut values = vec![PropertyValue {
        property,
        array_index,
        value: value.clone(),
        priority: None,
    }];
    if let Some(flags) = &flags
        && property != Prop::StatusFlags
    {
        values.push(PropertyValue {
            property: Prop::StatusFlags,
            array_index: None,
            value: flags.clone(),
            priority: None,
        });
    }
    subscription.last_value = value;
    subscription.last_flags = flags;
    Some(CovNotice {
        subscription: subscription.id,
        subscriber: subscription.subscriber.clone(),
        confirmed: subscription.confirmed,
        request: CovNotificationRequest {
            subscriber_process_identifier: subscription.process_identifier,
            initiating_device: device,
            monitored_object: subscription.object,
            time_remaining: time_remaining(subscription.expires, now),
            values,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::BitString;
    use crate::objects::device::DeviceConfig;
    use crate::objects::profile::{DeviceProfile, ObjectSpec};

    /// The objects these tests subscribe to: AI-1 (61.5) and AI-2 (63.0) with the default
    /// cov-increment, BV-1, AV-1..AV-4 and a Calendar (which has no COV).
    fn cov_objects() -> DeviceProfile {
        let mut objects = Vec::new();
        for (i, value) in [(1, 61.5), (2, 63.0)] {
            let mut ai = ObjectSpec::new(ObjectType::AnalogInput, i, &format!("AI-{i}"));
            ai.present_value = Some(value);
            objects.push(ai);
        }
        let mut bv = ObjectSpec::new(ObjectType::BinaryValue, 1, "BV-1");
        bv.commandable = true;
        objects.push(bv);
        for i in 1..=4 {
            let mut av = ObjectSpec::new(ObjectType::AnalogValue, i, &format!("AV-{i}"));
            av.present_value = Some(70.0 + i as f32);
            av.commandable = true;
            objects.push(av);
        }
        objects.push(ObjectSpec::new(ObjectType::Calendar, 1, "Calendar-1"));
        DeviceProfile {
            device: DeviceConfig::default(),
            objects,
        }
    }

    fn av(instance: u32) -> ObjectIdentifier {
        ObjectIdentifier::new(ObjectType::AnalogValue, instance)
    }

    fn request(object: ObjectIdentifier, confirmed: bool, lifetime: u32) -> CovRequest {
        CovRequest {
            process_identifier: 7,
            object,
            property: None,
            confirmed,
            lifetime,
            cov_increment: None,
        }
    }

    fn real(value: f32) -> PropertyData {
        PropertyData::Single(ApplicationValue::Real(value))
    }

    #[test]
    fn initial_notice_then_increment_rules() {
        let mut db = cov_objects().build().unwrap();
        let t0 = Instant::now();
        let mut table = CovTable::new(CovLimits::default());
        let ai = ObjectIdentifier::new(ObjectType::AnalogInput, 1);
        let first = table
            .subscribe(t0, "peer", &request(ai, false, 60), &db)
            .unwrap();
        assert_eq!(first.request.time_remaining, 60);
        assert_eq!(first.request.values.len(), 2);
        assert_eq!(
            first.request.values[0].value,
            vec![Element::Application(ApplicationValue::Real(61.5))]
        );
        // cov-increment is 0.1: a change of 0.05 is not reported, 0.1 more is.
        db.set_local(ai, Prop::PresentValue, real(61.55)).unwrap();
        assert!(table.on_changes(t0, &[ai], &db).is_empty());
        db.set_local(ai, Prop::PresentValue, real(61.7)).unwrap();
        let notices = table.on_changes(t0, &[ai], &db);
        assert_eq!(notices.len(), 1);
        assert_eq!(
            notices[0].request.values[0].value,
            vec![Element::Application(ApplicationValue::Real(61.7))]
        );
        // Status-flags changes are always reported.
        db.set_local(
            ai,
            Prop::OutOfService,
            PropertyData::Single(ApplicationValue::Boolean(true)),
        )
        .unwrap();
        let notices = table.on_changes(t0, &[ai], &db);
        assert_eq!(notices.len(), 1);
        assert_eq!(
            notices[0].request.values[1].value,
            vec![Element::Application(ApplicationValue::BitString(
                BitString::from_bits(&[false, false, false, true])
            ))]
        );
    }

    #[test]
    fn confirmed_notices_wait_for_the_answer() {
        let mut db = cov_objects().build().unwrap();
        let t0 = Instant::now();
        let mut table = CovTable::new(CovLimits::default());
        let bv = ObjectIdentifier::new(ObjectType::BinaryValue, 1);
        let first = table
            .subscribe(t0, "peer", &request(bv, true, 0), &db)
            .unwrap();
        assert_eq!(first.request.time_remaining, 0);
        let active = PropertyData::Single(ApplicationValue::Enumerated(1));
        let inactive = PropertyData::Single(ApplicationValue::Enumerated(0));
        db.set_local(bv, Prop::PresentValue, active).unwrap();
        assert!(
            table.on_changes(t0, &[bv], &db).is_empty(),
            "first one outstanding"
        );
        db.set_local(bv, Prop::PresentValue, inactive).unwrap();
        assert!(table.on_changes(t0, &[bv], &db).is_empty());
        let next = table
            .on_confirmed_done(t0, first.subscription, &db)
            .unwrap();
        assert_eq!(
            next.request.values[0].value,
            vec![Element::Application(ApplicationValue::Enumerated(0))]
        );
        assert!(
            table
                .on_confirmed_done(t0, first.subscription, &db)
                .is_none()
        );
    }

    #[test]
    fn limits_lifetimes_renewal_and_errors() {
        let db = cov_objects().build().unwrap();
        let t0 = Instant::now();
        let mut table = CovTable::new(CovLimits {
            max_subscriptions: 3,
            max_per_subscriber: 2,
        });
        table
            .subscribe(t0, "a", &request(av(1), false, 10), &db)
            .unwrap();
        // Renewal: same identity, no new entry.
        table
            .subscribe(t0, "a", &request(av(1), false, 20), &db)
            .unwrap();
        assert_eq!(table.len(), 1);
        table
            .subscribe(t0, "a", &request(av(2), false, 30), &db)
            .unwrap();
        assert_eq!(
            table.subscribe(t0, "a", &request(av(3), false, 30), &db),
            Err(PropertyError::NO_SPACE)
        );
        table
            .subscribe(t0, "b", &request(av(3), false, 0), &db)
            .unwrap();
        assert_eq!(
            table.subscribe(t0, "c", &request(av(4), false, 0), &db),
            Err(PropertyError::NO_SPACE)
        );
        assert_eq!(table.next_expiry(), Some(t0 + Duration::from_secs(20)));
        assert_eq!(table.expire(t0 + Duration::from_secs(25)), 1);
        assert_eq!(table.len(), 2);
        assert_eq!(
            table.subscribe(
                t0,
                "c",
                &request(ObjectIdentifier::new(ObjectType::Calendar, 1), false, 0),
                &db
            ),
            Err(PropertyError {
                class: crate::enums::ErrorClass::Object,
                code: crate::enums::ErrorCode::OptionalFunctionalityNotSupported,
            })
        );
        assert_eq!(
            table.subscribe(t0, "c", &request(av(99), false, 0), &db),
            Err(PropertyError::UNKNOWN_OBJECT)
        );
        table.cancel(&"b", 7, av(3), None);
        assert_eq!(table.len(), 1);
        let active = table.active(t0 + Duration::from_secs(1));
        assert_eq!(active[0].time_remaining, 29);
    }

    #[test]
    fn property_subscription_with_its_own_increment() {
        let mut db = cov_objects().build().unwrap();
        let t0 = Instant::now();
        let mut table = CovTable::new(CovLimits::default());
        let ai = ObjectIdentifier::new(ObjectType::AnalogInput, 2);
        let by_property = CovRequest {
            property: Some(PropertyReference {
                property: Prop::PresentValue,
                array_index: None,
            }),
            cov_increment: Some(1.0),
            ..request(ai, false, 0)
        };
        table.subscribe(t0, "p", &by_property, &db).unwrap();
        db.set_local(ai, Prop::PresentValue, real(63.5)).unwrap(); // +0.5 from 63.0
        assert!(table.on_changes(t0, &[ai], &db).is_empty());
        db.set_local(ai, Prop::PresentValue, real(64.0)).unwrap(); // +1.0
        assert_eq!(table.on_changes(t0, &[ai], &db).len(), 1);
        let unknown = CovRequest {
            property: Some(PropertyReference {
                property: Prop::WeeklySchedule,
                array_index: None,
            }),
            ..by_property
        };
        assert_eq!(
            table.subscribe(t0, "p", &unknown, &db),
            Err(PropertyError::UNKNOWN_PROPERTY)
        );
    }
}
