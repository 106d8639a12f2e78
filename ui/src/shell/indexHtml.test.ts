import { describe, expect, it } from "vitest";
import html from "../../index.html?raw";

// Tauri adds the hash of every inline <style> and <script> in index.html to the page's CSP;
// a browser then ignores 'unsafe-inline', and every style added at run time (editors, test
// probes) is refused. A splash styled inline did exactly that once.
describe("index.html", () => {
  const doc = new DOMParser().parseFromString(html, "text/html");

  it("has no inline style or script, so the CSP keeps 'unsafe-inline' for styles", () => {
    expect(doc.querySelectorAll("style")).toHaveLength(0);
    expect([...doc.querySelectorAll("script")].filter((s) => !s.getAttribute("src"))).toHaveLength(
      0,
    );
    expect(doc.querySelectorAll("[style]")).toHaveLength(0);
  });

  it("starts with the splash covering the window, saying the app is starting", () => {
    const splash = doc.getElementById("splash");
    expect(splash?.getAttribute("role")).toBe("status");
    expect(splash?.textContent?.trim()).toBe("Starting ArtifactFlow…");
  });
});
