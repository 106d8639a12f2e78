//! `ui/src/bindings.ts` must be exactly what the Rust command and event definitions generate.
//! Regenerate with `UPDATE_BINDINGS=1 cargo test --test bindings`.

#[test]
fn typescript_bindings_are_current() {
    let generated = artifactflow_desktop::bindings::typescript().expect("export bindings");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/src/bindings.ts");
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "ui/src/bindings.ts is out of date with the Rust commands/events; run `UPDATE_BINDINGS=1 cargo test --test bindings` and commit the result"
    );
}
