//! Integration tests of the engine as a whole: hot reload, and full agent runs against the
//! scripted model server (real HTTP + SSE on 127.0.0.1).

mod reload; // the config watcher: new, broken and fixed files while running
