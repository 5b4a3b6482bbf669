//! Decisions behind the client's robust reads, sans-IO: when a whole-array read must be
//! redone element by element, when a device does not offer ReadPropertyMultiple, how many
//! reads go in one ReadPropertyMultiple, and which answer belongs to which read.
//!
//! - A read of a whole property that fails because the answer would need segmentation
//!   the device (or this client) cannot do — an Abort `segmentation-not-supported` or
//!   `buffer-overflow`, or the same as an Error code — is redone as index 0 (the length)
//!   and then every element, one ReadProperty each.
//! - `read_many` groups reads into ReadPropertyMultiple requests of at most
//!   [`MAX_READS_PER_REQUEST`] references and [`MAX_REQUEST_BYTES`] of parameters (or the
//!   device's max-APDU, when smaller), references of one object kept together; a request
//!   whose answer is too long is split in two and retried; a device that rejects the
//!   service (`unrecognized-service`, or an Error of class `services` saying it is not
//!   offered) is read with ReadProperty from then on.

use crate::apdu::ConfirmedServiceChoice;
use crate::encoding::{Element, ObjectPropertyReference};
use crate::enums::{AbortReason, ErrorClass, ErrorCode, RejectReason};
use crate::services::{
    PropertyReference, ReadAccessResult, ReadAccessSpecification, ReadPropertyMultipleRequest,
    ReadResult,
};

use super::client::ClientError;

/// Most property references in one ReadPropertyMultiple of `read_many`.
pub const MAX_READS_PER_REQUEST: usize = 64;
/// Most bytes of service parameters in one ReadPropertyMultiple of `read_many`.
pub const MAX_REQUEST_BYTES: usize = 1400;
/// Most elements read one by one when a whole array cannot be read at once.
pub const MAX_FALLBACK_ELEMENTS: u32 = 100_000;

/// True when `error` says the answer needed segmentation that the device or this client
/// cannot do (the read should be retried in smaller pieces).
pub fn is_segmentation_failure(error: &ClientError) -> bool {
    match error {
        ClientError::Abort { reason, .. } => matches!(
            reason,
            AbortReason::SegmentationNotSupported | AbortReason::BufferOverflow
        ),
        ClientError::Error { error, .. } => matches!(
            error.code,
            ErrorCode::AbortSegmentationNotSupported | ErrorCode::AbortBufferOverflow
        ),
        ClientError::Reject(RejectReason::BufferOverflow) => true,
        _ => false,
    }
}

/// True when `error` says the device does not offer ReadPropertyMultiple.
pub fn is_unsupported_service(error: &ClientError) -> bool {
    match error {
        ClientError::Reject(RejectReason::UnrecognizedService) => true,
        ClientError::Error { error, .. } => {
            error.class == ErrorClass::Services
                && matches!(
                    error.code,
                    ErrorCode::ServiceRequestDenied | ErrorCode::OptionalFunctionalityNotSupported
                )
        }
        _ => false,
    }
}

/// The ReadPropertyMultiple request of `references` (consecutive references of one
/// object share an access specification).
pub fn rpm_request(references: &[ObjectPropertyReference]) -> ReadPropertyMultipleRequest {
    let mut specifications: Vec<ReadAccessSpecification> = Vec::new();
    for reference in references {
        let property = PropertyReference {
            property: reference.property,
            array_index: reference.array_index,
        };
        match specifications.last_mut() {
            Some(last) if last.object == reference.object => last.properties.push(property),
            _ => specifications.push(ReadAccessSpecification {
                object: reference.object,
                properties: vec![property],
            }),
        }
    }
    ReadPropertyMultipleRequest { specifications }
}

/// Splits `count` references into batches (index ranges) of at most `max_reads` each and
/// at most `max_bytes` of request parameters.
pub fn batches(
    references: &[ObjectPropertyReference],
    max_reads: usize,
    max_bytes: usize,
) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < references.len() {
        let mut end = start + 1;
        while end < references.len() && end - start < max_reads.max(1) {
            let mut bytes = Vec::new();
            rpm_request(&references[start..=end]).encode(&mut bytes);
            if bytes.len() > max_bytes {
                break;
            }
            end += 1;
        }
        out.push(start..end);
        start = end;
    }
    out
}

