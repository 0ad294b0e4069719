// memoryd as OpenClaw's memory: takes the memory slot (plugins.slots.memory = "memoryd"), so memory_search,
// memory_get, Active Memory, `openclaw memory search|status|index` and the recall before every reply are answered
// by the memoryd daemon over its Unix socket. Only types come from openclaw: the host supplies the runtime.
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
  };
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
      const lines = results.map((r) => `[${r.score.toFixed(3)}] ${r.citation}\n${r.snippet}`);
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
  return [search, get] as unknown as AnyAgentTool[];
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
          else for (const r of results) print(`${r.score.toFixed(3)}  ${r.citation}\n    ${r.snippet.replace(/\s+/g, " ").slice(0, 240)}\n`);
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
    },
    { commands: ["memory"] },
  );
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
