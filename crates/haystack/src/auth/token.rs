//! Random tokens and nonces: alphanumeric, as the Haystack auth spec asks, from the operating
//! system's random source.

/// Characters of tokens and nonces.
const ALPHABET: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// Why randomness could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the operating system's random source failed: {0}")]
pub struct RandomError(pub String);

/// A random alphanumeric string of `len` characters (about 5.95 bits each).
pub fn random_alphanumeric(len: usize) -> Result<String, RandomError> {
    let mut out = String::with_capacity(len);
    let mut buf = [0u8; 64];
    while out.len() < len {
        getrandom::fill(&mut buf).map_err(|e| RandomError(e.to_string()))?;
        // Rejection sampling keeps every character equally likely: 248 = 4 * 62.
        for &b in buf.iter().filter(|&&b| b < 248) {
            if out.len() == len {
                break;
            }
            out.push(char::from(ALPHABET[usize::from(b % 62)]));
        }
    }
    Ok(out)
}

/// Random bytes (salts).
pub fn random_bytes<const N: usize>() -> Result<[u8; N], RandomError> {
    let mut out = [0u8; N];
    getrandom::fill(&mut out).map_err(|e| RandomError(e.to_string()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_alphanumeric_and_distinct() {
        let a = random_alphanumeric(40).unwrap();
        let b = random_alphanumeric(40).unwrap();
        assert_eq!(a.len(), 40);
        assert!(a.bytes().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(a, b);
        assert_eq!(random_alphanumeric(0).unwrap(), "");
    }
}
