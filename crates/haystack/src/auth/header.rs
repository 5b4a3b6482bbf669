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

    /// The base64-decoded text of a parameter that must be present (see [`decode_base64`]
    /// for what is accepted).
    pub fn required_base64(&self, name: &'static str) -> Result<String, HeaderError> {
        let raw = self.required(name)?;
        decode_base64(raw)
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

/// Decodes the base64 of the handshake (`username`, `data`, and inside the SCRAM messages
/// the salt, the proof and the verifier).
///
/// Decision, beyond the letter of the spec: the Auth chapter asks for base64url without
/// padding and RFC 5802 for padded standard base64, but clients mix them up, and the
/// reference server (Haxall, whose base64 decoder takes both alphabets, padded or not)
/// accepts them all. So we accept either alphabet (`+/` or `-_`), with or without `=`
/// padding, and ASCII whitespace around the text (one client ends its proof with `\n`).
/// phable, for one, sends the proof as standard base64 with its padding stripped.
pub(crate) fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_ascii().trim_end_matches('=');
    let url_safe: String = text
        .chars()
        .map(|c| match c {
            '+' => '-',
            '/' => '_',
            other => other,
        })
        .collect();
    URL_SAFE_NO_PAD.decode(url_safe).ok()
}

/// The token of an `Authorization` header of the bearer scheme, in either form: the Auth
/// chapter's `BEARER authToken=<token>`, or RFC 6750's `Bearer <token>`.
///
/// Decision, beyond the letter of the spec: a popular TypeScript client sends the RFC 6750
/// form; a valid token of ours is as good in it, and any other token is answered like an
/// unknown one (401 with the HELLO challenge), never 400.
pub fn bearer_token(authorization: &str) -> Option<String> {
    let value = authorization.trim();
    let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("BEARER") {
        return None;
    }
    let rest = rest.trim();
    let named = AuthHeader::parse(value, true)
        .ok()
        .and_then(|h| h.param("authToken").map(str::to_owned));
    match named {
        Some(token) => Some(token),
        None if !rest.is_empty() && !rest.contains([' ', ',']) => Some(rest.to_owned()),
        None => None,
    }
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
        assert_eq!(decode_base64("dXNlcg==").as_deref(), Some(&b"user"[..]));
        assert_eq!(encode_base64url(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn base64_of_either_alphabet_padded_or_not_with_whitespace() {
        let want = Some(vec![0xfb, 0xff]);
        assert_eq!(decode_base64("-_8"), want);
        assert_eq!(decode_base64("-_8="), want);
        assert_eq!(decode_base64("+/8"), want);
        assert_eq!(decode_base64("+/8="), want);
        assert_eq!(decode_base64(" +/8=\n"), want);
        assert_eq!(decode_base64("\t-_8\r\n"), want);
        assert_eq!(decode_base64("+/8=x"), None);
        assert_eq!(decode_base64("%%%"), None);
    }

    #[test]
    fn bearer_tokens_in_both_forms() {
        assert_eq!(bearer_token("BEARER authToken=abc").as_deref(), Some("abc"));
        assert_eq!(
            bearer_token("bearer authToken=abc ").as_deref(),
            Some("abc")
        );
        assert_eq!(bearer_token("Bearer abc").as_deref(), Some("abc"));
        assert_eq!(bearer_token("Bearer abc==").as_deref(), Some("abc=="));
        assert_eq!(bearer_token("Bearer"), None);
        assert_eq!(bearer_token("Bearer a b"), None);
        assert_eq!(bearer_token("Basic dXNlcjpwYXNz"), None);
        assert_eq!(bearer_token("HELLO username=dXNlcg"), None);
    }
}
