//! Property-based round trips: encode then decode gives back the value, for every layer,
//! and no decoder panics on arbitrary bytes.

use std::net::{Ipv4Addr, SocketAddrV4};

use buildwire_bacnet::apdu::{
    Apdu, ConfirmedServiceChoice, MaxApdu, MaxSegments, SegmentInfo, UnconfirmedServiceChoice,
};
use buildwire_bacnet::encoding::abstract_syntax::{decode_until_closing, encode_elements};
use buildwire_bacnet::encoding::{
    ApplicationValue, BitString, Date, Element, ObjectIdentifier, PropertyValue, Reader, Tag,
    TagClass, TagKind, Time,
};
use buildwire_bacnet::enums::{AbortReason, ObjectType, PropertyIdentifier, RejectReason};
use buildwire_bacnet::link::{BdtEntry, BvlcResultCode, Bvll, FdtEntry};
use buildwire_bacnet::network::{
    MacAddress, NetworkMessageType, NetworkPriority, Npdu, NpduBody, RemoteAddress,
};
use proptest::prelude::*;

fn date() -> impl Strategy<Value = Date> {
    (
        any::<u8>(),
        prop_oneof![1u8..=14, Just(255)],
        prop_oneof![1u8..=34, Just(255)],
        prop_oneof![1u8..=7, Just(255)],
    )
        .prop_map(|(year_since_1900, month, day, weekday)| Date {
            year_since_1900,
            month,
            day,
            weekday,
        })
}

fn time() -> impl Strategy<Value = Time> {
    (
        prop_oneof![0u8..=23, Just(255)],
        prop_oneof![0u8..=59, Just(255)],
        prop_oneof![0u8..=59, Just(255)],
        prop_oneof![0u8..=99, Just(255)],
    )
        .prop_map(|(h, m, s, c)| Time::new(h, m, s, c))
}

fn application_value() -> impl Strategy<Value = ApplicationValue> {
    prop_oneof![
        Just(ApplicationValue::Null),
        any::<bool>().prop_map(ApplicationValue::Boolean),
        any::<u64>().prop_map(ApplicationValue::Unsigned),
        any::<i64>().prop_map(ApplicationValue::Signed),
        any::<f32>()
            .prop_filter("NaN never equals itself", |v| !v.is_nan())
            .prop_map(ApplicationValue::Real),
        any::<f64>()
            .prop_filter("NaN never equals itself", |v| !v.is_nan())
            .prop_map(ApplicationValue::Double),
        proptest::collection::vec(any::<u8>(), 0..300).prop_map(ApplicationValue::OctetString),
        ".{0,40}".prop_map(ApplicationValue::CharacterString),
        proptest::collection::vec(any::<bool>(), 0..40)
            .prop_map(|bits| ApplicationValue::BitString(BitString::from_bits(&bits))),
        any::<u32>().prop_map(ApplicationValue::Enumerated),
        date().prop_map(ApplicationValue::Date),
        time().prop_map(ApplicationValue::Time),
        (0u32..1024, 0u32..(1 << 22)).prop_map(|(t, i)| ApplicationValue::ObjectIdentifier(
            ObjectIdentifier::new(ObjectType::from_u32(t), i)
        )),
    ]
}

fn element() -> impl Strategy<Value = Element> {
    let leaf = prop_oneof![
        application_value().prop_map(Element::Application),
        (0u8..=254, proptest::collection::vec(any::<u8>(), 0..20))
            .prop_map(|(tag, data)| Element::Context { tag, data }),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        (0u8..=254, proptest::collection::vec(inner, 0..6))
            .prop_map(|(tag, children)| Element::Constructed { tag, children })
    })
}

fn mac() -> impl Strategy<Value = MacAddress> {
    proptest::collection::vec(any::<u8>(), 1..=18)
        .prop_filter_map("at most 18 octets", |octets| MacAddress::new(&octets))
}

fn socket() -> impl Strategy<Value = SocketAddrV4> {
    (any::<[u8; 4]>(), any::<u16>())
        .prop_map(|(ip, port)| SocketAddrV4::new(Ipv4Addr::from(ip), port))
}

