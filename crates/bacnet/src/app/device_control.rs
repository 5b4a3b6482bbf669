//! Device management state of a device server (Clause 16): DeviceCommunicationControl,
//! ReinitializeDevice passwords, and the device clock's offset from the host clock set by
//! TimeSynchronization and UTCTimeSynchronization.
//!
//! Communication states (Clause 16.1):
//! - `enable`: normal;
//! - `disable`: only DeviceCommunicationControl and ReinitializeDevice are answered, every
//!   other message is dropped, nothing is initiated (no I-Am, no COV notifications);
//! - `disable-initiation`: requests are answered and Who-Is still gets an I-Am, but nothing
//!   else is initiated (no COV notifications, no start-up I-Am).
//!
//! A time duration (minutes) ends the state at that time; a ReinitializeDevice restart
//! ends it too. Passwords, when configured, must match exactly (`security` /
//! `password-failure` otherwise); a device without one accepts any or none.
//!
//! The clock: the driver hands in the host's local time; the device's local-date and
//! local-time are that time plus an offset that time synchronization sets. The offset is
//! kept across restarts of this state (a real device keeps its clock too).

use std::time::{Duration, Instant};

use crate::apdu::{BacnetError, ConfirmedServiceChoice};
use crate::encoding::DateTime;
use crate::encoding::calendar::{date_time_from_hundredths, date_time_hundredths};
use crate::enums::{EnableDisable, ErrorClass, ErrorCode, ReinitializedState};
use crate::services::{DeviceCommunicationControlRequest, ReinitializeDeviceRequest};

/// Whether the device talks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommunicationState {
    /// Normal operation.
    Enabled,
    /// Answers only DeviceCommunicationControl and ReinitializeDevice.
    Disabled,
    /// Answers requests but initiates nothing (I-Am answers to Who-Is excepted).
    InitiationDisabled,
}

/// The error of a wrong or missing password.
pub const PASSWORD_FAILURE: BacnetError = BacnetError {
    class: ErrorClass::Security,
    code: ErrorCode::PasswordFailure,
};

/// Wrong passwords a source may give before it is slowed down.
pub const FREE_PASSWORD_FAILURES: u32 = 3;
/// The pause after the first wrong password past the free ones; each further one doubles it.
pub const PASSWORD_DELAY_START: Duration = Duration::from_secs(1);
/// The longest pause.
pub const PASSWORD_DELAY_MAX: Duration = Duration::from_secs(60);
/// A source that has given no password for this long starts afresh.
pub const PASSWORD_FAILURES_FORGOTTEN_AFTER: Duration = Duration::from_secs(15 * 60);
/// Sources remembered at once.
pub const MAX_PASSWORD_SOURCES: usize = 1024;

/// A growing delay between the password guesses of one source (DeviceCommunicationControl
/// and ReinitializeDevice share it), as the Haystack server has for logins (issue 30).
///
/// Decisions: the first [`FREE_PASSWORD_FAILURES`] wrong passwords cost nothing (an operator
/// mistypes); each one after that closes the source for [`PASSWORD_DELAY_START`], doubling up
/// to [`PASSWORD_DELAY_MAX`]. While closed, a request is answered at once with
/// `security` / `password-failure` without its password being looked at, rather than held
/// back: a held answer would keep a transaction open, and clients retry after their APDU
/// timeout (3 s by default) anyway, so holding would only multiply requests. A request
/// refused while closed does not lengthen the pause. A right password forgets the source.
/// A source is the IP address for B/IP (a new UDP port does not start afresh); a peer
/// behind a router shares its router's. The table is bounded: a new source when it is full
/// pushes out the one whose pause ends first.
#[derive(Debug, Clone)]
pub struct PasswordThrottle<K> {
    sources: std::collections::HashMap<K, PasswordFailures>,
}

#[derive(Debug, Clone, Copy)]
struct PasswordFailures {
    count: u32,
    closed_until: Instant,
    last: Instant,
}

impl<K> Default for PasswordThrottle<K> {
    fn default() -> Self {
        Self {
            sources: std::collections::HashMap::new(),
        }
    }
}

impl<K: Eq + std::hash::Hash + Clone> PasswordThrottle<K> {
    /// Whether a password from `source` may be checked at `now` (false: answer
    /// `password-failure` without checking it).
    pub fn may_check(&self, now: Instant, source: &K) -> bool {
        self.sources
            .get(source)
            .is_none_or(|failures| failures.closed_until <= now)
    }

