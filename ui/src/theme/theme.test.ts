import { applyTheme, readThemeChoice, resolveTheme } from "./theme";

describe("theme", () => {
  it("resolves system to the OS preference and keeps explicit choices", () => {
    expect(resolveTheme("system", true)).toBe("dark");
    expect(resolveTheme("system", false)).toBe("light");
    expect(resolveTheme("dark", false)).toBe("dark");
    expect(resolveTheme("light", true)).toBe("light");
  });

  it("applies the theme to <html> and remembers the choice", () => {
    expect(readThemeChoice()).toBe("system");
    applyTheme("dark");
    expect(document.documentElement.dataset.theme).toBe("dark");
    expect(readThemeChoice()).toBe("dark");
    applyTheme("light");
    expect(document.documentElement.dataset.theme).toBe("light");
  });

  it("ignores a corrupted stored value", () => {
    localStorage.setItem("artifactflow.theme", "purple");
    expect(readThemeChoice()).toBe("system");
  });
});
