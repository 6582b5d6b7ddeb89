/**
 * BFCL's TicketAPI: log in, create, view, edit, close and resolve support tickets, with the exact result and error
 * texts. Tickets are plain records in a queue, found by `id == ticket_id` (Python equality, so 1 and 1.0 match).
 * `edit_ticket` lists invalid fields in the order given (Python prints a set, whose order varies per process).
 * State compared: ticket_queue, ticket_counter, current_user.
 */
import { ApiCallError, type MethodSpec, PyApiBase } from "./base.ts";
import {
  dictEntries,
  getItem,
  isDict,
  numValue,
  pyDeepCopy,
  pyEq,
  pyLower,
  pyStr,
  pyTypeName,
  toPlain,
  truthy,
} from "./py.ts";

type Ticket = Record<string, unknown>;

const VALID_FIELDS = new Set(["title", "description", "status", "priority"]);

/** The ticketing class; one instance per episode. */
export class TicketAPI extends PyApiBase {
  readonly name = "TicketAPI";
  ticketQueue: Ticket[] = [];
  ticketCounter: unknown = 1;
  currentUser: unknown = null;

  loadScenario(config: Record<string, unknown>, _longContext = false): void {
    const c = pyDeepCopy(config);
    this.ticketQueue = (c.ticket_queue ?? []) as Ticket[];
    this.ticketCounter = c.ticket_counter ?? 1;
    this.currentUser = c.current_user ?? null;
  }

  state(): Record<string, unknown> {
    return toPlain({
      ticket_queue: this.ticketQueue,
      ticket_counter: this.ticketCounter,
      current_user: this.currentUser,
    }) as Record<string, unknown>;
  }

  #find(id: unknown): Ticket | undefined {
    return this.ticketQueue.find((t) => pyEq(getItem(t, "id"), id));
  }

  #notFound(id: unknown): Record<string, string> {
    return { error: `Ticket with ID ${pyStr(id)} not found.` };
  }

  protected readonly table: Record<string, MethodSpec> = {
    create_ticket: {
      params: ["title", ["description", ""], ["priority", 1]],
      run: ({ title, description, priority }) => {
        if (!truthy(this.currentUser)) return { error: "User not authenticated. Please log in to create a ticket." };
        const p = typeof priority === "boolean" ? Number(priority) : numValue(priority);
        if (p === undefined) {
          throw new ApiCallError(`'<' not supported between instances of '${pyTypeName(priority)}' and 'int'`);
        }
        if (p < 1 || p > 5) return { error: "Invalid priority. Priority must be between 1 and 5." };
        const ticket: Ticket = {
          id: this.ticketCounter,
          title,
          description,
          status: "Open",
          priority,
          created_by: this.currentUser,
        };
        this.ticketQueue.push(ticket);
        this.ticketCounter = (this.ticketCounter as number) + 1;
        return ticket;
      },
    },
    get_ticket: {
      params: ["ticket_id"],
      run: ({ ticket_id }) => this.#find(ticket_id) ?? this.#notFound(ticket_id),
    },
    close_ticket: {
      params: ["ticket_id"],
      run: ({ ticket_id }) => {
        const t = this.#find(ticket_id);
        if (!t) return this.#notFound(ticket_id);
        if (t.status === "Closed") return { error: `Ticket with ID ${pyStr(ticket_id)} is already closed.` };
        t.status = "Closed";
        return { status: `Ticket ${pyStr(ticket_id)} has been closed successfully.` };
      },
    },
    resolve_ticket: {
      params: ["ticket_id", "resolution"],
      run: ({ ticket_id, resolution }) => {
        const t = this.#find(ticket_id);
        if (!t) return this.#notFound(ticket_id);
        if (t.status === "Resolved") return { error: `Ticket with ID ${pyStr(ticket_id)} is already resolved.` };
        t.status = "Resolved";
        t.resolution = resolution;
        return { status: `Ticket ${pyStr(ticket_id)} has been resolved successfully.` };
      },
    },
    edit_ticket: {
      params: ["ticket_id", "updates"],
      run: ({ ticket_id, updates }) => {
        const t = this.#find(ticket_id);
        if (!t) return this.#notFound(ticket_id);
        if (!(updates instanceof Map) && !isDict(updates)) {
          throw new ApiCallError(`'${pyTypeName(updates)}' object has no attribute 'keys'`, "AttributeError");
        }
        const fields = dictEntries(updates);
        const invalid = fields.map(([k]) => k).filter((k) => !VALID_FIELDS.has(k as string));
        if (invalid.length > 0) return { error: `Invalid fields for update: ${invalid.map(pyStr).join(", ")}` };
        for (const [k, v] of fields) if (v !== null && v !== undefined) t[k as string] = v;
        return { status: `Ticket ${pyStr(ticket_id)} has been updated successfully.` };
      },
    },
    ticket_login: {
      params: ["username", "password"],
      run: ({ username, password }) => {
        if (truthy(username) && truthy(password)) {
          this.currentUser = username;
          return { success: true };
        }
        return { success: false };
      },
    },
    ticket_get_login_status: { params: [], run: () => ({ login_status: truthy(this.currentUser) }) },
    logout: {
      params: [],
      run: () => {
        if (!truthy(this.currentUser)) return { success: false };
        this.currentUser = null;
        return { success: true };
      },
    },
    get_user_tickets: {
      params: [["status", null]],
      run: ({ status }) => {
        if (!truthy(this.currentUser)) {
          return [{ error: "User not authenticated. Please log in to view tickets." }];
        }
        let mine = this.ticketQueue.filter((t) => pyEq(getItem(t, "created_by"), this.currentUser));
        if (truthy(status)) mine = mine.filter((t) => pyLower(getItem(t, "status")) === pyLower(status));
        return mine;
      },
    },
  };
}
