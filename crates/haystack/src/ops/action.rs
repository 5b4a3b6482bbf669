//! [`ActionRegistry`]: what `invokeAction` runs. The spec leaves the actions to the server
//! ("a server local matter"), so the application registers them: [`ActionTable`] maps action
//! names to functions of the target entity and the argument dict.

use std::collections::HashMap;
use std::sync::Arc;

use crate::value::{Dict, Grid};

use super::OpError;

/// Why an action failed: its message becomes the error grid's `dis` (after "action `NAME`
/// failed: ") and `errTrace`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ActionError {
    /// What went wrong, for the caller.
    pub message: String,
}

impl ActionError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl From<&str> for ActionError {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

impl From<String> for ActionError {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

/// An action: the target entity and the arguments in, a result grid out (or an
/// [`ActionError`], which becomes an error grid).
pub type ActionFn = Arc<dyn Fn(&Dict, &Dict) -> Result<Grid, ActionError> + Send + Sync>;

/// Looks actions up by name.
pub trait ActionRegistry: Send + Sync {
    /// Runs `action` on `target` with `args`; `None` when no such action exists.
    fn invoke(&self, target: &Dict, action: &str, args: &Dict)
    -> Option<Result<Grid, ActionError>>;
}

/// No actions: every `invokeAction` is an error grid.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoActions;

impl ActionRegistry for NoActions {
    fn invoke(&self, _: &Dict, _: &str, _: &Dict) -> Option<Result<Grid, ActionError>> {
        None
    }
}

/// Actions registered by name.
#[derive(Clone, Default)]
pub struct ActionTable {
    actions: HashMap<String, ActionFn>,
}

impl std::fmt::Debug for ActionTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&String> = self.actions.keys().collect();
        names.sort();
        f.debug_struct("ActionTable")
            .field("actions", &names)
            .finish()
    }
}

impl ActionTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `action` (replacing one of the same name).
    pub fn register(
        mut self,
        name: &str,
        action: impl Fn(&Dict, &Dict) -> Result<Grid, ActionError> + Send + Sync + 'static,
    ) -> Self {
        self.actions.insert(name.to_owned(), Arc::new(action));
        self
    }
}

impl ActionRegistry for ActionTable {
    fn invoke(
        &self,
        target: &Dict,
        action: &str,
        args: &Dict,
    ) -> Option<Result<Grid, ActionError>> {
        self.actions.get(action).map(|f| f(target, args))
    }
}

/// Runs an action through a registry, turning "no such action" and failures into errors.
pub(crate) fn run(
    registry: &dyn ActionRegistry,
    target: &Dict,
    action: &str,
    args: &Dict,
) -> Result<Grid, OpError> {
    match registry.invoke(target, action, args) {
        None => Err(OpError::new(format!("unknown action `{action}`"))),
        Some(Err(error)) => Err(OpError::with_trace(
            format!("action `{action}` failed: {error}"),
            error.message,
        )),
        Some(Ok(grid)) => Ok(grid),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_runs_registered_actions_only() {
        let table = ActionTable::new()
            .register("ok", |_, _| Ok(Grid::default()))
            .register("fail", |_, _| Err("no power".into()));
        let d = Dict::new();
        assert!(run(&table, &d, "ok", &d).is_ok());
        assert_eq!(
            run(&table, &d, "missing", &d).unwrap_err().dis,
            "unknown action `missing`"
        );
        assert!(
            run(&table, &d, "fail", &d)
                .unwrap_err()
                .dis
                .contains("no power")
        );
        assert!(run(&NoActions, &d, "ok", &d).is_err());
        assert!(format!("{table:?}").contains("\"fail\", \"ok\""));
    }
}
