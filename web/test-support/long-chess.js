// A long game of chess for the replay tests (tests/it/arena_replay.rs), with the house's
// rules (games/chess/rules.js, chess.js underneath).
//
//   node test-support/long-chess.js play <white> <black> <plies> [seed]
//     plays <plies> plies of seeded random legal moves (the draw rules and the move limit
//     off, and never a move that leaves the other side without one, so the game goes on as
//     long as asked) and prints JSON {initial, plies: [{uci, state}], fen}: the states the
//     house game publishes (rules.state()), before the first move and after each.
//   node test-support/long-chess.js verify < replay.jsonl
//     replays a downloaded replay (GET /replay, JSON Lines) ply by ply from the start
//     position: each applied action line is played with chess.js, and each state line must
//     be the position reached (fen, and the moves so far in UCI and SAN); prints JSON
//     {plies, states, fen, errors}.

import { Chess } from "chess.js";
import { ChessRules } from "../games/chess/rules.js";

/** mulberry32: a small seeded generator, so a test's game is the same every run. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class EndlessRules extends ChessRules {
  // No result but the one asked for: the test decides how long the game is.
  _outcome() { return null; }
}

function play(white, black, plies, seed) {
  const rules = new EndlessRules(Chess);
  rules.start([white, black], 1);
  // rules.state() lists the moves in SAN with chess.js's history(), which replays the whole
  // game at each call; the same list kept as the moves are made.
  const sans = [];
  rules.board.history = () => sans.slice();
  const random = rng(seed);
  const initial = rules.state();
  const out = [];
  for (let i = 0; i < plies; i++) {
    const legal = rules.legalActions();
    let uci = null;
    for (let tries = 0; tries < 8 * legal.length && uci === null; tries++) {
      const candidate = legal[Math.floor(random() * legal.length)];
      const probe = new Chess(rules.board.fen());
      probe.move({ from: candidate.slice(0, 2), to: candidate.slice(2, 4), promotion: candidate[4] });
      if (probe.moves().length > 0) uci = candidate;
    }
    if (uci === null) throw new Error(`no move at ply ${i} keeps the game going`);
    const res = rules.play(rules.toMove, uci);
    if (!res.ok) throw new Error(`${uci}: ${res.reason}`);
    sans.push(res.san);
    out.push({ uci, state: rules.state() });
  }
  return { initial, plies: out, fen: rules.board.fen() };
}

async function verify() {
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  const lines = text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
  const board = new Chess();
  const ucis = [];
  const errors = [];
  let states = 0;
  for (const l of lines) {
    if (l.kind === "action" && (l.status || "applied") === "applied") {
      const a = typeof l.action === "string" ? l.action : null;
      try {
        board.move({ from: a.slice(0, 2), to: a.slice(2, 4), promotion: a[4] });
        ucis.push(a);
      } catch (e) {
        errors.push(`ply ${ucis.length + 1}: ${JSON.stringify(l.action)} does not play: ${e.message}`);
      }
    } else if (l.kind === "state") {
      states++;
      const s = l.state;
      if (!s || typeof s !== "object") {
        errors.push(`state ${states}: not kept (${JSON.stringify(l)})`);
        continue;
      }
      if (s.fen !== board.fen()) errors.push(`state ${states} after ply ${ucis.length}: fen ${s.fen}, the moves give ${board.fen()}`);
      if (JSON.stringify(s.moves) !== JSON.stringify(ucis)) errors.push(`state ${states}: its moves are not the ${ucis.length} played`);
      if (!Array.isArray(s.history) || s.history.length !== ucis.length) errors.push(`state ${states}: its SAN list is not ${ucis.length} long`);
    } else if (l.kind === "truncated") {
      errors.push("the replay was truncated");
    }
  }
  return { plies: ucis.length, states, fen: board.fen(), errors: errors.slice(0, 20) };
}

const [mode, ...args] = process.argv.slice(2);
if (mode === "play") {
  const [white, black, plies, seed] = args;
  process.stdout.write(JSON.stringify(play(white, black, Number(plies), Number(seed || 1))));
} else if (mode === "verify") {
  process.stdout.write(JSON.stringify(await verify()));
} else {
  process.stderr.write("usage: long-chess.js play <white> <black> <plies> [seed] | verify < replay.jsonl\n");
  process.exit(2);
}