    /// When `source` may try again (`None`: it may now).
    pub fn closed_until(&self, now: Instant, source: &K) -> Option<Instant> {
        self.sources
            .get(source)
            .map(|failures| failures.closed_until)
            .filter(|until| *until > now)
    }

    /// Records a wrong password from `source`.
    pub fn failed(&mut self, now: Instant, source: &K) {
        if !self.sources.contains_key(source) {
            self.make_room(now);
        }
        let failures = self
            .sources
            .entry(source.clone())
            .or_insert(PasswordFailures {
                count: 0,
                closed_until: now,
                last: now,
            });
        failures.count = failures.count.saturating_add(1);
        failures.last = now;
        if let Some(past_free) = failures.count.checked_sub(FREE_PASSWORD_FAILURES + 1) {
            let delay = PASSWORD_DELAY_START
                .saturating_mul(2u32.saturating_pow(past_free.min(31)))
                .min(PASSWORD_DELAY_MAX);
            failures.closed_until = crate::tsm::after(now, delay);
        }
    }

    /// Records a right password (or none needed) from `source`.
    pub fn succeeded(&mut self, source: &K) {
        self.sources.remove(source);
    }

    /// Sources remembered.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    /// True when no source is remembered.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    fn make_room(&mut self, now: Instant) {
        if self.sources.len() < MAX_PASSWORD_SOURCES {
            return;
        }
        self.sources.retain(|_, failures| {
            now.saturating_duration_since(failures.last) < PASSWORD_FAILURES_FORGOTTEN_AFTER
        });
        if self.sources.len() >= MAX_PASSWORD_SOURCES
            && let Some(first) = self
                .sources
                .iter()
                .min_by_key(|(_, failures)| failures.closed_until)
                .map(|(key, _)| key.clone())
        {
            self.sources.remove(&first);
        }
    }
}

/// Device management state of one device.
#[derive(Debug, Clone)]
pub struct DeviceControl {
    state: CommunicationState,
    until: Option<Instant>,
    dcc_password: Option<String>,
    reinitialize_password: Option<String>,
    /// Device clock minus host clock, in hundredths of a second.
    clock_offset: i64,
    /// Minutes to add to local time to get UTC (BACnet UTC_Offset sign convention).
    utc_offset_minutes: i32,
}

impl Default for DeviceControl {
    fn default() -> Self {
        Self {
            state: CommunicationState::Enabled,
            until: None,
            dcc_password: None,
            reinitialize_password: None,
            clock_offset: 0,
            utc_offset_minutes: 0,
        }
    }
}

fn password_matches(required: Option<&String>, given: Option<&String>) -> bool {
    match required {
        None => true,
        Some(required) => given == Some(required),
    }
}

impl DeviceControl {
    /// The current communication state.
    pub const fn state(&self) -> CommunicationState {
        self.state
    }

    /// Sets the passwords DeviceCommunicationControl and ReinitializeDevice require
    /// (`None`: no password).
    pub fn set_passwords(&mut self, dcc: Option<String>, reinitialize: Option<String>) {
        self.dcc_password = dcc;
        self.reinitialize_password = reinitialize;
    }

    /// Sets the host's offset from UTC as BACnet counts it: minutes to add to local time to
    /// get UTC (west of Greenwich positive).
    pub fn set_utc_offset_minutes(&mut self, minutes: i32) {
        self.utc_offset_minutes = minutes;
    }

    /// The UTC offset in use.
    pub const fn utc_offset_minutes(&self) -> i32 {
        self.utc_offset_minutes
    }

