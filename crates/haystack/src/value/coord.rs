//! [`Coord`]: a geographic latitude/longitude pair.

/// A geographic coordinate in decimal degrees.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coord {
    /// Latitude, -90..=90.
    pub lat: f64,
    /// Longitude, -180..=180.
    pub lng: f64,
}

/// Why a coordinate is out of range.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("coordinate out of range: lat {lat}, lng {lng}")]
pub struct InvalidCoord {
    /// The latitude given.
    pub lat: f64,
    /// The longitude given.
    pub lng: f64,
}

impl Coord {
    /// Builds a coordinate, checking the ranges (NaN is rejected).
    pub fn new(lat: f64, lng: f64) -> Result<Self, InvalidCoord> {
        if (-90.0..=90.0).contains(&lat) && (-180.0..=180.0).contains(&lng) {
            Ok(Coord { lat, lng })
        } else {
            Err(InvalidCoord { lat, lng })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert!(Coord::new(39.04532, -103.57159).is_ok());
        assert_eq!(
            Coord::new(91.0, 0.0),
            Err(InvalidCoord {
                lat: 91.0,
                lng: 0.0
            })
        );
        assert!(Coord::new(f64::NAN, 0.0).is_err());
    }
}
