/**
 * The generator's VehicleControlAPI world: a parked car (engine stopped, doors each locked or not, some fuel, climate
 * and tyre readings), as BFCL's initial configs describe it. Long context keeps the same state and lets the class add
 * BFCL's car manual, weather record, car metadata and intermediary cities to the results. The view tracks doors, fuel,
 * engine and brake.
 */
import type { Rng } from "../../src/util/random.ts";
import { pyFloat } from "./classes/py.ts";
import { ZIPCODES } from "./classes/vehicle_control.ts";
import { call, pick, type Template, type World } from "./world_kit.ts";

const DOORS = ["driver", "passenger", "rear_left", "rear_right"];

/** City pairs whose zip codes BFCL's estimate_distance knows. */
const PAIRS: [string, string][] = [
  ["Rivermist", "Stonebrook"],
  ["Maplecrest", "Silverpine"],
  ["Shadowridge", "Sunset Valley"],
  ["Oakendale", "Willowbend"],
  ["Crescent Hollow", "Autumnville"],
  ["San Francisco", "Rivermist"],
  ["Silverpine", "Oakendale"],
  ["San Francisco", "Silverpine"],
  ["Stonebrook", "San Francisco"],
];
const ZIP = ZIPCODES;
const STREETS = ["Oak Street", "Maple Avenue", "Pine Road", "Harbor Drive", "Sunset Boulevard", "Lake View Lane"];
const OPTIONS = ["fuel", "battery", "doors", "climate", "headlights", "parkingBrake", "brakePedal", "engine"];

