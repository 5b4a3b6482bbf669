//! The filter syntax tree ([`Filter`], [`Path`], [`CmpOp`]) and its canonical text form.
//!
//! `Display` prints the canonical filter text: single spaces around operators and
//! keywords, parentheses only where the tree needs them, so that
//! `parse(&filter.to_string()) == Ok(filter)`.

use std::fmt;

use crate::codec::zinc::write_value;
use crate::value::Value;

/// A tag path: `name` or `name->name->...` (the arrow dereferences a Ref or a nested Dict).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Path(pub Vec<String>);

impl Path {
    /// A one-segment path.
    pub fn tag(name: impl Into<String>) -> Self {
        Path(vec![name.into()])
    }

    /// The segments of the path.
    pub fn segments(&self) -> &[String] {
        &self.0
    }

    /// The tag name when the path has exactly one segment (no `->`).
    pub fn single(&self) -> Option<&str> {
        match self.0.as_slice() {
            [name] => Some(name),
            _ => None,
        }
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, name) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("->")?;
            }
            f.write_str(name)?;
        }
        Ok(())
    }
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// All operators, in the order the parser tries them (two-character ones first).
    pub const ALL: [CmpOp; 6] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Le,
        CmpOp::Ge,
        CmpOp::Lt,
        CmpOp::Gt,
    ];

    /// The operator's symbol, e.g. `<=`.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

impl fmt::Display for CmpOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// A parsed Haystack filter.
///
/// `And` and `Or` hold two or more operands in source order; an explicit parenthesised
/// group is kept as its own node, so printing reproduces the same tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// `path`: the path resolves to a value.
    Has(Path),
    /// `not path`: the path does not resolve to a value.
    Missing(Path),
    /// `path op value`.
    Cmp {
        /// The left-hand path.
        path: Path,
        /// The operator.
        op: CmpOp,
        /// The literal: Bool, Ref, Str, Uri, Number, Date, Time, DateTime or Symbol.
        value: Value,
    },
    /// `a and b and ...`
    And(Vec<Filter>),
    /// `a or b or ...`
    Or(Vec<Filter>),
}

impl Filter {
    /// Number of leaf terms (has, missing, comparisons) in the tree.
    pub fn term_count(&self) -> usize {
        match self {
            Filter::Has(_) | Filter::Missing(_) | Filter::Cmp { .. } => 1,
            Filter::And(items) | Filter::Or(items) => items.iter().map(Filter::term_count).sum(),
        }
    }
}

/// Writes a filter literal: Zinc text, except booleans (`true`/`false`) and refs
/// (the id only; display names play no part in filters).
pub(crate) fn write_literal(value: &Value, out: &mut String) {
    match value {
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Ref(r) => {
            out.push('@');
            out.push_str(&r.id);
        }
        other => write_value(other, out),
    }
}

fn write_operand(filter: &Filter, parent_is_and: bool, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    // Inside `and`, any nested boolean node needs parentheses; inside `or`, only a
    // nested `or` does (`and` binds tighter).
    let needs_parens = match filter {
        Filter::And(_) => parent_is_and,
        Filter::Or(_) => true,
        _ => false,
    };
    if needs_parens {
        write!(f, "({filter})")
    } else {
        write!(f, "{filter}")
    }
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Filter::Has(path) => write!(f, "{path}"),
            Filter::Missing(path) => write!(f, "not {path}"),
            Filter::Cmp { path, op, value } => {
                let mut literal = String::new();
                write_literal(value, &mut literal);
                write!(f, "{path} {op} {literal}")
            }
            Filter::And(items) | Filter::Or(items) => {
                let is_and = matches!(self, Filter::And(_));
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(if is_and { " and " } else { " or " })?;
                    }
                    write_operand(item, is_and, f)?;
                }
                Ok(())
            }
        }
    }
}
