import { startSimulator } from "./src/index";
const sim = await startSimulator();
const t = performance.now();
const res = await fetch(sim.url + "/v1/chat/completions", { method: "POST", headers: { authorization: "Bearer k" }, body: JSON.stringify({ model: "b", stream: true, messages: [{ role: "user", content: '[sim chunks=1 latency=12000 text="x"]' }] }) });
const txt = await res.text();
console.log(((performance.now() - t) / 1000).toFixed(1), "s", txt.trimEnd().endsWith("[DONE]"));
await sim.stop();
