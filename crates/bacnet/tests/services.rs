//! Service parameter codecs: Annex F example encodings (ASHRAE 135, "Examples of APDU
//! Encoding"), malformed payloads with the Reject reason a server would send, and
//! proptest round trips for every service type.

use buildwire_bacnet::apdu::{Apdu, BacnetError, ConfirmedServiceChoice, UnconfirmedServiceChoice};
use buildwire_bacnet::encoding::object_identifier::MAX_INSTANCE;
use buildwire_bacnet::encoding::{
    ApplicationValue, DecodeError, DecodeErrorKind, Element, ObjectIdentifier,
    ObjectPropertyReference, PropertyValue, Reader, TagSpec,
};
use buildwire_bacnet::enums::{
    ErrorClass, ErrorCode, ObjectType, PropertyIdentifier, RejectReason, Segmentation,
};
use buildwire_bacnet::services::{
    ComplexAckParameters, ConfirmedRequest, IAm, IHave, InstanceRange, MAX_ACCESS_SPECIFICATIONS,
    PropertyReadResult, PropertyReference, ReadAccessResult, ReadAccessSpecification,
    ReadPropertyAck, ReadPropertyMultipleAck, ReadPropertyMultipleRequest, ReadPropertyRequest,
    ReadResult, ServiceDecodeError, ServiceError, UnconfirmedRequest, WhoHas, WhoHasObject, WhoIs,
    WriteAccessSpecification, WritePropertyMultipleError, WritePropertyMultipleRequest,
    WritePropertyRequest, reject_reason_for,
};
use proptest::prelude::*;

fn oid(object_type: ObjectType, instance: u32) -> ObjectIdentifier {
    ObjectIdentifier::new(object_type, instance)
}

fn real(value: f32) -> Vec<Element> {
    vec![Element::Application(ApplicationValue::Real(value))]
}

/// Decodes a whole Confirmed-Request APDU, its parameters, and checks that encoding the
/// parameters again gives the same payload bytes.
fn confirmed(apdu: &[u8]) -> ConfirmedRequest {
    let Apdu::ConfirmedRequest {
        service, payload, ..
    } = Apdu::decode(&mut Reader::new(apdu)).expect("the example APDU decodes")
    else {
        panic!("not a confirmed request: {apdu:02X?}");
    };
    let request = ConfirmedRequest::decode(service, &mut Reader::new(payload))
        .expect("the example parameters decode");
    assert_eq!(request.service_choice(), service);
    let mut again = Vec::new();
    request.encode(&mut again);
    assert_eq!(again, payload);
    request
}

fn unconfirmed(apdu: &[u8]) -> UnconfirmedRequest {
    let Apdu::UnconfirmedRequest { service, payload } =
        Apdu::decode(&mut Reader::new(apdu)).expect("the example APDU decodes")
    else {
        panic!("not an unconfirmed request: {apdu:02X?}");
    };
    let request = UnconfirmedRequest::decode(service, &mut Reader::new(payload))
        .expect("the example parameters decode");
    assert_eq!(request.service_choice(), service);
    let mut again = Vec::new();
    request.encode(&mut again);
    assert_eq!(again, payload);
    request
}

fn complex_ack(apdu: &[u8]) -> ComplexAckParameters {
    let Apdu::ComplexAck {
        service, payload, ..
    } = Apdu::decode(&mut Reader::new(apdu)).expect("the example APDU decodes")
    else {
        panic!("not a complex ack: {apdu:02X?}");
    };
    let ack = ComplexAckParameters::decode(service, &mut Reader::new(payload))
        .expect("the example parameters decode");
    assert_eq!(ack.service_choice(), service);
    let mut again = Vec::new();
    ack.encode(&mut again);
    assert_eq!(again, payload);
    ack
}

fn decode_confirmed(
    service: ConfirmedServiceChoice,
    payload: &[u8],
) -> Result<ConfirmedRequest, ServiceDecodeError> {
    ConfirmedRequest::decode(service, &mut Reader::new(payload))
}

fn malformed(error: &ServiceDecodeError) -> &DecodeError {
    error.decode_error().expect("a malformed payload")
}

// ---------------------------------------------------------------------------------------
// Annex F examples
// ---------------------------------------------------------------------------------------

