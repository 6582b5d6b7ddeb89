/**
 * Tool documents for the generated tasks, in BFCL's document shape (`name`, `description`, `parameters` with
 * `properties` and `required`), written in Crucible's own words and kept to the methods the generator's worlds
 * call plus their closest neighbours, so that a tiny model's prompt stays short. Runs on BFCL's own files use the
 * documents in their `multi_turn_func_doc/` instead.
 */
import type { FunctionDoc } from "./entries.ts";

type P = Record<string, [type: string, description: string]>;

function doc(name: string, description: string, params: P, required: string[] = Object.keys(params)): FunctionDoc {
  const properties = Object.fromEntries(
    Object.entries(params).map(([k, [type, d]]) => [k, { type, description: d }]),
  );
  return { name, description, parameters: { type: "dict", properties, required } };
}

const FS: FunctionDoc[] = [
  doc("cat", "Show the contents of a file in the current directory.", { file_name: ["string", "The file."] }),
  doc("cd", "Change the current directory (one level, or '..').", { folder: ["string", "The folder."] }),
  doc("cp", "Copy a file or directory.", { source: ["string", "What to copy."], destination: ["string", "Where."] }),
  doc("echo", "Write text to a file, or show it when no file is given.", {
    content: ["string", "The text."],
    file_name: ["string", "The file to write."],
  }, ["content"]),
  doc("grep", "Find the lines of a file that hold a pattern.", {
    file_name: ["string", "The file."],
    pattern: ["string", "The text to find."],
  }),
  doc("ls", "List the current directory.", { a: ["boolean", "Include hidden entries."] }, []),
  doc("mkdir", "Make a directory in the current one.", { dir_name: ["string", "Its name."] }),
  doc("mv", "Move or rename a file or directory.", {
    source: ["string", "What to move."],
    destination: ["string", "A directory to move into, or a new name."],
  }),
  doc("pwd", "Show the current directory's path.", {}),
  doc("rm", "Remove a file or directory.", { file_name: ["string", "What to remove."] }),
  doc("sort", "Sort a file's lines.", { file_name: ["string", "The file."] }),
  doc("touch", "Create an empty file in the current directory.", { file_name: ["string", "Its name."] }),
  doc("wc", "Count a file's lines, words or characters.", {
    file_name: ["string", "The file."],
    mode: ["string", "'l' lines, 'w' words, 'c' characters."],
  }, ["file_name"]),
];

const MATH: FunctionDoc[] = [
  doc("add", "Add two numbers.", { a: ["float", "First."], b: ["float", "Second."] }),
  doc("subtract", "Subtract b from a.", { a: ["float", "From."], b: ["float", "Taken away."] }),
  doc("multiply", "Multiply two numbers.", { a: ["float", "First."], b: ["float", "Second."] }),
  doc("divide", "Divide a by b.", { a: ["float", "Numerator."], b: ["float", "Denominator."] }),
  doc("mean", "The mean of a list of numbers.", { numbers: ["array", "The numbers."] }),
  doc("max_value", "The largest of a list of numbers.", { numbers: ["array", "The numbers."] }),
  doc("min_value", "The smallest of a list of numbers.", { numbers: ["array", "The numbers."] }),
  doc("square_root", "The square root of a number.", {
    number: ["float", "The number."],
    precision: ["integer", "Decimal places."],
  }),
];

const TICKET: FunctionDoc[] = [
  doc("create_ticket", "Open a ticket as the logged-in user.", {
    title: ["string", "Its title."],
    description: ["string", "Details."],
    priority: ["integer", "1 (lowest) to 5."],
  }, ["title"]),
  doc("get_ticket", "Show a ticket.", { ticket_id: ["integer", "Its id."] }),
  doc("close_ticket", "Close a ticket.", { ticket_id: ["integer", "Its id."] }),
  doc("resolve_ticket", "Resolve a ticket with a note.", {
    ticket_id: ["integer", "Its id."],
    resolution: ["string", "How it was resolved."],
  }),
  doc("edit_ticket", "Change fields of a ticket.", {
    ticket_id: ["integer", "Its id."],
    updates: ["dict", "Fields to change: title, description, status, priority."],
  }),
  doc("get_user_tickets", "List the logged-in user's tickets.", { status: ["string", "Only this status."] }, []),
];

const TWITTER: FunctionDoc[] = [
  doc("post_tweet", "Post a tweet as the logged-in user.", {
    content: ["string", "The text."],
    tags: ["array", "Hashtags."],
    mentions: ["array", "User names mentioned."],
  }, ["content"]),
  doc("comment", "Comment on a tweet.", { tweet_id: ["integer", "Its id."], comment_content: ["string", "The text."] }),
  doc("retweet", "Retweet a tweet.", { tweet_id: ["integer", "Its id."] }),
  doc("mention", "Mention users in a tweet.", {
    tweet_id: ["integer", "Its id."],
    mentioned_usernames: ["array", "User names."],
  }),
  doc("follow_user", "Follow a user.", { username_to_follow: ["string", "The user."] }),
  doc("search_tweets", "Find tweets that hold a keyword.", { keyword: ["string", "The keyword."] }),
  doc("get_tweet", "Show a tweet.", { tweet_id: ["integer", "Its id."] }),
];

