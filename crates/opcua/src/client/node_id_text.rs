//! The standard text form of a NodeId (OPC 10000-6 §5.3.1.10): `i=2258`, `ns=1;i=5000`,
//! `ns=2;s=Pump.Speed`, `g=09087E75-8E5E-499B-954F-F2A9603DB28A`, `b=0a0b` (hex, the same form
//! the `Display` impl writes). Parsing errors say at which character the text went wrong.

use std::str::FromStr;

use crate::encoding::{Guid, NodeId};

/// Longest NodeId text accepted (the string identifier included).
pub const MAX_NODE_ID_TEXT_LENGTH: usize = 4096;

/// Why a text is not a NodeId.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid NodeId at character {position}: {reason}")]
pub struct NodeIdParseError {
    /// Byte offset in the text where it went wrong.
    pub position: usize,
    /// What was expected there.
    pub reason: &'static str,
}

fn error(position: usize, reason: &'static str) -> NodeIdParseError {
    NodeIdParseError { position, reason }
}

/// Parses `XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX` (hex digits, either case).
fn parse_guid(text: &str, start: usize) -> Result<Guid, NodeIdParseError> {
    const GROUPS: [usize; 5] = [8, 4, 4, 4, 12];
    let mut digits = String::with_capacity(32);
    let mut offset = 0;
    for (index, group) in text.split('-').enumerate() {
        let expected = GROUPS
            .get(index)
            .ok_or_else(|| error(start + offset, "a Guid has five groups"))?;
        if group.len() != *expected || !group.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(error(
                start + offset,
                "Guid group of hex digits has the wrong length",
            ));
        }
        digits.push_str(group);
        offset += group.len() + 1;
    }
    if digits.len() != 32 {
        return Err(error(start + text.len(), "a Guid has five groups"));
    }
    let value = u128::from_str_radix(&digits, 16).map_err(|_| error(start, "invalid Guid"))?;
    Ok(Guid::from_u128(value))
}

fn parse_hex(text: &str, start: usize) -> Result<Vec<u8>, NodeIdParseError> {
    if !text.len().is_multiple_of(2) {
        return Err(error(
            start + text.len(),
            "opaque identifier needs an even number of hex digits",
        ));
    }
    (0..text.len())
        .step_by(2)
        .map(|at| {
            text.get(at..at + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or_else(|| error(start + at, "opaque identifier must be hex digits"))
        })
        .collect()
}

impl FromStr for NodeId {
    type Err = NodeIdParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text.len() > MAX_NODE_ID_TEXT_LENGTH {
            return Err(error(MAX_NODE_ID_TEXT_LENGTH, "text too long"));
        }
        let (namespace, rest, start) = match text.strip_prefix("ns=") {
            Some(after) => {
                let end = after
                    .find(';')
                    .ok_or_else(|| error(3, "`ns=<index>` must be followed by `;`"))?;
                let digits = after.get(..end).unwrap_or_default();
                let namespace = digits
                    .parse::<u16>()
                    .map_err(|_| error(3, "namespace index must be a number 0..=65535"))?;
                (namespace, after.get(end + 1..).unwrap_or_default(), 4 + end)
            }
            None => (0, text, 0),
        };
        let value = rest.get(2..).unwrap_or_default();
        let value_start = start + 2;
        match rest.get(..2) {
            Some("i=") => value
                .parse::<u32>()
                .map(|number| NodeId::numeric(namespace, number))
                .map_err(|_| {
                    error(
                        value_start,
                        "numeric identifier must be a number 0..=4294967295",
                    )
                }),
            Some("s=") => Ok(NodeId::string(namespace, value)),
            Some("g=") => parse_guid(value, value_start).map(|guid| NodeId::guid(namespace, guid)),
            Some("b=") => {
                parse_hex(value, value_start).map(|bytes| NodeId::opaque(namespace, bytes))
            }
            _ => Err(error(start, "expected `i=`, `s=`, `g=` or `b=`")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn standard_forms() {
        // OPC 10000-6 §5.3.1.10 examples.
        assert_eq!(
            "i=2258".parse::<NodeId>().unwrap(),
            NodeId::numeric(0, 2258)
        );
        assert_eq!(
            "ns=1;i=5000".parse::<NodeId>().unwrap(),
            NodeId::numeric(1, 5000)
        );
        assert_eq!(
            "ns=2;s=Name;with=signs".parse::<NodeId>().unwrap(),
            NodeId::string(2, "Name;with=signs")
        );
        assert_eq!(
            "g=09087e75-8e5e-499b-954f-f2a9603db28a"
                .parse::<NodeId>()
                .unwrap(),
            NodeId::guid(0, Guid::from_u128(0x09087E75_8E5E_499B_954F_F2A9603DB28A))
        );
        assert_eq!(
            "ns=3;b=0aff".parse::<NodeId>().unwrap(),
            NodeId::opaque(3, vec![0x0A, 0xFF])
        );
    }

    #[test]
    fn errors_say_where() {
        assert_eq!("x=1".parse::<NodeId>().unwrap_err().position, 0);
        assert_eq!("ns=1;i=abc".parse::<NodeId>().unwrap_err().position, 7);
        assert_eq!("ns=70000;i=1".parse::<NodeId>().unwrap_err().position, 3);
        assert_eq!("ns=1".parse::<NodeId>().unwrap_err().position, 3);
        assert_eq!("b=abc".parse::<NodeId>().unwrap_err().position, 5);
        assert_eq!("g=0908-1".parse::<NodeId>().unwrap_err().position, 2);
        let long = format!("s={}", "x".repeat(MAX_NODE_ID_TEXT_LENGTH));
        assert_eq!(long.parse::<NodeId>().unwrap_err().reason, "text too long");
    }

    proptest! {
        #[test]
        fn display_round_trips(namespace: u16, number: u32, text in "[a-zA-Z0-9;=. ]{0,20}", guid: u128, bytes: Vec<u8>) {
            for node in [
                NodeId::numeric(namespace, number),
                NodeId::string(namespace, &text),
                NodeId::guid(namespace, Guid::from_u128(guid)),
                NodeId::opaque(namespace, bytes.clone()),
            ] {
                prop_assert_eq!(node.to_string().parse::<NodeId>().unwrap(), node);
            }
        }
    }
}
