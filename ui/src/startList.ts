// Imported first by main.tsx, so it runs before the rest of the app's modules are evaluated
// (ES modules run in import order): the list's first page is on its way meanwhile.
import { askFirstPageEarly } from "./screens/chat/firstPage";

askFirstPageEarly();
