// The node-opcua client (npm node-opcua, installed by `scripts/peers.sh node-opcua`) for
// the OPC UA interop tests, in two modes; every line it prints on stdout is JSON.
//
//   node node_opcua_client.js login ENDPOINT none|sign|encrypt PKI_DIR USER PASSWORD
//     Connects (SecurityPolicy None, or Basic256Sha256 with Sign or SignAndEncrypt and a
//     certificate node-opcua creates in PKI_DIR), creates a session as USER with PASSWORD
//     (node-opcua encrypts the password as the server's UserName token policy says), reads
//     ServerStatus.State and prints {"state": N} or {"error": "...", "status": "Bad..."}.
//
//   node node_opcua_client.js outage ENDPOINT NODE_ID SECONDS
//     Subscribes to NODE_ID (publishing 100 ms, sampling 50 ms, queueSize 100, discard
//     oldest) for SECONDS, reconnecting by itself when the connection is cut (node-opcua
//     re-activates its session on the new channel). Prints {"event": "..."} lines for
//     connection events and, at the end, {"values": [[value, source ms], ...],
//     "reconnects": N, "sequence_numbers": [...]} (those of the data messages received).
"use strict";

const path = require("path");
const opcua = require("node-opcua");

function print(object) {
    process.stdout.write(JSON.stringify(object) + "\n");
}

function statusName(error) {
    const match = /Bad[A-Za-z]+/.exec(String(error && error.message));
    return match ? match[0] : null;
}

const MODES = {
    none: [opcua.MessageSecurityMode.None, opcua.SecurityPolicy.None],
    sign: [opcua.MessageSecurityMode.Sign, opcua.SecurityPolicy.Basic256Sha256],
    encrypt: [opcua.MessageSecurityMode.SignAndEncrypt, opcua.SecurityPolicy.Basic256Sha256],
};

async function login(endpoint, mode, pkiDir, userName, password) {
    const [securityMode, securityPolicy] = MODES[mode];
    const clientCertificateManager = new opcua.OPCUACertificateManager({
        rootFolder: path.resolve(pkiDir),
        automaticallyAcceptUnknownCertificate: true,
    });
    await clientCertificateManager.initialize();
    const client = opcua.OPCUAClient.create({
        applicationName: "node-opcua interop",
        applicationUri: "urn:buildwire:test:node-opcua",
        clientCertificateManager,
        securityMode,
        securityPolicy,
        endpointMustExist: false,
        connectionStrategy: { maxRetry: 0, initialDelay: 100, maxDelay: 200 },
        requestedSessionTimeout: 60000,
    });
    try {
        await client.connect(endpoint);
        const session = await client.createSession({
            type: opcua.UserTokenType.UserName,
            userName,
            password,
        });
        const state = await session.read({
            nodeId: "i=2259",
            attributeId: opcua.AttributeIds.Value,
        });
        print({ state: state.value.value, status: state.statusCode.name });
        await session.close();
    } catch (error) {
        print({ error: String(error && error.message), status: statusName(error) });
    } finally {
        await client.disconnect();
    }
}

async function outage(endpoint, nodeId, seconds) {
    const client = opcua.OPCUAClient.create({
        applicationName: "node-opcua outage",
        endpointMustExist: false,
        keepSessionAlive: true,
        requestedSessionTimeout: 60000,
        connectionStrategy: { maxRetry: 100, initialDelay: 200, maxDelay: 500 },
    });
    let reconnects = 0;
    client.on("connection_lost", () => print({ event: "connection_lost" }));
    client.on("connection_reestablished", () => {
        reconnects += 1;
        print({ event: "connection_reestablished" });
    });
    client.on("after_reconnection", () => print({ event: "after_reconnection" }));
    await client.connect(endpoint);
    const session = await client.createSession();
    const subscription = await session.createSubscription2({
        requestedPublishingInterval: 100,
        requestedLifetimeCount: 600,
        requestedMaxKeepAliveCount: 10,
        maxNotificationsPerPublish: 0,
        publishingEnabled: true,
        priority: 1,
    });
    const values = [];
    const item = await subscription.monitor(
        { nodeId, attributeId: opcua.AttributeIds.Value },
        { samplingInterval: 50, queueSize: 100, discardOldest: true },
        opcua.TimestampsToReturn.Both,
    );
    // Each value with its source timestamp (ms): a NotificationMessage the client gets twice
    // (Republish of a message whose acknowledgement was lost with the channel) repeats both.
    item.on("changed", (dataValue) =>
        values.push([dataValue.value.value, dataValue.sourceTimestamp.getTime()]),
    );
    const sequenceNumbers = [];
    subscription.on("raw_notification", (message) =>
        sequenceNumbers.push(message.sequenceNumber),
    );
    print({ event: "subscribed" });
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    print({ values, reconnects, sequence_numbers: sequenceNumbers });
    await subscription.terminate().catch(() => {});
    await session.close().catch(() => {});
    await client.disconnect();
}

async function main() {
    const [command, ...args] = process.argv.slice(2);
    if (command === "login") {
        await login(...args);
    } else if (command === "outage") {
        await outage(args[0], args[1], Number(args[2]));
    } else {
        throw new Error(`unknown command ${command}`);
    }
}

main().then(
    () => process.exit(0),
    (error) => {
        print({ error: String(error && error.stack) });
        process.exit(1);
    },
);
