// memoryd as OpenClaw's memory: takes the memory slot (plugins.slots.memory = "memoryd"), so memory_search,
// memory_get, memory_forget, memory_update, Active Memory, `openclaw memory search|status|index|forget|undo` and
// the recall before every reply are answered by the memoryd daemon over its Unix socket. Only types come from
// openclaw: the host supplies the runtime.
import { createInterface } from "node:readline/promises";
import type { AnyAgentTool, OpenClawPluginApi } from "openclaw/plugin-sdk/plugin-entry";
import { call, MemorydError } from "./rpc.js";

export interface MemorydPluginConfig {
  socket?: string; // default: MEMORYD_SOCKET, else where memoryd listens by default
  agent?: string; // memoryd agent (default: the daemon's default agent)
  recall?: boolean; // put the memories that bear on each prompt before it (default true)
  recallBudget?: number; // tokens of that block (default: the agent's recall.budget)
}

interface SearchHit {
  path: string;
  start_line: number;
  end_line: number;
  score: number;
  vector_score: number | null;
  text_score: number | null;
  snippet: string;
  source: string;
  citation: string;
  date?: string | null; // when it happened (ISO day)
  superseded?: string | null; // its note marks the lines superseded: "2026-11-27 by path#L5-L5"
}

interface Current {
  citation: string;
  text: string;
  hash: string;
}

interface ForgetMatch {
  citation: string;
  path: string;
  start_line: number;
  end_line: number;
  snippet: string;
  score: number;
  hash: string;
}

/** forget's answer: what went, or the matches of a query and their confirm token, or why nothing changed. */
interface ForgetAnswer {
  forgotten: string | Array<string | null> | null;
  path?: string;
  lines?: number;
  change?: number;
  matches?: ForgetMatch[];
  confirm?: string;
  conflict?: string;
  current?: Current;
  results?: ForgetAnswer[];
  index_error?: string | null;
}

interface UpdateAnswer {
  updated: string | null;
  citation?: string | null; // where the new text is now (null: the lines were removed)
  change?: number;
  conflict?: string;
  current?: Current;
  index_error?: string | null;
}

interface UndoAnswer {
  undone: number[];
  results: Array<{ undone: number; kind: string; path: string; index_error?: string | null }>;
}

interface ForgetParams {
  citation?: string;
  query?: string;
  confirm?: string;
  expect?: string;
  purge?: boolean;
}

const RECALL_MS = 2000;
const FLUSH_PROMPT =
  "Pre-compaction memory flush. Write the durable facts, decisions and preferences of this conversation that " +
  "are not saved yet to the daily note with memory_write (one self-contained statement each), then reply NO_REPLY.";

function settingsOf(api: OpenClawPluginApi): MemorydPluginConfig {
  const raw = (api.pluginConfig ?? {}) as Record<string, unknown>;
  return {
    socket: typeof raw.socket === "string" ? raw.socket : undefined,
    agent: typeof raw.agent === "string" ? raw.agent : undefined,
    recall: raw.recall !== false,
    recallBudget: typeof raw.recallBudget === "number" ? raw.recallBudget : undefined,
  };
}

/** OpenClaw's search result shape, from a memoryd hit. */
export function toResult(hit: SearchHit) {
  return {
    path: hit.path,
    startLine: hit.start_line,
    endLine: hit.end_line,
    score: hit.score,
    ...(hit.vector_score == null ? {} : { vectorScore: hit.vector_score }),
    ...(hit.text_score == null ? {} : { textScore: hit.text_score }),
    snippet: hit.snippet,
    source: hit.source === "sessions" ? "sessions" : "memory",
    citation: hit.citation,
    ...(hit.date ? { date: hit.date } : {}),
    ...(hit.superseded ? { superseded: hit.superseded } : {}),
  };
}

/** A hit's date after its citation, and that its note marks it superseded. */
export function dated(hit: { date?: string | null; superseded?: string | null }): string {
  if (hit.superseded) return hit.date ? `  (${hit.date}; superseded ${hit.superseded})` : `  (superseded ${hit.superseded})`;
  return hit.date ? `  (${hit.date})` : "";
}

