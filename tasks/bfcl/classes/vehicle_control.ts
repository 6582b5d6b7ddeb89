/**
 * BFCL's VehicleControlAPI: engine, doors, climate, lights, brakes, cruise control, navigation, tires and unit
 * conversions, with the exact result and error texts. Speeds and outside temperatures come from Python's
 * `random.Random(random_seed)` (default 141053) through `uniform`. The brake forces and slope angle are private in
 * BFCL (leading underscore), so the checker does not compare them. Long context adds BFCL's car metadata, weather
 * record, parking-brake manual and intermediary cities to the results.
 * State compared: fuelLevel, batteryVoltage, engine_state, remainingUnlockedDoors, doorStatus, acTemperature,
 * fanSpeed, acMode, humidityLevel, headLightStatus, parkingBrakeStatus, brakePedalStatus, distanceToNextVehicle,
 * cruiseStatus, destination, the four tire pressures, long_context.
 */
import { ApiCallError, type MethodSpec, PyApiBase } from "./base.ts";
import { longContext } from "./long_context.ts";
import {
  dictEntries,
  numValue,
  pyArith,
  pyCompare,
  pyDeepCopy,
  pyEq,
  PyFloat,
  pyFloat,
  pyFloatOf,
  pyIter,
  pyRepr,
  pyStr,
  pyTypeName,
  toPlain,
  truthy,
} from "./py.ts";
import { PyRandom } from "../../../src/util/py_random.ts";

const F = (x: number) => new PyFloat(x);

const MAX_FUEL_LEVEL = 50;
const MIN_FUEL_LEVEL = F(0);
const MILE_PER_GALLON = F(20);

/** Zip-code pairs with their distances, either order. */
const DISTANCES: [string, string, number][] = [
  ["83214", "74532", 750],
  ["56108", "62947", 320],
  ["71354", "83462", 450],
  ["47329", "52013", 290],
  ["69238", "51479", 630],
  ["94016", "83214", 980],
  ["94016", "94704", 600],
  ["94704", "08540", 2550],
  ["94016", "08540", 1950],
  ["62947", "47329", 1053],
  ["94016", "62947", 780],
  ["74532", "94016", 880],
];

/** The zip code of each city the class knows (`get_zipcode_based_on_city`; any other city is "00000"). */
export const ZIPCODES: Readonly<Record<string, string>> = {
  Rivermist: "83214",
  Stonebrook: "74532",
  Maplecrest: "56108",
  Silverpine: "62947",
  Shadowridge: "71354",
  "Sunset Valley": "83462",
  Oakendale: "47329",
  Willowbend: "52013",
  "Crescent Hollow": "69238",
  Autumnville: "51479",
  "San Francisco": "94016",
};

/** The vehicle class; one instance per episode. */
export class VehicleControlAPI extends PyApiBase {
  readonly name = "VehicleControlAPI";
  fuelLevel: unknown = F(0);
  batteryVoltage: unknown = 12.6;
  engineState: unknown = "stopped";
  remainingUnlockedDoors: unknown = 4;
  doorStatus = new Map<unknown, unknown>();
  acTemperature: unknown = F(25);
  fanSpeed: unknown = 50;
  acMode: unknown = "auto";
  humidityLevel: unknown = F(50);
  headLightStatus: unknown = "off";
  parkingBrakeStatus: unknown = "released";
  brakePedalStatus: unknown = "released";
  distanceToNextVehicle: unknown = F(50);
  cruiseStatus: unknown = "inactive";
  destination: unknown = "None";
  frontLeftTirePressure: unknown = F(32);
  frontRightTirePressure: unknown = F(32);
  rearLeftTirePressure: unknown = F(30);
  rearRightTirePressure: unknown = F(30);
  longContext = false;
  #parkingBrakeForce: unknown = F(0);
  #slopeAngle: unknown = F(0);
  #brakePedalForce: unknown = F(0);
  #random = new PyRandom(141053);

