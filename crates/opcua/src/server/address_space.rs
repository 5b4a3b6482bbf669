//! The address space (OPC 10000-3 §5): nodes with their NodeClass, names, class-specific
//! attributes and references in both directions, plus the API that user code calls to add
//! namespaces, objects, variables and methods (with Rust callbacks).
//!
//! References are stored twice: forward on the source node and inverse on the target, so that
//! Browse in either direction is a lookup in one node.

use std::collections::HashMap;

use crate::encoding::{
    BinaryEncodable, DateTime, ExtensionObject, ExtensionObjectBody, Identifier, LocalizedText,
    NodeId, QualifiedName, UaString, Variant, VariantType,
};
use crate::services::NodeClass;
use crate::services::well_known_nodes as ids;
use crate::types::StatusCode;

/// AccessLevel bit: the value can be read (OPC 10000-3 §8.57).
pub const ACCESS_LEVEL_CURRENT_READ: u8 = 0x01;
/// AccessLevel bit: the value can be written.
pub const ACCESS_LEVEL_CURRENT_WRITE: u8 = 0x02;
/// `Argument_Encoding_DefaultBinary` (ns=0;i=298), the body type of method argument lists.
pub const ARGUMENT_BINARY_ENCODING_ID: u32 = 298;
/// ValueRank of a scalar.
pub const VALUE_RANK_SCALAR: i32 = -1;
/// ValueRank of a one-dimensional array.
pub const VALUE_RANK_ONE_DIMENSION: i32 = 1;
/// Most nodes an address space holds (a guard against runaway user code).
pub const MAX_NODES: usize = 1_000_000;

/// The result of a method callback: output arguments or a status for the whole call.
pub type MethodResult = Result<Vec<Variant>, StatusCode>;
/// A method implementation: called with the (type-checked) input arguments.
pub type MethodCallback = Box<dyn FnMut(&[Variant]) -> MethodResult + Send>;

/// A LocalizedText with no locale.
pub fn plain_text(text: &str) -> LocalizedText {
    LocalizedText {
        locale: UaString::NULL,
        text: UaString::from(text),
    }
}

/// The identifier of a NodeId as plain text, without namespace or `i=` / `s=` prefix (a Guid
/// in its usual form, a ByteString in hex).
pub fn identifier_text(node_id: &NodeId) -> String {
    match &node_id.identifier {
        Identifier::Numeric(value) => value.to_string(),
        Identifier::String(value) => value.to_string(),
        Identifier::Guid(value) => value.to_string(),
        Identifier::Opaque(value) => value
            .as_bytes()
            .unwrap_or_default()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect(),
    }
}

/// A reference from or to a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// The reference type (a ReferenceType node).
    pub reference_type: NodeId,
    /// The node at the other end.
    pub target: NodeId,
    /// True when this node is the source.
    pub is_forward: bool,
}

/// Attributes of a Variable (OPC 10000-3 §5.6).
#[derive(Clone, Debug, PartialEq)]
pub struct VariableAttributes {
    /// The current value.
    pub value: Variant,
    /// When the value last changed.
    pub source_timestamp: DateTime,
    /// DataType NodeId.
    pub data_type: NodeId,
    /// ValueRank (-1 scalar, 1 one-dimensional array, ...).
    pub value_rank: i32,
    /// AccessLevel bits.
    pub access_level: u8,
}

/// `AnalogItemType` (OPC 10000-8 §5.3.2.3).
pub const ANALOG_ITEM_TYPE_ID: u32 = 2368;
/// The `Range` DataType.
pub const RANGE_DATA_TYPE_ID: u32 = 884;
/// `Range_Encoding_DefaultBinary`.
pub const RANGE_BINARY_ENCODING_ID: u32 = 886;
/// The `EUInformation` DataType.
pub const EU_INFORMATION_DATA_TYPE_ID: u32 = 887;
/// `EUInformation_Encoding_DefaultBinary`.
pub const EU_INFORMATION_BINARY_ENCODING_ID: u32 = 889;
/// The namespace of UNECE unit codes in EUInformation (OPC 10000-8 §5.6.3).
pub const UNECE_UNITS_NAMESPACE: &str = "http://www.opcfoundation.org/UA/units/un/cefact";

