//! Namespace 0 as a conformance tool or a generic client walks it: the type hierarchy under
//! Types, VariableTypes with DataType and ValueRank, the mandatory members of ServerType,
//! ServerCapabilitiesType and ServerStatusType with values, BuildInfo as a structure, no
//! 1601 timestamps, and method argument properties with clean NodeIds.

// Helpers and tests live in one test-only module, where unwrapping is allowed.
#[cfg(test)]
mod namespace_zero_tests {
    use std::time::{Duration, Instant};

    use buildwire_opcua::encoding::{
        BinaryEncodable, DataValue, DateTime, ExtensionObjectBody, Identifier, NodeId,
        QualifiedName, Reader, UaString, Variant, VariantType,
    };
    use buildwire_opcua::server::address_space::NodeAttributes;
    use buildwire_opcua::server::attribute_services::read_one;
    use buildwire_opcua::server::namespace_zero::{BUILD_INFO_BINARY_ENCODING_ID, table_size};
    use buildwire_opcua::server::{BuildInfo, MethodArgument, MethodHandler, Server, ServerConfig};
    use buildwire_opcua::services::well_known_nodes as ids;
    use buildwire_opcua::services::{AttributeId, NodeClass, ReadValueId, TimestampsToReturn};
    use buildwire_opcua::types::StatusCode;

    const START: DateTime = DateTime(133_000_000_000_000_000);

    fn server() -> (Server, Instant) {
        let now = Instant::now();
        let config = ServerConfig {
            start_time: START,
            ..ServerConfig::default()
        };
        (Server::new(config, now).unwrap(), now)
    }

    fn read(server: &Server, now: Instant, node: u32, attribute: AttributeId) -> DataValue {
        let item = ReadValueId {
            node_id: NodeId::numeric(0, node),
            attribute_id: attribute as u32,
            ..ReadValueId::default()
        };
        read_one(server, &item, TimestampsToReturn::Both, now)
    }

    fn good(value: &DataValue) -> &Variant {
        assert!(value.status.is_none_or(|s| !s.is_bad()), "{value:?}");
        value.value.as_ref().expect("a value")
    }

    /// The forward hierarchical children of `node`: (BrowseName, NodeId).
    fn children(server: &Server, node: &NodeId) -> Vec<(String, NodeId)> {
        let space = &server.address_space;
        space
            .node(node)
            .unwrap()
            .references
            .iter()
            .filter(|r| {
                r.is_forward
                    && space.is_subtype_of(&r.reference_type, &ids::HIERARCHICAL_REFERENCES)
            })
            .map(|r| {
                let name = space.node(&r.target).unwrap().browse_name.name.to_string();
                (name, r.target.clone())
            })
            .collect()
    }

    fn child(server: &Server, node: &NodeId, name: &str) -> NodeId {
        children(server, node)
            .into_iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{node} has no member {name}"))
            .1
    }

    #[test]
    fn every_variable_type_has_data_type_and_value_rank() {
        let (server, now) = server();
        let mut count = 0;
        for (id, node) in server
            .address_space
            .node(&NodeId::numeric(0, 62))
            .map(|_| ())
            .into_iter()
            .flat_map(|()| (0..40_000).map(|i| NodeId::numeric(0, i)))
            .filter_map(|id| server.address_space.node(&id).map(|n| (id, n)))
        {
            if node.node_class() != NodeClass::VariableType {
                continue;
            }
            count += 1;
            let Identifier::Numeric(number) = id.identifier else {
                unreachable!()
            };
            let data_type = read(&server, now, number, AttributeId::DataType);
            assert!(matches!(good(&data_type), Variant::NodeId(_)), "{id}");
            let rank = read(&server, now, number, AttributeId::ValueRank);
            assert!(matches!(good(&rank), Variant::Int32(_)), "{id}");
        }
        assert!(count >= 60, "{count} variable types");
        let base = read(&server, now, 63, AttributeId::DataType);
        assert_eq!(good(&base), &Variant::from(NodeId::numeric(0, 24)));
        let rank = read(&server, now, 63, AttributeId::ValueRank);
        assert_eq!(good(&rank), &Variant::Int32(-2));
        let property = read(&server, now, 68, AttributeId::ValueRank);
        assert_eq!(good(&property), &Variant::Int32(-2));
    }

