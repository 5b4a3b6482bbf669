//! The sans-IO OPC UA server core: secure channels, sessions, the address space and service handlers.
