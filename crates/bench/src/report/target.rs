//! One target of a run that measures several in turn (ours, a peer's, the limit).

use serde::Serialize;

/// A target's outcome, or why it could not be measured; serialized as `{target, outcome}`
/// or `{target, error}`.
#[derive(Debug, Serialize)]
pub struct TargetResult<T> {
    /// The target's name.
    pub target: String,
    /// What was measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<T>,
    /// Why it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl<T> TargetResult<T> {
    /// The result of measuring `target`.
    pub fn new<E: std::fmt::Display>(target: String, result: Result<T, E>) -> Self {
        let (outcome, error) = match result {
            Ok(outcome) => (Some(outcome), None),
            Err(error) => (None, Some(error.to_string())),
        };
        Self {
            target,
            outcome,
            error,
        }
    }
}
