//! The client side of one COV subscription, sans-IO: when to subscribe, renew and
//! subscribe again, and which notifications belong to it.
//!
//! - The first SubscribeCOV (or SubscribeCOVProperty) goes out at once. After each
//!   success the subscription is renewed at half its lifetime (at least 1 s later), and at
//!   most [`MAX_RENEWAL_INTERVAL`] later, indefinite subscriptions included: a renewal is a
//!   subscription like the first, so it also restores a subscription the device lost.
//! - A device restart is noticed three ways: an I-Am from the device (devices announce
//!   themselves when they start) triggers an immediate new subscription; a failed renewal
//!   (timeout, error) is retried with a backoff of 1, 2, 4 ... up to
//!   [`MAX_RETRY_INTERVAL`] seconds; and the periodic renewal above bounds the time a
//!   silent restart goes unnoticed.
//! - A notification belongs to the subscription when it carries its process identifier
//!   and monitored object (the driver also checks that it came from the device).

use std::time::{Duration, Instant};

use crate::encoding::ObjectIdentifier;
use crate::services::{
    ConfirmedRequest, CovNotificationRequest, PropertyReference, SubscribeCovPropertyRequest,
    SubscribeCovRequest,
};
use crate::tsm::after;

/// Longest time between two renewals.
pub const MAX_RENEWAL_INTERVAL: Duration = Duration::from_secs(300);
/// Longest wait before retrying a failed subscription.
pub const MAX_RETRY_INTERVAL: Duration = Duration::from_secs(60);

/// What to subscribe to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CovOptions {
    /// The object.
    pub object: ObjectIdentifier,
    /// One property (SubscribeCOVProperty), or the object's COV properties (SubscribeCOV).
    pub property: Option<PropertyReference>,
    /// The COV increment for SubscribeCOVProperty of a REAL property.
    pub cov_increment: Option<f32>,
    /// Confirmed notifications.
    pub confirmed: bool,
    /// Lifetime in seconds asked of the device (0: indefinite).
    pub lifetime: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// The next (re)subscription goes out at this time.
    Due(Instant),
    /// A subscription request is outstanding.
    Waiting,
    /// Subscribed; renewed at this time.
    Active(Instant),
}

/// One subscription's state.
#[derive(Debug, Clone)]
pub struct CovSubscriber {
    process_identifier: u32,
    options: CovOptions,
    state: State,
    failures: u32,
    subscriptions: u64,
}

impl CovSubscriber {
    /// A subscription with this process identifier, due now.
    pub fn new(now: Instant, process_identifier: u32, options: CovOptions) -> Self {
        Self {
            process_identifier,
            options,
            state: State::Due(now),
            failures: 0,
            subscriptions: 0,
        }
    }

    /// The process identifier notifications carry.
    pub const fn process_identifier(&self) -> u32 {
        self.process_identifier
    }

    /// What is subscribed to.
    pub const fn options(&self) -> &CovOptions {
        &self.options
    }

    /// Successful subscriptions so far (the first and every renewal).
    pub const fn subscriptions(&self) -> u64 {
        self.subscriptions
    }

    /// Failed attempts since the last success.
    pub const fn failures(&self) -> u32 {
        self.failures
    }

    /// True once a subscription succeeded and was not lost since.
    pub fn is_active(&self) -> bool {
        matches!(self.state, State::Active(_))
    }

    /// The SubscribeCOV or SubscribeCOVProperty request that (re)subscribes.
    pub fn subscribe_request(&self) -> ConfirmedRequest {
        let o = &self.options;
        match o.property {
            None => ConfirmedRequest::SubscribeCov(SubscribeCovRequest::subscribe(
                self.process_identifier,
                o.object,
                o.confirmed,
                o.lifetime,
            )),
            Some(property) => ConfirmedRequest::SubscribeCovProperty(SubscribeCovPropertyRequest {
                subscriber_process_identifier: self.process_identifier,
                monitored_object: o.object,
                issue_confirmed_notifications: Some(o.confirmed),
                lifetime: Some(o.lifetime),
                monitored_property: property,
                cov_increment: o.cov_increment,
            }),
        }
    }

    /// The request that cancels the subscription.
    pub fn cancel_request(&self) -> ConfirmedRequest {
        let o = &self.options;
        match o.property {
            None => ConfirmedRequest::SubscribeCov(SubscribeCovRequest::cancel(
                self.process_identifier,
                o.object,
            )),
            Some(property) => ConfirmedRequest::SubscribeCovProperty(SubscribeCovPropertyRequest {
                subscriber_process_identifier: self.process_identifier,
                monitored_object: o.object,
                issue_confirmed_notifications: None,
                lifetime: None,
                monitored_property: property,
                cov_increment: None,
            }),
        }
    }

    /// The request to send now, if one is due (the state then waits for its answer).
    pub fn poll_request(&mut self, now: Instant) -> Option<ConfirmedRequest> {
        let due = match self.state {
            State::Due(at) | State::Active(at) => at <= now,
            State::Waiting => false,
        };
        if !due {
            return None;
        }
        self.state = State::Waiting;
        Some(self.subscribe_request())
    }