/// The result of each reference from a ReadPropertyMultiple answer. Results are matched
/// in order (the answer lists them as asked), checked by object, property and index; a
/// reference without a matching result gets a `BadReply` error.
pub fn spread_results(
    references: &[ObjectPropertyReference],
    results: &[ReadAccessResult],
) -> Vec<Result<Vec<Element>, ClientError>> {
    let flat: Vec<(ObjectPropertyReference, &ReadResult)> = results
        .iter()
        .flat_map(|object| {
            object.results.iter().map(move |r| {
                (
                    ObjectPropertyReference {
                        object: object.object,
                        property: r.property,
                        array_index: r.array_index,
                    },
                    &r.result,
                )
            })
        })
        .collect();
    references
        .iter()
        .enumerate()
        .map(|(i, reference)| {
            let found = match flat.get(i) {
                Some((r, result)) if r == reference => Some(*result),
                _ => flat
                    .iter()
                    .find(|(r, _)| r == reference)
                    .map(|(_, result)| *result),
            };
            match found {
                Some(ReadResult::Value(value)) => Ok(value.clone()),
                Some(ReadResult::Error(error)) => Err(ClientError::Error {
                    service: ConfirmedServiceChoice::ReadPropertyMultiple,
                    error: *error,
                }),
                None => Err(ClientError::BadReply(format!(
                    "no result for {} {} in the ReadPropertyMultiple answer",
                    reference.object, reference.property
                ))),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apdu::BacnetError;
    use crate::encoding::{ApplicationValue, ObjectIdentifier};
    use crate::enums::{ObjectType, PropertyIdentifier};
    use crate::services::PropertyReadResult;

    fn reference(instance: u32, property: PropertyIdentifier) -> ObjectPropertyReference {
        ObjectPropertyReference {
            object: ObjectIdentifier::new(ObjectType::AnalogValue, instance),
            property,
            array_index: None,
        }
    }

    #[test]
    fn classifies_errors() {
        assert!(is_segmentation_failure(&ClientError::Abort {
            reason: AbortReason::SegmentationNotSupported,
            by_server: true
        }));
        assert!(is_segmentation_failure(&ClientError::Error {
            service: ConfirmedServiceChoice::ReadProperty,
            error: BacnetError {
                class: ErrorClass::Services,
                code: ErrorCode::AbortSegmentationNotSupported
            }
        }));
        assert!(!is_segmentation_failure(&ClientError::Timeout));
        assert!(is_unsupported_service(&ClientError::Reject(
            RejectReason::UnrecognizedService
        )));
        assert!(!is_unsupported_service(&ClientError::Reject(
            RejectReason::InvalidTag
        )));
    }

    #[test]
    fn batches_keep_objects_together_and_respect_limits() {
        let refs: Vec<_> = (1..=10)
            .flat_map(|i| {
                [
                    reference(i, PropertyIdentifier::PresentValue),
                    reference(i, PropertyIdentifier::StatusFlags),
                ]
            })
            .collect();
        let request = rpm_request(&refs[..4]);
        assert_eq!(request.specifications.len(), 2);
        assert_eq!(request.specifications[0].properties.len(), 2);
        assert_eq!(batches(&refs, 8, 1400), vec![0..8, 8..16, 16..20]);
        // Each object's specification is 11 bytes: a 30-byte budget takes two objects.
        let small = batches(&refs, 64, 30);
        assert_eq!(small, vec![0..4, 4..8, 8..12, 12..16, 16..20]);
        for range in small {
            let mut bytes = Vec::new();
            rpm_request(&refs[range]).encode(&mut bytes);
            assert!(bytes.len() <= 30, "{}", bytes.len());
        }
    }

    #[test]
    fn results_are_matched_to_references() {
        let refs = [
            reference(1, PropertyIdentifier::PresentValue),
            reference(2, PropertyIdentifier::PresentValue),
        ];
        let results = vec![
            ReadAccessResult {
                object: refs[0].object,
                results: vec![PropertyReadResult {
                    property: PropertyIdentifier::PresentValue,
                    array_index: None,
                    result: ReadResult::Value(vec![Element::Application(ApplicationValue::Real(
                        1.0,
                    ))]),
                }],
            },
            ReadAccessResult {
                object: refs[1].object,
                results: vec![PropertyReadResult {
                    property: PropertyIdentifier::PresentValue,
                    array_index: None,
                    result: ReadResult::Error(BacnetError {
                        class: ErrorClass::Object,
                        code: ErrorCode::UnknownObject,
                    }),
                }],
            },
        ];
        let spread = spread_results(&refs, &results);
        assert_eq!(
            spread[0],
            Ok(vec![Element::Application(ApplicationValue::Real(1.0))])
        );
        assert!(matches!(
            spread[1],
            Err(ClientError::Error { error, .. }) if error.code == ErrorCode::UnknownObject
        ));
        assert!(matches!(
            spread_results(&refs, &results[..1])[1],
            Err(ClientError::BadReply(_))
        ));
    }
}
