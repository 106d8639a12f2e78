fn main() {
    // build.rs lives in src-tauri/ while the package root is the repository root, so the
    // capability path must be given explicitly, or capabilities are silently ignored.
    let attributes = tauri_build::Attributes::new()
        .capabilities_path_pattern("./src-tauri/capabilities/**/*")
        .app_manifest(tauri_build::AppManifest::new().commands(artifactflow_commands()));
    tauri_build::try_build(attributes).expect("tauri-build failed");
}

/// Every command the web view may invoke; each gets an `allow-<name>` permission that the
/// capability files grant explicitly.
fn artifactflow_commands() -> &'static [&'static str] {
    &[
        "next_events",
        "hold_window_close",
        "get_status",
        "reload_config",
        "list_agents",
        "list_conversations",
        "list_conversation_page",
        "get_conversation",
        "rename_conversation",
        "delete_conversation",
        "start_run",
        "cancel_run",
        "truncate_conversation",
        "answer_permission",
        "answer_elicitation",
        "list_permission_grants",
        "delete_permission_grant",
        "get_artifact",
        "get_artifact_bytes",
        "list_tools",
        "list_artifacts",
        "artifact_versions",
        "get_artifact_version",
        "delete_artifact",
        "get_settings",
        "save_profiles",
        "test_profile",
        "list_models",
        "discover_context_window",
        "set_secret",
        "delete_secret",
        "save_permission_timeout",
        "list_permission_rules",
        "save_global_permission_rules",
        "open_config_folder",
        "cancel_tool_test",
        "export_artifact",
        "export_conversation",
        "list_config_files",
        "read_config_file",
        "save_config_file",
        "set_config_file_enabled",
        "delete_config_file",
        "tool_template",
        "import_openapi",
        "check_tool_draft",
        "check_agent_draft",
        "test_tool_draft",
        "get_app_info",
        "save_update_url",
        "check_for_updates",
        "install_update",
        "open_project_link",
        "open_external",
        "mcp_servers",
        "mcp_server_tools",
        "mcp_server_config",
        "mcp_save_servers",
        "mcp_remove_server",
        "mcp_set_disabled",
        "mcp_restart",
        "mcp_test_tool",
        "mcp_sign_in",
        "mcp_sign_out",
    ]
}