#[test]
fn annex_f_3_5_read_property() {
    let request = confirmed(&[
        0x00, 0x00, 0x01, 0x0C, 0x0C, 0x00, 0x00, 0x00, 0x05, 0x19, 0x55,
    ]);
    assert_eq!(
        request,
        ConfirmedRequest::ReadProperty(ReadPropertyRequest {
            object: oid(ObjectType::AnalogInput, 5),
            property: PropertyIdentifier::PresentValue,
            array_index: None,
        })
    );
    let ack = complex_ack(&[
        0x30, 0x01, 0x0C, 0x0C, 0x00, 0x00, 0x00, 0x05, 0x19, 0x55, 0x3E, 0x44, 0x42, 0x90, 0x99,
        0x9A, 0x3F,
    ]);
    assert_eq!(
        ack,
        ComplexAckParameters::ReadProperty(ReadPropertyAck {
            object: oid(ObjectType::AnalogInput, 5),
            property: PropertyIdentifier::PresentValue,
            array_index: None,
            value: real(72.3),
        })
    );
}

#[test]
fn annex_f_3_7_read_property_multiple_one_object() {
    let request = confirmed(&[
        0x00, 0x04, 0xF1, 0x0E, 0x0C, 0x00, 0x00, 0x00, 0x10, 0x1E, 0x09, 0x55, 0x09, 0x67, 0x1F,
    ]);
    let reference = |property| PropertyReference {
        property,
        array_index: None,
    };
    assert_eq!(
        request,
        ConfirmedRequest::ReadPropertyMultiple(ReadPropertyMultipleRequest {
            specifications: vec![ReadAccessSpecification {
                object: oid(ObjectType::AnalogInput, 16),
                properties: vec![
                    reference(PropertyIdentifier::PresentValue),
                    reference(PropertyIdentifier::Reliability),
                ],
            }],
        })
    );
    let ack = complex_ack(&[
        0x30, 0xF1, 0x0E, 0x0C, 0x00, 0x00, 0x00, 0x10, 0x1E, 0x29, 0x55, 0x4E, 0x44, 0x42, 0x90,
        0x99, 0x9A, 0x4F, 0x29, 0x67, 0x4E, 0x91, 0x00, 0x4F, 0x1F,
    ]);
    assert_eq!(
        ack,
        ComplexAckParameters::ReadPropertyMultiple(ReadPropertyMultipleAck {
            results: vec![ReadAccessResult {
                object: oid(ObjectType::AnalogInput, 16),
                results: vec![
                    PropertyReadResult {
                        property: PropertyIdentifier::PresentValue,
                        array_index: None,
                        result: ReadResult::Value(real(72.3)),
                    },
                    PropertyReadResult {
                        property: PropertyIdentifier::Reliability,
                        array_index: None,
                        result: ReadResult::Value(vec![Element::Application(
                            ApplicationValue::Enumerated(0)
                        )]),
                    },
                ],
            }],
        })
    );
}

#[test]
fn annex_f_3_7_read_property_multiple_with_unknown_object() {
    let request = confirmed(&[
        0x00, 0x04, 0x02, 0x0E, 0x0C, 0x00, 0x00, 0x00, 0x21, 0x1E, 0x09, 0x55, 0x1F, 0x0C, 0x00,
        0x00, 0x00, 0x32, 0x1E, 0x09, 0x55, 0x1F, 0x0C, 0x00, 0x00, 0x00, 0x23, 0x1E, 0x09, 0x55,
        0x1F,
    ]);
    let ConfirmedRequest::ReadPropertyMultiple(request) = request else {
        panic!("wrong service");
    };
    let objects: Vec<u32> = request
        .specifications
        .iter()
        .map(|s| s.object.instance())
        .collect();
    assert_eq!(objects, [33, 50, 35]);

    let ack = complex_ack(&[
        0x30, 0x02, 0x0E, 0x0C, 0x00, 0x00, 0x00, 0x21, 0x1E, 0x29, 0x55, 0x4E, 0x44, 0x42, 0x29,
        0x33, 0x33, 0x4F, 0x1F, 0x0C, 0x00, 0x00, 0x00, 0x32, 0x1E, 0x29, 0x55, 0x5E, 0x91, 0x01,
        0x91, 0x1F, 0x5F, 0x1F, 0x0C, 0x00, 0x00, 0x00, 0x23, 0x1E, 0x29, 0x55, 0x4E, 0x44, 0x43,
        0xD9, 0xD9, 0x9A, 0x4F, 0x1F,
    ]);
    let ComplexAckParameters::ReadPropertyMultiple(ack) = ack else {
        panic!("wrong service");
    };
    let results: Vec<&ReadResult> = ack.results.iter().map(|r| &r.results[0].result).collect();
    assert_eq!(
        results,
        [
            &ReadResult::Value(real(42.3)),
            &ReadResult::Error(ServiceError {
                class: ErrorClass::Object,
                code: ErrorCode::UnknownObject,
            }),
            &ReadResult::Value(real(435.7)),
        ]
    );
}

