//! Project Haystack filters: the syntax tree ([`Filter`]), the parser ([`parse`]) and
//! evaluation against dicts ([`Filter::matches`] with a [`RefResolver`] for `->` paths).
//!
//! ```
//! use buildwire_haystack::filter::{parse, NoRefs};
//! use buildwire_haystack::{Dict, Value};
//! let mut point = Dict::new();
//! point.insert_marker("point")?;
//! point.insert("curVal", Value::number_with_unit(72.0, "°F"))?;
//! assert!(parse("point and curVal > 70°F")?.matches(&point, &NoRefs));
//! assert!(!parse("curVal > 70")?.matches(&point, &NoRefs)); // units differ
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod ast;
mod eval;
mod parser;

pub use ast::{CmpOp, Filter, Path};
pub use eval::{MAX_DEREFS, NoRefs, RefResolver, compare_values, instant_of, values_equal};
pub use parser::{
    FilterError, FilterErrorKind, MAX_DEPTH, MAX_FILTER_LEN, MAX_PATH_SEGMENTS, MAX_TERMS, parse,
};
