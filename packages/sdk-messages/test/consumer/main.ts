// A user's program, compiled with `tsc --strict` and run with plain `node` by npm-pack.test.ts
// against a live gateway. It reads TURNPIKE_BASE_URL and TURNPIKE_API_KEY, as the README says.
import ChatClient from "@turnpike/chat";
import MessagesClient, { AuthenticationError, ModelNotFoundError, type Message } from "@turnpike/messages";

const messages = new MessagesClient();
const chat = new ChatClient();
const out: Record<string, unknown> = {};

out.models = (await messages.models.list()).data.map((m) => m.id);
out.validated = (await chat.models.validate("beta-5")).id;

const message: Message = await messages.messages.create({
  model: "alpha-haiku-4-5",
  max_tokens: 200,
  messages: [{ role: "user", content: "Hello from node" }],
});
const first = message.content[0];
out.messageText = first?.type === "text" ? first.text : null;

const stream = messages.messages.stream({
  model: "beta-5",
  max_tokens: 200,
  messages: [{ role: "user", content: "Stream to node" }],
});
let streamed = "";
for await (const text of stream.textStream) streamed += text;
out.streamedText = streamed;
out.finalTextMatches = (await stream.finalText()) === streamed;

const completion = await chat.chat.completions.create({
  model: "gamma-3-flash",
  messages: [{ role: "user", content: "Chat from node" }],
});
out.chatText = completion.choices[0]?.message.content ?? null;

const chunks = await chat.chat.completions.create({
  model: "alpha-sonnet-4-6",
  messages: [{ role: "user", content: "Chunks to node" }],
  stream: true,
});
let chatStreamed = "";
for await (const chunk of chunks) chatStreamed += chunk.choices[0]?.delta.content ?? "";
out.chatStreamed = chatStreamed;

try {
  await new ChatClient({ apiKey: "sk-wrong" }).chat.completions.create({
    model: "beta-5",
    messages: [{ role: "user", content: "x" }],
  });
} catch (err) {
  // One error hierarchy: the class exported by @turnpike/messages matches what @turnpike/chat throws.
  out.badKey =
    err instanceof AuthenticationError
      ? `AuthenticationError ${err.status} ${err.requestId ? "with request id" : "without request id"}`
      : String(err);
}
try {
  await messages.messages.create({ model: "alpha-nope", max_tokens: 10, messages: [{ role: "user", content: "x" }] });
} catch (err) {
  out.unknownModel = err instanceof ModelNotFoundError ? `ModelNotFoundError ${err.model}` : String(err);
}

console.log(JSON.stringify(out));
