//! The fuzz targets' invariants (crates/bacnet/fuzz) run on stable over many pseudo-random
//! inputs: whatever decodes must re-encode to bytes that decode to the same thing, and the
//! skipper must agree with the tree decoder.

use buildwire_bacnet::apdu::Apdu;
use buildwire_bacnet::encoding::abstract_syntax::{
    decode_to_end, decode_until_closing, encode_elements, skip_until_closing,
};
use buildwire_bacnet::encoding::{PropertyValue, Reader};
use buildwire_bacnet::link::Bvll;
use buildwire_bacnet::network::Npdu;

/// Small deterministic generator (xorshift64*), so failures are reproducible.
struct Inputs(u64);

impl Inputs {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Bytes biased towards tag-like values so that decoders get past the first octet.
    fn bytes(&mut self, max_len: usize) -> Vec<u8> {
        let len = (self.next() % (max_len as u64 + 1)) as usize;
        (0..len)
            .map(|_| {
                let r = self.next();
                match r % 4 {
                    0 => [
                        0x00, 0x0E, 0x0F, 0x1E, 0x1F, 0x21, 0x44, 0x91, 0x09, 0x19, 0x29, 0x39,
                    ][(r >> 8) as usize % 12],
                    1 => (r >> 8) as u8 & 0x0F,
                    _ => (r >> 8) as u8,
                }
            })
            .collect()
    }
}

fn stable_elements(data: &[u8]) -> bool {
    if let Ok(elements) = decode_to_end(&mut Reader::new(data)) {
        let mut first = Vec::new();
        encode_elements(&elements, &mut first);
        let decoded = decode_to_end(&mut Reader::new(&first)).expect("re-encoded values decode");
        let mut second = Vec::new();
        encode_elements(&decoded, &mut second);
        assert_eq!(first, second, "input {data:02X?}");
        return !data.is_empty();
    }
    false
}

#[test]
fn tags_target_invariants() {
    let (mut sequences, mut skipped, mut property_values) = (0, 0, 0);
    let mut inputs = Inputs(0x0123_4567_89AB_CDEF);
    // A valid BACnetPropertyValue with nested constructed data, to be mutated.
    let seed = [
        0x09, 0x55, 0x1A, 0x01, 0x00, 0x2E, 0x44, 0x43, 0x34, 0x00, 0x00, 0x0E, 0x11, 0x75, 0x03,
        0x00, 0x41, 0x42, 0x0F, 0x2F, 0x39, 0x08,
    ];
    for round in 0..100_000 {
        let data = if round % 2 == 0 {
            inputs.bytes(24)
        } else {
            let mut mutated = seed.to_vec();
            for _ in 0..=(inputs.next() % 2) {
                let at = (inputs.next() % mutated.len() as u64) as usize;
                mutated[at] = inputs.bytes(1).first().copied().unwrap_or(0);
            }
            mutated.truncate(mutated.len() - (inputs.next() % 3) as usize);
            mutated
        };
        sequences += usize::from(stable_elements(&data));
        let mut skip_reader = Reader::new(&data);
        let mut tree_reader = Reader::new(&data);
        if let (Ok(_), Ok(_)) = (
            skip_until_closing(&mut skip_reader, 0),
            decode_until_closing(&mut tree_reader, 0),
        ) {
            assert_eq!(
                skip_reader.position(),
                tree_reader.position(),
                "input {data:02X?}"
            );
            skipped += 1;
        }
        if let Ok(value) = PropertyValue::decode(&mut Reader::new(&data)) {
            let mut first = Vec::new();
            value.encode(&mut first);
            let decoded = PropertyValue::decode(&mut Reader::new(&first)).expect("re-decodes");
            let mut second = Vec::new();
            decoded.encode(&mut second);
            assert_eq!(first, second, "input {data:02X?}");
            property_values += 1;
        }
    }
    println!("sequences {sequences}, skipped {skipped}, property values {property_values}");
    // The inputs must exercise the success paths, not only the error paths.
    assert!(
        sequences > 1_000 && skipped > 100,
        "too few decodable inputs"
    );
}

#[test]
fn frame_target_invariants() {
    let (mut apdus, mut npdus, mut datagrams) = (0, 0, 0);
    let mut inputs = Inputs(0xFEED_FACE_CAFE_BEEF);
    for _ in 0..100_000 {
        let data = inputs.bytes(20);
        if let Ok(apdu) = Apdu::decode(&mut Reader::new(&data)) {
            let mut encoded = Vec::new();
            apdu.encode(&mut encoded);
            assert_eq!(Apdu::decode(&mut Reader::new(&encoded)).unwrap(), apdu);
            apdus += 1;
        }
        let mut npdu_input = vec![0x01];
        npdu_input.extend_from_slice(&data);
        if let Ok(npdu) = Npdu::decode(&mut Reader::new(&npdu_input)) {
            let mut encoded = Vec::new();
            npdu.encode(&mut encoded);
            assert_eq!(Npdu::decode(&mut Reader::new(&encoded)).unwrap(), npdu);
            npdus += 1;
        }
        let mut datagram = vec![0x81, (data.first().copied().unwrap_or(0)) % 13];
        datagram.extend_from_slice(&((data.len() + 3) as u16).to_be_bytes());
        datagram.extend_from_slice(data.get(1..).unwrap_or_default());
        if let Ok(message) = Bvll::decode_datagram(&datagram) {
            let mut encoded = Vec::new();
            message.encode(&mut encoded);
            assert_eq!(Bvll::decode_datagram(&encoded).unwrap(), message);
            datagrams += 1;
        }
    }
    println!("apdus {apdus}, npdus {npdus}, datagrams {datagrams}");
    assert!(
        apdus > 1_000 && npdus > 1_000 && datagrams > 1_000,
        "too few decodable inputs"
    );
}
