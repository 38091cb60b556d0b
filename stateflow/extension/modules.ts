// State Flow public semantic modules, API v1 (seed 003 "Public entry and
// lifecycle"). Written by `pikit ext install stateflow` beside the State
// Flow bridge; do not edit. Companions import it by the absolute path
// `pikit ext list` prints, or as "../pikit-stateflow/modules.ts" from a
// sibling folder. It has no loader and no publisher and never starts State
// Flow: every copy of this file finds the one host State Flow's factory
// binds on globalThis[Symbol.for("pikit.stateflow.host/1")] at call time.

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** What captureInput receives: the mode and the exact owner scope. */
export interface StateFlowModuleSource {
  readonly mode: "active" | "passive";
  readonly owner: "global" | "cwd" | "session";
}

/** A captured input and its synchronous receipt (throws once obsolete, else returns void). */
export interface StateFlowModuleInput<Input extends JsonValue = JsonValue> {
  value: Input;
  assertCurrent(): void;
}

/** The detached frame given to context and produce. Shared owners carry neither conversation nor prompt. */
export interface StateFlowModuleFrame<Input extends JsonValue = JsonValue> {
  readonly mode: "active" | "passive";
  readonly owner: "global" | "cwd" | "session";
  readonly conversation?: readonly JsonValue[];
  readonly prompt?: string;
  readonly input?: Input;
}

/** User-level data, or exact indices into frame.conversation (Session owners only). */
export type ModuleContextContribution = { kind: "data"; value: JsonValue } | { kind: "conversation"; indices: number[] };

export interface StateFlowModule<Content extends JsonObject = JsonObject, Input extends JsonValue = JsonValue> {
  /** The root this module owns: x_[a-z][a-z0-9_]*. */
  readonly id: string;
  readonly apiVersion: 1;
  /** Positive safe integer naming one exact persisted content/policy contract. */
  readonly schemaVersion: number;
  /** Denies main-agent writes, not producer proposals. */
  readonly immutable: boolean;
  /** Admits a complete resulting value; pure and synchronous. */
  validate(value: JsonValue): value is Content;
  /** Synchronous contributions for one admitted owner (content undefined: absent). */
  context(content: Content | undefined, frame: StateFlowModuleFrame<Input>): ModuleContextContribution[];
  captureInput?(source: StateFlowModuleSource, signal: AbortSignal): StateFlowModuleInput<Input> | Promise<StateFlowModuleInput<Input>>;
  /** A complete replacement, or undefined for no proposal; {} clears the content. */
  produce?(content: Content | undefined, frame: StateFlowModuleFrame<Input>, signal: AbortSignal): Content | undefined | Promise<Content | undefined>;
}

const HOST = Symbol.for("pikit.stateflow.host/1");

/**
 * Registers a module for the session manager (ctx.sessionManager, used only
 * as the native-host identity key) and returns an idempotent disposer for
 * exactly this registration. Throws when State Flow's host is absent, the
 * manager is owned by another host, the id is already registered, the
 * apiVersion is not 1, or the definition is malformed.
 */
export function registerStateFlowModule<Content extends JsonObject, Input extends JsonValue = JsonValue>(
  sessionManager: object,
  module: StateFlowModule<Content, Input>,
): () => void {
  const host: any = (globalThis as any)[HOST];
  if (!host || typeof host.register !== "function") {
    throw new Error("State Flow module host is not loaded: install State Flow (`pikit ext install stateflow`) and register from session_start");
  }
  return host.register(sessionManager, module);
}
