//! Variant (OPC 10000-6 §5.2.2.16): an encoding mask (bits 0-5 built-in type id, 0x80 array,
//! 0x40 array dimensions) then a scalar, or an Int32 length and the elements followed by the
//! optional Int32 array of dimensions, whose product must equal the element count.

use super::binary_encodable::{BinaryEncodable, encode_length};
use super::data_value::DataValue;
use super::date_time::DateTime;
use super::diagnostic_info::DiagnosticInfo;
use super::error::{DecodeError, DecodeErrorKind};
use super::extension_object::ExtensionObject;
use super::guid::Guid;
use super::localized_text::LocalizedText;
use super::node_id::{ExpandedNodeId, NodeId};
use super::qualified_name::QualifiedName;
use super::reader::Reader;
use super::string::{ByteString, UaString, XmlElement};
use super::variant_type::VariantType;
use crate::types::StatusCode;

const TYPE_ID_MASK: u8 = 0x3F;
const ARRAY_DIMENSIONS_FLAG: u8 = 0x40;
const ARRAY_VALUES_FLAG: u8 = 0x80;

/// Why a [`VariantArray`] could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VariantArrayError {
    /// An element is not a scalar of the array's element type.
    #[error("element {index} is not a {expected:?} scalar")]
    ElementTypeMismatch {
        /// Position of the offending element.
        index: usize,
        /// The array's element type.
        expected: VariantType,
    },
    /// A dimension is negative.
    #[error("negative array dimension {0}")]
    NegativeDimension(i32),
    /// The dimensions do not multiply to the element count.
    #[error("dimensions multiply to {product} but the array has {length} elements")]
    DimensionsMismatch {
        /// Product of the dimensions (saturated on overflow).
        product: u64,
        /// Number of elements.
        length: usize,
    },
}

impl From<VariantArrayError> for DecodeErrorKind {
    fn from(error: VariantArrayError) -> Self {
        match error {
            VariantArrayError::NegativeDimension(value) => Self::NegativeDimension(value),
            VariantArrayError::DimensionsMismatch { product, length } => {
                Self::ArrayDimensionsMismatch { product, length }
            }
            VariantArrayError::ElementTypeMismatch { expected, .. } => {
                Self::UnknownVariantType(expected.id())
            }
        }
    }
}

fn check_dimensions(dimensions: &[i32], length: usize) -> Result<(), VariantArrayError> {
    let mut product: u64 = 1;
    for &dimension in dimensions {
        if dimension < 0 {
            return Err(VariantArrayError::NegativeDimension(dimension));
        }
        product = product.saturating_mul(u64::from(dimension.unsigned_abs()));
    }
    if product != length as u64 {
        return Err(VariantArrayError::DimensionsMismatch { product, length });
    }
    Ok(())
}

/// A one- or multi-dimensional array held in a Variant. All elements are scalars of
/// `element_type`, except for arrays of type Variant whose elements may be any Variant.
/// Multi-dimensional arrays store their elements flattened, the last index varying fastest.
#[derive(Clone, Debug, PartialEq)]
pub struct VariantArray {
    element_type: VariantType,
    elements: Vec<Variant>,
    dimensions: Option<Vec<i32>>,
}

impl VariantArray {
    /// A one-dimensional array; every element must match `element_type`.
    pub fn new(
        element_type: VariantType,
        elements: Vec<Variant>,
    ) -> Result<Self, VariantArrayError> {
        let mismatch = elements
            .iter()
            .position(|element| element.scalar_type() != Some(element_type));
        if let (true, Some(index)) = (element_type != VariantType::Variant, mismatch) {
            return Err(VariantArrayError::ElementTypeMismatch {
                index,
                expected: element_type,
            });
        }
        Ok(Self {
            element_type,
            elements,
            dimensions: None,
        })
    }

