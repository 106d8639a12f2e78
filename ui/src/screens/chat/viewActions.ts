import { createContext } from "react";

/** What a chat lets the MCP views in its tool cards do (MCP Apps), each after the person
 * agreed in the card. Absent outside a chat: a view's requests are then refused. */
export interface ViewActions {
  /** Send `text` to the conversation's agent as the next message (queued while a run goes
   * on). False when nothing was sent. */
  send: (text: string) => Promise<boolean>;
}

export const ViewActionsContext = createContext<ViewActions | null>(null);

/** The message a view asked to send, as the conversation shows it and the model reads it:
 * marked as the view's, not typed by the person. */
export function fromView(server: string, text: string): string {
  return `(Sent from the view of ${server}, with your approval)\n${text}`;
}
