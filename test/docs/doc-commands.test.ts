/**
 * Every command in README and docs works as written with Node 20 on the PATH (issue 33 item 10): Ward
 * runs its TypeScript on the pinned Node 24, so a bare `node` on a `.ts` file fails on Node 20 with
 * ERR_UNKNOWN_FILE_EXTENSION. This reads every fenced `sh` block of README.md and docs/*.md, and the
 * examples in every command's usage, and checks what each command names exists: `npx ward <command>`
 * is a command, `npm run <script>` a script, `npx <tool>` a dependency, a file named after a command a
 * file; and that no command runs a bare `node` on a `.ts` file (`npx node` is the pinned one).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { COMMANDS } from '../../src/cli/command-index.ts';
import { REPO_ROOT } from '../helpers/ward-process.ts';

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; dependencies: Record<string, string>; devDependencies: Record<string, string> };
const WARD_COMMANDS = new Set([...COMMANDS.map((command) => command.name), 'help']);
const NPM_BUILTINS = new Set(['ci', 'install', 'start', 'test', 'i', 'view', 'ls', 'exec']);

/** The shell commands of a Markdown text: each logical line of its `sh` blocks, comments cut, with its line number. */
export function shellCommands(markdown: string): Array<{ line: number; text: string }> {
  const commands: Array<{ line: number; text: string }> = [];
  const lines = markdown.split('\n');
  let inSh = false;
  let pending = '';
  let start = 0;
  lines.forEach((raw, index) => {
    const fence = /^\s*```(\w*)/.exec(raw);
    if (fence) {
      inSh = !inSh && ['sh', 'bash', 'shell'].includes(fence[1] ?? '');
      return;
    }
    if (!inSh) return;
    const line = raw.replace(/(^|\s)#(?![!{]).*$/, '').trimEnd();
    if (!pending) start = index + 1;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      return;
    }
    const text = (pending + line).replace(/\s+/g, ' ').trim();
    pending = '';
    if (text) commands.push({ line: start, text });
  });
  return commands;
}

/** What is wrong with one shell command line, if anything. */
export function problemsOf(text: string): string[] {
  const problems: string[] = [];
  // Each simple command: split on pipes, lists and command substitutions.
  for (const segment of text.split(/\|\||&&|[|;&]|\$\(|`/)) {
    const words = segment
      .trim()
      .replace(/^\(+/, '')
      .split(/\s+/)
      .map((word) => word.replace(/[)"']+$/, ''))
      .filter((word) => !/^[A-Z_][A-Z0-9_]*=/.test(word));
    const [first, second, third] = words;
    if (first === 'node' && /\.ts\b/.test(segment)) problems.push(`a bare node on a .ts file (use npx ward …, or npx node …): ${segment.trim()}`);
    if (first === 'npx' && second === 'ward' && third !== undefined && !third.startsWith('-') && !WARD_COMMANDS.has(third)) problems.push(`no ward command "${third}"`);
    if (first === 'npx' && second !== undefined && !['ward', 'node'].includes(second) && !second.startsWith('-') && !(second in pkg.dependencies) && !(second in pkg.devDependencies)) {
      problems.push(`npx ${second} is not one of the project's dependencies (npx would download it)`);
    }
    if (first === 'npm' && second === 'run' && third !== undefined && !(third in pkg.scripts)) problems.push(`no npm script "${third}"`);
    if (first === 'npm' && second !== undefined && second !== 'run' && !NPM_BUILTINS.has(second)) problems.push(`npm ${second}?`);
    for (const word of words) {
      const file = /^(?:\.\/)?((?:src|scripts|bench|examples|test)\/[\w./-]+\.(?:ts|js|json))$/.exec(word.replace(/^['"]|['"]$/g, ''))?.[1];
      if (file && !existsSync(join(REPO_ROOT, file))) problems.push(`no file ${file}`);
    }
  }
  return problems;
}

const DOCS = ['README.md', ...readdirSync(join(REPO_ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

describe('commands in README and docs', () => {
  test('the checker finds what it must (a bare node on .ts, an unknown command, script, tool or file) and passes the rest', () => {
    assert.equal(problemsOf(`TOKEN=$(node -e "import('./src/mesh/runtime/auth.ts')")`).length, 1);
    assert.equal(problemsOf('node src/cli/ward.ts registry').length, 1);
    assert.equal(problemsOf('REGISTRY_PORT=9 npx ward regsitry').length, 1);
    assert.equal(problemsOf('npm run benchmark').length, 1);
    assert.equal(problemsOf('npx some-tool --flag').length, 1);
    assert.equal(problemsOf('npx node examples/not-here.ts').length, 1);
    assert.deepEqual(problemsOf('npx ward start && npm run bench:mesh | tee out.txt'), []);
    assert.deepEqual(problemsOf(`curl -H "x-idempotency-key: $(node -e 'console.log(crypto.randomUUID())')" localhost:8080`), []);
    assert.deepEqual(
      shellCommands('text\n```sh\nnpx ward start \\\n  --x   # comment\n# only a comment\n```\n```json\n{"node": "a.ts"}\n```').map((command) => command.text),
      ['npx ward start --x'],
    );
  });

  for (const doc of DOCS) {
    test(`${doc}: every shell command names what exists and runs on Node 20`, () => {
      const problems = shellCommands(readFileSync(join(REPO_ROOT, doc), 'utf8')).flatMap((command) => problemsOf(command.text).map((problem) => `${doc}:${command.line}: ${problem}`));
      assert.deepEqual(problems, []);
    });
  }

  test("every command's usage examples run on Node 20", async () => {
    const problems: string[] = [];
    for (const entry of COMMANDS) {
      const { usage } = await entry.load();
      const example = usage.split('\nExample:\n')[1] ?? '';
      for (const line of example.split('\n').map((text) => text.trim()).filter(Boolean)) {
        problems.push(...problemsOf(line).map((problem) => `ward ${entry.name}: ${problem}`));
      }
    }
    assert.deepEqual(problems, []);
  });
});