  loadScenario(config: Record<string, unknown>, longContext = false): void {
    const c = pyDeepCopy(config);
    const get = (k: string, d: unknown) => (k in c ? c[k] : d);
    this.#random = new PyRandom(BigInt(get("random_seed", 141053) as number));
    this.fuelLevel = get("fuelLevel", F(0));
    this.batteryVoltage = get("batteryVoltage", 12.6);
    this.engineState = get("engineState", "stopped");
    const doors = get("doorStatus", null);
    this.doorStatus = new Map(
      doors === null
        ? [["driver", "unlocked"], ["passenger", "unlocked"], ["rear_left", "unlocked"], ["rear_right", "unlocked"]]
        : dictEntries(doors as object),
    );
    this.remainingUnlockedDoors = 4 - [...this.doorStatus.values()].filter((s) => s === "locked").length;
    this.acTemperature = get("acTemperature", F(25));
    this.fanSpeed = get("fanSpeed", 50);
    this.acMode = get("acMode", "auto");
    this.humidityLevel = get("humidityLevel", F(50));
    this.headLightStatus = get("headLightStatus", "off");
    this.parkingBrakeStatus = get("parkingBrakeStatus", "released");
    this.#parkingBrakeForce = get("parkingBrakeForce", F(0));
    this.#slopeAngle = get("slopeAngle", F(0));
    this.brakePedalStatus = get("brakePedalStatus", "released");
    this.#brakePedalForce = get("brakePedalForce", F(0));
    this.distanceToNextVehicle = get("distanceToNextVehicle", F(50));
    this.cruiseStatus = get("cruiseStatus", "inactive");
    this.destination = get("destination", "None");
    this.frontLeftTirePressure = get("frontLeftTirePressure", F(32));
    this.frontRightTirePressure = get("frontRightTirePressure", F(32));
    this.rearLeftTirePressure = get("rearLeftTirePressure", F(30));
    this.rearRightTirePressure = get("rearRightTirePressure", F(30));
    this.longContext = longContext;
  }

  state(): Record<string, unknown> {
    return toPlain({
      fuelLevel: this.fuelLevel,
      batteryVoltage: this.batteryVoltage,
      engine_state: this.engineState,
      remainingUnlockedDoors: this.remainingUnlockedDoors,
      doorStatus: this.doorStatus,
      acTemperature: this.acTemperature,
      fanSpeed: this.fanSpeed,
      acMode: this.acMode,
      humidityLevel: this.humidityLevel,
      headLightStatus: this.headLightStatus,
      parkingBrakeStatus: this.parkingBrakeStatus,
      brakePedalStatus: this.brakePedalStatus,
      distanceToNextVehicle: this.distanceToNextVehicle,
      cruiseStatus: this.cruiseStatus,
      destination: this.destination,
      frontLeftTirePressure: this.frontLeftTirePressure,
      frontRightTirePressure: this.frontRightTirePressure,
      rearLeftTirePressure: this.rearLeftTirePressure,
      rearRightTirePressure: this.rearRightTirePressure,
      long_context: this.longContext,
    }) as Record<string, unknown>;
  }