    /// Executes DeviceCommunicationControl at `now`.
    pub fn communication_control(
        &mut self,
        now: Instant,
        request: &DeviceCommunicationControlRequest,
    ) -> Result<CommunicationState, BacnetError> {
        if !password_matches(self.dcc_password.as_ref(), request.password.as_ref()) {
            return Err(PASSWORD_FAILURE);
        }
        let state = match request.enable_disable {
            EnableDisable::Enable => CommunicationState::Enabled,
            EnableDisable::Disable => CommunicationState::Disabled,
            EnableDisable::DisableInitiation => CommunicationState::InitiationDisabled,
            EnableDisable::Other(_) => {
                return Err(BacnetError {
                    class: ErrorClass::Services,
                    code: ErrorCode::ParameterOutOfRange,
                });
            }
        };
        self.state = state;
        // Clause 16.1.1.1.1: without a time duration the state lasts until changed.
        // Decision: a duration of 0 minutes is indefinite too. The standard gives it no
        // meaning of its own, a zero-minute disable would be a no-op, and tools and stacks
        // send and read 0 as "no limit" (bacnet-stack stores an indefinite duration as 0).
        // Before issue 30 it ended the state at once, so a raw disable with [0] = 0 was
        // acknowledged and the device went on answering ReadProperty.
        self.until = match (state, request.time_duration) {
            (CommunicationState::Enabled, _) | (_, None | Some(0)) => None,
            (_, Some(minutes)) => Some(crate::tsm::after(
                now,
                Duration::from_secs(u64::from(minutes) * 60),
            )),
        };
        Ok(state)
    }

    /// Checks a ReinitializeDevice request; on success the server answers SimpleACK and
    /// then carries the state out (see [`Self::restart`] for the two restarts).
    /// Backup and restore are not offered: `services` / `optional-functionality-not-supported`.
    pub fn reinitialize(
        &self,
        request: &ReinitializeDeviceRequest,
    ) -> Result<ReinitializedState, BacnetError> {
        if !password_matches(
            self.reinitialize_password.as_ref(),
            request.password.as_ref(),
        ) {
            return Err(PASSWORD_FAILURE);
        }
        match request.state {
            ReinitializedState::Coldstart
            | ReinitializedState::Warmstart
            | ReinitializedState::ActivateChanges => Ok(request.state),
            ReinitializedState::Other(_) => Err(BacnetError {
                class: ErrorClass::Services,
                code: ErrorCode::ParameterOutOfRange,
            }),
            _ => Err(BacnetError {
                class: ErrorClass::Services,
                code: ErrorCode::OptionalFunctionalityNotSupported,
            }),
        }
    }

    /// A restart: communication is enabled again.
    pub fn restart(&mut self) {
        self.state = CommunicationState::Enabled;
        self.until = None;
    }

    /// Ends a timed DeviceCommunicationControl whose duration is over.
    pub fn handle_timeout(&mut self, now: Instant) -> bool {
        if self.until.is_some_and(|until| until <= now) {
            self.restart();
            return true;
        }
        false
    }

    /// When the timed state ends.
    pub const fn deadline(&self) -> Option<Instant> {
        self.until
    }

    /// True when a confirmed request for `service` is to be executed at all.
    pub fn accepts(&self, service: ConfirmedServiceChoice) -> bool {
        self.state != CommunicationState::Disabled
            || matches!(
                service,
                ConfirmedServiceChoice::DeviceCommunicationControl
                    | ConfirmedServiceChoice::ReinitializeDevice
            )
    }

    /// True when unconfirmed requests (Who-Is, Who-Has, time synchronization) are handled.
    pub fn accepts_unconfirmed(&self) -> bool {
        self.state != CommunicationState::Disabled
    }

    /// True when the device may initiate messages (COV notifications, I-Am at start).
    pub fn may_initiate(&self) -> bool {
        self.state == CommunicationState::Enabled
    }

    /// The device's local time for the host's local time `host`.
    pub fn device_time(&self, host: DateTime) -> DateTime {
        if self.clock_offset == 0 {
            return host;
        }
        match date_time_hundredths(&host) {
            Some(h) => date_time_from_hundredths(h + self.clock_offset),
            None => host,
        }
    }

    /// TimeSynchronization: the device's local time becomes `time` (at host time `host`).
    pub fn synchronize_local(&mut self, host: DateTime, time: DateTime) {
        if let (Some(host), Some(time)) = (date_time_hundredths(&host), date_time_hundredths(&time))
        {
            self.clock_offset = time - host;
        }
    }

