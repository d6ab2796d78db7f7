// Loads pisess's pi package through pi 1.6.0's own loaders and drives /pisess with a recording
// stand-in for pi's command context. Run by tests/test_pi_package.py as
//   node check_extension.mjs PI_NODE_MODULES PACKAGE_DIR SESSION_FILE LEAF_ID RECORD_FILE
// PISESS_BIN names a recording program (it writes its argv to RECORD_FILE). Prints one JSON
// document of what happened; the Python test asserts on it.
import { existsSync, readFileSync, rmSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, packageDir, sessionFile, leafId, recordFile] = process.argv.slice(2);
// The loader's and the skills' own modules: pi's index also loads its package manager, which needs
// node 22's fs.globSync; these two are the code pi runs to load a package's extensions and skills.
const dist = join(modules, "@earendil-works/pi-coding-agent/dist/core");
const loader = await import(pathToFileURL(join(dist, "extensions/loader.js")).href);
const skillsModule = await import(pathToFileURL(join(dist, "skills.js")).href);

const out = {};
const agentDir = mkdtempSync(join(tmpdir(), "pisess-pi-agent-"));
const loaded = await loader.discoverAndLoadExtensions([packageDir], packageDir, agentDir);
out.loadErrors = loaded.errors.map((e) => e.error);
const ext = loaded.extensions.find((e) => e.commands.has("pisess"));
out.commands = loaded.extensions.flatMap((e) => [...e.commands.keys()]);
const skills = skillsModule.loadSkillsFromDir({ dir: join(packageDir, "skills"), source: "package" });
out.skills = (skills.skills ?? skills).map((s) => ({ name: s.name, description: s.description }));
out.skillDiagnostics = (skills.diagnostics ?? []).map((d) => d.message ?? String(d));

async function run(args, { mode = "tui", file = sessionFile, leaf = leafId } = {}) {
	// file: null is a session pi keeps in memory only (--no-session)
	rmSync(recordFile, { force: true });
	const events = [];
	const ctx = {
		mode,
		hasUI: true,
		cwd: packageDir,
		sessionManager: { getSessionFile: () => file, getLeafId: () => leaf },
		ui: {
			notify: (message, type) => events.push({ notify: message, type }),
			custom: async (factory) =>
				new Promise((resolve) => {
					const tui = {
						stop: () => events.push("tui.stop"),
						start: () => events.push("tui.start"),
						requestRender: () => events.push("tui.render"),
					};
					factory(tui, {}, {}, (result) => resolve(result));
				}),
		},
	};
	// what the extension writes to pi's terminal itself (it clears the screen for pisess) is recorded
	const write = process.stdout.write.bind(process.stdout);
	process.stdout.write = (data, ...rest) => {
		if (String(data).includes("\x1b[2J")) events.push("screen.clear");
		else return write(data, ...rest);
		return true;
	};
	try {
		await ext.commands.get("pisess").handler(args, ctx);
	} finally {
		process.stdout.write = write;
	}
	const argv = existsSync(recordFile) ? JSON.parse(readFileSync(recordFile, "utf8")) : null;
	return { events, argv };
}

if (ext) {
	const completions = ext.commands.get("pisess").getArgumentCompletions;
	out.completions = completions ? (completions("") ?? []).map((c) => c.value) : [];
	out.runs = {
		browse: await run(""),
		context: await run("context"),
		trace: await run("trace"),
		diff: await run("diff abc123"),
		diffMissing: await run("diff"),
		unknown: await run("bogus"),
		noFile: await run("", { file: null }),
		print: await run("", { mode: "print" }),
	};
	const bin = process.env.PISESS_BIN;
	process.env.PISESS_BIN = join(agentDir, "no-such-pisess");
	out.runs.missing = await run("");
	process.env.PISESS_BIN = bin;
}
rmSync(agentDir, { recursive: true, force: true });
process.stdout.write(JSON.stringify(out));