/** What forget did, as the tool and the CLI tell it: what went, the matches to confirm, or why nothing changed. */
export function forgetText(done: ForgetAnswer, again: string): string {
  if (done.conflict && done.current) {
    return `Nothing forgotten: ${done.conflict}. Current text of ${done.current.citation}:\n${done.current.text}`;
  }
  if (done.matches) {
    if (!done.matches.length) return "Nothing matched; nothing forgotten.";
    const shown = done.matches.map((m) => `- ${m.citation}: ${m.snippet.trim().replace(/\s+/g, " ").slice(0, 200)}`);
    const changed = done.conflict ? `${done.conflict}.\n` : "";
    return `${changed}These would be forgotten:\n${shown.join("\n")}\n${again.replace("{confirm}", done.confirm ?? "")}`;
  }
  const gone = Array.isArray(done.forgotten) ? done.forgotten.filter((c) => c) : [done.forgotten];
  const failed = (done.results ?? []).filter((r) => r.conflict).map((r) => r.conflict);
  const errors = [done, ...(done.results ?? [])].map((r) => r.index_error).filter((e) => e);
  return [
    gone.length ? `Forgotten: ${gone.join(", ")}` : "Nothing forgotten.",
    ...failed.map((why) => `Not forgotten: ${why}`),
    ...errors.map((why) => `(the index is not up to date yet: ${why})`),
  ].join("\n");
}

/** How many changes a forget made (what an undo of all of it takes). */
function changesOf(done: ForgetAnswer): number {
  return done.results ? done.results.filter((r) => r.change != null).length : done.change != null ? 1 : 0;
}

function manager(settings: MemorydPluginConfig) {
  const options = { socket: settings.socket };
  let last: Record<string, unknown> = { backend: "builtin", provider: "memoryd" };
  const refresh = async () => {
    const state = await call<{ agents: Array<Record<string, unknown>> }>("status", { agent: settings.agent }, options);
    const agent = state.agents[0] ?? {};
    last = {
      backend: "builtin",
      provider: agent.provider ? String(agent.provider) : "none", // none: keyword search only
      model: agent.model ?? undefined,
      files: agent.files,
      chunks: agent.chunks,
      dirty: Boolean(agent.syncing),
      workspaceDir: agent.workspace,
      custom: { memoryd: agent },
    };
    return last;
  };
  const probe = async () => {
    const state = await refresh().catch((error: Error) => ({ error: error.message }));
    return "error" in state ? { ok: false, error: String(state.error) } : { ok: state.provider !== "none" };
  };
  return {
    async search(query: string, opts: { maxResults?: number; minScore?: number; lexicalOnly?: boolean } = {}) {
      const found = await call<{ results: SearchHit[] }>(
        "search",
        {
          query,
          agent: settings.agent,
          max_results: opts.maxResults,
          min_score: opts.minScore,
          mode: opts.lexicalOnly ? "keyword" : undefined,
        },
        options,
      );
      return found.results.map(toResult);
    },
    async readFile(params: { relPath: string; from?: number; lines?: number }) {
      const got = await call<{ path: string; text: string; truncated?: boolean }>(
        "get",
        { path: params.relPath, from: params.from, lines: params.lines, agent: settings.agent },
        options,
      );
      return { path: got.path, text: got.text, truncated: Boolean(got.truncated) };
    },
    status() {
      refresh().catch(() => undefined); // status() is synchronous: the last known state, refreshed behind it
      return last;
    },
    refresh,
    forget(params: ForgetParams) {
      return call<ForgetAnswer>("forget", { ...params, agent: settings.agent }, options);
    },
    update(params: { citation: string; text: string; expect: string }) {
      return call<UpdateAnswer>("update", { ...params, agent: settings.agent }, options);
    },
    undo(count = 1) {
      return call<UndoAnswer>("undo", { count, agent: settings.agent }, options);
    },
    async sync() {
      await call("sync", { agent: settings.agent, vectors: false, client: "openclaw" }, options);
    },
    probeEmbeddingAvailability: probe, // OpenClaw may call these detached from the manager: no `this`
    async probeVectorAvailability() {
      return (await probe()).ok;
    },
  };
}

function text(content: string) {
  return [{ type: "text" as const, text: content }];
}