/// A Range structure (low, high) as an ExtensionObject.
pub fn range_object(low: f64, high: f64) -> ExtensionObject {
    let mut body = Vec::new();
    low.encode(&mut body);
    high.encode(&mut body);
    ExtensionObject {
        type_id: NodeId::numeric(0, RANGE_BINARY_ENCODING_ID),
        body: ExtensionObjectBody::Binary(body),
    }
}

/// The EngineeringUnits of an analog item (the EUInformation structure).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineeringUnits {
    /// What is shown (`°C`).
    pub display_name: String,
    /// The UNECE common code (`CEL`), from which the UnitId is made; None: UnitId -1.
    pub unece_code: Option<String>,
    /// A longer description (`degree Celsius`).
    pub description: String,
}

impl EngineeringUnits {
    /// The UnitId of a UNECE common code: its (at most 4) ASCII characters as the bytes of
    /// an Int32, first character highest (OPC 10000-8 §5.6.3: `CEL` is 4408652); None for
    /// anything else.
    pub fn unit_id(code: &str) -> Option<i32> {
        if code.is_empty() || code.len() > 4 || !code.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return None;
        }
        Some(code.bytes().fold(0i32, |id, b| (id << 8) | i32::from(b)))
    }

    /// The EUInformation structure as an ExtensionObject (field order of OPC 10000-8
    /// §5.6.3: NamespaceUri, UnitId, DisplayName, Description).
    pub fn to_extension_object(&self) -> ExtensionObject {
        let mut body = Vec::new();
        let unit_id = self.unece_code.as_deref().and_then(Self::unit_id);
        let namespace = if unit_id.is_some() {
            UaString::from(UNECE_UNITS_NAMESPACE)
        } else {
            UaString::NULL
        };
        namespace.encode(&mut body);
        unit_id.unwrap_or(-1).encode(&mut body);
        plain_text(&self.display_name).encode(&mut body);
        plain_text(&self.description).encode(&mut body);
        ExtensionObject {
            type_id: NodeId::numeric(0, EU_INFORMATION_BINARY_ENCODING_ID),
            body: ExtensionObjectBody::Binary(body),
        }
    }
}

/// What [`AddressSpace::add_data_variable`] makes.
#[derive(Clone, Debug, PartialEq)]
pub struct DataVariableSpec {
    /// The initial value.
    pub value: Variant,
    /// Its DataType.
    pub data_type: NodeId,
    /// AccessLevel bits ([`ACCESS_LEVEL_CURRENT_READ`], [`ACCESS_LEVEL_CURRENT_WRITE`]).
    pub access_level: u8,
    /// The Description attribute.
    pub description: Option<String>,
    /// EURange (low, high): makes it an AnalogItemType.
    pub eu_range: Option<(f64, f64)>,
    /// EngineeringUnits: makes it an AnalogItemType.
    pub engineering_units: Option<EngineeringUnits>,
    /// The value's source timestamp.
    pub source_timestamp: DateTime,
}

/// A declared method argument (the Argument structure of OPC 10000-3 §8.6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodArgument {
    /// Name of the argument.
    pub name: String,
    /// Its built-in type.
    pub data_type: VariantType,
    /// Human-readable description.
    pub description: String,
}

impl MethodArgument {
    /// A scalar argument.
    pub fn new(name: &str, data_type: VariantType, description: &str) -> Self {
        Self {
            name: name.into(),
            data_type,
            description: description.into(),
        }
    }

    /// The Argument structure as an ExtensionObject (field order of OPC 10000-3 §8.6).
    pub fn to_extension_object(&self) -> ExtensionObject {
        let mut body = Vec::new();
        UaString::from(self.name.as_str()).encode(&mut body);
        NodeId::numeric(0, u32::from(self.data_type.id())).encode(&mut body);
        VALUE_RANK_SCALAR.encode(&mut body);
        Vec::<u32>::new().encode(&mut body);
        plain_text(&self.description).encode(&mut body);
        ExtensionObject {
            type_id: NodeId::numeric(0, ARGUMENT_BINARY_ENCODING_ID),
            body: ExtensionObjectBody::Binary(body),
        }
    }
}

/// How a Method node is implemented.
pub enum MethodHandler {
    /// A user callback.
    Callback(MethodCallback),
    /// Throughput benchmark `setSize` (see [`bench_methods`](super::bench_methods)).
    ThroughputSetSize,
    /// Throughput benchmark `getData`.
    ThroughputGetData,
    /// Implemented outside the core and answered later (see
    /// [`Server::on_method_call`](super::Server::on_method_call)).
    External,
}

