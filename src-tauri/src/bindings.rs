//! The typed IPC surface: every command and event, from which `ui/src/bindings.ts` is generated.

use specta_typescript::Typescript;
use tauri_specta::{collect_commands, Builder};

use crate::{commands, links};

/// The command and event registry shared by the app and the bindings generator.
pub fn builder() -> Builder<tauri::Wry> {
    Builder::<tauri::Wry>::new()
        .commands(collect_commands![
            commands::next_events,
            commands::hold_window_close,
            commands::get_status,
            commands::reload_config,
            commands::chat::list_agents,
            commands::chat::list_conversations,
            commands::chat::list_conversation_page,
            commands::chat::get_conversation,
            commands::chat::rename_conversation,
            commands::chat::delete_conversation,
            commands::chat::start_run,
            commands::chat::cancel_run,
            commands::chat::truncate_conversation,
            commands::chat::answer_permission,
            commands::chat::answer_elicitation,
            commands::chat::list_permission_grants,
            commands::chat::delete_permission_grant,
            commands::artifacts::get_artifact,
            commands::tools::list_tools,
            commands::mcp::mcp_servers,
            commands::mcp::mcp_server_tools,
            commands::mcp::mcp_server_config,
            commands::mcp::mcp_save_servers,
            commands::mcp::mcp_remove_server,
            commands::mcp::mcp_set_disabled,
            commands::mcp::mcp_restart,
            commands::mcp::mcp_test_tool,
            commands::mcp::mcp_sign_in,
            commands::mcp::mcp_sign_out,
            commands::views::mcp_view_open,
            commands::views::mcp_view_call,
            commands::views::mcp_view_cancel,
            commands::views::mcp_view_unmute,
            commands::artifacts::list_artifacts,
            commands::artifacts::artifact_versions,
            commands::artifacts::get_artifact_version,
            commands::artifacts::get_artifact_bytes,
            commands::artifacts::delete_artifact,
            commands::settings::get_settings,
            commands::settings::save_profiles,
            commands::settings::test_profile,
            commands::settings::list_models,
            commands::settings::discover_context_window,
            commands::settings::profile_tool_mode,
            commands::settings::set_secret,
            commands::settings::delete_secret,
            commands::settings::save_permission_timeout,
            commands::settings::list_permission_rules,
            commands::settings::save_global_permission_rules,
            commands::settings::open_config_folder,
            commands::editor::cancel_tool_test,
            commands::artifacts::export_artifact,
            commands::export::export_conversation,
            commands::editor::list_config_files,
            commands::editor::read_config_file,
            commands::editor::save_config_file,
            commands::editor::set_config_file_enabled,
            commands::editor::delete_config_file,
            commands::editor::tool_template,
            commands::editor::import_openapi,
            commands::editor::cancel_openapi_import,
            commands::editor::check_tool_draft,
            commands::editor::check_agent_draft,
            commands::editor::test_tool_draft,
            commands::models::models_list,
            commands::models::models_catalog,
            commands::models::models_search,
            commands::models::models_files,
            commands::models::models_pull,
            commands::models::models_pause,
            commands::library::library_add,
            commands::library::library_cancel,
            commands::models::models_import,
            commands::models::models_remove,
            commands::models::open_models_folder,
            commands::model_check::models_checks,
            commands::model_check::models_check_start,
            commands::model_check::models_check_cancel,
            commands::skills::skills_list,
            commands::skills::skills_show,
            commands::skills::skills_read_file,
            commands::skills::skills_import,
            commands::skills::skills_set_enabled,
            commands::skills::skills_set_user_folders,
            commands::skills::open_skills_folder,
            commands::app_info::get_app_info,
            commands::app_info::save_update_url,
            commands::app_info::check_for_updates,
            commands::app_info::install_update,
            commands::app_info::open_project_link,
            links::open_external,
        ])
        .typ::<engine::events::EngineEvent>()
}

/// Render the TypeScript bindings as text.
pub fn typescript() -> Result<String, String> {
    let dir = std::env::temp_dir().join(format!("artifactflow-bindings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join("bindings.ts");
    builder()
        .export(
            Typescript::default()
                .header("// Generated from Rust by tauri-specta (src-tauri/src/bindings.rs). Do not edit.\n// Regenerate: UPDATE_BINDINGS=1 cargo test --test bindings\n/* eslint-disable */\n// @ts-nocheck\n")
                .bigint(specta_typescript::BigIntExportBehavior::Number),
            &file,
        )
        .map_err(|e| e.to_string())?;
    let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(text)
}
