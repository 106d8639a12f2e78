import css from "./styles.css?raw";

/** The app's shared style sheet (vite.config.ts lets tests read it), applied to `html`. */
function styled(html: string) {
  const style = document.createElement("style");
  style.textContent = css;
  document.head.append(style);
  document.body.innerHTML = html;
  return style;
}

/** The declarations of the style rules whose selector is exactly `selector`. */
function rulesFor(sheet: CSSStyleSheet, selector: string): CSSStyleDeclaration[] {
  return [...sheet.cssRules]
    .filter((r): r is CSSStyleRule => r instanceof CSSStyleRule && r.selectorText === selector)
    .map((r) => r.style);
}

describe("the shared style sheet", () => {
  afterEach(() => {
    document.head.querySelectorAll("style").forEach((s) => s.remove());
    document.body.innerHTML = "";
  });

  it("gives a URL field the same frame as a text field", () => {
    styled('<input type="text" id="t"><input type="url" id="u">');
    const text = getComputedStyle(document.getElementById("t") as HTMLElement);
    const url = getComputedStyle(document.getElementById("u") as HTMLElement);
    expect(text.paddingTop).toBe("6px");
    for (const p of ["paddingTop", "paddingLeft", "borderRadius", "font"] as const) {
      expect(url[p], p).toBe(text[p]);
    }
  });

  it("marks every summary as a disclosure, ▸ closed and ▾ open, even one laid out as a flex row", () => {
    const style = styled(
      '<div class="tool-row"><details><summary id="s">Server log</summary></details></div>',
    );
    const summary = document.getElementById("s") as HTMLElement;
    // A flex summary (`.tool-row summary`) has no native marker: the sheet draws its own, and
    // hides the native one so no summary shows two.
    expect(getComputedStyle(summary).display).toBe("flex");
    const sheet = style.sheet as CSSStyleSheet;
    expect(
      rulesFor(sheet, "summary").some((d) => d.getPropertyValue("list-style") === "none"),
    ).toBe(true);
    expect(
      rulesFor(sheet, "summary::-webkit-details-marker").some((d) => d.display === "none"),
    ).toBe(true);
    const closed = rulesFor(sheet, "summary::before");
    const open = rulesFor(sheet, "details[open] > summary::before");
    expect(closed.map((d) => d.content)).toContain('"▸"');
    expect(open.map((d) => d.content)).toContain('"▾"');
    // Drawn in a theme colour (light and dark both define it), never a fixed one.
    expect(closed.some((d) => d.color === "var(--muted)")).toBe(true);
  });
  it("narrows the shown sidebar and the conversation list below 960 px, where the app collapses them by default", () => {
    const style = styled("");
    const media = [...(style.sheet as CSSStyleSheet).cssRules].filter(
      (r): r is CSSMediaRule =>
        r instanceof CSSMediaRule && r.media.mediaText === "(max-width: 959px)",
    );
    const inside = media.flatMap((m) =>
      [...m.cssRules].filter((r): r is CSSStyleRule => r instanceof CSSStyleRule),
    );
    const columns = (selector: string) =>
      inside
        .find((r) => r.selectorText === selector)
        ?.style.getPropertyValue("grid-template-columns") ?? "";
    // 180 px + 200 px leave an 800 px window's chat 420 px (it was 300 px).
    expect(columns(".app:not(.collapsed)")).toBe("180px minmax(0, 1fr)");
    expect(columns(".app:not(.collapsed) .chat")).toBe("200px minmax(0, 1fr)");
  });

  it("hides the chat kept behind another screen, and lets that screen scroll", () => {
    styled(
      '<main class="content" id="m"><section class="chat" id="c" hidden></section>' +
        '<div class="screen">Tools</div></main>',
    );
    const chat = document.getElementById("c") as HTMLElement;
    const main = document.getElementById("m") as HTMLElement;
    expect(getComputedStyle(chat).display).toBe("none");
    expect(getComputedStyle(main).overflow).toBe("auto");
    // The chat shown: laid out as its grid, the page's scrolling left to its own panes.
    chat.hidden = false;
    expect(getComputedStyle(chat).display).toBe("grid");
    expect(getComputedStyle(main).overflow).toBe("hidden");
  });

  it("names at most one font family the machine may lack in each font stack", () => {
    // Each named family missing from a Linux machine costs WebKitGTK a fontconfig lookup per
    // text style when it is first drawn (10-16 ms a style for a five-family stack, 40 ms of
    // the first frame); generic families are resolved without one.
    const generic = new Set([
      "system-ui",
      "ui-monospace",
      "ui-sans-serif",
      "ui-serif",
      "sans-serif",
      "serif",
      "monospace",
      "emoji",
      "math",
    ]);
    const stacks = [...css.matchAll(/(?:font-family|--mono):\s*([^;]+);/g)].map((m) =>
      (m[1] ?? "").trim(),
    );
    expect(stacks.length).toBeGreaterThan(3);
    for (const stack of stacks) {
      if (/^var\(--mono\)$/.test(stack)) continue;
      const families = stack.split(",").map((f) => f.trim().replace(/^"|"$/g, ""));
      const named = families.filter((f) => !generic.has(f));
      expect(named.length, stack).toBeLessThanOrEqual(1);
      expect(generic.has(families.at(-1) ?? ""), `${stack} ends with a generic family`).toBe(true);
    }
  });
});
