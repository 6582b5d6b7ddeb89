/**
 * The procedural worlds of the BFCL task generator (generator.ts): for each API class, a random initial state in
 * the class's `initial_config` shape, and request templates that each turn one user sentence into the ground-truth
 * calls that satisfy it, given the world's view of the state so far. A world's view is its own bookkeeping; the
 * generator still executes every drawn call on a live instance and redraws a request whose calls fail, so ground
 * truth never holds an erroring call even where the view and the class disagree.
 *
 * A template may also say the request with one argument left out (`vague`, then `clarify` gives it): BFCL's
 * missing-parameter turns.
 */
import { PyFloat, pyFloat } from "./classes/py.ts";
import type { PyValue } from "./literal.ts";
import type { Rng } from "../../src/util/random.ts";
import { call, PEOPLE, pick, type Request, sentence, WORDS, type World, type WorldFactory } from "./world_kit.ts";
import { messageWorld } from "./world_message.ts";
import { tradingWorld } from "./world_trading.ts";
import { travelWorld } from "./world_travel.ts";
import { vehicleWorld } from "./world_vehicle.ts";

export type { Request, World, WorldFactory };

const EXTS = ["txt", "md", "csv", "log", "pdf"];

/**
 * GorillaFileSystem: one working directory with files and subdirectories, the view tracking names and contents. Long:
 * 30-49 files and 6-10 subdirectories of 3-7 files each (the class adds BFCL's filler text to every file and its image
 * files to every leaf directory).
 */
