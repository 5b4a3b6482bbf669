//! The BACnet application layer: the device server and the client, sans-IO where possible.
