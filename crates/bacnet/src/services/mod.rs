//! Confirmed and unconfirmed service parameters (Clauses 13-16), one file per service.
