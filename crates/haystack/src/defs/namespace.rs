//! A checked set of defs and the taxonomy queries over it: supertypes, inheritance,
//! subtypes, choices, `tagOn` and libraries.

use std::collections::{HashMap, HashSet};

use super::def::Def;
use crate::value::{Dict, Value};

/// Most defs a namespace may hold.
pub const MAX_DEFS: usize = 100_000;

/// Why a set of def records does not form a namespace.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NamespaceError {
    /// Record `index` (0-based) has no `def` symbol.
    #[error("record {index} has no `def` symbol")]
    MissingDef {
        /// Position of the record.
        index: usize,
    },
    /// Two records declare the same def.
    #[error("def `{0}` is declared twice")]
    Duplicate(String),
    /// A def names a supertype that is not declared.
    #[error("def `{def}` has undeclared supertype `{supertype}`")]
    UnknownSupertype {
        /// The def.
        def: String,
        /// Its missing supertype.
        supertype: String,
    },
    /// The `is` relation loops back through this def.
    #[error("def `{0}` is its own supertype through `is`")]
    Cycle(String),
    /// More than [`MAX_DEFS`] records.
    #[error("more than {MAX_DEFS} defs")]
    TooMany,
}

/// Defs indexed by name, with the `is` relation checked to be acyclic and closed.
#[derive(Debug, Clone, Default)]
pub struct Namespace {
    defs: HashMap<String, Def>,
    /// Names in sorted order, for deterministic listings.
    order: Vec<String>,
    subtypes: HashMap<String, Vec<String>>,
}

impl Namespace {
    /// Builds a namespace from def records (each with a `def` symbol tag), checking that
    /// names are unique, every supertype is declared and `is` has no cycle.
    pub fn from_records(records: &[Dict]) -> Result<Self, NamespaceError> {
        if records.len() > MAX_DEFS {
            return Err(NamespaceError::TooMany);
        }
        let mut defs = HashMap::with_capacity(records.len());
        for (index, record) in records.iter().enumerate() {
            let Some(Value::Symbol(name)) = record.get("def") else {
                return Err(NamespaceError::MissingDef { index });
            };
            if defs.contains_key(name) {
                return Err(NamespaceError::Duplicate(name.clone()));
            }
            defs.insert(name.clone(), Def::new(name.clone(), record.clone()));
        }
        let mut order: Vec<String> = defs.keys().cloned().collect();
        order.sort();
        let mut subtypes: HashMap<String, Vec<String>> = HashMap::new();
        for name in &order {
            let Some(def) = defs.get(name) else { continue };
            for supertype in def.is() {
                if !defs.contains_key(supertype) {
                    return Err(NamespaceError::UnknownSupertype {
                        def: name.clone(),
                        supertype: supertype.to_owned(),
                    });
                }
                subtypes
                    .entry(supertype.to_owned())
                    .or_default()
                    .push(name.clone());
            }
        }
        check_acyclic(&defs, &order, &subtypes)?;
        Ok(Namespace {
            defs,
            order,
            subtypes,
        })
    }

    /// Number of defs.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether there is no def.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Every def, sorted by name.
    pub fn defs(&self) -> impl Iterator<Item = &Def> {
        self.order.iter().filter_map(|n| self.defs.get(n))
    }

    /// The def with this name (`"ahu"`, `"elec-meter"`, `"lib:ph"`).
    pub fn def(&self, name: &str) -> Option<&Def> {
        self.defs.get(name)
    }

    /// Direct supertypes (`is`) of a def; `None` for an unknown name.
    pub fn supertypes(&self, name: &str) -> Option<Vec<&str>> {
        self.def(name).map(Def::is)
    }

    /// The def followed by all its supertypes, transitively, each once (depth first,
    /// in `is` order); `None` for an unknown name.
    pub fn inheritance(&self, name: &str) -> Option<Vec<&str>> {
        let def = self.defs.get(name)?;
        let mut seen: HashSet<&str> = HashSet::new();
        let mut out = Vec::new();
        let mut stack = vec![def.name()];
        while let Some(current) = stack.pop() {
            if !seen.insert(current) {
                continue;
            }
            out.push(current);
            if let Some(d) = self.defs.get(current) {
                stack.extend(d.is().into_iter().rev());
            }
        }
        Some(out)
    }

