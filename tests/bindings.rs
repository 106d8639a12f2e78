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

/// Every command the UI can call is allowed to the main window: listed in build.rs (which makes
/// its `allow-…` permission) and granted in the capability file. A command missing from either
/// is refused by Tauri at run time, with nothing failing at build time.
#[test]
fn every_command_in_the_bindings_is_allowed_to_the_window() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    let bindings = read("ui/src/bindings.ts");
    let build = read("src-tauri/build.rs");
    let capability = read("src-tauri/capabilities/main.json");
    let commands: Vec<&str> = bindings
        .split("TAURI_INVOKE(\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert!(commands.len() > 40, "found only {commands:?}");
    let missing: Vec<String> = commands
        .iter()
        .filter(|c| {
            !build.contains(&format!("\"{c}\""))
                || !capability.contains(&format!("\"allow-{}\"", c.replace('_', "-")))
        })
        .map(|c| c.to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "commands not allowed to the window (add them to src-tauri/build.rs and src-tauri/capabilities/main.json): {missing:?}"
    );
}
