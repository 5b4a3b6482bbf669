//! The in-memory entity store: tag indexes, ref graph, filter evaluation, histories.