function tools(settings: MemorydPluginConfig): AnyAgentTool[] {
  const memory = manager(settings);
  const search = {
    name: "memory_search",
    label: "Memory search",
    description:
      "Search long-term memory (notes and past conversations) in any language; exact names work too. Use it before " +
      "answering about prior work, decisions, dates, people or preferences. Results cite path#Lx-Ly.",
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", description: "What to recall." },
        maxResults: { type: "integer", minimum: 1, maximum: 50 },
        minScore: { type: "number" },
      },
      required: ["query"],
    },
    async execute(_id: string, params: { query: string; maxResults?: number; minScore?: number }) {
      const results = await memory.search(params.query, params);
      const lines = results.map((r) => `[${r.score.toFixed(3)}] ${r.citation}${dated(r)}\n${r.snippet}`);
      return { content: text(lines.join("\n\n") || "No memories matched."), details: { results } };
    },
  };
  const get = {
    name: "memory_get",
    label: "Memory get",
    description: "Read lines of a memory file, e.g. after memory_search cited path#L10-L20: path, from=10, lines=30.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string" },
        from: { type: "integer", minimum: 1 },
        lines: { type: "integer", minimum: 1 },
      },
      required: ["path"],
    },
    async execute(_id: string, params: { path: string; from?: number; lines?: number }) {
      const got = await memory.readFile({ relPath: params.path, from: params.from, lines: params.lines });
      return { content: text(got.text), details: got };
    },
  };
  const forget = {
    name: "memory_forget",
    label: "Memory forget",
    description:
      "Forget a memory the user asks you to forget, or one that is wrong: pass the citation memory_search gave " +
      "(path#Lstart-Lend) or a note's path. Or pass `query` alone: you get the matches and a `confirm` token; show " +
      "them to the user, and call again with the same query and that token to forget exactly those. A conversation " +
      "transcript is never edited: its lines are kept out of search. The user can undo it (openclaw memory undo); " +
      "`purge` keeps no copy and cannot be undone: only when the user asks for that.",
    parameters: {
      type: "object",
      properties: {
        citation: { type: "string", description: "path#Lstart-Lend as memory_search cites it, or a note's path." },
        query: { type: "string", description: "Forget what this finds: the first call shows the matches." },
        confirm: { type: "string", description: "The token the query's first call gave: forget exactly those." },
        expect: { type: "string", description: "The text you saw at the citation (or its sha256: hash)." },
        purge: { type: "boolean", description: "Keep nothing of the text (cannot be undone)." },
      },
    },
    async execute(_id: string, params: ForgetParams) {
      const done = await memory.forget(params);
      const again = "To forget them, call memory_forget again with the same query and confirm={confirm}.";
      return { content: text(forgetText(done, again)), details: done };
    },
  };
  const update = {
    name: "memory_update",
    label: "Memory update",
    description:
      "Correct a memory that is wrong or out of date, in place: replace exactly the cited lines (path#Lstart-Lend) " +
      "with new text (empty text removes them). `expect` is the text you read there (from memory_get, or the " +
      "snippet if it showed the whole lines) or its hash; if the lines changed since, nothing is written and you " +
      "get their current text. The user can undo it (openclaw memory undo).",
    parameters: {
      type: "object",
      properties: {
        citation: { type: "string", description: "The lines to replace: path#L3-L5." },
        text: { type: "string", description: "Their new text (empty: remove them)." },
        expect: { type: "string", description: "What you saw there: the lines' text, or their sha256: hash." },
      },
      required: ["citation", "text", "expect"],
    },
    async execute(_id: string, params: { citation: string; text: string; expect: string }) {
      const done = await memory.update(params);
      const said = done.conflict
        ? `Not changed: ${done.conflict}. Current text of ${done.current?.citation}:\n${done.current?.text}`
        : `Updated; now ${done.citation || "removed"}`;
      return { content: text(said), details: done };
    },
  };
  return [search, get, forget, update] as unknown as AnyAgentTool[];
}

