//! The `objects` fuzz target's invariants (crates/bacnet/fuzz/fuzz_targets/objects.rs) run
//! on stable over many pseudo-random read/write attempts against the stress database:
//! nothing panics, reads encode stably, present-value always equals the priority-array
//! winner or relinquish-default, and the object-list and name index stay in step.

#[allow(dead_code)]
#[path = "../../bench/src/bacnet/profiles.rs"]
mod profiles;

use buildwire_bacnet::encoding::abstract_syntax::{decode_to_end, encode_elements};
use buildwire_bacnet::encoding::{ApplicationValue, BitString, Element, Reader};
use buildwire_bacnet::enums::PropertyIdentifier;
use buildwire_bacnet::objects::database::ObjectDatabase;
use profiles::stress_profile;

/// Small deterministic generator (xorshift64*), so failures are reproducible.
struct Inputs(u64);

impl Inputs {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A value of a type that some property accepts, or garbage.
    fn value(&mut self) -> Vec<Element> {
        let one = |v| vec![Element::Application(v)];
        match self.below(10) {
            0 => one(ApplicationValue::Null),
            1 => one(ApplicationValue::Real((self.below(400) as f32) - 200.0)),
            2 => one(ApplicationValue::Enumerated(self.below(4) as u32)),
            3 => one(ApplicationValue::Unsigned(self.below(6))),
            4 => one(ApplicationValue::Boolean(self.below(2) == 1)),
            5 => one(ApplicationValue::CharacterString(format!(
                "n{}",
                self.below(50)
            ))),
            6 => one(ApplicationValue::BitString(BitString::from_bits(&[
                true, false,
            ]))),
            7 => Vec::new(),
            8 => vec![
                Element::Application(ApplicationValue::Real(1.0)),
                Element::Application(ApplicationValue::Real(2.0)),
            ],
            _ => vec![Element::Context {
                tag: 0,
                data: vec![1],
            }],
        }
    }
}

fn encoded(value: &[Element]) -> Vec<u8> {
    let mut buf = Vec::new();
    encode_elements(value, &mut buf);
    buf
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
        let expected = match slots
            .into_iter()
            .find(|slot| *slot != Element::Application(ApplicationValue::Null))
        {
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
        assert_eq!(
            encoded(&present),
            encoded(&expected),
            "{}",
            object.identifier()
        );
    }
}

#[test]
fn objects_target_invariants() {
    let mut db = stress_profile().build().expect("stress profile builds");
    let ids: Vec<_> = db.objects().map(|o| o.identifier()).collect();
    let mut inputs = Inputs(0x0BAC_4E70_BEEF_0001);
    let (mut reads, mut writes) = (0, 0);
    for _ in 0..10_000 {
        let object = ids[inputs.below(ids.len() as u64) as usize];
        let property = match db.get(object) {
            Some(found) if inputs.below(4) != 0 => {
                let all: Vec<_> = found.all_properties().collect();
                all[inputs.below(all.len() as u64) as usize]
            }
            _ => PropertyIdentifier::from_u32(inputs.below(600) as u32),
        };
        let array_index = match inputs.below(4) {
            0 => Some(inputs.below(20) as u32),
            1 => Some(u32::MAX),
            _ => None,
        };
        if inputs.below(2) == 0 {
            if let Ok(value) = db.read_property(object, property, array_index) {
                reads += 1;
                let first = encoded(&value);
                let decoded = decode_to_end(&mut Reader::new(&first)).expect("reads decode");
                assert_eq!(encoded(&decoded), first);
            }
        } else {
            let value = inputs.value();
            let priority = match inputs.below(19) {
                0 => None,
                p => Some(p as u8 - 1),
            };
            if db
                .write_property(object, property, array_index, &value, priority)
                .is_ok()
            {
                writes += 1;
            }
        }
        check_invariants(&db);
    }
    // The generator must actually reach the interesting paths.
    assert!(reads > 1_500, "{reads} reads");
    assert!(writes > 50, "{writes} writes");
}