const MESSAGE: FunctionDoc[] = [
  doc("message_login", "Log in to the messaging app.", { user_id: ["string", "The user's id, such as USR001."] }),
  doc("list_users", "List the names of the workspace's users.", {}),
  doc("get_user_id", "Look up a user's id by name.", { user: ["string", "The user's name."] }),
  doc("send_message", "Send a message as the logged-in user.", {
    receiver_id: ["string", "The receiver's user id."],
    message: ["string", "The text."],
  }),
  doc("delete_message", "Delete the latest message sent to a receiver.", {
    receiver_id: ["string", "The receiver's user id."],
  }),
  doc("view_messages_sent", "Show the messages sent, by receiver.", {}),
  doc("add_contact", "Add a user to the workspace.", { user_name: ["string", "The new user's name."] }),
  doc("search_messages", "Find sent messages that hold a keyword.", { keyword: ["string", "The keyword."] }),
  doc("get_message_stats", "Count the messages sent and their receivers.", {}),
];

const TRADING: FunctionDoc[] = [
  doc("trading_login", "Log in to the trading account.", {
    username: ["string", "The user name."],
    password: ["string", "The password."],
  }),
  doc("get_stock_info", "Show a stock's price, change, volume and moving averages.", {
    symbol: ["string", "The ticker symbol."],
  }),
  doc("get_symbol_by_name", "Find a company's ticker symbol.", { name: ["string", "The company's name."] }),
  doc("place_order", "Place a buy or sell order.", {
    order_type: ["string", "'Buy' or 'Sell'."],
    symbol: ["string", "The ticker symbol."],
    price: ["float", "Price per share."],
    amount: ["integer", "Number of shares."],
  }),
  doc("cancel_order", "Cancel an order that has not completed.", { order_id: ["integer", "The order's id."] }),
  doc("get_order_details", "Show an order.", { order_id: ["integer", "The order's id."] }),
  doc("get_order_history", "List the ids of the account's orders.", {}),
  doc("add_to_watchlist", "Add a stock to the watch list.", { stock: ["string", "The ticker symbol."] }),
  doc("remove_stock_from_watchlist", "Remove a stock from the watch list.", {
    symbol: ["string", "The ticker symbol."],
  }),
  doc("get_watchlist", "Show the watch list.", {}),
  doc("fund_account", "Deposit money into the trading account.", { amount: ["float", "The amount."] }),
  doc("withdraw_funds", "Withdraw money while the market is open.", { amount: ["float", "The amount."] }),
  doc("get_account_info", "Show the account's id, balance and card.", {}),
  doc("get_available_stocks", "List the stocks of a sector.", { sector: ["string", "Such as 'Technology'."] }),
  doc("notify_price_change", "Say which stocks moved by at least a threshold.", {
    stocks: ["array", "Ticker symbols."],
    threshold: ["float", "Percent change."],
  }),
  doc("filter_stocks_by_price", "Keep the stocks priced within a range.", {
    stocks: ["array", "Ticker symbols."],
    min_price: ["float", "Lowest price."],
    max_price: ["float", "Highest price."],
  }),
  doc("get_transaction_history", "Show deposits and withdrawals, optionally between two dates.", {
    start_date: ["string", "YYYY-MM-DD."],
    end_date: ["string", "YYYY-MM-DD."],
  }, []),
];

