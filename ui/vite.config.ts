/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The Tauri window loads this dev server in `tauri dev` and the built `dist/` otherwise.
export default defineConfig({
  plugins: [react()],
  clearScreen: false,
  server: {
    port: 1420,
    strictPort: true,
    host: "localhost",
    // Tests read the bundled config files (e.g. tools/_example.md) from the repository.
    fs: { allow: [".", "../config"] },
  },
  build: { target: "es2022", sourcemap: false },
  test: {
    environment: "jsdom",
    globals: true,
    setupFiles: ["./src/test/setup.ts"],
    // A ceiling, not a timing: above the 15 s that findBy*/waitFor wait for (src/test/setup.ts).
    testTimeout: 30_000,
    // The shared style sheet is real CSS in tests (src/styles.test.ts reads it); no test imports
    // it into a rendered screen.
    css: { include: [/styles\.css/] },
  },
});
