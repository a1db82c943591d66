using System.Collections.Generic;

namespace Rcadia.Samples.TicTacToe
{
    /// <summary>
    /// The rules of tic-tac-toe, without Unity or the SDK: the game is authoritative for
    /// rules, so this is what decides every move. Seat 0 plays X and moves first.
    /// </summary>
    public sealed class TicTacToeRules
    {
        static readonly int[][] Lines =
        {
            new[] { 0, 1, 2 }, new[] { 3, 4, 5 }, new[] { 6, 7, 8 },
            new[] { 0, 3, 6 }, new[] { 1, 4, 7 }, new[] { 2, 5, 8 },
            new[] { 0, 4, 8 }, new[] { 2, 4, 6 },
        };

        readonly char[] cells = new char[9];
        string[] seats = new string[0];
        int toMove;

        public TicTacToeRules()
        {
            for (int i = 0; i < cells.Length; i++) cells[i] = '.';
        }

        /// <summary>A new game between two playerIds, in seat order.</summary>
        public void Reset(string[] players)
        {
            seats = players;
            Started = true;
            for (int i = 0; i < cells.Length; i++) cells[i] = '.';
            toMove = 0;
            Over = players.Length != 2; // anything but two players cannot be played
            Winner = null;
        }

        /// <summary>Nine characters, row by row: 'X', 'O' or '.'.</summary>
        public string Board { get { return new string(cells); } }

        /// <summary>The playerId whose move it is, or null before the first game and when the game is over.</summary>
        public string ToMove { get { return Over || !Started ? null : seats[toMove]; } }

        /// <summary>
        /// False until the first Reset: a host that reloads the game re-sends only
        /// AGENT_SESSION_START and may deliver actions before AGENT_GAME_START arrives.
        /// </summary>
        public bool Started { get; private set; }

        /// <summary>True after a win or a full board.</summary>
        public bool Over { get; private set; }

        /// <summary>The winner's playerId, or null (no winner yet, or a draw).</summary>
        public string Winner { get; private set; }

        /// <summary>The empty cells, 0-8.</summary>
        public IEnumerable<int> LegalCells()
        {
            if (Over || !Started) yield break;
            for (int i = 0; i < cells.Length; i++)
            {
                if (cells[i] == '.') yield return i;
            }
        }

        /// <summary>Plays a move; returns null when it was legal, else why not (for the agent).</summary>
        public string Play(string playerId, int cell)
        {
            if (!Started) return "the game has not started yet: wait for your turn";
            if (Over) return "the game is over";
            if (playerId != seats[toMove]) return "it is not your turn";
            if (cell < 0 || cell > 8) return "cell must be 0-8, row by row from the top left";
            if (cells[cell] != '.') return "cell " + cell + " is taken";
            cells[cell] = toMove == 0 ? 'X' : 'O';
            foreach (var line in Lines)
            {
                if (cells[line[0]] == cells[cell] && cells[line[1]] == cells[cell] && cells[line[2]] == cells[cell])
                {
                    Over = true;
                    Winner = playerId;
                    return null;
                }
            }
            if (Board.IndexOf('.') < 0) Over = true; // a draw
            toMove = 1 - toMove;
            return null;
        }
    }
}
