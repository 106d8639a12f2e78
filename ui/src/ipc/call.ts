import type { AppError, ErrorCode, Result } from "../bindings";

/** Codes of failures that never reached a command: the IPC bridge itself failed. */
export type IpcErrorCode = ErrorCode | "transport";

/**
 * A failed command, as one typed error: the shell's `{ code, message }`, or `transport` when
 * the call never got an answer (the bridge threw). Screens react to `code`, show `message`.
 */
export class IpcError extends Error {
  readonly code: IpcErrorCode;

  constructor(code: IpcErrorCode, message: string) {
    super(message);
    this.name = "IpcError";
    this.code = code;
  }
}

/**
 * The value of a command, or a thrown {@link IpcError}. Every screen calls commands through
 * this, so a failure is handled in one way: an error returned by the shell keeps its code, and
 * a bridge that rejects becomes an error too instead of an unhandled rejection.
 */
export async function call<T>(pending: Promise<Result<T, AppError>>): Promise<T> {
  let res: Result<T, AppError>;
  try {
    res = await pending;
  } catch (e) {
    throw new IpcError("transport", `the app's backend did not answer: ${describe(e)}`);
  }
  if (res.status === "ok") return res.data;
  if (!isAppError(res.error)) {
    // Rejected by Tauri itself, not by the command (e.g. a command the window's capability
    // does not allow): a bare string, which would otherwise surface as an empty message.
    throw new IpcError("transport", `the app's backend refused the call: ${describe(res.error)}`);
  }
  throw new IpcError(res.error.code, res.error.message);
}

function isAppError(e: unknown): e is AppError {
  return (
    typeof e === "object" &&
    e !== null &&
    typeof (e as AppError).code === "string" &&
    typeof (e as AppError).message === "string"
  );
}

/** The message of an error a screen caught (an IpcError, or anything else thrown). */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : describe(e);
}

function describe(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === "string") return e;
  try {
    return JSON.stringify(e);
  } catch {
    return String(e);
  }
}

/** Run a command for its effect: null when it succeeded, else its {@link IpcError}. */
export async function attempt(
  pending: Promise<Result<unknown, AppError>>,
): Promise<IpcError | null> {
  try {
    await call(pending);
    return null;
  } catch (e) {
    return e instanceof IpcError ? e : new IpcError("transport", errorMessage(e));
  }
}
