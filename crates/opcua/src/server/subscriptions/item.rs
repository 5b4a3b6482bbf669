//! One monitored item (OPC 10000-4 §5.12.1): what it samples, the data-change filter that
//! decides whether a sample is a change, and its bounded queue with the discard policy.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::encoding::{DataValue, Variant};
use crate::services::{
    DataChangeFilter, DataChangeTrigger, MonitoringMode, ReadValueId, TimestampsToReturn,
};
use crate::types::StatusCode;

/// StatusCode InfoType "DataValue" (bit 10) with the Overflow bit (bit 7), OPC 10000-4
/// §7.39.1: set on a value next to one a full queue discarded.
pub const OVERFLOW_INFO_BITS: u32 = 0x0000_0480;

/// One monitored item of a subscription.
#[derive(Clone, Debug)]
pub struct MonitoredItem {
    /// Server-assigned id.
    pub id: u32,
    /// The client's handle, carried in every notification.
    pub client_handle: u32,
    /// The node and attribute sampled.
    pub item_to_monitor: ReadValueId,
    /// Disabled, Sampling or Reporting.
    pub mode: MonitoringMode,
    /// Revised sampling interval in milliseconds.
    pub sampling_interval_ms: f64,
    /// Revised queue size (at least 1).
    pub queue_size: usize,
    /// Discard policy when the queue is full.
    pub discard_oldest: bool,
    /// The filter (the default StatusValue trigger without deadband when none was given).
    pub filter: DataChangeFilter,
    /// The deadband in the value's units (absolute, or percent of the EURange span).
    pub deadband: Option<f64>,
    /// Which timestamps the notifications carry.
    pub timestamps: TimestampsToReturn,
    /// The last sample that passed the filter (what the next sample is compared with).
    pub last_value: Option<DataValue>,
    /// Values waiting for the next NotificationMessage, oldest first.
    pub queue: VecDeque<DataValue>,
    /// When the next sample is due.
    pub next_sample: Instant,
}

/// A number a deadband applies to.
fn as_number(value: &Variant) -> Option<f64> {
    Some(match value {
        Variant::SByte(v) => f64::from(*v),
        Variant::Byte(v) => f64::from(*v),
        Variant::Int16(v) => f64::from(*v),
        Variant::UInt16(v) => f64::from(*v),
        Variant::Int32(v) => f64::from(*v),
        Variant::UInt32(v) => f64::from(*v),
        Variant::Int64(v) => *v as f64,
        Variant::UInt64(v) => *v as f64,
        Variant::Float(v) => f64::from(*v),
        Variant::Double(v) => *v,
        _ => return None,
    })
}

/// True when `value` is numeric (scalar or array of numbers): a deadband can apply.
pub fn is_numeric(value: &Variant) -> bool {
    match value {
        Variant::Array(array) => array.elements().iter().all(|e| as_number(e).is_some()),
        other => as_number(other).is_some(),
    }
}

/// True when `new` differs from `old` by more than `deadband` (OPC 10000-4 §7.22.2: for
/// arrays, when any element does; a change of length or type is always a change).
fn exceeds_deadband(old: &Variant, new: &Variant, deadband: f64) -> bool {
    match (old, new) {
        (Variant::Array(a), Variant::Array(b)) => {
            a.elements().len() != b.elements().len()
                || a.elements()
                    .iter()
                    .zip(b.elements())
                    .any(|(x, y)| exceeds_deadband(x, y, deadband))
        }
        _ => match (as_number(old), as_number(new)) {
            (Some(x), Some(y)) => (x - y).abs() > deadband,
            _ => old != new,
        },
    }
}

impl MonitoredItem {
    /// The sampling period (at least 1 ms so that timers always advance).
    pub fn sampling_period(&self) -> Duration {
        Duration::from_secs_f64(self.sampling_interval_ms.max(1.0) / 1000.0)
    }

    /// True when `new` is a change against `old` under the item's trigger and deadband.
    fn is_change(&self, old: &DataValue, new: &DataValue) -> bool {
        let good = StatusCode::GOOD;
        if old.status.unwrap_or(good) != new.status.unwrap_or(good) {
            return true;
        }
        let value_changed = || match (&old.value, &new.value, self.deadband) {
            (Some(a), Some(b), Some(deadband)) => exceeds_deadband(a, b, deadband),
            (a, b, _) => a != b,
        };
        match self.filter.trigger {
            DataChangeTrigger::Status => false,
            DataChangeTrigger::StatusValueTimestamp => {
                value_changed() || old.source_timestamp != new.source_timestamp
            }
            _ => value_changed(),
        }
    }

    /// Offers a sample (read with both timestamps); queues it when it is a change (the first
    /// sample always is). Returns true when queued.
    pub fn offer(&mut self, sample: DataValue) -> bool {
        if self.mode == MonitoringMode::Disabled {
            return false;
        }
        if let Some(last) = &self.last_value
            && !self.is_change(last, &sample)
        {
            return false;
        }
        let queued = self.strip_timestamps(sample.clone());
        self.last_value = Some(sample);
        self.enqueue(queued);
        true
    }

    /// The value with only the timestamps the client asked for.
    pub fn strip_timestamps(&self, mut value: DataValue) -> DataValue {
        let (source, server) = match self.timestamps {
            TimestampsToReturn::Source => (true, false),
            TimestampsToReturn::Server => (false, true),
            TimestampsToReturn::Neither => (false, false),
            _ => (true, true),
        };
        if !source {
            value.source_timestamp = None;
            value.source_picoseconds = None;
        }
        if !server {
            value.server_timestamp = None;
            value.server_picoseconds = None;
        }
        value
    }

