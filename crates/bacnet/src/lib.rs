//! placeholder while the first layer is written