impl std::fmt::Debug for MethodHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Callback(_) => "Callback",
            Self::ThroughputSetSize => "ThroughputSetSize",
            Self::ThroughputGetData => "ThroughputGetData",
            Self::External => "External",
        })
    }
}

/// A Method's signature and implementation.
#[derive(Debug)]
pub struct MethodAttributes {
    /// Declared inputs.
    pub input_arguments: Vec<MethodArgument>,
    /// Declared outputs.
    pub output_arguments: Vec<MethodArgument>,
    /// The implementation.
    pub handler: MethodHandler,
}

/// The class-specific part of a node.
#[derive(Debug)]
pub enum NodeAttributes {
    /// An Object.
    Object,
    /// A Variable.
    Variable(VariableAttributes),
    /// A Method.
    Method(MethodAttributes),
    /// An ObjectType.
    ObjectType {
        /// Whether instances may not be created.
        is_abstract: bool,
    },
    /// A VariableType.
    VariableType {
        /// Whether instances may not be created.
        is_abstract: bool,
        /// The DataType of its instances' values.
        data_type: NodeId,
        /// The ValueRank of its instances' values.
        value_rank: i32,
    },
    /// A ReferenceType.
    ReferenceType {
        /// Whether the type is abstract.
        is_abstract: bool,
        /// Whether the reference means the same in both directions.
        symmetric: bool,
        /// Name of the inverse direction.
        inverse_name: Option<String>,
    },
    /// A DataType.
    DataType {
        /// Whether the type is abstract.
        is_abstract: bool,
    },
}

impl NodeAttributes {
    /// The NodeClass these attributes belong to.
    pub fn node_class(&self) -> NodeClass {
        match self {
            Self::Object => NodeClass::Object,
            Self::Variable(_) => NodeClass::Variable,
            Self::Method(_) => NodeClass::Method,
            Self::ObjectType { .. } => NodeClass::ObjectType,
            Self::VariableType { .. } => NodeClass::VariableType,
            Self::ReferenceType { .. } => NodeClass::ReferenceType,
            Self::DataType { .. } => NodeClass::DataType,
        }
    }
}

/// One node of the address space.
#[derive(Debug)]
pub struct Node {
    /// Its NodeId.
    pub node_id: NodeId,
    /// Its BrowseName.
    pub browse_name: QualifiedName,
    /// Its DisplayName.
    pub display_name: LocalizedText,
    /// Its Description.
    pub description: LocalizedText,
    /// Class-specific attributes.
    pub attributes: NodeAttributes,
    /// References from (forward) and to (inverse) this node.
    pub references: Vec<Reference>,
}

impl Node {
    /// The node's class.
    pub fn node_class(&self) -> NodeClass {
        self.attributes.node_class()
    }

    /// The target of the first forward HasTypeDefinition reference, if any.
    pub fn type_definition(&self) -> Option<&NodeId> {
        self.references
            .iter()
            .find(|r| r.is_forward && r.reference_type == ids::HAS_TYPE_DEFINITION)
            .map(|r| &r.target)
    }
}

/// Why a node could not be added.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddNodeError {
    /// A node with this NodeId exists.
    #[error("node {0} already exists")]
    NodeIdExists(NodeId),
    /// The parent (or a reference target) does not exist.
    #[error("node {0} does not exist")]
    UnknownNode(NodeId),
    /// The namespace index is not registered.
    #[error("namespace {0} is not registered")]
    UnknownNamespace(u16),
    /// The address space is full.
    #[error("address space holds {0} nodes already")]
    Full(usize),
}

impl AddNodeError {
    /// The StatusCode that reports the error.
    pub const fn status_code(&self) -> StatusCode {
        match self {
            Self::NodeIdExists(_) => StatusCode::BAD_NODE_ID_EXISTS,
            Self::UnknownNode(_) => StatusCode::BAD_PARENT_NODE_ID_INVALID,
            Self::UnknownNamespace(_) => StatusCode::BAD_NODE_ID_REJECTED,
            Self::Full(_) => StatusCode::BAD_OUT_OF_MEMORY,
        }
    }
}

/// All nodes of the server, keyed by NodeId, with the namespace table.
#[derive(Debug, Default)]
pub struct AddressSpace {
    nodes: HashMap<NodeId, Node>,
    namespaces: Vec<String>,
}