    /// Makes the array multi-dimensional; the dimensions must multiply to the element count.
    pub fn with_dimensions(mut self, dimensions: Vec<i32>) -> Result<Self, VariantArrayError> {
        check_dimensions(&dimensions, self.elements.len())?;
        self.dimensions = Some(dimensions);
        Ok(self)
    }

    /// The element type.
    pub fn element_type(&self) -> VariantType {
        self.element_type
    }

    /// The elements, flattened.
    pub fn elements(&self) -> &[Variant] {
        &self.elements
    }

    /// The dimensions, when the array is multi-dimensional.
    pub fn dimensions(&self) -> Option<&[i32]> {
        self.dimensions.as_deref()
    }

    /// Takes the elements out.
    pub fn into_elements(self) -> Vec<Variant> {
        self.elements
    }

    fn encode_element(&self, element: &Variant, buf: &mut Vec<u8>) {
        if self.element_type == VariantType::Variant {
            element.encode(buf);
        } else {
            element.encode_scalar_body(buf);
        }
    }

    fn element_len(&self, element: &Variant) -> usize {
        if self.element_type == VariantType::Variant {
            element.encoded_len()
        } else {
            element.scalar_body_len()
        }
    }
}

/// Defines [`Variant`] and its per-type scalar codec from one list of built-in types. Every
/// variant name equals the [`VariantType`] name.
macro_rules! variant_with_scalars {
    (
        inline { $( $plain:ident($plain_ty:ty), )* }
        boxed { $( $boxed:ident($boxed_ty:ty), )* }
    ) => {
        /// A value of any built-in type, or an array of them.
        #[derive(Clone, Debug, Default, PartialEq)]
        pub enum Variant {
            /// The null value (type id 0).
            #[default]
            Empty,
            $(
                #[doc = concat!("A `", stringify!($plain), "` scalar.")]
                $plain($plain_ty),
            )*
            $(
                #[doc = concat!("A `", stringify!($boxed), "` scalar (boxed to keep `Variant` small).")]
                $boxed(Box<$boxed_ty>),
            )*
            /// An array, possibly multi-dimensional.
            Array(Box<VariantArray>),
        }

        impl Variant {
            /// The built-in type of a scalar; `None` for `Empty` and arrays.
            pub fn scalar_type(&self) -> Option<VariantType> {
                match self {
                    $( Self::$plain(_) => Some(VariantType::$plain), )*
                    $( Self::$boxed(_) => Some(VariantType::$boxed), )*
                    Self::Empty | Self::Array(_) => None,
                }
            }

            /// Writes a scalar without its encoding mask (nothing for `Empty` and arrays).
            fn encode_scalar_body(&self, buf: &mut Vec<u8>) {
                match self {
                    $( Self::$plain(value) => value.encode(buf), )*
                    $( Self::$boxed(value) => value.encode(buf), )*
                    Self::Empty | Self::Array(_) => {}
                }
            }

            fn scalar_body_len(&self) -> usize {
                match self {
                    $( Self::$plain(value) => value.encoded_len(), )*
                    $( Self::$boxed(value) => value.encoded_len(), )*
                    Self::Empty | Self::Array(_) => 0,
                }
            }

            /// Reads one element of type `kind` (a whole Variant for type Variant).
            fn decode_element(kind: VariantType, reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
                Ok(match kind {
                    $( VariantType::$plain => Self::$plain(<$plain_ty>::decode(reader)?), )*
                    $( VariantType::$boxed => Self::$boxed(Box::new(<$boxed_ty>::decode(reader)?)), )*
                    VariantType::Variant => Self::decode(reader)?,
                })
            }
        }
    };
}

variant_with_scalars! {
    inline {
        Boolean(bool),
        SByte(i8),
        Byte(u8),
        Int16(i16),
        UInt16(u16),
        Int32(i32),
        UInt32(u32),
        Int64(i64),
        UInt64(u64),
        Float(f32),
        Double(f64),
        String(UaString),
        DateTime(DateTime),
        Guid(Guid),
        ByteString(ByteString),
        XmlElement(XmlElement),
        StatusCode(StatusCode),
    }
    boxed {
        NodeId(NodeId),
        ExpandedNodeId(ExpandedNodeId),
        QualifiedName(QualifiedName),
        LocalizedText(LocalizedText),
        ExtensionObject(ExtensionObject),
        DataValue(DataValue),
        DiagnosticInfo(DiagnosticInfo),
    }
}

