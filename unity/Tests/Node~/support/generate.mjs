// Seeded random step sequences for the conformance test: hosts that misbehave in every way
// the protocol's types allow (missing and wrong-typed fields, repeats, strangers, garbage),
// games that publish arbitrary JSON. Values stay inside what both SDKs define alike; the
// README lists where the typed C# SDK deliberately differs (fractional rounds and strikes,
// non-string ids and player lists with non-strings), and those are not generated.

/** mulberry32: small, fast, the same sequence everywhere. */
export function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const below = (n) => Math.floor(next() * n);
  const pick = (list) => list[below(list.length)];
  const chance = (p) => next() < p;
  return { next, below, pick, chance };
}

const STRINGS = ["", "x", "e2e4", "h\u00e9llo", "\u4e16\u754c", "\ud83d\ude00", "\ud800", "q\"uote", "back\\slash", "line\nbreak", "\u2028", "<b>", "__timeout__", "__game_start__"];
const NUMBERS = [0, 1, -1, 7, 2.5, -0.125, 1e21, 1.5e-7, 123456789.123, 9007199254740993, -0, 1e300, 5e-324];
const REASONS = ["timeout", "left", "host_disconnected", "session_lost", "checkmate", "illegal move", ""];

/** Any JSON value, nested a little. */
export function randomValue(r, depth = 0) {
  switch (r.below(depth > 3 ? 4 : 6)) {
    case 0: return r.pick([null, true, false]);
    case 1: return r.pick(NUMBERS);
    case 2: return r.pick(STRINGS);
    case 3: return r.below(1000);
    case 4: return Array.from({ length: r.below(4) }, () => randomValue(r, depth + 1));
    default: {
      const o = {};
      for (let i = r.below(4); i > 0; i--) o[r.pick(["type", "move", "cell", "players", "a", "b", r.pick(STRINGS)])] = randomValue(r, depth + 1);
      return o;
    }
  }
}

function maybe(r, value, { missing = 0.15, nul = 0.1 } = {}) {
  if (r.chance(missing)) return undefined;
  if (r.chance(nul)) return null;
  return value;
}

