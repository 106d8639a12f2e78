import { createContext, useContext, useState, type ReactNode } from "react";
import { commands } from "../../bindings";
import { call } from "../../ipc/call";
import { useEngineEvents } from "../../ipc/useEngineEvents";
import { ChatStore } from "./chatStore";

const ChatStoreContext = createContext<ChatStore | null>(null);

/** Holds the conversations' live state for the whole app and feeds it every engine event,
 * whichever screen is shown. */
export function ChatStoreProvider({ children }: { children: ReactNode }) {
  const [store] = useState(
    () =>
      new ChatStore(async (id, agent, task) => {
        await call(commands.startRun(id, agent, task));
      }),
  );
  useEngineEvents((event) => store.apply(event));
  return <ChatStoreContext.Provider value={store}>{children}</ChatStoreContext.Provider>;
}

export function useChatStore(): ChatStore {
  const store = useContext(ChatStoreContext);
  if (store === null) throw new Error("useChatStore needs a ChatStoreProvider above it");
  return store;
}
