//! Browse, BrowseNext and TranslateBrowsePathsToNodeIds (OPC 10000-4 §5.8) over the
//! [`AddressSpace`], with reference-type subtype matching, node class and result masks, and
//! continuation points held by the session (a bounded number per session).

use super::address_space::{AddressSpace, Node, Reference};
use super::session::{BrowseContinuation, Session};
use crate::encoding::{ByteString, ExpandedNodeId, LocalizedText, NodeId, QualifiedName};
use crate::services::view::browse_result_mask as mask;
use crate::services::{
    BrowseDescription, BrowseDirection, BrowsePath, BrowsePathResult, BrowsePathTarget,
    BrowseResult, NodeClass, ReferenceDescription, RelativePathElement,
};
use crate::types::StatusCode;

/// Most nodes a browse path may reach at each step (bounds the work of one path).
pub const MAX_PATH_TARGETS: usize = 1_000;
/// Most elements in one relative path.
pub const MAX_PATH_ELEMENTS: usize = 64;

/// NodeClass as a mask bit.
fn class_bit(class: NodeClass) -> u32 {
    class.to_i32().unsigned_abs()
}

fn reference_matches(
    space: &AddressSpace,
    reference: &Reference,
    wanted: &NodeId,
    include_subtypes: bool,
) -> bool {
    wanted.is_null()
        || reference.reference_type == *wanted
        || (include_subtypes && space.is_subtype_of(&reference.reference_type, wanted))
}

fn describe(reference: &Reference, target: &Node, result_mask: u32) -> ReferenceDescription {
    let has = |bit: u32| result_mask & bit != 0;
    let type_definition = match target.node_class() {
        NodeClass::Object | NodeClass::Variable if has(mask::TYPE_DEFINITION) => target
            .type_definition()
            .map(|t| ExpandedNodeId::from(t.clone()))
            .unwrap_or_default(),
        _ => ExpandedNodeId::default(),
    };
    ReferenceDescription {
        reference_type_id: if has(mask::REFERENCE_TYPE_ID) {
            reference.reference_type.clone()
        } else {
            NodeId::default()
        },
        is_forward: has(mask::IS_FORWARD) && reference.is_forward,
        node_id: ExpandedNodeId::from(target.node_id.clone()),
        browse_name: if has(mask::BROWSE_NAME) {
            target.browse_name.clone()
        } else {
            QualifiedName::default()
        },
        display_name: if has(mask::DISPLAY_NAME) {
            target.display_name.clone()
        } else {
            LocalizedText::default()
        },
        node_class: if has(mask::NODE_CLASS) {
            target.node_class()
        } else {
            NodeClass::Unspecified
        },
        type_definition,
    }
}

/// Every reference of one BrowseDescription, or the status that fails it.
pub fn browse_references(
    space: &AddressSpace,
    description: &BrowseDescription,
) -> Result<Vec<ReferenceDescription>, StatusCode> {
    let (forward, inverse) = match description.browse_direction {
        BrowseDirection::Forward => (true, false),
        BrowseDirection::Inverse => (false, true),
        BrowseDirection::Both => (true, true),
        _ => return Err(StatusCode::BAD_BROWSE_DIRECTION_INVALID),
    };
    let wanted = &description.reference_type_id;
    if !wanted.is_null() && !space.is_reference_type(wanted) {
        return Err(StatusCode::BAD_REFERENCE_TYPE_ID_INVALID);
    }
    let node = space
        .node(&description.node_id)
        .ok_or(StatusCode::BAD_NODE_ID_UNKNOWN)?;
    let mut found = Vec::new();
    for reference in &node.references {
        let direction_ok = if reference.is_forward {
            forward
        } else {
            inverse
        };
        if !direction_ok
            || !reference_matches(space, reference, wanted, description.include_subtypes)
        {
            continue;
        }
        let Some(target) = space.node(&reference.target) else {
            continue;
        };
        let class_mask = description.node_class_mask;
        if class_mask != 0 && class_mask & class_bit(target.node_class()) == 0 {
            continue;
        }
        found.push(describe(reference, target, description.result_mask));
    }
    Ok(found)
}

