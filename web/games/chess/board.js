// The chess board as people see it: 64 coloured squares with the pieces of a FEN, the last
// move's two squares marked, the king in check marked, files and ranks along the edges.
// Used by the house chess page and the spectator page (/watch/<id>). `squaresOf` is pure
// (tested in node); `drawBoard` builds the DOM with textContent only.

const PIECES = {
  K: "♔", Q: "♕", R: "♖", B: "♗", N: "♘", P: "♙",
  k: "♚", q: "♛", r: "♜", b: "♝", n: "♞", p: "♟",
};
const NAMES = { k: "king", q: "queen", r: "rook", b: "bishop", n: "knight", p: "pawn" };
const FILES = "abcdefgh";

/**
 * @typedef {{ square: string, dark: boolean, piece: string|null, color: "white"|"black"|null,
 *             name: string|null, last: boolean, check: boolean }} Square
 */

/**
 * The 64 squares of `fen`'s position, rank 8 first (white at the bottom), or, with
 * `flipped`, rank 1 first. `lastMove` is a UCI string (`e2e4`) or null; `check` marks the
 * king of the side to move.
 * @param {string} fen
 * @param {{ lastMove?: string|null, check?: boolean, flipped?: boolean }} [opts]
 * @returns {Square[]}
 */
export function squaresOf(fen, { lastMove = null, check = false, flipped = false } = {}) {
  const [placement = "", side = "w"] = String(fen || "").trim().split(/\s+/);
  const rows = placement.split("/");
  const grid = [];
  for (let r = 0; r < 8; r++) {
    const row = [];
    for (const ch of rows[r] || "") {
      if (/[1-8]/.test(ch)) for (let i = 0; i < Number(ch); i++) row.push(null);
      else if (PIECES[ch]) row.push(ch);
    }
    while (row.length < 8) row.push(null);
    grid.push(row.slice(0, 8));
  }
  const marked = typeof lastMove === "string" && /^[a-h][1-8][a-h][1-8]/.test(lastMove)
    ? [lastMove.slice(0, 2), lastMove.slice(2, 4)]
    : [];
  const checkedKing = check ? (side === "b" ? "k" : "K") : null;
  const out = [];
  for (let i = 0; i < 8; i++) {
    const r = flipped ? 7 - i : i;
    for (let j = 0; j < 8; j++) {
      const f = flipped ? 7 - j : j;
      const piece = grid[r][f];
      const square = `${FILES[f]}${8 - r}`;
      out.push({
        square,
        dark: (r + f) % 2 === 1,
        piece: piece ? PIECES[piece] : null,
        color: piece ? (piece === piece.toUpperCase() ? "white" : "black") : null,
        name: piece ? NAMES[piece.toLowerCase()] : null,
        last: marked.includes(square),
        check: piece !== null && piece === checkedKing,
      });
    }
  }
  return out;
}

/**
 * Draws `squares` into `el` (replacing what it held): a grid of rows of cells, each cell
 * labelled for screen readers ("e4, white pawn"), with rank and file coordinates on the
 * edge squares.
 * @param {HTMLElement} el
 * @param {Square[]} squares
 */
export function drawBoard(el, squares) {
  const doc = el.ownerDocument || globalThis.document;
  const cells = squares.map((s, i) => {
    const cell = doc.createElement("div");
    cell.className = `sq ${s.dark ? "dark" : "light"}${s.last ? " last" : ""}${s.check ? " check" : ""}`;
    cell.setAttribute("role", "gridcell");
    cell.setAttribute("aria-label", s.piece ? `${s.square}, ${s.color} ${s.name}` : s.square);
    cell.dataset.square = s.square;
    if (s.piece) {
      const piece = doc.createElement("span");
      piece.className = `piece ${s.color}`;
      // The filled glyph for both sides, coloured by CSS: the outline glyphs are thin.
      piece.textContent = FILLED[s.piece] || s.piece;
      piece.setAttribute("aria-hidden", "true");
      cell.append(piece);
    }
    // Coordinates on the edge squares are drawn by board.css from these attributes: text
    // inside the cell would be visible text its label ("a8, black rook") does not contain.
    if (i % 8 === 0) cell.dataset.rank = s.square[1];
    if (i >= 56) cell.dataset.file = s.square[0];
    return cell;
  });
  // ARIA's grid holds rows, and rows hold the cells; the rows take no box of their own
  // (`display: contents` in board.css), so the cells stay the board's CSS grid.
  const rows = [];
  for (let r = 0; r < cells.length; r += 8) {
    const row = doc.createElement("div");
    row.className = "rank-row";
    row.setAttribute("role", "row");
    row.append(...cells.slice(r, r + 8));
    rows.push(row);
  }
  el.setAttribute("role", "grid");
  el.replaceChildren(...rows);
}

/** SAN moves as numbered pairs: "1. e4 e5  2. Nf3". */
export function numberedMoves(history) {
  const h = Array.isArray(history) ? history : [];
  const out = [];
  for (let i = 0; i < h.length; i += 2) out.push(`${i / 2 + 1}. ${h[i]}${h[i + 1] ? ` ${h[i + 1]}` : ""}`);
  return out.join("  ");
}

const FILLED = { "♔": "♚", "♕": "♛", "♖": "♜", "♗": "♝", "♘": "♞", "♙": "♟" };

