import { render, waitFor } from "@testing-library/react";
import { StreamingMarkdown } from "./StreamingMarkdown";
import { highlighter, highlighterRequested } from "./markdownBlocks";
import { renderMarkdown } from "./markdownRender";

// Its own file: highlight.js starts unloaded here (each test file has its own modules).
describe("highlight.js, loaded when the first closed code fence needs it", () => {
  it("is not loaded for prose, an open fence or a fence without a language", () => {
    const text = "# Title\n\nSome *prose*.\n\n```\nno language\n```\n\n```js\nstill open();\n";
    const { container } = render(<StreamingMarkdown text={text} streaming />);
    expect(container.querySelector("h1")).toHaveTextContent("Title");
    expect(highlighterRequested()).toBe(false);
    expect(highlighter()).toBeNull();
  });

  it("loads with the first closed fence, which shows plain code until then and is highlighted after", async () => {
    const open = "Intro.\n\n```python\ndef f():\n    return 1\n";
    const { container, rerender } = render(<StreamingMarkdown text={open} streaming />);
    expect(highlighterRequested()).toBe(false);
    const text = `${open}\`\`\`\n\nAfter.`;
    rerender(<StreamingMarkdown text={text} streaming />);
    expect(highlighterRequested()).toBe(true);
    // Readable meanwhile, then highlighted without more text arriving.
    expect(container.querySelector("code.language-python")).toHaveTextContent("def f():");
    await waitFor(() =>
      expect(container.querySelector("code.language-python .hljs-keyword")).toHaveTextContent(
        "def",
      ),
    );
    // As a full render with highlight.js loaded.
    const shown = [...container.querySelectorAll(".md-block")].map((b) => b.innerHTML).join("");
    const full = document.createElement("div");
    full.innerHTML = renderMarkdown(text);
    expect(shown.replace(/\n/g, "")).toBe(full.innerHTML.replace(/\n/g, ""));
  });
});
