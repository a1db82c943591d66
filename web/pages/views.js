// What the table list and the spectator page show, as plain data: DOM-free, so every
// wording is tested in node (web/test/pages-views.test.js). The pages draw these with
// textContent only; names come from agents and are never markup.

import { numberedMoves } from "../games/chess/board.js";

export { numberedMoves };

/**
 * How a table's state reads for people, and its badge class.
 * @param {{ status: string, joinable?: boolean, reserved?: boolean }} s an /available entry or a public view
 * @returns {{ label: string, badge: string }}
 */
export function tableStatus(s) {
  if (s.status === "active") return { label: "playing", badge: "active" };
  if (s.status === "finished") return { label: "finished", badge: "finished" };
  if (s.reserved) return { label: "next round, seats reserved", badge: "reserved" };
  if (s.joinable) return { label: "open: join now", badge: "open" };
  return { label: "starting", badge: "waiting" };
}

/** Who hosts a table, for people. */
export function hostLabel(host) {
  switch (host) {
    case "house": return "RCADIA house";
    case "player": return "a person's browser tab";
    case "agent": return "an agent's server";
    default: return "unknown";
  }
}

/** "just now", "5 s ago", "3 min ago", "2 h ago". */
export function ago(iso, nowMs) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return "";
  const s = Math.max(0, Math.round((nowMs - t) / 1000));
  if (s < 5) return "just now";
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  return `${Math.floor(s / 3600)} h ago`;
}

/** "in 42 s", "in 4 min 12 s", "now". */
export function countdown(iso, nowMs) {
  const t = Date.parse(iso);
  if (!iso || Number.isNaN(t)) return "no clock running";
  const s = Math.round((t - nowMs) / 1000);
  if (s <= 0) return "time is up";
  return s >= 60 ? `in ${Math.floor(s / 60)} min ${s % 60} s` : `in ${s} s`;
}

/**
 * Rows of the table list from `GET /available?all=1` entries, open tables first, then
 * running ones, newest first within each; `host` keeps only that kind of host.
 * @param {Array<any>} sessions
 * @param {{ host?: string, nowMs: number }} opts
 */
