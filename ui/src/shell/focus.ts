/** Is `target` a place where keys type text (so "?" is a character, not a shortcut)? */
export function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return (
    target.isContentEditable ||
    target instanceof HTMLTextAreaElement ||
    target instanceof HTMLSelectElement ||
    (target instanceof HTMLInputElement &&
      !["button", "checkbox", "radio", "submit", "reset"].includes(target.type))
  );
}

/**
 * Focus (and scroll to) the element `selector` finds as soon as it is shown: screens load their
 * content after they mount, so it may not be there yet. A `<details>` row (a tool) is opened
 * and its summary focused; an element inside content hidden while the next screen loads does not
 * count. Gives up after `timeoutMs`.
 */
export function focusWhenShown(selector: string, timeoutMs = 5000): void {
  const found = () => {
    // Not in content React keeps hidden (`display: none`) while a new screen loads.
    const el = [...document.querySelectorAll<HTMLElement>(selector)].find(
      (e) => !e.closest('[style*="display: none"]'),
    );
    if (!el) return false;
    el.scrollIntoView?.({ block: "nearest" });
    if (el instanceof HTMLDetailsElement) {
      el.open = true;
      el.querySelector<HTMLElement>("summary")?.focus();
    } else el.focus();
    return true;
  };
  // After React has committed the state change that shows it (a screen being replaced still
  // shows the old element until then).
  window.setTimeout(() => {
    if (found()) return;
    const observer = new MutationObserver(() => {
      if (found()) stop();
    });
    const timer = window.setTimeout(() => stop(), timeoutMs);
    const stop = () => {
      observer.disconnect();
      window.clearTimeout(timer);
    };
    observer.observe(document.body, { childList: true, subtree: true });
  }, 0);
}

/**
 * Give the focus back to `el` (a button disabled while its action ran) once React has enabled it
 * again, when the focus was lost meanwhile: a browser drops the focus of an element being
 * disabled to the page's body, where a keyboard user would have to start over. A focus moved
 * elsewhere stays where it is.
 */
export function refocusIfLost(el: HTMLElement | null): void {
  window.setTimeout(() => {
    const active = document.activeElement;
    if (active === null || active === document.body) el?.focus();
  }, 0);
}
