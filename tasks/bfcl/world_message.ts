/**
 * The generator's MessageAPI world: a workspace of named users (ids USR001...), the current user's sent messages and,
 * mostly, a logged-in user (else the first request to need it is drawn again until a login request lands). Long: 15-20
 * users and 40-59 messages. The view tracks the users, the inbox's receivers and the login.
 */
import type { Rng } from "../../src/util/random.ts";
import { call, pick, type Template, type World } from "./world_kit.ts";

const NAMES = [
  "Alice",
  "Bob",
  "Catherine",
  "Daniel",
  "Eve",
  "Frank",
  "Grace",
  "Henry",
  "Isabel",
  "Jack",
  "Kelly",
  "Liam",
  "Mia",
  "Noah",
  "Olivia",
  "Paul",
  "Quinn",
  "Rachel",
  "Sam",
  "Tina",
  "Victor",
  "Wendy",
];

const TEXTS = [
  "Meeting at 3 PM",
  "Please review the document.",
  "Could you upload the file?",
  "Lunch tomorrow?",
  "The report is ready.",
  "Call me when you can.",
  "Running late today.",
  "Thanks for the update!",
  "See you at the standup.",
  "Can you send the slides?",
  "The budget was approved.",
  "Happy birthday!",
];

const userId = (n: number) => `USR${String(n).padStart(3, "0")}`;

/** MessageAPI: send, delete, search and view messages, look users up and add contacts. */
export function messageWorld(rng: Rng, long = false): World {
  const nUsers = long ? 15 + rng.int(6) : 3 + rng.int(3);
  const names = rng.shuffle([...NAMES]).slice(0, nUsers);
  const ids = new Map(names.map((n, i) => [n, userId(i + 1)]));
  const me = userId(1);
  const others = () => [...ids].filter(([, id]) => id !== me);
  const inbox: string[] = [], sent: string[] = []; // receivers and texts of the sent messages, in order
  const messages: Record<string, string>[] = [];
  for (let i = 0, n = long ? 40 + rng.int(20) : 1 + rng.int(3); i < n; i++) {
    const [, to] = pick(rng, others()), text = pick(rng, TEXTS);
    messages.push({ [to]: text });
    inbox.push(to);
    sent.push(text);
  }
  let loggedIn = rng.float() < 0.8;
  const config = {
    user_count: nUsers,
    user_map: Object.fromEntries(ids),
    inbox: messages,
    message_count: messages.length,
    current_user: loggedIn ? me : null,
  };
  let count = nUsers;
  const requests: Template[] = [
    () => {
      if (loggedIn) return undefined;
      return {
        ask: `Log me in to the messaging app as user ${me}.`,
        calls: [call("message_login", { user_id: me })],
        vague: { ask: "Log me in to the messaging app.", clarify: `My user id is ${me}.` },
        commit: () => void (loggedIn = true),
      };
    },
    (rng) => {
      const [name, id] = pick(rng, others()), text = pick(rng, TEXTS);
      return {
        ask: `Look up ${name}'s user id and send them the message '${text}'.`,
        calls: [call("get_user_id", { user: name }), call("send_message", { receiver_id: id, message: text })],
        vague: { ask: `Look up ${name}'s user id and send them a message.`, clarify: `Say '${text}'.` },
        commit: () => void (inbox.push(id), sent.push(text)),
      };
    },
    (rng) => {
      const [, id] = pick(rng, others()), text = pick(rng, TEXTS);
      return {
        ask: `Send '${text}' to user ${id}.`,
        calls: [call("send_message", { receiver_id: id, message: text })],
        commit: () => void (inbox.push(id), sent.push(text)),
      };
    },
    (rng) => {
      const name = pick(rng, NAMES.filter((n) => !ids.has(n)));
      if (!name) return undefined;
      return {
        ask: `Add ${name} to my contacts.`,
        calls: [call("add_contact", { user_name: name })],
        vague: { ask: "Add a new contact for me.", clarify: `The name is ${name}.` },
        commit: () => void ids.set(name, userId(++count)),
      };
    },
    (rng) => {
      const to = pick(rng, inbox);
      if (!to) return undefined;
      return {
        ask: `Delete the latest message I sent to ${to}.`,
        calls: [call("delete_message", { receiver_id: to })],
        vague: { ask: "Delete my latest message to one of my contacts.", clarify: `The one to ${to}.` },
        commit: () => void inbox.splice(inbox.lastIndexOf(to), 1),
      };
    },
    () => ({ ask: "Show me all the messages I have sent.", calls: [call("view_messages_sent", {})] }),
    (rng) => {
      // A word of a message sent (deletions aside), so that the search mostly finds something.
      const word = pick(rng, (pick(rng, sent) ?? "").replace(/[.?!]/g, "").split(" ").filter((w) => w.length > 3));
      if (!word) return undefined;
      return {
        ask: `Search my messages for '${word}'.`,
        calls: [call("search_messages", { keyword: word })],
        vague: { ask: "Search my messages for a word.", clarify: `The word is '${word}'.` },
      };
    },
    () => ({ ask: "How many messages have I sent, and to how many contacts?", calls: [call("get_message_stats", {})] }),
    () => ({ ask: "List the users of the workspace.", calls: [call("list_users", {})] }),
  ];
  return { className: "MessageAPI", config, request: (rng) => pick(rng, requests)(rng) };
}
