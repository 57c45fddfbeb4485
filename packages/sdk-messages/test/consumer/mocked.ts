// A user's test-style program with @turnpike/mocks under plain node (msw/node intercepts fetch).
import ChatClient from "@turnpike/chat";
import MessagesClient from "@turnpike/messages";
import { createTurnpikeMock } from "@turnpike/mocks";
import { setupServer } from "msw/node";

const turnpike = createTurnpikeMock({ baseURL: "http://localhost:9999" });
const server = setupServer(...turnpike.handlers);
server.listen({ onUnhandledRequest: "error" });

turnpike.reply({ text: "mocked ✓ 日本語", chunkSize: 3 });
const stream = new MessagesClient({ apiKey: "sk-x", baseURL: "http://localhost:9999" }).messages.stream({
  model: "alpha-haiku-4-5",
  max_tokens: 50,
  messages: [{ role: "user", content: "hi" }],
});
const messagesText = await stream.finalText();

turnpike.reply({ toolCalls: [{ name: "lookup", input: { q: "x" } }] });
const completion = await new ChatClient({ apiKey: "sk-x", baseURL: "http://localhost:9999" }).chat.completions.create({
  model: "beta-5",
  messages: [{ role: "user", content: "hi" }],
});
const call = completion.choices[0]?.message.tool_calls?.[0];

console.log(
  JSON.stringify({
    messagesText,
    toolCall: call?.type === "function" ? `${call.function.name} ${call.function.arguments}` : null,
    requests: turnpike.requests.map((r) => r.endpoint),
  }),
);
server.close();