/** An object without the undefined members (so "missing" really is missing). */
function obj(fields) {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

function randomConfig(r) {
  const minPlayers = r.chance(0.8) ? 1 + r.below(4) : undefined;
  return obj({
    minPlayers,
    // At least minPlayers: both SDKs throw for a config the server would refuse.
    maxPlayers: r.chance(0.5) ? (minPlayers ?? 2) + r.below(3) : undefined,
    turnBased: r.chance(0.5) ? r.chance(0.5) : undefined,
    simultaneous: r.chance(0.5) ? r.chance(0.5) : undefined,
    gameType: r.chance(0.6) ? r.pick(["chess", "rps", "tictactoe", "\u00e9checs"]) : undefined,
    turnTimeout: r.chance(0.4) ? r.pick([0, 1, 30, 2.5, 0.1, 300]) : undefined,
    maxTurnTimeouts: r.chance(0.3) ? r.below(4) : undefined,
    forfeitOnTimeout: r.chance(0.3) ? r.chance(0.5) : undefined,
    autoRematch: r.chance(0.4) ? r.chance(0.5) : undefined,
  });
}

class Session {
  constructor(r) {
    this.r = r;
    this.players = ["p_1", "p_2"];
    this.ids = [];
    this.next = 0;
  }

  playerId() {
    const r = this.r;
    return maybe(r, r.chance(0.1) ? "__system__" : r.pick([...this.players, "p_9"]), { missing: 0.05, nul: 0.03 });
  }

  actionId() {
    const r = this.r;
    if (this.ids.length && r.chance(0.25)) return r.pick(this.ids); // a re-delivery
    const id = `a_${this.next++}`;
    this.ids.push(id);
    return maybe(r, id, { missing: 0.1, nul: 0.05 });
  }

  playerList() {
    const r = this.r;
    if (r.chance(0.1)) return r.pick(["p_1", 3, {}, null, true]); // not an array: ignored by both
    const list = Array.from({ length: r.below(4) }, (_, i) => `p_${i + 1 + r.below(2)}`);
    if (list.length) this.players = list;
    return list;
  }

  hostMessage() {
    const r = this.r;
    const sid = () => maybe(r, `ses_${r.below(5)}`, { missing: 0.1, nul: 0.05 });
    const round = () => (r.chance(0.85) ? r.below(6) : r.pick(["2", null, true, undefined]));
    switch (r.below(14)) {
      case 0: return { type: "AGENT_SESSION_START", data: obj({ sessionId: r.chance(0.9) ? sid() : 7, round: round(), players: maybe(r, this.playerList()) }) };
      case 1:
      case 2: return { type: "AGENT_GAME_START", data: obj({ sessionId: sid(), players: maybe(r, this.playerList()), round: round() }) };
      case 3:
      case 4:
      case 5: return { type: "AGENT_ACTION", data: obj({ playerId: this.playerId(), action: maybe(r, randomValue(r)), actionId: this.actionId() }) };
      case 6: {
        const action = r.chance(0.5)
          ? obj({ type: "__game_start__", players: maybe(r, this.playerList()) })
          : { type: "__timeout__" };
        return { type: "AGENT_ACTION", data: obj({ playerId: r.chance(0.6) ? "__system__" : this.playerId(), action, actionId: this.actionId() }) };
      }
      case 7: return {
        type: "AGENT_TIMEOUT",
        data: obj({ playerId: this.playerId(), strike: maybe(r, r.below(4)), maxStrikes: maybe(r, r.below(4)), final: maybe(r, r.pick([true, false, "true", 1])) }),
      };
      case 8: return { type: "AGENT_SESSION_END", data: obj({ sessionId: sid(), result: maybe(r, randomValue(r)), reason: maybe(r, r.pick(REASONS)) }) };
      case 9: return { type: "AGENT_ACTION_REJECTED", data: obj({ playerId: this.playerId(), reason: maybe(r, r.pick(REASONS)) }) };
      case 10: return { type: "AGENT_REQUEST_CONFIGURE", data: {} };
      case 11: return { type: r.pick(["AGENT_CONFIGURE", "AGENT_STATE", "SOMETHING_ELSE", "agent_action", ""]), data: { playerId: "p_1" } };
      case 12: return r.pick([null, "AGENT_ACTION", 42, [], ["AGENT_ACTION"], { type: 42 }, { data: {} }, true]);
      default: return { type: r.pick(["AGENT_ACTION", "AGENT_GAME_START", "AGENT_TIMEOUT", "AGENT_SESSION_END"]), data: r.pick([null, "x", 5, [1, 2], true, undefined]) };
    }
  }

  call() {
    const r = this.r;
    const pid = r.pick([...this.players, "p_9", "__system__", ""]);
    switch (r.below(6)) {
      case 0: return { call: "setState", args: [randomValue(r)] };
      case 1: return { call: "setObservation", args: [pid, randomValue(r)] };
      case 2: return { call: "setLegalActions", args: [pid, Array.from({ length: r.below(4) }, () => randomValue(r))] };
      case 3: return { call: "rejectAction", args: [pid, r.pick(REASONS)] };
      case 4: return { call: "endGame", args: [obj({ winner: maybe(r, pid, { missing: 0.1, nul: 0.3 }), reason: maybe(r, r.pick(REASONS)) })] };
      default: return { call: "rematch", args: [] };
    }
  }

  step() {
    const r = this.r;
    const roll = r.below(20);
    if (roll < 12) return { host: this.hostMessage() };
    if (roll < 13) return { stranger: this.hostMessage() };
    if (roll < 17) return this.call();
    if (roll < 19) return { props: true };
    return { handlers: [r.pick(["gameStart", "action", "timeout", "sessionEnd", "actionRejected"])] };
  }
}

/** `sessions` random sessions from `seed`, one step list. */
export function generateSequence(seed, sessions) {
  const r = prng(seed);
  const steps = [];
  for (let s = 0; s < sessions; s++) {
    const session = new Session(r);
    steps.push({ new: randomConfig(r) });
    const all = ["gameStart", "action", "timeout", "sessionEnd", "actionRejected"];
    if (r.chance(0.7)) steps.push({ handlers: all });
    else if (r.chance(0.5)) steps.push({ handlers: all.filter((k) => k !== "gameStart") }); // v1 game start goes to onAction
    else steps.push({ handlers: all.filter(() => r.chance(0.5)) });
    for (let n = 10 + r.below(50); n > 0; n--) steps.push(session.step());
    if (r.chance(0.15)) {
      steps.push({ destroy: true });
      for (let n = r.below(5); n > 0; n--) steps.push(session.step());
    }
    steps.push({ props: true });
  }
  return steps;
}

/** One session that overflows the remembered-actionId window, then re-delivers around its edge. */
export function windowSequence() {
  const steps = [{ new: {} }, { handlers: ["action"] }];
  for (let i = 0; i < 2100; i++) steps.push({ host: { type: "AGENT_ACTION", data: { playerId: "p_1", action: i, actionId: `a_${i}` } } });
  // a_52 first: the oldest id still remembered (a one-off window would have dropped it).
  for (const i of [52, 2099, 1000, 51, 0, 53, 54, 51]) steps.push({ host: { type: "AGENT_ACTION", data: { playerId: "p_1", action: { again: i }, actionId: `a_${i}` } } });
  steps.push({ call: "rejectAction", args: ["p_1", "last"] });
  return steps;
}