export function fileSystemWorld(rng: Rng, long = false): World {
  const rootName = pick(rng, ["workspace", "home", "projects", "documents"]);
  const files = new Map<string, string>(), dirs = new Set<string>();
  const nFiles = long ? 30 + rng.int(20) : 2 + rng.int(3), nDirs = long ? 6 + rng.int(5) : 1 + rng.int(2);
  const name = () => long ? `${pick(rng, WORDS)}_${rng.int(100)}` : pick(rng, WORDS);
  while (files.size < nFiles) files.set(`${name()}.${pick(rng, EXTS)}`, sentence(rng, 3 + rng.int(4)));
  while (dirs.size < nDirs) {
    const d = name();
    if (![...files.keys()].some((f) => f.startsWith(`${d}.`))) dirs.add(d);
  }
  const contents: Record<string, unknown> = {};
  for (const [f, text] of files) contents[f] = { type: "file", content: text };
  for (const d of dirs) {
    const inner: Record<string, unknown> = {};
    for (let i = 0, n = long ? 3 + rng.int(5) : 0; i < n; i++) {
      inner[`${pick(rng, WORDS)}_${i}.${pick(rng, EXTS)}`] = { type: "file", content: sentence(rng, 4) };
    }
    contents[d] = { type: "directory", contents: inner };
  }
  const config = { root: { [rootName]: { type: "directory", contents } } };
  // The view: the working directory's files and subdirectories; after a cd the view is that (empty) subdirectory.
  let here = { files, dirs };
  const freshFile = () => {
    for (let i = 0; i < 20; i++) {
      const f = `${pick(rng, WORDS)}_${rng.int(100)}.${pick(rng, EXTS)}`;
      if (!here.files.has(f) && !here.dirs.has(f)) return f;
    }
    return undefined;
  };
  const requests: ((rng: Rng) => Request | undefined)[] = [
    () => {
      const f = freshFile();
      if (!f) return undefined;
      return {
        ask: `Create an empty file named '${f}' here.`,
        calls: [call("touch", { file_name: f })],
        vague: { ask: "Create a new empty file here for me.", clarify: `Name it '${f}'.` },
        commit: () => void here.files.set(f, ""),
      };
    },
    (rng) => {
      const f = pick(rng, [...here.files.keys()]);
      const text = sentence(rng, 3 + rng.int(3));
      if (!f) return undefined;
      return {
        ask: `Write '${text}' into '${f}'.`,
        calls: [call("echo", { content: text, file_name: f })],
        vague: { ask: `Write something into '${f}'.`, clarify: `The text is '${text}'.` },
        commit: () => void here.files.set(f, text),
      };
    },
    (rng) => {
      const f = pick(rng, [...here.files.keys()]);
      return f ? { ask: `Show me what '${f}' says.`, calls: [call("cat", { file_name: f })] } : undefined;
    },
    (rng) => {
      const f = pick(rng, [...here.files.keys()]);
      if (!f) return undefined;
      return { ask: `How many lines does '${f}' have?`, calls: [call("wc", { file_name: f, mode: "l" })] };
    },
    (rng) => {
      const f = pick(rng, [...here.files.keys()]);
      if (!f) return undefined;
      const word = pick(rng, (here.files.get(f) || pick(rng, WORDS)).split(" "));
      return {
        ask: `Find the lines of '${f}' that mention '${word}'.`,
        calls: [call("grep", { file_name: f, pattern: word })],
        vague: { ask: `Search '${f}' for a word for me.`, clarify: `The word is '${word}'.` },
      };
    },
    (rng) => {
      const f = pick(rng, [...here.files.keys()]), g = freshFile();
      if (!f || !g) return undefined;
      return {
        ask: `Make a copy of '${f}' called '${g}'.`,
        calls: [call("cp", { source: f, destination: g })],
        commit: () => void here.files.set(g, here.files.get(f) ?? ""),
      };
    },
    (rng) => {
      const f = pick(rng, [...here.files.keys()]), d = pick(rng, [...here.dirs]);
      if (!f || !d) return undefined;
      return {
        ask: `Move '${f}' into the '${d}' folder.`,
        calls: [call("mv", { source: f, destination: d })],
        vague: { ask: `Move '${f}' into one of the folders here.`, clarify: `Use the '${d}' folder.` },
        commit: () => void here.files.delete(f),
      };
    },
    (rng) => {
      const d = `${pick(rng, WORDS)}_${rng.int(100)}`;
      if (here.dirs.has(d) || here.files.has(d)) return undefined;
      return {
        ask: `Make a new folder named '${d}'.`,
        calls: [call("mkdir", { dir_name: d })],
        commit: () => void here.dirs.add(d),
      };
    },
    (rng) => {
      const f = pick(rng, [...here.files.keys()]);
      if (!f) return undefined;
      return { ask: `Delete '${f}'.`, calls: [call("rm", { file_name: f })], commit: () => void here.files.delete(f) };
    },
    () => ({
      ask: "List everything in the current folder, hidden entries included.",
      calls: [call("ls", { a: true })],
    }),
    (rng) => {
      const d = pick(rng, [...here.dirs]);
      const f = freshFile();
      if (!d || !f) return undefined;
      return {
        ask: `Go into '${d}' and create a file '${f}' there.`,
        calls: [call("cd", { folder: d }), call("touch", { file_name: f })],
        commit: () => void (here = { files: new Map([[f, ""]]), dirs: new Set() }),
      };
    },
  ];
  return { className: "GorillaFileSystem", config, request: (rng) => pick(rng, requests)(rng) };
}

/** MathAPI (stateless): arithmetic whose later requests may use an earlier result. */
export function mathWorld(_rng: Rng): World {
  let last: PyValue | undefined;
  const num = (rng: Rng): PyValue => rng.float() < 0.5 ? 1 + rng.int(99) : pyFloat((1 + rng.int(999)) / 10);
  const show = (v: PyValue) => v instanceof PyFloat ? String(v.value) : String(v);
  const keep = (results: string[]) => {
    const m = /"result": (-?[\d.e+-]+)/.exec(results[results.length - 1] ?? "");
    last = m ? pyFloat(Number(m[1])) : undefined;
  };
  const binary: [string, string][] = [["add", "plus"], ["subtract", "minus"], ["multiply", "times"]];
  const requests: ((rng: Rng) => Request | undefined)[] = [
    (rng) => {
      const [fn, word] = pick(rng, binary), a = num(rng), b = num(rng);
      return {
        ask: `What is ${show(a)} ${word} ${show(b)}?`,
        calls: [call(fn, { a, b })],
        vague: { ask: `What is ${show(a)} ${word} another number?`, clarify: `The other number is ${show(b)}.` },
        commit: keep,
      };
    },
    (rng) => {
      if (last === undefined) return undefined;
      const b = num(rng);
      return { ask: `Multiply that result by ${show(b)}.`, calls: [call("multiply", { a: last, b })], commit: keep };
    },
    (rng) => {
      const xs = Array.from({ length: 3 + rng.int(3) }, () => num(rng));
      return {
        ask: `What is the mean of ${xs.map(show).join(", ")}?`,
        calls: [call("mean", { numbers: xs })],
        commit: keep,
      };
    },
    (rng) => {
      const xs = Array.from({ length: 3 + rng.int(3) }, () => num(rng));
      return {
        ask: `Which is the largest of ${xs.map(show).join(", ")}?`,
        calls: [call("max_value", { numbers: xs })],
      };
    },
    (rng) => {
      const x = num(rng);
      return {
        ask: `Give me the square root of ${show(x)} to 2 decimal places.`,
        calls: [call("square_root", { number: x, precision: 2 })],
        commit: keep,
      };
    },
  ];
  return { className: "MathAPI", config: {}, request: (rng) => pick(rng, requests)(rng) };
}

