/**
 * VehicleControlAPI against a transcript of every method, errors included, with the exact texts gorilla's Python
 * class gives: the engine's preconditions in order, KeyError for an unknown door (after the doors before it
 * changed), random speeds and temperatures from random.Random(141053), float conversions (65 -> 65.0).
 */
import assert from "node:assert/strict";
import { newInstance } from "../../../tasks/bfcl/classes/api.ts";
import { parsePyJson } from "../../../tasks/bfcl/classes/py.ts";
import { playTranscript, runCall, type Step } from "./transcript.ts";

const SCENARIO_JSON = `{"fuelLevel": 15.5, "batteryVoltage": 12.8, "engineState": "stopped",
  "doorStatus": {"driver": "unlocked", "passenger": "unlocked", "rear_left": "locked", "rear_right": "locked"},
  "acTemperature": 25.0, "fanSpeed": 50, "acMode": "auto", "humidityLevel": 50.0, "headLightStatus": "off",
  "parkingBrakeStatus": "released", "parkingBrakeForce": 0.0, "slopeAngle": 0.0, "brakePedalStatus": "released",
  "brakePedalForce": 0.0, "distanceToNextVehicle": 50.0, "cruiseStatus": "inactive", "destination": "None",
  "frontLeftTirePressure": 32.0, "frontRightTirePressure": 32.0, "rearLeftTirePressure": 30.0,
  "rearRightTirePressure": 30.0}`;