impl Variant {
    /// An array variant (see [`VariantArray::new`]).
    pub fn array(
        element_type: VariantType,
        elements: Vec<Variant>,
    ) -> Result<Self, VariantArrayError> {
        Ok(Self::Array(Box::new(VariantArray::new(
            element_type,
            elements,
        )?)))
    }

    fn decode_array(
        kind: VariantType,
        has_dimensions: bool,
        reader: &mut Reader<'_>,
    ) -> Result<Self, DecodeError> {
        let length = reader.read_array_length()?.unwrap_or(0);
        let mut elements = Vec::with_capacity(length);
        for _ in 0..length {
            elements.push(Self::decode_element(kind, reader)?);
        }
        let dimensions = if has_dimensions {
            let offset = reader.position();
            let dimensions = Vec::<i32>::decode(reader)?;
            check_dimensions(&dimensions, elements.len())
                .map_err(|error| reader.error_at(offset, error.into()))?;
            Some(dimensions)
        } else {
            None
        };
        Ok(Self::Array(Box::new(VariantArray {
            element_type: kind,
            elements,
            dimensions,
        })))
    }
}

impl BinaryEncodable for Variant {
    fn encode(&self, buf: &mut Vec<u8>) {
        match self {
            Self::Empty => buf.push(0),
            Self::Array(array) => {
                let mut mask = array.element_type.id() | ARRAY_VALUES_FLAG;
                if array.dimensions.is_some() {
                    mask |= ARRAY_DIMENSIONS_FLAG;
                }
                buf.push(mask);
                encode_length(array.elements.len(), buf);
                for element in &array.elements {
                    array.encode_element(element, buf);
                }
                if let Some(dimensions) = &array.dimensions {
                    dimensions.encode(buf);
                }
            }
            scalar => {
                buf.push(scalar.scalar_type().map_or(0, VariantType::id));
                scalar.encode_scalar_body(buf);
            }
        }
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        reader.nested(|reader| {
            let offset = reader.position();
            let mask = reader.read_u8()?;
            let type_id = mask & TYPE_ID_MASK;
            let invalid_mask = DecodeErrorKind::InvalidEncodingByte {
                field: "Variant encoding mask",
                value: mask,
            };
            if type_id == 0 {
                return if mask == 0 {
                    Ok(Self::Empty)
                } else {
                    Err(reader.error_at(offset, invalid_mask))
                };
            }
            let kind = VariantType::from_id(type_id).ok_or_else(|| {
                reader.error_at(offset, DecodeErrorKind::UnknownVariantType(type_id))
            })?;
            if mask & ARRAY_VALUES_FLAG != 0 {
                return Self::decode_array(kind, mask & ARRAY_DIMENSIONS_FLAG != 0, reader);
            }
            // A scalar cannot carry dimensions, and a Variant cannot directly hold a Variant.
            if mask & ARRAY_DIMENSIONS_FLAG != 0 || kind == VariantType::Variant {
                return Err(reader.error_at(offset, invalid_mask));
            }
            Self::decode_element(kind, reader)
        })
    }

    fn encoded_len(&self) -> usize {
        match self {
            Self::Empty => 1,
            Self::Array(array) => {
                let elements: usize = array.elements.iter().map(|e| array.element_len(e)).sum();
                let dimensions = array
                    .dimensions
                    .as_ref()
                    .map_or(0, BinaryEncodable::encoded_len);
                1 + 4 + elements + dimensions
            }
            scalar => 1 + scalar.scalar_body_len(),
        }
    }
}

