import {
  commands,
  type AppError,
  type ConnectionTest,
  type ConversationSummary,
  type ModelProfile,
  type Result,
  type SettingsView,
} from "../../bindings";

/** A command's result; a transport failure (no backend) becomes an `engine_unavailable` error. */
async function call<T>(run: () => Promise<Result<T, AppError>>): Promise<Result<T, AppError>> {
  try {
    return await run();
  } catch (e) {
    return {
      status: "error",
      error: { code: "engine_unavailable", message: `Cannot reach the backend: ${String(e)}` },
    };
  }
}

/** The Settings screen's commands, each returning a `Result` and never throwing. */
export const settingsIpc = {
  getSettings: (): Promise<Result<SettingsView, AppError>> => call(() => commands.getSettings()),
  saveProfiles: (profiles: ModelProfile[]): Promise<Result<null, AppError>> =>
    call(() => commands.saveProfiles(profiles)),
  testProfile: (profile: ModelProfile): Promise<Result<ConnectionTest, AppError>> =>
    call(() => commands.testProfile(profile)),
  setSecret: (name: string, value: string): Promise<Result<null, AppError>> =>
    call(() => commands.setSecret(name, value)),
  deleteSecret: (name: string): Promise<Result<null, AppError>> =>
    call(() => commands.deleteSecret(name)),
  savePermissionTimeout: (seconds: number): Promise<Result<null, AppError>> =>
    call(() => commands.savePermissionTimeout(seconds)),
  openConfigFolder: (): Promise<Result<null, AppError>> => call(() => commands.openConfigFolder()),
  listConversations: (): Promise<Result<ConversationSummary[], AppError>> =>
    call(() => commands.listConversations(null)),
  revokeAlwaysAllowed: (conversationId: string, tool: string): Promise<Result<null, AppError>> =>
    call(() => commands.revokeAlwaysAllowed(conversationId, tool)),
};
