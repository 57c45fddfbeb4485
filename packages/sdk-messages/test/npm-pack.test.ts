/**
 * The published-package path, as a user on plain Node meets it: build the five packages, pack
 * them with `npm pack`, install the tarballs with plain `npm install` into a fresh project whose
 * PATH holds node and npm but no Bun, type-check a program that uses both SDKs with
 * `tsc --strict`, and run it with `node` against a spawned gateway (plus a program that uses
 * @turnpike/mocks, to run that package's dist under Node too). The same install is then
 * type-checked under each `moduleResolution` a user may have, and the manifests checked for what
 * npm shows (license, repository, homepage, bugs, a LICENSE file).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnGateway, type Gateway } from "@turnpike/gateway/spawn";

const PACKAGES = join(import.meta.dir, "../..");
const ORDER = ["schema", "sdk-core", "sdk-chat", "sdk-messages", "mocks"] as const;
const MINE = ["sdk-core", "sdk-chat", "sdk-messages", "mocks"] as const;

interface PackResult {
  filename: string;
  files: Array<{ path: string }>;
}

let work: string;
let gateway: Gateway | undefined;
const packed: Record<string, PackResult> = {};
let nodeEnv: Record<string, string>;

function run(cmd: string[], cwd: string, env?: Record<string, string>): string {
  const proc = Bun.spawnSync(cmd, { cwd, env: env ?? { ...process.env }, stdout: "pipe", stderr: "pipe" });
  const out = proc.stdout.toString();
  if (proc.exitCode !== 0)
    throw new Error(`${cmd.join(" ")} (in ${cwd}) exited ${proc.exitCode}\n${out}\n${proc.stderr.toString()}`);
  return out;
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "turnpike-pack-"));
  const tarballs = join(work, "tarballs");
  mkdirSync(tarballs);
  for (const name of ORDER) {
    const dir = join(PACKAGES, name);
    run(["bun", "run", "build"], dir);
    const [result] = JSON.parse(run(["npm", "pack", "--json", "--pack-destination", tarballs], dir)) as PackResult[];
    if (!result) throw new Error(`npm pack printed nothing for ${name}`);
    packed[name] = result;
  }

  // A PATH with node, npm and a shell (install scripts run through `sh`) only: the consumer
  // never sees Bun, which lives in the same system folder as everything else here.
  const bin = join(work, "bin");
  mkdirSync(bin);
  for (const tool of ["node", "npm", "npx", "sh"]) {
    const target = Bun.which(tool);
    if (!target) throw new Error(`${tool} is not on PATH`);
    symlinkSync(target, join(bin, tool));
  }
  nodeEnv = {
    PATH: bin,
    HOME: process.env.HOME ?? work,
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
  };

  const app = join(work, "app");
  mkdirSync(app);
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "turnpike-consumer", private: true, type: "module" }, null, 2),
  );
  for (const file of ["main.ts", "mocked.ts", "resolution.ts", "tsconfig.json"])
    cpSync(join(import.meta.dir, "consumer", file), join(app, file));
  writeFileSync(join(app, "readme.test.ts"), readmeTest());
  const tgz = ORDER.map((name) => join(tarballs, (packed[name] as PackResult).filename));
  run(
    ["npm", "install", "--no-audit", "--no-fund", ...tgz, "typescript@~5.9.3", "@types/node@^20", "msw@^2.7.0"],
    app,
    nodeEnv,
  );
}, 300_000);

/** The "complete test" of the mocks README, so the README cannot rot. */
function readmeTest(): string {
  const readme = readFileSync(join(PACKAGES, "mocks/README.md"), "utf8");
  const block = /<!-- readme-test:start -->\s*```ts\n([\s\S]*?)```\s*<!-- readme-test:end -->/.exec(readme)?.[1];
  if (!block) throw new Error("mocks/README.md has no readme-test block");
  return block;
}

