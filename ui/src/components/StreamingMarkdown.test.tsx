import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { Lexer } from "marked";
import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/common";
import { StreamingMarkdown } from "./StreamingMarkdown";
import { fenceClosed, loadHighlighter } from "./markdownBlocks";
import { BlockSplitter, renderMarkdown } from "./markdownRender";

/** Inputs where block boundaries are easy to get wrong. */
const CORPUS: Record<string, string> = {
  paragraphs:
    "First paragraph with **bold** and `code`.\n\nSecond\nline two.\n\n\nThird after two blank lines.",
  headings: "# One\n\nSetext\n===\n\nText\n---\n\n## Two ##\ntext right after",
  "fence not closed": "Intro.\n\n```python\ndef f():\n    return 1\n\nprint(f())\n",
  fences:
    "```js\nconst a = 1;\n```\n\n~~~rust\nfn main() {}\n~~~\n\n```\nno language\n```\n\n```nosuchlang\nplain <b>text</b>\n```\nAfter.",
  "nested fences":
    "````markdown\nOuter\n```js\ninner();\n```\nstill outer\n````\n\n~~~\n```\nnot a close\n~~~\n\n```\n~~~\nstill code\n```\nend",
  "fence in a list":
    "1. Step one:\n\n   ```sh\n   make\n   ```\n\n2. Step two\n3. Step three\n\nDone.",
  lists:
    "- a\n- b\n  - nested\n  - nested 2\n- c\n\n- loose after blank\n\nParagraph.\n\n3. three\n4. four\n\n* star\n+ plus\n\n- [ ] task\n- [x] done",
  tables:
    "| Name | Value | Note |\n|:-----|------:|:----:|\n| a | 1 | x |\n| b | 22 | `y` |\n\nAfter the table.\n\nA | B\n--|--\n1 | 2\n3 | 4",
  "reference links":
    'See [the docs][d], [x] and [missing][].\n\n- a [d] item\n\n[d]: https://docs.example/a\n[x]: https://x.example "X title"\n\nLater [d].',
  "reference defined twice":
    "[a]\n\n[a]: https://first.example\n\ntext\n\n[a]: https://second.example\n\n[a]",
  quotes: "> quoted\nlazy line\n> > nested\n\n> another\n\nafter",
  "indented code": "Para.\n\n    code line\n\n    more code\n\nback",
  "hr and breaks": "a  \nb\n\n***\n\n___\n\n- - -\n\nend",
  "list then a number":
    "- a\n- b\n\n2\n\n1. x\n2. y\n\n10\n\n11. eleven\n\n-\n\ntext\n\n> q\n\n>\n\nend",
  crlf: "Windows\r\nlines\r\n\r\n```js\r\nx();\r\n```\r\n",
};

