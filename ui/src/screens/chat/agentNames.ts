import { createContext, useContext } from "react";

/** How the chat names an agent: its `display_name` when it has one, else its id. */
export const AgentNames = createContext<(agent: string) => string>((agent) => agent);

export function useAgentName(): (agent: string) => string {
  return useContext(AgentNames);
}

/** The naming function for a list of agents. */
export function namer(agents: { name: string; display_name?: string | null }[]) {
  const names = new Map(agents.map((a) => [a.name, a.display_name || a.name]));
  return (agent: string) => names.get(agent) ?? agent;
}
