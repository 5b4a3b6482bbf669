//! Fuzz target: a sequence of tagged values (application, context, constructed), the
//! skipper, and BACnetPropertyValue. Re-encoded bytes must be stable.
#![no_main]

use buildwire_bacnet::encoding::abstract_syntax::{
    decode_to_end, decode_until_closing, encode_elements, skip_until_closing,
};
use buildwire_bacnet::encoding::{PropertyValue, Reader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(elements) = decode_to_end(&mut Reader::new(data)) {
        let mut first = Vec::new();
        encode_elements(&elements, &mut first);
        let decoded = decode_to_end(&mut Reader::new(&first)).expect("re-encoded values decode");
        let mut second = Vec::new();
        encode_elements(&decoded, &mut second);
        assert_eq!(first, second);
    }

    // The skipper and the tree decoder must agree on where closing tag 0 is.
    let mut skip_reader = Reader::new(data);
    let mut tree_reader = Reader::new(data);
    let skipped = skip_until_closing(&mut skip_reader, 0);
    let tree = decode_until_closing(&mut tree_reader, 0);
    if let (Ok(_), Ok(_)) = (&skipped, &tree) {
        assert_eq!(skip_reader.position(), tree_reader.position());
    }

    if let Ok(value) = PropertyValue::decode(&mut Reader::new(data)) {
        let mut first = Vec::new();
        value.encode(&mut first);
        let decoded =
            PropertyValue::decode(&mut Reader::new(&first)).expect("re-encoded value decodes");
        let mut second = Vec::new();
        decoded.encode(&mut second);
        assert_eq!(first, second);
    }
});