function registerCli(api: OpenClawPluginApi, settings: MemorydPluginConfig) {
  api.registerCli(
    ({ program }) => {
      const memory = program.command("memory").description("Search and inspect memory through memoryd");
      memory
        .command("search")
        .description("Search memory")
        .argument("<query...>", "what to recall")
        .option("--max-results <n>", "how many results", (v: string) => Number.parseInt(v, 10))
        .option("--min-score <s>", "drop results below this score", (v: string) => Number.parseFloat(v))
        .option("--json", "print JSON")
        .action(async (words: string[], opts: { maxResults?: number; minScore?: number; json?: boolean }) => {
          const results = await manager(settings).search(words.join(" "), opts).catch(fail);
          if (opts.json) print(JSON.stringify({ results }, null, 2));
          else for (const r of results) print(`${r.score.toFixed(3)}  ${r.citation}${dated(r)}\n    ${r.snippet.replace(/\s+/g, " ").slice(0, 240)}\n`);
        });
      memory
        .command("status")
        .description("Show memoryd's index status")
        .option("--json", "print JSON")
        .action(async (opts: { json?: boolean }) => {
          const state = await manager(settings).refresh().catch(fail);
          if (opts.json) print(JSON.stringify(state, null, 2));
          else print(`memoryd: ${state.files} files, ${state.chunks} chunks, provider ${state.provider}${state.model ? ` (${state.model})` : ""}`);
        });
      memory
        .command("index")
        .description("Bring memoryd's index up to date now (--force re-reads every file)")
        .option("--force", "re-read every file")
        .action(async (opts: { force?: boolean }) => {
          const done = await call<{ done: boolean; report: Record<string, unknown> | null }>(
            "sync",
            { agent: settings.agent, force: Boolean(opts.force), client: "openclaw" },
            { socket: settings.socket, timeoutMs: 3_600_000 },
          ).catch(fail);
          print(done.done ? `memoryd: indexed (${JSON.stringify(done.report ?? {})})` : "memoryd: still indexing");
        });
      memory
        .command("forget")
        .description("Forget lines of a note (path#Lx-Ly), a whole note, or what --query finds (shown, then confirmed)")
        .argument("[target...]", "a citation as search shows it (path#Lx-Ly), or a note's path")
        .option("--query <text>", "forget what this finds: the matches are shown and confirmed first")
        .option("--yes", "with --query: forget the matches without asking")
        .option("--expect <text>", "the text you saw there (or its sha256: hash): nothing changes if it differs")
        .option("--purge", "keep nothing of the forgotten text in memoryd's data dir (cannot be undone)")
        .option("--json", "print JSON")
        .action(async (words: string[], opts: { query?: string; yes?: boolean; expect?: string; purge?: boolean; json?: boolean }) => {
          const target = words.join(" ").trim() || undefined;
          if (!target === (opts.query === undefined)) {
            process.stderr.write("memoryd: name one thing to forget: a citation (or a note's path), or --query\n");
            process.exit(2);
          }
          const memory = manager(settings);
          const options = { expect: opts.expect, purge: Boolean(opts.purge) };
          const show = (done: ForgetAnswer) => {
            if (opts.json) print(JSON.stringify(done, null, 2));
            else if (done.matches) for (const m of done.matches) print(`${m.citation}\n    ${m.snippet.trim().replace(/\s+/g, " ").slice(0, 300)}`);
            else print(forgotLine(done));
          };
          if (target) {
            const done = await memory.forget({ citation: target, ...options }).catch(fail);
            show(done);
            if (!done.forgotten) process.exit(1);
            return;
          }
          const shown = await memory.forget({ query: opts.query, ...options }).catch(fail);
          if (!shown.matches?.length) {
            if (opts.json) print(JSON.stringify(shown, null, 2));
            else print("memoryd: nothing matched; nothing forgotten");
            return;
          }
          if (!opts.yes) {
            show(shown);
            if (opts.json || !process.stdin.isTTY) {
              process.stderr.write("memoryd: nothing forgotten: run again with --yes, or at a terminal to be asked\n");
              process.exit(1);
            }
            const ask = createInterface({ input: process.stdin, output: process.stdout });
            const answer = (await ask.question(`Forget these ${shown.matches.length}? [y/N] `)).trim().toLowerCase();
            ask.close();
            if (answer !== "y" && answer !== "yes") {
              print("memoryd: nothing forgotten");
              process.exit(1);
            }
          }
          const done = await memory.forget({ query: opts.query, confirm: shown.confirm, ...options }).catch(fail);
          if (done.matches) {
            show(done); // they changed between the two calls: nothing forgotten, these are the new matches
            process.stderr.write(`memoryd: nothing forgotten: ${done.conflict ?? "the matches changed"}\n`);
            process.exit(1);
          }
          show(done);
          if (done.results?.some((r) => r.conflict)) process.exit(1);
        });
      memory
        .command("undo")
        .description("Undo the last forget or update (or the last N), newest first")
        .option("-n, --count <n>", "how many changes to undo", (v: string) => Number.parseInt(v, 10))
        .option("--json", "print JSON")
        .action(async (opts: { count?: number; json?: boolean }) => {
          const done = await manager(settings).undo(opts.count ?? 1).catch(fail);
          if (opts.json) print(JSON.stringify(done, null, 2));
          else if (!done.results.length) print("memoryd: nothing to undo");
          else for (const r of done.results) print(`memoryd: undid change ${r.undone} (${r.kind} of ${r.path})${r.index_error ? `; not reindexed yet: ${r.index_error}` : ""}`);
        });
    },
    { commands: ["memory"] },
  );
}

