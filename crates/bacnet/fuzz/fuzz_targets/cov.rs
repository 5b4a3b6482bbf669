//! Fuzz target: the COV side of the device server under streams of SubscribeCOV and
//! SubscribeCOVProperty requests, cancellations, local changes, time steps and answers to
//! confirmed notifications. Nothing may panic, the subscription table stays within its
//! limit, every subscription is answered, and every notification decodes. The driver is
//! shared with `tests/cov_fuzz_driver.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../../bench/src/bacnet/profiles.rs"]
mod profiles;

include!("../drivers/cov.rs");

fuzz_target!(|data: &[u8]| {
    drive(data);
});
