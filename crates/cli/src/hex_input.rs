//! Bytes given on the command line as hex (or `-` for standard input), as people paste them
//! from captures: with spaces, colons, dashes or `0x` prefixes.

use std::io::Read;

/// The bytes of a hex argument; `-` reads the hex text from standard input.
pub fn read_hex_argument(argument: &str) -> Result<Vec<u8>, String> {
    if argument == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        parse_hex(&text)
    } else {
        parse_hex(argument)
    }
}

/// Reads hex bytes, ignoring whitespace, `:`, `-` separators and `0x` prefixes.
pub fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    let digits: String = text
        .split_whitespace()
        .flat_map(|word| word.split([':', '-', ',']))
        .map(|w| w.trim_start_matches("0x").trim_start_matches("0X"))
        .collect();
    if !digits.len().is_multiple_of(2) {
        return Err(format!(
            "odd number of hex digits ({}): each byte needs two",
            digits.len()
        ));
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| {
            digits
                .get(i..i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or_else(|| {
                    let pair: String = digits
                        .get(i..)
                        .unwrap_or_default()
                        .chars()
                        .take(2)
                        .collect();
                    format!("`{pair}` is not hex")
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_with_separators() {
        assert_eq!(
            parse_hex("81 0b:00-08 0x01").unwrap(),
            vec![0x81, 0x0b, 0x00, 0x08, 0x01]
        );
        assert!(parse_hex("abc").unwrap_err().contains("odd"));
        assert!(parse_hex("zz").unwrap_err().contains("not hex"));
        assert!(parse_hex("é").unwrap_err().contains("not hex"));
    }
}