  /** Sets each door's lock; an unknown door is Python's KeyError (the doors before it stay changed). */
  #setDoors(doors: unknown, to: "locked" | "unlocked"): void {
    const list = pyIter(doors);
    for (const d of list) {
      if (!this.doorStatus.has(d)) throw new ApiCallError(pyRepr(d), "KeyError");
      if (this.doorStatus.get(d) === to) continue;
      this.doorStatus.set(d, to);
      this.remainingUnlockedDoors = pyArith(this.remainingUnlockedDoors, to === "unlocked" ? 1 : -1, "+");
    }
  }

  #brakeResult(status: string, force: unknown): Record<string, unknown> {
    const base = { parkingBrakeStatus: status, _parkingBrakeForce: force, _slopeAngle: F(10) };
    return this.longContext ? { parkingBrakeInstruction: longContext("PARKING_BRAKE_INSTRUCTION"), ...base } : base;
  }

  protected readonly table: Record<string, MethodSpec> = {
    startEngine: {
      params: ["ignitionMode"],
      run: ({ ignitionMode }) => {
        if (ignitionMode === "STOP") this.engineState = "stopped";
        if (pyCompare(this.remainingUnlockedDoors, ">", 0)) {
          const unlocked = [...this.doorStatus].filter(([, s]) => s === "unlocked").map(([d]) => pyStr(d));
          return {
            error: "All doors must be locked before starting the engine. Here are the unlocked doors: " +
              unlocked.join(", "),
          };
        }
        if (this.brakePedalStatus !== "pressed") {
          return { error: "Brake pedal needs to be pressed when starting the engine." };
        }
        if (!pyEq(this.#brakePedalForce, 1000)) {
          return { error: "Must press the brake fully before starting the engine." };
        }
        if (pyCompare(this.fuelLevel, "<", MIN_FUEL_LEVEL)) return { error: "Fuel tank is empty." };
        if (ignitionMode !== "START") return { error: "Invalid ignition mode." };
        this.engineState = "running";
        return { engineState: this.engineState, fuelLevel: this.fuelLevel, batteryVoltage: this.batteryVoltage };
      },
    },
    fillFuelTank: {
      params: ["fuelAmount"],
      run: ({ fuelAmount }) => {
        if (pyCompare(fuelAmount, "<", 0)) return { error: "Fuel amount cannot be negative." };
        const total = pyArith(this.fuelLevel, fuelAmount, "+");
        if (pyCompare(total, ">", MAX_FUEL_LEVEL)) return { error: "Cannot fill gas above the tank capacity." };
        if (pyCompare(total, "<", MIN_FUEL_LEVEL)) return { error: "Fuel tank is empty. Min fuel level is 0 gallons." };
        this.fuelLevel = total;
        return { fuelLevel: this.fuelLevel };
      },
    },
    lockDoors: {
      params: ["unlock", "door"],
      run: ({ unlock, door }) => {
        const to = truthy(unlock) ? "unlocked" : "locked";
        this.#setDoors(door, to);
        return { lockStatus: to, remainingUnlockedDoors: this.remainingUnlockedDoors };
      },
    },
    adjustClimateControl: {
      params: ["temperature", ["unit", "celsius"], ["fanSpeed", 50], ["mode", "auto"]],
      run: ({ temperature, unit, fanSpeed, mode }) => {
        if (!(pyCompare(0, "<=", fanSpeed) && pyCompare(fanSpeed, "<=", 100))) {
          return { error: "Fan speed must be between 0 and 100." };
        }
        this.acTemperature = temperature;
        if (unit === "fahrenheit") {
          const t = numValue(pyArith(temperature, 32, "-"))!;
          this.acTemperature = pyFloat((t * 5) / 9);
        }
        this.fanSpeed = fanSpeed;
        this.acMode = mode;
        return { currentACTemperature: temperature, climateMode: mode, humidityLevel: this.humidityLevel };
      },
    },
    get_outside_temperature_from_google: {
      params: [],
      run: () => {
        const t = this.#random.uniform(-10, 40);
        if (!this.longContext) return { outsideTemperature: t };
        return { ...(longContext("LONG_WEATHER_EXTENSION") as object), outsideTemperature: t };
      },
    },
    get_outside_temperature_from_weather_com: { params: [], run: () => ({ error: 404 }) },
    setHeadlights: {
      params: ["mode"],
      run: ({ mode }) => {
        if (!["on", "off", "auto"].includes(mode as string)) return { error: "Invalid headlight mode." };
        this.headLightStatus = mode === "on" ? "on" : "off";
        return { headlightStatus: this.headLightStatus };
      },
    },
    displayCarStatus: {
      params: ["option"],
      run: ({ option }) => {
        const status: Record<string, unknown> = {};
        if (this.longContext) status.metadata = longContext("CAR_STATUS_METADATA_EXTENSION");
        switch (option) {
          case "fuel":
            status.fuelLevel = this.fuelLevel;
            break;
          case "battery":
            status.batteryVoltage = this.batteryVoltage;
            break;
          case "doors":
            status.doorStatus = this.doorStatus;
            break;
          case "climate":
            status.currentACTemperature = this.acTemperature;
            status.fanSpeed = this.fanSpeed;
            status.climateMode = this.acMode;
            status.humidityLevel = this.humidityLevel;
            break;
          case "headlights":
            status.headlightStatus = this.headLightStatus;
            break;
          case "parkingBrake":
            status.parkingBrakeStatus = this.parkingBrakeStatus;
            status.parkingBrakeForce = this.#parkingBrakeForce;
            status.slopeAngle = this.#slopeAngle;
            break;
          case "brakePedal":
            status.brakePedalStatus = this.brakePedalStatus;
            status.brakePedalForce = this.#brakePedalForce;
            break;
          case "engine":
            status.engineState = this.engineState;
            break;
          default:
            status.error = "Invalid option";
        }
        return status;
      },
    },
    activateParkingBrake: {
      params: ["mode"],
      run: ({ mode }) => {
        if (mode !== "engage" && mode !== "release") return { error: "Invalid mode" };
        const engage = mode === "engage";
        this.parkingBrakeStatus = engage ? "engaged" : "released";
        this.#parkingBrakeForce = F(engage ? 500 : 0);
        this.#slopeAngle = F(10);
        return this.#brakeResult(engage ? "engaged" : "released", F(engage ? 500 : 0));
      },
    },
    pressBrakePedal: {
      params: ["pedalPosition"],
      run: ({ pedalPosition }) => {
        if (!(pyCompare(0, "<=", pedalPosition) && pyCompare(pedalPosition, "<=", 1))) {
          return { error: "Pedal position must be between 0 and 1." };
        }
        if (pyEq(pedalPosition, 0)) {
          this.brakePedalStatus = "released";
          this.#brakePedalForce = F(0);
          return { brakePedalStatus: "released", brakePedalForce: F(0) };
        }
        const force = pyArith(pedalPosition, 1000, "*");
        this.brakePedalStatus = "pressed";
        this.#brakePedalForce = force;
        return { brakePedalStatus: "pressed", brakePedalForce: pyFloat(numValue(force)!) };
      },
    },
    releaseBrakePedal: {
      params: [],
      run: () => {
        this.brakePedalStatus = "released";
        this.#brakePedalForce = F(0);
        return { brakePedalStatus: "released", brakePedalForce: F(0) };
      },
    },
    setCruiseControl: {
      params: ["speed", "activate", "distanceToNextVehicle"],
      run: ({ speed, activate, distanceToNextVehicle }) => {
        const distance = pyFloat(pyFloatOf(distanceToNextVehicle));
        const s = pyFloatOf(speed);
        if (this.engineState === "stopped") return { error: "Start the engine before activating the cruise control." };
        this.distanceToNextVehicle = distance;
        if (truthy(activate)) {
          if (s < 0 || s > 120 || s % 5 !== 0) return { error: "Invalid speed" };
          this.cruiseStatus = "active";
        } else this.cruiseStatus = "inactive";
        return { cruiseStatus: this.cruiseStatus, currentSpeed: pyFloat(s), distanceToNextVehicle: distance };
      },
    },
    get_current_speed: { params: [], run: () => ({ currentSpeed: pyFloat(this.#random.uniform(0, 120)) }) },
    display_log: { params: ["messages"], run: ({ messages }) => ({ log: messages }) },
    estimate_drive_feasibility_by_mileage: {
      params: ["distance"],
      run: ({ distance }) => ({
        canDrive: !pyCompare(pyArith(this.fuelLevel, MILE_PER_GALLON, "*"), "<", distance),
      }),
    },
    liter_to_gallon: {
      params: ["liter"],
      run: ({ liter }) => ({ gallon: pyArith(liter, 0.264172, "*") }),
    },
    gallon_to_liter: {
      params: ["gallon"],
      run: ({ gallon }) => ({ liter: pyArith(gallon, 3.78541, "*") }),
    },
    estimate_distance: {
      params: ["cityA", "cityB"],
      run: ({ cityA, cityB }) => {
        const hit = DISTANCES.find(([a, b]) => (cityA === a && cityB === b) || (cityA === b && cityB === a));
        const result: Record<string, unknown> = hit
          ? { distance: F(hit[2]) }
          : { error: "distance not found in database." };
        if (this.longContext) result.intermediaryCities = longContext("INTERMEDIARY_CITIES");
        return result;
      },
    },
    get_zipcode_based_on_city: {
      params: ["city"],
      run: ({ city }) => ({
        zipcode: typeof city === "string" && Object.hasOwn(ZIPCODES, city) ? ZIPCODES[city] : "00000",
      }),
    },
    set_navigation: {
      params: ["destination"],
      run: ({ destination }) => {
        if (typeof destination !== "string") {
          this.destination = destination;
          throw new ApiCallError(`can only concatenate str (not "${pyTypeName(destination)}") to str`, "TypeError");
        }
        this.destination = destination;
        return { status: "Navigating to " + destination };
      },
    },
    check_tire_pressure: {
      params: [],
      run: () => {
        let sum: unknown = this.frontLeftTirePressure;
        for (const p of [this.frontRightTirePressure, this.rearLeftTirePressure, this.rearRightTirePressure]) {
          sum = pyArith(sum, p, "+");
        }
        const mean = numValue(sum)! / 4;
        return {
          frontLeftTirePressure: this.frontLeftTirePressure,
          frontRightTirePressure: this.frontRightTirePressure,
          rearLeftTirePressure: this.rearLeftTirePressure,
          rearRightTirePressure: this.rearRightTirePressure,
          healthy_tire_pressure: mean >= 30 && mean <= 35,
          car_info: this.longContext ? longContext("CAR_STATUS_METADATA_EXTENSION") : {},
        };
      },
    },
    find_nearest_tire_shop: {
      params: [],
      run: () => ({ shopLocation: "456 Oakwood Avenue, Rivermist, 83214" }),
    },
  };
}