impl AddressSpace {
    /// An address space with no nodes and the namespace-0 URI only.
    pub fn empty() -> Self {
        Self {
            nodes: HashMap::new(),
            namespaces: vec!["http://opcfoundation.org/UA/".into()],
        }
    }

    /// The namespace URIs, by index (the NamespaceArray).
    pub fn namespaces(&self) -> &[String] {
        &self.namespaces
    }

    /// Registers a namespace URI (or finds it) and returns its index.
    pub fn add_namespace(&mut self, uri: &str) -> u16 {
        if let Some(index) = self.namespaces.iter().position(|n| n == uri) {
            return u16::try_from(index).unwrap_or(u16::MAX);
        }
        self.namespaces.push(uri.into());
        u16::try_from(self.namespaces.len() - 1).unwrap_or(u16::MAX)
    }

    /// Makes room for `additional` more nodes.
    pub fn reserve(&mut self, additional: usize) {
        self.nodes.reserve(additional);
    }

    /// Releases the spare capacity of the node table and of every node's reference list
    /// (after a bulk load).
    pub fn shrink_to_fit(&mut self) {
        self.nodes.shrink_to_fit();
        for node in self.nodes.values_mut() {
            node.references.shrink_to_fit();
        }
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True when there is no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node with this id.
    pub fn node(&self, node_id: &NodeId) -> Option<&Node> {
        self.nodes.get(node_id)
    }

    /// The node with this id, mutably.
    pub fn node_mut(&mut self, node_id: &NodeId) -> Option<&mut Node> {
        self.nodes.get_mut(node_id)
    }

    /// Inserts a node with no references.
    pub fn insert(
        &mut self,
        node_id: NodeId,
        browse_name: QualifiedName,
        display_name: &str,
        attributes: NodeAttributes,
    ) -> Result<(), AddNodeError> {
        if usize::from(node_id.namespace) >= self.namespaces.len() {
            return Err(AddNodeError::UnknownNamespace(node_id.namespace));
        }
        if self.nodes.contains_key(&node_id) {
            return Err(AddNodeError::NodeIdExists(node_id));
        }
        if self.nodes.len() >= MAX_NODES {
            return Err(AddNodeError::Full(MAX_NODES));
        }
        let node = Node {
            node_id: node_id.clone(),
            browse_name,
            display_name: plain_text(display_name),
            description: LocalizedText::default(),
            attributes,
            references: Vec::new(),
        };
        self.nodes.insert(node_id, node);
        Ok(())
    }

    /// Adds a reference `source --reference_type--> target` (and its inverse on the target).
    pub fn add_reference(
        &mut self,
        source: &NodeId,
        reference_type: &NodeId,
        target: &NodeId,
    ) -> Result<(), AddNodeError> {
        if !self.nodes.contains_key(target) {
            return Err(AddNodeError::UnknownNode(target.clone()));
        }
        let Some(node) = self.nodes.get_mut(source) else {
            return Err(AddNodeError::UnknownNode(source.clone()));
        };
        node.references.push(Reference {
            reference_type: reference_type.clone(),
            target: target.clone(),
            is_forward: true,
        });
        if let Some(node) = self.nodes.get_mut(target) {
            node.references.push(Reference {
                reference_type: reference_type.clone(),
                target: source.clone(),
                is_forward: false,
            });
        }
        Ok(())
    }

    /// Inserts a node below `parent` (with `reference_type`) and with an optional type
    /// definition; the node is removed again if a reference cannot be added.
    pub fn add_child(
        &mut self,
        parent: &NodeId,
        reference_type: &NodeId,
        node_id: NodeId,
        browse_name: QualifiedName,
        attributes: NodeAttributes,
        type_definition: Option<&NodeId>,
    ) -> Result<(), AddNodeError> {
        if !self.nodes.contains_key(parent) {
            return Err(AddNodeError::UnknownNode(parent.clone()));
        }
        if let Some(type_definition) = type_definition
            && !self.nodes.contains_key(type_definition)
        {
            return Err(AddNodeError::UnknownNode(type_definition.clone()));
        }
        let display_name = browse_name.name.as_str().unwrap_or_default().to_owned();
        self.insert(node_id.clone(), browse_name, &display_name, attributes)?;
        self.add_reference(parent, reference_type, &node_id)?;
        if let Some(type_definition) = type_definition {
            self.add_reference(&node_id, &ids::HAS_TYPE_DEFINITION, type_definition)?;
        }
        Ok(())
    }

    /// Adds an Object organized by (or a component of) `parent`.
    pub fn add_object(
        &mut self,
        parent: &NodeId,
        node_id: NodeId,
        browse_name: QualifiedName,
    ) -> Result<(), AddNodeError> {
        self.add_object_of_type(parent, node_id, browse_name, &ids::BASE_OBJECT_TYPE)
    }

    /// Adds an Object of `type_definition` organized by (or a component of) `parent`.
    fn add_object_of_type(
        &mut self,
        parent: &NodeId,
        node_id: NodeId,
        browse_name: QualifiedName,
        type_definition: &NodeId,
    ) -> Result<(), AddNodeError> {
        let reference_type = self.child_reference_type(parent);
        self.add_child(
            parent,
            &reference_type,
            node_id,
            browse_name,
            NodeAttributes::Object,
            Some(type_definition),
        )
    }

    /// Adds a Variable (BaseDataVariableType) as a component of `parent` (organized by it
    /// when `parent` is a folder); `writable` sets the CurrentWrite access bit.
    pub fn add_variable(
        &mut self,
        parent: &NodeId,
        node_id: NodeId,
        browse_name: QualifiedName,
        value: Variant,
        data_type: NodeId,
        writable: bool,
    ) -> Result<(), AddNodeError> {
        let mut access_level = ACCESS_LEVEL_CURRENT_READ;
        if writable {
            access_level |= ACCESS_LEVEL_CURRENT_WRITE;
        }
        let spec = DataVariableSpec {
            value,
            data_type,
            access_level,
            description: None,
            eu_range: None,
            engineering_units: None,
            source_timestamp: DateTime::MIN,
        };
        self.add_data_variable(parent, node_id, browse_name, spec)
    }

    /// Adds a Folder (FolderType) organized by (or a component of) `parent`; nodes added
    /// below it are organized by it.
    pub fn add_folder(
        &mut self,
        parent: &NodeId,
        node_id: NodeId,
        browse_name: QualifiedName,
    ) -> Result<(), AddNodeError> {
        self.add_object_of_type(parent, node_id, browse_name, &ids::FOLDER_TYPE)
    }

    /// Adds a Variable described by `spec` below `parent` (organized by a folder, else a
    /// component): a BaseDataVariableType, or an AnalogItemType with its EURange and
    /// EngineeringUnits properties when the spec has either (OPC 10000-8 §5.3.2).
    pub fn add_data_variable(
        &mut self,
        parent: &NodeId,
        node_id: NodeId,
        browse_name: QualifiedName,
        spec: DataVariableSpec,
    ) -> Result<(), AddNodeError> {
        let reference_type = self.child_reference_type(parent);
        let analog = spec.eu_range.is_some() || spec.engineering_units.is_some();
        let type_definition = if analog {
            NodeId::numeric(0, ANALOG_ITEM_TYPE_ID)
        } else {
            ids::BASE_DATA_VARIABLE_TYPE
        };
        let value_rank = match spec.value {
            Variant::Array(_) => VALUE_RANK_ONE_DIMENSION,
            _ => VALUE_RANK_SCALAR,
        };
        let attributes = NodeAttributes::Variable(VariableAttributes {
            value: spec.value,
            source_timestamp: spec.source_timestamp,
            data_type: spec.data_type,
            value_rank,
            access_level: spec.access_level,
        });
        self.add_child(
            parent,
            &reference_type,
            node_id.clone(),
            browse_name,
            attributes,
            Some(&type_definition),
        )?;
        if let Some(node) = self.nodes.get_mut(&node_id)
            && let Some(description) = spec.description
        {
            node.description = plain_text(&description);
        }
        let stem = identifier_text(&node_id);
        let namespace = node_id.namespace;
        if let Some((low, high)) = spec.eu_range {
            self.add_property(
                &node_id,
                NodeId::string(namespace, &format!("{stem}.EURange")),
                QualifiedName::new(0, "EURange"),
                Variant::ExtensionObject(Box::new(range_object(low, high))),
                NodeId::numeric(0, RANGE_DATA_TYPE_ID),
            )?;
        }
        if let Some(units) = spec.engineering_units {
            self.add_property(
                &node_id,
                NodeId::string(namespace, &format!("{stem}.EngineeringUnits")),
                QualifiedName::new(0, "EngineeringUnits"),
                Variant::ExtensionObject(Box::new(units.to_extension_object())),
                NodeId::numeric(0, EU_INFORMATION_DATA_TYPE_ID),
            )?;
        }
        Ok(())
    }

    /// Adds a Property (read-only unless `writable`) to `parent`.
    pub fn add_property(
        &mut self,
        parent: &NodeId,
        node_id: NodeId,
        browse_name: QualifiedName,
        value: Variant,
        data_type: NodeId,
    ) -> Result<(), AddNodeError> {
        let value_rank = match value {
            Variant::Array(_) => VALUE_RANK_ONE_DIMENSION,
            _ => VALUE_RANK_SCALAR,
        };
        let attributes = NodeAttributes::Variable(VariableAttributes {
            value,
            source_timestamp: DateTime::MIN,
            data_type,
            value_rank,
            access_level: ACCESS_LEVEL_CURRENT_READ,
        });
        self.add_child(
            parent,
            &ids::HAS_PROPERTY,
            node_id,
            browse_name,
            attributes,
            Some(&ids::PROPERTY_TYPE),
        )
    }

    /// Adds a Method component of `parent` with InputArguments / OutputArguments properties
    /// and its implementation. The properties have string ids in the method's namespace made
    /// of the method's identifier without namespace or prefix: `ns=1;s=Pump.Start` gives
    /// `ns=1;s=Pump.Start.InputArguments`, `ns=1;i=6000` gives `ns=1;s=6000.InputArguments`.
    pub fn add_method(
        &mut self,
        parent: &NodeId,
        node_id: NodeId,
        browse_name: QualifiedName,
        input_arguments: Vec<MethodArgument>,
        output_arguments: Vec<MethodArgument>,
        handler: MethodHandler,
    ) -> Result<(), AddNodeError> {
        let arguments = |list: &[MethodArgument]| {
            let elements = list
                .iter()
                .map(|a| Variant::ExtensionObject(Box::new(a.to_extension_object())))
                .collect();
            Variant::array(VariantType::ExtensionObject, elements).unwrap_or_default()
        };
        let input_value = arguments(&input_arguments);
        let output_value = arguments(&output_arguments);
        let (has_inputs, has_outputs) = (!input_arguments.is_empty(), !output_arguments.is_empty());
        let attributes = NodeAttributes::Method(MethodAttributes {
            input_arguments,
            output_arguments,
            handler,
        });
        self.add_child(
            parent,
            &ids::HAS_COMPONENT,
            node_id.clone(),
            browse_name,
            attributes,
            None,
        )?;
        let namespace = node_id.namespace;
        let stem = identifier_text(&node_id);
        let argument_type = NodeId::numeric(0, 296);
        if has_inputs {
            let id = NodeId::string(namespace, &format!("{stem}.InputArguments"));
            self.add_property(
                &node_id,
                id,
                QualifiedName::new(0, "InputArguments"),
                input_value,
                argument_type.clone(),
            )?;
        }
        if has_outputs {
            let id = NodeId::string(namespace, &format!("{stem}.OutputArguments"));
            self.add_property(
                &node_id,
                id,
                QualifiedName::new(0, "OutputArguments"),
                output_value,
                argument_type,
            )?;
        }
        Ok(())
    }

    /// Organizes for folders, HasComponent for any other parent.
    fn child_reference_type(&self, parent: &NodeId) -> NodeId {
        let is_folder = self
            .node(parent)
            .and_then(Node::type_definition)
            .is_some_and(|t| *t == ids::FOLDER_TYPE);
        if is_folder {
            ids::ORGANIZES
        } else {
            ids::HAS_COMPONENT
        }
    }

    /// True when `candidate` is `base` or (transitively) a HasSubtype child of it.
    pub fn is_subtype_of(&self, candidate: &NodeId, base: &NodeId) -> bool {
        let mut current = candidate.clone();
        // The type hierarchy is a tree; the bound stops a malformed loop.
        for _ in 0..64 {
            if current == *base {
                return true;
            }
            let parent = self.node(&current).and_then(|node| {
                node.references
                    .iter()
                    .find(|r| !r.is_forward && r.reference_type == ids::HAS_SUBTYPE)
                    .map(|r| r.target.clone())
            });
            match parent {
                Some(parent) => current = parent,
                None => return false,
            }
        }
        false
    }

    /// True when `node_id` names a ReferenceType node.
    pub fn is_reference_type(&self, node_id: &NodeId) -> bool {
        self.node(node_id)
            .is_some_and(|n| n.node_class() == NodeClass::ReferenceType)
    }

    /// Replaces the value of a Variable (no access check: this is the server's own API).
    pub fn set_value(
        &mut self,
        node_id: &NodeId,
        value: Variant,
        timestamp: DateTime,
    ) -> Result<(), StatusCode> {
        match self.nodes.get_mut(node_id).map(|n| &mut n.attributes) {
            Some(NodeAttributes::Variable(variable)) => {
                variable.value = value;
                variable.source_timestamp = timestamp;
                Ok(())
            }
            Some(_) => Err(StatusCode::BAD_NODE_CLASS_INVALID),
            None => Err(StatusCode::BAD_NODE_ID_UNKNOWN),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space() -> AddressSpace {
        let mut space = AddressSpace::empty();
        let reference_type = || NodeAttributes::ReferenceType {
            is_abstract: false,
            symmetric: false,
            inverse_name: None,
        };
        for (id, name) in [
            (ids::REFERENCES, "References"),
            (ids::HIERARCHICAL_REFERENCES, "H"),
        ] {
            space
                .insert(id, QualifiedName::new(0, name), name, reference_type())
                .unwrap();
        }
        space
            .add_reference(
                &ids::REFERENCES,
                &ids::HAS_SUBTYPE,
                &ids::HIERARCHICAL_REFERENCES,
            )
            .unwrap();
        space
    }

    #[test]
    fn references_are_stored_both_ways() {
        let space = space();
        let h = space.node(&ids::HIERARCHICAL_REFERENCES).unwrap();
        assert_eq!(
            h.references,
            [Reference {
                reference_type: ids::HAS_SUBTYPE,
                target: ids::REFERENCES,
                is_forward: false
            }]
        );
        assert!(space.is_subtype_of(&ids::HIERARCHICAL_REFERENCES, &ids::REFERENCES));
        assert!(!space.is_subtype_of(&ids::REFERENCES, &ids::HIERARCHICAL_REFERENCES));
    }

    #[test]
    fn add_errors() {
        let mut space = space();
        let error = space
            .insert(
                ids::REFERENCES,
                QualifiedName::new(0, "x"),
                "x",
                NodeAttributes::Object,
            )
            .unwrap_err();
        assert_eq!(error.status_code(), StatusCode::BAD_NODE_ID_EXISTS);
        let error = space
            .add_object(
                &NodeId::numeric(0, 1),
                NodeId::numeric(0, 2),
                QualifiedName::new(0, "y"),
            )
            .unwrap_err();
        assert_eq!(error, AddNodeError::UnknownNode(NodeId::numeric(0, 1)));
        let error = space
            .insert(
                NodeId::numeric(3, 1),
                QualifiedName::new(3, "z"),
                "z",
                NodeAttributes::Object,
            )
            .unwrap_err();
        assert_eq!(error, AddNodeError::UnknownNamespace(3));
        assert_eq!(space.add_namespace("urn:a"), 1);
        assert_eq!(space.add_namespace("urn:a"), 1);
    }

    #[test]
    fn unece_unit_ids() {
        // OPC 10000-8 §5.6.3 gives degree Celsius (CEL) as 4408652.
        assert_eq!(EngineeringUnits::unit_id("CEL"), Some(4_408_652));
        assert_eq!(EngineeringUnits::unit_id("°C"), None);
        assert_eq!(EngineeringUnits::unit_id("TOOLONG"), None);
    }

    #[test]
    fn argument_encoding() {
        let object = MethodArgument::new("size", VariantType::UInt32, "KiB").to_extension_object();
        let ExtensionObjectBody::Binary(body) = object.body else {
            panic!("binary body expected");
        };
        // Name "size", DataType i=7 (two-byte form), ValueRank -1, empty dimensions,
        // Description with text only (mask 0x02).
        assert_eq!(
            body,
            [
                4, 0, 0, 0, b's', b'i', b'z', b'e', 0x00, 7, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0,
                0x02, 3, 0, 0, 0, b'K', b'i', b'B'
            ]
        );
    }
}
