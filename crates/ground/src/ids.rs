//! Ids for calls, requests and rows: short, unique within the process and across restarts,
//! readable in logs. Not secrets.

/// A short unique id made of `prefix`, the time in microseconds and a process-wide counter
/// (`call_18a3f…0001`).
pub fn new_id(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or(0);
    format!("{prefix}_{t:x}{n:04x}")
}

/// 12 random hex digits (from the OS, or the clock and pid when it has none).
pub fn random_hex12() -> String {
    let mut bytes = [0u8; 6];
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let mixed = (nanos as u64 ^ std::process::id() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        bytes.copy_from_slice(&mixed.to_le_bytes()[..6]);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_keep_their_prefix_and_never_repeat() {
        let ids: std::collections::BTreeSet<String> =
            (0..1000).map(|_| super::new_id("call")).collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(|id| id.starts_with("call_")));
    }
}