    #[test]
    fn types_folders_hold_the_hierarchies() {
        let (server, _) = server();
        let types = NodeId::numeric(0, 86);
        for (folder, root, class) in [
            ("ObjectTypes", 58, NodeClass::ObjectType),
            ("VariableTypes", 62, NodeClass::VariableType),
            ("DataTypes", 24, NodeClass::DataType),
            ("ReferenceTypes", 31, NodeClass::ReferenceType),
        ] {
            let folder = child(&server, &types, folder);
            let members = children(&server, &folder);
            assert!(
                members
                    .iter()
                    .any(|(_, id)| *id == NodeId::numeric(0, root)),
                "{folder}: {members:?}"
            );
            let root_node = server
                .address_space
                .node(&NodeId::numeric(0, root))
                .unwrap();
            assert_eq!(root_node.node_class(), class);
            // Each root has subtypes below it.
            assert!(
                root_node
                    .references
                    .iter()
                    .any(|r| r.is_forward && r.reference_type == ids::HAS_SUBTYPE)
            );
        }
        // A few deep members of the hierarchies: ServerType's instance declarations carry their
        // modelling rule; reference types have their inverse names.
        let server_type_status = child(&server, &ids::SERVER_TYPE, "ServerStatus");
        let rules: Vec<_> = server
            .address_space
            .node(&server_type_status)
            .unwrap()
            .references
            .iter()
            .filter(|r| r.is_forward && r.reference_type == NodeId::numeric(0, 37))
            .map(|r| r.target.clone())
            .collect();
        assert_eq!(rules, [NodeId::numeric(0, 78)]);
        match &server
            .address_space
            .node(&ids::HAS_COMPONENT)
            .unwrap()
            .attributes
        {
            NodeAttributes::ReferenceType { inverse_name, .. } => {
                assert_eq!(inverse_name.as_deref(), Some("ComponentOf"));
            }
            other => panic!("{other:?}"),
        }
        let (nodes, references) = table_size();
        assert!(nodes > 3000 && references > 8000, "{nodes} {references}");
    }

    #[test]
    fn build_info_is_a_structure_with_a_build_date() {
        let (server, now) = server();
        let value = read(&server, now, 2260, AttributeId::Value);
        let Variant::ExtensionObject(object) = good(&value) else {
            panic!("{value:?}");
        };
        assert_eq!(
            object.type_id,
            NodeId::numeric(0, BUILD_INFO_BINARY_ENCODING_ID)
        );
        let ExtensionObjectBody::Binary(body) = &object.body else {
            panic!("binary body expected");
        };
        let mut reader = Reader::new(body);
        let texts: Vec<UaString> = (0..5)
            .map(|_| UaString::decode(&mut reader).unwrap())
            .collect();
        let date = DateTime::decode(&mut reader).unwrap();
        let info = BuildInfo::default();
        assert_eq!(texts[0].as_str(), Some(info.product_uri.as_str()));
        assert_eq!(texts[2].as_str(), Some(info.product_name.as_str()));
        assert_eq!(date, info.build_date);
        // The build's date: after 2020, not 1601, and the same for every server of this build.
        assert!(
            date > DateTime::from_unix_millis(1_577_836_800_000),
            "{date:?}"
        );
        let (later, _) = server_after(Duration::from_millis(5));
        assert_eq!(later.config.build_info.build_date, date);
        for (id, expected) in [
            (2262, Variant::from(info.product_uri.as_str())),
            (2263, Variant::from(info.manufacturer_name.as_str())),
            (2261, Variant::from(info.product_name.as_str())),
            (2264, Variant::from(info.software_version.as_str())),
            (2265, Variant::from(info.build_number.as_str())),
            (2266, Variant::DateTime(date)),
        ] {
            assert_eq!(
                good(&read(&server, now, id, AttributeId::Value)),
                &expected,
                "i={id}"
            );
        }
    }

    fn server_after(delay: Duration) -> (Server, Instant) {
        std::thread::sleep(delay);
        server()
    }

    #[test]
    fn no_static_value_has_a_1601_timestamp() {
        let (server, now) = server();
        let mut variables = 0;
        for number in 0..40_000 {
            let id = NodeId::numeric(0, number);
            let Some(node) = server.address_space.node(&id) else {
                continue;
            };
            if node.node_class() != NodeClass::Variable {
                continue;
            }
            variables += 1;
            let value = read(&server, now, number, AttributeId::Value);
            assert_ne!(value.source_timestamp, Some(DateTime::MIN), "{id}");
            assert_ne!(value.server_timestamp, Some(DateTime::MIN), "{id}");
            assert_ne!(value.value, Some(Variant::DateTime(DateTime::MIN)), "{id}");
        }
        assert!(variables > 1000);
    }

