import { expect, test } from "bun:test";

test("bun src/cli.ts prints the URL of a working simulator", async () => {
  const proc = Bun.spawn(["bun", new URL("./cli.ts", import.meta.url).pathname, "--port", "0", "--chunks", "5"], {
    stdout: "pipe",
    stderr: "inherit",
  });
  try {
    const reader = proc.stdout.getReader();
    let out = "";
    while (!out.includes("\n")) {
      const { done, value } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    const url = out.trim();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer k" },
      body: JSON.stringify({ model: "b", stream: true, messages: [{ role: "user", content: "Hi" }] }),
    });
    const text = await res.text();
    expect(text.match(/"content":"[^"]+"/g)).toHaveLength(5);
  } finally {
    proc.kill();
    await proc.exited;
  }
});
