import { describe, expect, it } from "vitest";

// The window's first script is every module `main.tsx` reaches through static imports: the
// browser parses all of it before the first frame. Packages only some conversations need are
// loaded with `import()` when they are needed. The MCP Apps SDK (with its schema library) was
// 280 kB of a 700 kB first script once, for a view most chats never show.

/** Packages the first script must not carry, and why. */
const LATER = [
  { name: "@modelcontextprotocol/", why: "an MCP App's view loads it (ToolCard's lazy McpView)" },
  { name: "zod", why: "the MCP Apps SDK's schemas" },
  { name: "marked", why: "the Markdown renderer loads after the first frame (loadMarkdown)" },
  { name: "dompurify", why: "the Markdown renderer's sanitiser, loaded with it" },
];

/** Every module's source by its path from `src/` ("main.tsx", "shell/focus.ts"). */
const SOURCES: Record<string, string> = Object.fromEntries(
  Object.entries(
    import.meta.glob<string>(["../**/*.ts", "../**/*.tsx"], {
      query: "?raw",
      import: "default",
      eager: true,
    }),
  ).map(([path, text]) => [path.replace(/^\.\.\//, ""), text]),
);

/** `spec` imported by the module at `from`, as a path from `src/`. */
function joinPath(from: string, spec: string): string {
  const parts = from.split("/").slice(0, -1);
  for (const part of spec.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  return parts.join("/");
}

/** `path`'s static imports: `import … from "x"`, `import "x"`, `export … from "x"`, not the
 * type-only ones (erased) and not `import("x")`. */
function staticImports(path: string): string[] {
  const text = SOURCES[path] ?? "";
  const found: string[] = [];
  const pattern = /^\s*(import|export)\s+(type\s+)?(?:[^;"']*?\sfrom\s+)?["']([^"']+)["']/gm;
  for (const m of text.matchAll(pattern)) {
    if (!m[2] && m[3]) found.push(m[3]);
  }
  return found;
}

function resolveLocal(from: string, spec: string): string | null {
  const base = joinPath(from, spec);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`]) {
    if (candidate in SOURCES) return candidate;
  }
  return null;
}

/** Every package the modules reachable from `entry` import, with the module importing it. */
function packagesReachedFrom(entry: string): Map<string, string> {
  const packages = new Map<string, string>();
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const spec of staticImports(file)) {
      if (spec.startsWith(".")) {
        const local = resolveLocal(file, spec);
        if (local) queue.push(local);
      } else if (!packages.has(spec)) {
        packages.set(spec, file);
      }
    }
  }
  return packages;
}

describe("the window's first script", () => {
  const packages = packagesReachedFrom("main.tsx");

  it("is found by following main.tsx's imports (React and the chat are in it)", () => {
    expect(packages.has("react")).toBe(true);
    expect([...packages.values()].some((file) => file.includes("screens/chat"))).toBe(true);
  });

  it("leaves out what only some conversations need", () => {
    const early = LATER.flatMap(({ name, why }) =>
      [...packages]
        .filter(([spec]) => spec === name || spec.startsWith(name))
        .map(([spec, by]) => `${spec} (imported by ${by}; ${why})`),
    );
    expect(early).toEqual([]);
  });
});