#[test]
fn annex_f_3_9_write_property() {
    let request = confirmed(&[
        0x00, 0x04, 0x59, 0x0F, 0x0C, 0x00, 0x80, 0x00, 0x01, 0x19, 0x55, 0x3E, 0x44, 0x43, 0x34,
        0x00, 0x00, 0x3F,
    ]);
    assert_eq!(
        request,
        ConfirmedRequest::WriteProperty(WritePropertyRequest {
            object: oid(ObjectType::AnalogValue, 1),
            property: PropertyIdentifier::PresentValue,
            array_index: None,
            value: real(180.0),
            priority: None,
        })
    );
}

#[test]
fn annex_f_3_10_write_property_multiple() {
    let request = confirmed(&[
        0x00, 0x04, 0x01, 0x10, 0x0C, 0x00, 0x80, 0x00, 0x05, 0x1E, 0x09, 0x55, 0x2E, 0x44, 0x42,
        0x86, 0x00, 0x00, 0x2F, 0x1F, 0x0C, 0x00, 0x80, 0x00, 0x06, 0x1E, 0x09, 0x55, 0x2E, 0x44,
        0x42, 0x86, 0x00, 0x00, 0x2F, 0x1F, 0x0C, 0x00, 0x80, 0x00, 0x07, 0x1E, 0x09, 0x55, 0x2E,
        0x44, 0x42, 0x90, 0x00, 0x00, 0x2F, 0x1F,
    ]);
    let write = |instance, value| WriteAccessSpecification {
        object: oid(ObjectType::AnalogValue, instance),
        properties: vec![PropertyValue {
            property: PropertyIdentifier::PresentValue,
            array_index: None,
            value: real(value),
            priority: None,
        }],
    };
    assert_eq!(
        request,
        ConfirmedRequest::WritePropertyMultiple(WritePropertyMultipleRequest {
            specifications: vec![write(5, 67.0), write(6, 67.0), write(7, 72.0)],
        })
    );
}

#[test]
fn annex_f_4_who_has_and_i_have() {
    // F.4.8: Who-Has by name "OATemp", by identifier analog-input 3, and the I-Have answer.
    assert_eq!(
        unconfirmed(&[
            0x10, 0x07, 0x3D, 0x07, 0x00, 0x4F, 0x41, 0x54, 0x65, 0x6D, 0x70
        ]),
        UnconfirmedRequest::WhoHas(WhoHas {
            range: None,
            object: WhoHasObject::Name("OATemp".into()),
        })
    );
    assert_eq!(
        unconfirmed(&[0x10, 0x07, 0x2C, 0x00, 0x00, 0x00, 0x03]),
        UnconfirmedRequest::WhoHas(WhoHas {
            range: None,
            object: WhoHasObject::Identifier(oid(ObjectType::AnalogInput, 3)),
        })
    );
    assert_eq!(
        unconfirmed(&[
            0x10, 0x01, 0xC4, 0x02, 0x00, 0x00, 0x08, 0xC4, 0x00, 0x00, 0x00, 0x03, 0x75, 0x07,
            0x00, 0x4F, 0x41, 0x54, 0x65, 0x6D, 0x70,
        ]),
        UnconfirmedRequest::IHave(IHave {
            device: oid(ObjectType::Device, 8),
            object: oid(ObjectType::AnalogInput, 3),
            object_name: "OATemp".into(),
        })
    );
}

#[test]
fn annex_f_4_who_is_and_i_am() {
    // F.4.9: Who-Is for device 3 only, the global Who-Is, and I-Am of device 3.
    assert_eq!(
        unconfirmed(&[0x10, 0x08, 0x09, 0x03, 0x19, 0x03]),
        UnconfirmedRequest::WhoIs(WhoIs {
            range: InstanceRange::new(3, 3),
        })
    );
    assert_eq!(
        unconfirmed(&[0x10, 0x08]),
        UnconfirmedRequest::WhoIs(WhoIs { range: None })
    );
    assert_eq!(
        unconfirmed(&[
            0x10, 0x00, 0xC4, 0x02, 0x00, 0x00, 0x03, 0x22, 0x04, 0x00, 0x91, 0x03, 0x21, 0x63,
        ]),
        UnconfirmedRequest::IAm(IAm {
            device: oid(ObjectType::Device, 3),
            max_apdu_length_accepted: 1024,
            segmentation_supported: Segmentation::NoSegmentation,
            vendor_id: 99,
        })
    );
}

