//! The sans-IO OPC UA client core: channel, session and request correlation.
