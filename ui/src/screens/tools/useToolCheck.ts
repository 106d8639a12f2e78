import { useEffect, useState } from "react";
import { commands, type ToolCheck } from "../../bindings";
import { call, errorMessage } from "../../ipc/call";
import { useStatusChanged } from "../../ipc/useEngineEvents";

/** The backend's check of a draft (the loader's own errors, secrets, instructions),
 * re-run 250 ms after the text stops changing and whenever the config folder reloads. */
export function useToolCheck(path: string | null, text: string) {
  const [check, setCheck] = useState<ToolCheck | null>(null);
  const [generation, setGeneration] = useState(0);
  useStatusChanged(() => setGeneration((g) => g + 1));
  useEffect(() => {
    let alive = true;
    const timer = window.setTimeout(() => {
      void call(commands.checkToolDraft(path, text)).then(
        (check) => alive && setCheck(check),
        (e: unknown) =>
          alive &&
          setCheck({
            name: null,
            errors: [{ file: path ?? "", line: null, field: null, message: errorMessage(e) }],
            instructions: null,
            secrets: [],
            permission: null,
          }),
      );
    }, 250);
    return () => {
      alive = false;
      window.clearTimeout(timer);
    };
  }, [path, text, generation]);
  return check;
}
