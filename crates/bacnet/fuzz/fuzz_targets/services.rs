//! Fuzz target: service parameters. The first byte selects what the rest is decoded as:
//! 0..=63 a confirmed request with that service choice, 64..=127 an unconfirmed request
//! (choice = byte - 64), 128..=191 a ComplexACK (choice = byte - 128), 192..=255 a
//! WritePropertyMultiple-Error. Whatever decodes is encoded, decoded again and compared;
//! values are compared through their encodings so that NaN reals do not count as mismatches.
#![no_main]

use buildwire_bacnet::apdu::{ConfirmedServiceChoice, UnconfirmedServiceChoice};
use buildwire_bacnet::encoding::Reader;
use buildwire_bacnet::services::{
    ComplexAckParameters, ConfirmedRequest, UnconfirmedRequest, WritePropertyMultipleError,
};
use libfuzzer_sys::fuzz_target;

/// Decodes `bytes`, re-encodes, decodes the encoding and checks both encodings match.
fn check<T>(
    bytes: &[u8],
    decode: impl Fn(&mut Reader<'_>) -> Option<T>,
    encode: impl Fn(&T, &mut Vec<u8>),
) {
    let Some(value) = decode(&mut Reader::new(bytes)) else {
        return;
    };
    let mut first = Vec::new();
    encode(&value, &mut first);
    let again = decode(&mut Reader::new(&first)).expect("re-encoded parameters must decode");
    let mut second = Vec::new();
    encode(&again, &mut second);
    assert_eq!(first, second);
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, payload)) = data.split_first() else {
        return;
    };
    match selector {
        0..=63 => {
            let service = ConfirmedServiceChoice::from_u32(u32::from(selector));
            check(
                payload,
                |r| ConfirmedRequest::decode(service, r).ok(),
                ConfirmedRequest::encode,
            );
        }
        64..=127 => {
            let service = UnconfirmedServiceChoice::from_u32(u32::from(selector - 64));
            check(
                payload,
                |r| UnconfirmedRequest::decode(service, r).ok(),
                UnconfirmedRequest::encode,
            );
        }
        128..=191 => {
            let service = ConfirmedServiceChoice::from_u32(u32::from(selector - 128));
            check(
                payload,
                |r| ComplexAckParameters::decode(service, r).ok(),
                ComplexAckParameters::encode,
            );
        }
        _ => check(
            payload,
            |r| {
                let error = WritePropertyMultipleError::decode(r).ok()?;
                r.expect_end().ok()?;
                Some(error)
            },
            WritePropertyMultipleError::encode,
        ),
    }
});
