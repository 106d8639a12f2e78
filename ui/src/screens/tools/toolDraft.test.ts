import example from "../../../../config/tools/_example.md?raw";
import {
  applyDraft,
  duplicateText,
  emptyParam,
  parseToolMarkdown,
  renderNew,
  type ToolDraft,
} from "./toolDraft";

function draftOf(text: string): ToolDraft {
  const parsed = parseToolMarkdown(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.draft;
}

describe("tool file ⇄ form", () => {
  it("reads every field of the bundled example", () => {
    const d = draftOf(example);
    expect(d).toMatchObject({
      name: "query_stock_price",
      permission: "confirm",
      method: "POST",
      endpoint: "https://api.example.com/stock/price",
      headers: [{ name: "Authorization", value: "Bearer {{STOCK_API_KEY}}" }],
      timeout: "30",
      response_extract: "$.data.price",
    });
    expect(d.parameters).toEqual([
      {
        name: "symbol",
        type: "string",
        description: "Stock ticker symbol, e.g. AAPL",
        required: true,
        default: "",
        enum: "",
        in: "",
        json: false,
      },
      {
        name: "market",
        type: "string",
        description: "Market exchange",
        required: true,
        default: "US",
        enum: "US, HK, SH",
        in: "",
        json: false,
      },
    ]);
    expect(d.notes).toMatch(/^Query real-time stock price/);
  });

  it("leaves the file byte for byte when nothing changed", () => {
    expect(applyDraft(example, draftOf(example))).toBe(example);
  });

  it("writes a form change into the one field, keeping comments and the notes", () => {
    const d = draftOf(example);
    const text = applyDraft(example, { ...d, method: "GET", timeout: "5" });
    expect(text).toContain("method: GET");
    expect(text).toContain("timeout: 5");
    // Comments on untouched lines survive.
    expect(text).toContain("# {{VAR}} is filled at call time");
    expect(text).toContain('response_extract: "$.data.price"   # JSONPath');
    expect(text).toContain("Use this when the user asks about current stock prices");
    expect(draftOf(text)).toEqual({ ...d, method: "GET", timeout: "5" });
  });

  it("types parameter defaults and enums as declared, and drops empty optional fields", () => {
    const d = draftOf(example);
    const days = {
      ...emptyParam(),
      name: "days",
      type: "integer" as const,
      default: "7",
      required: false,
    };
    const ratio = { ...emptyParam(), name: "ratio", type: "number" as const, enum: "0.5, 1" };
    const text = applyDraft(example, {
      ...d,
      response_extract: "",
      headers: [],
      parameters: [...d.parameters.slice(0, 1), days, ratio],
    });
    expect(text).not.toContain("response_extract");
    expect(text).not.toContain("headers:");
    expect(text).not.toContain("name: market");
    // Typed as declared: an integer default is a YAML number; allowed values are strings.
    expect(text).toMatch(/\n\s+default: 7\n/);
    expect(text).toMatch(/enum:\s*\n\s+- "0.5"\n\s+- "1"\n/);
    // The first parameter's comment stays.
    expect(text).toContain("type: string # string | integer | number | boolean");
    const back = draftOf(text);
    expect(back.parameters.map((p) => [p.name, p.default, p.enum, p.required])).toEqual([
      ["symbol", "", "", true],
      ["days", "7", "", false],
      ["ratio", "", "0.5, 1", true],
    ]);
  });

  it("syncs the raw Markdown back to the form, and reports YAML errors with a line", () => {
    const edited = example
      .replace("method: POST", "method: put")
      .replace("timeout: 30", "timeout: 12");
    expect(draftOf(edited)).toMatchObject({ method: "PUT", timeout: "12" });
    const broken = example.replace("  - name: market", "  - name: [market");
    const parsed = parseToolMarkdown(broken);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.line).toBeGreaterThan(20);
    const noFence = parseToolMarkdown("name: x\n");
    expect(noFence).toMatchObject({ ok: false, line: 1 });
  });

  it("explains a YAML syntax error with its line in the file and a hint, not the parser's raw text", () => {
    const colon = parseToolMarkdown("---\nname: price\ndescription: Price: today\n---\n");
    expect(colon).toMatchObject({ ok: false, line: 3 });
    if (colon.ok) return;
    expect(colon.error).toBe(
      'Nested mappings are not allowed in compact mappings. Hint: a value that contains ": " must be quoted, e.g. description: "Price: today"; or this line is indented deeper than the field above it.',
    );
    const tab = parseToolMarkdown("---\nname: price\n\tmethod: GET\n---\n");
    expect(tab).toMatchObject({ ok: false, line: 3 });
    if (!tab.ok) expect(tab.error).toMatch(/Hint: indent with spaces, not tabs\.$/);
    const quote = parseToolMarkdown('---\nname: price\ndescription: "open\n---\n');
    expect(quote.ok).toBe(false);
    if (!quote.ok) {
      expect(quote.error).toMatch(/close every quote/);
      expect(quote.error).not.toMatch(/at line|\^/);
    }
  });

  it("renders a new tool and names a duplicate after a free name", () => {
    const fresh = renderNew({
      ...draftOf(example),
      name: "weather",
      headers: [],
      parameters: [],
      notes: "Weather now.",
    });
    expect(fresh.startsWith("---\nname: weather\n")).toBe(true);
    expect(fresh.endsWith("---\n\nWeather now.\n")).toBe(true);
    expect(draftOf(fresh).name).toBe("weather");
    const copy = duplicateText(example, ["query_stock_price", "query_stock_price_copy"]);
    expect(draftOf(copy).name).toBe("query_stock_price_copy2");
    expect(copy.replace("query_stock_price_copy2", "query_stock_price")).toBe(example);
  });

  it("never breaks or silently changes the file, whatever the values", () => {
    const long =
      "A description that goes on for well over eighty characters, with commas, colons: and # signs";
    // A long value in a new parameter.
    const d = draftOf(example);
    const withParam = applyDraft(example, {
      ...d,
      parameters: [...d.parameters, { ...emptyParam(), name: "q", description: "x" }],
    });
    const again = draftOf(withParam);
    const q = again.parameters.length - 1;
    const edited = applyDraft(withParam, {
      ...again,
      parameters: again.parameters.map((p, i) => (i === q ? { ...p, description: long } : p)),
    });
    expect(draftOf(edited).parameters[q]?.description).toBe(long);
    // A block scalar replaced by one line keeps the next key.
    const block = '---\nname: t\ndescription: |\n  l1\n  l2\nendpoint: "http://x"\n---\n';
    const oneLine = applyDraft(block, { ...draftOf(block), description: "single" });
    expect(draftOf(oneLine)).toMatchObject({ description: "single", endpoint: "http://x" });
    // Inside a flow map, a value with commas stays one value.
    const flow =
      '---\nname: t\nendpoint: "http://x"\nparameters:\n  - {name: q, type: string, description: query}\n---\n';
    const commas = applyDraft(flow, {
      ...draftOf(flow),
      parameters: [
        { ...(draftOf(flow).parameters[0] ?? emptyParam()), description: "query, e.g. AAPL: {x}" },
      ],
    });
    expect(draftOf(commas).parameters[0]?.description).toBe("query, e.g. AAPL: {x}");
    // Values YAML would read as something else stay strings.
    for (const tricky of ["true", "null", "{{KEY}}", "- x", "a # b", "12", " padded"]) {
      const out = applyDraft(example, { ...d, description: tricky });
      expect(draftOf(out).description).toBe(tricky);
    }
    // An allowed value containing a comma is left alone when another field changes.
    const cities =
      '---\nname: t\nendpoint: "http://x"\nparameters:\n  - name: city\n    type: string\n    enum: ["New York, NY", "Boston, MA"]\n---\n';
    const moved = applyDraft(cities, { ...draftOf(cities), endpoint: "http://y" });
    expect(moved).toContain('enum: ["New York, NY", "Boston, MA"]');
    expect(moved).toContain('endpoint: "http://y"');
  });

  describe("where a parameter travels (in / json)", () => {
    const pets = [
      "---",
      "name: update_pet",
      'endpoint: "https://petstore.example/pets/{petId}"',
      "method: PUT",
      "parameters:",
      "  - name: petId # the pet",
      "    type: string",
      "    in: path",
      "  - name: tags",
      "    type: string",
      "    in: body",
      "    json: true",
      "    x-note: kept",
      "  - name: trace",
      "    type: string",
      "    in: header",
      "---",
      "",
    ].join("\n");

    it("reads in and json, keeps an unknown in as written, and writes them back", () => {
      const d = draftOf(pets);
      expect(d.parameters.map((p) => [p.name, p.in, p.json])).toEqual([
        ["petId", "path", false],
        ["tags", "body", true],
        ["trace", "header", false],
      ]);
      expect(applyDraft(pets, d)).toBe(pets);
      const weird = pets.replace("in: header", "in: cookie");
      expect(draftOf(weird).parameters[2]?.in).toBe("cookie");
      // Another change leaves the unknown value alone.
      const renamed = applyDraft(weird, { ...draftOf(weird), name: "pet_update" });
      expect(renamed).toContain("in: cookie");
      expect(renamed).toContain("name: pet_update");

      const changed = applyDraft(pets, {
        ...d,
        parameters: d.parameters.map((p, i) =>
          i === 0 ? { ...p, in: "" } : i === 1 ? { ...p, json: false } : { ...p, in: "query" },
        ),
      });
      expect(changed).not.toContain("in: path");
      expect(changed).not.toContain("json:");
      expect(changed).toContain("in: query");
      expect(draftOf(changed).parameters.map((p) => [p.name, p.in, p.json])).toEqual([
        ["petId", "", false],
        ["tags", "body", false],
        ["trace", "query", false],
      ]);
      const back = applyDraft(changed, draftOf(pets));
      expect(draftOf(back)).toEqual(d);
    });

    it("keeps each parameter's in, json and unknown keys with it when another is removed", () => {
      const two =
        '---\nname: t\nendpoint: "http://x/{id}"\nparameters:\n  - name: q\n    type: string\n    in: query\n    json: true\n  - name: id\n    type: string\n    in: path\n    x-note: kept # why\n---\n';
      const d = draftOf(two);
      const out = applyDraft(two, { ...d, parameters: d.parameters.slice(1) });
      expect(out).not.toContain("name: q");
      expect(out).not.toContain("in: query");
      expect(out).not.toContain("json:");
      expect(out).toMatch(/- name: id\n\s+type: string\n\s+in: path\n\s+x-note: kept # why\n/);
      expect(draftOf(out).parameters).toEqual([{ ...d.parameters[1] }]);

      // Removing the middle one of three keeps the last one's keys too.
      const three = draftOf(pets);
      const noTags = applyDraft(pets, {
        ...three,
        parameters: [three.parameters[0] ?? emptyParam(), three.parameters[2] ?? emptyParam()],
      });
      expect(noTags).not.toContain("x-note");
      expect(noTags).not.toContain("json:");
      expect(noTags).toContain("  - name: petId # the pet");
      expect(draftOf(noTags).parameters.map((p) => [p.name, p.in, p.json])).toEqual([
        ["petId", "path", false],
        ["trace", "header", false],
      ]);

      // Removing the first keeps the unknown key of the second.
      const noPet = applyDraft(pets, { ...three, parameters: three.parameters.slice(1) });
      expect(noPet).toContain("x-note: kept");
      expect(noPet).not.toContain("name: petId");
      expect(draftOf(noPet).parameters.map((p) => [p.name, p.in, p.json])).toEqual([
        ["tags", "body", true],
        ["trace", "header", false],
      ]);
    });

    it("gives a new parameter its own in and json, and no other parameter's", () => {
      const d = draftOf(pets);
      const added = applyDraft(pets, {
        ...d,
        parameters: [
          ...d.parameters,
          { ...emptyParam(), name: "body", in: "body", json: true },
          { ...emptyParam(), name: "plain" },
        ],
      });
      expect(draftOf(added).parameters.map((p) => [p.name, p.in, p.json])).toEqual([
        ["petId", "path", false],
        ["tags", "body", true],
        ["trace", "header", false],
        ["body", "body", true],
        ["plain", "", false],
      ]);
      expect(added).toContain("x-note: kept");
      expect(added).toMatch(/- name: plain\n\s+type: string\n(?!\s+in:)/);
    });
  });
});