/** TicketAPI: a logged-in user with a few tickets (long: 40-59); requests create, inspect, edit, resolve, close. */
export function ticketWorld(rng: Rng, long = false): World {
  const user = pick(rng, PEOPLE);
  const tickets: { id: number; status: string }[] = [];
  const queue: Record<string, unknown>[] = [];
  let counter = 1 + rng.int(20);
  for (let i = 0, n = long ? 40 + rng.int(20) : 1 + rng.int(3); i < n; i++) {
    const t = { id: counter++, title: `${pick(rng, WORDS)} issue`, description: sentence(rng, 4), status: "Open" };
    queue.push({ ...t, priority: 1 + rng.int(5), created_by: user });
    tickets.push({ id: t.id, status: "Open" });
  }
  const config = { ticket_queue: queue, ticket_counter: counter, current_user: user };
  const open = () => tickets.filter((t) => t.status === "Open");
  const requests: ((rng: Rng) => Request | undefined)[] = [
    (rng) => {
      const title = `${pick(rng, WORDS)} ${pick(rng, ["broken", "missing", "slow", "outdated"])}`;
      const priority = 1 + rng.int(5);
      return {
        ask: `Open a ticket titled '${title}' with priority ${priority}.`,
        calls: [call("create_ticket", { title, priority })],
        vague: {
          ask: `Open a ticket titled '${title}'; I will tell you the priority.`,
          clarify: `Priority ${priority}.`,
        },
        commit: () => void tickets.push({ id: counter++, status: "Open" }),
      };
    },
    (rng) => {
      const t = pick(rng, tickets);
      return t ? { ask: `Show me ticket ${t.id}.`, calls: [call("get_ticket", { ticket_id: t.id })] } : undefined;
    },
    (rng) => {
      const t = pick(rng, open());
      if (!t) return undefined;
      return {
        ask: `Close ticket ${t.id}.`,
        calls: [call("close_ticket", { ticket_id: t.id })],
        vague: { ask: "Close one of my open tickets.", clarify: `Ticket ${t.id}.` },
        commit: () => void (t.status = "Closed"),
      };
    },
    (rng) => {
      const t = pick(rng, open());
      if (!t) return undefined;
      const resolution = `${pick(rng, ["fixed", "replaced", "restarted", "updated"])} the ${pick(rng, WORDS)}`;
      return {
        ask: `Resolve ticket ${t.id} with the note '${resolution}'.`,
        calls: [call("resolve_ticket", { ticket_id: t.id, resolution })],
        vague: { ask: `Resolve ticket ${t.id}.`, clarify: `The resolution is '${resolution}'.` },
        commit: () => void (t.status = "Resolved"),
      };
    },
    (rng) => {
      const t = pick(rng, open());
      if (!t) return undefined;
      const priority = 1 + rng.int(5);
      return {
        ask: `Set the priority of ticket ${t.id} to ${priority}.`,
        calls: [call("edit_ticket", { ticket_id: t.id, updates: { priority } })],
      };
    },
  ];
  return { className: "TicketAPI", config, request: (rng) => pick(rng, requests)(rng) };
}

