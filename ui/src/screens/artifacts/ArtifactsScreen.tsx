import { EmptyState } from "../../shell/EmptyState";

export function ArtifactsScreen() {
  return (
    <section className="screen">
      <h1 id="screen-title">Artifacts</h1>
      <EmptyState title="The artifact library is not available in this build yet">
        Every document your agents write will be listed here, searchable across conversations.
      </EmptyState>
    </section>
  );
}
