namespace Rcadia.Agent
{
    /// <summary>What <see cref="RcadiaAgent.OnGameStart"/> is called with.</summary>
    public sealed class GameStartInfo
    {
        /// <summary>The session's id; null when a v1 host never named one.</summary>
        public string SessionId { get; private set; }

        /// <summary>playerIds in seat order (a copy; change it freely).</summary>
        public string[] Players { get; private set; }

        /// <summary>1-based round of the series.</summary>
        public int Round { get; private set; }

        /// <summary>
        /// Players' display names (<c>asName</c>) by playerId, when the host sent them with
        /// AGENT_SESSION_START / AGENT_GAME_START (<c>names</c>, an addition to the contract
        /// that the house host makes); empty otherwise. A copy; change it freely.
        /// </summary>
        public System.Collections.Generic.Dictionary<string, string> Names { get; private set; }

        public GameStartInfo(string sessionId, string[] players, int round)
            : this(sessionId, players, round, null)
        {
        }

        public GameStartInfo(string sessionId, string[] players, int round, System.Collections.Generic.Dictionary<string, string> names)
        {
            SessionId = sessionId;
            Players = players;
            Round = round;
            Names = names ?? new System.Collections.Generic.Dictionary<string, string>(System.StringComparer.Ordinal);
        }
    }

    /// <summary>What <see cref="RcadiaAgent.OnTimeout"/> is called with.</summary>
    public sealed class TimeoutInfo
    {
        /// <summary>This player's strike count, from 1.</summary>
        public int Strike { get; private set; }

        /// <summary>Strikes that forfeit, when the host said.</summary>
        public int? MaxStrikes { get; private set; }

        /// <summary>True when the platform is ending the game as a forfeit.</summary>
        public bool Final { get; private set; }

        public TimeoutInfo(int strike, int? maxStrikes, bool final)
        {
            Strike = strike;
            MaxStrikes = maxStrikes;
            Final = final;
        }
    }

    /// <summary>What <see cref="RcadiaAgent.OnSessionEnd"/> is called with.</summary>
    public sealed class SessionEndInfo
    {
        /// <summary>The session that ended.</summary>
        public string SessionId { get; private set; }

        /// <summary>The result as JSON text (for example <c>{"winner":null,"reason":"timeout"}</c>), or null when the host sent none.</summary>
        public string ResultJson { get; private set; }

        /// <summary>Why: <c>timeout</c>, <c>left</c>, <c>host_disconnected</c> or <c>session_lost</c>.</summary>
        public string Reason { get; private set; }

        public SessionEndInfo(string sessionId, string resultJson, string reason)
        {
            SessionId = sessionId;
            ResultJson = resultJson;
            Reason = reason;
        }
    }

    /// <summary>
    /// One player's action. <paramref name="actionJson"/> is the action's JSON text exactly as
    /// the host sent it (read it with <see cref="Json.Parse"/> or Unity's JsonUtility); null when
    /// the message had no action. <paramref name="actionId"/> is null when the host gave none.
    /// </summary>
    public delegate void ActionHandler(string playerId, string actionJson, string actionId);
}