#[test]
fn write_property_multiple_error_in_an_error_pdu() {
    // Error PDU for WritePropertyMultiple (service 16): the write to av,6 was denied.
    let apdu = [
        0x50, 0x01, 0x10, 0x0E, 0x91, 0x02, 0x91, 0x28, 0x0F, 0x1E, 0x0C, 0x00, 0x80, 0x00, 0x06,
        0x19, 0x55, 0x1F,
    ];
    let Apdu::Error {
        service, payload, ..
    } = Apdu::decode(&mut Reader::new(&apdu)).unwrap()
    else {
        panic!("not an error PDU");
    };
    assert_eq!(service, ConfirmedServiceChoice::WritePropertyMultiple);
    let mut reader = Reader::new(payload);
    let error = WritePropertyMultipleError::decode(&mut reader).unwrap();
    reader.expect_end().unwrap();
    let denied = ServiceError {
        class: ErrorClass::Property,
        code: ErrorCode::WriteAccessDenied,
    };
    assert_eq!(
        error,
        WritePropertyMultipleError {
            error: denied,
            first_failed_write_attempt: ObjectPropertyReference {
                object: oid(ObjectType::AnalogValue, 6),
                property: PropertyIdentifier::PresentValue,
                array_index: None,
            },
        }
    );
    // The APDU layer's generic reader finds the same class and code.
    assert_eq!(
        BacnetError::decode_payload(&mut Reader::new(payload)).unwrap(),
        denied
    );
}

// ---------------------------------------------------------------------------------------
// Malformed payloads and the Reject reason a server sends
// ---------------------------------------------------------------------------------------

const READ_AI5_PV: [u8; 7] = [0x0C, 0x00, 0x00, 0x00, 0x05, 0x19, 0x55];

#[test]
fn truncated_read_property_is_missing_required_parameter() {
    let err =
        decode_confirmed(ConfirmedServiceChoice::ReadProperty, &READ_AI5_PV[..5]).unwrap_err();
    assert_eq!(
        malformed(&err),
        &DecodeError::new(
            5,
            DecodeErrorKind::Truncated {
                needed: 1,
                remaining: 0
            }
        )
    );
    assert_eq!(
        reject_reason_for(&err),
        RejectReason::MissingRequiredParameter
    );
    // Cut inside the object identifier's content.
    let err =
        decode_confirmed(ConfirmedServiceChoice::ReadProperty, &READ_AI5_PV[..3]).unwrap_err();
    assert_eq!(malformed(&err).offset, 1);
    assert_eq!(
        reject_reason_for(&err),
        RejectReason::MissingRequiredParameter
    );
}

#[test]
fn application_tag_where_context_tag_belongs_is_invalid_tag() {
    let mut payload = READ_AI5_PV;
    payload[0] = 0xC4; // application object identifier instead of [0]
    let err = decode_confirmed(ConfirmedServiceChoice::ReadProperty, &payload).unwrap_err();
    assert_eq!(
        malformed(&err),
        &DecodeError::new(
            0,
            DecodeErrorKind::UnexpectedTag {
                expected: TagSpec::Context(0),
                found: TagSpec::Application(12)
            }
        )
    );
    assert_eq!(reject_reason_for(&err), RejectReason::InvalidTag);
}

#[test]
fn trailing_parameter_is_too_many_arguments() {
    let mut payload = READ_AI5_PV.to_vec();
    payload.extend([0x49, 0x01]); // a [4] that ReadProperty does not have
    let err = decode_confirmed(ConfirmedServiceChoice::ReadProperty, &payload).unwrap_err();
    assert_eq!(
        malformed(&err),
        &DecodeError::new(7, DecodeErrorKind::TrailingData { count: 2 })
    );
    assert_eq!(reject_reason_for(&err), RejectReason::TooManyArguments);
}

#[test]
fn write_property_without_value() {
    // Ends after the property identifier.
    let err = decode_confirmed(ConfirmedServiceChoice::WriteProperty, &READ_AI5_PV).unwrap_err();
    assert_eq!(malformed(&err).offset, 7);
    assert_eq!(
        reject_reason_for(&err),
        RejectReason::MissingRequiredParameter
    );
    // Priority [4] where the value [3] belongs.
    let mut payload = READ_AI5_PV.to_vec();
    payload.extend([0x49, 0x08]);
    let err = decode_confirmed(ConfirmedServiceChoice::WriteProperty, &payload).unwrap_err();
    assert_eq!(
        malformed(&err).kind,
        DecodeErrorKind::UnexpectedTag {
            expected: TagSpec::Opening(3),
            found: TagSpec::Context(4)
        }
    );
    assert_eq!(reject_reason_for(&err), RejectReason::InvalidTag);
    // Value opened but never closed.
    let mut payload = READ_AI5_PV.to_vec();
    payload.extend([0x3E, 0x44, 0x43, 0x34, 0x00, 0x00]);
    let err = decode_confirmed(ConfirmedServiceChoice::WriteProperty, &payload).unwrap_err();
    assert_eq!(malformed(&err).offset, payload.len());
    assert_eq!(
        reject_reason_for(&err),
        RejectReason::MissingRequiredParameter
    );
}