/** A seeded random generator, so a failure can be replayed. */
function rng(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

/** The text cut into token-sized pieces (1 to 12 characters). */
function chunks(text: string, seed: number): string[] {
  const random = rng(seed);
  const out: string[] = [];
  for (let i = 0; i < text.length;) {
    const n = 1 + Math.floor(random() * 12);
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

/** HTML compared as the DOM it builds, without whitespace between top-level elements. */
function normalize(html: string): string {
  const t = document.createElement("template");
  t.innerHTML = html;
  for (const node of Array.from(t.content.childNodes)) {
    if (node.nodeType === Node.TEXT_NODE && !node.textContent?.trim()) node.remove();
  }
  return t.innerHTML;
}

function shown(container: HTMLElement): string {
  const root = container.querySelector(".markdown");
  return normalize(
    Array.from(root?.children ?? [])
      .map((b) => b.innerHTML)
      .join(""),
  );
}

// Streaming a text batch by batch through React is slow in jsdom when the machine is busy.
describe("StreamingMarkdown", { timeout: 30_000 }, () => {
  // highlight.js loads when the first closed fence needs it (see lazyHighlight.test.tsx);
  // these cases check the rendering with it loaded.
  beforeAll(() => loadHighlighter());

  it.each(Object.entries(CORPUS))(
    "renders %s in random chunks exactly as a full render, at every step",
    (_name, text) => {
      for (const seed of [1, 42]) {
        let sofar = "";
        const { container, rerender, unmount } = render(<StreamingMarkdown text="" streaming />);
        for (const piece of chunks(text, seed)) {
          sofar += piece;
          rerender(<StreamingMarkdown text={sofar} streaming />);
          expect(shown(container)).toBe(normalize(renderMarkdown(sofar)));
        }
        rerender(<StreamingMarkdown text={sofar} streaming={false} />);
        expect(shown(container)).toBe(normalize(renderMarkdown(text)));
        unmount();
      }
    },
  );

  it("lexes a streamed answer in time linear in its length", () => {
    const lexedFor = (parts: number) => {
      const text = Array.from(
        { length: parts },
        (_, i) =>
          `## Part ${i}\n\nSome prose for part ${i}.\n\n\`\`\`js\nconst v${i} = ${i};\n\`\`\`\n`,
      ).join("\n");
      const lex = vi.spyOn(Lexer.prototype, "lex");
      const { rerender, unmount } = render(<StreamingMarkdown text="" streaming />);
      let sofar = "";
      for (const piece of chunks(text, 3)) {
        sofar += piece;
        rerender(<StreamingMarkdown text={sofar} streaming />);
      }
      const lexed = lex.mock.calls.reduce((sum, [src]) => sum + src.length, 0);
      lex.mockRestore();
      unmount();
      return lexed;
    };
    // Twice the text, about twice the work (rendering it whole at every batch: four times).
    const ratio = lexedFor(40) / lexedFor(20);
    expect(ratio).toBeGreaterThan(1.5);
    expect(ratio).toBeLessThan(2.6);
  });

  it("does not render finished blocks again when text arrives, and keeps their DOM", () => {
    const text = "# Title\n\nFirst paragraph.\n\n```js\nlet a = 1;\n```\n\nGrowing";
    const { container, rerender } = render(<StreamingMarkdown text={text} streaming />);
    const first = container.querySelector(".md-block");
    const button = container.querySelector("button.copy-code");
    const sanitize = vi.spyOn(DOMPurify, "sanitize");
    rerender(<StreamingMarkdown text={`${text} tail`} streaming />);
    rerender(<StreamingMarkdown text={`${text} tail and more`} streaming />);
    // Only the growing paragraph was rendered, once per batch.
    expect(sanitize).toHaveBeenCalledTimes(2);
    sanitize.mockRestore();
    expect(container.querySelector(".md-block")).toBe(first);
    expect(container.querySelector("button.copy-code")).toBe(button);
    expect(container.textContent).toContain("Growing tail and more");
  });

  it("renders a block again when a link definition it uses arrives later", () => {
    const { container, rerender } = render(
      <StreamingMarkdown text={"Read [the guide][g].\n\nMore text.\n\n"} streaming />,
    );
    expect(container.querySelector("a")).toBeNull();
    rerender(
      <StreamingMarkdown
        text={"Read [the guide][g].\n\nMore text.\n\n[g]: https://guide.example/"}
        streaming
      />,
    );
    expect(container.querySelector("a")).toHaveAttribute("href", "https://guide.example/");
  });

  it("highlights each code block once, when its fence closes, with its declared language only", () => {
    const nonce = Math.random().toString(36).slice(2);
    const blocks = Array.from(
      { length: 10 },
      (_, i) => `\`\`\`${i % 2 ? "python" : "js"}\nx_${nonce}_${i} = ${i}\n\`\`\`\n\nText ${i}.\n`,
    );
    const text = `${blocks.join("\n")}\n\`\`\`\nno language ${nonce}\n\`\`\`\n\n\`\`\`klingon\nqapla ${nonce}\n\`\`\`\n`;
    const highlight = vi.spyOn(hljs, "highlight");
    const auto = vi.spyOn(hljs, "highlightAuto");
    const { container, rerender } = render(<StreamingMarkdown text="" streaming />);
    let sofar = "";
    for (const piece of chunks(text, 11)) {
      sofar += piece;
      rerender(<StreamingMarkdown text={sofar} streaming />);
      // A fence still open shows plain text.
      const open = !fenceClosed(sofar.slice(sofar.lastIndexOf("```")));
      if (open && sofar.split("```").length % 2 === 0) {
        const codes = container.querySelectorAll("code");
        expect(codes[codes.length - 1]?.querySelector("span")).toBeNull();
      }
    }
    rerender(<StreamingMarkdown text={sofar} streaming={false} />);
    expect(highlight).toHaveBeenCalledTimes(10);
    expect(auto).not.toHaveBeenCalled();
    highlight.mockRestore();
    auto.mockRestore();
    expect(
      container.querySelectorAll(
        "code.language-js .hljs-keyword, code.language-python .hljs-number",
      ).length,
    ).toBeGreaterThan(0);
    const plain = Array.from(container.querySelectorAll("code")).filter((c) =>
      /no language|qapla/.test(c.textContent ?? ""),
    );
    expect(plain).toHaveLength(2);
    for (const c of plain) expect(c.querySelector("span")).toBeNull();
  });

  it("strips scripts, handlers, styles and frames even when they arrive split across batches", () => {
    const text =
      "Hi <scr" +
      'ipt>alert(1)</script> there\n\n<img src=x onerror="alert(2)">\n\n' +
      '<p style="color:red" onclick="x()">styled</p>\n\n<style>body{display:none}</style>\n\n' +
      '<iframe src="https://evil.example"></iframe>\n\n[link](javascript:alert(3))\n\n' +
      "<div>\n\n*inside a div*\n\n</div>\n\nend";
    for (const seed of [2, 5]) {
      const { container, rerender, unmount } = render(<StreamingMarkdown text="" streaming />);
      let sofar = "";
      const check = () => {
        const root = container.querySelector(".markdown") as HTMLElement;
        expect(root.querySelector("script, style, iframe, form, object, embed")).toBeNull();
        for (const el of Array.from(root.querySelectorAll("*"))) {
          const attrs = el.getAttributeNames();
          expect(attrs.filter((a) => a.startsWith("on") || a === "style")).toEqual([]);
          expect(el.getAttribute("href") ?? "").not.toMatch(/^\s*javascript:/i);
          expect(el.getAttribute("src") ?? "").not.toMatch(/^\s*javascript:/i);
        }
      };
      for (const piece of chunks(text, seed)) {
        sofar += piece;
        rerender(<StreamingMarkdown text={sofar} streaming />);
        check();
      }
      rerender(<StreamingMarkdown text={sofar} streaming={false} />);
      check();
      // Raw HTML spanning blocks: the final render is the full one.
      expect(shown(container)).toBe(normalize(renderMarkdown(text)));
      unmount();
    }
  });

  it("copies a code block's raw code with its button, by click or keyboard, after more text streamed", async () => {
    const user = userEvent.setup();
    const code = 'if (a < b && c) {\n  say("hi");\n}';
    const text = `Look:\n\n\`\`\`js\n${code}\n\`\`\`\n\nMore`;
    const { rerender } = render(<StreamingMarkdown text={text} streaming />);
    rerender(<StreamingMarkdown text={`${text} text`} streaming />);
    const button = screen.getByRole("button", { name: "Copy code" });
    await user.click(button);
    await waitFor(() => expect(button).toHaveTextContent("Copied"));
    expect(await navigator.clipboard.readText()).toBe(code);

    await navigator.clipboard.writeText("");
    rerender(<StreamingMarkdown text={`${text} text and more`} streaming />);
    button.focus();
    await user.keyboard("{Enter}");
    await waitFor(async () => expect(await navigator.clipboard.readText()).toBe(code));
  });
});

describe("BlockSplitter", () => {
  it("keeps blocks finished and starts over when the text is replaced", () => {
    const splitter = new BlockSplitter();
    const a = splitter.split("# A\n\npara\n\n- x\n- y");
    expect(a.blocks.map((b) => b.raw.trim())).toEqual(["# A", "para", "- x\n- y"]);
    expect(a.stable).toBe(1);
    const b = splitter.split("# A\n\npara\n\n- x\n- y\n- z\n\n| t |\n|---|\n| 1 |");
    expect(b.blocks.map((x) => x.raw.trim())).toEqual([
      "# A",
      "para",
      "- x\n- y\n- z",
      "| t |\n|---|\n| 1 |",
    ]);
    const c = splitter.split("Something else");
    expect(c.blocks.map((x) => x.raw)).toEqual(["Something else"]);
  });

  it("knows an open fence from a closed one", () => {
    expect(fenceClosed("```js\ncode\n```\n")).toBe(true);
    expect(fenceClosed("```js\ncode\n")).toBe(false);
    expect(fenceClosed("```js\n")).toBe(false);
    expect(fenceClosed("````\n```\n")).toBe(false);
    expect(fenceClosed("~~~\n```\n")).toBe(false);
    expect(fenceClosed("~~~\ncode\n~~~~\n")).toBe(true);
    expect(fenceClosed("    indented\n")).toBe(true);
  });
});
