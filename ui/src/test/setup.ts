import "@testing-library/jest-dom/vitest";
import { afterEach } from "vitest";
import { cleanup } from "@testing-library/react";
import { clearMocks } from "@tauri-apps/api/mocks";

afterEach(async () => {
  cleanup();
  // Unmounting unsubscribes event listeners asynchronously; let that finish before the mock
  // IPC it talks to is removed.
  await new Promise((resolve) => setTimeout(resolve, 0));
  clearMocks();
  localStorage.clear();
});
