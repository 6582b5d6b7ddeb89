/**
 * BFCL's MessageAPI: a workspace of users (name -> id), an inbox of one-entry dicts {receiver_id: text}, log in,
 * send, delete, view, search, add contacts, with the exact result and error texts. Message ids are drawn from
 * Python's `random.Random(random_seed)` (default 200191) as randint(10000, 99999) until unused, so they match the
 * literals in BFCL's ground truths. `delete_message` finds the latest message to the receiver but removes the first
 * inbox entry equal to it, as Python's `list.remove` does.
 * State compared: generated_ids (a set; sorted here), user_count, user_map, inbox, message_count, current_user.
 */
import { type MethodSpec, PyApiBase } from "./base.ts";
import { dictEntries, hashKey, pyDeepCopy, pyEq, pyLower, pyStr, toPlain, truthy } from "./py.ts";
import { PyRandom } from "../../../src/util/py_random.ts";

const DEFAULT_USERS: [string, string][] = [["Alice", "USR001"], ["Bob", "USR002"], ["Catherine", "USR003"], [
  "Daniel",
  "USR004",
]];

const DEFAULT_INBOX = [
  { USR002: "My name is Alice. I want to connect." },
  { USR003: "Could you upload the file?" },
  { USR004: "Could you upload the file?" },
];

/** The first (receiver, text) pair of an inbox entry. */
function firstItem(message: unknown): [unknown, unknown] {
  return dictEntries(message as object)[0];
}

/** The messaging class; one instance per episode. */
export class MessageAPI extends PyApiBase {
  readonly name = "MessageAPI";
  generatedIds = new Set<unknown>();
  userCount: unknown = 4;
  userMap = new Map<unknown, unknown>(DEFAULT_USERS);
  inbox: unknown[] = pyDeepCopy(DEFAULT_INBOX);
  messageCount: unknown = 3;
  currentUser: unknown = null;
  #random = new PyRandom(200191);

  loadScenario(config: Record<string, unknown>, _longContext = false): void {
    const c = pyDeepCopy(config);
    this.#random = new PyRandom(BigInt((c.random_seed ?? 200191) as number));
    this.generatedIds = new Set(((c.generated_ids ?? []) as unknown[]).map(hashKey));
    this.userCount = c.user_count ?? 4;
    this.userMap = new Map(c.user_map ? dictEntries(c.user_map as object) : DEFAULT_USERS);
    this.inbox = (c.inbox ?? pyDeepCopy(DEFAULT_INBOX)) as unknown[];
    this.messageCount = c.message_count ?? 3;
    this.currentUser = c.current_user ?? null;
  }

  state(): Record<string, unknown> {
    return toPlain({
      generated_ids: this.generatedIds,
      user_count: this.userCount,
      user_map: this.userMap,
      inbox: this.inbox,
      message_count: this.messageCount,
      current_user: this.currentUser,
    }) as Record<string, unknown>;
  }

  #generateId(): Record<string, number> {
    let id = this.#random.randint(10000, 99999);
    while (this.generatedIds.has(id)) id = this.#random.randint(10000, 99999);
    this.generatedIds.add(id);
    return { new_id: id };
  }

  #loggedOut(): Record<string, string> | undefined {
    return truthy(this.currentUser) ? undefined : { error: "No user is currently logged in." };
  }

  #hasId(id: unknown): boolean {
    return [...this.userMap.values()].some((v) => pyEq(v, id));
  }

  protected readonly table: Record<string, MethodSpec> = {
    list_users: { params: [], run: () => ({ user_list: [...this.userMap.keys()] }) },
    get_user_id: {
      params: ["user"],
      run: ({ user }) => {
        if (!this.userMap.has(hashKey(user))) return { error: `User '${pyStr(user)}' not found in the workspace.` };
        return { user_id: this.userMap.get(hashKey(user)) };
      },
    },
    message_login: {
      params: ["user_id"],
      run: ({ user_id }) => {
        if (!this.#hasId(user_id)) return { login_status: false, message: `User ID '${pyStr(user_id)}' not found.` };
        this.currentUser = user_id;
        return { login_status: true, message: `User '${pyStr(user_id)}' logged in successfully.` };
      },
    },
    message_get_login_status: { params: [], run: () => ({ login_status: truthy(this.currentUser) }) },
    send_message: {
      params: ["receiver_id", "message"],
      run: ({ receiver_id, message }) => {
        const out = this.#loggedOut();
        if (out) return out;
        if (!this.#hasId(receiver_id)) return { error: `Receiver ID '${pyStr(receiver_id)}' not found.` };
        const messageId = this.#generateId();
        this.inbox.push(new Map([[receiver_id, message]]));
        this.messageCount = (this.messageCount as number) + 1;
        return {
          sent_status: true,
          message_id: messageId,
          message: `Message sent to '${pyStr(receiver_id)}' successfully.`,
        };
      },
    },
    delete_message: {
      params: ["receiver_id"],
      run: ({ receiver_id }) => {
        const out = this.#loggedOut();
        if (out) return out;
        for (let i = this.inbox.length - 1; i >= 0; i--) {
          const [receiver] = firstItem(this.inbox[i]);
          if (pyEq(receiver, receiver_id)) {
            const found = this.inbox[i];
            this.inbox.splice(this.inbox.findIndex((m) => pyEq(m, found)), 1);
            return {
              deleted_status: true,
              receiver_id: receiver,
              message: `Receiver ${pyStr(receiver_id)}'s latest message deleted successfully.`,
            };
          }
        }
        return { error: `Receiver ID ${pyStr(receiver_id)} not found.` };
      },
    },
    view_messages_sent: {
      params: [],
      run: () => {
        const out = this.#loggedOut();
        if (out) return out;
        const sent = new Map<unknown, unknown[]>();
        for (const m of this.inbox) {
          const [receiver, text] = firstItem(m);
          const key = hashKey(receiver);
          if (!sent.has(key)) sent.set(key, [text]);
          else sent.get(key)!.push(text);
        }
        return { messages: sent };
      },
    },
    add_contact: {
      params: ["user_name"],
      run: ({ user_name }) => {
        if (this.userMap.has(hashKey(user_name))) return { error: `User name '${pyStr(user_name)}' already exists.` };
        this.userCount = (this.userCount as number) + 1;
        const userId = `USR${String(this.userCount).padStart(3, "0")}`;
        if (this.#hasId(userId)) return { error: `User ID '${userId}' already exists.` };
        this.userMap.set(hashKey(user_name), userId);
        return { added_status: true, user_id: userId, message: `Contact '${pyStr(user_name)}' added successfully.` };
      },
    },
    search_messages: {
      params: ["keyword"],
      run: ({ keyword }) => {
        const out = this.#loggedOut();
        if (out) return out;
        const k = pyLower(keyword);
        const results = [];
        for (const m of this.inbox) {
          const [receiver, text] = firstItem(m);
          if (pyLower(text).includes(k)) results.push({ receiver_id: receiver, message: text });
        }
        return { results };
      },
    },
    get_message_stats: {
      params: [],
      run: () => {
        const out = this.#loggedOut();
        if (out) return out;
        const contacts = new Set(this.inbox.map((m) => hashKey(firstItem(m)[0])));
        return { stats: { received_count: this.inbox.length, total_contacts: contacts.size } };
      },
    },
  };
}
