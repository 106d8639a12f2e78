import { Spinner } from "../../components/Spinner";
import type { TestState } from "./useConnectionTest";

/** The outcome of "Test connection": a spinner while it runs, then the reply or the error. */
export function ConnectionTestResult({ state }: { state: TestState }) {
  switch (state.kind) {
    case "idle":
      return <p className="test-result" role="status" aria-live="polite" />;
    case "running":
      return (
        <p className="test-result" role="status" aria-live="polite" aria-busy="true">
          <Spinner /> Testing the connection…
        </p>
      );
    case "done":
      return state.result.ok ? (
        <p className="test-result test-ok" role="status" aria-live="polite">
          <span aria-hidden="true">✓ </span>
          Connected in {state.result.latency_ms} ms
          {state.result.message && (
            <>
              {" "}
              — the model replied “<span className="test-reply">{state.result.message}</span>”
            </>
          )}
        </p>
      ) : (
        <p className="test-result test-failed" role="alert">
          <span aria-hidden="true">✗ </span>
          Connection failed after {state.result.latency_ms} ms: {state.result.message}
        </p>
      );
    case "failed":
      return (
        <p className="test-result test-failed" role="alert">
          <span aria-hidden="true">✗ </span>
          {state.message}
        </p>
      );
  }
}
