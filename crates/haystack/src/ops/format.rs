//! [`WireFormat`]: the grid encodings of the HTTP API by MIME type, and `Accept` negotiation
//! (HTTP API chapter, "Content Negotiation").

use crate::codec::{DecodeError, Format, csv};
use crate::value::Grid;

/// A grid encoding the server reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireFormat {
    /// Zinc (`text/zinc`), the default.
    Zinc,
    /// JSON v4, Hayson (`application/json`, `application/vnd.haystack+json;version=4`).
    Json,
    /// JSON v3 (`application/vnd.haystack+json;version=3`).
    JsonV3,
    /// Trio (`text/trio`).
    Trio,
    /// CSV (`text/csv`), written only.
    Csv,
}

impl WireFormat {
    /// Every format, in the order `filetypes` and `formats` list them.
    pub const ALL: [WireFormat; 5] = [
        WireFormat::Zinc,
        WireFormat::Json,
        WireFormat::JsonV3,
        WireFormat::Trio,
        WireFormat::Csv,
    ];

    /// The MIME type (without parameters other than JSON v3's version).
    pub const fn mime(self) -> &'static str {
        match self {
            WireFormat::Zinc => "text/zinc",
            WireFormat::Json => "application/json",
            WireFormat::JsonV3 => "application/vnd.haystack+json;version=3",
            WireFormat::Trio => "text/trio",
            WireFormat::Csv => "text/csv",
        }
    }

    /// The `Content-Type` of a response in this format (text types say UTF-8, as the spec
    /// requires all text media types to be).
    pub const fn content_type(self) -> &'static str {
        match self {
            WireFormat::Zinc => "text/zinc; charset=utf-8",
            WireFormat::Json => "application/json",
            WireFormat::JsonV3 => "application/vnd.haystack+json;version=3",
            WireFormat::Trio => "text/trio; charset=utf-8",
            WireFormat::Csv => "text/csv; charset=utf-8",
        }
    }

    /// The name of the format's `filetype` def.
    pub const fn filetype(self) -> &'static str {
        match self {
            WireFormat::Zinc => "zinc",
            WireFormat::Json | WireFormat::JsonV3 => "json",
            WireFormat::Trio => "trio",
            WireFormat::Csv => "csv",
        }
    }

    /// Whether request bodies may use this format (CSV cannot carry a typed grid).
    pub const fn can_read(self) -> bool {
        !matches!(self, WireFormat::Csv)
    }

    /// The codec format, for all but CSV.
    pub const fn codec(self) -> Option<Format> {
        match self {
            WireFormat::Zinc => Some(Format::Zinc),
            WireFormat::Json => Some(Format::Json),
            WireFormat::JsonV3 => Some(Format::JsonV3),
            WireFormat::Trio => Some(Format::Trio),
            WireFormat::Csv => None,
        }
    }

    /// The format of a MIME type with its parameters (`text/zinc; charset=utf-8`,
    /// `application/vnd.haystack+json;version=3`); `None` when unsupported.
    pub fn from_mime(mime: &str) -> Option<WireFormat> {
        let base = mime.split(';').next().unwrap_or("").trim();
        if base.eq_ignore_ascii_case("text/csv") {
            return Some(WireFormat::Csv);
        }
        let version = mime
            .split(';')
            .skip(1)
            .filter_map(|p| p.split_once('='))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case("version"))
            .map(|(_, v)| v.trim().trim_matches('"'));
        if base.eq_ignore_ascii_case("application/vnd.haystack+json") {
            return match version {
                None | Some("4") => Some(WireFormat::Json),
                Some("3") => Some(WireFormat::JsonV3),
                Some(_) => None,
            };
        }
        match Format::from_mime(mime)? {
            Format::Zinc => Some(WireFormat::Zinc),
            Format::Json => Some(WireFormat::Json),
            Format::JsonV3 => Some(WireFormat::JsonV3),
            Format::Trio => Some(WireFormat::Trio),
        }
    }

    /// Decodes a request grid.
    pub fn decode(self, text: &str) -> Result<Grid, DecodeError> {
        match self.codec() {
            Some(format) => format.decode_grid(text),
            // Not reachable through the server (CSV bodies get 415); decode as Zinc would
            // be wrong, so report the input as unreadable at its start.
            None => Err(DecodeError::at_offset(
                text,
                0,
                crate::codec::DecodeErrorKind::InvalidGrid("CSV cannot be read as a grid".into()),
            )),
        }
    }

    /// Encodes a response grid.
    pub fn encode(self, grid: &Grid) -> String {
        match self.codec() {
            Some(format) => format.encode_grid(grid),
            None => csv::encode_grid(grid),
        }
    }
}

