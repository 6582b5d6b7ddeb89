/**
 * The generator's TravelAPI world: a traveller with an access token, one or two registered credit cards and
 * perhaps a booking, over a dozen of BFCL's routes and cities. Long: 10-14 cards and 8-12 bookings (the class adds
 * BFCL's long lists of cards and bookings). The view tracks cards and bookings; every request that needs the token
 * says it, as BFCL's users do.
 */
import type { Rng } from "../../src/util/random.ts";
import { pyFloat } from "./classes/py.ts";
import { call, digits, pick, resultField, type Template, type World } from "./world_kit.ts";

/** Some of BFCL's routes (any order of draws; the class's own table decides what a flight costs). */
const ROUTES: [string, string][] = [
  ["SFO", "LAX"],
  ["SFO", "JFK"],
  ["LAX", "JFK"],
  ["JFK", "ORD"],
  ["ORD", "BOS"],
  ["ORD", "LAX"],
  ["RMS", "SBK"],
  ["RMS", "JFK"],
  ["SBK", "MPC"],
  ["BOS", "RMS"],
  ["JFK", "HND"],
  ["LAX", "HND"],
];

/** Cities BFCL's get_nearest_airport_by_city knows. */
const CITIES = ["Rivermist", "Stonebrook", "Maplecrest", "Silverpine", "New York", "Chicago", "Boston", "Tokyo"];
const FIRST = ["Evelyn", "Michael", "Sofia", "James", "Olivia", "Ethan", "Mia", "Lucas"];
const LAST = ["Montgomery", "Chen", "Garcia", "Patel", "Nguyen", "Smith", "Kowalski", "Rossi"];
const CLASSES = ["economy", "business", "first"];
const CURRENCIES = ["EUR", "JPY", "GBP", "CAD", "AUD", "INR", "RMB"];
const NOTES = ["My seat was double booked.", "I need to change my meal.", "Can I bring a bike?", "My bag is lost."];

/** A date in 2024-2026, written YYYY-MM-DD. */
function date(rng: Rng): string {
  const m = String(1 + rng.int(12)).padStart(2, "0"), d = String(1 + rng.int(28)).padStart(2, "0");
  return `${2024 + rng.int(3)}-${m}-${d}`;
}

