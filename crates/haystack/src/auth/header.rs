//! Parsing and writing the auth headers: a scheme name followed by `name=value` parameters
//! separated by commas (`SCRAM handshakeToken=abc, data=xyz`).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Longest header value accepted (the SCRAM messages are a few hundred bytes).
pub const MAX_HEADER_LEN: usize = 4096;
/// Most parameters accepted in one header.
pub const MAX_PARAMS: usize = 16;

/// Why an auth header could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// The header is longer than [`MAX_HEADER_LEN`].
    #[error("auth header longer than {MAX_HEADER_LEN} bytes")]
    TooLong,
    /// No scheme name.
    #[error("auth header has no scheme")]
    MissingScheme,
    /// A parameter is not `name=value`, or there are too many.
    #[error("malformed auth header parameter `{0}`")]
    BadParameter(String),
    /// A required parameter is absent.
    #[error("auth header lacks the `{0}` parameter")]
    MissingParameter(&'static str),
    /// A `username` or `data` value is not base64url.
    #[error("`{0}` is not base64url")]
    BadBase64(&'static str),
}

/// A parsed `Authorization`, `WWW-Authenticate` or `Authentication-Info` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthHeader {
    /// Scheme, upper-cased (`HELLO`, `SCRAM`, `BEARER`); empty for `Authentication-Info`.
    pub scheme: String,
    /// Parameters in order, names as sent.
    pub params: Vec<(String, String)>,
}

impl AuthHeader {
    /// A header with a scheme and parameters.
    pub fn new(scheme: &str, params: &[(&str, &str)]) -> Self {
        Self {
            scheme: scheme.to_owned(),
            params: params
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    /// Parses `SCHEME name=value, name=value`. `Authentication-Info` has no scheme: pass
    /// `with_scheme = false`.
    pub fn parse(value: &str, with_scheme: bool) -> Result<Self, HeaderError> {
        if value.len() > MAX_HEADER_LEN {
            return Err(HeaderError::TooLong);
        }
        let value = value.trim();
        let (scheme, rest) = if with_scheme {
            let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
            if scheme.is_empty() {
                return Err(HeaderError::MissingScheme);
            }
            (scheme.to_ascii_uppercase(), rest)
        } else {
            (String::new(), value)
        };
        let mut params = Vec::new();
        for part in rest.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, val) = part
                .split_once('=')
                .ok_or_else(|| HeaderError::BadParameter(part.to_owned()))?;
            if params.len() == MAX_PARAMS || name.trim().is_empty() {
                return Err(HeaderError::BadParameter(part.to_owned()));
            }
            params.push((name.trim().to_owned(), val.trim().to_owned()));
        }
        Ok(Self { scheme, params })
    }

    /// The value of parameter `name` (names compare case-insensitively).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The value of a parameter that must be present.
    pub fn required(&self, name: &'static str) -> Result<&str, HeaderError> {
        self.param(name).ok_or(HeaderError::MissingParameter(name))
    }

    /// The base64url-decoded text of a parameter that must be present.
    pub fn required_base64(&self, name: &'static str) -> Result<String, HeaderError> {
        let raw = self.required(name)?;
        decode_base64url(raw)
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .ok_or(HeaderError::BadBase64(name))
    }

    /// Formats the header value.
    pub fn to_header_value(&self) -> String {
        let params = self
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ");
        match (self.scheme.is_empty(), params.is_empty()) {
            (true, _) => params,
            (false, true) => self.scheme.clone(),
            (false, false) => format!("{} {params}", self.scheme),
        }
    }
}

/// base64url without padding, as the Haystack auth spec requires for `username` and `data`.
pub fn encode_base64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Decodes base64url, tolerating padding that some clients add.
pub fn decode_base64url(text: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(text.trim_end_matches('=')).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_scheme_and_parameters() {
        let h =
            AuthHeader::parse("scram handshakeToken=abc, hash=SHA-256, data=eHl6", true).unwrap();
        assert_eq!(h.scheme, "SCRAM");
        assert_eq!(h.param("handshaketoken"), Some("abc"));
        assert_eq!(h.param("hash"), Some("SHA-256"));
        assert_eq!(h.required_base64("data").unwrap(), "xyz");
        assert_eq!(
            h.to_header_value(),
            "SCRAM handshakeToken=abc, hash=SHA-256, data=eHl6"
        );
    }

    #[test]
    fn authentication_info_has_no_scheme() {
        let h = AuthHeader::parse("authToken=xyz, hash=SHA-256", false).unwrap();
        assert_eq!(h.scheme, "");
        assert_eq!(h.param("authToken"), Some("xyz"));
        assert_eq!(h.to_header_value(), "authToken=xyz, hash=SHA-256");
    }

    #[test]
    fn rejects_malformed_headers() {
        assert_eq!(
            AuthHeader::parse("SCRAM novalue", true),
            Err(HeaderError::BadParameter("novalue".into()))
        );
        assert_eq!(AuthHeader::parse("", true), Err(HeaderError::MissingScheme));
        let long = format!("HELLO username={}", "a".repeat(MAX_HEADER_LEN));
        assert_eq!(AuthHeader::parse(&long, true), Err(HeaderError::TooLong));
        let many = format!("X {}", vec!["a=b"; MAX_PARAMS + 1].join(","));
        assert!(matches!(
            AuthHeader::parse(&many, true),
            Err(HeaderError::BadParameter(_))
        ));
        let h = AuthHeader::parse("HELLO username=***", true).unwrap();
        assert_eq!(
            h.required_base64("username"),
            Err(HeaderError::BadBase64("username"))
        );
        assert_eq!(
            h.required("data"),
            Err(HeaderError::MissingParameter("data"))
        );
    }

    #[test]
    fn base64url_has_no_padding_and_accepts_it() {
        assert_eq!(encode_base64url(b"user"), "dXNlcg");
        assert_eq!(decode_base64url("dXNlcg==").as_deref(), Some(&b"user"[..]));
        assert_eq!(encode_base64url(&[0xfb, 0xff]), "-_8");
    }
}