afterAll(async () => {
  await gateway?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("tarballs", () => {
  test("each holds dist with .js and .d.ts, the README, and no tests", () => {
    for (const name of MINE) {
      const files = (packed[name] as PackResult).files.map((f) => f.path);
      expect(files).toContain("dist/index.js");
      expect(files).toContain("dist/index.d.ts");
      expect(files).toContain("README.md");
      expect(files).toContain("package.json");
      expect(files.filter((f) => /\.test(-d)?\.ts$/.test(f) || f.startsWith("test/"))).toEqual([]);
    }
    expect((packed["sdk-core"] as PackResult).files.map((f) => f.path)).toContain("dist/index.d.ts");
  });

  test("dependencies are semver ranges npm can resolve, not workspace: links", () => {
    for (const name of MINE) {
      // The installed package of each folder: its name as its own package.json gives it.
      const installed = (JSON.parse(readFileSync(join(PACKAGES, name, "package.json"), "utf8")) as { name: string })
        .name;
      const manifest = JSON.parse(readFileSync(join(work, "app/node_modules", installed, "package.json"), "utf8")) as {
        dependencies: Record<string, string>;
      };
      expect(manifest.dependencies["@turnpike/schema"]).toMatch(/^\^\d+\.\d+\.\d+$/);
    }
  });

  test("no `any` in the declarations users see", () => {
    const roots = MINE.map((n) => join(PACKAGES, n, "dist"));
    const offenders: string[] = [];
    for (const root of roots) {
      for (const file of readdirSync(root, { recursive: true }) as string[]) {
        if (!file.endsWith(".d.ts")) continue;
        const code = readFileSync(join(root, file), "utf8")
          .replace(/\/\*[\s\S]*?\*\//g, "")
          .replace(/\/\/.*$/gm, "");
        if (/\bany\b/.test(code)) offenders.push(join(root, file));
      }
    }
    expect(offenders).toEqual([]);
  });
});

describe("a fresh Node project", () => {
  test("installed with plain npm, no Bun on its PATH", () => {
    expect(existsSync(join(work, "bin/bun"))).toBe(false);
    expect(existsSync(join(work, "app/node_modules/@turnpike/sdk-core/dist/index.js"))).toBe(true);
    expect(run(["node", "--version"], join(work, "app"), nodeEnv)).toMatch(/^v(2\d|[3-9]\d)\./);
  });

  test("type-checks a program using both SDKs and the mocks under tsc --strict", () => {
    expect(run(["node", "node_modules/typescript/bin/tsc", "-p", "tsconfig.json"], join(work, "app"), nodeEnv)).toBe(
      "",
    );
  }, 300_000);

  test("runs the program with node against a live gateway", async () => {
    gateway = await spawnGateway();
    const key = await gateway.createKey({ name: "npm-pack" });
    const out = run(["node", "out/main.js"], join(work, "app"), {
      ...nodeEnv,
      TURNPIKE_BASE_URL: gateway.url,
      TURNPIKE_API_KEY: key,
    });
    const result = JSON.parse(out) as Record<string, unknown>;
    expect(result.models).toContain("alpha-sonnet-4-6 (context-1m beta)");
    expect(result.validated).toBe("beta-5");
    expect(result.messageText).toContain("Simulated reply from alpha-haiku-4-5 to: Hello from node");
    expect(result.streamedText).toContain("Simulated reply from beta-5 to: Stream to node");
    expect(result.finalTextMatches).toBe(true);
    expect(result.chatText).toContain("Simulated reply from gamma-3-flash to: Chat from node");
    expect(result.chatStreamed).toContain("Simulated reply from alpha-sonnet-4-6 to: Chunks to node");
    expect(result.badKey).toBe("AuthenticationError 401 with request id");
    expect(result.unknownModel).toBe("ModelNotFoundError alpha-nope");
  }, 60_000);

  test("the complete test in the mocks README passes under node --test", () => {
    const out = run(["node", "--test", "out/readme.test.js"], join(work, "app"), nodeEnv);
    expect(out).toContain("# pass 4");
    expect(out).toContain("# fail 0");
  }, 60_000);

  test("runs a program using @turnpike/mocks with node", () => {
    const result = JSON.parse(run(["node", "out/mocked.js"], join(work, "app"), nodeEnv)) as Record<string, unknown>;
    expect(result).toEqual({
      messagesText: "mocked ✓ 日本語",
      toolCall: 'lookup {"q":"x"}',
      requests: ["messages", "chat"],
    });
  });
});

/** Each module resolution with the module setting TypeScript pairs it with, and the package type the consumer needs. */
const RESOLUTIONS = [
  { moduleResolution: "node10", module: "commonjs", type: "commonjs" },
  { moduleResolution: "node16", module: "node16", type: "module" },
  { moduleResolution: "nodenext", module: "nodenext", type: "module" },
  { moduleResolution: "bundler", module: "esnext", type: "module" },
] as const;

describe("types resolve under every moduleResolution", () => {
  for (const r of RESOLUTIONS) {
    test(`moduleResolution ${r.moduleResolution}`, () => {
      // A folder of its own inside the app (its node_modules found by walking up), with its own package type.
      const dir = join(work, "app", `resolve-${r.moduleResolution}`);
      mkdirSync(dir, { recursive: true });
      cpSync(join(import.meta.dir, "consumer/resolution.ts"), join(dir, "resolution.ts"));
      writeFileSync(
        join(dir, "package.json"),
        JSON.stringify({ name: `resolve-${r.moduleResolution}`, private: true, type: r.type }),
      );
      const compilerOptions = {
        strict: true,
        noEmit: true,
        target: "ES2022",
        module: r.module,
        moduleResolution: r.moduleResolution,
        types: ["node"],
        skipLibCheck: false,
      };
      writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["resolution.ts"] }));
      const tsc = Bun.spawnSync(["node", "../node_modules/typescript/bin/tsc", "-p", "tsconfig.json"], {
        cwd: dir,
        env: nodeEnv,
        stdout: "pipe",
        stderr: "pipe",
      });
      expect(tsc.stdout.toString() + tsc.stderr.toString()).toBe("");
      expect(tsc.exitCode).toBe(0);
    }, 300_000);
  }
});

