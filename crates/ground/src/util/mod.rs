//! Small helpers shared across the engine, below every concern that uses them.

pub mod fs;
pub mod names;
pub mod url;
