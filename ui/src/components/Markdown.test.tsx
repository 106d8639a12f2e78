import { renderMarkdown } from "./markdownRender";
import { loadHighlighter } from "./markdownBlocks";

describe("renderMarkdown", () => {
  beforeAll(() => loadHighlighter());

  it("renders Markdown and highlights code", () => {
    const html = renderMarkdown("# Title\n\n**bold**\n\n```rust\nfn main() {}\n```");
    expect(html).toContain("<h1>Title</h1>");
    expect(html).toContain("<strong>bold</strong>");
    expect(html).toContain('class="hljs-keyword"');
  });

  it("removes scripts, handlers and javascript: links from model output", () => {
    const html = renderMarkdown(
      '<script>alert(1)</script><img src=x onerror="alert(2)"><a href="javascript:alert(3)">x</a>',
    );
    expect(html).not.toContain("<script");
    expect(html).not.toContain("onerror");
    expect(html).not.toContain("javascript:");
  });
});
