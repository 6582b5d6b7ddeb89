/**
 * TicketAPI against a transcript of every method, errors included, with the exact texts gorilla's Python class
 * gives (log-in gates, priority bounds and Python's TypeError for a non-number priority, edits, close / resolve).
 */
import assert from "node:assert/strict";
import { newInstance } from "../../../tasks/bfcl/classes/api.ts";
import { playTranscript, type Step } from "./transcript.ts";

const SCENARIO = {
  ticket_queue: [
    { id: 1, title: "Server down", description: "Prod", status: "Open", priority: 5, created_by: "Michael Thompson" },
  ],
  ticket_counter: 2,
  current_user: null,
};

Deno.test("TicketAPI: every method and its error texts as BFCL's Python gives them", () => {
  const api = newInstance("TicketAPI");
  api.loadScenario(structuredClone(SCENARIO));
  const steps: Step[] = [
    ["ticket_get_login_status", {}, '{"login_status": false}'],
    ["create_ticket", { "title": "x" }, '{"error": "User not authenticated. Please log in to create a ticket."}'],
    ["get_user_tickets", {}, "[{'error': 'User not authenticated. Please log in to view tickets.'}]"],
    ["logout", {}, '{"success": false}'],
    ["ticket_login", { "username": "", "password": "p" }, '{"success": false}'],
    ["ticket_login", { "username": "Michael Thompson", "password": "pw" }, '{"success": true}'],
    ["ticket_get_login_status", {}, '{"login_status": true}'],
    [
      "create_ticket",
      { "title": "Bad", "priority": 9 },
      '{"error": "Invalid priority. Priority must be between 1 and 5."}',
    ],
    [
      "create_ticket",
      { "title": "Printer jam", "description": "Floor 2", "priority": 3 },
      '{"id": 2, "title": "Printer jam", "description": "Floor 2", "status": "Open", "priority": 3, "created_by": "Michael Thompson"}',
    ],
    [
      "create_ticket",
      { "title": "Default" },
      '{"id": 3, "title": "Default", "description": "", "status": "Open", "priority": 1, "created_by": "Michael Thompson"}',
    ],
    [
      "get_ticket",
      { "ticket_id": 2 },
      '{"id": 2, "title": "Printer jam", "description": "Floor 2", "status": "Open", "priority": 3, "created_by": "Michael Thompson"}',
    ],
    ["get_ticket", { "ticket_id": 42 }, '{"error": "Ticket with ID 42 not found."}'],
    [
      "edit_ticket",
      { "ticket_id": 2, "updates": { "priority": 4, "description": null } },
      '{"status": "Ticket 2 has been updated successfully."}',
    ],
    ["edit_ticket", { "ticket_id": 2, "updates": { "owner": "me" } }, '{"error": "Invalid fields for update: owner"}'],
    ["edit_ticket", { "ticket_id": 9, "updates": {} }, '{"error": "Ticket with ID 9 not found."}'],
    ["close_ticket", { "ticket_id": 1 }, '{"status": "Ticket 1 has been closed successfully."}'],
    ["close_ticket", { "ticket_id": 1 }, '{"error": "Ticket with ID 1 is already closed."}'],
    ["close_ticket", { "ticket_id": 77 }, '{"error": "Ticket with ID 77 not found."}'],
    [
      "resolve_ticket",
      { "ticket_id": 2, "resolution": "Cleared" },
      '{"status": "Ticket 2 has been resolved successfully."}',
    ],
    ["resolve_ticket", { "ticket_id": 2, "resolution": "again" }, '{"error": "Ticket with ID 2 is already resolved."}'],
    [
      "get_user_tickets",
      { "status": "open" },
      "[{'id': 3, 'title': 'Default', 'description': '', 'status': 'Open', 'priority': 1, 'created_by': 'Michael Thompson'}]",
    ],
    [
      "get_user_tickets",
      {},
      "[{'id': 1, 'title': 'Server down', 'description': 'Prod', 'status': 'Closed', 'priority': 5, 'created_by': 'Michael Thompson'}, {'id': 2, 'title': 'Printer jam', 'description': 'Floor 2', 'status': 'Resolved', 'priority': 4, 'created_by': 'Michael Thompson', 'resolution': 'Cleared'}, {'id': 3, 'title': 'Default', 'description': '', 'status': 'Open', 'priority': 1, 'created_by': 'Michael Thompson'}]",
    ],
    [
      "create_ticket",
      { "title": "t", "priority": "high" },
      "Error during execution: '<' not supported between instances of 'str' and 'int'",
    ],
    ["logout", {}, '{"success": true}'],
    ["logout", {}, '{"success": false}'],
    [
      "create_ticket",
      { "priority": 2 },
      "Error during execution: TicketAPI.create_ticket() missing 1 required positional argument: 'title'",
    ],
  ];
  playTranscript(api, steps);
  const state = api.state() as { ticket_queue: Record<string, unknown>[]; ticket_counter: number };
  assert.equal(state.ticket_counter, 4);
  assert.deepEqual(state.ticket_queue[1], {
    id: 2,
    title: "Printer jam",
    description: "Floor 2",
    status: "Resolved",
    priority: 4,
    created_by: "Michael Thompson",
    resolution: "Cleared",
  });
  assert.equal(state.ticket_queue[0].status, "Closed");
});
