//! Fuzzes POSIX TZ rule parsing and evaluation: the first line is a rule; a parsed rule
//! written back parses to the same rule, and its offset at any instant (the next eight
//! bytes) stays within ±26 hours.
#![no_main]

use buildwire_haystack::timezone::PosixRule;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (rule_bytes, rest) = match data.iter().position(|b| *b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(text) = std::str::from_utf8(rule_bytes) else {
        return;
    };
    let Ok(rule) = PosixRule::parse(text) else {
        return;
    };
    let written = rule.to_string();
    assert_eq!(PosixRule::parse(&written), Ok(rule), "{written}");
    let mut instant = [0u8; 8];
    for (slot, byte) in instant.iter_mut().zip(rest) {
        *slot = *byte;
    }
    let offset = rule.offset_at(i64::from_le_bytes(instant));
    assert!(offset.abs() <= 26 * 3600);
});