const TRAVEL: FunctionDoc[] = [
  doc("get_flight_cost", "The cost of a flight.", {
    travel_from: ["string", "Departure airport code."],
    travel_to: ["string", "Arrival airport code."],
    travel_date: ["string", "YYYY-MM-DD."],
    travel_class: ["string", "'economy', 'business' or 'first'."],
  }),
  doc("get_nearest_airport_by_city", "The airport code nearest a city.", { location: ["string", "The city."] }),
  doc("list_all_airports", "List the airport codes.", {}),
  doc("book_flight", "Book a flight with a registered card.", {
    access_token: ["string", "The traveller's token."],
    card_id: ["string", "The card's id."],
    travel_date: ["string", "YYYY-MM-DD."],
    travel_from: ["string", "Departure airport code."],
    travel_to: ["string", "Arrival airport code."],
    travel_class: ["string", "'economy', 'business' or 'first'."],
  }),
  doc("get_credit_card_balance", "A registered card's balance.", {
    access_token: ["string", "The traveller's token."],
    card_id: ["string", "The card's id."],
  }),
  doc("register_credit_card", "Register a credit card.", {
    access_token: ["string", "The traveller's token."],
    card_number: ["string", "The card number."],
    expiration_date: ["string", "MM/YY."],
    cardholder_name: ["string", "The name on the card."],
    card_verification_number: ["integer", "The CVV."],
  }),
  doc("get_all_credit_cards", "List the registered cards.", {}),
  doc("retrieve_invoice", "A booking's invoice.", {
    access_token: ["string", "The traveller's token."],
    booking_id: ["string", "The booking's id."],
  }, ["access_token"]),
  doc("cancel_booking", "Cancel a booking and refund its card.", {
    access_token: ["string", "The traveller's token."],
    booking_id: ["string", "The booking's id."],
  }),
  doc("purchase_insurance", "Buy travel insurance for a booking.", {
    access_token: ["string", "The traveller's token."],
    insurance_type: ["string", "The kind of insurance."],
    booking_id: ["string", "The booking's id."],
    insurance_cost: ["float", "Its price."],
    card_id: ["string", "The card that pays."],
  }),
  doc("contact_customer_support", "Send customer support a message about a booking.", {
    booking_id: ["string", "The booking's id."],
    message: ["string", "The text."],
  }),
  doc("compute_exchange_rate", "Convert an amount between currencies.", {
    base_currency: ["string", "From, such as 'USD'."],
    target_currency: ["string", "To."],
    value: ["float", "The amount."],
  }),
  doc("set_budget_limit", "Set the traveller's budget limit in USD.", {
    access_token: ["string", "The traveller's token."],
    budget_limit: ["float", "The limit."],
  }),
  doc("verify_traveler_information", "Check a traveller's name, age and passport.", {
    first_name: ["string", "First name."],
    last_name: ["string", "Last name."],
    date_of_birth: ["string", "YYYY-MM-DD."],
    passport_number: ["string", "The passport number."],
  }),
];

const VEHICLE: FunctionDoc[] = [
  doc("lockDoors", "Lock or unlock doors.", {
    unlock: ["boolean", "True to unlock, false to lock."],
    door: ["array", "Doors: 'driver', 'passenger', 'rear_left', 'rear_right'."],
  }),
  doc("pressBrakePedal", "Press the brake pedal.", { pedalPosition: ["float", "0 (released) to 1 (fully)."] }),
  doc("releaseBrakePedal", "Release the brake pedal.", {}),
  doc("startEngine", "Start or stop the engine (doors locked, brake pressed fully).", {
    ignitionMode: ["string", "'START' or 'STOP'."],
  }),
  doc("fillFuelTank", "Add fuel (the tank holds 50 gallons).", { fuelAmount: ["float", "Gallons."] }),
  doc("setHeadlights", "Set the headlights.", { mode: ["string", "'on', 'off' or 'auto'."] }),
  doc("adjustClimateControl", "Set the climate control.", {
    temperature: ["float", "The temperature."],
    unit: ["string", "'celsius' or 'fahrenheit'."],
    fanSpeed: ["integer", "0 to 100."],
    mode: ["string", "'auto', 'cool', 'heat' or 'defrost'."],
  }, ["temperature"]),
  doc("setCruiseControl", "Set cruise control (engine running).", {
    speed: ["float", "Speed in mph, a multiple of 5."],
    activate: ["boolean", "True to turn it on."],
    distanceToNextVehicle: ["float", "Meters to keep."],
  }),
  doc("activateParkingBrake", "Engage or release the parking brake.", { mode: ["string", "'engage' or 'release'."] }),
  doc("displayCarStatus", "Show one part of the car's status.", {
    option: ["string", "fuel, battery, doors, climate, headlights, parkingBrake, brakePedal or engine."],
  }),
  doc("check_tire_pressure", "Show the tyre pressures.", {}),
  doc("find_nearest_tire_shop", "The nearest tyre shop.", {}),
  doc("get_zipcode_based_on_city", "A city's zip code.", { city: ["string", "The city."] }),
  doc("estimate_distance", "The distance between two zip codes.", {
    cityA: ["string", "First zip code."],
    cityB: ["string", "Second zip code."],
  }),
  doc("set_navigation", "Navigate to a destination.", { destination: ["string", "The address."] }),
  doc("liter_to_gallon", "Convert liters to gallons.", { liter: ["float", "Liters."] }),
  doc("gallon_to_liter", "Convert gallons to liters.", { gallon: ["float", "Gallons."] }),
  doc("estimate_drive_feasibility_by_mileage", "Whether the fuel left covers a distance.", {
    distance: ["float", "Miles."],
  }),
  doc("get_outside_temperature_from_google", "The outside temperature.", {}),
];

/** The generated tasks' tool documents by class. */
export const GENERATED_DOCS: Readonly<Record<string, readonly FunctionDoc[]>> = {
  GorillaFileSystem: FS,
  MathAPI: MATH,
  TicketAPI: TICKET,
  TwitterAPI: TWITTER,
  MessageAPI: MESSAGE,
  TradingBot: TRADING,
  TravelAPI: TRAVEL,
  VehicleControlAPI: VEHICLE,
};