/// Returns up to `max` references and parks the rest in a new continuation point of
/// `session` (Bad_NoContinuationPoints when the session holds `max_points` already).
pub fn page_result(
    session: &mut Session,
    mut references: Vec<ReferenceDescription>,
    max: usize,
    max_points: usize,
) -> BrowseResult {
    let max = max.max(1);
    if references.len() <= max {
        return BrowseResult {
            status_code: StatusCode::GOOD,
            continuation_point: ByteString::NULL,
            references,
        };
    }
    if session.continuation_points.len() >= max_points {
        return BrowseResult {
            status_code: StatusCode::BAD_NO_CONTINUATION_POINTS,
            continuation_point: ByteString::NULL,
            references: Vec::new(),
        };
    }
    let remaining = references.split_off(max);
    let id = session.next_continuation_id.to_le_bytes().to_vec();
    session.next_continuation_id = session.next_continuation_id.wrapping_add(1);
    session.continuation_points.insert(
        id.clone(),
        BrowseContinuation {
            remaining,
            max_per_call: max,
        },
    );
    BrowseResult {
        status_code: StatusCode::GOOD,
        continuation_point: ByteString::from(id),
        references,
    }
}

/// BrowseNext for one continuation point: the next page, or just the release.
pub fn browse_next_one(
    session: &mut Session,
    point: &ByteString,
    release: bool,
    max_points: usize,
) -> BrowseResult {
    let key = point.as_bytes().unwrap_or_default().to_vec();
    let Some(continuation) = session.continuation_points.remove(&key) else {
        return BrowseResult {
            status_code: StatusCode::BAD_CONTINUATION_POINT_INVALID,
            ..BrowseResult::default()
        };
    };
    if release {
        return BrowseResult::default();
    }
    page_result(
        session,
        continuation.remaining,
        continuation.max_per_call,
        max_points,
    )
}

fn follow_step(space: &AddressSpace, from: &[NodeId], step: &RelativePathElement) -> Vec<NodeId> {
    let mut next = Vec::new();
    for source in from {
        let Some(node) = space.node(source) else {
            continue;
        };
        for reference in &node.references {
            if reference.is_forward == step.is_inverse
                || !reference_matches(
                    space,
                    reference,
                    &step.reference_type_id,
                    step.include_subtypes,
                )
            {
                continue;
            }
            let name_ok = space
                .node(&reference.target)
                .is_some_and(|target| target.browse_name == step.target_name);
            if name_ok && !next.contains(&reference.target) && next.len() < MAX_PATH_TARGETS {
                next.push(reference.target.clone());
            }
        }
    }
    next
}

/// Resolves one browse path (OPC 10000-4 §5.8.4).
pub fn translate_path(space: &AddressSpace, path: &BrowsePath) -> BrowsePathResult {
    let fail = |status_code| BrowsePathResult {
        status_code,
        targets: Vec::new(),
    };
    if space.node(&path.starting_node).is_none() {
        return fail(StatusCode::BAD_NODE_ID_UNKNOWN);
    }
    let elements = &path.relative_path.elements;
    if elements.is_empty() {
        return fail(StatusCode::BAD_NOTHING_TO_DO);
    }
    if elements.len() > MAX_PATH_ELEMENTS {
        return fail(StatusCode::BAD_TOO_MANY_OPERATIONS);
    }
    let mut current = vec![path.starting_node.clone()];
    for element in elements {
        if element.target_name.name.as_str().is_none_or(str::is_empty) {
            return fail(StatusCode::BAD_BROWSE_NAME_INVALID);
        }
        let wanted = &element.reference_type_id;
        if !wanted.is_null() && !space.is_reference_type(wanted) {
            return fail(StatusCode::BAD_REFERENCE_TYPE_ID_INVALID);
        }
        current = follow_step(space, &current, element);
        if current.is_empty() {
            return fail(StatusCode::BAD_NO_MATCH);
        }
    }
    BrowsePathResult {
        status_code: StatusCode::GOOD,
        targets: current
            .into_iter()
            .map(|node| BrowsePathTarget {
                target_id: ExpandedNodeId::from(node),
                remaining_path_index: u32::MAX,
            })
            .collect(),
    }
}
