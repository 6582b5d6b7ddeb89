/**
 * TravelAPI against a transcript of every method, errors included, with the exact texts gorilla's Python class
 * gives: ids and tokens from random.Random(141053) (booking 3426812, transaction 45451592, insurance 498276044, token
 * 299495 as Python draws them), flight costs by class and date parity, budget limits, exchange rates, and the
 * traveler checks (ages counted to today, as BFCL does).
 */
import assert from "node:assert/strict";
import { newInstance } from "../../../tasks/bfcl/classes/api.ts";
import { parsePyJson, PyFloat } from "../../../tasks/bfcl/classes/py.ts";
import { playTranscript, runCall, type Step } from "./transcript.ts";

const F = (x: number) => new PyFloat(x);

const SCENARIO_JSON =
  `{"credit_card_list": {"144756014165": {"card_number": "4930897144756014165", "expiration_date": "12/26",
  "cardholder_name": "Olivia Hamilton", "card_verification_number": 123, "balance": 1000.0}}, "booking_record": {},
  "access_token": "abc123", "token_type": "Bearer", "token_expires_in": 3600, "token_scope": "read_write",
  "user_first_name": "Olivia", "user_last_name": "Hamilton", "budget_limit": null}`;

Deno.test("TravelAPI: every method and its error texts as BFCL's Python gives them", () => {
  const api = newInstance("TravelAPI");
  api.loadScenario(parsePyJson(SCENARIO_JSON) as Record<string, unknown>);
  const steps: Step[] = [
    ["travel_get_login_status", {}, '{"status": true}'],
    ["get_budget_fiscal_year", {}, '{"budget_fiscal_year": "2018"}'],
    ["get_nearest_airport_by_city", { "location": "Rivermist" }, '{"nearest_airport": "RMS"}'],
    ["get_nearest_airport_by_city", { "location": "Atlantis" }, '{"nearest_airport": "Unknown"}'],
    [
      "list_all_airports",
      {},
      "['RMS', 'SBK', 'MPC', 'SVP', 'SHD', 'CDG', 'LHR', 'SSV', 'OKD', 'WLB', 'PEK', 'HND', 'HKG', 'CIA', 'CRH', 'ATV', 'PHV', 'GFD', 'SFO', 'LAX', 'JFK', 'ORD', 'BOS']",
    ],
    ["get_flight_cost", {
      "travel_from": "RMS",
      "travel_to": "SBK",
      "travel_date": "2024-12-15",
      "travel_class": "business",
    }, '{"travel_cost_list": [440.0]}'],
    ["get_flight_cost", {
      "travel_from": "RMS",
      "travel_to": "XXX",
      "travel_date": "2024-12-15",
      "travel_class": "economy",
    }, "Error during execution: No available route for the given airports."],
    ["get_flight_cost", {
      "travel_from": "RMS",
      "travel_to": "SBK",
      "travel_date": "2024-12-15",
      "travel_class": "coach",
    }, "Error during execution: Invalid travel class. Options are: economy, business, first."],
    ["get_credit_card_balance", { "access_token": "abc123", "card_id": "144756014165" }, '{"card_balance": 1000.0}'],
    [
      "get_credit_card_balance",
      { "access_token": "wrong", "card_id": "144756014165" },
      '{"error": "Invalid access token"}',
    ],
    [
      "get_credit_card_balance",
      { "access_token": "abc123", "card_id": "1" },
      '{"error": "Card not registered. Here are a list of card_id\'s: [\'144756014165\']"}',
    ],
    ["book_flight", {
      "access_token": "abc123",
      "card_id": "144756014165",
      "travel_date": "2024-12-15",
      "travel_from": "RMS",
      "travel_to": "SBK",
      "travel_class": "business",
    }, '{"booking_id": "3426812", "transaction_id": "45451592", "booking_status": true, "booking_history": {}}'],
    ["book_flight", {
      "access_token": "abc123",
      "card_id": "144756014165",
      "travel_date": "15/12/2024",
      "travel_from": "RMS",
      "travel_to": "SBK",
      "travel_class": "economy",
    }, '{"booking_status": false, "error": "Invalid date format. Use YYYY-MM-DD."}'],
    ["book_flight", {
      "access_token": "abc123",
      "card_id": "144756014165",
      "travel_date": "2024-12-15",
      "travel_from": "RMS",
      "travel_to": "LHR",
      "travel_class": "economy",
    }, '{"booking_status": false, "error": "No available route for the given airports."}'],
    ["book_flight", {
      "access_token": "abc123",
      "card_id": "144756014165",
      "travel_date": "2024-12-15",
      "travel_from": "ZZZ",
      "travel_to": "LHR",
      "travel_class": "economy",
    }, '{"booking_status": false, "error": "Invalid departure airport code: ZZZ"}'],
    ["book_flight", {
      "access_token": "abc123",
      "card_id": "144756014165",
      "travel_date": "2024-12-15",
      "travel_from": "RMS",
      "travel_to": "SBK",
      "travel_class": "first",
    }, '{"booking_status": false, "error": "Insufficient funds"}'],
    [
      "get_booking_history",
      { "access_token": "abc123" },
      '{"booking_history": {"3426812": {"card_id": "144756014165", "travel_date": "2024-12-15", "travel_from": "RMS", "travel_to": "SBK", "travel_class": "business", "travel_cost": 440.0, "transaction_id": "45451592"}}}',
    ],
    [
      "retrieve_invoice",
      { "access_token": "abc123", "booking_id": "3426812" },
      '{"invoice": {"booking_id": "3426812", "travel_date": "2024-12-15", "travel_from": "RMS", "travel_to": "SBK", "travel_class": "business", "travel_cost": 440.0, "transaction_id": "45451592"}}',
    ],
    ["retrieve_invoice", { "access_token": "abc123" }, '{"error": "Booking not found"}'],
    ["purchase_insurance", {
      "access_token": "abc123",
      "insurance_type": "comprehensive",
      "booking_id": "3426812",
      "insurance_cost": F(50),
      "card_id": "144756014165",
    }, '{"insurance_id": "498276044", "insurance_status": true}'],
    ["set_budget_limit", { "access_token": "abc123", "budget_limit": "20" }, '{"budget_limit": 20.0}'],
    ["purchase_insurance", {
      "access_token": "abc123",
      "insurance_type": "basic",
      "booking_id": "3426812",
      "insurance_cost": 50,
      "card_id": "144756014165",
    }, '{"insurance_status": false, "error": "Exceeded budget limit"}'],
    [
      "contact_customer_support",
      { "booking_id": "3426812", "message": "hi" },
      '{"customer_support_message": "Thank you for contacting customer support. Your message has been received and we will get back to you shortly."}',
    ],
    ["contact_customer_support", { "booking_id": "0", "message": "hi" }, '{"error": "Booking not found"}'],
    ["cancel_booking", { "access_token": "abc123", "booking_id": "3426812" }, '{"cancel_status": true}'],
    [
      "cancel_booking",
      { "access_token": "abc123", "booking_id": "3426812" },
      '{"cancel_status": false, "error": "Booking not found"}',
    ],
    [
      "get_all_credit_cards",
      {},
      '{"credit_card_list": {"144756014165": {"card_number": "4930897144756014165", "expiration_date": "12/26", "cardholder_name": "Olivia Hamilton", "card_verification_number": 123, "balance": 950.0}}}',
    ],
    [
      "compute_exchange_rate",
      { "base_currency": "USD", "target_currency": "EUR", "value": 100 },
      '{"exchanged_value": 80.0}',
    ],
    [
      "compute_exchange_rate",
      { "base_currency": "JPY", "target_currency": "USD", "value": 1000 },
      '{"exchanged_value": 9.09}',
    ],
    [
      "compute_exchange_rate",
      { "base_currency": "USD", "target_currency": "XYZ", "value": 1 },
      "Error during execution: No available exchange rate for the given currencies.",
    ],
    ["verify_traveler_information", {
      "first_name": "Olivia",
      "last_name": "Hamilton",
      "date_of_birth": "1990-05-01",
      "passport_number": "US1234",
    }, '{"verification_status": true}'],
    [
      "verify_traveler_information",
      { "first_name": "Bob", "last_name": "Hamilton", "date_of_birth": "1990-05-01", "passport_number": "US1234" },
      '{"verification_status": false, "verification_failure": "Cannot book flight information for another user.Expected Olivia Hamilton, got Bob Hamilton"}',
    ],
    [
      "verify_traveler_information",
      { "first_name": "Olivia", "last_name": "Hamilton", "date_of_birth": "May 1", "passport_number": "US1234" },
      '{"verification_status": false, "verification_failure": "Invalid date of birth format. Please use YYYY-MM-DD."}',
    ],
    ["verify_traveler_information", {
      "first_name": "Olivia",
      "last_name": "Hamilton",
      "date_of_birth": "2020-01-01",
      "passport_number": "US1",
    }, '{"verification_status": false, "verification_failure": "Traveler must be at least 18 years old."}'],
    ["verify_traveler_information", {
      "first_name": "Olivia",
      "last_name": "Hamilton",
      "date_of_birth": "1980-01-01",
      "passport_number": "UK1",
    }, '{"verification_status": false, "verification_failure": "Passport must be issued by the United States."}'],
    ["authenticate_travel", {
      "client_id": "c",
      "client_secret": "s",
      "refresh_token": "r",
      "grant_type": "read_write",
      "user_first_name": "Olivia",
      "user_last_name": "Hamilton",
    }, '{"expires_in": 2, "access_token": "299495", "token_type": "Bearer", "scope": "read_write"}'],
    ["register_credit_card", {
      "access_token": "abc123",
      "card_number": "1",
      "expiration_date": "01/30",
      "cardholder_name": "O",
      "card_verification_number": 1,
    }, '{"error": "Invalid access token"}'],
    ["register_credit_card", {
      "access_token": "299495",
      "card_number": "4111",
      "expiration_date": "01/30",
      "cardholder_name": "Olivia Hamilton",
      "card_verification_number": 456,
    }, '{"card_id": "805850517397"}'],
    ["travel_get_login_status", {}, '{"status": true}'],
    [
      "book_flight",
      { "access_token": "abc123" },
      "Error during execution: TravelAPI.book_flight() missing 5 required positional arguments: 'card_id', 'travel_date', 'travel_from', 'travel_to', and 'travel_class'",
    ],
  ];
  playTranscript(api, steps);
  const state = api.state() as Record<string, unknown>;
  assert.equal(state.access_token, "299495");
  assert.equal(state.budget_limit, 20);
  assert.deepEqual(state.booking_record, {});
  assert.deepEqual(Object.keys(state.credit_card_list as object).length, 2);
});

Deno.test("TravelAPI: long context adds BFCL's cards and bookings and lists every route's cost", () => {
  const api = newInstance("TravelAPI");
  api.loadScenario(parsePyJson(SCENARIO_JSON) as Record<string, unknown>, true);
  const state = api.state() as { credit_card_list: object; booking_record: object };
  assert.equal(Object.keys(state.credit_card_list).length, 23, "1 card of the scenario and 22 of long_context.py");
  assert.equal(Object.keys(state.booking_record).length, 16);
  const costs = JSON.parse(
    runCall(api, "get_flight_cost", {
      travel_from: "RMS",
      travel_to: "SBK",
      travel_date: "2024-12-15",
      travel_class: "economy",
    }),
  ).travel_cost_list as number[];
  assert.equal(costs.length, 153);
  assert.equal(costs[0], 200, "SFO-LAX 200 x economy 1 x 1 (the date's digits sum to 17, odd)");
});