#[test]
fn write_property_priority_zero_is_out_of_range() {
    let mut payload = READ_AI5_PV.to_vec();
    payload.extend([0x3E, 0x00, 0x3F, 0x49, 0x00]);
    let err = decode_confirmed(ConfirmedServiceChoice::WriteProperty, &payload).unwrap_err();
    assert_eq!(
        malformed(&err),
        &DecodeError::new(10, DecodeErrorKind::InvalidValue("priority must be 1..=16"))
    );
    assert_eq!(reject_reason_for(&err), RejectReason::ParameterOutOfRange);
}

#[test]
fn write_property_multiple_bad_priority_inside_the_list() {
    // av,5 { pv = NULL at priority 17 }
    let payload = [
        0x0C, 0x00, 0x80, 0x00, 0x05, 0x1E, 0x09, 0x55, 0x2E, 0x00, 0x2F, 0x39, 0x11, 0x1F,
    ];
    let err =
        decode_confirmed(ConfirmedServiceChoice::WritePropertyMultiple, &payload).unwrap_err();
    assert_eq!(malformed(&err).offset, 11);
    assert_eq!(reject_reason_for(&err), RejectReason::ParameterOutOfRange);
}

#[test]
fn empty_multiple_requests_are_missing_parameters() {
    for service in [
        ConfirmedServiceChoice::ReadPropertyMultiple,
        ConfirmedServiceChoice::WritePropertyMultiple,
    ] {
        let err = decode_confirmed(service, &[]).unwrap_err();
        assert_eq!(
            malformed(&err),
            &DecodeError::new(
                0,
                DecodeErrorKind::Truncated {
                    needed: 1,
                    remaining: 0
                }
            )
        );
        assert_eq!(
            reject_reason_for(&err),
            RejectReason::MissingRequiredParameter
        );
    }
}

#[test]
fn read_property_multiple_spec_count_is_capped() {
    // One spec: [0] ai,1 [1]{ [0] pv }, 9 bytes each.
    let spec = [0x0C, 0x00, 0x00, 0x00, 0x01, 0x1E, 0x09, 0x55, 0x1F];
    let payload = spec.repeat(MAX_ACCESS_SPECIFICATIONS);
    let request = decode_confirmed(ConfirmedServiceChoice::ReadPropertyMultiple, &payload).unwrap();
    let ConfirmedRequest::ReadPropertyMultiple(request) = request else {
        panic!("wrong service");
    };
    assert_eq!(request.specifications.len(), MAX_ACCESS_SPECIFICATIONS);

    let payload = spec.repeat(MAX_ACCESS_SPECIFICATIONS + 1);
    let err = decode_confirmed(ConfirmedServiceChoice::ReadPropertyMultiple, &payload).unwrap_err();
    assert_eq!(
        malformed(&err),
        &DecodeError::new(
            spec.len() * MAX_ACCESS_SPECIFICATIONS,
            DecodeErrorKind::TooManyElements {
                limit: MAX_ACCESS_SPECIFICATIONS
            }
        )
    );
    assert_eq!(reject_reason_for(&err), RejectReason::BufferOverflow);
}

#[test]
fn who_is_limits() {
    let decode = |payload: &[u8]| {
        UnconfirmedRequest::decode(UnconfirmedServiceChoice::WhoIs, &mut Reader::new(payload))
    };
    // Low limit 4194304 does not fit the 22-bit instance.
    let err = decode(&[0x0B, 0x40, 0x00, 0x00, 0x19, 0x01]).unwrap_err();
    assert_eq!(
        malformed(&err),
        &DecodeError::new(
            0,
            DecodeErrorKind::InvalidValue("device instance limit exceeds 4194303")
        )
    );
    assert_eq!(reject_reason_for(&err), RejectReason::ParameterOutOfRange);
    // Low limit without a high limit.
    let err = decode(&[0x09, 0x03]).unwrap_err();
    assert_eq!(malformed(&err).offset, 2);
    assert_eq!(
        reject_reason_for(&err),
        RejectReason::MissingRequiredParameter
    );
    // The largest instance is allowed.
    let who_is = decode(&[0x09, 0x00, 0x1B, 0x3F, 0xFF, 0xFF]).unwrap();
    assert_eq!(
        who_is,
        UnconfirmedRequest::WhoIs(WhoIs {
            range: InstanceRange::new(0, MAX_INSTANCE)
        })
    );
}

