/**
 * MessageAPI against a transcript of every method, errors included, with the exact texts gorilla's Python class
 * gives: message ids drawn from random.Random(200191) (67410, 41772, 24547 as in BFCL's ground truths), and
 * delete_message removing the first inbox entry equal to the latest one found.
 */
import assert from "node:assert/strict";
import { newInstance } from "../../../tasks/bfcl/classes/api.ts";
import { playTranscript, type Step } from "./transcript.ts";

const SCENARIO = {
  user_count: 4,
  user_map: { Alice: "USR001", Bob: "USR002", Catherine: "USR003", Daniel: "USR004" },
  inbox: [{ USR002: "Hello Bob" }, { USR003: "Report ready" }, { USR002: "Hello Bob" }],
  message_count: 3,
  current_user: null,
};

Deno.test("MessageAPI: every method and its error texts as BFCL's Python gives them", () => {
  const api = newInstance("MessageAPI");
  api.loadScenario(structuredClone(SCENARIO));
  const steps: Step[] = [
    ["list_users", {}, '{"user_list": ["Alice", "Bob", "Catherine", "Daniel"]}'],
    ["get_user_id", { "user": "Bob" }, '{"user_id": "USR002"}'],
    ["get_user_id", { "user": "Zed" }, '{"error": "User \'Zed\' not found in the workspace."}'],
    ["message_get_login_status", {}, '{"login_status": false}'],
    ["send_message", { "receiver_id": "USR002", "message": "x" }, '{"error": "No user is currently logged in."}'],
    ["delete_message", { "receiver_id": "USR002" }, '{"error": "No user is currently logged in."}'],
    ["view_messages_sent", {}, '{"error": "No user is currently logged in."}'],
    ["search_messages", { "keyword": "x" }, '{"error": "No user is currently logged in."}'],
    ["get_message_stats", {}, '{"error": "No user is currently logged in."}'],
    ["message_login", { "user_id": "USR999" }, '{"login_status": false, "message": "User ID \'USR999\' not found."}'],
    [
      "message_login",
      { "user_id": "USR001" },
      '{"login_status": true, "message": "User \'USR001\' logged in successfully."}',
    ],
    ["message_get_login_status", {}, '{"login_status": true}'],
    [
      "send_message",
      { "receiver_id": "USR003", "message": "Budget is final" },
      '{"sent_status": true, "message_id": {"new_id": 67410}, "message": "Message sent to \'USR003\' successfully."}',
    ],
    [
      "send_message",
      { "receiver_id": "USR004", "message": "Call me" },
      '{"sent_status": true, "message_id": {"new_id": 41772}, "message": "Message sent to \'USR004\' successfully."}',
    ],
    ["send_message", { "receiver_id": "USR777", "message": "?" }, '{"error": "Receiver ID \'USR777\' not found."}'],
    [
      "view_messages_sent",
      {},
      '{"messages": {"USR002": ["Hello Bob", "Hello Bob"], "USR003": ["Report ready", "Budget is final"], "USR004": ["Call me"]}}',
    ],
    [
      "delete_message",
      { "receiver_id": "USR002" },
      '{"deleted_status": true, "receiver_id": "USR002", "message": "Receiver USR002\'s latest message deleted successfully."}',
    ],
    [
      "view_messages_sent",
      {},
      '{"messages": {"USR003": ["Report ready", "Budget is final"], "USR002": ["Hello Bob"], "USR004": ["Call me"]}}',
    ],
    ["delete_message", { "receiver_id": "USR009" }, '{"error": "Receiver ID USR009 not found."}'],
    [
      "search_messages",
      { "keyword": "BUDGET" },
      '{"results": [{"receiver_id": "USR003", "message": "Budget is final"}]}',
    ],
    ["get_message_stats", {}, '{"stats": {"received_count": 4, "total_contacts": 3}}'],
    [
      "add_contact",
      { "user_name": "Eve" },
      '{"added_status": true, "user_id": "USR005", "message": "Contact \'Eve\' added successfully."}',
    ],
    ["add_contact", { "user_name": "Bob" }, '{"error": "User name \'Bob\' already exists."}'],
    ["list_users", {}, '{"user_list": ["Alice", "Bob", "Catherine", "Daniel", "Eve"]}'],
    [
      "send_message",
      { "receiver_id": "USR005", "message": "Welcome Eve" },
      '{"sent_status": true, "message_id": {"new_id": 24547}, "message": "Message sent to \'USR005\' successfully."}',
    ],
    [
      "send_message",
      {},
      "Error during execution: MessageAPI.send_message() missing 2 required positional arguments: 'receiver_id' and 'message'",
    ],
  ];
  playTranscript(api, steps);
  // python: vars(m) after the same calls (generated_ids is a set; state() sorts it).
  assert.deepEqual(api.state(), {
    generated_ids: [24547, 41772, 67410],
    user_count: 5,
    user_map: { Alice: "USR001", Bob: "USR002", Catherine: "USR003", Daniel: "USR004", Eve: "USR005" },
    inbox: [
      { USR003: "Report ready" },
      { USR002: "Hello Bob" },
      { USR003: "Budget is final" },
      { USR004: "Call me" },
      { USR005: "Welcome Eve" },
    ],
    message_count: 6,
    current_user: "USR001",
  });
});
