using Rcadia.Agent;

namespace Rcadia.Samples.TicTacToe
{
    /// <summary>
    /// Connects the rules to RCADIA: the agent's events drive the rules, and after every
    /// change the table publishes the state, whose turn it is, and the end of the game. No
    /// Unity here either, so the whole game is tested outside Unity.
    /// </summary>
    public sealed class TicTacToeTable
    {
        readonly RcadiaAgent agent;
        readonly TicTacToeRules rules = new TicTacToeRules();

        /// <summary>What AGENT_CONFIGURE says: two players, one at a time, 30 s a move, rounds follow.</summary>
        public static AgentConfig Config()
        {
            return new AgentConfig
            {
                MinPlayers = 2,
                MaxPlayers = 2,
                TurnBased = true,
                GameType = "tictactoe",
                TurnTimeout = 30,
                AutoRematch = true,
            };
        }

        public TicTacToeTable(RcadiaAgent agent)
        {
            this.agent = agent;
            Status = "waiting for the host";
            agent.OnGameStart(info =>
                {
                    rules.Reset(info.Players);
                    Status = "round " + info.Round + ": " + string.Join(" vs ", info.Players);
                    Publish();
                })
                .OnAction(OnAction)
                .OnTimeout((playerId, info) => Status = playerId + " ran out of time (strike " + info.Strike + (info.Final ? ", forfeit)" : ")"))
                .OnSessionEnd(info => Status = "the platform ended the game: " + info.Reason);
        }

        /// <summary>The board, for display.</summary>
        public TicTacToeRules Rules { get { return rules; } }

        /// <summary>One line about the table, for display. Player text is data: show it as text.</summary>
        public string Status { get; private set; }

        void OnAction(string playerId, string actionJson, string actionId)
        {
            // An action is {"cell": 0-8}. Anything else is rejected and the agent plays again.
            JsonValue action;
            JsonValue cellValue = null;
            int cell;
            if (actionJson != null && Json.TryParse(actionJson, out action)) cellValue = action["cell"];
            if (cellValue == null || !cellValue.TryGetInt32(out cell))
            {
                agent.RejectAction(playerId, "an action is {\"cell\": N} with N 0-8");
                return;
            }
            string problem = rules.Play(playerId, cell);
            if (problem != null)
            {
                agent.RejectAction(playerId, problem);
                return;
            }
            Publish();
        }

        void Publish()
        {
            var state = JsonValue.NewObject()
                .Set("board", JsonValue.FromString(rules.Board))
                .Set("toMove", JsonValue.FromString(rules.ToMove))
                .Set("winner", JsonValue.FromString(rules.Winner));
            agent.SetState(state);
            if (rules.Over)
            {
                agent.EndGame(JsonValue.NewObject().Set("winner", JsonValue.FromString(rules.Winner)));
                Status = rules.Winner == null ? "a draw" : rules.Winner + " won";
                return;
            }
            var moves = JsonValue.NewArray();
            foreach (int c in rules.LegalCells()) moves.Add(JsonValue.NewObject().Set("cell", JsonValue.FromInteger(c)));
            agent.SetLegalActions(rules.ToMove, moves);
        }
    }
}
