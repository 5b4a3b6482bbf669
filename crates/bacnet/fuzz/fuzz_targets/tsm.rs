//! Fuzz target: arbitrary APDU byte sequences, requests, answers and time steps fed into a
//! client and a server transaction state machine (also wired to each other). Nothing may
//! panic, every table must stay within its configured limit, and every APDU the machines
//! emit must decode and re-encode to the same bytes. The driver is shared with
//! `tests/tsm_fuzz_driver.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

include!("../drivers/tsm.rs");

fuzz_target!(|data: &[u8]| drive(data));
