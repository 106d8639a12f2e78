import { shortenPath } from "./paths";

describe("shortenPath", () => {
  it("keeps short paths", () => {
    expect(shortenPath("/a/b", 10)).toBe("/a/b");
  });
  it("keeps whole trailing segments", () => {
    expect(shortenPath("/tmp/some/long/home/config", 14)).toBe("…/home/config");
    expect(shortenPath("C:\\Users\\me\\AppData\\ArtifactFlow", 16)).toBe("…\\ArtifactFlow");
  });
  it("cuts a single over-long segment", () => {
    const s = shortenPath("/averyveryverylongfilename.db", 10);
    expect(s).toHaveLength(10);
    expect(s.endsWith("name.db")).toBe(true);
  });
});
