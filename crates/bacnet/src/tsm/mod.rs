//! Transaction state machines (Clause 5.4): client and server, segmentation, sans-IO.
