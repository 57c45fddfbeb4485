import { defineConfig } from "vitepress";

/**
 * The user guide's site. `bun run docs:build` at the root builds it into site/.vitepress/dist; a
 * link to a page that does not exist fails the build (VitePress' dead-link check, left on), and
 * site/test/site.test.ts runs that build in the test command.
 */
export const SIDEBAR = [
  {
    text: "Start",
    items: [
      { text: "Getting started", link: "/guide/getting-started" },
      { text: "Vendors and their APIs", link: "/guide/vendors" },
      { text: "A real vendor key, end to end", link: "/guide/real-vendor-key" },
      { text: "Client libraries", link: "/guide/client-libraries" },
      { text: "Models and prices", link: "/guide/models" },
      { text: "Agents", link: "/guide/agents" },
    ],
  },
  {
    text: "Formats",
    items: [
      { text: "The Responses API", link: "/guide/responses" },
      { text: "The generateContent format", link: "/guide/generate-content" },
      { text: "Translation conformance", link: "/reference/translation" },
    ],
  },
  {
    text: "Features",
    items: [
      { text: "Configuration", link: "/guide/configuration" },
      { text: "Routing and failover", link: "/guide/routing" },
      { text: "Keys, limits and metering", link: "/guide/keys-limits-metering" },
      { text: "Teams and sign-on", link: "/guide/teams-sign-on" },
      { text: "Guardrails", link: "/guide/guardrails" },
      { text: "MCP", link: "/guide/mcp" },
      { text: "Batches", link: "/guide/batches" },
      { text: "The simulator", link: "/guide/simulator" },
    ],
  },
  {
    text: "Operations",
    items: [
      { text: "Containers", link: "/operations/containers" },
      { text: "Kubernetes", link: "/operations/kubernetes" },
      { text: "Running several instances", link: "/operations/scale-out" },
      { text: "Monitoring", link: "/operations/monitoring" },
      { text: "Dashboard", link: "/operations/dashboard" },
      { text: "Versions, upgrades, backups", link: "/operations/releases" },
      { text: "Upgrading", link: "/operations/upgrading" },
      { text: "Backup and restore", link: "/operations/backup-restore" },
      { text: "Rotating the admin key", link: "/operations/admin-key-rotation" },
      { text: "Security", link: "/operations/security" },
      { text: "Troubleshooting", link: "/operations/troubleshooting" },
    ],
  },
  {
    text: "Reference",
    items: [
      { text: "Admin API and CLI", link: "/reference/admin-api" },
      { text: "API description", link: "/reference/api-description" },
      { text: "Performance", link: "/reference/performance" },
      { text: "Contributing", link: "/contributing" },
    ],
  },
];

export default defineConfig({
  title: "Turnpike",
  description: "A self-hosted gateway for language-model APIs",
  cleanUrls: true,
  // Links to a running gateway (http://localhost:8080/dashboard) are not pages of the site.
  ignoreDeadLinks: "localhostLinks",
  lastUpdated: false,
  themeConfig: {
    nav: [
      { text: "Guide", link: "/guide/getting-started" },
      { text: "Operations", link: "/operations/upgrading" },
      { text: "Reference", link: "/reference/admin-api" },
    ],
    sidebar: SIDEBAR,
    search: { provider: "local" },
    outline: [2, 3],
  },
});
