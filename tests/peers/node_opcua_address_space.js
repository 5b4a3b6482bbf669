// Walks namespace 0 of the endpoint given on the command line with node-opcua (anonymous,
// SecurityPolicy None) and prints what it found as one JSON object: the children of the four
// Types folders, DataType and ValueRank of BaseDataVariableType (i=63), ServerStatus.BuildInfo
// (i=2260) as node-opcua decodes it, the ServerCapabilities members with their values, and the
// NodeId of the throughput method's InputArguments property read back through its text form.
//
// Usage: NODE_PATH=tests/peers/node/node_modules node node_opcua_address_space.js opc.tcp://HOST:PORT/
"use strict";

// node-opcua writes its warnings with console.log: send them to stderr, keep stdout for JSON.
const printJson = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
console.log = console.error;

const {
  AttributeIds,
  BrowseDirection,
  MessageSecurityMode,
  NodeClass,
  OPCUAClient,
  SecurityPolicy,
  resolveNodeId,
} = require("node-opcua");

const TYPES_FOLDERS = { ObjectTypes: 88, VariableTypes: 89, DataTypes: 90, ReferenceTypes: 91 };

function plain(value) {
  if (Array.isArray(value) || ArrayBuffer.isView(value)) {
    return Array.from(value, plain);
  }
  if (value === null || value === undefined) {
    return null;
  }
  if (typeof value === "object") {
    if ("text" in value) {
      return value.text;
    }
    return value.toString();
  }
  return value;
}

async function children(session, nodeId, referenceTypeId = "HierarchicalReferences") {
  const result = await session.browse({
    nodeId,
    referenceTypeId,
    includeSubtypes: true,
    browseDirection: BrowseDirection.Forward,
    resultMask: 63,
  });
  return result.references;
}

async function main(endpoint) {
  const client = OPCUAClient.create({
    endpointMustExist: false,
    securityMode: MessageSecurityMode.None,
    securityPolicy: SecurityPolicy.None,
    connectionStrategy: { maxRetry: 0, initialDelay: 100 },
  });
  const out = {};
  await client.connect(endpoint);
  const session = await client.createSession();
  try {
    out.types_folders = {};
    for (const [name, number] of Object.entries(TYPES_FOLDERS)) {
      const refs = await children(session, `i=${number}`);
      out.types_folders[name] = refs.map((r) => r.browseName.name);
    }
    out.base_object_subtypes = (await children(session, "i=58", "HasSubtype")).length;

    const [dataType, valueRank] = await session.read([
      { nodeId: "i=63", attributeId: AttributeIds.DataType },
      { nodeId: "i=63", attributeId: AttributeIds.ValueRank },
    ]);
    out.i63_data_type = dataType.value.value.toString();
    out.i63_value_rank = valueRank.value.value;

    const buildInfo = await session.read({ nodeId: "i=2260", attributeId: AttributeIds.Value });
    const info = buildInfo.value.value;
    out.build_info_status = buildInfo.statusCode.name;
    out.build_info_type = info && info.constructor ? info.constructor.name : typeof info;
    out.build_info = info
      ? {
          ProductUri: info.productUri,
          ManufacturerName: info.manufacturerName,
          ProductName: info.productName,
          SoftwareVersion: info.softwareVersion,
          BuildNumber: info.buildNumber,
          BuildDate: info.buildDate ? info.buildDate.toISOString() : null,
        }
      : null;

    out.capabilities = {};
    for (const ref of await children(session, "i=2268")) {
      const name = ref.browseName.name;
      if (ref.nodeClass === NodeClass.Variable) {
        const value = await session.read({ nodeId: ref.nodeId, attributeId: AttributeIds.Value });
        out.capabilities[name] = plain(value.value.value);
      } else {
        out.capabilities[name] = NodeClass[ref.nodeClass];
      }
    }

    for (const ref of await children(session, "ns=1;i=6000", "HasProperty")) {
      if (ref.browseName.name !== "InputArguments") {
        continue;
      }
      const text = ref.nodeId.toString();
      const again = resolveNodeId(text);
      out.input_arguments_id = text;
      out.input_arguments_round_trip = again.toString() === text;
      const [nodeClass, value] = await session.read([
        { nodeId: again, attributeId: AttributeIds.NodeClass },
        { nodeId: again, attributeId: AttributeIds.Value },
      ]);
      out.input_arguments_class = NodeClass[nodeClass.value.value];
      out.input_arguments = (value.value.value || []).map((a) => a.name);
    }
  } finally {
    await session.close();
    await client.disconnect();
  }
  printJson(out);
}

main(process.argv[2]).catch((error) => {
  console.error(error);
  process.exit(1);
});
