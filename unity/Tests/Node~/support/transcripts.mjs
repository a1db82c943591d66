// Two ways to play one sequence of steps, each giving a transcript (what the game's agent
// posted to its parent, what its handlers were called with, its properties):
//
//   jsTranscript     the JS SDK (web/sdk/rcadia-agent.js) in a fake window;
//   unityTranscript  what a Unity WebGL game has: the real RcadiaBridge.jslib in a fake
//                    window, and the C# core behind it (ConformanceDriver.exe under Mono),
//                    with this process standing in for the WebGL runtime between them.
//
// A step is one of:
//   { new: config }            construct the agent (after destroying the previous one)
//   { handlers: [kind, ...] }  register recording handlers (gameStart, action, timeout, sessionEnd, actionRejected)
//   { host: message }          the host (window.parent) posts message to the game
//   { stranger: message }      some other window posts message to the game
//   { call: method, args }     the game calls setState, setObservation, setLegalActions, rejectAction, endGame or rematch
//   { props: true }            read sessionId, players, round, isConfigured
//   { destroy: true }          destroy (JS) / Dispose (C#)

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { RcadiaAgent } from "../../../../web/sdk/rcadia-agent.js";
import { makeFakeWindow } from "../../../../web/test-support/fake-window.js";
import { loadBridge } from "./emscripten.mjs";

const STRANGER = { postMessage() {} };
const KINDS = ["gameStart", "action", "timeout", "sessionEnd", "actionRejected"];

// The C# method names of the calls, and how their JS arguments reach C#.
const CALLS = new Set(["setState", "setObservation", "setLegalActions", "rejectAction", "endGame", "rematch"]);

/** Events in one shape for both SDKs: absent and undefined become null, except a missing action. */
const record = {
  gameStart: (i) => ({ kind: "gameStart", sessionId: i.sessionId ?? null, players: i.players, round: i.round }),
  action: (playerId, action, actionId) => ({
    kind: "action", playerId: playerId ?? null, ...(action === undefined ? {} : { action }), actionId: actionId ?? null,
  }),
  timeout: (playerId, i) => ({ kind: "timeout", playerId: playerId ?? null, strike: i.strike, maxStrikes: i.maxStrikes, final: i.final }),
  sessionEnd: (i) => ({ kind: "sessionEnd", sessionId: i.sessionId ?? null, result: i.result ?? null, reason: i.reason ?? null }),
  actionRejected: (playerId, reason) => ({ kind: "actionRejected", playerId: playerId ?? null, reason: reason ?? null }),
};

const HANDLER_METHOD = {
  gameStart: "onGameStart", action: "onAction", timeout: "onTimeout", sessionEnd: "onSessionEnd", actionRejected: "onActionRejected",
};

function checkStep(step, i) {
  const keys = Object.keys(step);
  if (keys.length === 0) throw new Error(`step ${i} is empty`);
  if (step.handlers && !step.handlers.every((k) => KINDS.includes(k))) throw new Error(`step ${i}: unknown handler kind in ${JSON.stringify(step)}`);
  if (step.call !== undefined && !CALLS.has(step.call)) throw new Error(`step ${i}: unknown call ${step.call}`);
}

/** @param {object[]} steps */
export function jsTranscript(steps) {
  const out = [];
  let win = null;
  let agent = null;
  steps.forEach((step, i) => {
    checkStep(step, i);
    out.push({ step: i });
    if (step.new !== undefined) {
      if (agent) agent.destroy();
      const w = makeFakeWindow({ onPost: (message) => out.push({ out: message, origin: w.sent.at(-1).targetOrigin }) });
      win = w;
      agent = new RcadiaAgent(step.new, { window: win });
    } else if (step.handlers) {
      for (const kind of step.handlers) agent[HANDLER_METHOD[kind]]((...a) => out.push({ event: record[kind](...a) }));
    } else if ("host" in step) {
      win.dispatch(structuredClone(step.host));
    } else if ("stranger" in step) {
      win.dispatch(structuredClone(step.stranger), STRANGER);
    } else if (step.call !== undefined) {
      agent[step.call](...structuredClone(step.args ?? []));
    } else if (step.props) {
      out.push({ props: { sessionId: agent.sessionId, players: agent.players, round: agent.round, isConfigured: agent.isConfigured } });
    } else if (step.destroy) {
      agent.destroy();
    }
  });
  // A JSON round trip: both transcripts are then plain JSON values (no undefined, no -0).
  return JSON.parse(JSON.stringify(out));
}

/**
 * @param {object[]} steps
 * @param {string} driverExe path of ConformanceDriver.exe
 */
export async function unityTranscript(steps, driverExe) {
  const child = spawn("mono", [driverExe], { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => { stderr += d; });
  const spawned = new Promise((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", (e) => reject(new Error(`cannot run mono (${e.message}): install Debian's mono-devel (ops/test does)`)));
  });
  await spawned;
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();

  const out = [];
  let win = null;
  let bridge = null;
  let target = null; // what C# opened: { object, method, handle }
  let inbox = []; // what SendMessage handed to C#, not yet passed over

  const sendMessage = (objectName, methodName, value) => {
    if (!target || objectName !== target.object || methodName !== target.method) {
      out.push({ error: `SendMessage(${objectName}, ${methodName}) does not match the link C# opened (${JSON.stringify(target)})` });
      return;
    }
    inbox.push({ recv: value });
  };

  async function exchange(line) {
    child.stdin.write(`${JSON.stringify(line)}\n`);
    for (;;) {
      const { value, done } = await lines.next();
      if (done) throw new Error(`ConformanceDriver.exe stopped: ${stderr}`);
      const msg = JSON.parse(value);
      if (msg.done) return;
      if (msg.open) {
        target = { ...msg.open, handle: bridge.open(msg.open.object, msg.open.method) };
      } else if (msg.post !== undefined) {
        bridge.post(msg.post);
      } else if (msg.close) {
        bridge.close(target.handle);
        target = null;
      } else if (msg.event || msg.props || msg.error) {
        out.push(msg);
      } else {
        throw new Error(`unexpected line from ConformanceDriver.exe: ${value}`);
      }
    }
  }

  async function deliverInbox() {
    while (inbox.length) await exchange(inbox.shift());
  }

  try {
    for (const [i, step] of steps.entries()) {
      checkStep(step, i);
      out.push({ step: i });
      if (step.new !== undefined) {
        if (target) await exchange({ destroy: true }); // the old page's listener goes with its agent
        const w = makeFakeWindow({ onPost: (message) => out.push({ out: message, origin: w.sent.at(-1).targetOrigin }) });
        win = w;
        bridge = loadBridge({ window: win, SendMessage: sendMessage });
        inbox = [];
        await exchange({ new: step.new });
      } else if ("host" in step) {
        win.dispatch(structuredClone(step.host));
        await deliverInbox();
      } else if ("stranger" in step) {
        win.dispatch(structuredClone(step.stranger), STRANGER);
        await deliverInbox();
      } else {
        await exchange(step);
      }
    }
  } finally {
    child.stdin.end();
  }
  await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", resolve)));
  if (child.exitCode !== 0) throw new Error(`ConformanceDriver.exe exited with ${child.exitCode}: ${stderr}`);
  return JSON.parse(JSON.stringify(out));
}

/** Read a .jsonl sequence: one step a line; blank lines and lines starting with // are comments. */
export function parseSequence(text) {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("//"))
    .map((l) => JSON.parse(l));
}