    /// UTCTimeSynchronization: the device's UTC becomes `utc` (local = UTC minus the UTC
    /// offset).
    pub fn synchronize_utc(&mut self, host: DateTime, utc: DateTime) {
        if let (Some(host), Some(utc)) = (date_time_hundredths(&host), date_time_hundredths(&utc)) {
            let local = utc - i64::from(self.utc_offset_minutes) * 60 * 100;
            self.clock_offset = local - host;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{Date, Time};

    #[test]
    fn a_time_duration_of_zero_is_indefinite() {
        let mut control = DeviceControl::default();
        let now = Instant::now();
        let request = DeviceCommunicationControlRequest {
            time_duration: Some(0),
            enable_disable: EnableDisable::Disable,
            password: None,
        };
        assert_eq!(
            control.communication_control(now, &request),
            Ok(CommunicationState::Disabled)
        );
        assert_eq!(control.deadline(), None);
        assert!(!control.handle_timeout(now + Duration::from_secs(3600)));
        assert_eq!(control.state(), CommunicationState::Disabled);
    }

    #[test]
    fn the_password_throttle_is_bounded() {
        let mut throttle = PasswordThrottle::default();
        let now = Instant::now();
        for source in 0..3 * MAX_PASSWORD_SOURCES as u32 {
            for _ in 0..=FREE_PASSWORD_FAILURES {
                throttle.failed(now, &source);
            }
            assert!(throttle.len() <= MAX_PASSWORD_SOURCES);
        }
        let last = 3 * MAX_PASSWORD_SOURCES as u32 - 1;
        assert!(!throttle.may_check(now, &last));
        assert_eq!(
            throttle.closed_until(now, &last),
            Some(now + PASSWORD_DELAY_START)
        );
        throttle.succeeded(&last);
        assert!(throttle.may_check(now, &last));
    }

    fn dcc(
        enable_disable: EnableDisable,
        minutes: Option<u16>,
        password: Option<&str>,
    ) -> DeviceCommunicationControlRequest {
        DeviceCommunicationControlRequest {
            time_duration: minutes,
            enable_disable,
            password: password.map(str::to_owned),
        }
    }

    #[test]
    fn timed_disable_with_password() {
        let mut control = DeviceControl::default();
        control.set_passwords(Some("secret".to_owned()), None);
        let t0 = Instant::now();
        assert_eq!(
            control.communication_control(t0, &dcc(EnableDisable::Disable, Some(1), Some("wrong"))),
            Err(PASSWORD_FAILURE)
        );
        assert_eq!(
            control.communication_control(t0, &dcc(EnableDisable::Disable, Some(1), None)),
            Err(PASSWORD_FAILURE)
        );
        assert_eq!(
            control
                .communication_control(t0, &dcc(EnableDisable::Disable, Some(1), Some("secret"))),
            Ok(CommunicationState::Disabled)
        );
        assert!(!control.accepts(ConfirmedServiceChoice::ReadProperty));
        assert!(control.accepts(ConfirmedServiceChoice::DeviceCommunicationControl));
        assert!(!control.accepts_unconfirmed());
        assert_eq!(control.deadline(), Some(t0 + Duration::from_secs(60)));
        assert!(!control.handle_timeout(t0 + Duration::from_secs(59)));
        assert!(control.handle_timeout(t0 + Duration::from_secs(60)));
        assert_eq!(control.state(), CommunicationState::Enabled);
    }

    #[test]
    fn reinitialize_states() {
        let mut control = DeviceControl::default();
        let request = |state| ReinitializeDeviceRequest {
            state,
            password: None,
        };
        assert_eq!(
            control.reinitialize(&request(ReinitializedState::Coldstart)),
            Ok(ReinitializedState::Coldstart)
        );
        assert_eq!(
            control.reinitialize(&request(ReinitializedState::StartBackup)),
            Err(BacnetError {
                class: ErrorClass::Services,
                code: ErrorCode::OptionalFunctionalityNotSupported
            })
        );
        control.set_passwords(None, Some("pw".to_owned()));
        assert_eq!(
            control.reinitialize(&request(ReinitializedState::Warmstart)),
            Err(PASSWORD_FAILURE)
        );
    }

    #[test]
    fn time_synchronization_offsets() {
        let mut control = DeviceControl::default();
        let host = DateTime {
            date: Date::new(2026, 11, 22, 7),
            time: Time::new(8, 0, 0, 0),
        };
        let set = DateTime {
            date: Date::new(2026, 11, 23, 1),
            time: Time::new(9, 30, 0, 0),
        };
        control.synchronize_local(host, set);
        assert_eq!(control.device_time(host), set);
        // UTC 14:30 with a UTC offset of +300 (5 hours west): local 09:30.
        control.set_utc_offset_minutes(300);
        let utc = DateTime {
            date: Date::new(2026, 11, 23, 1),
            time: Time::new(14, 30, 0, 0),
        };
        control.synchronize_utc(host, utc);
        assert_eq!(control.device_time(host), set);
    }
}