    /// The answer to the request [`Self::poll_request`] gave: success schedules the
    /// renewal, failure a retry.
    pub fn on_answer(&mut self, now: Instant, success: bool) {
        if success {
            self.failures = 0;
            self.subscriptions += 1;
            self.state = State::Active(after(now, self.renewal_interval()));
        } else {
            self.failures = self.failures.saturating_add(1);
            let backoff = Duration::from_secs(1u64 << self.failures.min(7).saturating_sub(1));
            self.state = State::Due(after(now, backoff.min(MAX_RETRY_INTERVAL)));
        }
    }

    /// The device announced itself (I-Am): it may have restarted and lost the
    /// subscription, so subscribe again now (unless a request is already out).
    pub fn on_device_announced(&mut self, now: Instant) {
        if self.state != State::Waiting {
            self.state = State::Due(now);
        }
    }

    /// True when `notification` is for this subscription.
    pub fn matches(&self, notification: &CovNotificationRequest) -> bool {
        notification.subscriber_process_identifier == self.process_identifier
            && notification.monitored_object == self.options.object
    }

    /// When [`Self::poll_request`] has something to send.
    pub fn deadline(&self) -> Option<Instant> {
        match self.state {
            State::Due(at) | State::Active(at) => Some(at),
            State::Waiting => None,
        }
    }

    fn renewal_interval(&self) -> Duration {
        if self.options.lifetime == 0 {
            return MAX_RENEWAL_INTERVAL;
        }
        Duration::from_millis(u64::from(self.options.lifetime) * 500)
            .clamp(Duration::from_secs(1), MAX_RENEWAL_INTERVAL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enums::ObjectType;

    fn options(lifetime: u32) -> CovOptions {
        CovOptions {
            object: ObjectIdentifier::new(ObjectType::AnalogValue, 1),
            property: None,
            cov_increment: None,
            confirmed: false,
            lifetime,
        }
    }

    #[test]
    fn renews_at_half_the_lifetime() {
        let t0 = Instant::now();
        let mut s = CovSubscriber::new(t0, 9, options(60));
        let request = s.poll_request(t0).unwrap();
        assert_eq!(
            request,
            ConfirmedRequest::SubscribeCov(SubscribeCovRequest::subscribe(
                9,
                ObjectIdentifier::new(ObjectType::AnalogValue, 1),
                false,
                60
            ))
        );
        assert_eq!(s.poll_request(t0), None, "waiting for the answer");
        s.on_answer(t0, true);
        assert!(s.is_active());
        assert_eq!(s.deadline(), Some(t0 + Duration::from_secs(30)));
        assert_eq!(s.poll_request(t0 + Duration::from_secs(29)), None);
        assert!(s.poll_request(t0 + Duration::from_secs(30)).is_some());
        // Indefinite subscriptions are still renewed now and then.
        let mut forever = CovSubscriber::new(t0, 1, options(0));
        forever.poll_request(t0);
        forever.on_answer(t0, true);
        assert_eq!(forever.deadline(), Some(t0 + MAX_RENEWAL_INTERVAL));
    }

    #[test]
    fn failures_back_off_and_announcements_resubscribe() {
        let t0 = Instant::now();
        let mut s = CovSubscriber::new(t0, 9, options(600));
        s.poll_request(t0);
        s.on_answer(t0, false);
        assert_eq!(s.deadline(), Some(t0 + Duration::from_secs(1)));
        s.poll_request(t0 + Duration::from_secs(1));
        s.on_answer(t0, false);
        assert_eq!(s.deadline(), Some(t0 + Duration::from_secs(2)));
        for _ in 0..10 {
            s.poll_request(t0 + Duration::from_secs(3600));
            s.on_answer(t0, false);
        }
        assert_eq!(s.deadline(), Some(t0 + MAX_RETRY_INTERVAL));
        s.poll_request(t0 + Duration::from_secs(3600));
        s.on_answer(t0, true);
        assert_eq!(s.failures(), 0);
        s.on_device_announced(t0 + Duration::from_secs(5));
        assert_eq!(s.deadline(), Some(t0 + Duration::from_secs(5)));
    }

    #[test]
    fn matching_and_cancellation() {
        let t0 = Instant::now();
        let property = PropertyReference {
            property: crate::enums::PropertyIdentifier::PresentValue,
            array_index: None,
        };
        let s = CovSubscriber::new(
            t0,
            4,
            CovOptions {
                property: Some(property),
                cov_increment: Some(0.5),
                ..options(60)
            },
        );
        match s.cancel_request() {
            ConfirmedRequest::SubscribeCovProperty(cancel) => assert!(cancel.is_cancellation()),
            other => panic!("{other:?}"),
        }
        let notification = CovNotificationRequest {
            subscriber_process_identifier: 4,
            initiating_device: ObjectIdentifier::new(ObjectType::Device, 1),
            monitored_object: ObjectIdentifier::new(ObjectType::AnalogValue, 1),
            time_remaining: 10,
            values: Vec::new(),
        };
        assert!(s.matches(&notification));
        assert!(!s.matches(&CovNotificationRequest {
            subscriber_process_identifier: 5,
            ..notification
        }));
    }
}