    #[test]
    fn mandatory_server_members_are_present_with_values() {
        let (server, now) = server();
        let capabilities = child(&server, &ids::SERVER, "ServerCapabilities");
        let status = child(&server, &ids::SERVER, "ServerStatus");
        let diagnostics = child(&server, &ids::SERVER, "ServerDiagnostics");
        let redundancy = child(&server, &ids::SERVER, "ServerRedundancy");
        let mut variables = Vec::new();
        for name in ["ServerArray", "NamespaceArray", "ServiceLevel", "Auditing"] {
            variables.push(child(&server, &ids::SERVER, name));
        }
        for name in ["VendorServerInfo", "ServerRedundancy", "ServerDiagnostics"] {
            child(&server, &ids::SERVER, name);
        }
        for name in [
            "ServerProfileArray",
            "LocaleIdArray",
            "MinSupportedSampleRate",
            "MaxBrowseContinuationPoints",
            "MaxQueryContinuationPoints",
            "MaxHistoryContinuationPoints",
            "SoftwareCertificates",
        ] {
            variables.push(child(&server, &capabilities, name));
        }
        for name in ["ModellingRules", "AggregateFunctions", "OperationLimits"] {
            child(&server, &capabilities, name);
        }
        for name in [
            "StartTime",
            "CurrentTime",
            "State",
            "BuildInfo",
            "SecondsTillShutdown",
            "ShutdownReason",
        ] {
            variables.push(child(&server, &status, name));
        }
        variables.push(child(&server, &diagnostics, "EnabledFlag"));
        variables.push(child(&server, &redundancy, "RedundancySupport"));
        for id in variables {
            let Identifier::Numeric(number) = id.identifier else {
                unreachable!()
            };
            let value = read(&server, now, number, AttributeId::Value);
            assert_ne!(value.value, Some(Variant::Empty), "{id}");
            good(&value);
        }
        let profiles = read(&server, now, 2269, AttributeId::Value);
        assert!(
            matches!(good(&profiles), Variant::Array(a) if a.element_type() == VariantType::String)
        );
        let rules = child(&server, &capabilities, "ModellingRules");
        assert!(
            children(&server, &rules)
                .iter()
                .any(|(n, _)| n == "Mandatory")
        );
    }

    #[test]
    fn method_argument_properties_have_clean_ids() {
        let (mut server, _) = server();
        let namespace = server.add_namespace("urn:test");
        let object = NodeId::numeric(namespace, 5000);
        server
            .address_space
            .add_object(
                &ids::OBJECTS_FOLDER,
                object.clone(),
                QualifiedName::new(namespace, "O"),
            )
            .unwrap();
        for method in [
            NodeId::numeric(namespace, 6000),
            NodeId::string(namespace, "Pump.Start"),
        ] {
            server
                .address_space
                .add_method(
                    &object,
                    method.clone(),
                    QualifiedName::new(namespace, "M"),
                    vec![MethodArgument::new("x", VariantType::UInt32, "")],
                    vec![MethodArgument::new("y", VariantType::UInt32, "")],
                    MethodHandler::Callback(Box::new(|_| Err(StatusCode::BAD_NOT_IMPLEMENTED))),
                )
                .unwrap();
            for name in ["InputArguments", "OutputArguments"] {
                let property = child(&server, &method, name);
                assert_eq!(property.namespace, namespace);
                let Identifier::String(text) = &property.identifier else {
                    panic!("{property}");
                };
                let text = text.as_str().unwrap();
                assert!(!text.contains("ns=") && !text.contains(';'), "{property}");
                assert!(text.ends_with(&format!(".{name}")), "{property}");
                // The textual form parses back to the same NodeId.
                assert_eq!(
                    property.to_string().parse::<NodeId>().ok(),
                    Some(property.clone())
                );
            }
        }
        assert_eq!(
            child(&server, &NodeId::numeric(namespace, 6000), "InputArguments"),
            NodeId::string(namespace, "6000.InputArguments")
        );
    }

    #[test]
    fn server_new_stays_fast() {
        // Loading the table is a few milliseconds in release builds; this bound only catches a
        // pathological regression in the unoptimized test build.
        let started = Instant::now();
        let (server, _) = server();
        let elapsed = started.elapsed();
        assert!(server.address_space.len() > 3000);
        assert!(
            elapsed < Duration::from_secs(2),
            "Server::new took {elapsed:?}"
        );
        eprintln!(
            "Server::new: {elapsed:?} for {} nodes",
            server.address_space.len()
        );
    }
}