/** TwitterAPI: a logged-in user with a few tweets (long: 40-59); requests post, comment, retweet, mention, follow. */
export function twitterWorld(rng: Rng, long = false): World {
  const user = pick(rng, PEOPLE);
  const tweets: Record<string, unknown> = {};
  const ids: number[] = [];
  let counter = 0;
  const n = long ? 40 + rng.int(20) : 1 + rng.int(3);
  for (; counter < n; counter++) {
    tweets[String(counter)] = {
      id: counter,
      username: user,
      content: `${pick(rng, ["Working on", "Excited about", "Finished"])} the ${pick(rng, WORDS)}`,
      tags: [`#${pick(rng, WORDS)}`],
      mentions: [],
    };
    ids.push(counter);
  }
  const following = new Set(PEOPLE.filter((p) => p !== user && rng.float() < 0.3));
  const config = {
    username: user,
    password: `${user}${100 + rng.int(900)}`,
    authenticated: true,
    tweets,
    comments: {},
    retweets: {},
    following_list: [...following],
    tweet_counter: counter,
  };
  const requests: ((rng: Rng) => Request | undefined)[] = [
    (rng) => {
      const content = `${pick(rng, ["Just shipped", "Reviewing", "Planning"])} the ${pick(rng, WORDS)}`;
      const tag = `#${pick(rng, WORDS)}`;
      return {
        ask: `Post a tweet saying '${content}' with the tag ${tag}.`,
        calls: [call("post_tweet", { content, tags: [tag] })],
        vague: { ask: `Post a tweet with the tag ${tag}.`, clarify: `It should say '${content}'.` },
        commit: () => void ids.push(counter++),
      };
    },
    (rng) => {
      const id = pick(rng, ids);
      const text = `${pick(rng, ["Great", "Nice", "Interesting"])} ${pick(rng, WORDS)}!`;
      if (id === undefined) return undefined;
      return {
        ask: `Comment '${text}' on tweet ${id}.`,
        calls: [call("comment", { tweet_id: id, comment_content: text })],
        vague: { ask: `Leave a comment on tweet ${id}.`, clarify: `The comment is '${text}'.` },
      };
    },
    (rng) => {
      const id = pick(rng, ids);
      return id === undefined ? undefined : { ask: `Retweet tweet ${id}.`, calls: [call("retweet", { tweet_id: id })] };
    },
    (rng) => {
      const id = pick(rng, ids), who = pick(rng, PEOPLE.filter((p) => p !== user));
      if (id === undefined) return undefined;
      return {
        ask: `Mention ${who} in tweet ${id}.`,
        calls: [call("mention", { tweet_id: id, mentioned_usernames: [who] })],
      };
    },
    (rng) => {
      const who = pick(rng, PEOPLE.filter((p) => p !== user && !following.has(p)));
      if (!who) return undefined;
      return {
        ask: `Follow ${who}.`,
        calls: [call("follow_user", { username_to_follow: who })],
        vague: { ask: "Follow someone for me.", clarify: `Follow ${who}.` },
        commit: () => void following.add(who),
      };
    },
    (rng) => {
      const word = pick(rng, WORDS);
      return { ask: `Find tweets that mention '${word}'.`, calls: [call("search_tweets", { keyword: word })] };
    },
  ];
  return { className: "TwitterAPI", config, request: (rng) => pick(rng, requests)(rng) };
}

/**
 * The worlds by class name, all eight of BFCL v3's classes in BFCL's documentation order (CLASS_NAMES'). The generator
 * draws classes in this order whatever order it is given them in, so a class list names a set, and the set of the
 * original four (file system, math, posting, ticket) draws what it drew before the other four had worlds.
 */
export const WORLDS: Readonly<Record<string, WorldFactory>> = {
  GorillaFileSystem: fileSystemWorld,
  MathAPI: mathWorld,
  MessageAPI: messageWorld,
  TwitterAPI: twitterWorld,
  TicketAPI: ticketWorld,
  TradingBot: tradingWorld,
  TravelAPI: travelWorld,
  VehicleControlAPI: vehicleWorld,
};
