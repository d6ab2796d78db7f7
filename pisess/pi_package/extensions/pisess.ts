/**
 * /pisess: open the running session in `pisess browse`, at its current entry.
 *
 *   /pisess                 the session's tree, the current leaf selected
 *   /pisess context         what the model sees at the current leaf
 *   /pisess trace           the turns and steps up to the current leaf
 *   /pisess diff ENTRY      the current leaf compared with ENTRY
 *
 * pi's screen is handed to pisess (tui.stop(), the program run on the terminal, tui.start()) as pi's
 * own interactive-shell example does, and comes back as it was when pisess quits. pisess only reads
 * the session file; nothing here writes to it. The program is `pisess` on PATH, or the file named by
 * PISESS_BIN. Node built-ins only: the package has no dependency of its own.
 */

import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";

export const INSTALL_HINT =
	"pisess is not installed: `pipx install 'pisess[tui]'` or `uv tool install 'pisess[tui]'` (or set PISESS_BIN to its path)";

const SUBCOMMANDS = ["context", "trace", "diff"] as const;

/** The command line `/pisess ARGS` runs, for a session file and its leaf; an error says why none. */
export function browseArgs(args: string, sessionFile: string, leafId: string | null): string[] | { error: string } {
	const words = args.trim().split(/\s+/).filter(Boolean);
	const argv = ["browse", sessionFile];
	if (leafId) argv.push("--at", leafId);
	const [sub, ...rest] = words;
	if (sub === undefined) return argv;
	if (sub === "context" || sub === "trace") {
		if (rest.length > 0) return { error: `/pisess ${sub} takes no argument` };
		return [...argv, "--screen", sub];
	}
	if (sub === "diff") {
		if (rest.length !== 1) return { error: "/pisess diff takes one entry id: /pisess diff ENTRY" };
		return [...argv, "--compare", rest[0]];
	}
	return { error: `unknown /pisess command '${sub}': use /pisess, /pisess context, /pisess trace or /pisess diff ENTRY` };
}

function executable(file: string): boolean {
	try {
		accessSync(file, constants.X_OK);
		return statSync(file).isFile();
	} catch {
		return false;
	}
}

/** The pisess program: PISESS_BIN when set, else `pisess` on PATH; null when there is none. */
export function findProgram(env: NodeJS.ProcessEnv = process.env): string | null {
	const configured = env.PISESS_BIN;
	if (configured) return executable(configured) ? configured : null;
	for (const dir of (env.PATH ?? "").split(delimiter)) {
		if (!dir || !isAbsolute(dir)) continue;
		const candidate = join(dir, "pisess");
		if (executable(candidate)) return candidate;
	}
	return null;
}

/** A command line as a shell would need it typed (for messages only: the program is run without a shell). */
export function shellQuote(argv: string[]): string {
	return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`)).join(" ");
}

async function runPisess(args: string, ctx: ExtensionCommandContext): Promise<void> {
	const sessionFile = ctx.sessionManager.getSessionFile();
	if (!sessionFile) {
		ctx.ui.notify("/pisess: this session is not saved to a file (--no-session), so there is nothing to open", "warning");
		return;
	}
	if (!existsSync(sessionFile)) {
		ctx.ui.notify("/pisess: pi has not written this session yet (it does after the first answer)", "warning");
		return;
	}
	const argv = browseArgs(args, sessionFile, ctx.sessionManager.getLeafId());
	if (!Array.isArray(argv)) {
		ctx.ui.notify(`/pisess: ${argv.error}`, "error");
		return;
	}
	const program = findProgram();
	if (!program) {
		ctx.ui.notify(INSTALL_HINT, "error");
		return;
	}
	if (ctx.mode !== "tui") {
		ctx.ui.notify(`/pisess needs pi's terminal; run it yourself: ${shellQuote(["pisess", ...argv])}`, "info");
		return;
	}
	const result = await ctx.ui.custom<{ status: number | null; error: string }>((tui, _theme, _kb, done) => {
		tui.stop();
		process.stdout.write("\x1b[2J\x1b[H");
		// stderr is kept so that a refusal (an unknown entry, a missing extra) can be said after pi's
		// screen is back; the screen itself is pisess's while it runs.
		const run = spawnSync(program, argv, { stdio: ["inherit", "inherit", "pipe"], env: process.env });
		tui.start();
		tui.requestRender(true);
		const stderr = run.stderr ? run.stderr.toString("utf8").trim() : "";
		done({ status: run.status, error: run.error ? run.error.message : stderr.split("\n").slice(-1)[0] ?? "" });
		return { render: () => [], invalidate: () => {} };
	});
	if (result.status !== 0 && result.status !== 130) {
		const why = result.error || `exit status ${result.status}`;
		ctx.ui.notify(`/pisess: ${shellQuote(["pisess", ...argv])} failed: ${why}`, "error");
	}
}

export default function pisessExtension(pi: ExtensionAPI) {
	pi.registerCommand("pisess", {
		description: "Open this session in pisess browse at the current entry (context, trace, diff ENTRY)",
		getArgumentCompletions: (prefix: string) => {
			const found = SUBCOMMANDS.filter((s) => s.startsWith(prefix.trim()));
			return found.length > 0 ? found.map((s) => ({ value: s, label: s })) : null;
		},
		handler: async (args: string, ctx: ExtensionCommandContext) => runPisess(args, ctx),
	});
}