/** TravelAPI: flight costs, bookings, invoices, insurance, cards, budgets, exchange rates and traveller checks. */
export function travelWorld(rng: Rng, long = false): World {
  const first = pick(rng, FIRST), last = pick(rng, LAST), token = `${digits(rng, 3)}${pick(rng, ["abc", "xyz"])}tok`;
  const cards: string[] = [];
  const cardConfig: Record<string, unknown> = {};
  for (let i = 0, n = long ? 10 + rng.int(5) : 1 + rng.int(2); i < n; i++) {
    const id = digits(rng, 12);
    cards.push(id);
    cardConfig[id] = {
      card_number: digits(rng, 16),
      expiration_date: `${String(1 + rng.int(12)).padStart(2, "0")}/${27 + rng.int(4)}`,
      cardholder_name: `${first} ${last}`,
      card_verification_number: 100 + rng.int(900),
      balance: 5000 + 100 * rng.int(300),
    };
  }
  const bookings: string[] = [];
  const bookingConfig: Record<string, unknown> = {};
  for (let i = 0, n = long ? 8 + rng.int(5) : rng.int(2); i < n; i++) {
    const id = digits(rng, 7), [from, to] = pick(rng, ROUTES);
    bookings.push(id);
    bookingConfig[id] = {
      card_id: pick(rng, cards),
      travel_date: date(rng),
      travel_from: from,
      travel_to: to,
      travel_class: pick(rng, CLASSES),
      travel_cost: 200 + 10 * rng.int(80),
      transaction_id: digits(rng, 8),
    };
  }
  const config = {
    credit_card_list: cardConfig,
    booking_record: bookingConfig,
    access_token: token,
    token_type: "Bearer",
    token_expires_in: 3600,
    token_scope: "read_write",
    user_first_name: first,
    user_last_name: last,
  };
  const tok = `my access token is '${token}'`;
  const requests: Template[] = [
    (rng) => {
      const [from, to] = pick(rng, ROUTES), cls = pick(rng, CLASSES), day = date(rng);
      return {
        ask: `How much is a ${cls} class flight from ${from} to ${to} on ${day}?`,
        calls: [call("get_flight_cost", { travel_from: from, travel_to: to, travel_date: day, travel_class: cls })],
        vague: { ask: `How much is a flight from ${from} to ${to} on ${day}?`, clarify: `In ${cls} class.` },
      };
    },
    (rng) => {
      const city = pick(rng, CITIES);
      return {
        ask: `Which airport is nearest to ${city}?`,
        calls: [call("get_nearest_airport_by_city", { location: city })],
      };
    },
    (rng) => {
      const [from, to] = pick(rng, ROUTES), cls = pick(rng, CLASSES), day = date(rng), card = pick(rng, cards);
      const trip = `a ${cls} class flight from ${from} to ${to} on ${day}`;
      return {
        ask: `Book ${trip} with card ${card}; ${tok}.`,
        calls: [call("book_flight", {
          access_token: token,
          card_id: card,
          travel_date: day,
          travel_from: from,
          travel_to: to,
          travel_class: cls,
        })],
        vague: { ask: `Book ${trip}; ${tok}.`, clarify: `Pay with card ${card}.` },
        commit: (results) => {
          const id = resultField(results[0], "booking_id");
          if (typeof id === "string") bookings.push(id);
        },
      };
    },
    (rng) => {
      const card = pick(rng, cards);
      return {
        ask: `What is the balance of card ${card}? ${cap(tok)}.`,
        calls: [call("get_credit_card_balance", { access_token: token, card_id: card })],
      };
    },
    (rng) => {
      const b = pick(rng, bookings);
      if (!b) return undefined;
      return {
        ask: `Get me the invoice of booking ${b}; ${tok}.`,
        calls: [call("retrieve_invoice", { access_token: token, booking_id: b })],
        vague: { ask: `Get me the invoice of my booking; ${tok}.`, clarify: `Booking ${b}.` },
      };
    },
    (rng) => {
      const b = pick(rng, bookings);
      if (!b) return undefined;
      return {
        ask: `Cancel booking ${b}; ${tok}.`,
        calls: [call("cancel_booking", { access_token: token, booking_id: b })],
        commit: () => void bookings.splice(bookings.indexOf(b), 1),
      };
    },
    (rng) => {
      const b = pick(rng, bookings), card = pick(rng, cards), type = pick(rng, ["comprehensive", "travel"]);
      const cost = 50 + 25 * rng.int(10);
      if (!b) return undefined;
      return {
        ask: `Buy ${type} insurance for booking ${b} at $${cost}, paid with card ${card}; ${tok}.`,
        calls: [call("purchase_insurance", {
          access_token: token,
          insurance_type: type,
          booking_id: b,
          insurance_cost: pyFloat(cost),
          card_id: card,
        })],
        vague: {
          ask: `Buy ${type} insurance for booking ${b}, paid with card ${card}; ${tok}.`,
          clarify: `It costs $${cost}.`,
        },
      };
    },
    (rng) => {
      const b = pick(rng, bookings), note = pick(rng, NOTES);
      if (!b) return undefined;
      return {
        ask: `Tell customer support about booking ${b}: '${note}'`,
        calls: [call("contact_customer_support", { booking_id: b, message: note })],
      };
    },
    (rng) => {
      const other = pick(rng, CURRENCIES), value = 10 * (1 + rng.int(200)), toUsd = rng.float() < 0.5;
      const [base, target] = toUsd ? [other, "USD"] : ["USD", other];
      return {
        ask: `How much is ${value} ${base} in ${target}?`,
        calls: [call("compute_exchange_rate", { base_currency: base, target_currency: target, value: pyFloat(value) })],
        vague: { ask: `How much is ${value} ${base} in another currency?`, clarify: `In ${target}.` },
      };
    },
    (rng) => {
      const limit = 1000 * (1 + rng.int(5));
      return {
        ask: `Set my travel budget limit to $${limit}; ${tok}.`,
        calls: [call("set_budget_limit", { access_token: token, budget_limit: pyFloat(limit) })],
      };
    },
    (rng) => {
      const dob = `${1960 + rng.int(40)}-${String(1 + rng.int(12)).padStart(2, "0")}-${
        String(1 + rng.int(28)).padStart(2, "0")
      }`;
      const passport = `US${digits(rng, 7)}`;
      return {
        ask: `Check my traveller information: ${first} ${last}, born ${dob}, passport ${passport}.`,
        calls: [call("verify_traveler_information", {
          first_name: first,
          last_name: last,
          date_of_birth: dob,
          passport_number: passport,
        })],
        vague: {
          ask: `Check my traveller information: ${first} ${last}, born ${dob}.`,
          clarify: `My passport number is ${passport}.`,
        },
      };
    },
    () => ({ ask: "List every airport you can fly to.", calls: [call("list_all_airports", {})] }),
    (rng) => {
      const number = digits(rng, 16), exp = `${String(1 + rng.int(12)).padStart(2, "0")}/${27 + rng.int(4)}`;
      const cvv = 100 + rng.int(900);
      return {
        ask: `Register my card number ${number}, expiring ${exp}, holder ${first} ${last}, CVV ${cvv}; ${tok}.`,
        calls: [call("register_credit_card", {
          access_token: token,
          card_number: number,
          expiration_date: exp,
          cardholder_name: `${first} ${last}`,
          card_verification_number: cvv,
        })],
        commit: (results) => {
          const id = resultField(results[0], "card_id");
          if (typeof id === "string") cards.push(id);
        },
      };
    },
  ];
  return { className: "TravelAPI", config, request: (rng) => pick(rng, requests)(rng) };
}

function cap(s: string): string {
  return s[0].toUpperCase() + s.slice(1);
}
