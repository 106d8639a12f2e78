import { render, waitFor } from "@testing-library/react";
import { Markdown } from "./Markdown";
import { StreamingMarkdown } from "./StreamingMarkdown";
import { markdownRenderer } from "./markdownLoader";

// Its own file, and the one test file whose setup does not load the renderer first
// (src/test/setup.ts): here it starts unloaded, as in a window that has just opened.
describe("the Markdown renderer, loaded after the window's first frame", () => {
  it("shows the source as plain text until it has loaded, then the rendered Markdown", async () => {
    expect(markdownRenderer()).toBeNull();
    const text = "# Plan\n\nSome **bold** words.\n\n<img src=x onerror=alert(1)>";
    const streamed = render(<StreamingMarkdown text={text} streaming={false} />);
    const whole = render(<Markdown text={text} />);
    for (const { container } of [streamed, whole]) {
      // Nothing is lost meanwhile, and nothing is taken as HTML.
      expect(container.querySelector(".md-plain")?.textContent).toBe(text);
      expect(container.querySelector("h1, strong, img")).toBeNull();
    }
    // Asked for by the components themselves: nobody else loads it in this file.
    for (const { container } of [streamed, whole]) {
      await waitFor(() => expect(container.querySelector("h1")).toHaveTextContent("Plan"));
      expect(container.querySelector("strong")).toHaveTextContent("bold");
      expect(container.querySelector(".md-plain")).toBeNull();
      expect(container.querySelector("img")?.getAttribute("onerror")).toBeFalsy();
    }
    expect(markdownRenderer()).not.toBeNull();
  });
});
