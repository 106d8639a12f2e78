import { render, screen } from "@testing-library/react";
import { exactTime, relativeTime, RelativeTime } from "./RelativeTime";

describe("relativeTime", () => {
  const now = new Date(2026, 11, 1, 15, 30, 0); // 1 Dec 2026, 15:30 local
  const at = (ms: number) => new Date(now.getTime() - ms);

  it("says how long ago, in local days", () => {
    expect(relativeTime(at(10_000), now)).toBe("just now");
    expect(relativeTime(at(-5_000), now)).toBe("just now");
    expect(relativeTime(at(5 * 60_000), now)).toBe("5 min ago");
    expect(relativeTime(at(3 * 3_600_000), now)).toBe("3 h ago");
    expect(relativeTime(new Date(2026, 10, 30, 23, 50), now)).toBe("yesterday");
    expect(relativeTime(new Date(2026, 10, 27, 9, 0), now)).toBe("4 days ago");
    expect(relativeTime(new Date(2026, 10, 2, 9, 0), now)).toMatch(/2026/);
  });
});

describe("RelativeTime", () => {
  it("shows a backend timestamp relative, with the exact local time on hover", () => {
    const when = new Date(Date.now() - 5 * 60_000);
    render(<RelativeTime value={when.toISOString()} />);
    const time = screen.getByText("5 min ago");
    expect(time.tagName).toBe("TIME");
    expect(time).toHaveAttribute("dateTime", when.toISOString());
    expect(time).toHaveAttribute("title", exactTime(when));
  });

  it("shows text that is not a date as it is", () => {
    render(<RelativeTime value="t1" />);
    expect(screen.getByText("t1")).toBeInTheDocument();
  });
});
