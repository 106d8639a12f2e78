// First: the conversation list's page is asked for while the rest of the script loads.
import "./startList";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { preloadHighlighterWhenIdle } from "./components/markdownBlocks";
import { mark } from "./screens/chat/firstPage";
import { applyStoredTheme } from "./theme/theme";
import "./styles.css";

applyStoredTheme();

const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element");
mark("render");
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
preloadHighlighterWhenIdle();
