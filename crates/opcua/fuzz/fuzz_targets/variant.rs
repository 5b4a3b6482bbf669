//! Fuzzes the UA Binary decoders of the recursive built-in types (Variant, DataValue,
//! DiagnosticInfo, ExtensionObject, ExpandedNodeId): whatever decodes must re-encode to
//! `encoded_len()` bytes and decode again to an equal value with identical bytes.

#![no_main]

use buildwire_opcua::encoding::{
    BinaryEncodable, DataValue, DiagnosticInfo, ExpandedNodeId, ExtensionObject, Reader, Variant,
};
use libfuzzer_sys::fuzz_target;
use std::fmt::Debug;

/// Decodes a prefix of `data`; on success checks the encode / decode fixed point.
fn check<T: BinaryEncodable + Debug>(data: &[u8]) {
    let mut reader = Reader::new(data);
    let Ok(value) = T::decode(&mut reader) else {
        return;
    };
    assert!(reader.position() <= data.len());
    let encoded = value.to_bytes();
    assert_eq!(encoded.len(), value.encoded_len());
    let again = T::from_bytes(&encoded).expect("a re-encoded value decodes");
    // Debug output compares floats NaN-safely; the bytes must be identical too.
    assert_eq!(format!("{again:?}"), format!("{value:?}"));
    assert_eq!(again.to_bytes(), encoded);
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    match selector % 5 {
        0 => check::<Variant>(rest),
        1 => check::<DataValue>(rest),
        2 => check::<DiagnosticInfo>(rest),
        3 => check::<ExtensionObject>(rest),
        _ => check::<ExpandedNodeId>(rest),
    }
});