/** VehicleControlAPI: doors, engine, climate, lights, brakes, cruise control, navigation, fuel and conversions. */
export function vehicleWorld(rng: Rng, _long = false): World {
  const doors = new Map(DOORS.map((d) => [d, rng.float() < 0.5 ? "locked" : "unlocked"]));
  let fuel = 5 + rng.int(30) + 0.5;
  let running = false;
  const config = {
    fuelLevel: fuel,
    batteryVoltage: 12.6,
    engineState: "stopped",
    doorStatus: Object.fromEntries(doors),
    acTemperature: 18 + rng.int(8) + 0.5,
    fanSpeed: 10 * (2 + rng.int(6)),
    acMode: "auto",
    humidityLevel: 40 + rng.int(20) + 0.5,
    headLightStatus: pick(rng, ["on", "off"]),
    parkingBrakeStatus: pick(rng, ["engaged", "released"]),
    distanceToNextVehicle: 30 + 10 * rng.int(8),
    cruiseStatus: "inactive",
    destination: "None",
    frontLeftTirePressure: 28 + rng.int(8) + 0.5,
    frontRightTirePressure: 28 + rng.int(8) + 0.5,
    rearLeftTirePressure: 28 + rng.int(8) + 0.5,
    rearRightTirePressure: 28 + rng.int(8) + 0.5,
  };
  const lockAll = () => call("lockDoors", { unlock: false, door: [...DOORS] });
  const requests: Template[] = [
    () => ({
      ask: "Lock all four doors.",
      calls: [lockAll()],
      commit: () => DOORS.forEach((d) => doors.set(d, "locked")),
    }),
    (rng) => {
      const d = pick(rng, DOORS.filter((x) => doors.get(x) === "locked"));
      if (!d) return undefined;
      return {
        ask: `Unlock the ${d} door.`,
        calls: [call("lockDoors", { unlock: true, door: [d] })],
        vague: { ask: "Unlock one of the doors.", clarify: `The ${d} door.` },
        commit: () => void doors.set(d, "unlocked"),
      };
    },
    (rng) => {
      const mode = pick(rng, ["on", "off", "auto"]);
      return { ask: `Set the headlights to ${mode}.`, calls: [call("setHeadlights", { mode })] };
    },
    (rng) => {
      const unit = pick(rng, ["celsius", "fahrenheit"]), mode = pick(rng, ["auto", "cool", "heat", "defrost"]);
      const t = unit === "celsius" ? 18 + rng.int(9) : 64 + 2 * rng.int(8), fan = 10 * (1 + rng.int(9));
      const args = { temperature: pyFloat(t), unit, fanSpeed: fan, mode };
      return {
        ask: `Set the climate control to ${t} degrees ${unit}, fan speed ${fan}, ${mode} mode.`,
        calls: [call("adjustClimateControl", args)],
        vague: { ask: `Set the climate control to ${unit}, fan speed ${fan}, ${mode} mode.`, clarify: `${t} degrees.` },
      };
    },
    (rng) => {
      const amount = 1 + rng.int(Math.max(1, Math.floor(49 - fuel)));
      return {
        ask: `Add ${amount} gallons of fuel to the tank.`,
        calls: [call("fillFuelTank", { fuelAmount: pyFloat(amount) })],
        vague: { ask: "Put some fuel in the tank.", clarify: `${amount} gallons.` },
        commit: () => void (fuel += amount),
      };
    },
    () => {
      if (running) return undefined;
      const locked = DOORS.every((d) => doors.get(d) === "locked");
      const press = call("pressBrakePedal", { pedalPosition: pyFloat(1) });
      return {
        ask: locked
          ? "Press the brake pedal all the way and start the engine."
          : "Lock all four doors, press the brake pedal all the way and start the engine.",
        calls: [...(locked ? [] : [lockAll()]), press, call("startEngine", { ignitionMode: "START" })],
        commit: () => {
          running = true;
          DOORS.forEach((d) => doors.set(d, "locked"));
        },
      };
    },
    (rng) => {
      if (!running) return undefined;
      const speed = 5 * (6 + rng.int(19)), gap = 50 + 10 * rng.int(10);
      return {
        ask: `Turn on cruise control at ${speed} mph, keeping ${gap} meters from the car ahead.`,
        calls: [
          call("setCruiseControl", { speed: pyFloat(speed), activate: true, distanceToNextVehicle: pyFloat(gap) }),
        ],
        vague: {
          ask: `Turn on cruise control, keeping ${gap} meters from the car ahead.`,
          clarify: `Set it to ${speed} mph.`,
        },
      };
    },
    (rng) => {
      const mode = pick(rng, ["engage", "release"]);
      return { ask: `Please ${mode} the parking brake.`, calls: [call("activateParkingBrake", { mode })] };
    },
    (rng) => {
      const option = pick(rng, OPTIONS);
      return { ask: `Display the car's '${option}' status.`, calls: [call("displayCarStatus", { option })] };
    },
    () => ({ ask: "Check my tyre pressure.", calls: [call("check_tire_pressure", {})] }),
    (rng) => {
      const [a, b] = pick(rng, PAIRS);
      return {
        ask: `Look up the zip codes of ${a} and ${b} and estimate the distance between them.`,
        calls: [
          call("get_zipcode_based_on_city", { city: a }),
          call("get_zipcode_based_on_city", { city: b }),
          call("estimate_distance", { cityA: ZIP[a], cityB: ZIP[b] }),
        ],
      };
    },
    (rng) => {
      const place = `${10 + rng.int(990)} ${pick(rng, STREETS)}, ${pick(rng, Object.keys(ZIP))}`;
      return {
        ask: `Navigate to ${place}.`,
        calls: [call("set_navigation", { destination: place })],
        vague: { ask: "Start navigation for me.", clarify: `Go to ${place}.` },
      };
    },
    (rng) => {
      const n = 5 + rng.int(60);
      return rng.float() < 0.5
        ? { ask: `How many gallons are ${n} liters?`, calls: [call("liter_to_gallon", { liter: pyFloat(n) })] }
        : { ask: `How many liters are ${n} gallons?`, calls: [call("gallon_to_liter", { gallon: pyFloat(n) })] };
    },
    (rng) => {
      const miles = 50 * (1 + rng.int(20));
      return {
        ask: `Can I drive ${miles} miles on the fuel I have?`,
        calls: [call("estimate_drive_feasibility_by_mileage", { distance: pyFloat(miles) })],
      };
    },
    () => ({ ask: "Where is the nearest tire shop?", calls: [call("find_nearest_tire_shop", {})] }),
    () => ({
      ask: "What is the temperature outside, from Google?",
      calls: [call("get_outside_temperature_from_google", {})],
    }),
  ];
  return { className: "VehicleControlAPI", config, request: (rng) => pick(rng, requests)(rng) };
}