#[test]
fn i_am_field_types_and_ranges() {
    let decode = |payload: &[u8]| {
        UnconfirmedRequest::decode(UnconfirmedServiceChoice::IAm, &mut Reader::new(payload))
    };
    // Vendor id sent as ENUMERATED instead of Unsigned.
    let err = decode(&[
        0xC4, 0x02, 0x00, 0x00, 0x03, 0x22, 0x04, 0x00, 0x91, 0x03, 0x91, 0x63,
    ])
    .unwrap_err();
    assert_eq!(
        malformed(&err),
        &DecodeError::new(
            10,
            DecodeErrorKind::UnexpectedTag {
                expected: TagSpec::Application(2),
                found: TagSpec::Application(9)
            }
        )
    );
    // Vendor id 65536 does not fit Unsigned16.
    let err = decode(&[
        0xC4, 0x02, 0x00, 0x00, 0x03, 0x22, 0x04, 0x00, 0x91, 0x03, 0x23, 0x01, 0x00, 0x00,
    ])
    .unwrap_err();
    // The offset is that of the content octets, right after the tag.
    assert_eq!(
        malformed(&err),
        &DecodeError::new(
            11,
            DecodeErrorKind::InvalidValue("unsigned value exceeds u16")
        )
    );
    assert_eq!(reject_reason_for(&err), RejectReason::ParameterOutOfRange);
}

