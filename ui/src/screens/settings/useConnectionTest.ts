import { useCallback, useRef, useState } from "react";
import type { ConnectionTest, ModelProfile } from "../../bindings";
import { settingsIpc } from "./settingsIpc";

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
    const res = await settingsIpc.testProfile(profile);
    if (mine !== seq.current) return;
    setState(
      res.status === "ok"
        ? { kind: "done", result: res.data }
        : { kind: "failed", message: res.error.message },
    );
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
