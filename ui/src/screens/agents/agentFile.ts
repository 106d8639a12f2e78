/** The file a new agent starts from. */
export const NEW_AGENT = `---
name: new_agent
description: "What this agent does, in one line (other agents read it before handing over)"
model: default
tools:
  create_artifact: auto
  read_artifact: auto
max_tool_rounds: 10
---

You are … Describe the agent's role, how it should work and what it should answer with.
`;