    /// Whether `name` is `ancestor` or inherits from it.
    pub fn fits_def(&self, name: &str, ancestor: &str) -> bool {
        self.inheritance(name)
            .is_some_and(|chain| chain.contains(&ancestor))
    }

    /// Direct subtypes of a def, sorted; `None` for an unknown name.
    pub fn subtypes(&self, name: &str) -> Option<Vec<&str>> {
        self.def(name)?;
        Some(
            self.subtypes
                .get(name)
                .map(|v| v.iter().map(String::as_str).collect())
                .unwrap_or_default(),
        )
    }

    /// All subtypes of a def, transitively, each once, sorted; `None` for an unknown name.
    pub fn all_subtypes(&self, name: &str) -> Option<Vec<&str>> {
        self.def(name)?;
        let mut seen: HashSet<&str> = HashSet::new();
        let mut stack: Vec<&str> = vec![name];
        while let Some(current) = stack.pop() {
            for sub in self.subtypes.get(current).into_iter().flatten() {
                if seen.insert(sub) {
                    stack.push(sub);
                }
            }
        }
        let mut out: Vec<&str> = seen.into_iter().collect();
        out.sort_unstable();
        Some(out)
    }

    /// The options of a choice def (one inheriting `choice`): all subtypes, transitively
    /// and sorted, of the def named by its `of` tag (`pipeFluid` offers the subtypes of
    /// `fluid`), or of the choice itself when it has no `of` (`ductSection` offers
    /// `discharge`, `return`, ...). `None` when `name` is unknown or not a choice.
    pub fn choices_of(&self, name: &str) -> Option<Vec<&str>> {
        if name == "choice" || !self.fits_def(name, "choice") {
            return None;
        }
        let target = self.def(name)?.of().unwrap_or(name);
        self.all_subtypes(target)
    }

    /// The entity defs a tag is typically used on (`tagOn`); `None` for an unknown name.
    pub fn tag_on(&self, name: &str) -> Option<Vec<&str>> {
        self.def(name).map(Def::tag_on)
    }

    /// The tags whose `tagOn` names `entity_def` or one of its supertypes, sorted.
    pub fn tags_on(&self, entity_def: &str) -> Vec<&str> {
        let chain = self.inheritance(entity_def).unwrap_or_default();
        self.defs()
            .filter(|d| d.tag_on().iter().any(|t| chain.contains(t)))
            .map(Def::name)
            .collect()
    }

    /// The library defs (`lib:ph`, `lib:phIoT`, ...), sorted.
    pub fn libs(&self) -> Vec<&str> {
        self.defs()
            .filter(|d| d.name() != "lib" && d.is().contains(&"lib"))
            .map(Def::name)
            .collect()
    }

    /// The defs declared by one library, sorted.
    pub fn defs_of_lib<'s>(&'s self, lib: &'s str) -> impl Iterator<Item = &'s Def> {
        self.defs().filter(move |d| d.lib() == Some(lib))
    }

    /// Whether `name` is a declared def inheriting `marker`.
    pub fn is_marker(&self, name: &str) -> bool {
        self.fits_def(name, "marker")
    }
}

/// Kahn's algorithm over `is` edges: a def is released once all its subtypes are; any
/// def left over sits on a cycle (iterative, so deep taxonomies cannot overflow the stack).
fn check_acyclic(
    defs: &HashMap<String, Def>,
    order: &[String],
    subtypes: &HashMap<String, Vec<String>>,
) -> Result<(), NamespaceError> {
    let mut pending: HashMap<&str, usize> = order
        .iter()
        .map(|n| (n.as_str(), subtypes.get(n).map_or(0, Vec::len)))
        .collect();
    let mut ready: Vec<&str> = order
        .iter()
        .map(String::as_str)
        .filter(|n| pending.get(n) == Some(&0))
        .collect();
    let mut released = 0;
    while let Some(name) = ready.pop() {
        released += 1;
        let Some(def) = defs.get(name) else { continue };
        for supertype in def.is() {
            if let Some(count) = pending.get_mut(supertype) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    ready.push(supertype);
                }
            }
        }
    }
    if released == order.len() {
        return Ok(());
    }
    let stuck = order
        .iter()
        .find(|n| pending.get(n.as_str()).is_some_and(|c| *c > 0))
        .cloned()
        .unwrap_or_default();
    Err(NamespaceError::Cycle(stuck))
}
