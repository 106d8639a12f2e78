import type { MouseEvent } from "react";

/** How long a copy button says "Copied" before it reads "Copy" again. */
const COPIED_MS = 1500;

/**
 * The copy buttons of rendered code blocks, handled by one click listener on the Markdown
 * container: the buttons live in sanitised HTML (no handlers of their own), and a block that
 * re-renders gets new buttons that work at once. A button is a real <button>, so Enter and
 * Space click it too. It copies the code's text (the raw code, without highlighting markup).
 */
export function copyCodeOnClick(event: MouseEvent<HTMLElement>) {
  const target = event.target as Element | null;
  const button = target?.closest?.("button.copy-code");
  if (!(button instanceof HTMLButtonElement)) return;
  const code = button.closest(".code-block")?.querySelector("code")?.textContent ?? "";
  const clipboard = globalThis.navigator?.clipboard;
  const show = (label: string) => {
    button.textContent = label;
    globalThis.setTimeout(() => {
      button.textContent = "Copy";
    }, COPIED_MS);
  };
  if (!clipboard) {
    show("Copy failed");
    return;
  }
  clipboard.writeText(code).then(
    () => show("Copied"),
    () => show("Copy failed"),
  );
}