export function tableRows(sessions, { host = "", nowMs }) {
  const order = { open: 0, reserved: 1, waiting: 2, active: 3, finished: 4 };
  return (Array.isArray(sessions) ? sessions : [])
    .filter((s) => s && typeof s.sessionId === "string" && (!host || s.host === host))
    .map((s) => {
      const st = tableStatus(s);
      return {
        sessionId: s.sessionId,
        game: s.gameTitle || s.gameSlug || s.gameId || "a game",
        status: st.label,
        badge: st.badge,
        players: `${s.currentPlayers ?? 0} of ${s.maxPlayers ?? "?"}`,
        round: `round ${s.round ?? 1}`,
        host: hostLabel(s.host),
        opened: ago(s.createdAt, nowMs),
        createdAt: s.createdAt || "",
        watch: `/watch/${encodeURIComponent(s.sessionId)}`,
        skillUrl: typeof s.skillUrl === "string" ? s.skillUrl : null,
      };
    })
    .sort((a, b) => (order[a.badge] - order[b.badge]) || (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
}

/** The summary line above the list. */
export function tablesSummary(rows) {
  if (rows.length === 0) return "No tables right now.";
  const open = rows.filter((r) => r.badge === "open").length;
  const playing = rows.filter((r) => r.badge === "active").length;
  const parts = [`${open} open`, `${playing} playing`];
  const other = rows.length - open - playing;
  if (other) parts.push(`${other} between rounds`);
  return `${rows.length} ${rows.length === 1 ? "table" : "tables"}: ${parts.join(", ")}.`;
}

/**
 * Text from others for a plain string such as `document.title`, where no <bdi> can go: set
 * apart by FSI … PDI (U+2068, U+2069), so a right-to-left name cannot reorder the words around
 * it. Direction controls inside it are dropped (the server drops them from names; a game id
 * typed in the address is not cleaned), so it cannot end the isolation early.
 * @param {unknown} text
 */
export function isolate(text) {
  return `\u2068${String(text ?? "").replace(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, "")}\u2069`;
}

/** The time of a live event in the spectator's list, as the other pages give times:
 *  24-hour, UTC, said so ("19:00:05 UTC"; the viewer's own locale gave "07:00:05 PM"). */
export function eventTime(date) {
  return `${date.toISOString().slice(11, 19)} UTC`;
}

/** A player's name: `asName`, else "seat N" (the protocol's 0-based seat). */
export function playerName(p) {
  return (p && p.asName) || `seat ${p && p.seat !== undefined ? p.seat : "?"}`;
}

/**
 * The spectator page's facts from a public view (`GET /public`).
 * @param {any} v a public view; its `maxPlayers` (horst's addition to the contract's shape)
 *   lists a waiting table's open seats too (without it, only the taken ones)
 * @param {number} nowMs
 */
export function watchModel(v, nowMs) {
  const players = Array.isArray(v.players) ? v.players : [];
  const byId = Object.fromEntries(players.map((p) => [p.playerId, p]));
  const onTurn = new Set(Array.isArray(v.onTurnSeats) ? v.onTurnSeats : []);
  const st = tableStatus({ status: v.status, joinable: v.status === "waiting", reserved: false });
  // The result as parts (the winner's name marked, for a <bdi>) and as text.
  let resultParts = [];
  if (v.result && typeof v.result === "object") {
    const w = v.result.winner;
    const reason = v.result.reason ? ` (${String(v.result.reason).replace(/_/g, " ")})` : "";
    if (!w) resultParts = [`No winner${reason}`];
    else if (byId[w]) resultParts = [{ name: playerName(byId[w]) }, ` won${reason}`];
    else resultParts = [`the other player won${reason}`];
  }
  const result = partsText(resultParts);
  return {
    title: v.gameTitle || v.gameId || "Game",
    status: v.status === "waiting" ? (players.length ? "waiting for players" : "waiting for players to join") : st.label,
    badge: st.badge,
    round: `round ${v.round ?? 1}`,
    turn: v.status === "active" ? `turn ${v.turn ?? 0}` : "-",
    clock: v.status === "active" ? countdown(v.deadline, nowMs) : "-",
    result,
    resultParts,
    players: players.map((p) => ({ name: playerName(p), seat: `seat ${p.seat ?? 0}`, onTurn: v.status === "active" && onTurn.has(p.seat) })),
    ...seatsOf(v, players, onTurn, v.maxPlayers),
    nameOf: (id) => (byId[id] ? playerName(byId[id]) : "?"),
  };
}

/**
 * Every seat of a table in seat order: a taken one with its player's name, and while the
 * table waits for players each open one (`name: null, open: true`) up to `maxPlayers`; a
 * spectator saw only the taken seats and could not tell how many players the game waits for.
 * @returns {{ seats: Array<{ seat: string, name: string|null, open: boolean, onTurn: boolean }>, openSeats: number }}
 */
function seatsOf(v, players, onTurn, maxPlayers) {
  const taken = new Map(players.map((p) => [Number(p.seat ?? 0), p]));
  const numbers = new Set(taken.keys());
  const waiting = v.status === "waiting" && Number.isInteger(maxPlayers) && maxPlayers > 0;
  // A table never has more seats than a few dozen; a wrong count must not make a long list.
  if (waiting) for (let n = 0; n < Math.min(maxPlayers, 64); n++) numbers.add(n);
  const seats = [...numbers].sort((a, b) => a - b).map((n) => {
    const p = taken.get(n);
    return p
      ? { seat: `seat ${n}`, name: playerName(p), open: false, onTurn: v.status === "active" && onTurn.has(n) }
      : { seat: `seat ${n}`, name: null, open: true, onTurn: false };
  });
  return { seats, openSeats: seats.filter((s) => s.open).length };
}

/**
 * Text with names in it, as parts: a string is text, `{ name }` a name an agent chose (the
 * page puts it in a <bdi>, so a right-to-left name cannot reorder the words around it).
 * @typedef {Array<string | { name: string }>} Parts
 */

/** The parts as one plain string (for aria-labels and the events list). */
export function partsText(parts) {
  return parts.map((p) => (typeof p === "string" ? p : p.name)).join("");
}

/**
 * A chess state (house chess's public state) for people. Each line is text, and as `parts`
 * (`whiteParts`, ...) with the names marked.
 * @param {any} s the state
 * @param {(id: string) => string} nameOf
 */
export function chessModel(s, nameOf) {
  const last = s.lastMove && typeof s.lastMove === "object" ? s.lastMove : null;
  const who = (id) => ({ name: id ? nameOf(id) : "?" });
  const whiteParts = ["White: ", who(s.white)];
  const blackParts = ["Black: ", who(s.black)];
  const lastMoveParts = last ? ["Last move: ", who(last.by), ` played ${last.san || last.uci}`] : ["No move yet"];
  return {
    white: partsText(whiteParts),
    black: partsText(blackParts),
    whiteParts,
    blackParts,
    toMove: s.over ? "" : `${s.turn === "black" ? "Black" : "White"} to move${s.check ? ", in check" : ""}`,
    lastMove: partsText(lastMoveParts),
    lastMoveParts,
    moves: numberedMoves(s.history),
  };
}

/**
 * A rock-paper-scissors state for people: the score and every throw so far, as text and as
 * parts with the names marked (`scoreParts`, `throwParts`).
 * @param {any} s
 * @param {(id: string) => string} nameOf
 */
export function rpsModel(s, nameOf) {
  const [a, b] = Array.isArray(s.players) ? s.players : [];
  const score = s.score || {};
  const who = (id) => ({ name: nameOf(id) });
  const throwParts = (Array.isArray(s.throws) ? s.throws : []).map((t) => {
    const ta = t.throws ? t.throws[a] : "?";
    const tb = t.throws ? t.throws[b] : "?";
    return [who(a), ` ${ta} vs ${tb} `, who(b), ": ", ...(t.winner ? [who(t.winner), " wins"] : ["tie"])];
  });
  const throws = throwParts.map((p, i) => `${i + 1}. ${partsText(p)}`);
  const thrown = Array.isArray(s.thrown) ? s.thrown : [];
  const waitingParts = s.over ? [] : (thrown.length
    ? [...thrown.flatMap((id, i) => (i ? [" and ", who(id)] : [who(id)])), ` ${thrown.length > 1 ? "have" : "has"} thrown, waiting for the other`]
    : ["Both are choosing"]);
  const scoreParts = a && b ? [who(a), ` ${score[a] ?? 0} – ${score[b] ?? 0} `, who(b)] : [];
  return { score: partsText(scoreParts), scoreParts, throws, throwParts, waiting: partsText(waitingParts), waitingParts };
}

/** An action as short text: a string as it is, anything else as compact JSON (cut short). */
export function actionText(a) {
  const t = typeof a === "string" ? a : JSON.stringify(a);
  return t.length > 60 ? `${t.slice(0, 57)}…` : t;
}

/**
 * The frames of a replay (`GET /replay`, parsed JSON lines) for the scrubber: one per
 * published state, each labelled with what led to it (the actions applied since the previous
 * state), and the game's end as the last frame's result.
 * @param {Array<any>} lines
 * @returns {{ frames: Array<{ state: any, turn: number, version: number, at: number, label: string }>, players: Array<any>, result: any, reason: string|null, next: string|null }}
 */
/**
 * A finished game's public view from its replay lines (`GET /replay`), for a game whose
 * record has expired: what the watch page shows, with the last state; null without a
 * `start` line.
 * @param {any[]} lines @param {string} sessionId
 */
export function viewFromReplay(lines, sessionId) {
  const list = Array.isArray(lines) ? lines.filter((l) => l && typeof l === "object") : [];
  const start = list.find((l) => l.kind === "start");
  if (!start) return null;
  const end = [...list].reverse().find((l) => l.kind === "end");
  const seated = [...list].reverse().find((l) => (l.kind === "end" || l.kind === "players") && Array.isArray(l.players));
  const state = [...list].reverse().find((l) => l.kind === "state" && !l.omittedBytes);
  const next = [...list].reverse().find((l) => l.kind === "next");
  return {
    sessionId,
    seriesId: start.seriesId ?? sessionId,
    round: start.round ?? 1,
    gameId: start.gameId ?? null,
    gameTitle: start.gameTitle ?? null,
    status: "finished",
    players: (seated ? seated.players : []).map((p) => ({ playerId: p.playerId, seat: p.seat, asName: p.name ?? null })),
    onTurnSeats: [],
    result: end ? end.result ?? null : null,
    state: state ? state.state : null,
    turn: state ? state.turn ?? 0 : 0,
    version: 0,
    deadline: null,
    nextSessionId: next ? next.nextSessionId : null,
    previousSessionId: start.previousSessionId ?? null,
  };
}

export function replayFrames(lines) {
  const list = Array.isArray(lines) ? lines : [];
  let players = [];
  let result = null;
  let reason = null;
  let next = null;
  for (const l of list) {
    if (l && (l.kind === "players" || l.kind === "end") && Array.isArray(l.players)) players = l.players;
    if (l && l.kind === "end") { result = l.result ?? null; reason = l.reason ?? null; }
    if (l && l.kind === "next") next = l.nextSessionId;
  }
  const nameOf = (pid) => {
    const p = players.find((q) => q.playerId === pid);
    return p ? (p.name || `seat ${p.seat}`) : "?";
  };
  const frames = [];
  let pending = [];
  // An action too large to keep is recorded by its size only.
  const moveText = (l) => (l.omittedBytes ? `an action of ${l.omittedBytes} bytes (too large to keep)` : actionText(l.action));
  // The last applied action, for a state that names it in the game's own notation
  // (`lastMove: { uci, san }`, chess): the frame then reads "Ada played Rf4#" as the page's
  // "Last move" line does, not the agent's "f3f4".
  let applied = null;
  for (const l of list) {
    if (!l) continue;
    if (l.kind === "action" && (l.status || "applied") === "applied") {
      applied = { at: pending.length, action: l.action, playerId: l.playerId };
      pending.push(`${nameOf(l.playerId)} played ${moveText(l)}`);
    }
    else if (l.kind === "action") pending.push(`${nameOf(l.playerId)}'s ${moveText(l)} went unanswered`);
    else if (l.kind === "strike") pending.push(`${nameOf(l.playerId)} ran out of time`);
    else if (l.kind === "truncated") pending.push("the replay reached its size limit here: later moves were not kept, only the end");
    else if (l.kind === "state") {
      const named = l.state && typeof l.state === "object" ? l.state.lastMove : null;
      if (applied && applied.at < pending.length && named && typeof named === "object"
        && typeof named.san === "string" && named.san && named.uci === applied.action) {
        pending[applied.at] = `${nameOf(applied.playerId)} played ${actionText(named.san)}`;
      }
      applied = null;
      const label = frames.length === 0 && pending.length === 0 ? "start" : (pending.join("; ") || "the game moved on");
      frames.push({ state: l.omittedBytes ? { omitted: `${l.omittedBytes} bytes, too large to keep` } : l.state, turn: l.turn, version: l.version, at: l.at, label });
      pending = [];
    }
  }
  if (pending.length && frames.length) frames[frames.length - 1].label += `; ${pending.join("; ")}`;
  const truncated = list.some((l) => l && l.kind === "truncated");
  return { frames, players, result, reason, next, truncated };
}

/**
 * Who sits at a table and how the game stands, for the table list: names in seat order and
 * the rock-paper-scissors score or the chess move count.
 * @param {any} v a public view
 * @returns {{ names: string[], detail: string }}
 */
export function seatedLine(v) {
  const players = Array.isArray(v && v.players) ? v.players : [];
  const names = players.map(playerName);
  const s = v && v.state && typeof v.state === "object" ? v.state : null;
  let detail = "";
  if (s && s.game === "rps" && Array.isArray(s.players) && s.score) {
    detail = `${s.score[s.players[0]] ?? 0}–${s.score[s.players[1]] ?? 0}`;
  } else if (s && s.game === "chess" && Array.isArray(s.history)) {
    detail = s.history.length ? `move ${Math.ceil(s.history.length / 2)}` : "";
  }
  // A table waiting for players says how many of its seats are taken (the names alone did
  // not say that it waits for more, and the count the list had shown was replaced by them).
  if (v && v.status === "waiting" && Number.isInteger(v.maxPlayers) && v.maxPlayers > players.length) {
    detail = `${players.length} of ${v.maxPlayers} seats taken`;
  }
  return { names, detail };
}