    /// Appends to the queue, applying the discard policy and the overflow bit when full
    /// (OPC 10000-4 §5.12.1.5; a queue of one just keeps the latest value, without the bit).
    pub fn enqueue(&mut self, mut value: DataValue) {
        if self.queue.len() < self.queue_size {
            self.queue.push_back(value);
            return;
        }
        if self.queue_size <= 1 {
            self.queue.clear();
            self.queue.push_back(value);
            return;
        }
        if self.discard_oldest {
            self.queue.pop_front();
            if let Some(oldest) = self.queue.front_mut() {
                set_overflow(oldest);
            }
        } else {
            self.queue.pop_back();
            set_overflow(&mut value);
        }
        self.queue.push_back(value);
    }

    /// Shrinks the queue to a new size, keeping the newest values when the policy discards
    /// the oldest and the oldest otherwise.
    pub fn resize_queue(&mut self, size: usize) {
        self.queue_size = size.max(1);
        while self.queue.len() > self.queue_size {
            if self.discard_oldest {
                self.queue.pop_front();
            } else {
                self.queue.pop_back();
            }
        }
    }
}

fn set_overflow(value: &mut DataValue) {
    let bits = value.status.unwrap_or(StatusCode::GOOD).bits() | OVERFLOW_INFO_BITS;
    value.status = Some(StatusCode::from_u32(bits));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::deadband_type;

    fn item(queue_size: usize, discard_oldest: bool, deadband: Option<f64>) -> MonitoredItem {
        MonitoredItem {
            id: 1,
            client_handle: 7,
            item_to_monitor: ReadValueId::default(),
            mode: MonitoringMode::Reporting,
            sampling_interval_ms: 100.0,
            queue_size,
            discard_oldest,
            filter: DataChangeFilter {
                deadband_type: if deadband.is_some() {
                    deadband_type::ABSOLUTE
                } else {
                    deadband_type::NONE
                },
                deadband_value: deadband.unwrap_or(0.0),
                ..DataChangeFilter::default()
            },
            deadband,
            timestamps: TimestampsToReturn::Both,
            last_value: None,
            queue: VecDeque::new(),
            next_sample: Instant::now(),
        }
    }

    fn double(value: f64) -> DataValue {
        DataValue {
            value: Some(Variant::Double(value)),
            ..DataValue::default()
        }
    }

    fn values(item: &MonitoredItem) -> Vec<(f64, u32)> {
        item.queue
            .iter()
            .map(|v| match v.value {
                Some(Variant::Double(x)) => (x, v.status.unwrap_or(StatusCode::GOOD).bits()),
                _ => (f64::NAN, 0),
            })
            .collect()
    }

    #[test]
    fn discard_oldest_sets_overflow_on_the_new_oldest() {
        let mut item = item(3, true, None);
        for x in [1.0, 2.0, 3.0, 4.0, 5.0] {
            assert!(item.offer(double(x)));
        }
        assert_eq!(
            values(&item),
            [(3.0, OVERFLOW_INFO_BITS), (4.0, 0), (5.0, 0)]
        );
    }

    #[test]
    fn discard_newest_replaces_the_last_with_overflow() {
        let mut item = item(3, false, None);
        for x in [1.0, 2.0, 3.0, 4.0, 5.0] {
            assert!(item.offer(double(x)));
        }
        assert_eq!(
            values(&item),
            [(1.0, 0), (2.0, 0), (5.0, OVERFLOW_INFO_BITS)]
        );
    }

    #[test]
    fn queue_of_one_keeps_the_latest_without_overflow() {
        let mut item = item(1, true, None);
        for x in [1.0, 2.0] {
            item.offer(double(x));
        }
        assert_eq!(values(&item), [(2.0, 0)]);
    }

    #[test]
    fn absolute_deadband_compares_with_the_last_reported_value() {
        let mut item = item(10, true, Some(1.0));
        assert!(item.offer(double(10.0)));
        assert!(!item.offer(double(10.6)));
        // 11.0 is exactly the deadband away: not a change (must exceed).
        assert!(!item.offer(double(11.0)));
        assert!(item.offer(double(11.2)));
        assert!(!item.offer(double(10.5)));
        assert_eq!(values(&item), [(10.0, 0), (11.2, 0)]);
        // A status change always passes.
        let mut bad = double(11.2);
        bad.status = Some(StatusCode::BAD_TIMEOUT);
        assert!(item.offer(bad));
    }

    #[test]
    fn triggers() {
        let mut status_only = item(10, true, None);
        status_only.filter.trigger = DataChangeTrigger::Status;
        assert!(status_only.offer(double(1.0)));
        assert!(!status_only.offer(double(2.0)));
        let mut with_time = item(10, true, None);
        with_time.filter.trigger = DataChangeTrigger::StatusValueTimestamp;
        assert!(with_time.offer(double(1.0)));
        let mut later = double(1.0);
        later.source_timestamp = Some(crate::encoding::DateTime(5));
        assert!(with_time.offer(later.clone()));
        assert!(!with_time.offer(later));
        let mut plain = item(10, true, None);
        assert!(plain.offer(double(1.0)));
        assert!(!plain.offer(double(1.0)));
    }
}