macro_rules! variant_from {
    ($( $ty:ty => $variant:ident ),* $(,)?) => {$(
        impl From<$ty> for Variant {
            fn from(value: $ty) -> Self {
                Self::$variant(value)
            }
        }
    )*};
}

variant_from! {
    bool => Boolean, i8 => SByte, u8 => Byte, i16 => Int16, u16 => UInt16, i32 => Int32,
    u32 => UInt32, i64 => Int64, u64 => UInt64, f32 => Float, f64 => Double,
    UaString => String, DateTime => DateTime, Guid => Guid, ByteString => ByteString,
    StatusCode => StatusCode,
}

impl From<&str> for Variant {
    fn from(value: &str) -> Self {
        Self::String(UaString::from(value))
    }
}

impl From<NodeId> for Variant {
    fn from(value: NodeId) -> Self {
        Self::NodeId(Box::new(value))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::encoding::DecodingLimits;
    use crate::encoding::diagnostic_info::tests::any_diagnostic_info;
    use crate::encoding::extension_object::ExtensionObjectBody;
    use crate::encoding::node_id::tests::any_node_id;
    use proptest::prelude::*;

    /// A scalar of `kind` (not Variant, DataValue: those are built recursively).
    fn scalar_of(kind: VariantType) -> BoxedStrategy<Variant> {
        use VariantType as T;
        match kind {
            T::Boolean => any::<bool>().prop_map(Variant::Boolean).boxed(),
            T::SByte => any::<i8>().prop_map(Variant::SByte).boxed(),
            T::Byte => any::<u8>().prop_map(Variant::Byte).boxed(),
            T::Int16 => any::<i16>().prop_map(Variant::Int16).boxed(),
            T::UInt16 => any::<u16>().prop_map(Variant::UInt16).boxed(),
            T::Int32 => any::<i32>().prop_map(Variant::Int32).boxed(),
            T::UInt32 => any::<u32>().prop_map(Variant::UInt32).boxed(),
            T::Int64 => any::<i64>().prop_map(Variant::Int64).boxed(),
            T::UInt64 => any::<u64>().prop_map(Variant::UInt64).boxed(),
            T::Float => any::<f32>().prop_map(Variant::Float).boxed(),
            T::Double => any::<f64>().prop_map(Variant::Double).boxed(),
            T::String => any::<Option<String>>()
                .prop_map(|s| Variant::String(UaString(s)))
                .boxed(),
            T::DateTime => any::<i64>()
                .prop_map(|t| Variant::DateTime(DateTime(t)))
                .boxed(),
            T::Guid => any::<u128>()
                .prop_map(|g| Variant::Guid(Guid::from_u128(g)))
                .boxed(),
            T::ByteString => any::<Option<Vec<u8>>>()
                .prop_map(|b| Variant::ByteString(ByteString::from(b)))
                .boxed(),
            T::XmlElement => any::<Option<String>>()
                .prop_map(|s| Variant::XmlElement(XmlElement(s)))
                .boxed(),
            T::NodeId => any_node_id().prop_map(Variant::from).boxed(),
            T::ExpandedNodeId => (any_node_id(), any::<Option<String>>(), any::<u32>())
                .prop_map(|(node_id, uri, server_index)| {
                    Variant::ExpandedNodeId(Box::new(ExpandedNodeId {
                        node_id,
                        namespace_uri: UaString(uri),
                        server_index,
                    }))
                })
                .boxed(),
            T::StatusCode => any::<u32>()
                .prop_map(|c| Variant::StatusCode(StatusCode::from_u32(c)))
                .boxed(),
            T::QualifiedName => (any::<u16>(), any::<Option<String>>())
                .prop_map(|(namespace_index, name)| {
                    Variant::QualifiedName(Box::new(QualifiedName {
                        namespace_index,
                        name: UaString(name),
                    }))
                })
                .boxed(),
            T::LocalizedText => (any::<Option<String>>(), any::<Option<String>>())
                .prop_map(|(locale, text)| {
                    Variant::LocalizedText(Box::new(LocalizedText {
                        locale: UaString(locale),
                        text: UaString(text),
                    }))
                })
                .boxed(),
            T::ExtensionObject => (any_node_id(), any::<Option<Vec<u8>>>())
                .prop_map(|(type_id, body)| {
                    let body = body.map_or(ExtensionObjectBody::None, ExtensionObjectBody::Binary);
                    Variant::ExtensionObject(Box::new(ExtensionObject { type_id, body }))
                })
                .boxed(),
            T::DiagnosticInfo => any_diagnostic_info()
                .prop_map(|d| Variant::DiagnosticInfo(Box::new(d)))
                .boxed(),
            T::DataValue | T::Variant => Just(Variant::Empty).boxed(),
        }
    }

    fn leaf_type() -> impl Strategy<Value = VariantType> {
        proptest::sample::select(
            VariantType::ALL
                .iter()
                .copied()
                .filter(|t| !matches!(t, VariantType::DataValue | VariantType::Variant))
                .collect::<Vec<_>>(),
        )
    }

    /// A typed array of leaf scalars, optionally with 1 or 2 dimensions.
    fn leaf_array() -> impl Strategy<Value = Variant> {
        (leaf_type(), 0usize..6, any::<bool>()).prop_flat_map(|(kind, length, two_d)| {
            proptest::collection::vec(scalar_of(kind), length).prop_map(move |elements| {
                let length = elements.len() as i32;
                let array = VariantArray::new(kind, elements).unwrap();
                let array = if two_d && length % 2 == 0 {
                    array.with_dimensions(vec![2, length / 2]).unwrap()
                } else if two_d {
                    array.with_dimensions(vec![length]).unwrap()
                } else {
                    array
                };
                Variant::Array(Box::new(array))
            })
        })
    }

    /// Any Variant, with DataValues and arrays of Variants nested a few levels.
    pub(crate) fn any_variant() -> impl Strategy<Value = Variant> {
        let leaf = prop_oneof![
            Just(Variant::Empty),
            leaf_type().prop_flat_map(scalar_of),
            leaf_array(),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(|v| Variant::array(
                    VariantType::Variant,
                    v
                )
                .unwrap()),
                (
                    proptest::option::of(inner),
                    any::<Option<u32>>(),
                    any::<Option<i64>>(),
                    any::<Option<u16>>()
                )
                    .prop_map(|(value, status, time, pico)| {
                        Variant::DataValue(Box::new(DataValue {
                            value,
                            status: status.map(StatusCode::from_u32),
                            source_timestamp: time.map(DateTime),
                            source_picoseconds: pico,
                            server_timestamp: time.map(DateTime),
                            server_picoseconds: None,
                        }))
                    }),
            ]
        })
    }

    #[test]
    fn scalar_layouts() {
        assert_eq!(Variant::Empty.to_bytes(), [0x00]);
        assert_eq!(Variant::Boolean(true).to_bytes(), [0x01, 0x01]);
        assert_eq!(
            Variant::Int32(-1).to_bytes(),
            [0x06, 0xFF, 0xFF, 0xFF, 0xFF]
        );
        assert_eq!(
            Variant::from("ab").to_bytes(),
            [0x0C, 2, 0, 0, 0, b'a', b'b']
        );
        assert_eq!(
            Variant::from(NodeId::numeric(0, 85)).to_bytes(),
            [0x11, 0x00, 0x55]
        );
    }

    #[test]
    fn array_layouts() {
        // OPC 10000-6 §5.2.2.16: mask 0x80 | type id, Int32 length, the elements.
        let array = Variant::array(
            VariantType::UInt16,
            vec![Variant::UInt16(1), Variant::UInt16(2)],
        )
        .unwrap();
        assert_eq!(array.to_bytes(), [0x85, 2, 0, 0, 0, 1, 0, 2, 0]);
        // A 2x2 matrix adds mask bit 0x40 and the Int32 array [2, 2] after the elements.
        let matrix = VariantArray::new(VariantType::Byte, (1..=4).map(Variant::Byte).collect())
            .unwrap()
            .with_dimensions(vec![2, 2])
            .unwrap();
        let matrix = Variant::Array(Box::new(matrix));
        let bytes = [
            0xC3, 4, 0, 0, 0, 1, 2, 3, 4, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0,
        ];
        assert_eq!(matrix.to_bytes(), bytes);
        assert_eq!(Variant::from_bytes(&bytes).unwrap(), matrix);
        // Arrays of Variant carry full Variants as elements.
        let mixed =
            Variant::array(VariantType::Variant, vec![Variant::Byte(9), Variant::Empty]).unwrap();
        assert_eq!(mixed.to_bytes(), [0x98, 2, 0, 0, 0, 0x03, 9, 0x00]);
        assert_eq!(Variant::from_bytes(&mixed.to_bytes()).unwrap(), mixed);
    }

    #[test]
    fn array_constructor_checks() {
        assert_eq!(
            Variant::array(VariantType::Byte, vec![Variant::Byte(1), Variant::Int32(2)])
                .unwrap_err(),
            VariantArrayError::ElementTypeMismatch {
                index: 1,
                expected: VariantType::Byte
            }
        );
        let array = VariantArray::new(VariantType::Byte, vec![Variant::Byte(1); 3]).unwrap();
        assert_eq!(
            array.clone().with_dimensions(vec![2, 2]).unwrap_err(),
            VariantArrayError::DimensionsMismatch {
                product: 4,
                length: 3
            }
        );
        assert_eq!(
            array.with_dimensions(vec![-3, -1]).unwrap_err(),
            VariantArrayError::NegativeDimension(-3)
        );
    }

    #[test]
    fn unknown_type_ids() {
        let error = Variant::from_bytes(&[26, 0]).unwrap_err();
        assert_eq!(error.offset, 0);
        assert_eq!(error.kind, DecodeErrorKind::UnknownVariantType(26));
        assert_eq!(
            Variant::from_bytes(&[0x80 | 63, 0, 0, 0, 0])
                .unwrap_err()
                .kind,
            DecodeErrorKind::UnknownVariantType(63)
        );
        // A scalar of type Variant, and dimensions without an array, are invalid masks.
        assert_eq!(
            Variant::from_bytes(&[24, 0]).unwrap_err().kind,
            DecodeErrorKind::InvalidEncodingByte {
                field: "Variant encoding mask",
                value: 24
            }
        );
        assert_eq!(
            Variant::from_bytes(&[0x46, 0, 0, 0, 0]).unwrap_err().kind,
            DecodeErrorKind::InvalidEncodingByte {
                field: "Variant encoding mask",
                value: 0x46
            }
        );
        assert_eq!(
            Variant::from_bytes(&[0x80]).unwrap_err().kind,
            DecodeErrorKind::InvalidEncodingByte {
                field: "Variant encoding mask",
                value: 0x80
            }
        );
    }

    #[test]
    fn bad_array_dimensions() {
        // Three bytes with dimensions [2, 2].
        let bytes = [
            0xC3, 3, 0, 0, 0, 1, 2, 3, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0,
        ];
        let error = Variant::from_bytes(&bytes).unwrap_err();
        assert_eq!(error.offset, 8);
        assert_eq!(
            error.kind,
            DecodeErrorKind::ArrayDimensionsMismatch {
                product: 4,
                length: 3
            }
        );
        assert_eq!(error.status_code(), StatusCode::BAD_DECODING_ERROR);
        let negative = [
            0xC3, 0, 0, 0, 0, 2, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0,
        ];
        assert_eq!(
            Variant::from_bytes(&negative).unwrap_err().kind,
            DecodeErrorKind::NegativeDimension(-1)
        );
        // Huge dimensions overflow the product: still a clean mismatch.
        let overflow = [
            0xC3, 0, 0, 0, 0, 3, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF,
            0xFF, 0xFF, 0x7F,
        ];
        assert!(matches!(
            Variant::from_bytes(&overflow).unwrap_err().kind,
            DecodeErrorKind::ArrayDimensionsMismatch { length: 0, .. }
        ));
    }

    #[test]
    fn malformed_lengths() {
        assert_eq!(
            Variant::from_bytes(&[0x83, 0xFE, 0xFF, 0xFF, 0xFF])
                .unwrap_err()
                .kind,
            DecodeErrorKind::NegativeLength(-2)
        );
        // A null array decodes as an empty one.
        let null = Variant::from_bytes(&[0x83, 0xFF, 0xFF, 0xFF, 0xFF]).unwrap();
        assert_eq!(null, Variant::array(VariantType::Byte, vec![]).unwrap());
        assert!(matches!(
            Variant::from_bytes(&[0x83, 0x10, 0, 0, 0, 1])
                .unwrap_err()
                .kind,
            DecodeErrorKind::UnexpectedEnd {
                needed: 16,
                available: 1
            }
        ));
        let limits = DecodingLimits {
            max_array_length: 1,
            ..DecodingLimits::default()
        };
        let mut reader = Reader::with_limits(&[0x83, 2, 0, 0, 0, 1, 2], limits);
        assert_eq!(
            Variant::decode(&mut reader).unwrap_err().kind,
            DecodeErrorKind::ArrayTooLong {
                length: 2,
                limit: 1
            }
        );
    }

    #[test]
    fn nesting_limit_through_data_values() {
        // Variant(DataValue(Variant(DataValue(...)))) 200 levels deep.
        let mut bytes = Vec::new();
        for _ in 0..200 {
            bytes.extend_from_slice(&[0x17, 0x01]);
        }
        bytes.push(0x00);
        let error = Variant::from_bytes(&bytes).unwrap_err();
        assert_eq!(error.kind, DecodeErrorKind::NestingTooDeep { limit: 64 });
        assert_eq!(
            error.status_code(),
            StatusCode::BAD_ENCODING_LIMITS_EXCEEDED
        );
        // Arrays of Variants nest the same way.
        let mut arrays = Vec::new();
        for _ in 0..100 {
            arrays.extend_from_slice(&[0x98, 1, 0, 0, 0]);
        }
        arrays.push(0x00);
        assert_eq!(
            Variant::from_bytes(&arrays).unwrap_err().kind,
            DecodeErrorKind::NestingTooDeep { limit: 64 }
        );
    }

    proptest! {
        #[test]
        fn round_trip(value in any_variant()) {
            let bytes = value.to_bytes();
            prop_assert_eq!(bytes.len(), value.encoded_len());
            let decoded = Variant::from_bytes(&bytes).unwrap();
            // Compare encodings, so that NaN floats count as equal to themselves.
            prop_assert_eq!(decoded.to_bytes(), bytes);
        }

        #[test]
        fn mutated_encodings_fail_cleanly_or_reach_a_fixed_point(
            value in any_variant(),
            position: proptest::sample::Index,
            byte: u8,
            cut: proptest::sample::Index,
        ) {
            let mut bytes = value.to_bytes();
            let at = position.index(bytes.len());
            bytes[at] = byte;
            bytes.truncate(cut.index(bytes.len() + 1));
            let mut reader = Reader::new(&bytes);
            match Variant::decode(&mut reader) {
                Ok(decoded) => {
                    let again = decoded.to_bytes();
                    prop_assert_eq!(again.len(), decoded.encoded_len());
                    prop_assert_eq!(Variant::from_bytes(&again).unwrap().to_bytes(), again);
                }
                Err(error) => prop_assert!(error.offset <= bytes.len()),
            }
        }

        #[test]
        fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(value) = Variant::from_bytes(&bytes) {
                let again = value.to_bytes();
                prop_assert_eq!(Variant::from_bytes(&again).unwrap().to_bytes(), again);
            }
        }
    }
}