describe("what npm shows of each published package", () => {
  const root = JSON.parse(readFileSync(join(PACKAGES, "../package.json"), "utf8")) as { repository: { url: string } };
  for (const name of ORDER) {
    test(`${name}: MIT with its LICENSE, repository, homepage and bugs`, () => {
      const files = (packed[name] as PackResult).files.map((f) => f.path);
      expect(files).toContain("LICENSE");
      const m = JSON.parse(readFileSync(join(PACKAGES, name, "package.json"), "utf8")) as {
        license: string;
        repository: { type: string; url: string; directory: string };
        homepage: string;
        bugs: { url: string };
      };
      expect(m.license).toBe("MIT");
      expect(readFileSync(join(PACKAGES, name, "LICENSE"), "utf8")).toBe(
        readFileSync(join(PACKAGES, "../LICENSE"), "utf8"),
      );
      expect(m.repository).toEqual({ type: "git", url: root.repository.url, directory: `packages/${name}` });
      const web = root.repository.url.replace(/^git\+/, "").replace(/\.git$/, "");
      expect(m.homepage).toBe(`${web}/tree/main/packages/${name}#readme`);
      expect(m.bugs.url).toBe(`${web}/issues`);
    });

    test(`${name}: its version is the top entry of its changelog (decisions/0013-first-release.md)`, () => {
      const { version } = JSON.parse(readFileSync(join(PACKAGES, name, "package.json"), "utf8")) as { version: string };
      expect((packed[name] as PackResult).files.map((f) => f.path)).toContain("CHANGELOG.md");
      const top = /^## (\S+)$/m.exec(readFileSync(join(PACKAGES, name, "CHANGELOG.md"), "utf8"))?.[1];
      expect(top).toBe(version);
    });
  }
});
