//! Integration tests of the engine as a whole: hot reload, and full agent runs against the
//! scripted model server (real HTTP + SSE on 127.0.0.1).

mod api; // the conversation API the front ends call
mod calls; // one gate: typed statuses, call ids, call records
mod citations; // the lead agent searches, reads and cites a real PDF; citations checked
mod context; // context management: budgets, references, notes, refusals
mod deletion; // deleting a conversation while it runs
mod forms; // calls written in a model family's own form (fenced JSON…) run, in both modes
mod guided; // guided calls: the grammar sent, guided calls marked in events and records
mod harness; // a test home: scripted model, local tool server, runner, recording sink
mod limits; // runaway model streams end the run at a limit, partial answer kept
mod model_library; // downloads from a stand-in Hub, resume, errors, import, the catalogue
mod native; // native tool calling: both dialects, repairs, XML kept, switching formats
mod redaction; // a secret echoed in other encodings is masked everywhere
mod reload; // the config watcher: new, broken and fixed files while running
mod rules; // permission rules through the gate: precedence, $host, sub-agents, located errors
mod runs; // full runs: tools, permissions, cancel, sub-agents, limits, dialects
mod skills; // Agent Skills: listing, loading, reading, scripts (approval, environment, limits)
mod tool_check; // the tool-use check: items asked as the run loop asks, scored by rules, kept
mod truncate; // edit-and-resend: history cut at a task, busy errors without raw ids