/// Most media ranges read from one `Accept` header.
const MAX_ACCEPT_RANGES: usize = 32;

/// Picks the response format for an `Accept` header: Zinc when it is absent, empty or
/// `*/*`; otherwise the supported media range with the highest `q` (ties go to the first
/// listed). `text/*` means Zinc and `application/*` JSON. `None` (406) when nothing listed
/// is supported.
pub fn negotiate_accept(accept: Option<&str>) -> Option<WireFormat> {
    let Some(accept) = accept.map(str::trim).filter(|a| !a.is_empty()) else {
        return Some(WireFormat::Zinc);
    };
    let mut best: Option<(f32, WireFormat)> = None;
    for range in accept.split(',').take(MAX_ACCEPT_RANGES) {
        let mut params = range.split(';');
        let base = params.next().unwrap_or("").trim().to_ascii_lowercase();
        let mut q = 1.0f32;
        let mut rest = Vec::new();
        for p in params {
            match p.split_once('=') {
                Some((k, v)) if k.trim().eq_ignore_ascii_case("q") => {
                    q = v.trim().parse().unwrap_or(0.0);
                }
                _ => rest.push(p),
            }
        }
        if q.is_nan() || q <= 0.0 {
            continue;
        }
        let format = match base.as_str() {
            "*/*" | "text/*" => Some(WireFormat::Zinc),
            "application/*" => Some(WireFormat::Json),
            _ => {
                let mut mime = base.clone();
                for p in rest {
                    mime.push(';');
                    mime.push_str(p.trim());
                }
                WireFormat::from_mime(&mime)
            }
        };
        if let Some(format) = format
            && best.is_none_or(|(best_q, _)| q > best_q)
        {
            best = Some((q, format));
        }
    }
    best.map(|(_, f)| f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_negotiation_follows_the_spec_table() {
        assert_eq!(negotiate_accept(None), Some(WireFormat::Zinc));
        assert_eq!(negotiate_accept(Some("*/*")), Some(WireFormat::Zinc));
        assert_eq!(negotiate_accept(Some("text/zinc")), Some(WireFormat::Zinc));
        assert_eq!(
            negotiate_accept(Some("application/json")),
            Some(WireFormat::Json)
        );
        assert_eq!(
            negotiate_accept(Some("application/vnd.haystack+json;version=4")),
            Some(WireFormat::Json)
        );
        assert_eq!(
            negotiate_accept(Some("application/vnd.haystack+json; version=3")),
            Some(WireFormat::JsonV3)
        );
        assert_eq!(negotiate_accept(Some("text/trio")), Some(WireFormat::Trio));
        assert_eq!(negotiate_accept(Some("text/csv")), Some(WireFormat::Csv));
        assert_eq!(negotiate_accept(Some("text/html")), None);
        assert_eq!(negotiate_accept(Some("text/turtle")), None);
        assert_eq!(
            negotiate_accept(Some("text/html, application/json;q=0.5, text/csv;q=0.9")),
            Some(WireFormat::Csv)
        );
        assert_eq!(
            negotiate_accept(Some("text/zinc;q=0, application/json")),
            Some(WireFormat::Json)
        );
        assert_eq!(
            negotiate_accept(Some("text/html, */*;q=0.1")),
            Some(WireFormat::Zinc)
        );
    }

    #[test]
    fn content_types_map_to_formats() {
        for f in WireFormat::ALL {
            assert_eq!(WireFormat::from_mime(f.mime()), Some(f));
            assert_eq!(WireFormat::from_mime(f.content_type()), Some(f));
        }
        assert_eq!(
            WireFormat::from_mime("text/zinc; charset=utf-8"),
            Some(WireFormat::Zinc)
        );
        assert_eq!(WireFormat::from_mime("application/xml"), None);
        assert_eq!(
            WireFormat::from_mime("application/vnd.haystack+json;version=9"),
            None
        );
    }
}