fn segment() -> impl Strategy<Value = Option<SegmentInfo>> {
    proptest::option::of(
        (any::<bool>(), any::<u8>(), any::<u8>()).prop_map(|(m, s, w)| SegmentInfo {
            more_follows: m,
            sequence_number: s,
            proposed_window_size: w,
        }),
    )
}

proptest! {
    #[test]
    fn application_values(value in application_value()) {
        let mut buf = Vec::new();
        value.encode(&mut buf);
        let mut reader = Reader::new(&buf);
        prop_assert_eq!(ApplicationValue::decode(&mut reader).unwrap(), value);
        prop_assert!(reader.is_empty());
    }

    #[test]
    fn tags(number in 0u8..=254, class in any::<bool>(), kind in 0u8..3, length in any::<u32>()) {
        let class = if class || kind > 0 { TagClass::Context } else { TagClass::Application };
        let kind = match kind { 0 => TagKind::Value(length), 1 => TagKind::Opening, _ => TagKind::Closing };
        let tag = Tag { class, number, kind };
        let mut buf = Vec::new();
        tag.encode(&mut buf);
        let mut reader = Reader::new(&buf);
        prop_assert_eq!(Tag::decode(&mut reader).unwrap(), tag);
        prop_assert!(reader.is_empty());
    }

    #[test]
    fn generic_elements(elements in proptest::collection::vec(element(), 0..6), tag in 0u8..=254) {
        let mut buf = Vec::new();
        encode_elements(&elements, &mut buf);
        Tag::closing(tag).encode(&mut buf);
        let mut reader = Reader::new(&buf);
        prop_assert_eq!(decode_until_closing(&mut reader, tag).unwrap(), elements);
        prop_assert!(reader.is_empty());
    }

    #[test]
    fn property_values(
        property in any::<u32>(),
        array_index in proptest::option::of(any::<u32>()),
        value in proptest::collection::vec(element(), 0..4),
        priority in proptest::option::of(1u8..=16),
    ) {
        let pv = PropertyValue { property: PropertyIdentifier::from_u32(property), array_index, value, priority };
        let mut buf = Vec::new();
        pv.encode(&mut buf);
        prop_assert_eq!(PropertyValue::decode(&mut Reader::new(&buf)).unwrap(), pv);
    }

    #[test]
    fn npdus(
        destination in proptest::option::of((any::<u16>(), proptest::option::of(mac()))),
        source in proptest::option::of((0u16..u16::MAX, mac())),
        hop_count in any::<u8>(),
        expecting_reply in any::<bool>(),
        priority in 0u8..4,
        network_message in proptest::option::of((any::<u8>(), any::<u16>())),
        data in proptest::collection::vec(any::<u8>(), 0..50),
    ) {
        let destination = destination.map(|(network, mac)| RemoteAddress { network, mac: mac.unwrap_or(MacAddress::BROADCAST) });
        let source = source.map(|(network, mac)| RemoteAddress { network, mac });
        let body = match network_message {
            Some((t, vendor)) => NpduBody::NetworkMessage {
                message_type: NetworkMessageType::from_u32(u32::from(t)),
                vendor_id: (t >= 0x80).then_some(vendor),
                data: &data,
            },
            None => NpduBody::Apdu(&data),
        };
        let priority = [NetworkPriority::Normal, NetworkPriority::Urgent, NetworkPriority::CriticalEquipment, NetworkPriority::LifeSafety][usize::from(priority)];
        let npdu = Npdu {
            destination,
            source,
            hop_count: if destination.is_some() { hop_count } else { 255 },
            expecting_reply,
            priority,
            body,
        };
        let mut buf = Vec::new();
        npdu.encode(&mut buf);
        prop_assert_eq!(Npdu::decode(&mut Reader::new(&buf)).unwrap(), npdu);
    }

    #[test]
    fn bvll_messages(
        function in 0u8..=12,
        code in any::<u16>(),
        ttl in any::<u16>(),
        address in socket(),
        table in proptest::collection::vec((socket(), any::<[u8; 4]>(), any::<u16>()), 0..5),
        npdu in proptest::collection::vec(any::<u8>(), 0..60),
    ) {
        let bdt: Vec<BdtEntry> = table.iter().map(|&(address, mask, _)| BdtEntry { address, mask: Ipv4Addr::from(mask) }).collect();
        let fdt: Vec<FdtEntry> = table.iter().map(|&(address, _, remaining)| FdtEntry { address, time_to_live: ttl, remaining }).collect();
        let message = match function {
            0 => Bvll::Result(BvlcResultCode::from_u16(code)),
            1 => Bvll::WriteBdt(bdt),
            2 => Bvll::ReadBdt,
            3 => Bvll::ReadBdtAck(bdt),
            4 => Bvll::ForwardedNpdu { source: address, npdu: &npdu },
            5 => Bvll::RegisterForeignDevice { time_to_live: ttl },
            6 => Bvll::ReadFdt,
            7 => Bvll::ReadFdtAck(fdt),
            8 => Bvll::DeleteFdtEntry(address),
            9 => Bvll::DistributeBroadcastToNetwork(&npdu),
            10 => Bvll::OriginalUnicastNpdu(&npdu),
            11 => Bvll::OriginalBroadcastNpdu(&npdu),
            _ => Bvll::SecureBvll(&npdu),
        };
        let mut buf = Vec::new();
        message.encode(&mut buf);
        prop_assert_eq!(Bvll::decode_datagram(&buf).unwrap(), message);
    }

    #[test]
    fn apdu_headers(
        kind in 0u8..8,
        flags in any::<[bool; 3]>(),
        max_segments in 0usize..8,
        max_apdu in 0u8..6,
        invoke_id in any::<u8>(),
        segment in segment(),
        service in any::<u8>(),
        octets in any::<[u8; 2]>(),
        payload in proptest::collection::vec(any::<u8>(), 0..40),
    ) {
        let segments = [
            MaxSegments::Unspecified, MaxSegments::Two, MaxSegments::Four, MaxSegments::Eight,
            MaxSegments::Sixteen, MaxSegments::ThirtyTwo, MaxSegments::SixtyFour, MaxSegments::MoreThanSixtyFour,
        ];
        let confirmed = ConfirmedServiceChoice::from_u32(u32::from(service));
        let apdu = match kind {
            0 => Apdu::ConfirmedRequest {
                segmented_response_accepted: flags[0],
                max_segments: segments[max_segments],
                max_apdu: MaxApdu::from_code(max_apdu).unwrap(),
                invoke_id,
                segment,
                service: confirmed,
                payload: &payload,
            },
            1 => Apdu::UnconfirmedRequest { service: UnconfirmedServiceChoice::from_u32(u32::from(service)), payload: &payload },
            2 => Apdu::SimpleAck { invoke_id, service: confirmed },
            3 => Apdu::ComplexAck { invoke_id, segment, service: confirmed, payload: &payload },
            4 => Apdu::SegmentAck { negative: flags[1], server: flags[2], invoke_id, sequence_number: octets[0], actual_window_size: octets[1] },
            5 => Apdu::Error { invoke_id, service: confirmed, payload: &payload },
            6 => Apdu::Reject { invoke_id, reason: RejectReason::from_u32(u32::from(service)) },
            _ => Apdu::Abort { server: flags[2], invoke_id, reason: AbortReason::from_u32(u32::from(service)) },
        };
        let mut buf = Vec::new();
        apdu.encode(&mut buf);
        prop_assert_eq!(Apdu::decode(&mut Reader::new(&buf)).unwrap(), apdu);
    }

    #[test]
    fn decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        // Any outcome is fine; the point is no panic and a sane error offset.
        let check = |result: Result<(), buildwire_bacnet::encoding::DecodeError>| {
            if let Err(err) = result {
                assert!(err.offset <= bytes.len(), "offset {} past input", err.offset);
            }
        };
        check(ApplicationValue::decode(&mut Reader::new(&bytes)).map(drop));
        check(Element::decode(&mut Reader::new(&bytes)).map(drop));
        check(PropertyValue::decode(&mut Reader::new(&bytes)).map(drop));
        check(decode_until_closing(&mut Reader::new(&bytes), 0).map(drop));
        check(Npdu::decode(&mut Reader::new(&bytes)).map(drop));
        check(Bvll::decode_datagram(&bytes).map(drop));
        check(Apdu::decode(&mut Reader::new(&bytes)).map(drop));
    }
}