#[test]
fn unsupported_services_are_unrecognized() {
    let err = decode_confirmed(ConfirmedServiceChoice::AtomicReadFile, &[]).unwrap_err();
    assert_eq!(err, ServiceDecodeError::UnrecognizedService { choice: 6 });
    assert_eq!(reject_reason_for(&err), RejectReason::UnrecognizedService);
    let err = ConfirmedRequest::decode(ConfirmedServiceChoice::Other(200), &mut Reader::new(&[]))
        .unwrap_err();
    assert_eq!(err, ServiceDecodeError::UnrecognizedService { choice: 200 });
    let err = UnconfirmedRequest::decode(
        UnconfirmedServiceChoice::UnconfirmedPrivateTransfer,
        &mut Reader::new(&[]),
    )
    .unwrap_err();
    assert_eq!(err, ServiceDecodeError::UnrecognizedService { choice: 4 });
    let err = ComplexAckParameters::decode(
        ConfirmedServiceChoice::AtomicReadFile,
        &mut Reader::new(&[]),
    )
    .unwrap_err();
    assert_eq!(err, ServiceDecodeError::UnrecognizedService { choice: 6 });
    // Services this crate decodes, given no parameters: a missing required parameter.
    for service in [
        ConfirmedServiceChoice::SubscribeCov,
        ConfirmedServiceChoice::SubscribeCovProperty,
        ConfirmedServiceChoice::ReadRange,
        ConfirmedServiceChoice::DeviceCommunicationControl,
        ConfirmedServiceChoice::ReinitializeDevice,
        ConfirmedServiceChoice::AddListElement,
        ConfirmedServiceChoice::RemoveListElement,
        ConfirmedServiceChoice::ConfirmedCovNotification,
    ] {
        let err = decode_confirmed(service, &[]).unwrap_err();
        assert_eq!(
            reject_reason_for(&err),
            RejectReason::MissingRequiredParameter,
            "{service}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Property-based round trips
// ---------------------------------------------------------------------------------------

fn object_identifier() -> impl Strategy<Value = ObjectIdentifier> {
    (0u32..=1023, 0u32..=MAX_INSTANCE)
        .prop_map(|(object_type, instance)| oid(ObjectType::from_u32(object_type), instance))
}

fn property() -> impl Strategy<Value = PropertyIdentifier> {
    prop_oneof![
        Just(PropertyIdentifier::All),
        Just(PropertyIdentifier::Required),
        Just(PropertyIdentifier::Optional),
        any::<u32>().prop_map(PropertyIdentifier::from_u32),
    ]
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
        ".{0,12}".prop_map(ApplicationValue::CharacterString),
        any::<u32>().prop_map(ApplicationValue::Enumerated),
        object_identifier().prop_map(ApplicationValue::ObjectIdentifier),
    ]
}

fn element() -> impl Strategy<Value = Element> {
    let leaf = prop_oneof![
        application_value().prop_map(Element::Application),
        (0u8..=254, proptest::collection::vec(any::<u8>(), 0..6))
            .prop_map(|(tag, data)| Element::Context { tag, data }),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        (0u8..=254, proptest::collection::vec(inner, 0..4))
            .prop_map(|(tag, children)| Element::Constructed { tag, children })
    })
}

fn value() -> impl Strategy<Value = Vec<Element>> {
    proptest::collection::vec(element(), 0..4)
}

fn service_error() -> impl Strategy<Value = ServiceError> {
    (any::<u16>(), any::<u16>()).prop_map(|(class, code)| ServiceError {
        class: ErrorClass::from_u32(class.into()),
        code: ErrorCode::from_u32(code.into()),
    })
}

fn instance_range() -> impl Strategy<Value = Option<InstanceRange>> {
    proptest::option::of(
        (0u32..=MAX_INSTANCE, 0u32..=MAX_INSTANCE)
            .prop_filter_map("limits fit", |(low, high)| InstanceRange::new(low, high)),
    )
}

fn who_is() -> impl Strategy<Value = WhoIs> {
    instance_range().prop_map(|range| WhoIs { range })
}

fn i_am() -> impl Strategy<Value = IAm> {
    (object_identifier(), any::<u32>(), 0u32..8, any::<u16>()).prop_map(
        |(device, max_apdu_length_accepted, segmentation, vendor_id)| IAm {
            device,
            max_apdu_length_accepted,
            segmentation_supported: Segmentation::from_u32(segmentation),
            vendor_id,
        },
    )
}

fn who_has() -> impl Strategy<Value = WhoHas> {
    (
        instance_range(),
        prop_oneof![
            object_identifier().prop_map(WhoHasObject::Identifier),
            ".{0,16}".prop_map(WhoHasObject::Name),
        ],
    )
        .prop_map(|(range, object)| WhoHas { range, object })
}

fn i_have() -> impl Strategy<Value = IHave> {
    (object_identifier(), object_identifier(), ".{0,16}").prop_map(
        |(device, object, object_name)| IHave {
            device,
            object,
            object_name,
        },
    )
}

fn read_property_request() -> impl Strategy<Value = ReadPropertyRequest> {
    (
        object_identifier(),
        property(),
        proptest::option::of(any::<u32>()),
    )
        .prop_map(|(object, property, array_index)| ReadPropertyRequest {
            object,
            property,
            array_index,
        })
}

fn read_property_ack() -> impl Strategy<Value = ReadPropertyAck> {
    (read_property_request(), value()).prop_map(|(request, value)| ReadPropertyAck {
        object: request.object,
        property: request.property,
        array_index: request.array_index,
        value,
    })
}

fn write_property_request() -> impl Strategy<Value = WritePropertyRequest> {
    (
        read_property_request(),
        value(),
        proptest::option::of(1u8..=16),
    )
        .prop_map(|(target, value, priority)| WritePropertyRequest {
            object: target.object,
            property: target.property,
            array_index: target.array_index,
            value,
            priority,
        })
}

fn property_reference() -> impl Strategy<Value = PropertyReference> {
    (property(), proptest::option::of(any::<u32>())).prop_map(|(property, array_index)| {
        PropertyReference {
            property,
            array_index,
        }
    })
}

fn read_property_multiple_request() -> impl Strategy<Value = ReadPropertyMultipleRequest> {
    proptest::collection::vec(
        (
            object_identifier(),
            proptest::collection::vec(property_reference(), 0..5),
        )
            .prop_map(|(object, properties)| ReadAccessSpecification { object, properties }),
        1..5,
    )
    .prop_map(|specifications| ReadPropertyMultipleRequest { specifications })
}

fn property_read_result() -> impl Strategy<Value = PropertyReadResult> {
    (
        property_reference(),
        prop_oneof![
            value().prop_map(ReadResult::Value),
            service_error().prop_map(ReadResult::Error),
        ],
    )
        .prop_map(|(reference, result)| PropertyReadResult {
            property: reference.property,
            array_index: reference.array_index,
            result,
        })
}

fn read_property_multiple_ack() -> impl Strategy<Value = ReadPropertyMultipleAck> {
    proptest::collection::vec(
        (
            object_identifier(),
            proptest::collection::vec(property_read_result(), 0..4),
        )
            .prop_map(|(object, results)| ReadAccessResult { object, results }),
        1..4,
    )
    .prop_map(|results| ReadPropertyMultipleAck { results })
}

fn property_value() -> impl Strategy<Value = PropertyValue> {
    (
        property_reference(),
        value(),
        proptest::option::of(1u8..=16),
    )
        .prop_map(|(reference, value, priority)| PropertyValue {
            property: reference.property,
            array_index: reference.array_index,
            value,
            priority,
        })
}

fn write_property_multiple_request() -> impl Strategy<Value = WritePropertyMultipleRequest> {
    proptest::collection::vec(
        (
            object_identifier(),
            proptest::collection::vec(property_value(), 0..4),
        )
            .prop_map(|(object, properties)| WriteAccessSpecification { object, properties }),
        1..4,
    )
    .prop_map(|specifications| WritePropertyMultipleRequest { specifications })
}

fn write_property_multiple_error() -> impl Strategy<Value = WritePropertyMultipleError> {
    (service_error(), read_property_request()).prop_map(|(error, target)| {
        WritePropertyMultipleError {
            error,
            first_failed_write_attempt: ObjectPropertyReference {
                object: target.object,
                property: target.property,
                array_index: target.array_index,
            },
        }
    })
}

fn confirmed_request() -> impl Strategy<Value = ConfirmedRequest> {
    prop_oneof![
        read_property_request().prop_map(ConfirmedRequest::ReadProperty),
        read_property_multiple_request().prop_map(ConfirmedRequest::ReadPropertyMultiple),
        write_property_request().prop_map(ConfirmedRequest::WriteProperty),
        write_property_multiple_request().prop_map(ConfirmedRequest::WritePropertyMultiple),
    ]
}

fn unconfirmed_request() -> impl Strategy<Value = UnconfirmedRequest> {
    prop_oneof![
        who_is().prop_map(UnconfirmedRequest::WhoIs),
        i_am().prop_map(UnconfirmedRequest::IAm),
        who_has().prop_map(UnconfirmedRequest::WhoHas),
        i_have().prop_map(UnconfirmedRequest::IHave),
    ]
}

fn complex_ack_parameters() -> impl Strategy<Value = ComplexAckParameters> {
    prop_oneof![
        read_property_ack().prop_map(ComplexAckParameters::ReadProperty),
        read_property_multiple_ack().prop_map(ComplexAckParameters::ReadPropertyMultiple),
    ]
}

proptest! {
    #[test]
    fn confirmed_requests_round_trip(request in confirmed_request()) {
        let mut buf = Vec::new();
        request.encode(&mut buf);
        let decoded = ConfirmedRequest::decode(request.service_choice(), &mut Reader::new(&buf));
        prop_assert_eq!(decoded, Ok(request));
    }

    #[test]
    fn unconfirmed_requests_round_trip(request in unconfirmed_request()) {
        let mut buf = Vec::new();
        request.encode(&mut buf);
        let decoded = UnconfirmedRequest::decode(request.service_choice(), &mut Reader::new(&buf));
        prop_assert_eq!(decoded, Ok(request));
    }

    #[test]
    fn complex_acks_round_trip(ack in complex_ack_parameters()) {
        let mut buf = Vec::new();
        ack.encode(&mut buf);
        let decoded = ComplexAckParameters::decode(ack.service_choice(), &mut Reader::new(&buf));
        prop_assert_eq!(decoded, Ok(ack));
    }

    #[test]
    fn write_property_multiple_errors_round_trip(error in write_property_multiple_error()) {
        let mut buf = Vec::new();
        error.encode(&mut buf);
        let mut reader = Reader::new(&buf);
        prop_assert_eq!(WritePropertyMultipleError::decode(&mut reader), Ok(error));
        prop_assert!(reader.is_empty());
    }

    #[test]
    fn proper_prefixes_fail_unless_complete(request in confirmed_request()) {
        let mut buf = Vec::new();
        request.encode(&mut buf);
        for cut in 0..buf.len() {
            let result =
                ConfirmedRequest::decode(request.service_choice(), &mut Reader::new(&buf[..cut]));
            // A prefix may only decode when it is itself a complete, shorter request
            // (it stops before an OPTIONAL parameter or between list entries).
            if let Ok(shorter) = result {
                let mut again = Vec::new();
                shorter.encode(&mut again);
                prop_assert_eq!(&again[..], &buf[..cut]);
            }
        }
    }

    #[test]
    fn arbitrary_payloads_never_panic_and_re_encode_stably(
        choice in any::<u8>(),
        payload in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        if let Ok(request) = ConfirmedRequest::decode(
            ConfirmedServiceChoice::from_u32(choice.into()),
            &mut Reader::new(&payload),
        ) {
            let mut first = Vec::new();
            request.encode(&mut first);
            let again = ConfirmedRequest::decode(request.service_choice(), &mut Reader::new(&first));
            let mut second = Vec::new();
            prop_assert!(again.is_ok());
            if let Ok(again) = again {
                again.encode(&mut second);
            }
            prop_assert_eq!(first, second);
        }
        if let Ok(request) = UnconfirmedRequest::decode(
            UnconfirmedServiceChoice::from_u32(choice.into()),
            &mut Reader::new(&payload),
        ) {
            let mut first = Vec::new();
            request.encode(&mut first);
            let again = UnconfirmedRequest::decode(request.service_choice(), &mut Reader::new(&first));
            prop_assert_eq!(again, Ok(request));
        }
    }
}
