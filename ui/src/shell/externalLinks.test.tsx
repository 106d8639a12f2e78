import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { mockIPC } from "@tauri-apps/api/mocks";
import { Markdown } from "../components/Markdown";
import { ExternalLinks, linkAction } from "./externalLinks";

const APP = "tauri://localhost/";

describe("linkAction", () => {
  it("opens http, https and mailto outside the app", () => {
    for (const href of ["https://example.com/docs?q=1", "http://127.0.0.1:8080/", "mailto:a@b.c"])
      expect(linkAction(href, APP)).toEqual({ kind: "external", url: new URL(href).href });
  });

  it("leaves jumps within the page alone", () => {
    expect(linkAction("#section", APP)).toEqual({ kind: "in_page" });
  });

  it("refuses every other kind, and the app's own pages", () => {
    for (const href of [
      "javascript:alert(1)",
      "file:///etc/passwd",
      "tel:+123",
      "data:text/html,x",
      "/relative/page",
      "tauri://localhost/other",
    ])
      expect(linkAction(href, APP)).toEqual({ kind: "refused", url: href });
    // On Windows the app itself is served over http.
    expect(linkAction("/x", "http://tauri.localhost/")).toEqual({ kind: "refused", url: "/x" });
  });
});

describe("ExternalLinks", () => {
  function backend() {
    const opened: string[] = [];
    mockIPC((cmd, args) => {
      if (cmd !== "open_external") throw new Error(`unexpected command ${cmd}`);
      opened.push(String((args as { url: string }).url));
      return null;
    });
    return opened;
  }

  it("opens a link of an answer in the browser instead of following it", async () => {
    const opened = backend();
    render(
      <>
        <ExternalLinks />
        <Markdown text="See [docs](https://example.com/docs)." />
      </>,
    );
    const followed = fireEvent.click(screen.getByRole("link", { name: "docs" }));
    expect(followed).toBe(false);
    await waitFor(() => expect(opened).toEqual(["https://example.com/docs"]));
    expect(screen.queryByTestId("link-notice")).toBeNull();
  });

  it("refuses other links with a notice and opens nothing", () => {
    const opened = backend();
    render(
      <>
        <ExternalLinks />
        <Markdown text="Call [us](tel:+123) or see [this](/elsewhere)." />
      </>,
    );
    expect(fireEvent.click(screen.getByRole("link", { name: "us" }))).toBe(false);
    expect(screen.getByTestId("link-notice")).toHaveTextContent(
      "Not opened: tel:+123. Only http, https and mailto links open",
    );
    expect(fireEvent.click(screen.getByRole("link", { name: "this" }))).toBe(false);
    expect(screen.getByTestId("link-notice")).toHaveTextContent("Not opened: /elsewhere.");
    expect(opened).toEqual([]);
  });
});
