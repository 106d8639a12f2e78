//! Artifact benchmarks (being written).
fn main() {}
