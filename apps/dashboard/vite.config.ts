import { defineConfig } from "vite";

// The gateway serves the build at /dashboard (apps/gateway/src/admin/dashboard.ts), so every
// asset URL is under it; names carry a content hash, which lets the gateway cache them for good.
export default defineConfig({
  base: "/dashboard/",
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 600 },
});
