// Every link in README.md and docs/**/*.md (the guides, their index docs/README.md and the lab notes in docs/notes/)
// resolves inside the repository: relative Markdown links and images name a file or folder that exists, none climbs
// out of the checkout, and every repository path quoted in code spans (src/..., tests/..., configs/..., docs/..., ...)
// exists, so a reader who follows one finds it.
import assert from "node:assert/strict";
import { documents } from "./docs.ts";

const ROOT = new URL("../", import.meta.url);
const QUOTED = /^(src|tests|configs|docs|tasks|shaders|models|\.ci)\/[\w./-]*$/;

async function exists(url: URL): Promise<boolean> {
  return await Deno.stat(url).then(() => true, () => false);
}

/** The relative targets of a document's Markdown links and images, and its quoted repository paths. */
export function references(text: string): { links: string[]; quoted: string[] } {
  const prose = text.replace(/^```[\s\S]*?^```/gm, ""); // code blocks show commands, not links
  const links = [...prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1])
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith("#"))
    .map((t) => decodeURIComponent(t.split("#")[0]));
  const quoted = [...prose.matchAll(/`([^`\s]+)`/g)].map((m) => m[1].replace(/[.,:;]$/, ""))
    .filter((p) => QUOTED.test(p) && !p.includes("*"));
  return { links, quoted };
}

Deno.test("the link reader finds links, images and quoted paths, and skips URLs and anchors", () => {
  const r = references(
    'See [a](docs/x.md#part), ![b](img/p.png "t"), [c](https://e.org), [d](#top) and `src/cli/main.ts`, ' +
      "`configs/*.yaml`, `deno task x`.\n```sh\n[e](nowhere.md)\n```\n",
  );
  assert.deepEqual(r, { links: ["docs/x.md", "img/p.png"], quoted: ["src/cli/main.ts"] });
});

Deno.test("README.md and docs/**/*.md: every relative link and quoted path exists inside the repository", async () => {
  const docs = await documents();
  for (const must of ["README.md", "docs/README.md", "docs/main-job.md"]) assert.ok(docs.includes(must), must);
  assert.ok(docs.some((d) => d.startsWith("docs/notes/")), `the lab notes are checked: ${docs.join(", ")}`);
  const broken: string[] = [];
  for (const doc of docs) {
    const base = new URL(doc, ROOT);
    const { links, quoted } = references(await Deno.readTextFile(base));
    for (const link of links) {
      const target = new URL(link, base);
      if (!target.href.startsWith(ROOT.href)) broken.push(`${doc}: ${link} (outside the repository)`);
      else if (!(await exists(target))) broken.push(`${doc}: ${link} (missing)`);
    }
    for (const path of quoted) {
      if (!(await exists(new URL(path, ROOT)))) broken.push(`${doc}: \`${path}\` (missing)`);
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("README.md names no path outside the repository", async () => {
  const text = await Deno.readTextFile(new URL("README.md", ROOT));
  assert.deepEqual([...text.matchAll(/`(\.\.\/[^`]*)`/g)].map((m) => m[1]), []);
});
