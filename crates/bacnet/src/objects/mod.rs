//! Objects (Clause 12): the object database a device serves.