Deno.test("VehicleControlAPI: every method and its error texts as BFCL's Python gives them", () => {
  const api = newInstance("VehicleControlAPI");
  api.loadScenario(parsePyJson(SCENARIO_JSON) as Record<string, unknown>);
  const steps: Step[] = [
    [
      "startEngine",
      { "ignitionMode": "START" },
      '{"error": "All doors must be locked before starting the engine. Here are the unlocked doors: driver, passenger"}',
    ],
    [
      "lockDoors",
      { "unlock": false, "door": ["driver", "passenger"] },
      '{"lockStatus": "locked", "remainingUnlockedDoors": 0}',
    ],
    [
      "startEngine",
      { "ignitionMode": "START" },
      '{"error": "Brake pedal needs to be pressed when starting the engine."}',
    ],
    ["pressBrakePedal", { "pedalPosition": 0.5 }, '{"brakePedalStatus": "pressed", "brakePedalForce": 500.0}'],
    ["startEngine", { "ignitionMode": "START" }, '{"error": "Must press the brake fully before starting the engine."}'],
    ["pressBrakePedal", { "pedalPosition": 1 }, '{"brakePedalStatus": "pressed", "brakePedalForce": 1000.0}'],
    ["startEngine", { "ignitionMode": "GO" }, '{"error": "Invalid ignition mode."}'],
    [
      "startEngine",
      { "ignitionMode": "START" },
      '{"engineState": "running", "fuelLevel": 15.5, "batteryVoltage": 12.8}',
    ],
    ["pressBrakePedal", { "pedalPosition": 2 }, '{"error": "Pedal position must be between 0 and 1."}'],
    ["releaseBrakePedal", {}, '{"brakePedalStatus": "released", "brakePedalForce": 0.0}'],
    ["lockDoors", { "unlock": true, "door": ["driver", "trunk"] }, "Error during execution: 'trunk'"],
    [
      "displayCarStatus",
      { "option": "doors" },
      '{"doorStatus": {"driver": "unlocked", "passenger": "locked", "rear_left": "locked", "rear_right": "locked"}}',
    ],
    [
      "displayCarStatus",
      { "option": "climate" },
      '{"currentACTemperature": 25.0, "fanSpeed": 50, "climateMode": "auto", "humidityLevel": 50.0}',
    ],
    [
      "displayCarStatus",
      { "option": "parkingBrake" },
      '{"parkingBrakeStatus": "released", "parkingBrakeForce": 0.0, "slopeAngle": 0.0}',
    ],
    ["displayCarStatus", { "option": "tires" }, '{"error": "Invalid option"}'],
    ["fillFuelTank", { "fuelAmount": 30 }, '{"fuelLevel": 45.5}'],
    ["fillFuelTank", { "fuelAmount": 40 }, '{"error": "Cannot fill gas above the tank capacity."}'],
    ["fillFuelTank", { "fuelAmount": -1 }, '{"error": "Fuel amount cannot be negative."}'],
    [
      "adjustClimateControl",
      { "temperature": 72, "unit": "fahrenheit" },
      '{"currentACTemperature": 72, "climateMode": "auto", "humidityLevel": 50.0}',
    ],
    [
      "adjustClimateControl",
      { "temperature": 20, "fanSpeed": 150 },
      '{"error": "Fan speed must be between 0 and 100."}',
    ],
    ["get_outside_temperature_from_google", {}, '{"outsideTemperature": 36.63485703790535}'],
    ["get_outside_temperature_from_weather_com", {}, '{"error": 404}'],
    ["setHeadlights", { "mode": "auto" }, '{"headlightStatus": "off"}'],
    ["setHeadlights", { "mode": "blink" }, '{"error": "Invalid headlight mode."}'],
    [
      "activateParkingBrake",
      { "mode": "engage" },
      '{"parkingBrakeStatus": "engaged", "_parkingBrakeForce": 500.0, "_slopeAngle": 10.0}',
    ],
    ["activateParkingBrake", { "mode": "hold" }, '{"error": "Invalid mode"}'],
    [
      "activateParkingBrake",
      { "mode": "release" },
      '{"parkingBrakeStatus": "released", "_parkingBrakeForce": 0.0, "_slopeAngle": 10.0}',
    ],
    [
      "setCruiseControl",
      { "speed": 65, "activate": true, "distanceToNextVehicle": 100 },
      '{"cruiseStatus": "active", "currentSpeed": 65.0, "distanceToNextVehicle": 100.0}',
    ],
    ["setCruiseControl", { "speed": 63, "activate": true, "distanceToNextVehicle": 80 }, '{"error": "Invalid speed"}'],
    [
      "setCruiseControl",
      { "speed": 0, "activate": false, "distanceToNextVehicle": 30 },
      '{"cruiseStatus": "inactive", "currentSpeed": 0.0, "distanceToNextVehicle": 30.0}',
    ],
    ["get_current_speed", {}, '{"currentSpeed": 99.11925428879405}'],
    ["display_log", { "messages": ["a", "b"] }, '{"log": ["a", "b"]}'],
    ["estimate_drive_feasibility_by_mileage", { "distance": 900 }, '{"canDrive": true}'],
    ["estimate_drive_feasibility_by_mileage", { "distance": 1000 }, '{"canDrive": false}'],
    ["liter_to_gallon", { "liter": 40 }, '{"gallon": 10.566880000000001}'],
    ["gallon_to_liter", { "gallon": 2.5 }, '{"liter": 9.463525}'],
    ["get_zipcode_based_on_city", { "city": "Rivermist" }, '{"zipcode": "83214"}'],
    ["get_zipcode_based_on_city", { "city": "Nowhere" }, '{"zipcode": "00000"}'],
    ["estimate_distance", { "cityA": "74532", "cityB": "83214" }, '{"distance": 750.0}'],
    ["estimate_distance", { "cityA": "1", "cityB": "2" }, '{"error": "distance not found in database."}'],
    [
      "set_navigation",
      { "destination": "456 Oakwood Avenue, Rivermist, 83214" },
      '{"status": "Navigating to 456 Oakwood Avenue, Rivermist, 83214"}',
    ],
    [
      "check_tire_pressure",
      {},
      '{"frontLeftTirePressure": 32.0, "frontRightTirePressure": 32.0, "rearLeftTirePressure": 30.0, "rearRightTirePressure": 30.0, "healthy_tire_pressure": true, "car_info": {}}',
    ],
    ["find_nearest_tire_shop", {}, '{"shopLocation": "456 Oakwood Avenue, Rivermist, 83214"}'],
    [
      "startEngine",
      { "ignitionMode": "STOP" },
      '{"error": "All doors must be locked before starting the engine. Here are the unlocked doors: driver"}',
    ],
    [
      "setCruiseControl",
      { "speed": 65, "activate": true, "distanceToNextVehicle": 100 },
      '{"error": "Start the engine before activating the cruise control."}',
    ],
    [
      "lockDoors",
      { "unlock": true },
      "Error during execution: VehicleControlAPI.lockDoors() missing 1 required positional argument: 'door'",
    ],
  ];
  playTranscript(api, steps);
  const state = api.state();
  assert.equal(state.engine_state, "stopped", "STOP stops the engine before the door check fails");
  assert.equal(state.remainingUnlockedDoors, 1);
  assert.equal(state.fuelLevel, 45.5);
  assert.equal(state.acTemperature, (72 - 32) * 5 / 9);
  assert.equal(state.destination, "456 Oakwood Avenue, Rivermist, 83214");
  assert.equal(state.cruiseStatus, "inactive");
  assert.ok(!("_brakePedalForce" in state) && !("brakePedalForce" in state), "private attributes are not state");
});

Deno.test("VehicleControlAPI: long context adds BFCL's metadata and city lists", () => {
  const api = newInstance("VehicleControlAPI");
  api.loadScenario(parsePyJson(SCENARIO_JSON) as Record<string, unknown>, true);
  const d = JSON.parse(runCall(api, "estimate_distance", { cityA: "74532", cityB: "83214" }));
  assert.equal(d.distance, 750);
  assert.equal(d.intermediaryCities.length, 826);
  const status = JSON.parse(runCall(api, "displayCarStatus", { option: "fuel" }));
  assert.deepEqual(Object.keys(status), ["metadata", "fuelLevel"]);
});
