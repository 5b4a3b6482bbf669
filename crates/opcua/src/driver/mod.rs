//! Thin tokio drivers around the sans-IO server and client cores.