/** What a forget did, in the CLI's words. */
function forgotLine(done: ForgetAnswer): string {
  if (done.conflict && done.current) {
    return `memoryd: nothing forgotten: ${done.conflict}\ncurrent text of ${done.current.citation}:\n${done.current.text}`;
  }
  const gone = Array.isArray(done.forgotten) ? done.forgotten.filter((c) => c) : [done.forgotten];
  const count = changesOf(done);
  const undo = count ? ` (undo: openclaw memory undo${count > 1 ? ` -n ${count}` : ""})` : "";
  return [
    gone.length ? `memoryd: forgot ${gone.join(", ")}${undo}` : "memoryd: nothing forgotten",
    ...(done.results ?? []).filter((r) => r.conflict).map((r) => `memoryd: not forgotten: ${r.conflict}`),
    ...[done, ...(done.results ?? [])].filter((r) => r.index_error).map((r) => `memoryd: not reindexed yet: ${r.index_error}`),
  ].join("\n");
}

// OpenClaw sends console.log to stderr while its CLI runs: a command's answer goes to stdout directly
function print(line: string) {
  process.stdout.write(`${line}\n`);
}

function fail(error: unknown): never {
  process.stderr.write(`memoryd: ${error instanceof MemorydError ? error.message : String(error)}\n`);
  process.exit(error instanceof MemorydError && error.code === "not_running" ? 3 : 1);
}

const plugin = {
  id: "memoryd",
  name: "memoryd",
  description: "Memory answered by the memoryd daemon: hybrid search in any language, recall before every reply.",
  kind: "memory",
  register(api: OpenClawPluginApi) {
    const settings = settingsOf(api);
    const memory = manager(settings);
    api.registerMemoryCapability({
      runtime: {
        async getMemorySearchManager() {
          return { manager: memory as never };
        },
        resolveMemoryBackendConfig() {
          return { backend: "builtin" as const };
        },
        async authorizeSearchHits(params: { hits: unknown[] }) {
          return params.hits as never; // memoryd serves only what this agent's config lets it index
        },
      },
      flushPlanResolver: () => ({
        softThresholdTokens: 4000,
        forceFlushTranscriptBytes: 2_000_000,
        reserveTokensFloor: 20_000,
        prompt: FLUSH_PROMPT,
        systemPrompt: FLUSH_PROMPT,
        relativePath: `memory/${new Date().toISOString().slice(0, 10)}.md`,
      }),
    } as never);
    for (const tool of tools(settings)) api.registerTool(tool, { names: [tool.name] });
    registerCli(api, settings);
    if (settings.recall) {
      api.on("before_prompt_build", async (event, ctx) => {
        const prompt = event.currentUserMessage ?? event.prompt;
        if (!prompt || (ctx as { trigger?: string }).trigger !== "user") return;
        try {
          const answer = await call<{ block: string }>(
            "recall",
            {
              prompt,
              session: (ctx as { sessionKey?: string }).sessionKey,
              budget: settings.recallBudget,
              agent: settings.agent,
              client: "openclaw",
            },
            { socket: settings.socket, timeoutMs: RECALL_MS },
          );
          return answer.block ? { prependContext: answer.block } : undefined;
        } catch (error) {
          api.logger.warn(`memoryd recall skipped: ${(error as Error).message}`);
          return undefined; // never blocks a reply
        }
      });
      api.on("session_end", async () => {
        await memory.sync().catch((error: Error) => api.logger.warn(`memoryd sync skipped: ${error.message}`));
      });
    }
  },
};

export default plugin;
