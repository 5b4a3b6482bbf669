//! The wire formats by name, file extension and MIME type, with decode and encode of whole
//! grids in any of them: what `buildwire haystack convert` and the HTTP server's content
//! negotiation share.

use std::fmt;
use std::str::FromStr;

use super::{DecodeError, json, trio, zinc};
use crate::value::Grid;

/// A grid encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Zinc 3.0 (`text/zinc`), the default of the Haystack HTTP API.
    Zinc,
    /// JSON v4, Hayson (`application/json`).
    Json,
    /// JSON v3, prefixed strings (`application/vnd.haystack+json;version=3`).
    JsonV3,
    /// Trio (`text/trio`).
    Trio,
}

impl Format {
    /// Every format, in the order the HTTP `filetypes` op lists them.
    pub const ALL: [Format; 4] = [Format::Zinc, Format::Json, Format::JsonV3, Format::Trio];

    /// The short name used on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Format::Zinc => "zinc",
            Format::Json => "json",
            Format::JsonV3 => "json3",
            Format::Trio => "trio",
        }
    }

    /// The MIME type.
    pub const fn mime(self) -> &'static str {
        match self {
            Format::Zinc => "text/zinc",
            Format::Json => "application/json",
            Format::JsonV3 => "application/vnd.haystack+json;version=3",
            Format::Trio => "text/trio",
        }
    }

    /// The format of a file name's extension (`.zinc`, `.json`, `.trio`).
    pub fn from_path(path: &str) -> Option<Format> {
        let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
        match ext.as_str() {
            "zinc" => Some(Format::Zinc),
            "json" => Some(Format::Json),
            "trio" => Some(Format::Trio),
            _ => None,
        }
    }

    /// The format of a MIME type (parameters other than JSON's `version` are ignored).
    pub fn from_mime(mime: &str) -> Option<Format> {
        let mut parts = mime.split(';').map(str::trim);
        let base = parts.next()?.to_ascii_lowercase();
        let version3 = parts.any(|p| p.replace(' ', "").eq_ignore_ascii_case("version=3"));
        match base.as_str() {
            "text/zinc" => Some(Format::Zinc),
            "text/trio" => Some(Format::Trio),
            "application/json" | "application/vnd.haystack+json" if version3 => {
                Some(Format::JsonV3)
            }
            "application/json" | "application/vnd.haystack+json" => Some(Format::Json),
            _ => None,
        }
    }

    /// Decodes a whole grid.
    pub fn decode_grid(self, input: &str) -> Result<Grid, DecodeError> {
        match self {
            Format::Zinc => zinc::decode_grid(input),
            Format::Json => json::hayson::decode_grid(input),
            Format::JsonV3 => json::v3::decode_grid(input),
            Format::Trio => trio::decode_grid(input),
        }
    }

    /// Encodes a whole grid, canonically.
    pub fn encode_grid(self, grid: &Grid) -> String {
        match self {
            Format::Zinc => zinc::encode_grid(grid),
            Format::Json => json::hayson::encode_grid(grid),
            Format::JsonV3 => json::v3::encode_grid(grid),
            Format::Trio => trio::encode_grid(grid),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown format `{s}`: use zinc, json, json3 or trio"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_extensions_and_mime_types() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>(), Ok(f));
            assert_eq!(Format::from_mime(f.mime()), Some(f));
        }
        assert_eq!(Format::from_path("a/b/alpha.ZINC"), Some(Format::Zinc));
        assert_eq!(Format::from_path("x.csv"), None);
        assert_eq!(
            Format::from_mime("application/json; charset=utf-8"),
            Some(Format::Json)
        );
        assert_eq!(Format::from_mime("text/plain"), None);
    }

    #[test]
    fn every_format_round_trips_a_grid() {
        let grid = zinc::decode_grid(
            "ver:\"3.0\" site\nid,dis,area,site\n@a \"A\",\"Alpha\",100ft²,M\n@b,\"B\",,\n",
        )
        .unwrap();
        let rows = |g: &Grid| {
            (0..g.row_count())
                .map(|i| g.row_dict(i))
                .collect::<Vec<_>>()
        };
        for f in Format::ALL {
            let text = f.encode_grid(&grid);
            let back = f.decode_grid(&text).unwrap();
            if f == Format::Trio {
                // Trio holds records only: no grid meta, column order from first appearance.
                assert_eq!(rows(&back), rows(&grid), "{text}");
            } else {
                assert_eq!(back, grid, "{f}: {text}");
            }
        }
    }
}
