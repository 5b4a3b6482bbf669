//! Fuzz target: the `stress` object database under arbitrary ReadProperty and
//! WriteProperty attempts decoded from the input (object, property, array index, value
//! elements from `Element::decode`, priority). Nothing may panic, every read must encode
//! stably, and after each step every commandable object's present-value must equal the
//! priority-array winner (or relinquish-default), and the object-list must match the
//! database.
#![no_main]

#[allow(dead_code)]
#[path = "../../../bench/src/bacnet/profiles.rs"]
mod profiles;

use buildwire_bacnet::encoding::abstract_syntax::{decode_to_end, encode_elements};
use buildwire_bacnet::encoding::{ApplicationValue, Element, Reader};
use buildwire_bacnet::enums::PropertyIdentifier;
use buildwire_bacnet::objects::database::ObjectDatabase;
use profiles::stress_profile;
use libfuzzer_sys::fuzz_target;

/// Most value elements one write carries.
const MAX_VALUE_ELEMENTS: usize = 4;

fuzz_target!(|data: &[u8]| {
    let mut db = stress_profile().build().expect("stress profile builds");
    let ids: Vec<_> = db.objects().map(|o| o.identifier()).collect();
    let mut input = Reader::new(data);
    while let (Ok(op), Ok(pick), Ok(raw_property)) =
        (input.read_u8(), input.read_u8(), input.read_u16())
    {
        let Some(&object) = ids.get(usize::from(pick) % ids.len()) else {
            break;
        };
        // Half the time a property the object has, else any number.
        let property = match db.get(object) {
            Some(found) if op & 0x80 != 0 => {
                let all: Vec<_> = found.all_properties().collect();
                all[usize::from(raw_property) % all.len()]
            }
            _ => PropertyIdentifier::from_u32(u32::from(raw_property)),
        };
        let array_index = if op & 0x01 != 0 {
            match input.read_u8() {
                Ok(0xFF) => Some(u32::MAX),
                Ok(index) => Some(u32::from(index)),
                Err(_) => break,
            }
        } else {
            None
        };
        if op & 0x02 == 0 {
            if let Ok(value) = db.read_property(object, property, array_index) {
                assert_stable(&value);
            }
        } else {
            let count = usize::from(op >> 2 & 0x03) + 1;
            let mut value = Vec::new();
            for _ in 0..count.min(MAX_VALUE_ELEMENTS) {
                match Element::decode(&mut input) {
                    Ok(element) => value.push(element),
                    Err(_) => break,
                }
            }
            let priority = match input.read_u8() {
                Ok(0) | Err(_) => None,
                Ok(p) => Some(p % 18),
            };
            let _ = db.write_property(object, property, array_index, &value, priority);
        }
        check_invariants(&db);
    }
});

/// Encoding a read result, decoding it and encoding again gives the same bytes.
fn assert_stable(value: &[Element]) {
    let mut first = Vec::new();
    encode_elements(value, &mut first);
    let decoded = decode_to_end(&mut Reader::new(&first)).expect("read results decode");
    let mut second = Vec::new();
    encode_elements(&decoded, &mut second);
    assert_eq!(first, second);
}

fn check_invariants(db: &ObjectDatabase) {
    let device = db.device_identifier();
    let list = db
        .read_property(device, PropertyIdentifier::ObjectList, None)
        .expect("object-list reads");
    assert_eq!(list.len(), db.len());
    for (element, object) in list.iter().zip(db.objects()) {
        assert_eq!(
            element,
            &Element::Application(ApplicationValue::ObjectIdentifier(object.identifier()))
        );
        assert_eq!(
            db.get_by_name(object.name()).map(|o| o.identifier()),
            Some(object.identifier())
        );
        if !object.is_commandable() {
            continue;
        }
        let slots = db
            .read_property(object.identifier(), PropertyIdentifier::PriorityArray, None)
            .expect("priority-array reads");
        assert_eq!(slots.len(), 16);
        let winner = slots
            .into_iter()
            .find(|slot| *slot != Element::Application(ApplicationValue::Null));
        let expected = match winner {
            Some(slot) => vec![slot],
            None => db
                .read_property(
                    object.identifier(),
                    PropertyIdentifier::RelinquishDefault,
                    None,
                )
                .expect("relinquish-default reads"),
        };
        let present = db
            .read_property(object.identifier(), PropertyIdentifier::PresentValue, None)
            .expect("present-value reads");
        let (mut a, mut b) = (Vec::new(), Vec::new());
        encode_elements(&present, &mut a);
        encode_elements(&expected, &mut b);
        assert_eq!(a, b, "present-value of {}", object.identifier());
    }
}
