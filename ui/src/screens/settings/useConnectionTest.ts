import { useCallback, useRef, useState } from "react";
import { commands, type ConnectionTest, type ModelProfile } from "../../bindings";
import { call, errorMessage } from "../../ipc/call";

export type TestState =
  | { kind: "idle" }
  | { kind: "running" }
  | { kind: "done"; result: ConnectionTest }
  | { kind: "failed"; message: string };

/** "Test connection": one request through a profile, with its outcome. */
export function useConnectionTest() {
  const [state, setState] = useState<TestState>({ kind: "idle" });
  const seq = useRef(0);

  const run = useCallback(async (profile: ModelProfile) => {
    const mine = ++seq.current;
    setState({ kind: "running" });
    let next: TestState;
    try {
      next = { kind: "done", result: await call(commands.testProfile(profile)) };
    } catch (e) {
      next = { kind: "failed", message: errorMessage(e) };
    }
    if (mine !== seq.current) return;
    setState(next);
  }, []);

  const fail = useCallback((message: string) => {
    seq.current++;
    setState({ kind: "failed", message });
  }, []);

  const reset = useCallback(() => {
    seq.current++;
    setState({ kind: "idle" });
  }, []);

  return { state, run, fail, reset };
}
