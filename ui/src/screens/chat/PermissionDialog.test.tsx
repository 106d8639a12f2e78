import { fireEvent, render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { PermissionDialog } from "./PermissionDialog";
import type { PendingPermission } from "./timeline";

const request = (id: string, tool: string, http = false): PendingPermission => ({
  requestId: id,
  conversationId: "c",
  receivedAt: Date.now(),
  request: {
    tool,
    permission: "confirm",
    params: { url: "https://example.com", count: 3 },
    request: http
      ? {
          method: "POST",
          url: "https://api.example.com/v1?key={{API_KEY}}",
          headers: { Authorization: "Bearer {{API_KEY}}" },
          body: { q: "x" },
        }
      : null,
  },
});

describe("PermissionDialog", () => {
  it("shows the tool, every parameter and the exact HTTP request with secrets by name", () => {
    render(
      <PermissionDialog
        queue={[request("r1", "quote", true)]}
        timeoutSecs={60}
        onAnswer={() => {}}
      />,
    );
    const dialog = screen.getByTestId("permission-dialog");
    expect(dialog).toHaveAttribute("open");
    expect(dialog).toHaveTextContent("Allow quote to run?");
    expect(dialog).toHaveTextContent('"url": "https://example.com"');
    const http = screen.getByTestId("permission-http");
    expect(http).toHaveTextContent("POST https://api.example.com/v1?key={{API_KEY}}");
    expect(http).toHaveTextContent("Authorization: Bearer {{API_KEY}}");
    expect(screen.getByTestId("permission-countdown")).toHaveTextContent(
      /denied automatically in (59|60) s/,
    );
  });

  it("answers with buttons and keyboard, first request first", async () => {
    const answers: [string, string][] = [];
    const onAnswer = (id: string, a: string) => answers.push([id, a]);
    const { rerender } = render(
      <PermissionDialog
        queue={[request("r1", "one"), request("r2", "two")]}
        timeoutSecs={60}
        onAnswer={onAnswer}
      />,
    );
    expect(screen.getByTestId("permission-dialog")).toHaveTextContent("Allow one to run?");
    expect(screen.getByTestId("permission-dialog")).toHaveTextContent("1 more waiting");
    expect(screen.getByTestId("permission-approve")).toHaveFocus();
    await userEvent.keyboard("{Enter}");
    fireEvent.keyDown(screen.getByTestId("permission-dialog"), { key: "Enter", ctrlKey: true });
    fireEvent(screen.getByTestId("permission-dialog"), new Event("cancel", { cancelable: true }));
    expect(answers).toEqual([
      ["r1", "approve"],
      ["r1", "approve_always"],
      ["r1", "deny"],
    ]);
    rerender(
      <PermissionDialog queue={[request("r2", "two")]} timeoutSecs={60} onAnswer={onAnswer} />,
    );
    await userEvent.click(screen.getByTestId("permission-deny"));
    expect(answers.at(-1)).toEqual(["r2", "deny"]);
    rerender(<PermissionDialog queue={[]} timeoutSecs={60} onAnswer={onAnswer} />);
    expect(screen.getByRole("dialog", { hidden: true })).not.toHaveAttribute("open");
  });
});
