import { EmptyState } from "../../shell/EmptyState";

export function ChatScreen() {
  return (
    <section className="screen">
      <h1 id="screen-title">Chat</h1>
      <EmptyState title="Conversations are not available in this build yet">
        Running agents needs the engine's run loop and a model profile. Meanwhile you can check
        which tools and agents loaded on the Tools screen, and choose a theme in Settings.
      </EmptyState>
    </section>
  );
}
